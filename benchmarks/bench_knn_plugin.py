"""Benchmark of the shap-instances-knn plugin: exact KNN-Shapley recursion vs its baselines.

1. Small n: the recursion vs full enumeration of all 2^n coalitions (time and largest difference).
2. Medium n: the recursion vs Monte-Carlo permutation sampling (numba-compiled too, so the comparison is
   fair) at a fixed number of permutations (time, and the sampling error the recursion does not have), and
   vs the same recursion written in plain NumPy (a stable argsort and reversed cumulative sums, vectorised
   over the explained points: what a user would write from the paper).
3. n_train = 10,000: time per explained point of the whole explainer (distances, sort, recursion, checks)
   against ``model.predict`` and against the plain-NumPy pipeline (scikit-learn's ``pairwise_distances``
   with the model's metric, then the NumPy recursion), for the accuracy and negative squared error utilities.

Every timed call is made once first (numba compilation or cache loading, reported separately for both
sides); then both sides are timed three times, alternating, and medians are reported with the median of the
per-repetition ratios. Run ``python benchmarks/bench_knn_plugin.py [--quick] [--threads N] [--markdown
FILE]`` (``--quick`` finishes in well under a minute).
"""

from __future__ import annotations

import math

import numpy as np
from _common import Bench, compare, first_call, markdown_table, ratio
from numba import njit
from shap_instances_knn import KNNShapleyExplainer, knn_shapley_values
from sklearn.metrics import pairwise_distances
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


def numpy_recursion(distances, y_train, y_explained, k, utility="accuracy"):
    """Plain-NumPy KNN-Shapley values (Jia et al., 2019), all explained points at once, (m, n).

    Sorted by distance (stable), 1-based positions i: ``accuracy`` uses ``z_i = [y_i = y]``,
    ``s_N = min(K, N) / N * z_N / K`` and ``s_i - s_{i+1} = (z_i - z_{i+1}) / K * min(K, i) / i``.
    ``neg_squared_error`` (``v(S) = -(mean of the K nearest labels of S, divided by K - y)^2``) uses
    ``s_i - s_{i+1} = d_i / K * [min(K, i) / i * ((y_i + y_{i+1}) / K - 2 y) + 2 / K * (P_{i-1} M (M - 1) / (2 i (i -
    1)) + R_{i+2})]`` with ``d_i = y_{i+1} - y_i``, ``M = min(K, i)``, ``P`` the prefix sums of the sorted labels
    and ``R_{i+2} = sum_{l >= i+2} y_l Q (Q + 1) / (2 (l - 1)(l - 2))``, ``Q = min(K - 1, l - 2)``.
    """
    order = np.argsort(distances, axis=1, kind="stable")
    n = order.shape[1]
    i = np.arange(1, n, dtype=np.float64)  # positions 1 .. n-1
    m_i = np.minimum(k, i)
    if utility == "accuracy":
        z = (y_train[order] == np.asarray(y_explained)[:, None]).astype(np.float64)
        last = min(k, n) / n * z[:, -1] / k
        steps = (z[:, :-1] - z[:, 1:]) / k * m_i / i
    else:
        ys = y_train[order].astype(np.float64)
        y = np.asarray(y_explained, dtype=np.float64)[:, None]
        prefix = np.cumsum(ys, axis=1) - ys  # P_{i-1}: labels before position i
        pair_i = np.where(i > 1, m_i * (m_i - 1) / (2 * i * np.maximum(i - 1, 1)), 0.0)
        l = np.arange(1, n + 1, dtype=np.float64)
        q = np.minimum(k - 1, l - 2)
        w = np.where(l >= 3, q * (q + 1) / (2 * np.maximum(l - 1, 1) * np.maximum(l - 2, 1)), 0.0)
        tail = np.cumsum((w * ys)[:, ::-1], axis=1)[:, ::-1]  # tail[:, l-1] = sum_{l' >= l} w y
        suffix = np.zeros_like(ys[:, :-1])  # R_{i+2} for i = 1 .. n-1
        suffix[:, :-1] = tail[:, 2:]
        d = ys[:, 1:] - ys[:, :-1]
        steps = d / k * (m_i / i * ((ys[:, :-1] + ys[:, 1:]) / k - 2 * y) + 2 / k * (pair_i * prefix[:, :-1] + suffix))
        m_n = min(k, n)
        pair_n = m_n * (m_n - 1) / (2.0 * n * (n - 1)) if n > 1 else 0.0
        last = -ys[:, -1] / k * (m_n / n * (ys[:, -1] / k - 2 * y[:, 0]) + 2 / k * pair_n * prefix[:, -1])
    sorted_values = np.empty(order.shape)
    sorted_values[:, -1] = last
    sorted_values[:, :-1] = last[:, None] + np.cumsum(steps[:, ::-1], axis=1)[:, ::-1]
    values = np.empty_like(sorted_values)
    np.put_along_axis(values, order, sorted_values, axis=1)
    return values


def _fmt(seconds):
    return f"{seconds:.2e}"


