"""Numba kernels: l2 logistic regression refitted on every prefix of a permutation, warm-started Newton.

scikit-learn's ``LogisticRegression(C=C)`` (l2 penalty, binary target ``y`` in {0, 1}, any solver but
liblinear) minimises, over ``w`` (and an unpenalised intercept ``b``),

``F_S(w) = sum_{i in S} [log(1 + exp(m_i)) - y_i m_i] + lam / 2 |w|^2``,  ``m_i = z_i . w``,  ``lam = 1 / C``,

with ``z_i = [1, x_i]`` (``[x_i]`` without an intercept) and the intercept's penalty zero. ``F_S`` is strictly
convex once S holds both classes (the penalty on ``w``, both labels for ``b``), so the fit is unique; with one
class (or no row) scikit-learn refuses to fit, and the residual game gives the coalition ``v(empty)``.

Its gradient and Hessian are ``g(w) = sum_i (s_i - y_i) z_i + lam P w`` and
``H(w) = sum_i s_i (1 - s_i) z_i z_i^T + lam P``, ``s_i = sigmoid(m_i)``, ``P = diag(0, 1, ..., 1)``.
Along a permutation, the prefix ``S_t`` adds one row ``r`` to ``S_{t-1}``, whose optimum ``w_{t-1}`` is the
warm start: there ``g_t(w_{t-1}) = g_{t-1}(w_{t-1}) + (s_r - y_r) z_r``, known without a pass over the rows
(``g_{t-1}`` was evaluated at ``w_{t-1}``). The kernels keep a curvature matrix ``A``: the exact Hessian at the
last refresh (each time the prefix grows by a tenth: amortised O(P^2) a row), plus the rank-one term
``s_r (1 - s_r) z_r z_r^T`` of each row added since, sharpened within a prefix by the BFGS update of each step's
secant pair ``(w' - w, g(w') - g(w))``, and reset to the exact Hessian when a prefix needs more than five steps.
The iteration is ``w <- w - step A^{-1} g`` (``A`` positive definite: a descent direction). The full step
(``step = 1``) is kept when the step after it is at most half as long, which one O(t P) pass for ``g`` alone
(no logarithm) tells; otherwise Armijo backtracking on ``F_t`` chooses the step, so ``F_t`` decreases.

*Stopping rule.* The fit stops at the first iterate whose next step ``d = A^{-1} g`` would move no logit by
more than ``tol``: ``sum_q |d_q| * scale_q <= tol``, ``scale_q`` the largest ``|z_q|`` among training and
explained rows. Near the optimum ``d`` is the distance to it up to a factor ``|A^{-1} H - I|`` (small), so the
predicted probabilities are within about ``tol / 4`` of the exact refit's. ``tol = 1e-10`` by default: finer
than scikit-learn's own refits at their default ``tol = 1e-4``.

Cost per prefix: a rank-one update and one ``P x P`` Cholesky factorisation per step (``P = p + 1``), three to
five O(t P) passes of ``g``, and the values of the explained rows, O(m P): O(n^2 p + n m p) per permutation,
against a full iterative refit per prefix for scikit-learn.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from ..utils import JIT_OPTIONS
from ._prefix_kernels import welford_update

__all__ = ["logistic_fit", "logistic_prefix_values", "logistic_units", "logistic_walk"]

#: Iterations of one fit before it gives up (never reached in the tests: a warm start needs two or three).
MAX_STEPS = 200


@njit(**JIT_OPTIONS)
def _loss_and_sigmoid(m, y):
    """``log(1 + exp(m)) - y m`` and ``sigmoid(m)``, without overflow."""
    return np.log1p(np.exp(-abs(m))) + max(m, 0.0) - y * m, _sigmoid(m)


@njit(**JIT_OPTIONS)
def _sigmoid(m):
    e = np.exp(-abs(m))
    return 1.0 / (1.0 + e) if m >= 0 else e / (1.0 + e)


@njit(**JIT_OPTIONS)
def _logit(Z, row, w):
    total = 0.0
    for q in range(w.shape[0]):
        total += Z[row, q] * w[q]
    return total


@njit(**JIT_OPTIONS)
def _objective(Z, y, rows, t, w, pen, g, with_loss):
    """The gradient of ``F`` over ``rows[:t]`` at ``w`` into ``g``; returns ``F`` there when ``with_loss`` (else 0:
    the logarithms are skipped)."""
    P = w.shape[0]
    total = 0.0
    for q in range(P):
        g[q] = pen[q] * w[q]
        total += 0.5 * pen[q] * w[q] * w[q]
    for k in range(t):
        r = rows[k]
        m = _logit(Z, r, w)
        if with_loss:
            loss, s = _loss_and_sigmoid(m, y[r])
            total += loss
        else:
            s = _sigmoid(m)
        c = s - y[r]
        for q in range(P):
            g[q] += c * Z[r, q]
    return total if with_loss else 0.0


@njit(**JIT_OPTIONS)
def _add_curvature(A, Z, r, w):
    """``A += s (1 - s) z_r z_r^T`` at ``w``."""
    P = w.shape[0]
    s = _sigmoid(_logit(Z, r, w))
    h = s * (1.0 - s)
    for a in range(P):
        za = h * Z[r, a]
        for b in range(P):
            A[a, b] += za * Z[r, b]


@njit(**JIT_OPTIONS)
def _exact_hessian(A, Z, rows, t, w, pen):
    A[:, :] = 0.0
    for q in range(w.shape[0]):
        A[q, q] = pen[q]
    for k in range(t):
        _add_curvature(A, Z, rows[k], w)


@njit(**JIT_OPTIONS)
def _solve(A, L, g, d):
    """``d = A^{-1} g`` by Cholesky (``L`` work); a non-positive pivot is lifted to a tiny positive one."""
    P = g.shape[0]
    trace = 0.0
    for q in range(P):
        trace += A[q, q]
    floor = 1e-14 * trace + 1e-300
    for j in range(P):
        total = A[j, j]
        for k in range(j):
            total -= L[j, k] * L[j, k]
        L[j, j] = np.sqrt(max(total, floor))
        for i in range(j + 1, P):
            total = A[i, j]
            for k in range(j):
                total -= L[i, k] * L[j, k]
            L[i, j] = total / L[j, j]
    for i in range(P):
        total = g[i]
        for k in range(i):
            total -= L[i, k] * d[k]
        d[i] = total / L[i, i]
    for i in range(P - 1, -1, -1):
        total = d[i]
        for k in range(i + 1, P):
            total -= L[k, i] * d[k]
        d[i] = total / L[i, i]


@njit(**JIT_OPTIONS)
def _bfgs(A, s, yv, As):
    """The BFGS update of the curvature ``A`` with the step ``s`` and the change ``yv`` of the gradient."""
    P = s.shape[0]
    ys = 0.0
    sAs = 0.0
    for a in range(P):
        total = 0.0
        for b in range(P):
            total += A[a, b] * s[b]
        As[a] = total
        ys += yv[a] * s[a]
        sAs += s[a] * total
    if ys <= 1e-300 or sAs <= 1e-300:  # no curvature information (a step lost in rounding)
        return
    for a in range(P):
        for b in range(P):
            A[a, b] += yv[a] * yv[b] / ys - As[a] * As[b] / sAs


@njit(**JIT_OPTIONS)
def _size(d, scale):
    """How far the step ``d`` moves a logit at most: ``sum_q |d_q| scale_q``."""
    total = 0.0
    for q in range(d.shape[0]):
        total += abs(d[q]) * scale[q]
    return total


@njit(**JIT_OPTIONS)
def _newton(Z, y, rows, t, w, pen, scale, tol, A, L, g, work):
    """Minimise ``F`` over ``rows[:t]`` from ``w`` (``g``: the gradient there; ``A``: the curvature to start
    from). Updates ``w``, ``g``, ``A`` in place. ``work`` (5, P): the step, the trial point, its gradient, the
    next step and a gradient sink.

    The full step is taken when the next one is at most half as long (a pass without logarithms); otherwise
    Armijo backtracking on ``F`` decides."""
    P = w.shape[0]
    d, trial, g_trial, following, sink = work[0], work[1], work[2], work[3], work[4]
    _solve(A, L, g, d)
    for step_count in range(MAX_STEPS):
        size = _size(d, scale)
        if size <= tol:
            return
        for q in range(P):
            trial[q] = w[q] - d[q]
        _objective(Z, y, rows, t, trial, pen, g_trial, False)
        _solve(A, L, g_trial, following)
        if _size(following, scale) > 0.5 * size:  # no contraction: backtrack on F
            slope = 0.0
            for q in range(P):
                slope += g[q] * d[q]
            f = _objective(Z, y, rows, t, w, pen, sink, True)
            step = 1.0
            for _ in range(60):
                for q in range(P):
                    trial[q] = w[q] - step * d[q]
                f_trial = _objective(Z, y, rows, t, trial, pen, g_trial, True)
                # Armijo, or no rise beyond rounding (near the optimum F is flat to within its last digits)
                if f_trial <= f - 1e-4 * step * slope or f_trial - f <= 1e-13 * abs(f) or step * size <= tol:
                    break
                step *= 0.5
        if step_count >= 5:  # slow progress: the exact Hessian at the new iterate
            _exact_hessian(A, Z, rows, t, trial, pen)
        else:  # the secant pair of this step sharpens the curvature (BFGS), O(P^2)
            for q in range(P):
                d[q] = trial[q] - w[q]
                sink[q] = g_trial[q] - g[q]
            _bfgs(A, d, sink, L[0])
        w[:] = trial
        g[:] = g_trial
        _solve(A, L, g, d)


@njit(**JIT_OPTIONS)
def _values(ZE, yE, W, w, empty, out, fitted):
    """``out`` = residuals ``sigmoid(ZE w) - yE`` (their weighted sums ``W^T .`` when W has columns), or
    ``empty`` when not ``fitted``."""
    d = out.shape[0]
    if not fitted:
        out[:] = empty
        return
    aggregate = W.shape[1] > 0
    if aggregate:
        out[:] = 0.0
    for j in range(ZE.shape[0]):
        residual = _sigmoid(_logit(ZE, j, w)) - yE[j]
        if aggregate:
            for k in range(d):
                out[k] += W[j, k] * residual
        else:
            out[j] = residual


@njit(**JIT_OPTIONS)
def logistic_fit(Z: np.ndarray, y: np.ndarray, rows: np.ndarray, pen: np.ndarray, scale: np.ndarray,
                 tol: float) -> np.ndarray:
    """Coefficients ``[b, w]`` (``w`` without an intercept) of the l2 logistic fit on ``rows`` (both classes).

    ``Z`` (n, P) holds ``[1, x]`` rows, ``pen`` (P,) the penalty of each coefficient, ``scale`` (P,) the
    largest ``|Z[:, q]|`` (the stopping rule of the module docstring). Newton from zero, exact Hessians.
    """
    P = Z.shape[1]
    t = rows.shape[0]
    w, g, work = np.zeros(P), np.zeros(P), np.zeros((5, P))
    A, L = np.zeros((P, P)), np.zeros((P, P))
    _objective(Z, y, rows, t, w, pen, g, False)
    _exact_hessian(A, Z, rows, t, w, pen)
    _newton(Z, y, rows, t, w, pen, scale, tol, A, L, g, work)
    return w


@njit(**JIT_OPTIONS)
def logistic_walk(Z: np.ndarray, y: np.ndarray, ZE: np.ndarray, yE: np.ndarray, W: np.ndarray, empty: np.ndarray,
                  perm: np.ndarray, pen: np.ndarray, scale: np.ndarray, tol: float, sink: np.ndarray, sink_row: int,
                  share: float, mode: int) -> np.ndarray:
    """One permutation: prefix fits, values, and either ``sink[sink_row, t] = value`` (``mode 0``) or the
    scatter ``sink[0, perm[t]] += share * difference`` (``mode 1``). Returns v(all rows)."""
    n, P = perm.shape[0], Z.shape[1]
    d = empty.shape[0]
    w, g, work = np.zeros(P), np.zeros(P), np.zeros((5, P))
    A, L = np.zeros((P, P)), np.zeros((P, P))
    current, previous = np.empty(d), empty.copy()
    if mode == 0:
        sink[sink_row, 0, :] = empty
    positives = 0.0
    fitted = False
    refresh = 0.0
    for t in range(n):
        r = perm[t]
        positives += y[r]
        if fitted:  # warm start: g gains row r's term at the previous optimum
            c = _sigmoid(_logit(Z, r, w)) - y[r]
            for q in range(P):
                g[q] += c * Z[r, q]
            if t + 1 >= refresh:  # the exact Hessian each time the prefix grows by a tenth: O(P^2) a row
                _exact_hessian(A, Z, perm, t + 1, w, pen)
                refresh = 1.1 * (t + 1)
            else:
                _add_curvature(A, Z, r, w)
            _newton(Z, y, perm, t + 1, w, pen, scale, tol, A, L, g, work)
        elif 0.0 < positives < t + 1.0:  # the first prefix with both classes: a cold fit
            w[:] = logistic_fit(Z, y, perm[: t + 1], pen, scale, tol)
            _objective(Z, y, perm, t + 1, w, pen, g, False)
            _exact_hessian(A, Z, perm, t + 1, w, pen)
            refresh = 1.1 * (t + 1)
            fitted = True
        _values(ZE, yE, W, w, empty, current, fitted)
        if mode == 0:
            sink[sink_row, t + 1, :] = current
        else:
            for j in range(d):
                sink[0, r, j] += (current[j] - previous[j]) * share
        previous[:] = current
    return previous


@njit(parallel=True, **JIT_OPTIONS)
def logistic_prefix_values(Z: np.ndarray, y: np.ndarray, ZE: np.ndarray, yE: np.ndarray, W: np.ndarray,
                           empty: np.ndarray, permutations: np.ndarray, pen: np.ndarray, scale: np.ndarray,
                           tol: float, out: np.ndarray) -> None:
    """Values of every prefix of each permutation (threads over the permutations), ``out`` (k, n + 1, d).

    ``Z`` (n, P) and ``ZE`` (m, P): training and explained rows as ``[1, x]`` (``x`` without an intercept);
    ``y`` (n,) in {0, 1}; ``yE`` (m,); ``W`` (m, d) weights of an aggregate game, or (m, 0) for the residuals
    themselves (d = m); ``empty`` (d,) v(empty), also the value of a prefix with one class.
    """
    for r in prange(permutations.shape[0]):
        logistic_walk(Z, y, ZE, yE, W, empty, permutations[r], pen, scale, tol, out, r, 1.0, 0)


@njit(**JIT_OPTIONS)
def logistic_units(Z: np.ndarray, y: np.ndarray, ZE: np.ndarray, yE: np.ndarray, W: np.ndarray, empty: np.ndarray,
                   permutations: np.ndarray, pen: np.ndarray, scale: np.ndarray, tol: float, per_unit: int,
                   unit: np.ndarray, mean: np.ndarray, m2: np.ndarray, count: int, full: np.ndarray) -> int:
    """Logistic prefix fits, differences, scatter and Welford update, fused (as ``ridge_units``).

    Arguments as :func:`logistic_prefix_values` and ``accumulate_prefix_units``;
    ``full`` (d,) receives v(all rows). Returns the new count.
    """
    block = unit.reshape((1, unit.shape[0], unit.shape[1]))
    share = 1.0 / per_unit
    for u in range(permutations.shape[0] // per_unit):
        unit[:, :] = 0.0
        for r in range(u * per_unit, (u + 1) * per_unit):
            full[:] = logistic_walk(Z, y, ZE, yE, W, empty, permutations[r], pen, scale, tol, block, 0, share, 1)
        count = welford_update(unit, mean, m2, count)
    return count
