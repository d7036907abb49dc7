"""Numba kernels: kernel ridge / Gaussian-process regression refitted on every prefix of a permutation.

Both models predict ``f_S(x) = mu_S + k_S(x)^T (K_SS + alpha I)^{-1} (y_S - mu_S 1)``, with ``K`` the kernel
matrix of the training rows, ``k_S(x)`` the kernel between ``x`` and the rows of S, and ``mu_S`` the mean
target of S for a GaussianProcessRegressor with ``normalize_y`` (else 0; the standard deviation by which it
also divides the targets cancels from the mean prediction). The kernel matrices are computed once, for all
rows; each prefix then adds one row ``i`` to the lower Cholesky factor ``L`` of ``A_S = K_SS + alpha I`` by
bordering: ``l = L^{-1} A_{S,i}`` (forward substitution), ``L_ii = sqrt(A_ii - l.l)``, O(t^2) at prefix t.
The forward solutions ``z_y = L^{-1} y_S`` and ``z_1 = L^{-1} 1`` grow by one entry each (O(t)); the
coefficients ``a = L^{-T} z`` (back substitution, O(t^2)) and the explained rows' predictions ``k_S(x_j)^T a``
(O(t m)) follow. A pivot ``A_ii - l.l`` that is not positive (``A_S`` not positive definite in floating point)
stops the walk: the caller finishes that permutation (a kernel ridge by dense solves as scikit-learn's, a
Gaussian process with v(empty), scikit-learn's Cholesky failing as well). Cost: O(n^3 / 3 + n^2 m / 2) per
permutation against O(n^4 / 12) for refits of every prefix.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from ..utils import JIT_OPTIONS
from ..utils.kernels import copy_into

__all__ = ["kernel_prefix_values"]


@njit(error_model="numpy", **JIT_OPTIONS)
def _border(A, perm, t, L, l):
    """Add row ``perm[t]`` to the factor ``L`` of ``A[perm[:t], perm[:t]]``; False when the pivot fails."""
    i = perm[t]
    squared = 0.0
    for s in range(t):
        total = A[perm[s], i]
        for u in range(s):
            total -= L[s, u] * l[u]
        l[s] = total / L[s, s]
        squared += l[s] * l[s]
    pivot = A[i, i] - squared
    if not pivot > 0.0 or not np.isfinite(pivot):
        return False
    for s in range(t):
        L[t, s] = l[s]
    L[t, t] = np.sqrt(pivot)
    return True


@njit(error_model="numpy", **JIT_OPTIONS)
def _back(L, z, t, a):
    """``a[:t] = L[:t, :t]^{-T} z[:t]``."""
    for s in range(t - 1, -1, -1):
        total = z[s]
        for u in range(s + 1, t):
            total -= L[u, s] * a[u]
        a[s] = total / L[s, s]


@njit(error_model="numpy", **JIT_OPTIONS)
def _walk(A, y, KET, yE, ones, empty, perm, centre, L, l, zy, z1, ay, a1, out):
    """Prefix values of one permutation into ``out`` (n + 1, d); returns the first prefix that failed (or n + 1)."""
    n = len(perm)
    d = len(yE)
    copy_into(out[0], empty)
    total = 0.0
    for t in range(n):
        i = perm[t]
        if not _border(A, perm, t, L, l):
            return t + 1
        dot_y = 0.0
        dot_1 = 0.0
        for s in range(t):
            dot_y += l[s] * zy[s]
            dot_1 += l[s] * z1[s]
        zy[t] = (y[i] - dot_y) / L[t, t]
        z1[t] = (1.0 - dot_1) / L[t, t]
        total += y[i]
        mean = total / (t + 1) if centre else 0.0
        _back(L, zy, t + 1, ay)
        if centre:
            _back(L, z1, t + 1, a1)
        for j in range(d):
            out[t + 1, j] = mean * ones[j] - yE[j]
        for s in range(t + 1):
            weight = ay[s] - mean * a1[s] if centre else ay[s]
            row = perm[s]
            for j in range(d):
                out[t + 1, j] += KET[row, j] * weight
    return n + 1


@njit(parallel=True, error_model="numpy", **JIT_OPTIONS)
def kernel_prefix_values(A: np.ndarray, y: np.ndarray, KET: np.ndarray, yE: np.ndarray, ones: np.ndarray,
                         empty: np.ndarray, permutations: np.ndarray, centre: bool, out: np.ndarray,
                         failed: np.ndarray) -> None:
    """Values of every prefix of each permutation (threads over the permutations, each independent).

    Parameters
    ----------
    A : float64 (n, n)
        ``K + alpha I`` on all training rows.
    y : float64 (n,)
    KET : float64 (n, d)
        Kernel between the training rows and the explained rows (``K_train,eval @ W`` for an aggregate game).
    yE, ones, empty : float64 (d,)
        Explained targets, the multiplier of the mean ``mu_S`` (1, or ``W^T 1``) and v(empty).
    permutations : intp (k, n)
    centre : bool
        Whether ``mu_S`` is the prefix's mean target (``normalize_y``).
    out : float64 (k, n + 1, d)
        Filled with the prefix values up to the first failed prefix of each permutation.
    failed : int64 (k,)
        Receives that prefix's size (n + 1 when none failed).
    """
    k, n = permutations.shape
    for r in prange(k):
        L = np.zeros((n, n))
        l, zy, z1, ay, a1 = np.zeros(n), np.zeros(n), np.zeros(n), np.zeros(n), np.zeros(n)
        failed[r] = _walk(A, y, KET, yE, ones, empty, permutations[r], centre, L, l, zy, z1, ay, a1, out[r])
