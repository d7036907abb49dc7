"""Numba kernels: the five scikit-learn naive Bayes classifiers refitted on every prefix of a permutation.

Every naive Bayes fit is a function of sufficient statistics that a new row updates in O(p): per class the row
count ``n_c`` and either the sums ``S_c = sum_{i in S, y_i = c} phi(x_i)`` of an encoding ``phi`` (discrete
types), or the running mean and sum of squared deviations of each feature (Welford; GaussianNB, which also
keeps them over both classes for ``var_smoothing``). From them, each prefix's joint log likelihood
``jll_c(x) = log P(c) + log P(x | c)`` of each explained row is recomputed exactly as scikit-learn does:

* GaussianNB: ``var_cf = M2_cf / n_c + eps``, ``eps = var_smoothing * max_f M2_f / t`` (the population
  variance of the *whole* prefix), ``jll_c = log P(c) - 1/2 sum_f log(2 pi var_cf) - 1/2 sum_f (x_f -
  mean_cf)^2 / var_cf``, with ``P(c) = n_c / t`` or the user's ``priors``.
* MultinomialNB (``phi = x``): ``A_cf = log(S_cf + alpha_f) - log(sum_f (S_cf + alpha_f))``.
* BernoulliNB (``phi`` = ``x > binarize``, or ``x``): ``F_cf = log(S_cf + alpha) - log(n_c + 2 alpha)``,
  ``N_cf = log(1 - exp(F_cf))``, ``A = F - N`` and ``sum_f N_cf`` added to the class term.
* ComplementNB (``phi = x``): ``C_cf = sum_c' S_c'f + alpha_f - S_cf``, ``L_cf = log(C_cf / sum_f C_cf)``,
  ``A = L / sum_f L_cf`` (``norm``) or ``-L``; the class term only when one class is present.
* CategoricalNB (``phi`` = one-hot of each feature's category): ``A_c(f,k) = log(S_c(f,k) + alpha) - log(n_c
  + alpha K_f)``, ``K_f = max(min_categories_f, largest category of f in the prefix + 1)``.

Discrete types: ``jll_c(x) = B_c + phi(x) . A_c`` with ``B_c`` the class log prior (``log n_c - log t`` with
``fit_prior``, ``-log(#classes)`` without, the log of ``class_prior`` when given). The predicted probability of
class 1 is ``exp(jll_1 - logsumexp(jll))``, as in ``predict_proba`` (computed as ``1 / (1 + exp(jll_0 - jll_1))``
where both are finite: one exponential, equal to rounding).

*Prefixes scikit-learn treats apart* (the residual game's refit path gives them these values, so the kernels
do too): a prefix holding class 0 only predicts P(1) = 0 (``predict_proba`` is not called); one whose fit fails
(user priors of two classes and one class present) or whose predictions are not finite (a zero Gaussian
variance; an explained row's category beyond ``K_f``, which makes CategoricalNB's ``predict_proba`` raise) gets
v(empty). Cost per prefix: O(p) for the statistics, O(2 q) for the class terms and O(2 m q) for the ``m``
explained rows (``q`` encoded columns).
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from ..utils import INLINED, JIT_OPTIONS
from ..utils.kernels import copy_into

__all__ = ["GAUSSIAN", "MULTINOMIAL", "BERNOULLI", "COMPLEMENT", "CATEGORICAL", "nb_prefix_values", "nb_fit_values"]

GAUSSIAN, MULTINOMIAL, BERNOULLI, COMPLEMENT, CATEGORICAL = range(5)
#: prior modes: the user's class priors, the empirical (fit_prior), uniform.
GIVEN, EMPIRICAL, UNIFORM = range(3)


@njit(error_model="numpy", **JIT_OPTIONS)
def _add(kind, i, c, Phi, cats, count, S, mean, m2, seen):
    """Add training row ``i`` of class ``c`` to the statistics (``mean``, ``m2`` row 2: both classes)."""
    count[c] += 1.0
    if kind == GAUSSIAN:
        total = count[0] + count[1]
        for f in range(Phi.shape[1]):
            x = Phi[i, f]
            delta = x - mean[c, f]
            mean[c, f] += delta / count[c]
            m2[c, f] += delta * (x - mean[c, f])
            delta = x - mean[2, f]
            mean[2, f] += delta / total
            m2[2, f] += delta * (x - mean[2, f])
        return
    for col in range(Phi.shape[1]):
        S[c, col] += Phi[i, col]
    if kind == CATEGORICAL:
        for f in range(cats.shape[1]):
            seen[f] = max(seen[f], cats[i, f])


@njit(error_model="numpy", **INLINED)
def _log_prior(c, count, mode, log_prior):
    """Class log prior of a present class ``c``."""
    if mode == GIVEN:
        return log_prior[c]
    if mode == EMPIRICAL:
        return np.log(count[c]) - np.log(count[0] + count[1])
    return -np.log(float((count[0] > 0) + (count[1] > 0)))


@njit(error_model="numpy", **INLINED)
def _gaussian_jll(c, count, mean, m2, PhiE, var_smoothing, class_term, work, jll):
    """``jll[:] = jll_c`` of every explained row under GaussianNB (``work``: p floats)."""
    p = PhiE.shape[1]
    total = count[0] + count[1]
    largest = 0.0
    for f in range(p):
        largest = max(largest, m2[2, f] / total)
    eps = var_smoothing * largest
    constant = class_term
    for f in range(p):
        work[f] = m2[c, f] / count[c] + eps
        constant -= 0.5 * np.log(2.0 * np.pi * work[f])
    for j in range(PhiE.shape[0]):
        quadratic = 0.0
        for f in range(p):
            diff = PhiE[j, f] - mean[c, f]
            quadratic += diff * diff / work[f]
        jll[j] = constant - 0.5 * quadratic


@njit(error_model="numpy", **INLINED)
def _discrete_terms(kind, c, count, S, alpha, norm, feature, seen, min_categories, A):
    """``A[:] = A_c`` (module docstring) and the class term besides the prior."""
    q = S.shape[1]
    extra = 0.0
    if kind == MULTINOMIAL:
        total = 0.0
        for col in range(q):
            total += S[c, col] + alpha[col]
        for col in range(q):
            A[col] = np.log(S[c, col] + alpha[col]) - np.log(total)
    elif kind == BERNOULLI:
        for col in range(q):
            log_p = np.log(S[c, col] + alpha[col]) - np.log(count[c] + 2.0 * alpha[col])
            negative = np.log(1.0 - np.exp(log_p))
            A[col] = log_p - negative
            extra += negative
    elif kind == COMPLEMENT:
        total = 0.0
        for col in range(q):
            A[col] = S[0, col] + S[1, col] + alpha[col] - S[c, col]
            total += A[col]
        summed = 0.0
        for col in range(q):
            A[col] = np.log(A[col] / total)
            summed += A[col]
        for col in range(q):
            A[col] = A[col] / summed if norm else -A[col]
    else:  # CATEGORICAL
        for col in range(q):
            f = feature[col]
            categories = max(min_categories[f], seen[f] + 1)
            A[col] = np.log(S[c, col] + alpha[col]) - np.log(count[c] + alpha[col] * categories)
    return extra


@njit(error_model="numpy", **JIT_OPTIONS)
def _class_jll(kind, c, count, S, mean, m2, seen, PhiE, params, work, jll):
    """``jll[:] = jll_c`` of every explained row for a present class ``c``."""
    alpha, log_prior, mode, var_smoothing, norm, feature, min_categories = params
    prior = _log_prior(c, count, mode, log_prior)
    if kind == GAUSSIAN:
        _gaussian_jll(c, count, mean, m2, PhiE, var_smoothing, prior, work, jll)
        return
    both = count[0] > 0 and count[1] > 0
    term = _discrete_terms(kind, c, count, S, alpha, norm, feature, seen, min_categories, work)
    if kind != COMPLEMENT or not both:
        term += prior
    for j in range(PhiE.shape[0]):
        total = term
        for col in range(PhiE.shape[1]):
            total += PhiE[j, col] * work[col]
        jll[j] = total


@njit(error_model="numpy", **INLINED)
def _probability(jll0, jll1, both):
    """``exp(jll1 - logsumexp(jll))`` over the present classes: ``1 / (1 + exp(jll0 - jll1))`` (one exponential)
    where both are finite, else the shifted log-sum-exp as scikit-learn's (NaN where it gives NaN)."""
    if both and np.isfinite(jll0) and np.isfinite(jll1):
        return 1.0 / (1.0 + np.exp(jll0 - jll1))
    top = max(jll0, jll1) if both else jll1
    if not np.isfinite(top):
        top = 0.0
    spread = np.exp(jll1 - top) + (np.exp(jll0 - top) if both else 0.0)
    return np.exp(jll1 - (np.log(spread) + top))


