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
(``g_{t-1}`` was evaluated at ``w_{t-1}``). The kernels keep the inverse ``B = A^{-1}`` of a curvature matrix
``A``: the exact Hessian at the last refresh (each time the prefix grows by 10%, :data:`REFRESH`: amortised
O(P^2) a row, one matrix product and one Cholesky inversion), plus the rank-one term ``s_r (1 - s_r) z_r z_r^T``
of each row added since (Sherman-Morrison on ``B``), sharpened within a prefix by the BFGS update of each step's
secant pair ``(w' - w, g(w') - g(w))`` (its inverse form), and reset to the exact Hessian when a prefix needs
more than five steps: every update is O(P^2), no factorisation per step. The iteration is
``w <- w - step B g`` (``B`` positive definite: a descent direction). The full step (``step = 1``) is kept when
the step after it is at most half as long, which one O(t P) pass for ``g`` alone (no logarithm) tells; otherwise
Armijo backtracking on ``F_t`` chooses the step, so ``F_t`` decreases. The rows are copied once per permutation,
in permutation order, as the columns of a (P, n) array: a prefix's rows are the first ``t`` entries of each of
its P contiguous rows, so a pass is two loops along contiguous memory that the compiler vectorises
(:func:`_logits`, :func:`_gather`; 1.3x faster than BLAS's matrix-vector products on rows at P = 21).

*Stopping rule.* Step sizes are measured in logits: ``|d| = sum_q |d_q| * scale_q``, ``scale_q`` the largest
``|z_q|`` among training and explained rows, a bound on how far ``d`` moves any logit. The fit stops

- at the first iterate whose next step ``d = A^{-1} g`` has ``|d| <= tol`` (not taken), or
- after taking ``d`` when the last full step contracted the step sizes enough that the one after ``d`` is
  predicted below ``tol / 2``: ``|d|^2 / |d_prev| <= tol / 2``. The iteration converges at least linearly, with
  rate ``|I - A^{-1} H|`` (about 1e-3 along a prefix), so the ratio of consecutive steps estimates the rate,
  conservatively once convergence is superlinear. The gradient at the new iterate is then set to the chord
  model's ``g - A d = 0``; the next prefix's first pass recomputes it exactly. This saves the pass that would
  only confirm a step below ``tol``.

Near the optimum ``d`` is the distance to it up to a factor ``|A^{-1} H - I|`` (small), so the predicted
probabilities are within about ``tol / 4`` of the exact refit's. ``LogisticPath.tol = 1e-7`` by default: far
finer than scikit-learn's own refits at their default ``tol = 1e-4``.

*Values.* The coefficients of every prefix are kept (n x P); the explained rows' logits come from one matrix
product per block of :data:`BLOCK` prefixes (``coefs[block] @ ZE^T``, BLAS), then their sigmoids, the
differences and the scatter.

Cost per prefix: one to six O(t P) passes of ``g`` (2.4 on average at 2,000 x 20 with ``tol = 1e-7``, 3.4 with
``tol = 1e-10``; two is the floor along most of a prefix: the first step's error comes from the change of the
Hessian between ``w_{t-1}`` and ``w_t``, a rate of about 3e-3 that the second step meets again), a few O(P^2)
updates, and the values of the explained rows, O(m P): O(n^2 p + n m p) per permutation, against a full
iterative refit per prefix for scikit-learn.
"""

from __future__ import annotations

from functools import partial

import numpy as np
from numba import njit

from ..games import welford_blocks
from ..utils import INLINED, JIT_OPTIONS
from ..utils.kernels import copy_into, on_threads

__all__ = ["FIT_KERNELS", "logistic_fit", "logistic_prefix_values", "logistic_units", "logistic_walk", "softmax_fit"]

#: Iterations of one fit before it gives up (never reached in the tests: a warm start needs two or three).
MAX_STEPS = 200
#: Prefixes whose explained-row logits one matrix product (BLAS) computes.
BLOCK = 64
#: The exact Hessian is recomputed each time the prefix has grown by this factor since the last time (1.02 to 1.5
#: leave the passes per prefix within 3% of each other; 1.1 spends the least time, 2,000 x 20).
REFRESH = 1.1
#: ``1 / j!`` for j = 12, ..., 0: the Taylor coefficients of ``exp`` after the leading ``1 / 13!`` (:func:`_sigmoids`).
_TAYLOR = (1.0 / 479001600.0, 1.0 / 39916800.0, 1.0 / 3628800.0, 1.0 / 362880.0, 1.0 / 40320.0, 1.0 / 5040.0,
           1.0 / 720.0, 1.0 / 120.0, 1.0 / 24.0, 1.0 / 6.0, 0.5, 1.0, 1.0)


@njit(**INLINED)
def _loss_and_sigmoid(m, y):
    """``log(1 + exp(m)) - y m`` and ``sigmoid(m)``, without overflow."""
    return np.log1p(np.exp(-abs(m))) + max(m, 0.0) - y * m, _sigmoid(m)


@njit(**INLINED)
def _sigmoid(m):
    """``1 / (1 + exp(-m))``, branch-free: ``exp(-m)`` overflows to inf for ``m < -709``, and the result is then 0,
    as it should be; relative error a few ulp for every ``m``."""
    return 1.0 / (1.0 + np.exp(-m))


@njit(**JIT_OPTIONS)
def _sigmoids(m):
    """``m[i] <- 1 / (1 + exp(-m[i]))`` over a 1-d array, in loops the compiler vectorises (1.5x faster than
    :func:`_sigmoid` element by element, which calls the scalar ``exp``; half of a gradient pass is its sigmoids).

    ``exp(x) = 2^k exp(r)``, ``k = round(x / ln 2)``, ``|r| <= ln 2 / 2``, ``exp(r)`` by its Taylor polynomial of
    degree 13 (remainder below ``0.35^14 / 14! = 4e-18``, relative), ``2^k`` added to the exponent bits; ``x`` is
    clipped to ``[-708, 708]``, where ``2^k exp(r)`` is a normal number: a logit beyond 708 in size gets a
    probability within ``1e-307`` of 0 or 1 instead of one even closer. Absolute error ``<= 3e-16`` (tests: against
    ``scipy.special.expit``)."""
    shift = np.empty(m.shape[0], dtype=np.int64)
    for i in range(m.shape[0]):
        x = min(max(-m[i], -708.0), 708.0)
        k = np.floor(x * 1.4426950408889634 + 0.5)
        r = x - k * 0.6931471803691238 - k * 1.9082149292705877e-10  # ln 2 in two parts: r exact to rounding
        e = 1.0 / 6227020800.0
        for c in _TAYLOR:
            e = e * r + c
        m[i] = e
        shift[i] = np.int64(k) << 52
    bits = m.view(np.int64)
    for i in range(m.shape[0]):
        bits[i] += shift[i]
    for i in range(m.shape[0]):
        m[i] = 1.0 / (1.0 + m[i])


@njit(fastmath=True, **JIT_OPTIONS)
def _logits(Zc, t, W, M):
    """``M[:, :t] = W Zc[:, :t]``: the logits (K, t) of the first ``t`` rows (columns of ``Zc``, (P, n)) under the
    coefficient rows ``W`` (K, P). Loops along the contiguous rows of ``Zc``, which the compiler vectorises: 1.3x
    faster than BLAS's matrix-vector product on the rows (t, P) at P = 21."""
    for k in range(W.shape[0]):
        out = M[k]
        for i in range(t):
            out[i] = 0.0
        for q in range(Zc.shape[0]):
            weight, column = W[k, q], Zc[q]
            for i in range(t):
                out[i] += weight * column[i]


@njit(fastmath=True, **JIT_OPTIONS)
def _gather(Zc, t, R, G):
    """``G = R[:, :t] Zc[:, :t]^T`` (K, P): the residuals ``R`` (K, t) summed against each feature's column."""
    for k in range(R.shape[0]):
        residuals = R[k]
        for q in range(Zc.shape[0]):
            column = Zc[q]
            total = 0.0
            for i in range(t):
                total += residuals[i] * column[i]
            G[k, q] = total


@njit(**JIT_OPTIONS)
def _objective(Zc, yt, w, pen, g, with_loss):
    """The gradient of ``F`` over the first ``t = len(yt)`` rows (columns of ``Zc``, (P, n)), targets ``yt``, at
    ``w`` into ``g``; returns ``F`` there when ``with_loss`` (else 0: the logarithms are skipped)."""
    t, P = yt.shape[0], w.shape[0]
    M = np.empty((1, t))
    _logits(Zc, t, w.reshape((1, P)), M)
    m = M[0]
    total = 0.0
    if not with_loss:
        _sigmoids(m)
    for i in range(t):
        if with_loss:
            loss, s = _loss_and_sigmoid(m[i], yt[i])
            total += loss
            m[i] = s
        m[i] -= yt[i]
    _gather(Zc, t, M, g.reshape((1, P)))
    for q in range(P):
        g[q] += pen[q] * w[q]
        total += 0.5 * pen[q] * w[q] * w[q]
    return total if with_loss else 0.0


@njit(**INLINED)
def _add_rank_one(B, u, Bu):
    """``B <- (B^{-1} + u u^T)^{-1}`` (Sherman-Morrison, O(P^2)); ``Bu``: scratch (P,)."""
    P = u.shape[0]
    _solve(B, u, Bu)
    factor = 1.0 / (1.0 + np.dot(u, Bu))
    for a in range(P):
        scaled = factor * Bu[a]
        for b in range(P):
            B[a, b] -= scaled * Bu[b]


@njit(**INLINED)
def _add_curvature(B, z, w, u, Bu):
    """The inverse curvature ``B`` gains the row ``z``'s term ``s (1 - s) z z^T`` at ``w``."""
    s = _sigmoid(np.dot(z, w))
    root = np.sqrt(s * (1.0 - s))
    for q in range(z.shape[0]):
        u[q] = root * z[q]
    _add_rank_one(B, u, Bu)


@njit(**INLINED)
def _weighted_gram(rows, weight):
    """``rows diag(weight) rows^T`` (P, P) of the rows as columns ``rows`` (P, t): one matrix product (BLAS)."""
    return np.dot(rows * weight.reshape((1, -1)), rows.T)


@njit(**INLINED)
def _exact_hessian(A, Zc, t, w, pen):
    """``A = Z^T diag(s (1 - s)) Z + diag(pen)`` at ``w`` over the first ``t`` rows (columns of ``Zc``)."""
    M = np.empty((1, t))
    _logits(Zc, t, w.reshape((1, w.shape[0])), M)
    s = M[0]
    _sigmoids(s)
    for i in range(t):
        s[i] *= 1.0 - s[i]
    gram = _weighted_gram(np.ascontiguousarray(Zc[:, :t]), s)
    for q in range(w.shape[0]):
        copy_into(A[q], gram[q])
    for q in range(w.shape[0]):
        A[q, q] += pen[q]


@njit(**JIT_OPTIONS)
def _softmax(M, active):
    """Each row of the logits ``M`` (t, K) becomes its probabilities over the ``active`` classes (0 elsewhere), in
    place; returns the row-wise ``log sum exp`` of the active logits (t,)."""
    out = np.empty(M.shape[0])
    for i in range(M.shape[0]):
        top = -np.inf
        for k in range(M.shape[1]):
            if active[k] and M[i, k] > top:
                top = M[i, k]
        total = 0.0
        for k in range(M.shape[1]):
            M[i, k] = np.exp(M[i, k] - top) if active[k] else 0.0
            total += M[i, k]
        for k in range(M.shape[1]):
            M[i, k] /= total
        out[i] = top + np.log(total)
    return out


@njit(**JIT_OPTIONS)
def _softmax_objective(Zc, yt, w, pen, g, with_loss, classes):
    """As :func:`_objective` for the multinomial model: ``w`` holds one coefficient row ``[b_k, w_k]`` per class
    (K * P), ``yt`` class indices, ``classes`` (2, K) which classes are in the model (row 0) and which have free
    coefficients (row 1; the others stay 0)."""
    K, P, t = classes.shape[1], Zc.shape[0], yt.shape[0]
    logits = np.empty((K, t))
    _logits(Zc, t, w.reshape((K, P)), logits)
    M = logits.T
    total = 0.0
    picked = np.empty(t)
    for i in range(t):
        picked[i] = M[i, int(yt[i])]
    norm = _softmax(M, classes[0])
    for i in range(t):
        total += norm[i] - picked[i]
        M[i, int(yt[i])] -= 1.0
    G = np.empty((K, P))
    _gather(Zc, t, logits, G)
    for k in range(K):
        for q in range(P):
            j = k * P + q
            g[j] = (G[k, q] if classes[1, k] else 0.0) + pen[j] * w[j]
            total += 0.5 * pen[j] * w[j] * w[j]
    return total if with_loss else 0.0


@njit(**INLINED)
def _softmax_curvature(A, Zc, t, w, classes):
    """``A +=`` the multinomial loss's Hessian over the first ``t`` rows (columns of ``Zc``) at ``w``, free classes
    only: block ``(k, l)`` is ``Z^T diag(p_k (delta_kl - p_l)) Z`` (one matrix product per block)."""
    K, P = classes.shape[1], Zc.shape[0]
    logits = np.empty((K, t))
    _logits(Zc, t, w.reshape((K, P)), logits)
    M = logits.T
    _softmax(M, classes[0])
    rows = np.ascontiguousarray(Zc[:, :t])
    for k in range(K):
        for l in range(k, K):
            if not (classes[1, k] and classes[1, l]):
                continue
            weight = M[:, k] * ((1.0 if k == l else 0.0) - M[:, l])
            block = _weighted_gram(rows, weight)
            for a in range(P):
                for b in range(P):
                    A[k * P + a, l * P + b] += block[a, b]
                    if l != k:
                        A[l * P + b, k * P + a] += block[a, b]


@njit(**INLINED)
def _add_softmax_curvature(B, z, w, classes, u, Bu):
    """The inverse curvature ``B`` gains the row ``z``'s multinomial term ``(diag(p) - p p^T) (x) z z^T`` over the
    free classes (:func:`_softmax_curvature` of one row), as rank-one terms ``R[:, j] (x) z`` of the Cholesky
    factor ``R`` of the free classes' ``diag(p) - p p^T`` (K x K at most, singular when every class is free: the
    floor of :func:`_factor` lifts its last pivot to a tiny one)."""
    K, P = classes.shape[1], z.shape[0]
    M = np.dot(w.reshape((K, P)), z).reshape((K, 1)).T  # (1, K), laid out as the other callers' logits.T
    _softmax(M, classes[0])
    free = np.flatnonzero(classes[1])
    F = free.shape[0]
    C, R = np.empty((F, F)), np.zeros((F, F))
    for a in range(F):
        for b in range(F):
            C[a, b] = M[0, free[a]] * ((1.0 if a == b else 0.0) - M[0, free[b]])
    _factor(C, R)
    for j in range(F):
        u[:] = 0.0
        for a in range(F):
            for q in range(P):
                u[free[a] * P + q] = R[a, j] * z[q]
        _add_rank_one(B, u, Bu)


@njit(**INLINED)
def _gradient(Zc, yt, w, pen, g, with_loss, classes):
    """:func:`_objective` (binary: ``classes`` is None) or :func:`_softmax_objective`. The choice is made when numba
    compiles (the branch of the other type is pruned), so the binary kernels do not compile the multinomial ones."""
    if classes is None:
        return _objective(Zc, yt, w, pen, g, with_loss)
    return _softmax_objective(Zc, yt, w, pen, g, with_loss, classes)


@njit(**INLINED)
def _hessian(A, Zc, t, w, pen, classes):
    """The exact Hessian at ``w`` over the first ``t`` rows into ``A`` (binary or multinomial, as
    :func:`_gradient`); a coefficient that is held at 0 gets a unit diagonal, so ``A`` stays positive definite and
    its steps stay 0."""
    if classes is None:
        _exact_hessian(A, Zc, t, w, pen)
        return
    A[:, :] = 0.0
    _softmax_curvature(A, Zc, t, w, classes)
    P = Zc.shape[0]
    for j in range(A.shape[0]):
        A[j, j] += pen[j] if classes[1, j // P] else 1.0


@njit(**JIT_OPTIONS)
def _exact_inverse(B, A, Zc, t, w, pen, classes):
    """``B``: the inverse of the exact Hessian at ``w`` (:func:`_hessian`, into the scratch ``A``), by Cholesky,
    O(P^3) (at refreshes only)."""
    _hessian(A, Zc, t, w, pen, classes)
    P = A.shape[0]
    L = np.zeros((P, P))
    _factor(A, L)
    unit = np.zeros(P)
    for q in range(P):
        unit[q] = 1.0
        _substitute(L, unit, B[q])
        unit[q] = 0.0


@njit(**INLINED)
def _factor(A, L):
    """Cholesky ``A = L L^T`` into ``L``; a non-positive pivot is lifted to a tiny positive one."""
    P = A.shape[0]
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


@njit(**INLINED)
def _substitute(L, g, d):
    """``d = (L L^T)^{-1} g``."""
    P = g.shape[0]
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


@njit(**INLINED)
def _bfgs(B, s, yv, By):
    """The BFGS update of the inverse curvature ``B`` with the step ``s`` and the change ``yv`` of the gradient:
    ``B <- (I - s yv^T / ys) B (I - yv s^T / ys) + s s^T / ys``, ``ys = yv . s``, O(P^2); ``By``: scratch."""
    P = s.shape[0]
    _solve(B, yv, By)
    ys, yBy = np.dot(yv, s), np.dot(yv, By)
    if ys <= 1e-300:  # no curvature information (a step lost in rounding)
        return
    both = (yBy / ys + 1.0) / ys
    for a in range(P):
        for b in range(P):
            B[a, b] += both * s[a] * s[b] - (s[a] * By[b] + By[a] * s[b]) / ys


@njit(**INLINED)
def _solve(B, g, d):
    """``d = B g``."""
    for a in range(g.shape[0]):
        total = 0.0
        for b in range(g.shape[0]):
            total += B[a, b] * g[b]
        d[a] = total


@njit(**INLINED)
def _size(d, scale):
    """How far the step ``d`` moves a logit at most: ``sum_q |d_q| scale_q``."""
    total = 0.0
    for q in range(d.shape[0]):
        total += abs(d[q]) * scale[q]
    return total


@njit(**INLINED)
def _backtrack(Zc, yt, w, pen, tol, g, d, size, trial, g_trial, sink, classes):
    """Armijo backtracking on ``F`` along ``-d`` from ``w``: ``trial`` and ``g_trial`` at the accepted step."""
    slope = 0.0
    for q in range(w.shape[0]):
        slope += g[q] * d[q]
    f = _gradient(Zc, yt, w, pen, sink, np.bool_(True), classes)
    step = 1.0
    for _ in range(60):
        for q in range(w.shape[0]):
            trial[q] = w[q] - step * d[q]
        f_trial = _gradient(Zc, yt, trial, pen, g_trial, np.bool_(True), classes)
        # Armijo, or no rise beyond rounding (near the optimum F is flat to within its last digits)
        if f_trial <= f - 1e-4 * step * slope or f_trial - f <= 1e-13 * abs(f) or step * size <= tol:
            return
        step *= 0.5


@njit(**JIT_OPTIONS)
def _newton(Zc, yt, w, pen, scale, tol, B, A, g, work, classes):
    """Minimise ``F`` over the first ``len(yt)`` rows (columns of ``Zc``) from ``w`` (``g``: the gradient there;
    ``B``: the inverse curvature to start from; ``A``: scratch for exact Hessians). Updates ``w``, ``g``, ``B`` in
    place (the stopping rule of the module docstring). ``work`` (5, P): the step, the trial point, its gradient,
    the next step and a gradient sink. ``classes``: as :func:`_gradient`."""
    P = w.shape[0]
    d, trial, g_trial, following, sink = work[0], work[1], work[2], work[3], work[4]
    _solve(B, g, d)
    size, previous = _size(d, scale), 0.0  # previous: the last full step's size (0: none)
    for step_count in range(MAX_STEPS):
        if size <= tol:
            return
        if size * size <= 0.5 * tol * previous:  # contracting: the step after d is below tol / 2; take d
            for q in range(P):
                w[q] -= d[q]
                g[q] = 0.0  # g - A d, the chord model's gradient there (the next pass recomputes it)
            return
        for q in range(P):
            trial[q] = w[q] - d[q]
        _gradient(Zc, yt, trial, pen, g_trial, np.bool_(False), classes)
        _solve(B, g_trial, following)
        full = _size(following, scale) <= 0.5 * size
        if not full:  # no contraction: backtrack on F
            _backtrack(Zc, yt, w, pen, tol, g, d, size, trial, g_trial, sink, classes)
        if step_count >= 5:  # slow progress: the exact Hessian at the new iterate
            _exact_inverse(B, A, Zc, yt.shape[0], trial, pen, classes)
        else:  # the secant pair of this step sharpens the curvature (BFGS), O(P^2)
            for q in range(P):
                d[q] = trial[q] - w[q]
                sink[q] = g_trial[q] - g[q]
            _bfgs(B, d, sink, following)
        copy_into(w, trial)
        copy_into(g, g_trial)
        _solve(B, g, d)
        size, previous = _size(d, scale), (size if full else 0.0)


@njit(**INLINED)
def _cold_fit(Zc, yt, pen, scale, tol, w, g, B, A, work, classes):
    """The fit on the first ``len(yt)`` rows (columns of ``Zc``; two classes at least) from ``w = 0`` into ``w``;
    ``g``, ``B``: gradient and inverse exact Hessian at the optimum. ``classes``: as :func:`_gradient`."""
    w[:] = 0.0
    _gradient(Zc, yt, w, pen, g, np.bool_(False), classes)
    _exact_inverse(B, A, Zc, yt.shape[0], w, pen, classes)
    _newton(Zc, yt, w, pen, scale, tol, B, A, g, work, classes)
    _gradient(Zc, yt, w, pen, g, np.bool_(False), classes)
    _exact_inverse(B, A, Zc, yt.shape[0], w, pen, classes)


def logistic_fit(Z: np.ndarray, y: np.ndarray, rows: np.ndarray, pen: np.ndarray, scale: np.ndarray,
                 tol: float) -> np.ndarray:
    """Coefficients ``[b, w]`` (``w`` without an intercept) of the l2 logistic fit on ``rows`` (both classes).

    ``Z`` (n, P) holds ``[1, x]`` rows, ``pen`` (P,) the penalty of each coefficient, ``scale`` (P,) the
    largest ``|Z[:, q]|`` (the stopping rule of the module docstring). Newton from zero, exact Hessians: the steps
    of :func:`_cold_fit`, called from Python (no kernel of its own to compile: the walk compiles the ones it calls).
    """
    Zc, yt, P = np.ascontiguousarray(Z[rows].T), np.ascontiguousarray(y[rows]), Z.shape[1]
    w, g, work, B, A = np.zeros(P), np.zeros(P), np.zeros((5, P)), np.zeros((P, P)), np.zeros((P, P))
    _objective(Zc, yt, w, pen, g, False)
    _exact_inverse(B, A, Zc, len(yt), w, pen, None)
    _newton(Zc, yt, w, pen, scale, tol, B, A, g, work, None)
    return w


#: The kernels :func:`logistic_fit` (a Python function) runs: what its first call in a process compiles or loads.
FIT_KERNELS = (_objective, _exact_inverse, _newton)


@njit(**INLINED)
def _prefix_fits(Zc, yp, pen, scale, tol, coefs, skip):
    """``coefs[t]``: the fit on the first ``t + 1`` rows (columns of ``Zc``, (P, n), in permutation order),
    warm-started along the prefix from the first prefix of at least ``skip`` rows with both classes (a cold fit
    there: the shorter prefixes are not fitted); returns that first ``t`` (``n``: none), before which ``coefs`` is
    unset."""
    P, n = Zc.shape
    w, g, work = np.zeros(P), np.zeros(P), np.zeros((5, P))
    B, A = np.zeros((P, P)), np.zeros((P, P))
    first, positives, refresh = n, 0.0, 0.0
    for t in range(n):
        positives += yp[t]
        if t + 1 < skip:  # no value wanted this early: no fit either
            continue
        if first < t:  # warm start: g gains row t's term at the previous optimum
            z = np.ascontiguousarray(Zc[:, t])
            c = _sigmoid(np.dot(z, w)) - yp[t]
            for q in range(P):
                g[q] += c * z[q]
            if t + 1 >= refresh:  # the exact Hessian each time the prefix grows by REFRESH: O(P^2) a row, amortised
                _exact_inverse(B, A, Zc, t + 1, w, pen, None)
                refresh = REFRESH * (t + 1)
            else:
                _add_curvature(B, z, w, work[1], work[2])
            _newton(Zc, yp[: t + 1], w, pen, scale, tol, B, A, g, work, None)
        elif 0.0 < positives < t + 1.0:  # the first prefix with both classes: a cold fit
            _cold_fit(Zc, yp[: t + 1], pen, scale, tol, w, g, B, A, work, None)
            refresh, first = REFRESH * (t + 1), t
        copy_into(coefs[t], w)
    return first


@njit(**INLINED)
def _softmax_model(counts, one, pen_base, classes, pen):
    """The model scikit-learn fits on rows with these class ``counts``: ``classes`` (2, K) and ``pen`` (K * P) set
    in place; returns whether there is anything to fit.

    Two classes: the binary model (class ``one``'s coefficients free, the other's held at 0, so its logit is 0),
    nothing to fit when ``one`` is not among them (its probability is 0); three or more: the multinomial model,
    every present class free, and, with an intercept (``pen_base[0] == 0``), a unit penalty on the first class's
    intercept: the loss does not change when every intercept moves by the same amount, so this fixes that
    amount without moving a probability."""
    K, P = counts.shape[0], pen_base.shape[0]
    present = counts > 0
    n_present = present.sum()
    pen[:] = 0.0
    for k in range(K):
        classes[0, k] = 1.0 if present[k] and n_present >= 2 else 0.0
        classes[1, k] = 1.0 if present[k] and (n_present >= 3 or (n_present == 2 and k == one)) else 0.0
        if classes[1, k]:
            copy_into(pen[k * P:(k + 1) * P], pen_base)
    first = np.argmax(present)
    if n_present >= 3 and pen_base[0] == 0.0:
        pen[first * P] = 1.0
    return classes[1].sum() > 0


@njit(**JIT_OPTIONS)
def _softmax_prefix_fits(Zc, lp, model, pen_base, scale_base, tol):
    """As :func:`_prefix_fits` for class indices ``lp`` (``model``: ``(K, one)``, K classes, ``one`` the index of
    label 1, or -1), every prefix fitted: ``(coefs, active, fitted)``, ``coefs[t]`` (K * P) and ``active[t]`` (K)
    the coefficients and classes of prefix ``t``'s model (:func:`_softmax_model`), ``fitted[t]`` whether it has two
    classes or more. A new class refits from zero, the other rows warm-start as the binary path does. A kernel of
    its own, not inlined: the binary walk never compiles it."""
    (P, n), (K, one) = Zc.shape, model
    D = K * P
    coefs, active = np.zeros((n, D)), np.zeros((n, K))
    w, g, work, row_g = np.zeros(D), np.zeros(D), np.zeros((5, D)), np.zeros(D)
    B, A, pen, classes = np.zeros((D, D)), np.zeros((D, D)), np.zeros(D), np.zeros((2, K))
    counts, scale, none = np.zeros(K), np.zeros(D), np.zeros(D)
    for k in range(K):
        copy_into(scale[k * P:(k + 1) * P], scale_base)
    fitting, refresh = False, 0.0
    for t in range(n):
        c = int(lp[t])
        counts[c] += 1.0
        labels = lp[: t + 1]
        if counts[c] == 1.0:  # a new class: a new model, fitted from zero
            fitting = _softmax_model(counts, one, pen_base, classes, pen)
            if fitting:
                _cold_fit(Zc, labels, pen, scale, tol, w, g, B, A, work, classes)
                refresh = REFRESH * (t + 1)
        elif fitting:  # warm start, as in _prefix_fits
            _softmax_objective(np.ascontiguousarray(Zc[:, t:t + 1]), lp[t:t + 1], w, none, row_g, np.bool_(False),
                               classes)
            g += row_g
            if t + 1 >= refresh:
                _exact_inverse(B, A, Zc, t + 1, w, pen, classes)
                refresh = REFRESH * (t + 1)
            else:
                _add_softmax_curvature(B, np.ascontiguousarray(Zc[:, t]), w, classes, work[1], work[2])
            _newton(Zc, labels, w, pen, scale, tol, B, A, g, work, classes)
        copy_into(coefs[t], w)
        copy_into(active[t], classes[0])
    fitted = np.zeros(n, dtype=np.bool_)
    for t in range(n):
        fitted[t] = active[t].sum() >= 2.0
    return coefs, active, fitted


@njit(**JIT_OPTIONS)
def softmax_fit(Z: np.ndarray, labels: np.ndarray, rows: np.ndarray, n_classes: int, one: int, pen: np.ndarray,
                scale: np.ndarray, tol: float) -> tuple[np.ndarray, np.ndarray]:
    """The fit on ``rows`` of class indices ``labels`` (``n_classes`` classes; ``one`` the index of label 1, or
    -1): ``(coefficients (n_classes, P), classes in the model (n_classes,))`` as :func:`_softmax_prefix_fits`
    gives them for its last prefix, by one fit from zero."""
    P = Z.shape[1]
    D = n_classes * P
    counts = np.zeros(n_classes)
    for r in rows:
        counts[int(labels[r])] += 1.0
    w, g, work, B, A = np.zeros(D), np.zeros(D), np.zeros((5, D)), np.zeros((D, D)), np.zeros((D, D))
    classes, full_pen, full_scale = np.zeros((2, n_classes)), np.zeros(D), np.zeros(D)
    for k in range(n_classes):
        copy_into(full_scale[k * P:(k + 1) * P], scale)
    if _softmax_model(counts, one, pen, classes, full_pen):
        _cold_fit(np.ascontiguousarray(Z[rows].T), labels[rows], full_pen, full_scale, tol, w, g, B, A, work, classes)
    return w.reshape((n_classes, P)), classes[0].copy()


@njit(**INLINED)
def _probabilities(logits, active, one):
    """``logits`` (K, m) of one prefix's model -> P(class ``one``) of each explained row, in row 0, in place."""
    if one < 0 or not active[one]:
        logits[0, :] = 0.0
        return
    _softmax(logits.T, active)
    copy_into(logits[0], logits[one])


@njit(**INLINED)
def _block_values(ZEt, yE, W, coefs, active, model, fitted, empty):
    """The values (B, d) of a block of B prefixes: row ``b`` the residuals ``p_b - yE`` (their weighted sums
    ``. W`` when W has columns), or ``empty`` where ``fitted[b]`` is False, with ``p_b`` the probabilities of label
    1 of prefix ``b``'s model: ``sigmoid(coefs[b] ZEt)`` (binary: ``model`` None, and the residuals overwrite the
    logits), else as :func:`_probabilities`; one matrix product for the block."""
    B, m = coefs.shape[0], ZEt.shape[1]
    if model is None:
        residuals = np.dot(coefs, ZEt)
        for b in range(B):
            _sigmoids(residuals[b])
            for j in range(m):
                residuals[b, j] -= yE[j]
    else:
        K, one = model
        logits = np.dot(coefs.reshape((B * K, ZEt.shape[0])), ZEt)
        residuals = np.empty((B, m))
        for b in range(B):
            _probabilities(logits[b * K:(b + 1) * K], active[b], one)
            for j in range(m):
                residuals[b, j] = logits[b * K, j] - yE[j]
    if W.shape[1] > 0:
        residuals = np.dot(residuals, W)
    for b in range(B):
        if not fitted[b]:
            copy_into(residuals[b], empty)
    return residuals


@njit(**JIT_OPTIONS)
def logistic_walk(Z: np.ndarray, y: np.ndarray, ZEt: np.ndarray, yE: np.ndarray, W: np.ndarray, empty: np.ndarray,
                  perm: np.ndarray, pen: np.ndarray, scale: np.ndarray, tol: float, model: tuple[int, int] | None,
                  sink: np.ndarray, sink_row: int, share: float, mode: int, first: int) -> np.ndarray:
    """One permutation: prefix fits, values, and either ``sink[sink_row, t - first] = value`` of the prefix of
    ``t >= first`` rows (``mode 0``: the shorter prefixes are neither fitted nor valued, beyond the warm start's
    cold fit) or the scatter ``sink[0, perm[t]] += share * difference`` (``mode 1``, ``first`` 0). Returns
    v(all rows). ``ZEt`` (P, m): the explained rows as columns (transposed once by the caller: a short walk costs
    less than the transposition). ``model``: None for the binary model (``y`` in {0, 1}), ``(n_classes, one)`` for
    the multinomial one (as :func:`logistic_prefix_values`); a type, so each model compiles its own kernels only."""
    n, P = perm.shape[0], Z.shape[1]
    Zc, yp = np.ascontiguousarray(Z[perm].T), y[perm]  # the rows as columns, in permutation order
    if model is None:  # the shorter prefixes are not fitted
        coefs, active = np.zeros((n, P)), np.zeros((n, 0))
        fitted = np.arange(n) >= _prefix_fits(Zc, yp, pen, scale, tol, coefs, first)
    else:
        coefs, active, fitted = _softmax_prefix_fits(Zc, yp, model, pen, scale, tol)
    previous = empty.copy()  # the value of the prefix before the block
    if mode == 0 and first == 0:
        copy_into(sink[sink_row, 0], empty)
    for start in range(max(first - 1, 0), n, BLOCK):
        stop = min(start + BLOCK, n)
        values = _block_values(ZEt, yE, W, coefs[start:stop], active[start:stop], model, fitted[start:stop], empty)
        for t in range(start, stop):
            current = values[t - start]
            if mode == 0:
                copy_into(sink[sink_row, t + 1 - first], current)
                continue
            before = previous if t == start else values[t - start - 1]
            target = sink[0, perm[t]]
            for j in range(current.shape[0]):
                target[j] += (current[j] - before[j]) * share
        copy_into(previous, values[stop - start - 1])
    return previous


def logistic_prefix_values(Z: np.ndarray, y: np.ndarray, ZE: np.ndarray, yE: np.ndarray, W: np.ndarray,
                           empty: np.ndarray, permutations: np.ndarray, pen: np.ndarray, scale: np.ndarray,
                           tol: float, n_classes: int, one: int, first: int, out: np.ndarray) -> None:
    """Values of the prefixes of ``first`` rows and more of each permutation, ``out`` (k, n + 1 - first, d);
    ``first`` 0 for every prefix (a place stratum ``[lo, hi)`` needs ``lo`` on). One :func:`logistic_walk` per
    permutation, on as many threads as numba has (:func:`~shap_instances.utils.kernels.on_threads`: the kernel
    releases the GIL).

    ``Z`` (n, P) and ``ZE`` (m, P): training and explained rows as ``[1, x]`` (``x`` without an intercept);
    ``y`` (n,) in {0, 1} (``n_classes`` 0), or class indices of ``n_classes`` classes, ``one`` that of label 1
    (-1: none), the multinomial model; ``yE`` (m,); ``W`` (m, d) weights of an aggregate game, or (m, 0) for the
    residuals themselves (d = m); ``empty`` (d,) v(empty), also the value of a prefix with one class. Every array
    C-contiguous and writable (:func:`~shap_instances.utils.kernel_array`): one signature per kernel.
    """
    ZEt, model = np.ascontiguousarray(ZE.T), _model(n_classes, one)

    def walk(start: int, stop: int) -> None:
        for r in range(start, stop):
            logistic_walk(Z, y, ZEt, yE, W, empty, permutations[r], pen, scale, tol, model, out, r, 1.0, 0, first)

    on_threads(walk, permutations.shape[0])


def logistic_units(Z: np.ndarray, y: np.ndarray, ZE: np.ndarray, yE: np.ndarray, W: np.ndarray, empty: np.ndarray,
                   permutations: np.ndarray, pen: np.ndarray, scale: np.ndarray, tol: float, n_classes: int, one: int,
                   per_unit: int, unit: np.ndarray, mean: np.ndarray, m2: np.ndarray, count: int,
                   full: np.ndarray, threads: int) -> int:
    """Logistic prefix fits, differences, scatter and Welford update (as ``ridge_units``).

    Arguments as :func:`logistic_prefix_values` and ``accumulate_prefix_units``;
    ``full`` (d,) receives v(all rows). Returns the new count. The units are walked in parallel, as many at a
    time as ``threads`` (Python threads over :func:`logistic_walk`, which releases the GIL; the first in ``unit``,
    each other in a block of its own: ``unit.nbytes`` more memory per extra thread); their Welford updates then
    follow in unit order, so the result does not depend on the number of threads (:func:`welford_blocks`,
    parallel over rows).
    """
    n_units = permutations.shape[0] // per_unit
    ZEt, model = np.ascontiguousarray(ZE.T), _model(n_classes, one)
    width = max(1, min(threads, n_units))
    blocks = np.empty((width - 1, unit.shape[0], unit.shape[1]))
    fulls = np.empty((width, full.shape[0]))
    share = 1.0 / per_unit

    def walk_units(lo: int, hi: int, start: int) -> None:
        for b in range(lo, hi):
            block = unit if b == 0 else blocks[b - 1]
            block[:, :] = 0.0
            for r in range((start + b) * per_unit, (start + b + 1) * per_unit):
                fulls[b] = logistic_walk(Z, y, ZEt, yE, W, empty, permutations[r], pen, scale, tol, model,
                                         block[np.newaxis], 0, share, 1, 0)

    for start in range(0, n_units, width):
        stop = min(start + width, n_units)
        on_threads(partial(walk_units, start=start), stop - start, width)
        count = welford_blocks(unit, blocks, stop - start, mean, m2, count, width)
    if n_units:
        full[:] = fulls[0]
    return count


def _model(n_classes: int, one: int) -> tuple[int, int] | None:
    """:func:`logistic_walk`'s ``model``: None for the binary model (``n_classes`` 0), else ``(n_classes, one)``."""
    return None if n_classes == 0 else (int(n_classes), int(one))
