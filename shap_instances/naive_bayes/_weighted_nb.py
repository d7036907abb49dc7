"""``WeightedNaiveBayes``: a selective naive Bayes whose per-variable weights are learnt on the training data.

The weighted naive Bayes of the paper's family (Langley & Sage 1994; Boullé 2006) scores class ``c`` as
``log P(c) + sum_m w_m log P(x_m | c)`` with ``w_m`` in [0, 1]; a weight of 0 drops the variable (selection).
Here the weights maximise the conditional log-likelihood of the training labels minus an L1 penalty,
a convex problem on a box, solved by L-BFGS-B. The derivation is in ``docs/explainers/naive_bayes.md``.
"""

from __future__ import annotations

import numbers
import warnings
from typing import Any, ClassVar, Self

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike
from scipy.optimize import minimize
from scipy.special import logsumexp
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.naive_bayes import GaussianNB
from sklearn.pipeline import Pipeline

from ..exceptions import DataValidationError, UnsupportedModelError
from ..utils import (
    HasMethods,
    Interval,
    Options,
    check_fitted,
    check_labels,
    check_memory,
    class_codes,
    model_input,
    validate_params,
)
from ._columns import columnwise_order, dense
from ._terms import NB_TYPES, terms_for

__all__ = ["WeightedNaiveBayes"]

#: Weights the solver leaves below this are numerical zeros of the bound w >= 0: set to exactly 0.
_ZERO = 1e-8
#: Entries (rows x features x classes) of the per-feature terms evaluated at once in ``predict_*``.
_CHUNK_ENTRIES = 2**20


