"""Numba kernel of KNN regression refits along a permutation: the K nearest rows kept per explained row.

The caller (:class:`shap_instances.games.KNNPath`) validated everything; this module only computes.
``rank[j, i]`` is the position of training row ``i`` in explained row ``j``'s distance order (ties broken by
training order), so "nearer" is "smaller rank". A prefix of fewer than ``k`` rows gets v(empty).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..utils import JIT_OPTIONS

__all__ = ["knn_prefix_values"]


@njit(**JIT_OPTIONS)
def _farthest(ranks: np.ndarray) -> int:
    """Position of the largest rank (the farthest of the kept neighbours); the first one on ties."""
    far = 0
    for s in range(1, ranks.shape[0]):
        if ranks[s] > ranks[far]:
            far = s
    return far


@njit(**JIT_OPTIONS)
def knn_prefix_values(rank: np.ndarray, y: np.ndarray, y_eval: np.ndarray, empty: np.ndarray, perm: np.ndarray, k: int,
                      weights: np.ndarray, aggregate: bool, out: np.ndarray) -> None:
    """Values of every prefix of ``perm`` for uniform-weight KNN regression.

    Parameters
    ----------
    rank : int (m, n)
    y : float64 (n,)
        Training targets.
    y_eval, empty : float64 (m,)
        Explained rows' targets and v(empty).
    perm : intp (n,)
    k : int
        Neighbours (n_neighbors), at most n.
    weights : float64 (m, K)
        Used when ``aggregate``: the outputs are ``weights^T residuals``.
    aggregate : bool
    out : float64 (n + 1, d)
        d = m (residuals) or K (aggregates); ``out[t]`` is the value of the first t rows.
    """
    m = rank.shape[0]
    n = perm.shape[0]
    d = out.shape[1]
    for t in range(min(k, n + 1)):  # fewer than k rows: v(empty)
        if aggregate:
            for c in range(d):
                total = 0.0
                for j in range(m):
                    total += weights[j, c] * empty[j]
                out[t, c] = total
        else:
            for j in range(m):
                out[t, j] = empty[j]
    if n < k:
        return
    top_rank = np.empty((m, k), dtype=np.int64)
    top_label = np.empty((m, k))
    worst = np.empty(m, dtype=np.int64)  # position in top_* of the farthest of the current k
    sums = np.zeros(m)
    for j in range(m):
        for s in range(k):
            i = perm[s]
            top_rank[j, s] = rank[j, i]
            top_label[j, s] = y[i]
            sums[j] += y[i]
        worst[j] = _farthest(top_rank[j])
    if aggregate:
        for c in range(d):
            total = 0.0
            for j in range(m):
                total += weights[j, c] * (sums[j] / k - y_eval[j])
            out[k, c] = total
    else:
        for j in range(m):
            out[k, j] = sums[j] / k - y_eval[j]
    for t in range(k, n):
        i = perm[t]
        label = y[i]
        if aggregate:
            for c in range(d):
                out[t + 1, c] = out[t, c]
        for j in range(m):
            far = worst[j]
            if rank[j, i] < top_rank[j, far]:
                change = label - top_label[j, far]
                top_rank[j, far] = rank[j, i]
                top_label[j, far] = label
                sums[j] += change
                worst[j] = _farthest(top_rank[j])
                if aggregate:
                    for c in range(d):
                        out[t + 1, c] += weights[j, c] * change / k
            if not aggregate:
                out[t + 1, j] = sums[j] / k - y_eval[j]
