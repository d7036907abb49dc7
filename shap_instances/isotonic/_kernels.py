"""Numba kernels of Sparse Isotonic Shapley Regression.

Coalitions are int64 bit codes (bit j set = player j present), so the incidence matrix Z (2^p x p) is
never built: ``(Z gamma)_c`` and ``(Z^T r)_j`` are computed from the bits.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..utils import JIT_OPTIONS

__all__ = ["weighted_pava", "coalition_sums", "gradient_and_loss", "support_normal_equations", "shapley_from_codes"]


@njit(**JIT_OPTIONS)
def weighted_pava(y: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Weighted isotonic (non-decreasing) regression of ``y`` in the given order, stack-based PAVA."""
    n = y.shape[0]
    level = np.empty(n)
    weight = np.empty(n)
    start = np.empty(n, dtype=np.int64)
    top = -1
    for i in range(n):
        top += 1
        level[top] = y[i]
        weight[top] = w[i]
        start[top] = i
        while top > 0 and level[top - 1] >= level[top]:
            total = weight[top - 1] + weight[top]
            if total > 0:
                level[top - 1] = (weight[top - 1] * level[top - 1] + weight[top] * level[top]) / total
            else:
                level[top - 1] = 0.5 * (level[top - 1] + level[top])
            weight[top - 1] = total
            top -= 1
    fit = np.empty(n)
    for b in range(top + 1):
        end = start[b + 1] if b < top else n
        for i in range(start[b], end):
            fit[i] = level[b]
    return fit


@njit(**JIT_OPTIONS)
def _subset_sum(code, gamma, support):
    """``sum of gamma_j`` over the support players whose bit is set in ``code``: one entry of Z gamma."""
    total = 0.0
    for k in range(support.shape[0]):
        j = support[k]
        if (code >> j) & 1:
            total += gamma[j]
    return total


@njit(**JIT_OPTIONS)
def coalition_sums(codes: np.ndarray, gamma: np.ndarray, support: np.ndarray) -> np.ndarray:
    """``delta_c = sum_{j in support, bit j of codes[c]} gamma_j`` (that is, Z gamma)."""
    delta = np.zeros(codes.shape[0])
    for c in range(codes.shape[0]):
        delta[c] = _subset_sum(codes[c], gamma, support)
    return delta


@njit(**JIT_OPTIONS)
def gradient_and_loss(codes: np.ndarray, weights: np.ndarray, t: np.ndarray, gamma: np.ndarray, support: np.ndarray,
                      n_players: int) -> tuple[np.ndarray, float]:
    """Gradient ``Z^T W (Z gamma - t)`` and loss ``sum_c w_c (t_c - (Z gamma)_c)^2`` in one pass."""
    gradient = np.zeros(n_players)
    loss = 0.0
    for c in range(codes.shape[0]):
        code = codes[c]
        delta = _subset_sum(code, gamma, support)
        r = weights[c] * (delta - t[c])
        loss += r * (delta - t[c])
        for j in range(n_players):
            if (code >> j) & 1:
                gradient[j] += r
    return gradient, loss


@njit(**JIT_OPTIONS)
def support_normal_equations(codes: np.ndarray, weights: np.ndarray, t: np.ndarray,
                             support: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``Z_S^T W Z_S`` (s x s) and ``Z_S^T W t`` (s,) for the support players ``S``, from the bit codes.

    The exact Gram matrix of the support under arbitrary coalition weights (the Huber variant's reweighted
    coalitions), in one ``O(m s^2)`` pass.
    """
    k = support.shape[0]
    gram = np.zeros((k, k))
    linear = np.zeros(k)
    present = np.empty(k, dtype=np.bool_)
    for c in range(codes.shape[0]):
        code = codes[c]
        w = weights[c]
        for a in range(k):
            present[a] = (code >> support[a]) & 1
        for a in range(k):
            if present[a]:
                linear[a] += w * t[c]
                for b in range(a + 1):
                    if present[b]:
                        gram[a, b] += w
    for a in range(k):
        for b in range(a):
            gram[b, a] = gram[a, b]
    return gram, linear


@njit(**JIT_OPTIONS)
def shapley_from_codes(values: np.ndarray, n_players: int, w_in: np.ndarray, w_out: np.ndarray) -> np.ndarray:
    """Exact Shapley values from a full table ``values[code]`` of all 2^p coalitions."""
    phi = np.zeros(n_players)
    for code in range(values.shape[0]):
        size = 0
        for j in range(n_players):
            size += (code >> j) & 1
        for j in range(n_players):
            if (code >> j) & 1:
                phi[j] += w_in[size] * values[code]
            else:
                phi[j] -= w_out[size] * values[code]
    return phi
