"""Data-OOB (Kwon & Zou 2023): the out-of-bag score of each training row in a fitted bagging ensemble."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike
from sklearn.base import is_classifier

from ..exceptions import DataValidationError, UnsupportedModelError
from ..forest import forest_apply
from ..utils import (
    bagging_n_samples,
    check_data,
    check_finite_result,
    check_fitted,
    check_labels,
    check_row_order,
    check_target,
    fitted_columns,
    row_names,
    unwrap_model,
)
from ._result import DataValues

__all__ = ["data_oob"]


def _tree_leaves(model: Any, X: np.ndarray) -> np.ndarray | None:
    """The leaf of every row in every tree (n, T) of an ensemble of trees (a forest, or a ``BaggingClassifier`` /
    ``BaggingRegressor`` of trees, each on its own feature subset ``estimators_features_``); None for other bagged
    estimators."""
    members = model.estimators_
    if not all(hasattr(member, "tree_") for member in members):
        return None
    rows = np.ascontiguousarray(X, dtype=np.float32)
    if not hasattr(model, "estimators_features_"):
        return forest_apply(model, rows)
    return np.column_stack([member.apply(rows[:, cols])
                            for member, cols in zip(members, model.estimators_features_, strict=True)])


def _member_codes(member: Any, codes: np.ndarray) -> np.ndarray:
    """The columns of ``member.tree_.value`` of the ensemble's class codes ``codes`` (its ``classes_`` are codes
    of the ensemble's classes, possibly fewer of them); -1 for a class the member never saw."""
    seen = np.asarray(member.classes_).astype(np.intp)
    at = np.minimum(np.searchsorted(seen, codes), len(seen) - 1)
    return np.where(seen[at] == codes, at, -1)


def _member_predictions(model: Any, X: np.ndarray, leaves: np.ndarray | None) -> np.ndarray:
    """Prediction of every member of the ensemble for every row, (n, T): encoded classes for classifiers.

    Trees are read once through their leaves (``leaves``, from :func:`_tree_leaves`; leaf outputs from
    ``tree_.value``); other bagged estimators predict on their own feature subsets (``estimators_features_``).
    """
    members = model.estimators_
    if leaves is not None:
        out = np.empty(leaves.shape)
        for t, member in enumerate(members):
            leaf_values = member.tree_.value[:, 0, :]
            out[:, t] = (np.asarray(member.classes_)[np.argmax(leaf_values, axis=1)] if is_classifier(model)
                         else leaf_values[:, 0])[leaves[:, t]]
        return out
    features = getattr(model, "estimators_features_", [slice(None)] * len(members))
    return np.column_stack([member.predict(X[:, cols]) for member, cols in zip(members, features, strict=True)])


def _check_fitted_targets(model: Any, leaves: np.ndarray, samples: Any, y: np.ndarray) -> None:
    """Refuse a ``y`` other than the one the trees were fitted on: every tree's in-bag rows must fall in leaves
    that hold their target (a classifier's leaf gives the row's class a positive share; a regressor's leaf value
    lies between the least and the largest target of its in-bag rows)."""
    if not is_classifier(model) and any(getattr(m, "monotonic_cst", None) is not None for m in model.estimators_):
        return  # monotonic constraints clip leaf values: they need not lie among the leaf's targets
    classifier = is_classifier(model)
    targets = np.searchsorted(np.asarray(model.classes_), y) if classifier else np.asarray(y, np.float64)
    for t, (member, drawn) in enumerate(zip(model.estimators_, samples, strict=True)):
        rows = np.unique(drawn)
        value = member.tree_.value[:, 0, :]
        held = (_held_by_class(value, leaves[rows, t], _member_codes(member, targets[rows])) if classifier
                else _held_by_range(value, leaves[rows, t], targets[rows]))
        if not held.all():
            row = int(rows[~held][0])
            raise DataValidationError(
                f"y_train is not the target {type(model).__name__} was fitted on: training row {row} was in the "
                f"bootstrap draw of tree {t}, whose leaf does not hold its target {y[row:row + 1].tolist()[0]!r}; "
                "pass the y given to fit (same rows, same order).")


def _held_by_class(value: np.ndarray, leaf: np.ndarray, codes: np.ndarray) -> np.ndarray:
    """Whether each row's leaf gives the row's class (its column of ``value``; -1: a class the tree never saw) a
    positive share."""
    return (codes >= 0) & (value[leaf, np.maximum(codes, 0)] > 0)


