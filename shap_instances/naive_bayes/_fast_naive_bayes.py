"""Exact refits of scikit-learn's five naive Bayes classifiers on coalitions and permutation prefixes.

A naive Bayes fit is a function of per-class counts and sums (GaussianNB: means and squared deviations), which a
row adds to in O(p): the kernels of ``naive_bayes/_naive_bayes_kernels.py`` (the formulas are in its docstring) carry
them along each permutation and recompute the explained rows' predicted probabilities at every prefix. This
module maps the residual game (binary 0/1 target, the positive class 1) onto them: it encodes the rows (binarised
for BernoulliNB, one-hot categories for CategoricalNB), reads the hyper-parameters, and leaves to the refit path
what it does not reproduce (sparse or non-numeric data, a smoothing ``alpha`` of 0, categories that are not
non-negative integers).
"""

from __future__ import annotations

import copy
from typing import Any, ClassVar, Self

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike
from sklearn.naive_bayes import BernoulliNB, CategoricalNB, ComplementNB, GaussianNB, MultinomialNB

from ..games import register_fast_path
from ._naive_bayes_kernels import (
    BERNOULLI,
    CATEGORICAL,
    COMPLEMENT,
    EMPIRICAL,
    GAUSSIAN,
    GIVEN,
    MULTINOMIAL,
    UNIFORM,
    nb_fit_values,
    nb_prefix_values,
)

__all__ = ["NaiveBayesPath"]

_KINDS = {GaussianNB: GAUSSIAN, MultinomialNB: MULTINOMIAL, BernoulliNB: BERNOULLI, ComplementNB: COMPLEMENT,
          CategoricalNB: CATEGORICAL}


