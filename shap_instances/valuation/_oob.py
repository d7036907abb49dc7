"""Data-OOB (Kwon & Zou 2023): the out-of-bag score of each training row in a fitted bagging ensemble."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike
from sklearn.base import is_classifier

from ..exceptions import UnsupportedModelError
from ..forest import forest_apply
from ..utils import check_data, check_fitted, check_target, row_names, unwrap_model
from ._result import DataValues

__all__ = ["data_oob"]


def _member_predictions(model: Any, X: np.ndarray) -> np.ndarray:
    """Prediction of every member of the ensemble for every row, (n, T): encoded classes for classifiers.

    Trees are read once through their leaves (one ``apply`` per tree, leaf outputs from ``tree_.value``); other
    bagged estimators predict on their own feature subsets (``estimators_features_``).
    """
    members = model.estimators_
    if all(hasattr(member, "tree_") for member in members) and not hasattr(model, "estimators_features_"):
        leaves = forest_apply(model, np.ascontiguousarray(X, dtype=np.float32))
        out = np.empty(leaves.shape)
        for t, member in enumerate(members):
            leaf_values = member.tree_.value[:, 0, :]
            out[:, t] = (np.argmax(leaf_values, axis=1) if is_classifier(model) else leaf_values[:, 0])[leaves[:, t]]
        return out
    features = getattr(model, "estimators_features_", [slice(None)] * len(members))
    return np.column_stack([member.predict(X[:, cols]) for member, cols in zip(members, features, strict=True)])


def _bagging_and_its_rows(model: Any, X_train: Any) -> tuple[Any, Any]:
    """The ensemble inside a pipeline or search object, and ``X_train`` through the steps before it."""
    unwrapped = unwrap_model(model)
    if unwrapped.target_transformer is not None:
        raise UnsupportedModelError("Data-OOB scores the ensemble's predictions of y_train, but this model was fitted "
                                    "on a transformed target (TransformedTargetRegressor): pass its regressor_ and "
                                    "the transformed target instead.")
    return unwrapped.estimator, unwrapped.transform(X_train, name="X_train")


def data_oob(model: Any, X_train: Any, y_train: ArrayLike) -> DataValues:
    """Data-OOB values: each row's mean score over the members of a bagging ensemble it was out of bag for.

    For a fitted bagging ensemble (random forest, extra trees with ``bootstrap=True``, ``BaggingClassifier`` /
    ``BaggingRegressor``) whose members ``b`` were fitted on the bootstrap draws ``estimators_samples_[b]``,
    ``value_i = sum_b [i out of bag of b] T(y_i, f_b(x_i)) / sum_b [i out of bag of b]`` with ``T`` the 0/1
    correctness of a classifier and the negated squared error of a regressor. One pass over the fitted members,
    no refit. A row in every bootstrap draw has no value (NaN).

    Parameters
    ----------
    model : fitted bagging ensemble (never modified)
        Or a pipeline / search object ending in one: ``X_train`` then goes through its fitted steps first.
    X_train, y_train : the rows it was fitted on

    Returns
    -------
    DataValues
        ``info["n_out_of_bag"]``: how many members each row was out of bag for.

    Examples
    --------
    >>> from sklearn.ensemble import RandomForestClassifier
    >>> from sklearn.datasets import load_breast_cancer
    >>> from shap_instances.valuation import data_oob
    >>> X, y = load_breast_cancer(return_X_y=True)
    >>> forest = RandomForestClassifier(50, random_state=0).fit(X, y)
    >>> dv = data_oob(forest, X, y)
    >>> bool(dv.values.between(0, 1).all()), dv.method
    (True, 'data_oob')
    """
    check_fitted(model)
    names = row_names(X_train, prefix="train")
    model, X_train = _bagging_and_its_rows(model, X_train)
    samples = getattr(model, "estimators_samples_", None)
    if samples is None or getattr(model, "bootstrap", True) is False:
        raise UnsupportedModelError(f"Data-OOB needs a bagging ensemble fitted on bootstrap draws (random forest, "
                                    f"extra trees with bootstrap=True, BaggingClassifier / BaggingRegressor), got "
                                    f"{type(model).__name__}{' with bootstrap=False' if samples is not None else ''}.")
    X = check_data(X_train, name="X_train", n_features=getattr(model, "n_features_in_", None))
    classifier = is_classifier(model)
    y = check_target(y_train, len(X), name="y_train", numeric=not classifier)
    predictions = _member_predictions(model, X)
    out_of_bag = np.ones(predictions.shape, dtype=bool)
    for t, drawn in enumerate(samples):
        out_of_bag[drawn, t] = False
    if classifier:
        scores = (np.asarray(model.classes_)[predictions.astype(np.intp)] == y[:, None]).astype(np.float64)
    else:
        scores = -((predictions - np.asarray(y, dtype=np.float64)[:, None]) ** 2)
    counts = out_of_bag.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        values = np.where(out_of_bag, scores, 0.0).sum(axis=1) / counts
    return DataValues(pd.Series(values, index=names, name="data_oob"), None, "data_oob",
                      info={"n_out_of_bag": counts})