def _held_by_range(value: np.ndarray, leaf: np.ndarray, targets: np.ndarray) -> np.ndarray:
    """Whether each row's leaf value lies between the least and the largest target of the leaf's rows."""
    low, high = np.full(len(value), np.inf), np.full(len(value), -np.inf)
    np.minimum.at(low, leaf, targets)
    np.maximum.at(high, leaf, targets)
    room = 1e-9 * max(1.0, float(np.abs(targets).max()))
    return (value[leaf, 0] >= low[leaf] - room) & (value[leaf, 0] <= high[leaf] + room)


def _bagging_and_its_rows(model: Any, X_train: Any) -> tuple[Any, Any]:
    """The ensemble inside a pipeline or search object, and ``X_train`` through the steps before it."""
    unwrapped = unwrap_model(model)
    if unwrapped.target_transformer is not None:
        raise UnsupportedModelError("Data-OOB scores the ensemble's predictions of y_train, but this model was fitted "
                                    "on a transformed target (TransformedTargetRegressor): pass its regressor_ and "
                                    "the transformed target instead.")
    return unwrapped.estimator, unwrapped.transform(X_train, name="X_train")


def _fitted_targets(model: Any, y_train: ArrayLike, n_rows: int) -> np.ndarray:
    """``y_train`` validated against the ensemble: as many rows as it was fitted on, and a classifier's labels
    among its ``classes_`` (of their type); one output only."""
    if getattr(model, "n_outputs_", 1) != 1:
        raise UnsupportedModelError(f"Data-OOB scores one target, but this {type(model).__name__} was fitted on "
                                    f"{model.n_outputs_}; fit one ensemble per target.")
    fitted_rows = bagging_n_samples(model)
    if fitted_rows is not None and n_rows != fitted_rows:
        raise DataValidationError(f"X_train has {n_rows} rows, but the {type(model).__name__} was fitted on "
                                  f"{fitted_rows}: Data-OOB values the rows the ensemble was fitted on (its bootstrap "
                                  "draws index them); pass exactly the X and y given to fit, same rows, same order.")
    if not is_classifier(model):
        y = check_target(y_train, n_rows, name="y_train")
        if y.ndim != 1:
            raise DataValidationError(f"y_train must hold one target per row (1-D), as the {type(model).__name__} was "
                                      f"fitted on one; got shape {y.shape}.")
        return y
    return check_labels(y_train, n_rows, name="y_train", classes=model.classes_,
                        classes_of=f"the classes the {type(model).__name__} was fitted on")


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
        Checked: a DataFrame's columns are matched by name to those the model was fitted on, the number of rows
        must be the number it was fitted on, a classifier's labels must be among its ``classes_`` (of their type),
        and each tree's in-bag rows must fall in leaves that hold their targets (another ``y`` is refused).

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
    check_row_order(X_train, y_train, name="y_train", rows_name="X_train")
    names = row_names(X_train, prefix="train")
    model, X_train = _bagging_and_its_rows(model, X_train)
    samples = getattr(model, "estimators_samples_", None)
    if samples is None or getattr(model, "bootstrap", True) is False:
        raise UnsupportedModelError(f"Data-OOB needs a bagging ensemble fitted on bootstrap draws (random forest, "
                                    f"extra trees with bootstrap=True, BaggingClassifier / BaggingRegressor), got "
                                    f"{type(model).__name__}{' with bootstrap=False' if samples is not None else ''}.")
    X = check_data(X_train, name="X_train", n_features=getattr(model, "n_features_in_", None),
                   feature_names=fitted_columns(model))
    y = _fitted_targets(model, y_train, len(X))
    leaves = _tree_leaves(model, X)
    if leaves is not None:
        _check_fitted_targets(model, leaves, samples, y)
    predictions = _member_predictions(model, X, leaves)
    classifier = is_classifier(model)
    out_of_bag = np.ones(predictions.shape, dtype=bool)
    for t, drawn in enumerate(samples):
        out_of_bag[drawn, t] = False
    if classifier:
        scores = (np.asarray(model.classes_)[predictions.astype(np.intp)] == y[:, None]).astype(np.float64)
    else:
        scores = -((predictions - np.asarray(y, dtype=np.float64)[:, None]) ** 2)
    counts = out_of_bag.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        values = np.where(out_of_bag, scores, 0.0).sum(axis=1) / counts
    check_finite_result(values[counts > 0], "the Data-OOB values", why="the squared errors overflow (targets or "
                        f"predictions as large as {float(np.abs(predictions).max()):.3g}); pass rescaled targets")
    return DataValues(pd.Series(values, index=names, name="data_oob"), None, "data_oob",
                      info={"n_out_of_bag": counts})
