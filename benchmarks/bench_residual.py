"""Residual decomposition benchmarks.

1. Diabetes (442 rows) with Ridge, symmetric case, 3n = 1,326 permutations: the exact running-sum refits
   against refitting scikit-learn's Ridge (a few permutations timed, the rest extrapolated), same run. Both
   sides make a warm-up call first (reported), then three alternating repetitions; medians, and the median of
   the per-repetition ratios.
2. Boston with a random forest: time and error per evaluation budget, permutation against kernel sampling,
   n_jobs=2 (error from two independent runs per budget). By default (full and quick mode) on the first 120
   rows with 20 trees; ``--long`` runs the full 506 rows with 100 trees (about 35 minutes on two cores).

Usage: ``python benchmarks/bench_residual.py [--quick] [--long] [--threads N] [--markdown FILE]``.
"""

from __future__ import annotations

import time
import warnings

import numpy as np
from _common import Bench, compare, first_call, markdown_table, ratio
from sklearn.ensemble import RandomForestRegressor
from sklearn.linear_model import Ridge

from shap_instances import InstanceKernelExplainer
from shap_instances.datasets import load_boston, load_diabetes
from shap_instances.estimators import KernelEstimator, PermutationEstimator
from shap_instances.games import ResidualGame


def ridge_speed(bench: Bench) -> None:
    X, y = load_diabetes()
    X, y = X.to_numpy(), y.to_numpy(dtype=float)
    n = len(y)
    slow_game = ResidualGame(Ridge(alpha=0.1), X, y, use_fast_path=False)
    timed_permutations = 1 if bench.quick else 2  # antithetic pairs of scikit-learn refits per repetition

    def ours():
        return InstanceKernelExplainer(Ridge(alpha=0.1), X, y=y, n_permutations=3 * n, random_state=0, silent=True)()

    def refits():
        return PermutationEstimator(n_permutations=2 * timed_permutations, random_state=0,
                                    silent=True).estimate(slow_game)

    first_ours = first_call(lambda: InstanceKernelExplainer(Ridge(alpha=0.1), X[:50], y=y[:50], n_permutations=4,
                                                            random_state=0, silent=True)())
    first_refits = first_call(lambda: PermutationEstimator(n_permutations=2, random_state=0, silent=True).estimate(
        ResidualGame(Ridge(alpha=0.1), X[:50], y[:50], use_fast_path=False)))
    fast, slow = compare(ours, refits)
    slow.seconds = [t / (2 * timed_permutations) * 3 * n for t in slow.seconds]  # extrapolated to 3n permutations
    explanation = fast.result
    gap = np.abs(explanation.base_values + explanation.values.sum(1) - (Ridge(alpha=0.1).fit(X, y).predict(X) - y))
    per_permutation = slow.median / (3 * n)
    bench.print(
        "### Diabetes, Ridge, 1,326 permutations",
        f"Three alternating repetitions, medians; scikit-learn refits: {2 * timed_permutations} permutations timed "
        f"per repetition, extrapolated to 3n. First calls (50 rows, not included): ours {first_ours:.2f} s, "
        f"scikit-learn refits {first_refits:.2f} s.",
        markdown_table(["diabetes, Ridge, 1,326 permutations", "seconds", "note"], [
            ["exact running-sum refits (ours)", f"{fast.median:.1f}", f"max efficiency gap {gap.max():.1e}"],
            [f"scikit-learn refits ({per_permutation:.2f} s per permutation, extrapolated)", f"{slow.median:.0f}", ""],
            ["speed-up", ratio(slow, fast), "target >= 70x, ours <= 15 s"]]), part="ridge")


def forest_budgets(bench: Bench) -> None:
    """Time and accuracy per budget for a random forest (refits of clones, n_jobs=2).

    A long reference run would cost hours at full size, so accuracy is measured without one: each method runs
    twice per budget with independent seeds, and the RMS difference of the two runs divided by sqrt(2) estimates
    each run's RMS error (both are unbiased, so E|A - B|^2 = 2 Var). It is shown beside the median standard error
    that the run reports, relative to the RMS of the values.
    """
    X, y = load_boston()
    X, y = X.to_numpy(), y.to_numpy(dtype=float)
    long = bench.args.long
    if not long:
        X, y = X[:120], y[:120]
    forest = RandomForestRegressor(n_estimators=100 if long else 20, random_state=0, n_jobs=1)
    game = ResidualGame(forest, X, y)
    n = len(y)
    rows = []
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
            rows.append([name, first.n_evaluations, f"{seconds:.1f}", f"{error:.2f}", f"{reported:.2f}"])
    size_note = "" if long else " (the first 120 rows and 20 trees; --long runs all 506 rows with 100 trees)"
    bench.print(
        f"### Boston ({n} rows), RandomForestRegressor({forest.n_estimators}): budgets",
        f"Symmetric case, n_jobs=2{size_note}; "
        "error: RMS difference of two runs with independent seeds / sqrt(2), relative to the RMS value; one pair "
        "of runs per budget (an accuracy study, no ratio).",
        markdown_table(["estimator", "evaluations", "seconds per run", "relative RMS error (two runs)",
                        "reported median SE / RMS value"], rows), part="forest")


def main(bench: Bench) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ridge_speed(bench)
        forest_budgets(bench)


if __name__ == "__main__":
    Bench(__doc__, arguments=lambda parser: parser.add_argument(
        "--long", action="store_true", help="the forest budget study on all 506 rows with 100 trees")).run(main)
