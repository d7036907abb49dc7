"""Benchmark of the shap-instances-knn plugin: exact KNN-Shapley recursion vs its baselines.

1. Small n: the recursion vs full enumeration of all 2^n coalitions (time and largest difference).
2. Medium n: the recursion vs Monte-Carlo permutation sampling (numba-compiled too, so the comparison is
   fair) at a fixed number of permutations: time, and the sampling error the recursion does not have.
3. n_train = 10,000: time per explained point of the whole explainer (distances, sort, recursion).

First-call numba compile time is reported separately. Run ``python benchmarks/bench_knn_plugin.py
[--quick]`` (``--quick`` finishes in well under a minute).
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np
from numba import njit
from shap_instances_knn import KNNShapleyExplainer, knn_shapley_values
from sklearn.neighbors import KNeighborsClassifier, KNeighborsRegressor


def enumeration(distances_row, z, k):
    """Shapley values of v(S) = (1/K) sum of z over the K nearest of S, by all 2^n coalitions."""
    n = len(z)
    order = np.argsort(distances_row, kind="stable")
    masks = ((np.arange(2**n)[:, None] >> np.arange(n)[None, :]) & 1).astype(bool)
    in_order = masks[:, order]
    v = ((in_order & (np.cumsum(in_order, axis=1) <= k)) * z[order]).sum(axis=1) / k
    sizes = masks.sum(axis=1)
    weights = np.array([math.factorial(s) * math.factorial(n - s - 1) / math.factorial(n) for s in range(n)])
    values = np.zeros(n)
    for i in range(n):
        without = np.flatnonzero(~masks[:, i])
        values[i] = np.sum(weights[sizes[without]] * (v[without | (1 << i)] - v[without]))
    return values


@njit(cache=True, nogil=True)
def monte_carlo(rank, z, z_by_rank, k, n_permutations, seed):
    """Permutation sampling of the same game: the ranks of the K nearest of each prefix in a sorted buffer."""
    np.random.seed(seed)  # noqa: NPY002 - numba seeds its own per-thread generator inside njit
    n = rank.shape[0]
    values = np.zeros(n)
    buffer = np.empty(k + 1, dtype=np.int64)  # ranks of the current K nearest, ascending
    for _ in range(n_permutations):
        perm = np.random.permutation(n)  # noqa: NPY002
        size = 0
        for t in range(n):
            player = perm[t]
            r = rank[player]
            if size < k:
                pos = size
                while pos > 0 and buffer[pos - 1] > r:
                    buffer[pos] = buffer[pos - 1]
                    pos -= 1
                buffer[pos] = r
                size += 1
                values[player] += z[player] / k
            elif r < buffer[k - 1]:
                dropped = buffer[k - 1]
                pos = k - 1
                while pos > 0 and buffer[pos - 1] > r:
                    buffer[pos] = buffer[pos - 1]
                    pos -= 1
                buffer[pos] = r
                values[player] += (z[player] - z_by_rank[dropped]) / k
    return values / n_permutations


def _timed(function, repeat=3):
    best, result = np.inf, None
    for _ in range(repeat):
        start = time.perf_counter()
        result = function()
        best = min(best, time.perf_counter() - start)
    return best, result


def main(quick: bool = False):
    rng = np.random.default_rng(0)
    rows = []

    # compile time (first calls), reported separately
    start = time.perf_counter()
    knn_shapley_values(rng.random((1, 5)), rng.integers(0, 2, 5), [1], n_neighbors=2)
    compile_recursion = time.perf_counter() - start
    start = time.perf_counter()
    monte_carlo(np.arange(5), np.ones(5), np.ones(5), 2, 1, 0)
    compile_mc = time.perf_counter() - start

    # 1. small n: enumeration
    n_small, k = (12, 3) if quick else (15, 3)
    distances = rng.random((1, n_small))
    labels = rng.integers(0, 2, n_small)
    z = (labels == 1).astype(float)
    t_enum, exact_enum = _timed(lambda: enumeration(distances[0], z, k), repeat=1)
    t_rec, exact = _timed(lambda: knn_shapley_values(distances, labels, [1], n_neighbors=k))
    rows.append((f"n={n_small}, K={k}, 1 point", "full enumeration (2^n coalitions)", t_enum, 1.0,
                 "reference"))
    rows.append((f"n={n_small}, K={k}, 1 point", "recursion (this plugin)", t_rec, t_rec / t_enum,
                 f"max diff {np.abs(exact[0] - exact_enum).max():.1e}"))

    # 2. medium n: Monte-Carlo permutations
    n_mid, k, n_perm = (500, 5, 200) if quick else (5000, 5, 1000)
    distances = rng.random((1, n_mid))
    labels = rng.integers(0, 2, n_mid)
    z = (labels == 1).astype(float)
    rank = np.empty(n_mid, dtype=np.int64)
    rank[np.argsort(distances[0], kind="stable")] = np.arange(n_mid)
    t_mc, mc = _timed(lambda: monte_carlo(rank, z, z[np.argsort(distances[0], kind="stable")], k, n_perm, 1), repeat=1)
    t_rec, exact = _timed(lambda: knn_shapley_values(distances, labels, [1], n_neighbors=k))
    err = np.abs(mc - exact[0])
    rows.append((f"n={n_mid}, K={k}, 1 point", f"Monte-Carlo, {n_perm} permutations (numba)", t_mc, 1.0,
                 f"max error {err.max():.1e}, RMSE {np.sqrt(np.mean(err**2)):.1e} "
                 f"(mean abs value {np.abs(exact[0]).mean():.1e})"))
    rows.append((f"n={n_mid}, K={k}, 1 point", "recursion (this plugin)", t_rec, t_rec / t_mc, "exact"))

    # 3. n_train = 10,000: time per explained point of the whole explainer
    n_train, n_features, n_explained = 10_000, 10, (50 if quick else 500)
    X = rng.normal(size=(n_train + n_explained, n_features))
    y_reg = X @ rng.normal(size=n_features) + rng.normal(size=len(X))
    y_clf = (y_reg > 0).astype(int)
    for model, y, name in [
        (KNeighborsClassifier(n_neighbors=10), y_clf, "classification (accuracy)"),
        (KNeighborsRegressor(n_neighbors=10), y_reg, "regression (neg squared error)"),
    ]:
        model.fit(X[:n_train], y[:n_train])
        explainer = KNNShapleyExplainer(model, X[:n_train], y=y[:n_train], silent=True)
        t_all, _ = _timed(lambda e=explainer, yy=y: e(X[n_train:], yy[n_train:]), repeat=1 if quick else 2)
        t_pred, _ = _timed(lambda m=model: m.predict(X[n_train:]), repeat=1 if quick else 2)
        rows.append((f"n_train=10,000, {n_explained} points", f"{name}: model.predict (reference)",
                     t_pred / n_explained, 1.0, "per point"))
        rows.append((f"n_train=10,000, {n_explained} points", f"{name}: KNN-Shapley, all 10,000 values",
                     t_all / n_explained, t_all / t_pred, "per point"))

    print("| case | method | seconds | ratio vs baseline | accuracy / note |")
    print("|---|---|---:|---:|---|")
    for case, method, seconds, ratio, note in rows:
        print(f"| {case} | {method} | {seconds:.2e} | {ratio:.3g} | {note} |")
    print(f"\nFirst-call compile (or cache load) time: recursion {compile_recursion:.2f} s, "
          f"Monte-Carlo baseline {compile_mc:.2f} s (not included above).")
    return rows


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, finishes in under a minute")
    main(quick=parser.parse_args().quick)