@register_fast_path
class NaiveBayesPath:
    """Exact refits of GaussianNB, MultinomialNB, BernoulliNB, ComplementNB and CategoricalNB (0/1 target).

    One of the :data:`~shap_instances.games.exact_fast_paths`: the residual game picks it by itself. Each
    prefix of a permutation updates the fit's counts by one row (O(p)), then recomputes the explained rows'
    probabilities (O(m p)), instead of a scikit-learn refit. Every hyper-parameter is honoured: ``priors`` /
    ``class_prior``, ``fit_prior``, ``alpha`` (and ``force_alpha``), ``var_smoothing`` (its epsilon from the
    variance of the whole fitted subset), ``binarize``, ``norm``, ``min_categories``. A coalition holding class 0
    only predicts P(1) = 0 and one holding class 1 only P(1) = 1, as refits do; coalitions that scikit-learn cannot
    fit or predict with (user priors and one class; a zero Gaussian variance; an explained row's category absent
    from the coalition) get v(empty), the refit path's failed-fit value, without being counted as failed fits.

    Parameters
    ----------
    model : naive Bayes classifier
        Only its hyper-parameters are read (it need not be fitted).
    X, y : ndarray
        Training rows (the players) and their 0/1 targets.
    X_eval, y_eval : ndarray
        Explained rows and their 0/1 targets.
    empty : ndarray (n_eval,)
        v(empty).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.naive_bayes import GaussianNB
    >>> from shap_instances.naive_bayes import NaiveBayesPath
    >>> X = np.array([[0.0], [0.5], [2.0], [3.0]]); y = np.array([0.0, 0.0, 1.0, 1.0])
    >>> path = NaiveBayesPath(GaussianNB(), X, y, X, y, np.zeros(4))
    >>> refit = GaussianNB().fit(X[[0, 2, 3]], y[[0, 2, 3]]).predict_proba(X)[:, 1] - y
    >>> bool(np.allclose(path.residuals(np.array([True, False, True, True])), refit))
    True
    """

    #: Prefix values come from a numba kernel (threads over permutations), scattered by the generic accumulator.
    fused: ClassVar[bool] = False

    def __init__(self, model: Any, X: Any, y: ArrayLike, X_eval: Any, y_eval: ArrayLike, empty: ArrayLike) -> None:
        self.kind = _KINDS[type(model)]
        self.y_eval = np.ascontiguousarray(y_eval, dtype=np.float64)
        self.empty = np.ascontiguousarray(empty, dtype=np.float64)
        self.W = np.zeros((len(self.y_eval), 0))  # (n_eval, K) weights of an aggregate game, else no column
        y = np.asarray(y, dtype=np.float64)
        self.labels = (y == 1.0).astype(np.int64)
        #: False where the kernels would not reproduce scikit-learn (the game then refits clones).
        self.usable = bool(np.isin(y, (0.0, 1.0)).all())
        try:
            self._encode(model, X, X_eval)
        except (TypeError, ValueError):
            self.usable = False

    @classmethod
    def supports(cls, model: Any) -> bool:
        """One of the five naive Bayes classifiers; BernoulliNB and CategoricalNB with a scalar ``alpha``."""
        if type(model) not in _KINDS:
            return False
        return type(model) in (GaussianNB, MultinomialNB, ComplementNB) or np.ndim(model.alpha) == 0

    def _encode(self, model: Any, X: Any, X_eval: Any) -> None:
        """Encoded rows, the kernels' parameters; ``usable`` False for data or parameters they do not cover."""
        if sp.issparse(X) or sp.issparse(X_eval):
            raise TypeError("sparse rows")
        X, X_eval = np.asarray(X, dtype=np.float64), np.asarray(X_eval, dtype=np.float64)
        p = X.shape[1]
        self.cats, self.need = np.zeros((1, 1), dtype=np.int64), np.zeros(1, dtype=np.int64)
        feature, minimum = np.zeros(1, dtype=np.int64), np.zeros(1, dtype=np.int64)
        if self.kind == CATEGORICAL:
            X, X_eval, feature, minimum = self._one_hot(model, X, X_eval)
        elif self.kind == BERNOULLI and model.binarize is not None:
            X, X_eval = (X > model.binarize).astype(np.float64), (X_eval > model.binarize).astype(np.float64)
        self.Phi, self.PhiE = np.ascontiguousarray(X), np.ascontiguousarray(X_eval)
        alpha = _alpha(model, self.Phi.shape[1] if self.kind == CATEGORICAL else p)
        if self.kind == CATEGORICAL:
            alpha = np.full(self.Phi.shape[1], alpha[0])
        if not (np.all(np.isfinite(self.Phi)) and np.all(np.isfinite(self.PhiE)) and np.all(alpha > 0)):
            raise ValueError("non-finite rows or alpha 0")
        log_prior, mode = self._prior(model)
        self.params = (alpha, log_prior, mode, float(getattr(model, "var_smoothing", 0.0)),
                       bool(getattr(model, "norm", False)), feature, minimum)

    def _prior(self, model: Any) -> tuple[np.ndarray, int]:
        """The log class priors the kernels start from and how the fits set them (given, empirical or uniform)."""
        priors = model.priors if self.kind == GAUSSIAN else model.class_prior
        mode = GIVEN if priors is not None else EMPIRICAL if self.kind == GAUSSIAN or model.fit_prior else UNIFORM
        with np.errstate(divide="ignore"):
            log_prior = np.log(np.asarray(priors, dtype=np.float64)) if priors is not None else np.zeros(2)
        if len(log_prior) != 2:
            raise ValueError("priors of other than two classes")  # every fit fails: the game refuses
        return log_prior, mode

    def _one_hot(self, model: Any, X: np.ndarray, X_eval: np.ndarray) -> tuple[np.ndarray, ...]:
        """CategoricalNB: one-hot rows, the feature of each column and each feature's ``min_categories``."""
        if not all(np.all(a == np.floor(a)) and np.all(a >= 0) for a in (X, X_eval)):
            raise ValueError("categories must be non-negative integers")
        self.cats = np.ascontiguousarray(X, dtype=np.int64)
        cats_eval = X_eval.astype(np.int64)
        p = X.shape[1]
        self.need = cats_eval.max(axis=0, initial=-1) + 1
        minimum = np.broadcast_to(np.asarray(0 if model.min_categories is None else model.min_categories,
                                             dtype=np.int64), (p,))
        widths = np.maximum(np.maximum(self.cats.max(axis=0, initial=-1) + 1, self.need), minimum)
        offsets = np.concatenate([[0], np.cumsum(widths)])
        feature = np.repeat(np.arange(p, dtype=np.int64), widths)

        def encode(cats: np.ndarray) -> np.ndarray:
            out = np.zeros((len(cats), offsets[-1]))
            out[np.arange(len(cats))[:, None], offsets[:-1] + cats] = 1.0
            return out

        return encode(self.cats), encode(cats_eval), feature, np.ascontiguousarray(minimum)

    def aggregated(self, weights: ArrayLike) -> Self:
        """The path of the weighted sums ``weights^T residuals`` (weights of shape (n_eval, K))."""
        weights = np.asarray(weights, dtype=np.float64)
        new = copy.copy(self)
        new.W = np.ascontiguousarray(weights if self.W.shape[1] == 0 else self.W @ weights)
        new.empty = np.ascontiguousarray(weights.T @ self.empty)
        return new

    def fits_all_rows(self) -> bool:
        """False: the game fits the model once on all rows, so it refuses exactly what the refit path refuses."""
        return False

    def memory_bytes(self) -> float:
        """Bytes of the kernels' statistics and work arrays of one permutation per numba thread."""
        import numba

        q, d = self.Phi.shape[1], len(self.y_eval)
        return 8.0 * (8 * q + 4 * d) * max(int(numba.get_num_threads()), 1)

    def _arguments(self) -> tuple[int, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, tuple,
                                  np.ndarray, np.ndarray, np.ndarray]:
        """The kernels' leading arguments (as :func:`nb_prefix_values` takes them)."""
        return (self.kind, self.Phi, self.labels, self.cats, self.PhiE, self.need, self.params, self.y_eval, self.W,
                self.empty)

    def residuals(self, mask: np.ndarray) -> np.ndarray:
        """Residuals (or their weighted sums) of the fit on the rows in ``mask`` (non-empty)."""
        out = np.empty(len(self.empty))
        nb_fit_values(*self._arguments(), np.flatnonzero(mask).astype(np.intp), out)
        return out

    def prefix_values_batch(self, permutations: np.ndarray) -> np.ndarray:
        """Values of every prefix of each permutation, shape (k, n + 1, n_outputs), ``[:, 0]`` = v(empty)."""
        permutations = np.ascontiguousarray(permutations, dtype=np.intp)
        out = np.empty((len(permutations), permutations.shape[1] + 1, len(self.empty)))
        nb_prefix_values(*self._arguments(), permutations, out)
        return out

    def prefix_residuals(self, permutation: ArrayLike) -> np.ndarray:
        """Residuals on the evaluation rows of the fit on each prefix, shape (n, n_outputs)."""
        return self.prefix_values_batch(np.asarray(permutation)[None, :])[0, 1:]


def _alpha(model: Any, q: int) -> np.ndarray:
    """The smoothing scikit-learn applies (``force_alpha=False`` raises it to 1e-10), one per column."""
    alpha = np.asarray(getattr(model, "alpha", 1.0), dtype=np.float64)
    if not getattr(model, "force_alpha", True):
        alpha = np.maximum(alpha, 1e-10)
    return np.ascontiguousarray(np.broadcast_to(alpha, (q,)), dtype=np.float64)

