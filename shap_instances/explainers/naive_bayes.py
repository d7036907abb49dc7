"""``NaiveBayesExplainer``: exact Shapley values of naive Bayes models in linear time (Lemaire et al.)."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import scipy.sparse as sp
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
        ending in one whose earlier steps map input columns one to one onto the model's columns
        (KBinsDiscretizer, OrdinalEncoder, scalers, a ColumnTransformer of those, even one that reorders
        the columns): the attributions are then to the pipeline's input columns, in input order, and the
        pipeline takes whatever input it accepts (strings for an OrdinalEncoder, DataFrames, ...).
    data : array-like, optional
        Background data (needed with ``expectation="background"``), in the model's input format. For a
        pipeline whose preprocessing does not accept numeric probe rows (string columns), also needed with
        ``expectation="training"``: the column-by-column check of the preprocessing runs on it.
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
        if expectation not in ("background", "training"):
            raise ValueError(f"expectation must be 'background' or 'training', got {expectation!r}.")
        if expectation == "background" and data is None:
            raise DataValidationError("expectation='background' needs background data; pass data=X_background "
                                      "or use expectation='training'.")
        raw = None if data is None else self._raw_input(data, name="data")
        # order_[j]: the naive Bayes column fed by input column j (the identity without preprocessing)
        self.order_ = (np.arange(self.n_features_) if self.preprocessing is None else
                       _columnwise_order(self.preprocessing, self.n_features_, raw))
        self.nb_weights_ = np.empty(self.n_features_)
        self.nb_weights_[self.order_] = self.weights
        if expectation == "background":
            background = self._transform(raw, name="data")
            identity = np.eye(len(self.nb_.classes_))
            self.expected_terms_ = sum(self.terms_.terms(chunk, identity).sum(axis=0) for chunk in _chunks(background))
            self.expected_terms_ = self.expected_terms_ / len(background)
        else:
            self.expected_terms_ = self.terms_.training_expectation()
        self.expectation, self.woe = expectation, woe
        self.contraction_, self.output_names_ = _contraction(self.classes_, output)

    @classmethod
    def supports_model(cls, model, data=None) -> bool:
        """True for scikit-learn naive Bayes models and pipelines ending in one."""
        last = model.steps[-1][1] if isinstance(model, Pipeline) else model
        return isinstance(last, NB_TYPES)

    def _raw_input(self, X, *, name):
        """``X`` validated at the boundary: a float array for a bare model; for a pipeline, the user's values
        (any dtype the pipeline accepts) checked for shape only, as the preprocessing expects them."""
        if self.preprocessing is None or sp.issparse(X):
            return check_data(X, name=name, n_features=self.n_features_)
        if not isinstance(X, pd.DataFrame):
            X = np.asarray(X)
        if X.ndim != 2 or X.shape[0] == 0:
            raise DataValidationError(f"{name} must be a non-empty 2-D table (rows x {self.n_features_} columns), "
                                      f"got shape {X.shape}.")
        if X.shape[1] != self.n_features_:
            raise DataValidationError(f"{name} has {X.shape[1]} columns, but the model was fitted on "
                                      f"{self.n_features_}; pass data with the same columns as the training data.")
        return model_input(self.preprocessing, X)

    def _transform(self, raw, *, name="X"):
        """The naive Bayes model's input: the pipeline's preprocessing of ``raw``, checked to be finite."""
        if self.preprocessing is None:
            return raw
        try:
            transformed = _dense(self.preprocessing.transform(raw))
        except (ValueError, TypeError, KeyError) as exc:
            raise DataValidationError(f"{name}: the pipeline's preprocessing refused it ({exc}); pass data in the "
                                      "format the pipeline was fitted on.") from exc
        bad = ~np.isfinite(transformed).all(axis=0)
        if bad.any():
            inputs = np.flatnonzero(bad[self.order_]).tolist()
            raise DataValidationError(f"{name}: the pipeline's preprocessing gives NaN or infinite values for input "
                                      f"columns {inputs[:10]} (missing values?); impute them, e.g. with a "
                                      "SimpleImputer step in the pipeline.")
        return transformed

    def __call__(self, X) -> shap.Explanation:
        """Shapley values of the rows of ``X``: (n, p) for two classes, (n, p, k) for more."""
        raw = self._raw_input(X, name="X")
        transformed = self._transform(raw, name="X")
        data, display_data = _display(raw, transformed, self.order_)
        A = self.contraction_
        weights = self.nb_weights_[None, :, None]
        reference = 0.0 if self.woe else (self.expected_terms_ @ A)[None]
        values = np.empty((transformed.shape[0], self.n_features_, A.shape[1]))
        for start in range(0, transformed.shape[0], _CHUNK):
            chunk = transformed[start:start + _CHUNK]
            values[start:start + _CHUNK] = (self.terms_.terms(chunk, A) - reference) * weights
        expected = (self.expected_terms_ @ A) * self.nb_weights_[:, None]
        base = self.terms_.class_terms @ A + (0.0 if self.woe else expected.sum(axis=0))
        explained = base + values.sum(axis=1)
        self._check_against_model(transformed[:_CHECK_ROWS], explained[:_CHECK_ROWS])
        values = values[:, self.order_]  # naive Bayes columns back to the input columns, in input order
        if values.shape[2] == 1:
            values, base, output_names = values[:, :, 0], base[0], None
        else:
            output_names = self.output_names_
        return build_explanation(values, base, feature_names=self.feature_names, data=data,
                                 display_data=display_data, output_names=output_names)

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


def _columnwise_order(preprocessing, n_features, raw=None):
    """Which output column of ``preprocessing`` each input column feeds; refuse anything not one to one.

    Probes the transform with rows of ``raw`` (the user's data, when given) and with synthetic numeric rows
    built from ``n_features`` (so the check never depends on a background being passed): changing input
    column j must change at most one output column, and each output column must depend on at most one input
    column. Columns that never change in any probe are constant, contribute 0, and are paired in order.
    """
    rng = np.random.default_rng(0)
    probes = [rng.standard_normal((32, n_features)) * np.repeat([1e-2, 1.0, 1e2, 1e4], 8)[:, None],
              rng.integers(0, 11, size=(16, n_features)).astype(np.float64), rng.random((16, n_features))]
    probes = [model_input(preprocessing, probe) for probe in probes]
    if raw is not None:
        rows = rng.choice(raw.shape[0], min(raw.shape[0], 64), replace=False)
        probes.append(raw.iloc[rows] if isinstance(raw, pd.DataFrame) else raw[rows])
    depends, n_out = None, None
    for number, probe in enumerate(probes):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                out = _dense(preprocessing.transform(_perturbed(probe)), dtype=None)
        except Exception as exc:  # noqa: BLE001 - a probe the preprocessing refuses (numbers for string columns)
            if raw is not None and number == len(probes) - 1:
                raise DataValidationError(f"data: the pipeline's preprocessing refused it ({exc}); pass data in the "
                                          "format the pipeline was fitted on.") from exc
            continue
        n, n_out = probe.shape[0], out.shape[1]
        if n_out != n_features:
            raise UnsupportedModelError(
                f"the pipeline's preprocessing maps {n_features} columns to {n_out}; attributions to input columns "
                "need a column-by-column transform (e.g. KBinsDiscretizer(encode='ordinal'), OrdinalEncoder)."
            )
        blocks = out.reshape(n_features + 1, n, n_out)
        changed = np.array([_differs(block, blocks[0]).any(axis=0) for block in blocks[1:]])  # (inputs, outputs)
        depends = changed if depends is None else depends | changed
    if depends is None:
        raise DataValidationError(
            "the pipeline's preprocessing refuses numeric probe rows, so NaiveBayesExplainer cannot check that it "
            "works column by column without example input; pass data=<a few rows of the pipeline's input>."
        )
    mixed = np.flatnonzero(depends.sum(axis=0) > 1)
    if mixed.size:
        raise UnsupportedModelError(
            f"the pipeline's preprocessing mixes columns (its output column {mixed[0]} depends on input columns "
            f"{np.flatnonzero(depends[:, mixed[0]]).tolist()}); NaiveBayesExplainer needs column-by-column "
            "preprocessing (KBinsDiscretizer, OrdinalEncoder, scalers, a ColumnTransformer of those)."
        )
    split = np.flatnonzero(depends.sum(axis=1) > 1)
    if split.size:
        raise UnsupportedModelError(
            f"the pipeline's preprocessing spreads input column {split[0]} over output columns "
            f"{np.flatnonzero(depends[split[0]]).tolist()}; NaiveBayesExplainer needs a one-to-one mapping of "
            "input to output columns."
        )
    order = np.full(n_features, -1)
    inputs, outputs = np.nonzero(depends)
    order[inputs] = outputs
    order[order < 0] = np.setdiff1d(np.arange(n_features), outputs)  # constant columns, paired in order
    return order


def _perturbed(probe):
    """``probe`` stacked p + 1 times: as is, then with column j cyclically shifted by one row in copy j + 1."""
    n, p = probe.shape
    if isinstance(probe, pd.DataFrame):
        blocks = [probe]
        for j in range(p):
            block = probe.copy()
            block.iloc[:, j] = np.roll(probe.iloc[:, j].to_numpy(), 1)
            blocks.append(block)
        return pd.concat(blocks, ignore_index=True)
    stacked = np.tile(probe, (p + 1, 1))
    for j in range(p):
        stacked[(j + 1) * n:(j + 2) * n, j] = np.roll(probe[:, j], 1)
    return stacked


def _differs(a, b):
    """Elementwise a != b, with NaN equal to NaN."""
    try:
        return ~((a == b) | (np.isnan(a.astype(np.float64)) & np.isnan(b.astype(np.float64))))
    except (TypeError, ValueError):
        return a != b


def _dense(out, dtype=np.float64):
    out = out.toarray() if sp.issparse(out) else out
    return np.asarray(out, dtype=dtype)


def _display(raw, transformed, order):
    """Explanation.data (the raw values, numeric; a string column shows the code the model sees) and
    display_data (the raw values, only when some column is not numeric)."""
    values = raw.to_numpy() if isinstance(raw, pd.DataFrame) else np.asarray(raw)
    if values.dtype.kind in "biuf":
        return np.asarray(values, dtype=np.float64), None
    data = np.empty(values.shape)
    for j in range(values.shape[1]):
        try:
            data[:, j] = values[:, j].astype(np.float64)
        except (TypeError, ValueError):
            data[:, j] = transformed[:, order[j]]
    return data, values


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
