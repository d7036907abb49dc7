"""NaiveBayesExplainer benchmarks.

1. Speed on 10,000 rows x 50 features against shap.KernelExplainer (default budget, 50 background rows) and
   shap.explainers.Exact (on a 10-feature model: Exact needs 2^p evaluations) in the same run, per row.
2. 1,000,000 rows x 50 features.

The paper's Table 3 (agreement with KernelSHAP), with its protocol, is ``bench_naive_bayes_table3.py``;
``discretise_then_nb`` below is the model both use.

Usage: ``python benchmarks/bench_naive_bayes.py [--quick]``.
"""

from __future__ import annotations

import inspect
import sys
import time
import warnings

import numpy as np
import pandas as pd
import shap
from sklearn.compose import ColumnTransformer
from sklearn.impute import SimpleImputer
from sklearn.naive_bayes import CategoricalNB, GaussianNB
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import KBinsDiscretizer, OrdinalEncoder

from shap_instances import NaiveBayesExplainer


def quantile_bins(n_bins):
    """Ordinal quantile bins; ``quantile_method`` only where KBinsDiscretizer has it (scikit-learn >= 1.7)."""
    extra = {}
    if "quantile_method" in inspect.signature(KBinsDiscretizer).parameters:
        extra["quantile_method"] = "averaged_inverted_cdf"
    return KBinsDiscretizer(n_bins=n_bins, encode="ordinal", strategy="quantile", **extra)


def log_odds_fn(model):
    return lambda Z: np.diff(model.predict_joint_log_proba(Z), axis=1)[:, 0]


def speed(quick):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(10_000, 50))
    y = (X[:, :5].sum(1) + rng.normal(size=10_000) > 0).astype(int)
    model = GaussianNB().fit(X, y)
    background = X[:50]
    explainer = NaiveBayesExplainer(model, background)
    explainer(X[:10])
    start = time.perf_counter()
    explainer(X)
    ours = (time.perf_counter() - start) / len(X)
    kernel = shap.KernelExplainer(log_odds_fn(model), background)
    rows = 2 if quick else 5
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        start = time.perf_counter()
        kernel.shap_values(X[:rows], silent=True)
        kernel_time = (time.perf_counter() - start) / rows
        small = GaussianNB().fit(X[:, :10], y)
        exact = shap.explainers.Exact(log_odds_fn(small), shap.maskers.Independent(background[:, :10], max_samples=50))
        start = time.perf_counter()
        exact(X[:rows, :10])
        exact_time = (time.perf_counter() - start) / rows
    small_explainer = NaiveBayesExplainer(small, background[:, :10])
    start = time.perf_counter()
    small_explainer(X[:, :10])
    ours_small = (time.perf_counter() - start) / len(X)
    big = rng.normal(size=(1_000_000, 50))
    million = []
    for _ in range(2):  # the first call also pays the page faults of the fresh 400 MB output
        start = time.perf_counter()
        explanation = explainer(big)
        million.append(time.perf_counter() - start)
        del explanation
    print("| case | ours per row | baseline per row | speed-up |")
    print("|---|---|---|---|")
    print(f"| 50 features vs KernelExplainer (default nsamples) | {ours * 1e6:.2f} us | {kernel_time * 1e3:.1f} ms | "
          f"{kernel_time / ours:,.0f}x |")
    print(f"| 10 features vs Exact | {ours_small * 1e6:.2f} us | {exact_time * 1e3:.1f} ms | "
          f"{exact_time / ours_small:,.0f}x |")
    print(f"\n1,000,000 rows x 50 features: {million[0]:.2f} s (first call), {million[1]:.2f} s (second call)")


def discretise_then_nb(X: pd.DataFrame):
    """The paper's setting as one pipeline: bin numeric columns, code the others, CategoricalNB."""
    numeric = [c for c in X.columns if pd.api.types.is_numeric_dtype(X[c]) and X[c].nunique() > 10]
    other = [c for c in X.columns if c not in numeric]
    bins = make_pipeline(SimpleImputer(strategy="median"),
                         quantile_bins(5))
    preprocessing = ColumnTransformer([("bins", bins, numeric), ("codes", OrdinalEncoder(), other)])
    return make_pipeline(preprocessing, CategoricalNB())


def main(quick: bool = False) -> None:
    print("### Speed\n")
    speed(quick)


if __name__ == "__main__":
    main(quick="--quick" in sys.argv)
