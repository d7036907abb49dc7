"""A fitted naive Bayes model read once: what ``NaiveBayesExplainer`` and :func:`nb_indicators` both work from.

:class:`NaiveBayesModel` splits a pipeline from its naive Bayes step, validates inputs (columns by name), maps
the input columns onto the model's columns, and holds the per-feature terms and weights in input-column order.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp
from numpy.typing import ArrayLike
from sklearn.pipeline import Pipeline

from ..exceptions import DataValidationError, InvalidParameterError, UnsupportedModelError
from ..utils import check_data, column_names, fitted_columns, in_column_order, model_input
from ._columns import columnwise_order, dense
from ._terms import NB_TYPES, SPARSE_NB_TYPES, terms_for
from ._weighted_nb import WeightedNaiveBayes

__all__ = ["NaiveBayesModel", "chunk_rows", "dense_chunks", "split_pipeline"]

#: Entries (rows x features x outputs) computed per chunk: about 2 MB, so the in-place passes stay in cache.
CHUNK_ENTRIES = 2**18


def chunk_rows(width: int) -> int:
    """Rows per chunk of ``width`` entries each (at least one), about 2 MB of float64 per chunk.

    Examples
    --------
    >>> from shap_instances.naive_bayes import chunk_rows
    >>> chunk_rows(2**10)
    256
    """
    return max(1, CHUNK_ENTRIES // max(1, width))


def dense_chunks(X: Any, width: int) -> Iterator[np.ndarray]:
    """Row chunks of ``X`` as dense arrays (a sparse matrix is densified one chunk at a time).

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> from shap_instances.naive_bayes import dense_chunks
    >>> [chunk.shape for chunk in dense_chunks(sp.eye(5, format="csr"), 2**17)]
    [(2, 5), (2, 5), (1, 5)]
    """
    rows = chunk_rows(width)
    for start in range(0, X.shape[0], rows):
        chunk = X[start:start + rows]
        yield chunk.toarray() if sp.issparse(chunk) else chunk


def split_pipeline(model: Any) -> tuple[Any, Any]:
    """``(preprocessing or None, the naive Bayes step)`` of a model, a pipeline or a WeightedNaiveBayes.

    Examples
    --------
    >>> from sklearn.naive_bayes import GaussianNB
    >>> from sklearn.pipeline import make_pipeline
    >>> from sklearn.preprocessing import StandardScaler
    >>> from shap_instances.naive_bayes import split_pipeline
    >>> preprocessing, nb = split_pipeline(make_pipeline(StandardScaler(), GaussianNB()))
    >>> type(nb).__name__, len(preprocessing.steps)
    ('GaussianNB', 1)
    """
    if isinstance(model, WeightedNaiveBayes):
        return split_pipeline(model.estimator_)
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


class NaiveBayesModel:
    """A fitted naive Bayes model (bare, the last step of a column-wise pipeline, or weighted), read once.

    Parameters
    ----------
    model : fitted naive Bayes model, Pipeline ending in one, or WeightedNaiveBayes
    data : array-like, optional
        Data in the model's input format (background rows); it also helps map the pipeline's columns.
    weights : array-like of shape (p,), optional
        Per-feature weights (a WeightedNaiveBayes brings its own; passing both is refused).
    feature_names : sequence of str, optional
        Names of the input columns (default: the model's ``feature_names_in_``, the DataFrame's columns, or
        ``"x{i}"``).

    Attributes
    ----------
    preprocessing : Pipeline or None
    estimator : the naive Bayes step
    n_features : int
    classes : ndarray
    columns : list of str or None
        The fitted column names inputs are matched by.
    data : validated ``data`` or None
    feature_names : list of str
    terms : the naive Bayes step's per-feature terms (its column order)
    weights : ndarray of shape (p,)
        In input-column order.
    order : ndarray of shape (p,)
        ``order[j]``: the naive Bayes column fed by input column ``j``.
    identity_order : bool
    nb_weights : ndarray of shape (p,)
        The weights in the naive Bayes column order.
    input_terms : the terms in input-column order

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.naive_bayes import GaussianNB
    >>> from shap_instances.naive_bayes import NaiveBayesModel
    >>> X, y = load_iris(return_X_y=True)
    >>> nb = NaiveBayesModel(GaussianNB().fit(X, y))
    >>> nb.n_features, nb.feature_names[:2], nb.identity_order
    (4, ['x0', 'x1'], True)
    """

    def __init__(self, model: Any, data: Any = None, *, weights: ArrayLike | None = None,
                 feature_names: Sequence[str] | None = None) -> None:
        self.model = model
        self.preprocessing, self.estimator = split_pipeline(model)
        if isinstance(model, WeightedNaiveBayes):
            if weights is not None:
                raise InvalidParameterError("NaiveBayesExplainer: a WeightedNaiveBayes model carries its weights "
                                            "(model.weights_); pass weights=None, or explain model.estimator_ "
                                            "with weights=... to use other ones.")
            weights = model.weights_
        self.n_features = model.n_features_in_
        self.classes = self.estimator.classes_
        if len(self.classes) < 2:
            raise DataValidationError(
                f"the naive Bayes model was fitted on a single class ({self.classes.tolist()}): it predicts that "
                "class for every row, and there are no log-odds to explain; refit it on at least two classes."
            )
        # the columns X and data must come in (a DataFrame in another order is put in this order)
        self.columns = fitted_columns(model, data)
        self.data = None if data is None else self.raw_input(data, name="data")
        self.feature_names = self._names(feature_names, data)
        self.terms = terms_for(self.estimator)
        self.weights = self._weights(weights)
        self.order = (np.arange(self.n_features) if self.preprocessing is None else
                      columnwise_order(self.preprocessing, self.n_features, self.data))
        self.identity_order = bool(np.array_equal(self.order, np.arange(self.n_features)))
        self.nb_weights = np.empty(self.n_features)
        self.nb_weights[self.order] = self.weights
        self.input_terms = self.terms if self.identity_order else self.terms.permuted(self.order)

    def _names(self, feature_names: Sequence[str] | None, data: Any) -> list[str]:
        if feature_names is None:
            feature_names = (self.columns or (column_names(data) if isinstance(data, pd.DataFrame) else None) or
                             [f"x{i}" for i in range(self.n_features)])
        names = [str(f) for f in feature_names]
        if len(names) != self.n_features:
            raise DataValidationError(f"feature_names has {len(names)} names, but the model has "
                                      f"{self.n_features} input columns.")
        return names

    def _weights(self, weights: ArrayLike | None) -> np.ndarray:
        array = np.ones(self.n_features) if weights is None else np.asarray(weights, dtype=np.float64)
        if array.shape != (self.n_features,) or not np.all(np.isfinite(array)):
            raise DataValidationError(f"weights must be {self.n_features} finite numbers, got shape {array.shape}.")
        return array

    def raw_input(self, X: Any, *, name: str) -> Any:
        """``X`` validated, its columns in the fitted order: a float array (or CSR matrix, for the models linear
        in x) for a bare model; for a pipeline, the user's values (any dtype the pipeline accepts) checked for
        shape only, as the preprocessing expects them."""
        if self.preprocessing is None or sp.issparse(X):
            sparse_ok = self.preprocessing is None and isinstance(self.estimator, SPARSE_NB_TYPES)
            return check_data(X, name=name, n_features=self.n_features, allow_sparse=sparse_ok,
                              feature_names=self.columns)
        if isinstance(X, pd.DataFrame):
            X = X if self.columns is None else in_column_order(X, self.columns, name)
        else:
            X = np.asarray(X)
        if X.ndim != 2 or X.shape[0] == 0:
            raise DataValidationError(f"{name} must be a non-empty 2-D table (rows x {self.n_features} columns), "
                                      f"got shape {X.shape}.")
        if X.shape[1] != self.n_features:
            raise DataValidationError(f"{name} has {X.shape[1]} columns, but the model was fitted on "
                                      f"{self.n_features}; pass data with the same columns as the training data.")
        return model_input(self.preprocessing, X)

    def transform(self, raw: Any, *, name: str = "X") -> Any:
        """The naive Bayes step's input: the pipeline's preprocessing of ``raw``, checked to be finite."""
        if self.preprocessing is None:
            return raw
        try:
            transformed = dense(self.preprocessing.transform(raw))
        except (ValueError, TypeError, KeyError) as exc:
            raise DataValidationError(f"{name}: the pipeline's preprocessing refused it ({exc}); pass data in the "
                                      "format the pipeline was fitted on.") from exc
        bad = ~np.isfinite(transformed).all(axis=0)
        if bad.any():
            inputs = np.flatnonzero(bad[self.order]).tolist()
            raise DataValidationError(f"{name}: the pipeline's preprocessing gives NaN or infinite values for input "
                                      f"columns {inputs[:10]} (missing values?); impute them, e.g. with a "
                                      "SimpleImputer step in the pipeline.")
        return transformed

    def expected_terms(self, background: Any = None) -> np.ndarray:
        """Mean per-feature terms (p, k), naive Bayes column order: over ``background`` (transformed rows), or,
        with None, under the training marginal the model stores."""
        if background is None:
            return self.terms.training_expectation()
        k = len(self.classes)
        evaluate = self.terms.evaluator(np.eye(k))
        total = np.zeros((self.n_features, k))
        for chunk in dense_chunks(background, self.n_features * k):
            total += evaluate(chunk, np.empty(chunk.shape + (k,))).sum(axis=0)
        return total / background.shape[0]

    def joint_log_proba(self, transformed: Any) -> np.ndarray | None:
        """The model's own joint log-likelihoods of transformed rows, or None for weights the model does not
        carry (then nothing independent computes them)."""
        if isinstance(self.model, WeightedNaiveBayes):
            return self.model.transformed_joint_log_proba(dense(transformed))
        if np.all(self.weights == 1.0):
            return self.estimator.predict_joint_log_proba(model_input(self.estimator, transformed))
        return None
