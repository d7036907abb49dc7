"""Residual decomposition benchmarks.

1. Diabetes (442 rows) with Ridge, symmetric case, 3n = 1,326 permutations: the exact running-sum refits
   against refitting scikit-learn's Ridge (a few permutations timed, the rest extrapolated), same run.
2. Boston (506 rows) with a random forest: time and error per evaluation budget, permutation against kernel
   sampling, n_jobs=2 (error from two independent runs per budget). ``--quick`` uses 120 rows and 20 trees.

Usage: ``python benchmarks/bench_residual.py [--quick]``.
"""

from __future__ import annotations

import sys
import time
import warnings

import numpy as np
from sklearn.ensemble import RandomForestRegressor
from sklearn.linear_model import Ridge

from shap_instances import InstanceKernelExplainer
from shap_instances.datasets import load_boston, load_diabetes
from shap_instances.estimators import KernelEstimator, PermutationEstimator
from shap_instances.games import ResidualGame


def ridge_speed(quick):
    X, y = load_diabetes()
    X, y = X.to_numpy(), y.to_numpy(dtype=float)
    n = len(y)
    start = time.perf_counter()
    explanation = InstanceKernelExplainer(Ridge(alpha=0.1), X, y=y, n_permutations=3 * n, random_state=0,
                                          silent=True)()
    fast = time.perf_counter() - start
    slow_game = ResidualGame(Ridge(alpha=0.1), X, y, use_fast_path=False)
    timed = 1 if quick else 2
    start = time.perf_counter()
    PermutationEstimator(n_permutations=timed * 2, random_state=0, silent=True).estimate(slow_game)
    per_permutation = (time.perf_counter() - start) / (timed * 2)
    refit = per_permutation * 3 * n
    gap = np.abs(explanation.base_values + explanation.values.sum(1) - (Ridge(alpha=0.1).fit(X, y).predict(X) - y))
    print("| diabetes, Ridge, 1,326 permutations | seconds | |")
    print("|---|---|---|")
    print(f"| exact running-sum refits (ours) | {fast:.1f} | max efficiency gap {gap.max():.1e} |")
    print(f"| scikit-learn refits ({per_permutation:.2f} s per permutation, extrapolated) | {refit:.0f} | |")
    print(f"| speed-up | {refit / fast:.0f}x | target >= 70x, ours <= 15 s |")


def forest_budgets(quick):
    """Time and accuracy per budget for a random forest (refits of clones, n_jobs=2).

    A long reference run would cost hours at full size, so accuracy is measured without one: each method runs
    twice per budget with independent seeds, and the RMS difference of the two runs divided by sqrt(2) estimates
    each run's RMS error (both are unbiased, so E|A - B|^2 = 2 Var). It is shown beside the median standard error
    that the run reports, relative to the RMS of the values.
    """
    X, y = load_boston()
    X, y = X.to_numpy(), y.to_numpy(dtype=float)
    if quick:
        X, y = X[:120], y[:120]
    forest = RandomForestRegressor(n_estimators=20 if quick else 100, random_state=0, n_jobs=1)
    game = ResidualGame(forest, X, y)
    n = len(y)
    print(f"\nBoston ({n} rows), RandomForestRegressor({forest.n_estimators}), symmetric case, n_jobs=2; error: "
          "RMS difference of two runs with independent seeds / sqrt(2), relative to the RMS value\n")
    print("| estimator | evaluations | seconds per run | relative RMS error (two runs) | "
          "reported median SE / RMS value |")
    print("|---|---|---|---|---|")
    estimators = {
        "permutation": lambda budget, seed: PermutationEstimator(max_evals=budget, random_state=seed, n_jobs=2,
                                                                 silent=True),
        "kernel": lambda budget, seed: KernelEstimator(max_evals=budget, random_state=seed, n_jobs=2, silent=True),
    }
    for budget in (2 * (n + 1), 4 * (n + 1)):
        for name, make in estimators.items():
            start = time.perf_counter()
            first, second = (make(budget, seed).estimate(game) for seed in (0, 1))
            seconds = (time.perf_counter() - start) / 2
            scale = np.sqrt(np.mean(((first.values + second.values) / 2) ** 2))
            error = np.sqrt(np.mean((first.values - second.values) ** 2) / 2) / scale
            reported = np.median(first.standard_errors) / scale
            print(f"| {name} | {first.n_evaluations} | {seconds:.1f} | {error:.2f} | {reported:.2f} |", flush=True)


def main(quick: bool = False) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ridge_speed(quick)
        forest_budgets(quick)


if __name__ == "__main__":
    main(quick="--quick" in sys.argv)
