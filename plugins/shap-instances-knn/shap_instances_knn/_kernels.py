"""Numba kernels of the exact KNN-Shapley recursions (Jia et al., 2019).

Each kernel takes, for a batch of explained points, the training indices sorted by distance (closest
first, ties already broken by the caller) and the training labels, and writes the Shapley value of
every training point in training order. They trust their inputs: the Python caller
(:func:`shap_instances_knn.values.knn_shapley_values`) validates shapes, dtypes and contiguity.

Positions are 1-based in the comments (``alpha_1`` is the closest point), 0-based in the code.
The derivations are in ``docs/plugins.md``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

__all__ = ["knn_shapley_linear", "knn_shapley_match", "knn_shapley_squared_error"]

#: JIT options of every kernel of this plugin (small hot loops: cache them, release the GIL).
JIT_OPTIONS: dict[str, Any] = {"cache": True, "nogil": True}  # njit is already nopython


@njit(**JIT_OPTIONS)
def _linear_one(order, z, n_neighbors, out):
    """Shapley values of ``v(S) = (1/K) * sum of z over the K nearest points of S`` for one explained point.

    ``s_N = min(K, N) / N * z_N / K`` and ``s_i = s_{i+1} + (z_i - z_{i+1}) / K * min(K, i) / i``.
    """
    n = order.shape[0]
    k = n_neighbors
    last = order[n - 1]
    s = min(k, n) / n * z[last] / k
    out[last] = s
    for pos in range(n - 2, -1, -1):  # pos = i - 1
        i = pos + 1
        cur = order[pos]
        nxt = order[pos + 1]
        s = s + (z[cur] - z[nxt]) / k * min(k, i) / i
        out[cur] = s


@njit(**JIT_OPTIONS)
def knn_shapley_match(order, train_codes, explained_codes, n_neighbors, out):
    """Classification: ``z_i = 1[y_i == y_explained]`` (the unweighted KNN utility of the paper).

    Parameters
    ----------
    order : int64 array (n_explained, n_train), each row a permutation sorting the training points.
    train_codes : int64 array (n_train,), integer codes of the training labels.
    explained_codes : int64 array (n_explained,), codes of the explained points' labels (-1: unseen label).
    n_neighbors : int, K >= 1.
    out : float64 array (n_explained, n_train), written in place.
    """
    n_train = train_codes.shape[0]
    z = np.empty(n_train, dtype=np.float64)
    for j in range(order.shape[0]):
        code = explained_codes[j]
        for i in range(n_train):
            z[i] = 1.0 if train_codes[i] == code else 0.0
        _linear_one(order[j], z, n_neighbors, out[j])


@njit(**JIT_OPTIONS)
def knn_shapley_linear(order, train_values, n_neighbors, out):
    """Regression, ``utility="prediction"``: ``z_i = y_i``, so ``v(S)`` is the KNN prediction from ``S``.

    Same arguments as :func:`knn_shapley_match` without the explained labels.
    """
    for j in range(order.shape[0]):
        _linear_one(order[j], train_values, n_neighbors, out[j])


@njit(**JIT_OPTIONS)
def knn_shapley_squared_error(order, train_values, explained_values, n_neighbors, out):
    """Regression, ``utility="neg_squared_error"``: ``v(S) = -(A(S) - y)^2``, ``A(S) = (1/K) sum_{K nearest} y_i``.

    With ``d_i = y_{i+1} - y_i`` (sorted positions), ``P_{i-1}`` the sum of the labels closer than
    ``alpha_i`` and ``R_{i+2} = sum_{l >= i+2} w(l) y_l`` with ``w(l) = Q (Q + 1) / (2 (l-1)(l-2))``,
    ``Q = min(K - 1, l - 2)``:

    ``s_i - s_{i+1} = d_i / K * [min(K, i) / i * ((y_i + y_{i+1}) / K - 2 y)
    + 2 / K * (M (M - 1) / (2 i (i - 1)) * P_{i-1} + R_{i+2})]`` with ``M = min(K, i)``,

    ``s_N = -y_N / K * [min(K, N) / N * (y_N / K - 2 y) + 2 / K * M (M - 1) / (2 N (N - 1)) * P_{N-1}]``
    with ``M = min(K, N)``.
    """
    n = order.shape[1]
    k = n_neighbors
    ys = np.empty(n, dtype=np.float64)
    for j in range(order.shape[0]):
        row = order[j]
        target = explained_values[j]
        for pos in range(n):
            ys[pos] = train_values[row[pos]]
        total = 0.0  # P_{N-1}: sum of the labels of positions 1..N-1
        for pos in range(n - 1):
            total += ys[pos]
        m = min(k, n)
        pair = m * (m - 1) / (2.0 * n * (n - 1)) if n > 1 else 0.0
        y_last = ys[n - 1]
        s = -y_last / k * (m / n * (y_last / k - 2.0 * target) + 2.0 / k * pair * total)
        out[j, row[n - 1]] = s
        suffix = 0.0  # R_{i+2}
        prefix = total  # becomes P_{i-1} below
        for pos in range(n - 2, -1, -1):
            i = pos + 1  # 1-based position of alpha_i; alpha_{i+1} is at pos + 1
            # add w(l) y_l for l = i + 2 (0-based pos + 2) to the suffix sum
            if pos + 2 <= n - 1:
                l = i + 2
                q = min(k - 1, l - 2)
                suffix += q * (q + 1) / (2.0 * (l - 1) * (l - 2)) * ys[pos + 2]
            prefix -= ys[pos]  # now the sum over positions 1..i-1
            m = min(k, i)
            pair = m * (m - 1) / (2.0 * i * (i - 1)) if i > 1 else 0.0
            y_i = ys[pos]
            y_next = ys[pos + 1]
            d = y_next - y_i
            s = s + d / k * (m / i * ((y_i + y_next) / k - 2.0 * target) + 2.0 / k * (pair * prefix + suffix))
            out[j, row[pos]] = s
