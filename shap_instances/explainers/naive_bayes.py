"""``NaiveBayesExplainer``: exact Shapley values of naive Bayes models in linear time (Lemaire et al.)."""

from __future__ import annotations

import numpy as np
import shap
from sklearn.pipeline import Pipeline

from .._base import InstanceExplainer
from .._explanation import build_explanation
from .._validation import check_data, check_fitted, column_names, model_input
from ..exceptions import DataValidationError, EfficiencyError, UnsupportedModelError
from ._nb_terms import NB_TYPES, terms_for

__all__ = ["NaiveBayesExplainer"]

_CHUNK = 65_536
#: Rows checked against the model's own predict_joint_log_proba on every call.
_CHECK_ROWS = 2_000


class NaiveBayesExplainer(InstanceExplainer):
    """Exact Shapley values of a naive Bayes model's log-odds, linear in the number of features.

    A naive Bayes model scores class c as ``jll_c(x) = log P(c) + sum_m L_m(x_m, c)``, a sum of one term
    per feature. Under the interventional (independent-masker) game a feature's Shapley value is then its
    own centred term: ``phi_m = w_m (f_m(x_m) - E[f_m(X_m)])``, with ``f_m`` the feature's contribution to
    the explained quantity and the expectation over the background data (shap's convention) or over the
    training marginal (``expectation="training"``, the convention of the paper and Khiops).

    Explained quantity: for two classes the log-odds ``log P(c1|x) - log P(c0|x)``; for more classes, by
    default the centred log-probabilities ``log P(c|x) - mean_k log P(k|x)`` (one output per class, whose
    softmax is ``predict_proba``), or ``output="joint"`` for the joint log-likelihoods, or a class label
    for log-ratios to that reference class.

    Parameters
    ----------
    model : fitted GaussianNB, BernoulliNB, MultinomialNB, ComplementNB, CategoricalNB, or a Pipeline
        ending in one whose earlier steps work column by column (KBinsDiscretizer, OrdinalEncoder,
        scalers, ...): the attributions are then to the pipeline's input columns.
    data : array-like, optional
        Background data (needed with ``expectation="background"``).
    weights : array-like of shape (p,), optional
        Per-feature weights ``w_m`` (weighted / selective naive Bayes); the explained quantity becomes
        ``log prior ratio + sum_m w_m f_m(x_m)``.
    expectation : {"background", "training"}, default="background"
    woe : bool, default=False
        The weight-of-evidence variant of the paper: ``phi_m = w_m f_m(x_m)`` (reference 0), with the prior
        log-odds as base value.
    output : {"centered", "joint"} or class label, default="centered"
        The explained quantity for more than two classes.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import load_breast_cancer
    >>> from sklearn.naive_bayes import GaussianNB
    >>> from shap_instances import NaiveBayesExplainer
    >>> X, y = load_breast_cancer(return_X_y=True)
    >>> model = GaussianNB().fit(X, y)
    >>> e = NaiveBayesExplainer(model, X[:100])(X[:3])
    >>> log_odds = np.diff(model.predict_joint_log_proba(X[:3]), axis=1)[:, 0]
    >>> bool(np.allclose(e.base_values + e.values.sum(1), log_odds))
    True
    """

    auto_priority = 10
    explained_quantity = "log-odds (two classes), centred log-probabilities per class (more classes)"

    def __init__(self, model, data=None, y=None, *, weights=None, expectation="background", woe=False,
                 output="centered", feature_names=None, silent=False):
        check_fitted(model)
        self.preprocessing, self.nb_ = _split_pipeline(model)
        super().__init__(model, data, silent=silent, feature_names=feature_names)
        self.n_features_ = model.n_features_in_
        self.feature_names = feature_names or (column_names(data) if data is not None else
                                               [str(f) for f in getattr(model, "feature_names_in_", [])] or
                                               [f"x{i}" for i in range(self.n_features_)])
        self.terms_ = terms_for(self.nb_)
        self.classes_ = self.nb_.classes_
        self.weights = np.ones(self.n_features_) if weights is None else np.asarray(weights, dtype=np.float64)
        if self.weights.shape != (self.n_features_,) or not np.all(np.isfinite(self.weights)):
            raise DataValidationError(f"weights must be {self.n_features_} finite numbers, got shape "
                                      f"{self.weights.shape}.")
        if expectation == "background":
            if data is None:
                raise DataValidationError("expectation='background' needs background data; pass data=X_background "
                                          "or use expectation='training'.")
            background = self._transform(data, name="data")
            if self.preprocessing is not None:
                _check_columnwise(self.preprocessing, check_data(data, name="data"))
            identity = np.eye(len(self.nb_.classes_))
            self.expected_terms_ = sum(self.terms_.terms(chunk, identity).sum(axis=0) for chunk in _chunks(background))
            self.expected_terms_ = self.expected_terms_ / len(background)
        elif expectation == "training":
            if self.preprocessing is not None and data is not None:
                _check_columnwise(self.preprocessing, check_data(data, name="data"))
            self.expected_terms_ = self.terms_.training_expectation()
        else:
            raise ValueError(f"expectation must be 'background' or 'training', got {expectation!r}.")
        self.expectation, self.woe = expectation, woe
        self.contraction_, self.output_names_ = _contraction(self.classes_, output)

    @classmethod
    def supports_model(cls, model, data=None) -> bool:
        """True for scikit-learn naive Bayes models and pipelines ending in one."""
        last = model.steps[-1][1] if isinstance(model, Pipeline) else model
        return isinstance(last, NB_TYPES)

    def _transform(self, X, *, name="X"):
        X = check_data(X, name=name, n_features=self.n_features_)
        if self.preprocessing is not None:
            X = check_data(self.preprocessing.transform(model_input(self.preprocessing, X)), name=f"transformed {name}")
        return X

    def __call__(self, X) -> shap.Explanation:
        """Shapley values of the rows of ``X``: (n, p) for two classes, (n, p, k) for more."""
        data = check_data(X, name="X", n_features=self.n_features_)
        transformed = data if self.preprocessing is None else self._transform(X)
        A = self.contraction_
        weights = self.weights[None, :, None]
        reference = 0.0 if self.woe else (self.expected_terms_ @ A)[None]
        values = np.empty((transformed.shape[0], self.n_features_, A.shape[1]))
        for start in range(0, transformed.shape[0], _CHUNK):
            chunk = transformed[start:start + _CHUNK]
            values[start:start + _CHUNK] = (self.terms_.terms(chunk, A) - reference) * weights
        expected = (self.expected_terms_ @ A) * self.weights[:, None]
        base = self.terms_.class_terms @ A + (0.0 if self.woe else expected.sum(axis=0))
        explained = base + values.sum(axis=1)
        self._check_against_model(transformed[:_CHECK_ROWS], explained[:_CHECK_ROWS])
        if values.shape[2] == 1:
            values, base, output_names = values[:, :, 0], base[0], None
        else:
            output_names = self.output_names_
        return build_explanation(values, base, feature_names=self.feature_names, data=data,
                                 output_names=output_names)

    def _check_against_model(self, transformed, explained) -> None:
        """Efficiency against the model's own joint log-likelihoods (unweighted models), on a sample of rows."""
        if not np.all(self.weights == 1.0):
            return
        jll = self.nb_.predict_joint_log_proba(transformed) @ self.contraction_
        gap = np.max(np.abs(jll - explained) / np.maximum(1.0, np.abs(jll)), initial=0.0)
        if gap > 1e-9:
            raise EfficiencyError(f"base + sum of Shapley values departs from the model's log-odds by {gap:.3g}; "
                                  "this is a bug in shap_instances, please report it.")


