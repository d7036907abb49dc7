"""Numba kernels of permutation sampling: prefix fits, differences and the scatter into Shapley accumulators.

The callers (:mod:`shap_instances.games` and :mod:`shap_instances.estimators`) validated everything; these
functions only compute, on C-contiguous float64 arrays, and never allocate more than one unit's block.

*Accumulators.* A *unit* is ``per_unit`` consecutive permutations (1, or 2 for an antithetic pair); its
contribution block ``unit`` (n_players, n_outputs) holds the average over its permutations of each player's
marginal contribution ``v(prefix + i) - v(prefix)``. Every unit updates Welford's running ``mean`` and sum of
squared deviations ``m2`` in place (``count`` units so far), exactly as
``delta = unit - mean; mean += delta / count; m2 += delta * (unit - mean)``.

*Ridge prefix fits* (:func:`ridge_units`). scikit-learn's Ridge on the first ``t`` rows of a permutation
solves ``(M_t + alpha I) w = c_t`` with the centred scatter ``M_t`` and cross products ``c_t`` and sets
``b = ybar_t - xbar_t w``. Adding row ``x`` (target ``y``) to ``t - 1`` rows changes them by a positive rank
one term: with ``d = x - xbar_{t-1}``, ``f = (t - 1) / t``,

``M_t = M_{t-1} + f d d^T``,  ``c_t = c_{t-1} + f d (y - ybar_{t-1})``

(without an intercept ``M_t = M_{t-1} + x x^T``, ``c_t = c_{t-1} + x y``). The kernel keeps the square-root
information form ``R^T R = M_t + alpha I`` (R upper triangular), ``R^T z = c_t``, and adds the row
``sqrt(f) [d, y - ybar_{t-1}]`` to ``[R | z]`` by Givens rotations (the stable Cholesky rank-one update,
extended by one column), then ``w = R^{-1} z``: O(p^2) per prefix, O(n p^2) per permutation, never a p x p
solve from scratch. Least squares (alpha = 0) starts from a given ``(R0, z0)`` at prefix ``t0`` (the first
well-conditioned one, found by the caller) and takes the coefficients of the shorter prefixes from
``head_w``, ``head_b``. The value of prefix ``t`` on output ``j`` is
``(XE[j] w_t + ones[j] b_t - yE[j]) * y_scale``: residuals of explained rows (``ones`` = 1), or weighted
sums of them (``XE = W^T X_eval``, ``ones = W^T 1``), the aggregate game.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ._config import JIT_OPTIONS

__all__ = ["accumulate_prefix_units", "ridge_prefix_values", "ridge_units", "welford_update"]


@njit(**JIT_OPTIONS)
def welford_update(unit, mean, m2, count):
    """Add one unit (n, d) to the running ``mean`` and ``m2`` (in place); return the new count."""
    count += 1
    n, d = unit.shape
    for i in range(n):
        for j in range(d):
            delta = unit[i, j] - mean[i, j]
            mean[i, j] += delta / count
            m2[i, j] += delta * (unit[i, j] - mean[i, j])
    return count


@njit(**JIT_OPTIONS)
def accumulate_prefix_units(prefixes, permutations, per_unit, unit, mean, m2, count):
    """Differences of the prefix values, scattered to the players and accumulated, unit by unit.

    Parameters
    ----------
    prefixes : float64 (k, n + 1, d)
        ``prefixes[r, t]``: value of the first ``t`` players of permutation ``r``.
    permutations : intp (k, n)
    per_unit : int
        Permutations per unit (k is a multiple of it).
    unit : float64 (n, d)
        Work block (overwritten).
    mean, m2 : float64 (n, d)
        Welford state, updated in place.
    count : int
        Units accumulated so far.

    Returns
    -------
    int
        The new count.
    """
    k, n = permutations.shape
    d = prefixes.shape[2]
    share = 1.0 / per_unit
    for u in range(k // per_unit):
        unit[:, :] = 0.0
        for r in range(u * per_unit, (u + 1) * per_unit):
            for t in range(n):
                i = permutations[r, t]
                for j in range(d):
                    unit[i, j] += (prefixes[r, t + 1, j] - prefixes[r, t, j]) * share
        count = welford_update(unit, mean, m2, count)
    return count


@njit(**JIT_OPTIONS)
def _add_row(R, z, v, beta):
    """``[R | z]`` <- the triangular factor of ``[R | z]`` with the row ``[v | beta]`` appended (Givens).

    ``v`` and ``beta`` are consumed. Keeps ``R^T R + v v^T`` and ``R^T z + v beta``.
    """
    p = R.shape[0]
    for k in range(p):
        rkk = R[k, k]
        vk = v[k]
        if vk == 0.0:
            continue
        r = np.sqrt(rkk * rkk + vk * vk)
        c = rkk / r
        s = vk / r
        R[k, k] = r
        for i in range(k + 1, p):
            rki = R[k, i]
            R[k, i] = c * rki + s * v[i]
            v[i] = c * v[i] - s * rki
        zk = z[k]
        z[k] = c * zk + s * beta
        beta = c * beta - s * zk


@njit(**JIT_OPTIONS)
def _back_solve(R, z, w):
    """``w = R^{-1} z`` for upper-triangular R."""
    p = R.shape[0]
    for i in range(p - 1, -1, -1):
        total = z[i]
        for k in range(i + 1, p):
            total -= R[i, k] * w[k]
        w[i] = total / R[i, i]


@njit(**JIT_OPTIONS)
def _prefix_fit(X, y, perm, t, fit_intercept, R, z, mean_x, state, v, w, head_w, head_b, t0, R0, z0):
    """Advance the running fit by row ``perm[t]`` (t rows before it); leave the coefficients in ``w``.

    ``state`` holds ``[mean_y, b]``. Returns nothing; ``w`` and ``state[1]`` (the intercept) are the fit on
    the first ``t + 1`` rows.
    """
    p = X.shape[1]
    i = perm[t]
    count = t + 1.0
    if fit_intercept:
        f = (count - 1.0) / count
        root = np.sqrt(f)
        dy = y[i] - state[0]
        for q in range(p):
            d = X[i, q] - mean_x[q]
            v[q] = root * d
            mean_x[q] += d / count
        state[0] += dy / count
        beta = root * dy
    else:
        for q in range(p):
            v[q] = X[i, q]
        beta = y[i]
    if t + 1 < t0:  # least squares below its first well-conditioned prefix: coefficients given
        for q in range(p):
            w[q] = head_w[t, q]
        state[1] = head_b[t]
        return
    if t + 1 == t0:
        R[:, :] = R0
        z[:] = z0
    else:
        _add_row(R, z, v, beta)
    _back_solve(R, z, w)
    if fit_intercept:
        b = state[0]
        for q in range(p):
            b -= mean_x[q] * w[q]
        state[1] = b
    else:
        state[1] = 0.0


@njit(**JIT_OPTIONS)
def _start(R, z, mean_x, state, R_start, z_start):
    R[:, :] = R_start
    z[:] = z_start
    mean_x[:] = 0.0
    state[0] = 0.0
    state[1] = 0.0


@njit(**JIT_OPTIONS)
def _prefix_value(XT, ones, yE, w, b, y_scale, out):
    """``out = (XE w + ones b - yE) * y_scale`` with ``XT = XE^T`` (p, d)."""
    p, d = XT.shape
    for j in range(d):
        out[j] = ones[j] * b - yE[j]
    for q in range(p):
        wq = w[q]
        for j in range(d):
            out[j] += XT[q, j] * wq
    for j in range(d):
        out[j] *= y_scale


@njit(**JIT_OPTIONS)
def ridge_prefix_values(X, y, XT, ones, yE, empty, perm, fit_intercept, y_scale, alpha_root, head_w, head_b, t0,
                        R0, z0, out):
    """Values of every prefix of one permutation under the ridge / least-squares prefix fits.

    Parameters
    ----------
    X : float64 (n, p)
        Training rows (players), in scaled units.
    y : float64 (n,)
        Their targets, scaled.
    XT : float64 (p, d)
        ``XE^T``: explained rows (or their weighted sums), scaled, transposed.
    ones, yE, empty : float64 (d,)
        Intercept multipliers, (weighted) targets, and v(empty) (unscaled).
    perm : intp (n,)
    fit_intercept : bool
    y_scale : float
    alpha_root : float
        ``sqrt(alpha)`` in scaled units (the starting R when ``t0 == 0``).
    head_w, head_b, t0, R0, z0
        Least squares only (``t0 > 0``): coefficients of prefixes 1 .. t0 - 1 and the factor at prefix t0.
    out : float64 (n + 1, d)
        Filled with the prefix values, ``out[0] = empty``.
    """
    n, p = X.shape
    R = np.zeros((p, p))
    z = np.zeros(p)
    R_start = alpha_root * np.eye(p) if t0 == 0 else R0
    z_start = np.zeros(p) if t0 == 0 else z0
    mean_x = np.zeros(p)
    state = np.zeros(2)
    v = np.zeros(p)
    w = np.zeros(p)
    _start(R, z, mean_x, state, R_start, z_start)
    out[0, :] = empty
    for t in range(n):
        _prefix_fit(X, y, perm, t, fit_intercept, R, z, mean_x, state, v, w, head_w, head_b, t0, R0, z0)
        _prefix_value(XT, ones, yE, w, state[1], y_scale, out[t + 1])


@njit(**JIT_OPTIONS)
def ridge_units(X, y, XT, ones, yE, empty, permutations, per_unit, fit_intercept, y_scale, alpha_root, heads_w,
                heads_b, t0s, R0s, z0s, unit, mean, m2, count, full):
    """Prefix fits, prefix values, differences, scatter and Welford update, fused, for a batch of permutations.

    Arguments as :func:`ridge_prefix_values`, per permutation ``r`` for the least-squares starts
    (``heads_w[r]``, ``heads_b[r]``, ``t0s[r]``, ``R0s[r]``, ``z0s[r]``; ``t0s[r] = 0`` for ridge), and as
    :func:`accumulate_prefix_units` for ``unit``, ``mean``, ``m2`` and ``count``. Only ``unit`` (n, d) and two
    vectors of length d are held besides the accumulators. ``full`` (d,) receives v(all players) as the last
    prefix of the first permutation. Returns the new count.
    """
    k, n = permutations.shape
    p = X.shape[1]
    d = XT.shape[1]
    R = np.zeros((p, p))
    z = np.zeros(p)
    mean_x = np.zeros(p)
    state = np.zeros(2)
    v = np.zeros(p)
    w = np.zeros(p)
    previous = np.empty(d)
    current = np.empty(d)
    start_R = alpha_root * np.eye(p)
    start_z = np.zeros(p)
    share = 1.0 / per_unit
    for u in range(k // per_unit):
        unit[:, :] = 0.0
        for r in range(u * per_unit, (u + 1) * per_unit):
            t0 = t0s[r]
            if t0 == 0:
                _start(R, z, mean_x, state, start_R, start_z)
            else:
                _start(R, z, mean_x, state, R0s[r], z0s[r])
            previous[:] = empty
            perm = permutations[r]
            for t in range(n):
                _prefix_fit(X, y, perm, t, fit_intercept, R, z, mean_x, state, v, w, heads_w[r], heads_b[r], t0,
                            R0s[r], z0s[r])
                _prefix_value(XT, ones, yE, w, state[1], y_scale, current)
                i = perm[t]
                for j in range(d):
                    unit[i, j] += (current[j] - previous[j]) * share
                    previous[j] = current[j]
            if r == 0:
                full[:] = previous
        count = welford_update(unit, mean, m2, count)
    return count
