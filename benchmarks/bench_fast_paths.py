"""Naive Bayes, linear and quadratic discriminant and kernel ridge / Gaussian-process refit paths against
scikit-learn refits of the same prefixes.

For each model: one permutation's prefix values by the path (``prefix_values_batch``: every prefix, every explained
row; the median of three after an untimed first call, which compiles or loads the numba kernels) against
scikit-learn refits (``clone(model).fit(X[prefix], y[prefix])`` and ``predict_proba`` / ``predict`` of the
explained rows, through the residual game's refit path) of every ``stride``-th prefix of the same permutation,
timed in the same run and scaled by the stride (the cost of refitting all n prefixes: refits grow with the
prefix, and the strided sizes sample them evenly). The largest difference between the path's values and the
refits' on the refitted prefixes is printed beside them. Explained rows = the training rows (the residual
game's default). One numba thread and one BLAS thread for both sides.

* naive Bayes, LinearDiscriminantAnalysis(solver="lsqr") and QuadraticDiscriminantAnalysis(reg_param=0.01) (the
  two redundant features make the classes' covariances singular without it): 2,000 rows x 20 features
  (``make_classification``, random_state 0; counts ``|round(3 x)|`` for MultinomialNB / ComplementNB, 5 quantile
  bins for CategoricalNB);
* KernelRidge(rbf) and GaussianProcessRegressor(RBF + WhiteKernel, optimizer=None, normalize_y=True): 1,000
  rows x 10 features (``make_friedman1``, random_state 0).

Usage: ``python benchmarks/bench_fast_paths.py [--quick] [--markdown FILE]``.
"""

from __future__ import annotations

import time
import warnings

import numba
import numpy as np
from _common import Bench, first_call, fmt_load, fmt_seconds, load_average, markdown_table
from sklearn.datasets import make_classification, make_friedman1
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis, QuadraticDiscriminantAnalysis
from sklearn.gaussian_process import GaussianProcessRegressor
from sklearn.gaussian_process.kernels import RBF, WhiteKernel
from sklearn.kernel_ridge import KernelRidge
from sklearn.naive_bayes import BernoulliNB, CategoricalNB, ComplementNB, GaussianNB, MultinomialNB

from shap_instances.games import ResidualGame


def _classification(n: int) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    X, y = make_classification(n, 20, n_informative=10, random_state=0)
    edges = np.quantile(X, [0.2, 0.4, 0.6, 0.8], axis=0)
    categories = np.stack([np.searchsorted(edges[:, f], X[:, f]) for f in range(X.shape[1])], axis=1)
    return {"real": (X, y.astype(float)), "counts": (np.abs(np.round(3 * X)), y.astype(float)),
            "categories": (categories.astype(float), y.astype(float))}


def _cases(quick: bool) -> list[tuple[str, object, np.ndarray, np.ndarray]]:
    data = _classification(500 if quick else 2000)
    X, y = make_friedman1(200 if quick else 1000, 10, noise=0.5, random_state=0)
    process = GaussianProcessRegressor(RBF(2.0) + WhiteKernel(0.5), optimizer=None, normalize_y=True)
    return [("GaussianNB()", GaussianNB(), *data["real"]), ("MultinomialNB()", MultinomialNB(), *data["counts"]),
            ("BernoulliNB()", BernoulliNB(), *data["real"]), ("ComplementNB()", ComplementNB(), *data["counts"]),
            ("CategoricalNB()", CategoricalNB(), *data["categories"]),
            ("LinearDiscriminantAnalysis(solver='lsqr')", LinearDiscriminantAnalysis(solver="lsqr"), *data["real"]),
            ("QuadraticDiscriminantAnalysis(reg_param=0.01)", QuadraticDiscriminantAnalysis(reg_param=0.01),
             *data["real"]),
            ("KernelRidge(alpha=0.1, kernel='rbf', gamma=0.1)", KernelRidge(alpha=0.1, kernel="rbf", gamma=0.1), X, y),
            ("GaussianProcessRegressor(RBF(2) + WhiteKernel(0.5), optimizer=None, normalize_y=True)", process, X, y)]


def _refits(model, X, y, permutation, sizes) -> np.ndarray:
    """Values of the given prefixes by the residual game's refit path: ``clone(model).fit`` of each, its failure
    policy included (a CategoricalNB prefix that has not seen an explained row's category cannot predict it)."""
    masks = np.zeros((len(sizes), len(y)), dtype=bool)
    for k, t in enumerate(sizes):
        masks[k, permutation[:t]] = True
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ResidualGame(model, X, y, use_fast_path=False).value_function(masks)


def _row(label: str, model, X, y, stride: int) -> list[str]:
    game = ResidualGame(model, X, y)
    path = game.fast_path
    n = len(y)
    permutation = np.random.default_rng(0).permutation(n)
    compile_seconds = first_call(lambda: path.prefix_values_batch(permutation[None]))
    ours = []
    for _ in range(3):
        start = time.perf_counter()
        values = path.prefix_values_batch(permutation[None])[0]
        ours.append(time.perf_counter() - start)
    sizes = np.arange(stride, n + 1, stride)
    start = time.perf_counter()
    refits = _refits(model, X, y, permutation, sizes)
    refit_all = (time.perf_counter() - start) * stride
    difference = float(np.abs(values[sizes] - refits).max())
    return [f"`{label}`", type(path).__name__, f"{n:,} x {X.shape[1]}",
            fmt_seconds(float(np.median(ours))), fmt_seconds(refit_all),
            f"{refit_all / float(np.median(ours)):,.0f}x", f"{difference:.1e}", fmt_seconds(compile_seconds)]


def main(bench: Bench) -> None:
    numba.set_num_threads(1)
    load = load_average()
    rows = [_row(*case, 50 if bench.quick else 20) for case in _cases(bench.quick)]
    end_load = load_average()
    bench.print(
        "### Naive Bayes, discriminant and kernel refit paths against scikit-learn refits, per permutation",
        markdown_table(["model", "path", "rows x features", "path, one permutation (all prefixes)",
                        "scikit-learn refits of all prefixes", "speed-up", "max abs difference", "first call"], rows,
                       "lllrrrrr"),
        f"Every prefix's values for all explained rows (= training rows); refits of every {50 if bench.quick else 20}"
        f"th prefix timed and scaled up; one numba and one BLAS thread. Load average {fmt_load(load)} at the start, "
        f"{fmt_load(end_load)} at the end (2 shared cores).")


if __name__ == "__main__":
    Bench(__doc__).run(main)
