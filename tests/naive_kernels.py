"""Plain-NumPy twins of the numba kernels of ``shap_instances.games._prefix_kernels`` and ``_knn_kernels``.

Each twin computes the same quantity the straightforward way (batched solves of every prefix system, Python
loops, ``np.diff`` and fancy-index scatter), independently of the kernels' square-root updates; the tests check
that the two agree.
"""

import numpy as np


def welford(units, mean, m2, count):
    """Welford's running mean / sum of squared deviations over ``units`` (u, n, d), in place; returns the count."""
    for unit in units:
        count += 1
        delta = unit - mean
        mean += delta / count
        m2 += delta * (unit - mean)
    return count


def accumulate_prefix_units(prefixes, permutations, per_unit, mean, m2, count):
    """Differences of the prefix values scattered to the players, averaged per unit, then Welford."""
    k, n = permutations.shape
    contributions = np.empty((k, n, prefixes.shape[2]))
    contributions[np.arange(k)[:, None], permutations] = np.diff(prefixes, axis=1)
    units = contributions.reshape(k // per_unit, per_unit, n, -1).mean(axis=1)
    return welford(units, mean, m2, count)


def ridge_prefix_values(path, permutation):
    """Values of every prefix (n + 1, d) from one batched solve of all prefix systems (``RidgePath.coefficients``,
    centred running sums and LU / pseudo-inverse solves), for a path or an aggregated path."""
    w, b = path.coefficients(path.X[permutation], path.y[permutation])
    values = (w @ np.asarray(path.X_eval).T + b[:, None] * path.ones[None, :] - path.y_eval[None, :]) * path.y_scale
    return np.vstack([path.empty[None, :], values])


def knn_prefix_values(rank, y, y_eval, empty, permutation, k):
    """KNN refits along a permutation, the current k nearest kept per explained row with NumPy (n + 1, m)."""
    n, m = len(permutation), len(y_eval)
    out = np.empty((n + 1, m))
    out[: min(k, n + 1)] = empty
    if n < k:
        return out
    first = permutation[:k]
    top = rank[:, first].astype(np.int64)
    labels = np.broadcast_to(y[first], top.shape).copy()
    total = labels.sum(axis=1)
    rows = np.arange(m)
    out[k] = total / k - y_eval
    for t in range(k, n):
        i = permutation[t]
        worst = np.argmax(top, axis=1)
        enter = rank[:, i] < top[rows, worst]
        total[enter] += y[i] - labels[rows, worst][enter]
        top[rows[enter], worst[enter]] = rank[enter, i]
        labels[rows[enter], worst[enter]] = y[i]
        out[t + 1] = total / k - y_eval
    return out
