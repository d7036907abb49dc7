"""Bagged decision trees seen as a forest: ``BaggingRegressor`` / ``BaggingClassifier`` of ``DecisionTree*``.

A bagging ensemble of decision trees is a random forest without per-split feature sampling: each tree is fitted on
a bootstrap draw of the training rows (scikit-learn passes the draw counts as the tree's ``sample_weight``) and
the ensemble averages the trees' ``predict`` / ``predict_proba``. So the RF-GAP construction applies unchanged,
over the draws that the public ``estimators_samples_`` gives. :class:`BaggedTrees` presents the fitted ensemble
with the attributes ``forest/`` reads; every leaf is verified against the draws as for a forest.

Refused (with the reason): a base estimator other than a decision tree, feature subsampling (``max_features`` below
all columns or ``bootstrap_features=True``: each tree then sees other columns), trees with ``class_weight``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..exceptions import UnsupportedModelError
from ..utils import check_fitted

__all__ = ["BaggedTrees", "as_forest", "is_tree_bagging"]


def is_tree_bagging(model: Any) -> bool:
    """Whether ``model`` is a ``BaggingRegressor`` / ``BaggingClassifier`` whose base estimator is a decision tree.

    Examples
    --------
    >>> from sklearn.ensemble import BaggingRegressor
    >>> from sklearn.linear_model import Ridge
    >>> from sklearn.tree import DecisionTreeRegressor
    >>> from shap_instances.forest import is_tree_bagging
    >>> is_tree_bagging(BaggingRegressor(DecisionTreeRegressor())), is_tree_bagging(BaggingRegressor(Ridge()))
    (True, False)
    """
    from sklearn.ensemble import BaggingClassifier, BaggingRegressor
    from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

    if not isinstance(model, BaggingRegressor | BaggingClassifier):
        return False
    base = getattr(model, "estimator_", None)
    base = model.estimator if base is None else base
    return base is None or isinstance(base, DecisionTreeRegressor | DecisionTreeClassifier)


class BaggedTrees:
    """A fitted bagging ensemble of decision trees with the attributes of a fitted forest (read-only view).

    Attributes
    ----------
    bagging : BaggingRegressor or BaggingClassifier
        The user's model (never modified).
    classifier : bool

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.ensemble import BaggingRegressor
    >>> from sklearn.tree import DecisionTreeRegressor
    >>> from shap_instances.forest import as_forest
    >>> X, y = np.arange(40.0).reshape(20, 2), np.arange(20.0)
    >>> bagging = BaggingRegressor(DecisionTreeRegressor(), n_estimators=3, random_state=0).fit(X, y)
    >>> view = as_forest(bagging)
    >>> len(view.estimators_samples_), bool(np.allclose(view.predict(X), bagging.predict(X)))
    (3, True)
    """

    def __init__(self, bagging: Any) -> None:
        from sklearn.base import is_classifier

        self.bagging = bagging
        self.classifier = is_classifier(bagging)
        self.estimators_ = bagging.estimators_
        base = bagging.estimator_
        self.n_outputs_ = self.estimators_[0].n_outputs_
        self.bootstrap = bool(bagging.bootstrap)
        self.n_features_in_ = bagging.n_features_in_
        if hasattr(bagging, "feature_names_in_"):
            self.feature_names_in_ = bagging.feature_names_in_
        if self.classifier:
            self.classes_, self.n_classes_ = bagging.classes_, bagging.n_classes_
        self.class_weight = None
        self.criterion = base.criterion
        self.monotonic_cst = getattr(base, "monotonic_cst", None)
        self._draws: dict[int, np.ndarray] = {}  # shared by shallow copies: each tree's draw, computed once

    @property
    def estimators_samples_(self) -> list[np.ndarray]:
        """The bootstrap draw of each tree in ``estimators_`` (the bagging's public ``estimators_samples_``)."""
        if not self._draws:
            for tree, drawn in zip(self.bagging.estimators_, self.bagging.estimators_samples_, strict=True):
                self._draws[id(tree)] = np.asarray(drawn)
        return [self._draws[id(tree)] for tree in self.estimators_]

    def predict(self, X: Any) -> np.ndarray:
        """The bagging's ``predict``."""
        return self.bagging.predict(X)

    def predict_proba(self, X: Any) -> np.ndarray:
        """The bagging's ``predict_proba`` (classifiers)."""
        return self.bagging.predict_proba(X)

    def __getattr__(self, name: str) -> Any:
        if name in ("oob_prediction_", "oob_decision_function_"):
            return getattr(self.bagging, name)
        raise AttributeError(name)


def as_forest(model: Any) -> Any:
    """``model`` itself, or for a bagging ensemble of decision trees a :class:`BaggedTrees` view of it.

    Raises
    ------
    UnsupportedModelError
        A bagging ensemble that samples features, or whose trees use ``class_weight``.
    NotFittedError
        A bagging ensemble that is not fitted.
    """
    if isinstance(model, BaggedTrees) or not is_tree_bagging(model):
        return model
    check_fitted(model)
    p = model.n_features_in_
    if any(len(f) != p or np.any(np.asarray(f) != np.arange(p)) for f in model.estimators_features_):
        raise UnsupportedModelError(
            "this Bagging ensemble fitted its trees on subsets of the columns (max_features below all of them or "
            "bootstrap_features=True), so its trees see different columns; refit with max_features=1.0 and "
            "bootstrap_features=False, or use a RandomForest (which samples columns per split) instead.")
    if getattr(model.estimator_, "class_weight", None) is not None:
        raise UnsupportedModelError("the bagged trees use class_weight, which they apply to every draw's rows "
                                    "afresh; refit the trees without class_weight to explain the ensemble.")
    return BaggedTrees(model)
