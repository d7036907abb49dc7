"""Numba kernels of the ridge and least-squares prefix fits (:class:`RidgePath`, :class:`MeanPath`).

*Ridge prefix fits* (:func:`ridge_units`, :func:`ridge_prefix_values`). scikit-learn's Ridge on the first
``t`` rows of a permutation minimises ``|y - b - X w|^2 + alpha |w|^2`` (the intercept ``b`` unpenalised; no
``b`` without an intercept). With ``Z = [1 | X]`` (or ``Z = X``) that is the least-squares problem
``[Z; sqrt(alpha) [0 | I]] [b; w] ~ [y; 0]``. The kernels keep its factorisation in the square-root-free form
of Gentleman (1973; Applied Statistics algorithm AS 75): ``Z^T Z + alpha diag(0, I) = Rb^T D Rb`` with
``Rb`` unit upper triangular and ``D`` diagonal, and ``Rb^T D zb = Z^T y``; each row ``[1, x | y]`` of the
permutation is added by square-root-free Givens rotations (the stable rank-one update of the factor,
extended by the column ``zb``): O(p^2) per prefix, no square root, never a p x p solve from scratch and never
the normal equations. The ridge start is ``Rb = I``, ``D = diag(0, alpha, ..., alpha)``. The coefficients are
``Rb^{-1} zb``; for few outputs (``d <= p + 1``) the kernels instead carry ``ub`` with ``Rb^T D ub = [ones |
XE]^T`` through the same rotations (a column whose right-hand side does not change), and the value of output
``j`` is ``sum_q ub[q, j] D[q] zb[q]``: O(p) per output and prefix, no back substitution. Least squares
(alpha = 0) has no factor below full rank: the coefficients of the prefixes before ``t0`` (the first
well-conditioned one, found by the caller) come from ``head_w``, ``head_b`` (the caller's minimum-norm
solutions, as scikit-learn's), and the rotations run from the first row all the same. The value of prefix
``t`` on output ``j`` is ``(XE[j] w_t + ones[j] b_t - yE[j]) * y_scale``: residuals of explained rows
(``ones`` = 1), or weighted sums of them (``XE = W^T X_eval``, ``ones = W^T 1``), the aggregate game.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from ..games import welford_update
from ..utils import INLINED, JIT_OPTIONS
from ..utils.kernels import copy_into

__all__ = ["ridge_prefix_values", "ridge_units", "uses_u"]


@njit(**INLINED)
def uses_u(n_outputs: int, n_coefficients: int) -> bool:
    """Whether the kernels carry ``U = R^{-T} Xa^T`` (few outputs) instead of solving for the coefficients."""
    return n_outputs <= n_coefficients


@njit(**INLINED)
def _add_row(Rb, D, z, U, v, beta, gamma, use_u):
    """Add the row ``v`` (target ``beta``) to ``(Rb, D, zb[, ub])``: square-root-free Givens (AS 75 ``includ``).

    ``v`` and ``gamma`` (work vectors) are consumed. Keeps ``Rb^T D Rb + v v^T``, ``Rb^T D zb + v beta`` and
    ``Rb^T D ub`` (``gamma`` starts at zero: ub's right-hand side does not change).
    """
    P = Rb.shape[0]
    d = U.shape[1]
    if use_u:
        gamma[:] = 0.0
    weight = 1.0
    for k in range(P):
        if weight == 0.0:
            return
        vk = v[k]
        if vk == 0.0:
            continue
        dk = D[k]
        updated = dk + weight * vk * vk
        c = dk / updated
        s = weight * vk / updated
        weight *= c
        D[k] = updated
        for i in range(k + 1, P):
            vi = v[i]
            v[i] = vi - vk * Rb[k, i]
            Rb[k, i] = c * Rb[k, i] + s * vi
        zk = beta
        beta = zk - vk * z[k]
        z[k] = c * z[k] + s * zk
        if use_u:
            for j in range(d):
                gj = gamma[j]
                gamma[j] = gj - vk * U[k, j]
                U[k, j] = c * U[k, j] + s * gj


@njit(**INLINED)
def _start_u(Rb, D, XaT, U):
    """``ub`` with ``Rb^T D ub = XaT`` (unit forward substitution, then D), XaT of shape (P, d)."""
    P, d = XaT.shape
    for j in range(d):
        for i in range(P):
            total = XaT[i, j]
            for k in range(i):
                total -= Rb[k, i] * U[k, j]
            U[i, j] = total
        for i in range(P):
            U[i, j] /= D[i]


@njit(**INLINED)
def _coefficients(Rb, z, wa):
    """``wa = Rb^{-1} zb`` (unit back substitution)."""
    P = Rb.shape[0]
    for i in range(P - 1, -1, -1):
        total = z[i]
        for k in range(i + 1, P):
            total -= Rb[i, k] * wa[k]
        wa[i] = total


@njit(**INLINED)
def _values(XaT, yE, wa, y_scale, out):
    """``out = (Xa wa - yE) * y_scale`` with ``XaT = Xa^T`` (P, d)."""
    P, d = XaT.shape
    for j in range(d):
        out[j] = -yE[j]
    for q in range(P):
        wq = wa[q]
        for j in range(d):
            out[j] += XaT[q, j] * wq
    for j in range(d):
        out[j] *= y_scale


@njit(**JIT_OPTIONS)
def _walk(X, y, XaT, yE, perm, fit_intercept, y_scale, alpha, head_w, head_b, t0, use_u, R, D, z, U, v, gamma,
          wa, current, previous, empty, sink, sink_row, share, mode):
    """One permutation: prefix fits, values and either the prefix values (``mode 0``: ``sink[t] = value``) or
    the scatter of the differences into ``sink[perm[t]] += share * difference`` (``mode 1``).

    ``previous`` ends holding v(all rows).
    """
    p = X.shape[1]
    offset = 1 if fit_intercept else 0
    _start_walk(R, D, z, previous, empty, alpha, offset)
    if mode == 0:
        copy_into(sink[sink_row, 0], empty)
    if use_u and t0 == 0:
        _start_u(R, D, XaT, U)
    for t in range(perm.shape[0]):  # a whole order, or its first prefixes only (place strata)
        i = perm[t]
        if fit_intercept:
            v[0] = 1.0
        for q in range(p):
            v[q + offset] = X[i, q]
        _add_row(R, D, z, U, v, y[i], gamma, use_u and t + 1 > t0)
        _prefix_value(XaT, yE, y_scale, head_w, head_b, t, t0, use_u, offset, R, D, z, U, wa, current)
        _record(current, previous, sink, sink_row, t, i, share, mode)


@njit(**INLINED)
def _start_walk(R, D, z, previous, empty, alpha, offset):
    """The ridge start: ``Rb = I``, ``D = diag(0, alpha, ..., alpha)`` (no 0 without an intercept), ``zb = 0``, and
    v(empty) as the last value."""
    P = R.shape[0]
    R[:, :] = 0.0
    D[:] = 0.0
    for q in range(P):
        R[q, q] = 1.0
    for q in range(offset, P):
        D[q] = alpha
    z[:] = 0.0
    copy_into(previous, empty)


@njit(**INLINED)
def _prefix_value(XaT, yE, y_scale, head_w, head_b, t, t0, use_u, offset, R, D, z, U, wa, current):
    """``current`` (d,) = the value of the prefix of ``t + 1`` rows, from the caller's minimum-norm coefficients
    below full rank (least squares, ``t + 1 < t0``), from ``ub`` (few outputs) or from the coefficients."""
    P, d = XaT.shape
    if t + 1 < t0:  # least squares below full rank: the caller's minimum-norm coefficients
        if offset:
            wa[0] = head_b[t]
        for q in range(P - offset):
            wa[q + offset] = head_w[t, q]
        _values(XaT, yE, wa, y_scale, current)
    elif use_u:
        if t + 1 == t0:
            _start_u(R, D, XaT, U)
        for j in range(d):
            total = -yE[j]
            for q in range(P):
                total += U[q, j] * D[q] * z[q]
            current[j] = total * y_scale
    else:
        _coefficients(R, z, wa)
        _values(XaT, yE, wa, y_scale, current)


@njit(**INLINED)
def _record(current, previous, sink, sink_row, t, i, share, mode):
    """Keep the prefix value (``mode 0``: ``sink[sink_row, t + 1] = current``) or scatter its difference to player
    ``i`` (``mode 1``: ``sink[0, i] += share * (current - previous)``); ``previous`` becomes ``current``."""
    d = current.shape[0]
    if mode == 0:
        for j in range(d):
            sink[sink_row, t + 1, j] = current[j]
    else:
        for j in range(d):
            sink[0, i, j] += (current[j] - previous[j]) * share
    for j in range(d):
        previous[j] = current[j]


@njit(**JIT_OPTIONS)
def _buffers(P, d, use_u):
    """Work arrays of one walk: Rb, D, zb, ub, v, gamma, wa, current, previous (ub, gamma empty unless used)."""
    width = d if use_u else 0
    return (np.zeros((P, P)), np.zeros(P), np.zeros(P), np.zeros((P, width)), np.zeros(P), np.zeros(width),
            np.zeros(P), np.zeros(d), np.zeros(d))


@njit(parallel=True, **JIT_OPTIONS)
def ridge_prefix_values(X: np.ndarray, y: np.ndarray, XaT: np.ndarray, yE: np.ndarray, empty: np.ndarray,
                        permutations: np.ndarray, fit_intercept: bool, y_scale: float, alpha: float,
                        heads_w: np.ndarray, heads_b: np.ndarray, t0s: np.ndarray, out: np.ndarray) -> None:
    """Values of every prefix of each permutation under the ridge / least-squares prefix fits (threads over
    the permutations, each independent, so the result does not depend on the number of threads).

    Parameters
    ----------
    X : float64 (n, p)
        Training rows (players), in scaled units.
    y : float64 (n,)
        Their targets, scaled.
    XaT : float64 (P, d)
        ``[ones | XE]^T`` (``XE^T`` without an intercept): explained rows (or their weighted sums), scaled,
        transposed; P = p + 1 with an intercept, p without.
    yE, empty : float64 (d,)
        (Weighted) targets, scaled, and v(empty), unscaled.
    permutations : intp (k, n)
    fit_intercept : bool
    y_scale : float
    alpha : float
        The penalty in scaled units.
    heads_w, heads_b, t0s : (k, h, p), (k, h), int64 (k,)
        Least squares: coefficients of the prefixes before ``t0s[r]`` rows; ridge: ``t0s[r]`` is 1 with an
        intercept (the factor is invertible from the first row on), else 0.
    out : float64 (k, n + 1, d)
        Filled with the prefix values, ``out[r, 0] = empty``.
    """
    k = permutations.shape[0]
    P, d = XaT.shape
    use_u = uses_u(d, P)
    for r in prange(k):  # r is unsigned in a prange: np.int64(r) below, so _walk has ridge_units' signature
        R, D, z, U, v, gamma, wa, current, previous = _buffers(P, d, use_u)
        _walk(X, y, XaT, yE, permutations[r], fit_intercept, y_scale, alpha, heads_w[r], heads_b[r], t0s[r],
              use_u, R, D, z, U, v, gamma, wa, current, previous, empty, out, np.int64(r), 1.0, np.int64(0))


@njit(**JIT_OPTIONS)
def ridge_units(X: np.ndarray, y: np.ndarray, XaT: np.ndarray, yE: np.ndarray, empty: np.ndarray,
                permutations: np.ndarray, per_unit: int, fit_intercept: bool, y_scale: float, alpha: float,
                heads_w: np.ndarray, heads_b: np.ndarray, t0s: np.ndarray, unit: np.ndarray, mean: np.ndarray,
                m2: np.ndarray, count: int, full: np.ndarray) -> int:
    """Prefix fits, prefix values, differences, scatter and Welford update, fused, for a batch of permutations.

    Arguments as :func:`ridge_prefix_values`, and as :func:`accumulate_prefix_units` for ``unit``, ``mean``,
    ``m2`` and ``count``. Besides the accumulators only ``unit`` (n, d) and vectors of length d and p are
    held. ``full`` (d,) receives v(all players) along the first permutation. Returns the new count.
    """
    k = permutations.shape[0]
    P, d = XaT.shape
    use_u = uses_u(d, P)
    R, D, z, U, v, gamma, wa, current, previous = _buffers(P, d, use_u)
    block = unit.reshape((1, unit.shape[0], unit.shape[1]))
    share = 1.0 / per_unit
    for u in range(k // per_unit):
        unit[:, :] = 0.0
        for r in range(u * per_unit, (u + 1) * per_unit):
            _walk(X, y, XaT, yE, permutations[r], fit_intercept, y_scale, alpha, heads_w[r], heads_b[r],
                  t0s[r], use_u, R, D, z, U, v, gamma, wa, current, previous, empty, block, np.int64(0), share,
                  np.int64(1))
            if r == 0:
                copy_into(full, previous)
        count = welford_update(unit, mean, m2, count)
    return count
