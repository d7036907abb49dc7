"""``NaiveBayesExplainer``: exact Shapley values of naive Bayes models in linear time (Lemaire et al.)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
import pandas as pd
import scipy.sparse as sp
import shap
from numpy.typing import ArrayLike
from sklearn.pipeline import Pipeline

from .._base import InstanceExplainer
from .._explanation import build_explanation, check_efficiency
from ..exceptions import DataValidationError, InvalidParameterError, UnsupportedModelError
from ..naive_bayes import NB_TYPES, SPARSE_NB_TYPES, WeightedNaiveBayes, columnwise_order, contract, dense, terms_for
from ..utils import (
    COMMON_CONSTRAINTS,
    Options,
    check_data,
    check_fitted,
    check_memory,
    column_names,
    in_column_order,
    model_input,
    row_names,
)

if TYPE_CHECKING:
    from .._base import ConformanceProblem

__all__ = ["NaiveBayesExplainer"]

#: Entries (rows x features x outputs) computed per chunk: about 2 MB, so the in-place passes stay in cache.
_CHUNK_ENTRIES = 2**18
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
    model : fitted GaussianNB, BernoulliNB, MultinomialNB, ComplementNB, CategoricalNB, a Pipeline
        ending in one whose earlier steps map input columns one to one onto the model's columns
        (KBinsDiscretizer, OrdinalEncoder, scalers, a ColumnTransformer of those, even one that reorders
        the columns): the attributions are then to the pipeline's input columns, in input order, and the
        pipeline takes whatever input it accepts (strings for an OrdinalEncoder, DataFrames, ...); or a
        fitted :class:`~shap_instances.naive_bayes.WeightedNaiveBayes` wrapping either (its weights are used).
    masker : array-like, optional
        Background data (needed with ``expectation="background"``), in the model's input format; ``data=``
        is an alias. A
        DataFrame (here and in ``__call__``) is put in the model's fitted column order (``feature_names_in_``)
        and refused if its columns differ. BernoulliNB, MultinomialNB and ComplementNB also take scipy.sparse
        matrices, densified a chunk of rows at a time. For a pipeline whose column mapping cannot be read
        from its fitted state and probes (an unknown transformer that refuses numbers, or columns that
        stay constant in every probe), also needed with ``expectation="training"``; the error says so.
    weights : array-like of shape (p,), optional
        Per-feature weights ``w_m`` (weighted / selective naive Bayes); the explained quantity becomes
        ``log prior ratio + sum_m w_m f_m(x_m)``. A :class:`~shap_instances.naive_bayes.WeightedNaiveBayes` model
        carries its own (``model.weights_``, read automatically; passing ``weights=`` as well is refused).
    expectation : {"background", "training"}, default="background"
    woe : bool, default=False
        The weight-of-evidence variant of the paper: ``phi_m = w_m f_m(x_m)`` (reference 0), with the prior
        log-odds as base value.
    output : {"centered", "joint"} or class label, default="centered"
        The explained quantity for more than two classes.
    max_memory : float, optional
        Byte budget of the values of one call (``8 n p k`` bytes); default half the machine's memory.
    feature_names : sequence of str, optional
        Names of the input columns (default: the model's ``feature_names_in_``, the DataFrame's columns, or
        ``"x{i}"``).

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
    players = "features"
    explained_quantity = "log-odds (two classes), centred log-probabilities per class (more classes)"
    _parameter_constraints: ClassVar[dict] = {
        **COMMON_CONSTRAINTS,
        "weights": [None, "array-like"],
        "expectation": [Options("background", "training")],
        "woe": ["boolean"],
    }

    def __init__(self, model: Any, masker: Any = None, *, data: Any = None, weights: ArrayLike | str | None = None,
                 expectation: str = "background", woe: bool = False, output: str = "centered",
                 max_memory: float | None = None, feature_names: Sequence[str] | None = None) -> None:
        check_fitted(model)
        self.preprocessing, self.nb_ = _split_pipeline(model)
        data = self._setup(locals())
        if isinstance(model, WeightedNaiveBayes):
            if weights is not None:
                raise InvalidParameterError("NaiveBayesExplainer: a WeightedNaiveBayes model carries its weights "
                                            "(model.weights_); pass weights=None, or explain model.estimator_ "
                                            "with weights=... to use other ones.")
            weights = model.weights_
        self.n_features_ = model.n_features_in_
        self.classes_ = self.nb_.classes_
        if len(self.classes_) < 2:
            raise DataValidationError(
                f"the naive Bayes model was fitted on a single class ({self.classes_.tolist()}): it predicts that "
                "class for every row, and there are no log-odds to explain; refit it on at least two classes."
            )
        # the columns X and data must come in (a DataFrame in another order is put in this order)
        names_in = getattr(model, "feature_names_in_", None)
        self.fitted_names_ = None if names_in is None else [str(f) for f in names_in]
        if expectation == "background" and data is None:
            raise DataValidationError("expectation='background' needs background data; pass "
                                      "NaiveBayesExplainer(model, X_background) or use expectation='training'.")
        raw = None if data is None else self._raw_input(data, name="data")
        self.data_ = raw
        if feature_names is None:
            feature_names = (self.fitted_names_ or (column_names(data) if isinstance(data, pd.DataFrame) else None) or
                             [f"x{i}" for i in range(self.n_features_)])
        self.feature_names = [str(f) for f in feature_names]
        if len(self.feature_names) != self.n_features_:
            raise DataValidationError(f"feature_names has {len(self.feature_names)} names, but the model has "
                                      f"{self.n_features_} input columns.")
        self.terms_ = terms_for(self.nb_)
        self.weights = np.ones(self.n_features_) if weights is None else np.asarray(weights, dtype=np.float64)
        if self.weights.shape != (self.n_features_,) or not np.all(np.isfinite(self.weights)):
            raise DataValidationError(f"weights must be {self.n_features_} finite numbers, got shape "
                                      f"{self.weights.shape}.")
        # order_[j]: the naive Bayes column fed by input column j (the identity without preprocessing)
        self.order_ = (np.arange(self.n_features_) if self.preprocessing is None else
                       columnwise_order(self.preprocessing, self.n_features_, raw))
        self.identity_order_ = bool(np.array_equal(self.order_, np.arange(self.n_features_)))
        self.nb_weights_ = np.empty(self.n_features_)
        self.nb_weights_[self.order_] = self.weights
        if expectation == "background":
            background = self._transform(raw, name="data")
            k = len(self.classes_)
            evaluate = self.terms_.evaluator(np.eye(k))
            total = np.zeros((self.n_features_, k))
            for chunk in _dense_chunks(background, self.n_features_ * k):
                total += evaluate(chunk, np.empty(chunk.shape + (k,))).sum(axis=0)
            self.expected_terms_ = total / background.shape[0]
        else:
            self.expected_terms_ = self.terms_.training_expectation()
        self.expectation, self.woe = expectation, woe
        self.contraction_, self.output_names_ = _contraction(self.classes_, output)
        # everything __call__ needs, in input-column order, folded into the model's coefficients once
        A = self.contraction_
        expected = contract(self.expected_terms_, A)  # (p, D), naive Bayes column order
        self.base_value_ = contract(self.terms_.class_terms, A) + (0.0 if woe else
                                                                   (expected * self.nb_weights_[:, None]).sum(0))
        self.input_terms_ = self.terms_ if self.identity_order_ else self.terms_.permuted(self.order_)
        self.input_shift_ = None if woe else expected[self.order_]

    @classmethod
    def conformance_problem(cls) -> ConformanceProblem:
        """GaussianNB on iris (three classes); the explained quantity is the centred log-probabilities."""
        from sklearn.datasets import load_iris
        from sklearn.naive_bayes import GaussianNB

        from .._base import ConformanceProblem

        X, y = load_iris(return_X_y=True, as_frame=True)
        model = GaussianNB().fit(X, y)

        def centred(rows: Any) -> np.ndarray:
            log_proba = model.predict_log_proba(rows[X.columns])
            return log_proba - log_proba.mean(axis=1, keepdims=True)

        return ConformanceProblem(model, X.iloc[::5], X.iloc[1::25], explained=centred, atol=1e-9)

    @classmethod
    def supports_model(cls, model: Any, data: Any = None) -> bool:
        """True for scikit-learn naive Bayes models, pipelines ending in one, and ``WeightedNaiveBayes``."""
        if isinstance(model, WeightedNaiveBayes):
            return True
        last = model.steps[-1][1] if isinstance(model, Pipeline) else model
        return isinstance(last, NB_TYPES)

    def _raw_input(self, X: Any, *, name: str) -> Any:
        """``X`` validated at the boundary, its columns in the fitted order: a float array (or CSR matrix, for
        the models linear in x) for a bare model; for a pipeline, the user's values (any dtype the pipeline
        accepts) checked for shape only, as the preprocessing expects them."""
        if self.preprocessing is None or sp.issparse(X):
            sparse_ok = self.preprocessing is None and isinstance(self.nb_, SPARSE_NB_TYPES)
            return check_data(X, name=name, n_features=self.n_features_, allow_sparse=sparse_ok,
                              feature_names=self.fitted_names_)
        if isinstance(X, pd.DataFrame):
            X = X if self.fitted_names_ is None else in_column_order(X, self.fitted_names_, name)
        else:
            X = np.asarray(X)
        if X.ndim != 2 or X.shape[0] == 0:
            raise DataValidationError(f"{name} must be a non-empty 2-D table (rows x {self.n_features_} columns), "
                                      f"got shape {X.shape}.")
        if X.shape[1] != self.n_features_:
            raise DataValidationError(f"{name} has {X.shape[1]} columns, but the model was fitted on "
                                      f"{self.n_features_}; pass data with the same columns as the training data.")
        return model_input(self.preprocessing, X)

    def _transform(self, raw: Any, *, name: str = "X") -> Any:
        """The naive Bayes model's input: the pipeline's preprocessing of ``raw``, checked to be finite."""
        if self.preprocessing is None:
            return raw
        try:
            transformed = dense(self.preprocessing.transform(raw))
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

    def __call__(self, X: Any, y: ArrayLike | None = None) -> shap.Explanation:
        """Shapley values of the rows of ``X``: (n, p) for two classes, (n, p, k) for more.

        ``y`` is not used (the model's output is explained) and is refused when given.
        """
        self._check_call_y(y)
        raw = self._raw_input(X, name="X")
        transformed = self._transform(raw, name="X")
        n, p, D = transformed.shape[0], self.n_features_, self.contraction_.shape[1]
        sparse = sp.issparse(transformed)
        check_memory(8.0 * n * p * (D + sparse), "the Shapley values of X", max_memory=self.max_memory,
                     instead="explain X in batches of rows.")
        # computed chunk by chunk in place, already in input-column order: no temporary of the size of X
        values = np.empty((n, p, D))
        data: Any = np.empty((n, p)) if sparse else None
        evaluate = self.input_terms_.evaluator(self.contraction_, self.input_shift_, self.weights)
        rows = _chunk_rows(p * D)
        with np.errstate(over="ignore", invalid="ignore"):  # overflowing rows are refused just below
            for start in range(0, n, rows):
                chunk = transformed[start:start + rows]
                if sparse:
                    chunk = chunk.toarray()
                    data[start:start + rows] = chunk
                if not self.identity_order_:
                    chunk = chunk[:, self.order_]
                evaluate(chunk, values[start:start + rows])
        base = self.base_value_
        overflow = np.flatnonzero(~np.isfinite(values).all(axis=(1, 2)))
        if overflow.size:
            raise _overflow(overflow)
        checked = min(n, _CHECK_ROWS)
        self._check_against_model(transformed[:checked], values[:checked], base)
        if not sparse:
            data, display_data = _display(raw, transformed, self.order_)
        else:
            display_data = None
        if D == 1:
            values, base, output_names = values[:, :, 0], base[0], None
        else:
            output_names = self.output_names_
        return self._finish(build_explanation(values, base, feature_names=self.feature_names, data=data,
                                              display_data=display_data, output_names=output_names,
                                              row_names=row_names(X)))

    def _expected_value(self) -> float | np.ndarray:
        base = np.asarray(self.base_value_, dtype=np.float64)
        return float(base[0]) if base.size == 1 else base.copy()

    def _player_vectors(self) -> tuple[Any, str]:
        if self.data_ is None:
            return super()._player_vectors()
        return np.asarray(dense(self._transform(self.data_, name="data")), dtype=np.float64).T, "features"

    def _check_against_model(self, transformed: Any, values: np.ndarray, base: np.ndarray) -> None:
        """Efficiency against the model's own joint log-likelihoods (unweighted models and WeightedNaiveBayes),
        on a sample of rows.

        A gap that only float64 rounding of values far larger than the log-odds explains (an outlying value
        in the data or the background) is refused as such, not reported as a bug."""
        with np.errstate(over="ignore", invalid="ignore"):
            if isinstance(self.model, WeightedNaiveBayes):
                jll = self.model._joint_log_proba(dense(transformed))
            elif np.all(self.weights == 1.0):
                jll = self.nb_.predict_joint_log_proba(model_input(self.nb_, transformed))
            else:
                return
        overflow = np.flatnonzero(~np.isfinite(jll).all(axis=1))
        if overflow.size:  # a term the explanation cancels exactly (a null feature) can still overflow the model
            raise _overflow(overflow)
        # scikit-learn sums the p + 1 terms of each class: its own rounding grows with their size
        rounding = 8.0 * (self.n_features_ + 1) * np.finfo(np.float64).eps * np.abs(jll).max(axis=1, keepdims=True)
        check_efficiency(values, base, contract(jll, self.contraction_), atol=1e-9, reference_error=rounding,
                         what="the model's log-odds")


def _overflow(rows: Any) -> DataValidationError:
    return DataValidationError(
        f"X: rows {rows[:10].tolist()} have values so far from the training data that the model's "
        "log-likelihoods overflow (its own predict_joint_log_proba is infinite or NaN there), so their "
        "log-odds are undefined; check the units of those rows, or clip them to the training range.")


def _split_pipeline(model: Any) -> tuple[Any, Any]:
    if isinstance(model, WeightedNaiveBayes):
        return _split_pipeline(model.estimator_)
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


def _display(raw: Any, transformed: Any, order: np.ndarray) -> tuple[Any, Any]:
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


def _contraction(classes: np.ndarray, output: str) -> tuple[np.ndarray, list[str] | None]:
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


def _chunk_rows(width: int) -> int:
    return max(1, _CHUNK_ENTRIES // max(1, width))


def _dense_chunks(X: Any, width: int) -> Iterator[np.ndarray]:
    """Row chunks of ``X`` as dense arrays (a sparse matrix is densified one chunk at a time)."""
    rows = _chunk_rows(width)
    for start in range(0, X.shape[0], rows):
        chunk = X[start:start + rows]
        yield chunk.toarray() if sp.issparse(chunk) else chunk
