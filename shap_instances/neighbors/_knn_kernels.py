"""Numba kernel of KNN regression refits along a permutation: the K nearest rows kept per explained row.

The caller (:class:`shap_instances.neighbors.KNNPath`) validated everything; this module only computes.
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
    for t in range(min(k, n + 1)):  # fewer than k rows: v(empty)
        _empty_value(empty, weights, aggregate, out[t])
    if n < k:
        return
    top_rank = np.empty((m, k), dtype=np.int64)
    top_label = np.empty((m, k))
    worst = np.empty(m, dtype=np.int64)  # position in top_* of the farthest of the current k
    sums = np.zeros(m)
    _first_neighbours(rank, y, perm, k, top_rank, top_label, worst, sums)
    _first_value(sums, y_eval, k, weights, aggregate, out[k])
    for t in range(k, n):
        _add_row(rank, y, y_eval, perm[t], k, weights, aggregate, top_rank, top_label, worst, sums, out[t], out[t + 1])


@njit(**JIT_OPTIONS)
def _empty_value(empty, weights, aggregate, row):
    """``row`` (d,) = v(empty): ``empty`` itself, or its weighted sums when ``aggregate``."""
    if aggregate:
        for c in range(row.shape[0]):
            total = 0.0
            for j in range(empty.shape[0]):
                total += weights[j, c] * empty[j]
            row[c] = total
    else:
        for j in range(empty.shape[0]):
            row[j] = empty[j]


@njit(**JIT_OPTIONS)
def _first_neighbours(rank, y, perm, k, top_rank, top_label, worst, sums):
    """The first ``k`` rows of ``perm`` as every explained row's neighbours: their ranks, labels, label sum and the
    position of the farthest."""
    for j in range(rank.shape[0]):
        for s in range(k):
            i = perm[s]
            top_rank[j, s] = rank[j, i]
            top_label[j, s] = y[i]
            sums[j] += y[i]
        worst[j] = _farthest(top_rank[j])


@njit(**JIT_OPTIONS)
def _first_value(sums, y_eval, k, weights, aggregate, row):
    """``row`` (d,) = the value of the prefix of ``k`` rows: the residuals of the neighbour means (or their weighted
    sums)."""
    m = sums.shape[0]
    if aggregate:
        for c in range(row.shape[0]):
            total = 0.0
            for j in range(m):
                total += weights[j, c] * (sums[j] / k - y_eval[j])
            row[c] = total
    else:
        for j in range(m):
            row[j] = sums[j] / k - y_eval[j]


@njit(**JIT_OPTIONS)
def _add_row(rank, y, y_eval, i, k, weights, aggregate, top_rank, top_label, worst, sums, before, after):
    """Training row ``i`` joins the prefix: it replaces the farthest neighbour of each explained row it is nearer to;
    ``after`` (d,) = the new value, from ``before`` (the last one)."""
    label = y[i]
    d = after.shape[0]
    if aggregate:
        for c in range(d):
            after[c] = before[c]
    for j in range(rank.shape[0]):
        far = worst[j]
        if rank[j, i] < top_rank[j, far]:
            change = label - top_label[j, far]
            top_rank[j, far] = rank[j, i]
            top_label[j, far] = label
            sums[j] += change
            worst[j] = _farthest(top_rank[j])
            if aggregate:
                for c in range(d):
                    after[c] += weights[j, c] * change / k
        if not aggregate:
            after[j] = sums[j] / k - y_eval[j]