class WeightedNaiveBayes(ClassifierMixin, BaseEstimator):
    """Selective (weighted) naive Bayes: per-variable weights in [0, 1] learnt by penalised likelihood.

    The model scores class ``c`` by the weighted joint log-likelihood

    ``jll_c(x) = log P(c) + sum_m w_m log P(x_m | c)``

    where ``log P(x_m | c)`` are the per-feature terms of the wrapped scikit-learn naive Bayes model, and
    ``predict_proba`` is the softmax of ``jll``. ``fit`` fits the wrapped model (unless ``prefit=True``), then
    chooses the weights that maximise the conditional log-likelihood of the training labels minus an L1
    penalty,

    ``max_{w in [0, 1]^p}  sum_i log P_w(y_i | x_i) - lambda sum_m w_m``,

    a concave objective on a box (the log-sum-exp of functions affine in ``w`` is convex), so L-BFGS-B finds
    its global maximum. Because ``w >= 0`` the penalty is the L1 norm, the convex relaxation of the number of
    selected variables: weights of variables that do not pay for themselves land exactly on 0. Variables
    with a weight of 0 are not selected (``selected_``). ``NaiveBayesExplainer`` explains the fitted model
    exactly (it reads ``weights_``).

    Parameters
    ----------
    estimator : naive Bayes estimator or Pipeline, default=None
        A scikit-learn ``GaussianNB``, ``BernoulliNB``, ``MultinomialNB``, ``ComplementNB`` or ``CategoricalNB``,
        or a Pipeline ending in one whose earlier steps map input columns one to one onto the model's columns
        (e.g. ``KBinsDiscretizer(encode="ordinal")`` then ``CategoricalNB``, the discretise-then-naive-Bayes
        model of Khiops). Default ``GaussianNB()``. Cloned and fitted on ``(X, y)`` unless ``prefit=True``.
    penalty : {"bic", "aic"} or float >= 0, default="bic"
        ``lambda``, the cost in nats of a unit of weight: ``"bic"`` is ``log(n) / 2`` (the BIC cost of one
        parameter), ``"aic"`` is 1; 0 gives the unpenalised maximum-likelihood weights (no selection pressure).
    prefit : bool, default=False
        Use ``estimator`` as already fitted (it must be) and learn only the weights on ``(X, y)``.
    max_iter : int, default=1000
        Iterations of L-BFGS-B.
    tol : float, default=1e-10
        Tolerance of L-BFGS-B (relative decrease of the objective and projected gradient).

    Attributes
    ----------
    estimator_ : the fitted naive Bayes model or Pipeline
    weights_ : ndarray of shape (n_features_in_,)
        Weight of each input column (for a pipeline, of the model column the input column feeds).
    nb_weights_ : ndarray of shape (n_nb_features,)
        The same weights in the naive Bayes model's own column order.
    selected_ : ndarray of int
        Input columns with a non-zero weight.
    classes_ : ndarray
    penalty_ : float
        The value of ``lambda`` used.
    log_likelihood_ : float
        Training conditional log-likelihood ``sum_i log P_w(y_i | x_i)`` at the learnt weights.
    n_iter_ : int
    n_features_in_ : int
    feature_names_in_ : ndarray of str, when the wrapped model has it

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import load_breast_cancer
    >>> from shap_instances import NaiveBayesExplainer
    >>> from shap_instances.naive_bayes import WeightedNaiveBayes
    >>> X, y = load_breast_cancer(return_X_y=True)
    >>> model = WeightedNaiveBayes().fit(X, y)
    >>> bool(np.all((model.weights_ >= 0) & (model.weights_ <= 1))), len(model.selected_) < X.shape[1]
    (True, True)
    >>> e = NaiveBayesExplainer(model, X[:100])(X[:3])          # the weights are read from the model
    >>> log_odds = np.diff(model.predict_joint_log_proba(X[:3]), axis=1)[:, 0]
    >>> bool(np.allclose(e.base_values + e.values.sum(1), log_odds))
    True
    """

    _parameter_constraints: ClassVar[dict] = {
        "estimator": [None, HasMethods("fit")],
        "penalty": [Options("bic", "aic"), Interval(numbers.Real, 0, None)],
        "prefit": ["boolean"],
        "max_iter": [Interval(numbers.Integral, 1, None)],
        "tol": [Interval(numbers.Real, 0, None, closed="neither")],
    }

    def __init__(self, estimator: Any = None, *, penalty: float | str = "bic", prefit: bool = False,
                 max_iter: int = 1000, tol: float = 1e-10) -> None:
        self.estimator = estimator
        self.penalty = penalty
        self.prefit = prefit
        self.max_iter = max_iter
        self.tol = tol

    # ------------------------------------------------------------------ fitting
    def fit(self, X: Any, y: ArrayLike) -> Self:
        """Fit the wrapped model (unless ``prefit``), then learn the per-variable weights.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n, p)
            Training data, in the format the wrapped model (or pipeline) takes.
        y : array-like of shape (n,)
            Class labels.

        Returns
        -------
        self
        """
        validate_params(type(self).__name__, self._parameter_constraints, self.get_params(deep=False))
        estimator = GaussianNB() if self.estimator is None else self.estimator
        _split(estimator)  # refuse a model that is not naive Bayes before fitting it
        y = check_labels(y, _n_rows(X), name="y")  # one label per row, of one type, none missing
        if self.prefit:
            check_fitted(estimator, "estimator")
            self.estimator_ = estimator
        else:
            self.estimator_ = clone(estimator).fit(X, y)
        preprocessing, nb = _split(self.estimator_)
        self.classes_ = nb.classes_
        if len(self.classes_) < 2:
            raise DataValidationError(f"y holds a single class ({self.classes_.tolist()}); a naive Bayes model "
                                      "needs at least two classes to weigh its variables.")
        self.n_features_in_ = self.estimator_.n_features_in_
        names = getattr(self.estimator_, "feature_names_in_", None)
        if names is not None:
            self.feature_names_in_ = names
        codes = class_codes(y, len(y), self.classes_, classes_of="the classes the model was fitted on")
        if codes.shape[0] != _n_rows(X):
            raise DataValidationError(f"X has {_n_rows(X)} rows but y has {codes.shape[0]}.")
        transformed = self._nb_input(X, preprocessing)
        n, p, k = transformed.shape[0], transformed.shape[1], len(self.classes_)
        check_memory(8.0 * n * p * k, "the per-feature log-likelihoods of the training data",
                     instead="fit the weights on a sample of the rows (prefit=True with a fitted estimator).")
        self.terms_ = terms_for(nb)
        terms = self.terms_.terms(transformed, np.eye(k))  # (n, p, k): log P(x_m | c)
        terms -= terms.mean(axis=2, keepdims=True)  # a per-row constant: the softmax is unchanged
        prior = np.asarray(self.terms_.class_terms, dtype=np.float64)
        self.penalty_ = {"bic": 0.5 * np.log(n), "aic": 1.0}.get(str(self.penalty), self.penalty)
        self.penalty_ = float(self.penalty_)
        weights, self.log_likelihood_, self.n_iter_ = _learn_weights(terms, codes, prior, self.penalty_,
                                                                     self.max_iter, self.tol)
        self.nb_weights_ = weights
        order = np.arange(p) if preprocessing is None else columnwise_order(preprocessing, self.n_features_in_, X)
        self.weights_ = weights[order]
        self.selected_ = np.flatnonzero(self.weights_ > 0)
        return self

    def _nb_input(self, X: Any, preprocessing: Any = None) -> Any:
        """The naive Bayes model's input: the pipeline's preprocessing of ``X``, dense float64."""
        if preprocessing is None:
            preprocessing = _split(self.estimator_)[0]
        if preprocessing is None:
            values = X.to_numpy() if isinstance(X, pd.DataFrame) else X
            values = dense(values)
        else:
            values = dense(preprocessing.transform(model_input(preprocessing, X)))
        if values.ndim != 2:
            raise DataValidationError(f"X must be a 2-D table, got shape {values.shape}.")
        if not np.all(np.isfinite(values)):
            raise DataValidationError("X (after the pipeline's preprocessing) holds NaN or infinite values; impute "
                                      "them first, e.g. with a SimpleImputer step in the pipeline.")
        return values

    # ------------------------------------------------------------------ prediction
    def predict_joint_log_proba(self, X: Any) -> np.ndarray:
        """Weighted joint log-likelihoods ``log P(c) + sum_m w_m log P(x_m | c)``, shape (n, n_classes).

        Examples
        --------
        >>> import numpy as np
        >>> from sklearn.datasets import load_iris
        >>> from sklearn.naive_bayes import GaussianNB
        >>> from shap_instances.naive_bayes import WeightedNaiveBayes
        >>> X, y = load_iris(return_X_y=True)
        >>> plain = WeightedNaiveBayes(GaussianNB().fit(X, y), prefit=True, penalty=0.0).fit(X, y)
        >>> plain.predict_joint_log_proba(X[:2]).shape
        (2, 3)
        """
        check_fitted(self, "WeightedNaiveBayes")
        transformed = self._nb_input(X)
        if transformed.shape[1] != self.nb_weights_.shape[0]:
            raise DataValidationError(f"X has {transformed.shape[1]} columns after preprocessing, but the model was "
                                      f"fitted on {self.nb_weights_.shape[0]}.")
        return self.transformed_joint_log_proba(transformed)

    def transformed_joint_log_proba(self, transformed: Any) -> np.ndarray:
        """The weighted joint log-likelihoods of rows already in the naive Bayes model's input space.

        Examples
        --------
        >>> import numpy as np
        >>> from sklearn.datasets import load_iris
        >>> from sklearn.naive_bayes import GaussianNB
        >>> from shap_instances.naive_bayes import WeightedNaiveBayes
        >>> X, y = load_iris(return_X_y=True)
        >>> model = WeightedNaiveBayes(GaussianNB()).fit(X, y)
        >>> bool(np.allclose(model.transformed_joint_log_proba(X[:2]), model.predict_joint_log_proba(X[:2])))
        True
        """
        k = len(self.classes_)
        evaluate = self.terms_.evaluator(np.eye(k), None, self.nb_weights_)
        n, p = transformed.shape
        out = np.empty((n, k))
        rows = max(1, _CHUNK_ENTRIES // max(1, p * k))
        for start in range(0, n, rows):
            chunk = transformed[start:start + rows]
            out[start:start + rows] = evaluate(chunk, np.empty(chunk.shape + (k,))).sum(axis=1)
        return out + self.terms_.class_terms

    def predict_log_proba(self, X: Any) -> np.ndarray:
        """Log of :meth:`predict_proba`."""
        jll = self.predict_joint_log_proba(X)
        return jll - logsumexp(jll, axis=1, keepdims=True)

    def predict_proba(self, X: Any) -> np.ndarray:
        """Class probabilities: the softmax of the weighted joint log-likelihoods."""
        return np.exp(self.predict_log_proba(X))

    def predict(self, X: Any) -> np.ndarray:
        """The class of largest weighted joint log-likelihood."""
        jll = self.predict_joint_log_proba(X)
        return self.classes_[np.argmax(jll, axis=1)]


def _learn_weights(terms: np.ndarray, codes: np.ndarray, prior: np.ndarray, penalty: float, max_iter: int,
                   tol: float) -> tuple[np.ndarray, float, int]:
    """Maximise ``sum_i log softmax(prior + terms_i^T w)[y_i] - penalty * sum(w)`` over ``w`` in [0, 1]^p.

    ``terms`` (n, p, k) are per-feature log-likelihoods (any per-row constant removed). Returns the weights,
    the conditional log-likelihood at them and the number of iterations. The objective is scaled by 1/n for
    the solver; the optimum is the same.
    """
    n, p, _ = terms.shape
    rows = np.arange(n)
    own = terms[rows, :, codes]  # (n, p): the terms of the true class

    def objective(w: np.ndarray) -> tuple[float, np.ndarray]:
        jll = prior + np.einsum("npk,p->nk", terms, w)
        log_norm = logsumexp(jll, axis=1)
        proba = np.exp(jll - log_norm[:, None])
        cll = jll[rows, codes] - log_norm
        expected = np.einsum("npk,nk->np", terms, proba)
        value = -(cll.sum() - penalty * w.sum()) / n
        gradient = -((own - expected).sum(axis=0) - penalty) / n
        return value, gradient

    result = minimize(objective, np.ones(p), jac=True, method="L-BFGS-B", bounds=[(0.0, 1.0)] * p,
                      options={"maxiter": max_iter, "ftol": tol, "gtol": tol})
    if not result.success:
        warnings.warn(f"WeightedNaiveBayes: L-BFGS-B stopped before convergence ({result.message}); raise "
                      "max_iter or tol.", ConvergenceWarning, stacklevel=3)
    weights = np.clip(result.x, 0.0, 1.0)
    weights[weights < _ZERO] = 0.0
    jll = prior + np.einsum("npk,p->nk", terms, weights)
    cll = float((jll[rows, codes] - logsumexp(jll, axis=1)).sum())
    return weights, cll, int(result.nit)


def _split(model: Any) -> tuple[Any, Any]:
    """(preprocessing or None, naive Bayes model) of a naive Bayes model or a Pipeline ending in one."""
    last = model.steps[-1][1] if isinstance(model, Pipeline) else model
    if not isinstance(last, NB_TYPES):
        raise UnsupportedModelError(
            f"WeightedNaiveBayes wraps a scikit-learn naive Bayes model (GaussianNB, BernoulliNB, MultinomialNB, "
            f"ComplementNB, CategoricalNB) or a Pipeline ending in one, not a {type(last).__name__}."
        )
    if isinstance(model, Pipeline):
        return (model[:-1] if len(model.steps) > 1 else None), last
    return None, model


def _n_rows(X: Any) -> int:
    return X.shape[0] if hasattr(X, "shape") else len(X)
