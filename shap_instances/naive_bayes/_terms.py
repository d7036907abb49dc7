"""Per-feature log-likelihood terms of scikit-learn's naive Bayes models.

Every naive Bayes model scores class c as ``jll_c(x) = prior_c + sum_m L_m(x_m, c)``. Each adapter gives the
constant ``class_terms`` (k,), an evaluator of the terms ``w_m ((L @ A)_m - s_m)`` (n, p, D) of a batch of
rows for an output contraction ``A`` (k, D), shifts ``s`` (p, D) and weights ``w`` (p,), all folded into the
coefficients first (so two-class log-odds cost one pass over the data, written in place), and the expectation
of ``L`` under the training marginal of each feature (p, k). Everything else (Shapley values, base values,
output choices, column orders) is written once, in ``naive_bayes.py``.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any, Self

import numpy as np
from sklearn.naive_bayes import BernoulliNB, CategoricalNB, ComplementNB, GaussianNB, MultinomialNB

from ..exceptions import DataValidationError

__all__ = ["contract", "terms_for", "NB_TYPES", "SPARSE_NB_TYPES"]

NB_TYPES = (GaussianNB, BernoulliNB, MultinomialNB, ComplementNB, CategoricalNB)
#: Models whose terms are linear in x: they take scipy.sparse input (densified a chunk of rows at a time).
SPARSE_NB_TYPES = (BernoulliNB, MultinomialNB, ComplementNB)


def contract(coefficients: Any, A: np.ndarray) -> Any:
    """``coefficients @ A`` over the class axis (last of ``coefficients``, first of ``A``).

    When every column of ``A`` sums to zero (log-odds, centred log-probabilities, log-ratios to a class), the
    first class's coefficients are subtracted first, which changes nothing mathematically but makes the result
    exactly zero where the coefficients do not depend on the class (a feature constant in training: a null
    player gets exactly 0, not rounding of a large common term).
    """
    if np.allclose(A.sum(axis=0), 0.0, rtol=0.0, atol=1e-12):
        coefficients = coefficients - coefficients[..., :1]
    return coefficients @ A


def _fold(coefficients: Any, shift: Any = None, scale: Any = None) -> Any:
    """``scale * (coefficients - shift)`` row by row (one row per feature)."""
    if shift is not None:
        coefficients = coefficients - shift
    if scale is not None:
        coefficients = coefficients * np.reshape(scale, (-1,) + (1,) * (coefficients.ndim - 1))
    return coefficients


def _squeezed(out: Any, *coefficients: Any) -> tuple[Any, Any, bool]:
    """One output (D = 1): the (n, p) view of ``out`` and the coefficient vectors, so that every ufunc loops
    over whole rows instead of a trailing axis of length 1."""
    if out.shape[2] == 1:
        return out[:, :, 0], [c[:, 0] for c in coefficients], False
    return out, coefficients, True


class _Adapter:
    # what every naive Bayes family implements (declared for the type checker)
    class_terms: np.ndarray  # (k,) the log prior of each class (zeros where the prior does not apply)
    _permute: Callable[[np.ndarray], None]
    evaluator: Callable[..., Callable[[np.ndarray, np.ndarray], np.ndarray]]
    training_expectation: Callable[[], np.ndarray]

    def permuted(self, order: np.ndarray) -> Self:
        """The same model with its features in ``order`` (feature j of the result is feature order[j])."""
        other = copy.copy(self)
        other._permute(np.asarray(order))
        return other

    def terms(self, X: Any, A: np.ndarray) -> np.ndarray:
        """``L @ A`` (n, p, D) of the rows of ``X``."""
        return self.evaluator(A)(X, np.empty((X.shape[0], X.shape[1], A.shape[1])))


class _Gaussian(_Adapter):
    def __init__(self, model: Any) -> None:
        self.theta, self.var = model.theta_, model.var_  # (k, p)
        self.centre = self.theta[0].copy()  # (p,): the quadratic is expanded around the first class's means
        self.class_terms = np.log(model.class_prior_)
        self.counts = model.class_count_

    def _permute(self, order: np.ndarray) -> None:
        self.theta, self.var, self.centre = self.theta[:, order], self.var[:, order], self.centre[order]

    def evaluator(self, A: np.ndarray, shift: np.ndarray | None = None,
                  scale: np.ndarray | None = None) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
        # L = -log(2 pi var)/2 - (u - d)^2 / (2 var), a quadratic in u = x - centre with d = theta - centre:
        # contract its coefficients with A. Expanded around a class mean, not around 0, the coefficients stay on
        # the scale of the class differences: theta^2 / var (1e10 for a mean of 6 over a smoothed variance of
        # 3e-9) would cancel to leave errors of 1e-6.
        inverse = 1.0 / self.var.T
        offset = self.theta.T - self.centre[:, None]
        constant = _fold(contract(-0.5 * np.log(2 * np.pi * self.var.T) - 0.5 * offset**2 * inverse, A), shift, scale)
        linear = _fold(contract(offset * inverse, A), None, scale)
        quadratic = _fold(contract(-0.5 * inverse, A), None, scale)
        centre = self.centre

        def evaluate(X: Any, out: Any) -> np.ndarray:
            o, (c, l, q), wide = _squeezed(out, constant, linear, quadratic)
            u = X - centre
            x = u[:, :, None] if wide else u
            np.multiply(x, q, out=o)  # ((x q + l) x + c), in place
            o += l
            o *= x
            o += c
            return out

        return evaluate

    def training_expectation(self) -> np.ndarray:
        # X_m ~ sum_k pi_k N(theta_km, var_km): E[(X_m - theta_cm)^2] = sum_k pi_k (var_km + (theta_km - theta_cm)^2)
        pi = self.counts / self.counts.sum()
        second = np.einsum("k,kpc->pc", pi, self.var[:, :, None] + (self.theta[:, :, None] - self.theta.T[None]) ** 2)
        return -0.5 * np.log(2 * np.pi * self.var.T) - 0.5 * second / self.var.T


class _Linear(_Adapter):
    """Bernoulli, multinomial and complement NB: L_m(x, c) = x * slope_cm + intercept_cm."""

    def __init__(self, model: Any) -> None:
        self.binarize = getattr(model, "binarize", None) if isinstance(model, BernoulliNB) else None
        log_p = model.feature_log_prob_  # (k, p)
        if isinstance(model, BernoulliNB):
            log_q = np.log1p(-np.exp(log_p))
            self.slope, self.intercept = (log_p - log_q).T, log_q.T
        else:
            self.slope, self.intercept = log_p.T, np.zeros_like(log_p.T)
        prior_applies = not isinstance(model, ComplementNB) or len(model.classes_) == 1
        self.class_terms = model.class_log_prior_ if prior_applies else np.zeros(len(model.classes_))
        self.mean_x = model.feature_count_.sum(axis=0) / model.class_count_.sum()  # training mean of each x_m
        self.nonnegative = not isinstance(model, BernoulliNB)

    def _permute(self, order: np.ndarray) -> None:
        self.slope, self.intercept, self.mean_x = self.slope[order], self.intercept[order], self.mean_x[order]

    def prepare(self, X: Any) -> np.ndarray:
        if self.binarize is not None:
            return (X > self.binarize).astype(np.float64)
        if self.nonnegative and np.any(X < 0):
            raise DataValidationError("Multinomial and complement naive Bayes take non-negative counts; X has "
                                      "negative values.")
        return X

    def evaluator(self, A: np.ndarray, shift: np.ndarray | None = None,
                  scale: np.ndarray | None = None) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
        slope, intercept = _fold(contract(self.slope, A), None, scale), _fold(contract(self.intercept, A), shift, scale)

        def evaluate(X: Any, out: Any) -> np.ndarray:
            X = self.prepare(X)
            o, (s, i), wide = _squeezed(out, slope, intercept)
            np.multiply(X[:, :, None] if wide else X, s, out=o)
            o += i
            return out

        return evaluate

    def training_expectation(self) -> np.ndarray:
        return self.mean_x[:, None] * self.slope + self.intercept


class _Categorical(_Adapter):
    def __init__(self, model: Any) -> None:
        self.tables = list(model.feature_log_prob_)  # over features: (k, n_categories)
        self.class_terms = model.class_log_prior_
        self.counts = list(model.category_count_)

    def _permute(self, order: np.ndarray) -> None:
        self.tables, self.counts = [self.tables[m] for m in order], [self.counts[m] for m in order]

    def prepare(self, X: Any) -> np.ndarray:
        with np.errstate(invalid="ignore"):
            codes = X.astype(np.int64)
        if not np.array_equal(codes, X):
            raise DataValidationError("CategoricalNB takes integer category codes; X has non-integer values "
                                      "(encode the columns first, e.g. with OrdinalEncoder or KBinsDiscretizer).")
        sizes = np.array([table.shape[1] for table in self.tables])
        bad = (codes < 0) | (codes >= sizes)
        if bad.any():
            m = int(np.flatnonzero(bad.any(axis=0))[0])
            raise DataValidationError(
                f"column {m} has categories {sorted(set(codes[bad[:, m], m].tolist()))[:5]} outside the fitted "
                f"range 0..{sizes[m] - 1}; refit with min_categories or map unseen categories first."
            )
        return codes

    def evaluator(self, A: np.ndarray, shift: np.ndarray | None = None,
                  scale: np.ndarray | None = None) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
        # one table of all features' adjusted terms (sum of categories, D): the row of (m, code) is
        # offset_m + code, so a batch is one gather
        tables = [contract(table.T, A) for table in self.tables]
        if shift is not None or scale is not None:
            shifts = [None] * len(tables) if shift is None else list(shift)
            scales = [None] * len(tables) if scale is None else list(scale)
            tables = [_fold(t, s, None if w is None else np.float64(w)) for t, s, w in zip(tables, shifts, scales)]
        flat = np.concatenate(tables)
        offsets = np.cumsum([0] + [t.shape[0] for t in tables[:-1]])

        def evaluate(X: Any, out: Any) -> np.ndarray:
            rows = self.prepare(X)
            rows += offsets
            if out.shape[2] == 1:
                np.take(flat[:, 0], rows, out=out[:, :, 0], mode="clip")  # rows checked
            else:
                np.take(flat, rows, axis=0, out=out, mode="clip")
            return out

        return evaluate

    def training_expectation(self) -> np.ndarray:
        rows = []
        for table, counts in zip(self.tables, self.counts):
            frequency = counts.sum(axis=0) / counts.sum()
            rows.append(table @ frequency)
        return np.array(rows)


def terms_for(model: Any) -> _Adapter:
    """The adapter of a fitted scikit-learn naive Bayes model."""
    if isinstance(model, GaussianNB):
        return _Gaussian(model)
    if isinstance(model, CategoricalNB):
        return _Categorical(model)
    return _Linear(model)
