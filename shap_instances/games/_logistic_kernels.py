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
last refresh (each time the prefix grows by 2%, :data:`REFRESH`: amortised O(P^2) a row, one matrix product),
plus the rank-one term ``s_r (1 - s_r) z_r z_r^T`` of each row added since, sharpened within a prefix by the
BFGS update of each step's secant pair ``(w' - w, g(w') - g(w))``, and reset to the exact Hessian when a prefix
needs more than five steps. The iteration is ``w <- w - step A^{-1} g`` (``A`` positive definite: a descent
direction; one Cholesky factorisation per step, reused for the step after it). The full step (``step = 1``) is
kept when the step after it is at most half as long, which one O(t P) pass for ``g`` alone (no logarithm)
tells; otherwise Armijo backtracking on ``F_t`` chooses the step, so ``F_t`` decreases. The prefix's rows are
copied once per permutation into a contiguous block in permutation order, so each pass is two matrix-vector
products (BLAS) around the sigmoids.

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
probabilities are within about ``tol / 4`` of the exact refit's. ``tol = 1e-10`` by default: finer than
scikit-learn's own refits at their default ``tol = 1e-4``.

*Values.* The coefficients of every prefix are kept (n x P); the explained rows' logits come from one matrix
product per block of :data:`BLOCK` prefixes (``coefs[block] @ ZE^T``, BLAS), then their sigmoids, the
differences and the scatter.

Cost per prefix: two to six O(t P) passes of ``g`` (3.3 on average at 2,000 x 20 with ``tol = 1e-10``), a few
``P x P`` Cholesky factorisations, and the values of the explained rows, O(m P): O(n^2 p + n m p) per
permutation, against a full iterative refit per prefix for scikit-learn.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from ..utils import JIT_OPTIONS
from ._prefix_kernels import welford_update

__all__ = ["logistic_fit", "logistic_prefix_values", "logistic_units", "logistic_walk", "softmax_fit"]

#: Iterations of one fit before it gives up (never reached in the tests: a warm start needs two or three).
MAX_STEPS = 200
#: Prefixes whose explained-row logits one matrix product (BLAS) computes.
BLOCK = 64
#: The exact Hessian is recomputed each time the prefix has grown by this factor since the last time.
REFRESH = 1.02
#: The ``classes`` argument of the binary model (no class columns): the sigmoid kernels.
BINARY = np.zeros((2, 0))
#: ``1 / j!`` for j = 12, ..., 0: the Taylor coefficients of ``exp`` after the leading ``1 / 13!`` (:func:`_sigmoids`).
_TAYLOR = (1.0 / 479001600.0, 1.0 / 39916800.0, 1.0 / 3628800.0, 1.0 / 362880.0, 1.0 / 40320.0, 1.0 / 5040.0,
           1.0 / 720.0, 1.0 / 120.0, 1.0 / 24.0, 1.0 / 6.0, 0.5, 1.0, 1.0)


@njit(**JIT_OPTIONS)
def _loss_and_sigmoid(m, y):
    """``log(1 + exp(m)) - y m`` and ``sigmoid(m)``, without overflow."""
    return np.log1p(np.exp(-abs(m))) + max(m, 0.0) - y * m, _sigmoid(m)


@njit(**JIT_OPTIONS)
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


@njit(**JIT_OPTIONS)
def _objective(Zt, yt, w, pen, g, with_loss):
    """The gradient of ``F`` over the rows ``Zt`` (t, P), targets ``yt``, at ``w`` into ``g``; returns ``F``
    there when ``with_loss`` (else 0: the logarithms are skipped). Two matrix-vector products (BLAS)."""
    m = np.dot(Zt, w)
    total = 0.0
    if not with_loss:
        _sigmoids(m)
    for i in range(m.shape[0]):
        if with_loss:
            loss, s = _loss_and_sigmoid(m[i], yt[i])
            total += loss
            m[i] = s
        m[i] -= yt[i]
    g[:] = np.dot(m, Zt)
    for q in range(w.shape[0]):
        g[q] += pen[q] * w[q]
        total += 0.5 * pen[q] * w[q] * w[q]
    return total if with_loss else 0.0


@njit(**JIT_OPTIONS)
def _add_curvature(A, z, w):
    """``A += s (1 - s) z z^T`` at ``w``."""
    s = _sigmoid(np.dot(z, w))
    h = s * (1.0 - s)
    for a in range(w.shape[0]):
        za = h * z[a]
        for b in range(w.shape[0]):
            A[a, b] += za * z[b]


@njit(**JIT_OPTIONS)
def _exact_hessian(A, Zt, w, pen):
    """``A = Zt^T diag(s (1 - s)) Zt + diag(pen)`` at ``w`` (one matrix product)."""
    s = np.dot(Zt, w)
    _sigmoids(s)
    for i in range(s.shape[0]):
        s[i] *= 1.0 - s[i]
    A[:, :] = np.dot((Zt * s.reshape((-1, 1))).T, Zt)
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
def _softmax_objective(Zt, yt, w, pen, g, with_loss, classes):
    """As :func:`_objective` for the multinomial model: ``w`` holds one coefficient row ``[b_k, w_k]`` per class
    (K * P), ``yt`` class indices, ``classes`` (2, K) which classes are in the model (row 0) and which have free
    coefficients (row 1; the others stay 0)."""
    K, P = classes.shape[1], Zt.shape[1]
    M = np.dot(Zt, w.reshape((K, P)).T)
    total = 0.0
    picked = np.empty(M.shape[0])
    for i in range(M.shape[0]):
        picked[i] = M[i, int(yt[i])]
    norm = _softmax(M, classes[0])
    for i in range(M.shape[0]):
        total += norm[i] - picked[i]
        M[i, int(yt[i])] -= 1.0
    G = np.dot(M.T, Zt)
    for k in range(K):
        for q in range(P):
            j = k * P + q
            g[j] = (G[k, q] if classes[1, k] else 0.0) + pen[j] * w[j]
            total += 0.5 * pen[j] * w[j] * w[j]
    return total if with_loss else 0.0


@njit(**JIT_OPTIONS)
def _softmax_curvature(A, Zt, w, classes):
    """``A +=`` the multinomial loss's Hessian over the rows ``Zt`` at ``w``, free classes only: block ``(k, l)``
    is ``Zt^T diag(p_k (delta_kl - p_l)) Zt`` (one matrix product per block)."""
    K, P = classes.shape[1], Zt.shape[1]
    M = np.dot(Zt, w.reshape((K, P)).T)
    _softmax(M, classes[0])
    for k in range(K):
        for l in range(k, K):
            if not (classes[1, k] and classes[1, l]):
                continue
            weight = M[:, k] * ((1.0 if k == l else 0.0) - M[:, l])
            block = np.dot((Zt * weight.reshape((-1, 1))).T, Zt)
            A[k * P:(k + 1) * P, l * P:(l + 1) * P] += block
            if l != k:
                A[l * P:(l + 1) * P, k * P:(k + 1) * P] += block.T


@njit(**JIT_OPTIONS)
def _gradient(Zt, yt, w, pen, g, with_loss, classes):
    """:func:`_objective` (binary: ``classes`` has no column) or :func:`_softmax_objective`."""
    if classes.shape[1] == 0:
        return _objective(Zt, yt, w, pen, g, with_loss)
    return _softmax_objective(Zt, yt, w, pen, g, with_loss, classes)


@njit(**JIT_OPTIONS)
def _hessian(A, Zt, w, pen, classes):
    """The exact Hessian at ``w`` into ``A`` (binary or multinomial, as :func:`_gradient`); a coefficient that is
    held at 0 gets a unit diagonal, so ``A`` stays positive definite and its steps stay 0."""
    if classes.shape[1] == 0:
        _exact_hessian(A, Zt, w, pen)
        return
    A[:, :] = 0.0
    _softmax_curvature(A, Zt, w, classes)
    P = Zt.shape[1]
    for j in range(A.shape[0]):
        A[j, j] += pen[j] if classes[1, j // P] else 1.0


@njit(**JIT_OPTIONS)
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


@njit(**JIT_OPTIONS)
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
def _backtrack(Zt, yt, w, pen, tol, g, d, size, trial, g_trial, sink, classes):
    """Armijo backtracking on ``F`` along ``-d`` from ``w``: ``trial`` and ``g_trial`` at the accepted step."""
    slope = 0.0
    for q in range(w.shape[0]):
        slope += g[q] * d[q]
    f = _gradient(Zt, yt, w, pen, sink, True, classes)
    step = 1.0
    for _ in range(60):
        for q in range(w.shape[0]):
            trial[q] = w[q] - step * d[q]
        f_trial = _gradient(Zt, yt, trial, pen, g_trial, True, classes)
        # Armijo, or no rise beyond rounding (near the optimum F is flat to within its last digits)
        if f_trial <= f - 1e-4 * step * slope or f_trial - f <= 1e-13 * abs(f) or step * size <= tol:
            return
        step *= 0.5


@njit(**JIT_OPTIONS)
def _newton(Zt, yt, w, pen, scale, tol, A, L, g, work, classes):
    """Minimise ``F`` over the rows ``Zt`` from ``w`` (``g``: the gradient there; ``A``: the curvature to start
    from). Updates ``w``, ``g``, ``A`` in place (the stopping rule of the module docstring). ``work`` (5, P): the
    step, the trial point, its gradient, the next step and a gradient sink. ``classes``: as :func:`_gradient`."""
    P = w.shape[0]
    d, trial, g_trial, following, sink = work[0], work[1], work[2], work[3], work[4]
    _factor(A, L)
    _substitute(L, g, d)
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
        _gradient(Zt, yt, trial, pen, g_trial, False, classes)
        _substitute(L, g_trial, following)
        full = _size(following, scale) <= 0.5 * size
        if not full:  # no contraction: backtrack on F
            _backtrack(Zt, yt, w, pen, tol, g, d, size, trial, g_trial, sink, classes)
        if step_count >= 5:  # slow progress: the exact Hessian at the new iterate
            _hessian(A, Zt, trial, pen, classes)
        else:  # the secant pair of this step sharpens the curvature (BFGS), O(P^2)
            for q in range(P):
                d[q] = trial[q] - w[q]
                sink[q] = g_trial[q] - g[q]
            _bfgs(A, d, sink, following)
        w[:] = trial
        g[:] = g_trial
        _factor(A, L)
        _substitute(L, g, d)
        size, previous = _size(d, scale), (size if full else 0.0)


@njit(**JIT_OPTIONS)
def _cold_fit(Zt, yt, pen, scale, tol, w, g, A, L, work, classes):
    """The fit on the rows ``Zt`` (two classes at least) from ``w = 0`` into ``w``; ``g``, ``A``: gradient and
    exact Hessian at the optimum. ``classes``: as :func:`_gradient`."""
    w[:] = 0.0
    _gradient(Zt, yt, w, pen, g, False, classes)
    _hessian(A, Zt, w, pen, classes)
    _newton(Zt, yt, w, pen, scale, tol, A, L, g, work, classes)
    _gradient(Zt, yt, w, pen, g, False, classes)
    _hessian(A, Zt, w, pen, classes)


@njit(**JIT_OPTIONS)
def logistic_fit(Z: np.ndarray, y: np.ndarray, rows: np.ndarray, pen: np.ndarray, scale: np.ndarray,
                 tol: float) -> np.ndarray:
    """Coefficients ``[b, w]`` (``w`` without an intercept) of the l2 logistic fit on ``rows`` (both classes).

    ``Z`` (n, P) holds ``[1, x]`` rows, ``pen`` (P,) the penalty of each coefficient, ``scale`` (P,) the
    largest ``|Z[:, q]|`` (the stopping rule of the module docstring). Newton from zero, exact Hessians.
    """
    P = Z.shape[1]
    w, g, work = np.zeros(P), np.zeros(P), np.zeros((5, P))
    A, L = np.zeros((P, P)), np.zeros((P, P))
    _cold_fit(Z[rows], y[rows], pen, scale, tol, w, g, A, L, work, BINARY)
    return w


@njit(**JIT_OPTIONS)
def _prefix_fits(Zp, yp, pen, scale, tol, coefs):
    """``coefs[t]``: the fit on the first ``t + 1`` rows of ``Zp`` (rows in permutation order), warm-started
    along the prefix; returns the first ``t`` with both classes (``n``: none), before which ``coefs`` is unset."""
    n, P = Zp.shape
    w, g, work = np.zeros(P), np.zeros(P), np.zeros((5, P))
    A, L = np.zeros((P, P)), np.zeros((P, P))
    first, positives, refresh = n, 0.0, 0.0
    for t in range(n):
        positives += yp[t]
        if first < t:  # warm start: g gains row t's term at the previous optimum
            z = Zp[t]
            c = _sigmoid(np.dot(z, w)) - yp[t]
            for q in range(P):
                g[q] += c * z[q]
            if t + 1 >= refresh:  # the exact Hessian each time the prefix grows by 2%: O(P^2) a row, amortised
                _exact_hessian(A, Zp[: t + 1], w, pen)
                refresh = REFRESH * (t + 1)
            else:
                _add_curvature(A, z, w)
            _newton(Zp[: t + 1], yp[: t + 1], w, pen, scale, tol, A, L, g, work, BINARY)
        elif 0.0 < positives < t + 1.0:  # the first prefix with both classes: a cold fit
            _cold_fit(Zp[: t + 1], yp[: t + 1], pen, scale, tol, w, g, A, L, work, BINARY)
            refresh, first = REFRESH * (t + 1), t
        coefs[t] = w
    return first


@njit(**JIT_OPTIONS)
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
            pen[k * P:(k + 1) * P] = pen_base
    first = np.argmax(present)
    if n_present >= 3 and pen_base[0] == 0.0:
        pen[first * P] = 1.0
    return classes[1].sum() > 0


@njit(**JIT_OPTIONS)
def _softmax_prefix_fits(Zp, lp, one, pen_base, scale_base, tol, coefs, active):
    """As :func:`_prefix_fits` for class indices ``lp`` (K classes, ``one``: the index of label 1, or -1):
    ``coefs[t]`` (K * P) and ``active[t]`` (K) the classes of prefix ``t``'s model (:func:`_softmax_model`);
    a new class refits from zero, the other rows warm-start as the binary path does."""
    n, P = Zp.shape
    K = active.shape[1]
    D = K * P
    w, g, work, row_g = np.zeros(D), np.zeros(D), np.zeros((5, D)), np.zeros(D)
    A, L, pen, classes = np.zeros((D, D)), np.zeros((D, D)), np.zeros(D), np.zeros((2, K))
    counts, scale, none = np.zeros(K), np.zeros(D), np.zeros(D)
    for k in range(K):
        scale[k * P:(k + 1) * P] = scale_base
    fitting, refresh = False, 0.0
    for t in range(n):
        c = int(lp[t])
        counts[c] += 1.0
        rows, labels = Zp[: t + 1], lp[: t + 1]
        if counts[c] == 1.0:  # a new class: a new model, fitted from zero
            fitting = _softmax_model(counts, one, pen_base, classes, pen)
            if fitting:
                _cold_fit(rows, labels, pen, scale, tol, w, g, A, L, work, classes)
                refresh = REFRESH * (t + 1)
        elif fitting:  # warm start, as in _prefix_fits
            _softmax_objective(Zp[t:t + 1], lp[t:t + 1], w, none, row_g, False, classes)
            g += row_g
            if t + 1 >= refresh:
                _hessian(A, rows, w, pen, classes)
                refresh = REFRESH * (t + 1)
            else:
                _softmax_curvature(A, Zp[t:t + 1], w, classes)
            _newton(rows, labels, w, pen, scale, tol, A, L, g, work, classes)
        coefs[t] = w
        active[t] = classes[0]


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
    w, g, work, A, L = np.zeros(D), np.zeros(D), np.zeros((5, D)), np.zeros((D, D)), np.zeros((D, D))
    classes, full_pen, full_scale = np.zeros((2, n_classes)), np.zeros(D), np.zeros(D)
    for k in range(n_classes):
        full_scale[k * P:(k + 1) * P] = scale
    if _softmax_model(counts, one, pen, classes, full_pen):
        _cold_fit(Z[rows], labels[rows], full_pen, full_scale, tol, w, g, A, L, work, classes)
    return w.reshape((n_classes, P)), classes[0].copy()


@njit(**JIT_OPTIONS)
def _probabilities(logits, active, one):
    """``logits`` (K, m) of one prefix's model -> P(class ``one``) of each explained row, in row 0, in place."""
    if one < 0 or not active[one]:
        logits[0, :] = 0.0
        return
    _softmax(logits.T, active)
    logits[0, :] = logits[one, :]


@njit(**JIT_OPTIONS)
def _block_values(ZEt, yE, W, coefs, active, one, fitted, empty, values):
    """``values[b]``: residuals ``p_b - yE`` (their weighted sums ``. W`` when W has columns), or ``empty`` where
    ``fitted[b]`` is False, with ``p_b`` the probabilities of label 1 of prefix ``b``'s model: ``sigmoid(coefs[b]
    ZEt)`` (binary: ``active`` has no column), else as :func:`_probabilities`; one matrix product for the block."""
    B, K = coefs.shape[0], active.shape[1]
    logits = np.dot(coefs.reshape((B * max(K, 1), ZEt.shape[0])), ZEt)
    residuals = np.empty((B, ZEt.shape[1]))
    for b in range(B):
        if K > 0:
            _probabilities(logits[b * K:(b + 1) * K], active[b], one)
            residuals[b] = logits[b * K] - yE
        else:
            _sigmoids(logits[b])
            for j in range(ZEt.shape[1]):
                residuals[b, j] = logits[b, j] - yE[j]
    if W.shape[1] > 0:
        residuals = np.dot(residuals, W)
    for b in range(B):
        values[b] = residuals[b] if fitted[b] else empty


@njit(**JIT_OPTIONS)
def _fits(Z, y, perm, pen, scale, tol, n_classes, one):
    """Every prefix's coefficients (n, max(K, 1) * P), classes (n, K) and whether it has a model (n,)."""
    n, P = perm.shape[0], Z.shape[1]
    coefs = np.zeros((n, max(n_classes, 1) * P))
    active = np.zeros((n, n_classes))
    if n_classes == 0:
        fitted = np.arange(n) >= _prefix_fits(Z[perm], y[perm], pen, scale, tol, coefs)
    else:
        _softmax_prefix_fits(Z[perm], y[perm], one, pen, scale, tol, coefs, active)
        fitted = active.sum(axis=1) >= 2.0
    return coefs, active, fitted


@njit(**JIT_OPTIONS)
def logistic_walk(Z: np.ndarray, y: np.ndarray, ZE: np.ndarray, yE: np.ndarray, W: np.ndarray, empty: np.ndarray,
                  perm: np.ndarray, pen: np.ndarray, scale: np.ndarray, tol: float, n_classes: int, one: int,
                  sink: np.ndarray, sink_row: int, share: float, mode: int) -> np.ndarray:
    """One permutation: prefix fits, values, and either ``sink[sink_row, t] = value`` (``mode 0``) or the
    scatter ``sink[0, perm[t]] += share * difference`` (``mode 1``). Returns v(all rows)."""
    coefs, active, fitted = _fits(Z, y, perm, pen, scale, tol, n_classes, one)
    n = perm.shape[0]
    ZEt = np.ascontiguousarray(ZE.T)
    values = np.empty((BLOCK, empty.shape[0]))
    previous = empty.copy()
    if mode == 0:
        sink[sink_row, 0, :] = empty
    for start in range(0, n, BLOCK):
        stop = min(start + BLOCK, n)
        _block_values(ZEt, yE, W, coefs[start:stop], active[start:stop], one, fitted[start:stop], empty, values)
        for t in range(start, stop):
            current = values[t - start]
            if mode == 0:
                sink[sink_row, t + 1, :] = current
            else:
                target = sink[0, perm[t]]
                for j in range(current.shape[0]):
                    target[j] += (current[j] - previous[j]) * share
            previous[:] = current
    return previous


@njit(parallel=True, **JIT_OPTIONS)
def logistic_prefix_values(Z: np.ndarray, y: np.ndarray, ZE: np.ndarray, yE: np.ndarray, W: np.ndarray,
                           empty: np.ndarray, permutations: np.ndarray, pen: np.ndarray, scale: np.ndarray,
                           tol: float, n_classes: int, one: int, out: np.ndarray) -> None:
    """Values of every prefix of each permutation (threads over the permutations), ``out`` (k, n + 1, d).

    ``Z`` (n, P) and ``ZE`` (m, P): training and explained rows as ``[1, x]`` (``x`` without an intercept);
    ``y`` (n,) in {0, 1} (``n_classes`` 0), or class indices of ``n_classes`` classes, ``one`` that of label 1
    (-1: none), the multinomial model; ``yE`` (m,); ``W`` (m, d) weights of an aggregate game, or (m, 0) for the
    residuals themselves (d = m); ``empty`` (d,) v(empty), also the value of a prefix with one class.
    """
    for r in prange(permutations.shape[0]):
        logistic_walk(Z, y, ZE, yE, W, empty, permutations[r], pen, scale, tol, n_classes, one, out, r, 1.0, 0)


@njit(parallel=True, **JIT_OPTIONS)
def logistic_units(Z: np.ndarray, y: np.ndarray, ZE: np.ndarray, yE: np.ndarray, W: np.ndarray, empty: np.ndarray,
                   permutations: np.ndarray, pen: np.ndarray, scale: np.ndarray, tol: float, n_classes: int, one: int,
                   per_unit: int, unit: np.ndarray, mean: np.ndarray, m2: np.ndarray, count: int,
                   full: np.ndarray, threads: int) -> int:
    """Logistic prefix fits, differences, scatter and Welford update, fused (as ``ridge_units``).

    Arguments as :func:`logistic_prefix_values` and ``accumulate_prefix_units``;
    ``full`` (d,) receives v(all rows). Returns the new count. The units are walked in parallel, as many at a
    time as ``threads`` (the first in ``unit``, each other in a block of its own: ``unit.nbytes`` more memory
    per extra thread); their Welford updates then follow in unit order, so the result does not depend on the
    number of threads.
    """
    n_units = permutations.shape[0] // per_unit
    width = max(1, min(threads, n_units))
    blocks = np.empty((width - 1, unit.shape[0], unit.shape[1]))
    fulls = np.empty((width, full.shape[0]))
    share = 1.0 / per_unit
    for start in range(0, n_units, width):
        stop = min(start + width, n_units)
        for b in prange(stop - start):
            block = unit if b == 0 else blocks[b - 1]
            block[:, :] = 0.0
            for r in range((start + b) * per_unit, (start + b + 1) * per_unit):
                fulls[b] = logistic_walk(Z, y, ZE, yE, W, empty, permutations[r], pen, scale, tol, n_classes, one,
                                         block.reshape((1, block.shape[0], block.shape[1])), 0, share,
                                         1)
        for b in range(stop - start):
            count = welford_update(unit if b == 0 else blocks[b - 1], mean, m2, count)
    if n_units:
        full[:] = fulls[0]
    return count