@njit(error_model="numpy", **JIT_OPTIONS)
def _value(kind, count, S, mean, m2, seen, PhiE, need, params, yE, W, empty, work, jll0, jll1, residual, out):
    """``out`` = the value of the current statistics' fit: residuals ``P(1) - yE`` (or ``residual @ W``)."""
    mode, min_categories = params[2], params[6]
    d = len(yE)
    if mode == GIVEN and not (count[0] > 0 and count[1] > 0):
        copy_into(out, empty)  # scikit-learn refuses priors of two classes on one: the game's failed-fit value
        return
    if count[1] == 0:
        for j in range(d):
            residual[j] = -yE[j]  # one class, 0: predicted P(1) = 0
    else:
        if kind == CATEGORICAL:
            for f in range(len(need)):
                if need[f] > max(min_categories[f], seen[f] + 1):
                    copy_into(out, empty)  # an explained row's category the fit has not seen: predict_proba raises
                    return
        _class_jll(kind, np.int64(1), count, S, mean, m2, seen, PhiE, params, work, jll1)  # np.int64: one signature
        if count[0] > 0:
            _class_jll(kind, np.int64(0), count, S, mean, m2, seen, PhiE, params, work, jll0)
        for j in range(d):
            probability = _probability(jll0[j], jll1[j], count[0] > 0)
            if not np.isfinite(probability):
                copy_into(out, empty)  # non-finite predictions: the game's failed-fit value
                return
            residual[j] = probability - yE[j]
    if W.shape[1] == 0:
        copy_into(out, residual)
        return
    for k in range(W.shape[1]):
        total = 0.0
        for j in range(d):
            total += residual[j] * W[j, k]
        out[k] = total