def main(bench: Bench):
    quick = bench.quick
    rng = np.random.default_rng(0)
    rows = []

    # compile time (first calls), reported separately
    compile_recursion = first_call(lambda: knn_shapley_values(rng.random((1, 5)), rng.integers(0, 2, 5), [1],
                                                              n_neighbors=2))
    compile_mc = first_call(lambda: monte_carlo(np.arange(5), np.ones(5), np.ones(5), 2, 1, 0))

    # 1. small n: enumeration
    n_small, k = (12, 3) if quick else (15, 3)
    distances = rng.random((1, n_small))
    labels = rng.integers(0, 2, n_small)
    z = (labels == 1).astype(float)
    rec, enum = compare(lambda: knn_shapley_values(distances, labels, [1], n_neighbors=k),
                        lambda: enumeration(distances[0], z, k), repeats=1 if not quick and n_small > 14 else 3)
    case = f"n={n_small}, K={k}, 1 point"
    rows.append([case, "full enumeration (2^n coalitions)", _fmt(enum.median), "1", "reference"])
    rows.append([case, "recursion (this plugin)", _fmt(rec.median), ratio(rec, enum),
                 f"max diff {np.abs(rec.result[0] - enum.result).max():.1e}"])

    # 2. medium n: Monte-Carlo permutations and the plain-NumPy recursion
    n_mid, k, n_perm = (500, 5, 200) if quick else (5000, 5, 1000)
    distances = rng.random((1, n_mid))
    labels = rng.integers(0, 2, n_mid)
    z = (labels == 1).astype(float)
    rank = np.empty(n_mid, dtype=np.int64)
    rank[np.argsort(distances[0], kind="stable")] = np.arange(n_mid)
    z_by_rank = z[np.argsort(distances[0], kind="stable")]
    case = f"n={n_mid}, K={k}, 1 point"
    rec, mc = compare(lambda: knn_shapley_values(distances, labels, [1], n_neighbors=k),
                      lambda: monte_carlo(rank, z, z_by_rank, k, n_perm, 1))
    err = np.abs(mc.result - rec.result[0])
    rows.append([case, f"Monte-Carlo, {n_perm} permutations (numba)", _fmt(mc.median), "1",
                 f"max error {err.max():.1e}, RMSE {np.sqrt(np.mean(err**2)):.1e} "
                 f"(mean abs value {np.abs(rec.result[0]).mean():.1e})"])
    rows.append([case, "recursion (this plugin)", _fmt(rec.median), ratio(rec, mc), "exact"])
    first_numpy = first_call(lambda: numpy_recursion(distances, labels, np.array([1]), k))
    rec, plain = compare(lambda: knn_shapley_values(distances, labels, [1], n_neighbors=k),
                         lambda: numpy_recursion(distances, labels, np.array([1]), k))
    rows.append([case, "plain-NumPy recursion", _fmt(plain.median), "1",
                 f"max diff {np.abs(plain.result - rec.result).max():.1e} from the plugin"])
    rows.append([case, "recursion (this plugin)", _fmt(rec.median), ratio(rec, plain), "exact"])

    # 3. n_train = 10,000: time per explained point of the whole explainer
    n_train, n_features, n_explained = 10_000, 10, (50 if quick else 500)
    X = rng.normal(size=(n_train + n_explained, n_features))
    y_reg = X @ rng.normal(size=n_features) + rng.normal(size=len(X))
    y_clf = (y_reg > 0).astype(int)
    Xq = X[n_train:]
    for model, y, name, utility in [
        (KNeighborsClassifier(n_neighbors=10), y_clf, "classification (accuracy)", "accuracy"),
        (KNeighborsRegressor(n_neighbors=10), y_reg, "regression (neg squared error)", "neg_squared_error"),
    ]:
        model.fit(X[:n_train], y[:n_train])
        explainer = KNNShapleyExplainer(model, X[:n_train], y=y[:n_train], silent=True)
        yq = y[n_train:]

        def plain_pipeline(model=model, y=y, yq=yq, utility=utility):
            d = pairwise_distances(Xq, X[:n_train], metric=model.effective_metric_,
                                   **(model.effective_metric_params_ or {}))
            return numpy_recursion(d, y[:n_train], yq, model.n_neighbors, utility)

        first_ours = first_call(lambda e=explainer, yq=yq: e(Xq, yq))
        first_plain = first_call(plain_pipeline)
        case = f"n_train=10,000, {n_explained} points"
        ours, pred = compare(lambda e=explainer, yq=yq: e(Xq, yq), lambda m=model: m.predict(Xq))
        _, plain = compare(lambda e=explainer, yq=yq: e(Xq, yq), plain_pipeline)
        for timing in (ours, pred, plain):
            timing.seconds = [t / n_explained for t in timing.seconds]
        diff = np.abs(np.asarray(ours.result.values) - plain.result).max()
        rows.append([case, f"{name}: model.predict (reference)", _fmt(pred.median), "1", "per point"])
        rows.append([case, f"{name}: plain NumPy (pairwise_distances + recursion)", _fmt(plain.median), "1",
                     f"per point; first call {first_plain:.2f} s; max diff {diff:.1e} from the plugin"])
        rows.append([case, f"{name}: KNN-Shapley explainer, all 10,000 values", _fmt(ours.median),
                     f"{ratio(ours, pred)} of predict; {ratio(ours, plain)} of plain NumPy",
                     f"per point; first call {first_ours:.2f} s"])

    bench.print(
        "Seconds are medians of three alternating repetitions (one for the 2^15 enumeration); ratios are "
        "the median of the per-repetition ratios (range in brackets), below 1 when the plugin is faster. "
        f"First-call compile (or cache load) time: recursion {compile_recursion:.2f} s, Monte-Carlo baseline "
        f"{compile_mc:.2f} s, plain-NumPy recursion {first_numpy:.3f} s (not included).",
        markdown_table(["case", "method", "seconds", "time / baseline's", "accuracy / note"], rows, align="llrrl"),
        part="table")
    return rows


if __name__ == "__main__":
    Bench(__doc__).run(main)