def _split_pipeline(model):
    if isinstance(model, Pipeline):
        last = model.steps[-1][1]
        if not isinstance(last, NB_TYPES):
            raise UnsupportedModelError(f"the pipeline ends in a {type(last).__name__}, not a naive Bayes model.")
        return (model[:-1] if len(model.steps) > 1 else None), last
    if not isinstance(model, NB_TYPES):
        raise UnsupportedModelError(
            f"NaiveBayesExplainer explains scikit-learn naive Bayes models (GaussianNB, BernoulliNB, MultinomialNB, "
            f"ComplementNB, CategoricalNB) and pipelines ending in one, not a {type(model).__name__}."
        )
    return None, model


def _check_columnwise(preprocessing, X):
    """Refuse preprocessing whose output column m depends on more than input column m."""
    reference = np.asarray(preprocessing.transform(model_input(preprocessing, X)))
    if reference.shape[1] != X.shape[1]:
        raise UnsupportedModelError(
            f"the pipeline's preprocessing maps {X.shape[1]} columns to {reference.shape[1]}; attributions to input "
            "columns need a column-by-column transform (e.g. KBinsDiscretizer(encode='ordinal'), OrdinalEncoder)."
        )
    rng = np.random.default_rng(0)
    for j in range(X.shape[1]):
        shuffled = X.copy()
        shuffled[:, j] = shuffled[rng.permutation(len(X)), j]
        changed = np.any(np.asarray(preprocessing.transform(model_input(preprocessing, shuffled))) != reference, axis=0)
        changed[j] = False
        if changed.any():
            raise UnsupportedModelError(
                f"the pipeline's preprocessing mixes columns (changing input column {j} changed output columns "
                f"{np.flatnonzero(changed).tolist()}); NaiveBayesExplainer needs column-by-column preprocessing."
            )


def _contraction(classes, output):
    """Matrix A (k, D) turning joint log-likelihoods into the explained outputs, and their names."""
    k = len(classes)
    names = [str(c) for c in classes]
    if k == 2:
        return np.array([[-1.0], [1.0]]), None
    if output == "centered":
        return np.eye(k) - 1.0 / k, names
    if output == "joint":
        return np.eye(k), names
    matches = [i for i, c in enumerate(classes) if c == output or str(c) == str(output)]
    if not matches:
        raise ValueError(f"output must be 'centered', 'joint' or a class label {names}, got {output!r}.")
    A = np.eye(k)
    A[matches[0]] -= 1.0
    return A, names


def _chunks(X):
    for start in range(0, X.shape[0], _CHUNK):
        yield X[start:start + _CHUNK]
