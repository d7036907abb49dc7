"""CatBoost's CatBoostRegressor / CatBoostClassifier read into :class:`BoostedTrees` (imported only when used).

The trees are oblivious (``grow_policy="SymmetricTree"``): ``get_leaf_values()`` gives every leaf's value (the
learning rate applied), ``get_tree_leaf_counts()`` how many leaves each tree has, ``calc_leaf_indexes`` the leaf
of any row, ``get_scale_and_bias()`` the initial score (``boost_from_average``) and ``predict(prediction_type=
"RawFormulaVal")`` the raw margin. With one Newton (or gradient) step per tree and no row sampling, each leaf
value is ``learning_rate * G / (H + l2_leaf_reg)`` over the training rows in the leaf, which the replay checks
for every leaf. CatBoost's sums round at about 1e-8 of a leaf value on 20,000 rows (its initial score is a
float32), so leaves are checked to 1e-6 and explanations to the float32 bound of the other float32 libraries.

Supported: ``loss_function`` ``"RMSE"`` and ``"Logloss"``, ``boosting_type="Plain"``, ``bootstrap_type="No"``
(CatBoost's default MVS / Bayesian bootstrap reweights the rows of every tree at random, and the weights are not
stored), ``leaf_estimation_iterations=1`` (the default for RMSE; for Logloss CatBoost's default is 10 steps,
whose leaf values are not one sum over the rows), no categorical features (their target statistics are computed
in an order the model does not store), no sample weights.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NoReturn

import catboost
import numpy as np
from numpy.typing import ArrayLike

from ..exceptions import DataValidationError, NotFittedError, UnsupportedModelError
from ..utils import check_target
from ._ensemble import BoostedTrees, Replay

__all__ = ["check", "read"]

#: Loss functions whose gradients are replayed here.
LOSSES = ("RMSE", "Logloss")

#: Settings the decomposition needs: name -> (the value it must have, why, what to do instead).
_REQUIRED = {
    "boosting_type": ("Plain", "ordered boosting fits each row's leaf values on a model of earlier rows only",
                      "fit with boosting_type='Plain'"),
    "bootstrap_type": ("No", "the bootstrap reweights the rows of every tree at random, and the weights are not "
                       "stored", "fit with bootstrap_type='No'"),
    "grow_policy": ("SymmetricTree", "only oblivious trees are read", "fit with grow_policy='SymmetricTree'"),
    "leaf_estimation_iterations": (1, "several Newton steps per tree make a leaf value that is not one sum over "
                                   "its rows", "fit with leaf_estimation_iterations=1"),
}


def _refuse(setting: str, why: str, instead: str) -> NoReturn:
    raise UnsupportedModelError(f"CatBoost {setting}: {why}; {instead}.")


def check(model: Any) -> None:
    """Refuse settings whose leaves are not one Newton step over known rows (the model must be fitted)."""
    if not model.is_fitted():
        raise NotFittedError(f"The model {type(model).__name__} is not fitted; call model.fit(X, y) before "
                             "explaining it.")
    params = model.get_all_params()
    loss = str(params.get("loss_function", "")).split(":")[0]
    if loss not in LOSSES:
        _refuse(f"loss_function={loss!r}", "its leaf values are not replayed here", f"use one of {LOSSES}")
    for name, (value, why, instead) in _REQUIRED.items():
        if params.get(name, value) != value:
            _refuse(f"{name}={params.get(name)!r}", why, instead)
    if params.get("leaf_estimation_method", "Newton") not in ("Newton", "Gradient") or (
            loss == "Logloss" and params.get("leaf_estimation_method", "Newton") != "Newton"):
        _refuse(f"leaf_estimation_method={params.get('leaf_estimation_method')!r}", "not replayed here",
                "fit with leaf_estimation_method='Newton'")
    if model.get_cat_feature_indices():
        _refuse("categorical features", "their target statistics are computed in a random order that the model "
                "does not store", "encode the categories before fitting (a pipeline's OneHotEncoder)")
    if float(params.get("model_shrink_rate", 0) or 0) != 0 or params.get("langevin", False):
        _refuse("model_shrink_rate / langevin", "they change the leaves after the step", "leave them off")
    if model.get_scale_and_bias()[0] != 1.0:
        _refuse("a scaled model", "its raw scores are rescaled", "explain the model before set_scale_and_bias")


class _View:
    """What the explainer asks a CatBoost model: leaves, initial and full raw scores."""

    def __init__(self, model: Any, offsets: np.ndarray, base: float) -> None:
        self.model, self.offsets, self.base = model, offsets, base

    def apply(self, X: Any) -> np.ndarray:
        return np.asarray(self.model.calc_leaf_indexes(catboost.Pool(X)), dtype=np.int32).reshape(X.shape[0], -1)

    def init_raw(self, X: Any) -> np.ndarray:
        return np.full((X.shape[0], 1), self.base)

    def margin(self, X: Any) -> np.ndarray:
        raw = self.model.predict(X, prediction_type="RawFormulaVal")
        return np.asarray(raw, dtype=np.float64).reshape(X.shape[0], 1)


def _targets(model: Any, y: ArrayLike, n: int, loss: str) -> np.ndarray:
    """The targets as the loss saw them: floats (RMSE) or 1.0 for the second class (Logloss)."""
    if loss == "RMSE":
        return check_target(y, n)
    labels = check_target(y, n, numeric=False)
    classes = np.asarray(model.classes_)
    known = np.isin(labels, classes)
    if not known.all():
        raise DataValidationError(f"y holds labels the classifier was not fitted on (e.g. {labels[~known][0]!r}); "
                                  "pass the y given to fit.")
    return (labels == classes[1]).astype(np.float64)


def _gradient_function(loss: str, y: np.ndarray) -> Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]:
    """``gradients(raw) -> (negative gradients, hessians)`` of the loss, (n, 1) each."""

    def gradients(raw: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        if loss == "RMSE":
            return (y - raw[:, 0])[:, None], np.ones((y.shape[0], 1))
        p = 1.0 / (1.0 + np.exp(-raw[:, 0]))
        return (y - p)[:, None], (p * (1.0 - p))[:, None]

    return gradients


def read(model: Any, X: Any, y: ArrayLike, sample_weight: ArrayLike | None) -> BoostedTrees:
    """Read a fitted CatBoost model fitted on ``(X, y)``."""
    check(model)
    if sample_weight is not None:
        _refuse("sample_weight", "weighted leaves are not replayed here", "explain a model fitted without weights")
    params = model.get_all_params()
    loss = str(params["loss_function"]).split(":")[0]
    n = X.shape[0]
    counts = np.asarray(model.get_tree_leaf_counts(), dtype=np.int64)
    offsets = np.concatenate([[0], np.cumsum(counts)])
    flat = np.asarray(model.get_leaf_values(), dtype=np.float64)
    leaf_values = np.zeros((counts.size, int(counts.max())))
    for t in range(counts.size):
        leaf_values[t, : counts[t]] = flat[offsets[t]: offsets[t + 1]]
    base = float(model.get_scale_and_bias()[1])
    view = _View(model, offsets, base)
    train_leaves = np.ascontiguousarray(view.apply(X).T)
    targets = _targets(model, y, n, loss)

    def add_tree(raw: np.ndarray, t: int) -> None:
        raw[:, 0] += leaf_values[t, train_leaves[t]]

    return BoostedTrees(
        library="catboost", loss="squared_error" if loss == "RMSE" else "log_loss", n_outputs=1,
        learning_rate=float(model.learning_rate_), l2=float(params.get("l2_leaf_reg", 3.0)),
        tree_output=np.zeros(counts.size, dtype=np.int64), n_leaves=counts, train_leaves=train_leaves,
        leaf_values=leaf_values, row_weight=np.ones(n), used=np.ones(n, bool), init="constant",
        init_constant=np.array([base]), targets=targets, view=view, float32=True,
        replay=Replay(raw=np.full((n, 1), base), gradients=_gradient_function(loss, targets), add_tree=add_tree),
    )