@njit(error_model="numpy", **JIT_OPTIONS)
def _state(kind, Phi, PhiE):
    """Zeroed statistics and work arrays: count, S, mean, m2, seen, work, jll0, jll1, residual."""
    q, d = Phi.shape[1], PhiE.shape[0]
    rows = 0 if kind == GAUSSIAN else 2
    moments = 3 if kind == GAUSSIAN else 0
    return (np.zeros(2), np.zeros((rows, q)), np.zeros((moments, q)), np.zeros((moments, q)),
            np.zeros(max(q, 1), dtype=np.int64), np.zeros(q), np.zeros(d), np.zeros(d), np.zeros(d))


@njit(parallel=True, error_model="numpy", **JIT_OPTIONS)
def nb_prefix_values(kind: int, Phi: np.ndarray, labels: np.ndarray, cats: np.ndarray, PhiE: np.ndarray,
                     need: np.ndarray, params: tuple, yE: np.ndarray, W: np.ndarray, empty: np.ndarray,
                     permutations: np.ndarray, out: np.ndarray) -> None:
    """Values of every prefix of each permutation (threads over the permutations, each independent).

    Parameters
    ----------
    kind : int
        ``GAUSSIAN``, ``MULTINOMIAL``, ``BERNOULLI``, ``COMPLEMENT`` or ``CATEGORICAL``.
    Phi : float64 (n, q)
        Encoded training rows (``X`` for GaussianNB).
    labels : int64 (n,)
        Their classes, 0 or 1.
    cats : int64 (n, p)
        CategoricalNB: the training rows' categories (else any array of that type).
    PhiE : float64 (m, q)
        Encoded explained rows.
    need : int64 (p,)
        CategoricalNB: one more than each feature's largest category among the explained rows.
    params : tuple
        ``(alpha (q,), log_prior (2,), prior mode, var_smoothing, norm, feature (q,), min_categories (p,))``.
    yE, empty : float64 (m,), (d,)
        Explained rows' 0/1 targets and v(empty).
    W : float64 (m, K) or (m, 0)
        Weights of an aggregate game (d = K), or no column (d = m).
    permutations : intp (k, n)
    out : float64 (k, n + 1, d)
        Filled with the prefix values, ``out[r, 0] = empty``.
    """
    for r in prange(permutations.shape[0]):
        count, S, mean, m2, seen, work, jll0, jll1, residual = _state(kind, Phi, PhiE)
        copy_into(out[r, 0], empty)
        for t in range(permutations.shape[1]):
            i = permutations[r, t]
            _add(kind, i, labels[i], Phi, cats, count, S, mean, m2, seen)
            _value(kind, count, S, mean, m2, seen, PhiE, need, params, yE, W, empty, work, jll0, jll1, residual,
                   out[r, t + 1])


@njit(error_model="numpy", **JIT_OPTIONS)
def nb_fit_values(kind: int, Phi: np.ndarray, labels: np.ndarray, cats: np.ndarray, PhiE: np.ndarray,
                  need: np.ndarray, params: tuple, yE: np.ndarray, W: np.ndarray, empty: np.ndarray,
                  rows: np.ndarray, out: np.ndarray) -> None:
    """The value of the fit on ``rows`` (intp, non-empty) into ``out`` (d,); arguments as
    :func:`nb_prefix_values`."""
    count, S, mean, m2, seen, work, jll0, jll1, residual = _state(kind, Phi, PhiE)
    for i in rows:
        _add(kind, i, labels[i], Phi, cats, count, S, mean, m2, seen)
    _value(kind, count, S, mean, m2, seen, PhiE, need, params, yE, W, empty, work, jll0, jll1, residual, out)
