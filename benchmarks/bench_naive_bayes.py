"""NaiveBayesExplainer benchmarks.

1. Speed on 10,000 rows x 50 features against shap.KernelExplainer (default budget, 50 background rows) and
   shap.explainers.Exact (on a 10-feature model: Exact needs 2^p evaluations) in the same run, per row. Both
   sides are warmed up first (their first calls, including shap's own first-call set-up, are reported on their
   own); then three alternating repetitions, medians.
2. 1,000,000 rows x 50 features: the first call, then the median of three.

The paper's Table 3 (agreement with KernelSHAP), with its protocol, is ``bench_naive_bayes_table3.py``;
``discretise_then_nb`` below is the model both use.

Usage: ``python benchmarks/bench_naive_bayes.py [--quick] [--threads N] [--markdown FILE]``.
"""

from __future__ import annotations

import inspect
import warnings

import numpy as np
import pandas as pd
import shap
from _common import REPEATS, Bench, compare, first_call, fmt_seconds, markdown_table, ratio, repeat
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


def speed(bench: Bench) -> None:
    rng = np.random.default_rng(0)
    X = rng.normal(size=(10_000, 50))
    y = (X[:, :5].sum(1) + rng.normal(size=10_000) > 0).astype(int)
    model = GaussianNB().fit(X, y)
    background = X[:50]
    rows = 2 if bench.quick else 5
    small = GaussianNB().fit(X[:, :10], y)
    explainer = NaiveBayesExplainer(model, background)
    small_explainer = NaiveBayesExplainer(small, background[:, :10])
    kernel = shap.KernelExplainer(log_odds_fn(model), background)
    exact = shap.explainers.Exact(log_odds_fn(small), shap.maskers.Independent(background[:, :10], max_samples=50))
    table = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cases = [
            ("50 features vs `shap.KernelExplainer` (default nsamples, 50 background rows)",
             lambda: explainer(X[:1]), lambda: explainer(X), len(X),
             lambda: kernel.shap_values(X[:1], silent=True), lambda: kernel.shap_values(X[:rows], silent=True)),
            ("10 features vs `shap.explainers.Exact` (50 background rows)",
             lambda: small_explainer(X[:1, :10]), lambda: small_explainer(X[:, :10]), len(X),
             lambda: exact(X[:1, :10]), lambda: exact(X[:rows, :10])),
        ]
        for name, ours_first, ours, n_ours, theirs_first, theirs in cases:
            first_ours, first_theirs = first_call(ours_first), first_call(theirs_first)
            mine, baseline = compare(ours, theirs)
            mine.seconds = [t / n_ours for t in mine.seconds]
            baseline.seconds = [t / rows for t in baseline.seconds]
            table.append([name, fmt_seconds(first_ours), fmt_seconds(mine.median), fmt_seconds(first_theirs),
                          fmt_seconds(baseline.median), ratio(baseline, mine)])
    big = rng.normal(size=(1_000_000, 50))
    first = first_call(lambda: explainer(big))  # also pays the page faults of the fresh 400 MB output
    later = repeat(lambda: explainer(big))
    bench.print(
        "### Speed",
        f"Per explained row. First calls (one row) are timed on their own for both sides, then each side is timed "
        f"{REPEATS} times, alternating (ours: all 10,000 rows per call; the baseline: {rows} rows per call); "
        "medians, and the median of the per-repetition ratios (range in brackets).",
        markdown_table(["case", "ours, first call", "ours per row", "baseline, first call", "baseline per row",
                        "speed-up (warm)"], table),
        f"1,000,000 rows x 50 features (GaussianNB): {first:.2f} s on the first call, {later.median:.2f} s "
        f"(median of {REPEATS}) on later calls.", part="speed")


def discretise_then_nb(X: pd.DataFrame):
    """The paper's setting as one pipeline: bin numeric columns, code the others, CategoricalNB."""
    numeric = [c for c in X.columns if pd.api.types.is_numeric_dtype(X[c]) and X[c].nunique() > 10]
    other = [c for c in X.columns if c not in numeric]
    bins = make_pipeline(SimpleImputer(strategy="median"),
                         quantile_bins(5))
    preprocessing = ColumnTransformer([("bins", bins, numeric), ("codes", OrdinalEncoder(), other)])
    return make_pipeline(preprocessing, CategoricalNB())


def main(bench: Bench) -> None:
    speed(bench)


if __name__ == "__main__":
    Bench(__doc__).run(main)
