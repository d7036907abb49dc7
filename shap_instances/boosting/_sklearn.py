"""scikit-learn's GradientBoosting* and HistGradientBoosting* read into :class:`BoostedTrees`.

Private scikit-learn state is read where the public API has no equivalent, through the scikit-learn adapter
(:mod:`shap_instances.utils`: ``gb_loss``, ``gb_init_raw``, ``hgb_*``; it states the supported scikit-learn
range), and everything read is checked by the replay (each leaf value recomputed from the replayed
gradients): the loss object the model trained with (so the gradients are bitwise those of training), the init
estimator's raw predictions, and HistGradientBoosting's trees, baseline, input preprocessing and
early-stopping seed (its trees have no public ``apply``).
"""

from __future__ import annotations

import numbers
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from sklearn.dummy import DummyClassifier, DummyRegressor
from sklearn.ensemble import (
    GradientBoostingClassifier,
    GradientBoostingRegressor,
    HistGradientBoostingClassifier,
    HistGradientBoostingRegressor,
)
from sklearn.model_selection import train_test_split

from ..exceptions import DataValidationError, UnsupportedModelError
from ..utils import (
    check_fitted,
    check_target,
    class_codes,
    gb_init_raw,
    gb_loss,
    hgb_apply_input,
    hgb_baseline,
    hgb_loss,
    hgb_node_id_predictor,
    hgb_predictors,
    hgb_sample_weight,
    hgb_split_seed,
    model_input,
)
from ._ensemble import BoostedTrees, Replay, leaf_ranks

__all__ = ["GB_MODELS", "HGB_MODELS", "check_gb", "read_gb", "check_hgb", "read_hgb"]

GB_MODELS = (GradientBoostingRegressor, GradientBoostingClassifier)
HGB_MODELS = (HistGradientBoostingRegressor, HistGradientBoostingClassifier)

_GB_LOSSES = {"squared_error", "log_loss", "exponential"}
_HGB_LOSSES = {"squared_error", "poisson", "gamma", "log_loss"}


def _classifier(model: Any) -> bool:
    return isinstance(model, GradientBoostingClassifier | HistGradientBoostingClassifier)


def _class_codes(model: Any, y: ArrayLike, n: int) -> np.ndarray:
    """Class indices (float64) of the labels ``y`` in ``model.classes_``."""
    return class_codes(y, n, model.classes_, classes_of="the classes the classifier was fitted on").astype(np.float64)


def _weights(sample_weight: ArrayLike | None, n: int) -> np.ndarray | None:
    if sample_weight is None:
        return None
    weights = check_target(sample_weight, n, name="sample_weight")
    if weights.ndim != 1 or np.any(weights < 0):
        raise DataValidationError("sample_weight must be one non-negative weight per training row.")
    return weights


# ---------------------------------------------------------------------------------------------- GradientBoosting
def check_gb(model: Any) -> None:
    """Refuse GradientBoosting settings whose leaves are not Newton steps of known rows, then unfitted models."""
    if model.subsample < 1.0:
        raise UnsupportedModelError(
            f"subsample={model.subsample} fits each tree on a random subsample of the rows that scikit-learn does not "
            "store, so the training rows behind each leaf are unknown; refit with subsample=1.0.")
    if model.loss not in _GB_LOSSES:
        raise UnsupportedModelError(
            f"loss={model.loss!r}: its leaf values are medians or quantiles of residuals, not sums of training "
            "gradients, so no exact decomposition over training rows exists; use loss='squared_error' "
            "(regression) or 'log_loss' / 'exponential' (classification).")
    if model.n_iter_no_change is not None and not isinstance(model.random_state, numbers.Integral):
        raise UnsupportedModelError(
            f"n_iter_no_change={model.n_iter_no_change} trains on a random split of the data that scikit-learn "
            f"does not store, and random_state={model.random_state!r} does not reproduce it; refit with an int "
            "random_state (or without early stopping).")
    check_fitted(model)


def _gb_init(model: Any) -> str:
    init = model.init_
    if isinstance(init, str) and init == "zero":
        return "constant"
    if isinstance(init, DummyRegressor) and init.strategy == "mean":
        return "mean"
    if isinstance(init, DummyRegressor) and init.strategy == "constant":
        return "constant"
    if isinstance(init, DummyClassifier) and init.strategy == "prior":
        return "constant"  # log-odds of the class priors: the same for every row
    return "other"


def _targets(model: Any, y: ArrayLike, n: int, classifier: bool) -> np.ndarray:
    """One target per training row: the class indices (float64) for a classifier."""
    targets = _class_codes(model, y, n) if classifier else check_target(y, n)
    if targets.ndim != 1:
        raise DataValidationError(f"y must be one target per training row, got shape {targets.shape}.")
    return targets


def read_gb(model: Any, X: Any, y: ArrayLike, sample_weight: ArrayLike | None) -> BoostedTrees:
    """Read a fitted GradientBoostingRegressor / Classifier fitted on ``(X, y, sample_weight)``."""
    check_gb(model)
    n = X.shape[0]
    classifier = _classifier(model)
    targets = _targets(model, y, n, classifier)
    weights = _weights(sample_weight, n)
    row_weight = np.ones(n) if weights is None else weights
    used = np.ones(n, dtype=bool)
    if model.n_iter_no_change is not None:
        train, _ = train_test_split(np.arange(n), random_state=model.random_state,
                                    test_size=model.validation_fraction, stratify=targets if classifier else None)
        used[:] = False
        used[train] = True
    n_iter, K = model.estimators_.shape
    trees, ranks, n_leaves, leaf_values = _gb_trees(model)
    view = _GBView(model, ranks, K, classifier)
    train_leaves = np.ascontiguousarray(view.apply(X).T)
    _check_gb_leaf_weights(trees, ranks, n_leaves, train_leaves, used & (row_weight > 0), row_weight)

    rows = np.flatnonzero(used)
    gradients = _gb_gradient_function(model, targets[rows], row_weight[rows], K)

    def add_tree(raw: np.ndarray, t: int) -> None:
        raw[:, t % K] += leaf_values[t, train_leaves[t, rows]]

    init = _gb_init(model)
    constant = view.init_raw(X[:1])[0] if init in ("mean", "constant") else None
    return BoostedTrees(
        library="scikit-learn", loss=model.loss, n_outputs=K, learning_rate=float(model.learning_rate), l2=0.0,
        tree_output=np.tile(np.arange(K), n_iter).astype(np.int64), n_leaves=n_leaves, train_leaves=train_leaves,
        leaf_values=leaf_values, row_weight=row_weight, used=used, init=init, init_constant=constant,
        targets=targets, view=view,
        replay=Replay(raw=view.init_raw(X[rows]), gradients=gradients, add_tree=add_tree,
                      numerator_factor=(K - 1) / K if K > 1 else 1.0, zero_denominator_is_zero=True),
    )


def _gb_trees(model: Any) -> tuple[list[Any], list[np.ndarray], np.ndarray, np.ndarray]:
    """The fitted trees (iteration by iteration, output by output), their leaf ranks, leaves per tree, and the leaf
    values training added (learning rate times the stored value; trees x most leaves, zero-padded)."""
    estimators = model.estimators_
    n_iter, K = estimators.shape
    trees = [estimators[i, k].tree_ for i in range(n_iter) for k in range(K)]
    ranks = [leaf_ranks(tree.children_left == -1) for tree in trees]
    n_leaves = np.array([int(r.max()) + 1 for r in ranks], dtype=np.int64)
    leaf_values = np.zeros((len(trees), int(n_leaves.max())))
    eta = float(model.learning_rate)
    for t, (tree, rank) in enumerate(zip(trees, ranks)):
        is_leaf = rank >= 0
        leaf_values[t, : n_leaves[t]] = eta * tree.value[is_leaf, 0, 0]  # the product training added
    return trees, ranks, n_leaves, leaf_values


def _check_gb_leaf_weights(trees: list[Any], ranks: list[np.ndarray], n_leaves: np.ndarray, train_leaves: np.ndarray,
                           positive: np.ndarray, row_weight: np.ndarray) -> None:
    """Refuse training rows whose weights do not sum to each leaf's stored weight (``weighted_n_node_samples``)."""
    for t, tree in enumerate(trees):
        total = np.bincount(train_leaves[t, positive], weights=row_weight[positive], minlength=n_leaves[t])
        stored = tree.weighted_n_node_samples[ranks[t] >= 0]
        if not np.allclose(total, stored, rtol=1e-9, atol=1e-12):
            raise DataValidationError(
                f"The training rows do not fill the leaves of tree {t} as in fitting (total weight per leaf): pass "
                "exactly the X and sample_weight given to fit (same rows, same order).")


def _gb_gradient_function(model: Any, y_used: np.ndarray, w_used: np.ndarray,
                          K: int) -> Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]:
    """``gradients(raw) -> (weighted negative gradients, weighted hessians)`` of the rows used in training, from the
    loss object the model trained with."""
    loss = gb_loss(model)

    def gradients(raw: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        neg = -np.asarray(loss.gradient(y_true=y_used, raw_prediction=raw, sample_weight=None),
                          dtype=np.float64).reshape(raw.shape)
        if model.loss == "squared_error":
            hess = np.ones_like(neg)
        elif model.loss == "exponential":
            hess = neg.copy()
            hess[y_used == 0] *= -1
        else:
            truth = (y_used[:, None] == np.arange(K)[None, :]) if K > 1 else y_used[:, None]
            prob = truth - neg  # scikit-learn's own expression of the probability
            hess = prob * (1 - prob)
        return neg * w_used[:, None], hess * w_used[:, None]

    return gradients


# ---------------------------------------------------------------------------------------------- HistGradientBoosting
def check_hgb(model: Any) -> None:
    """Refuse HistGradientBoosting settings whose leaves are not Newton steps, then unfitted models."""
    if model.loss not in _HGB_LOSSES:
        raise UnsupportedModelError(
            f"loss={model.loss!r}: HistGradientBoosting replaces its leaf values by quantiles of the residuals, "
            "not sums of training gradients, so no exact decomposition over training rows exists; use "
            "'squared_error', 'poisson', 'gamma' or 'log_loss'.")
    if model.monotonic_cst is not None:
        raise UnsupportedModelError(
            "monotonic_cst clips leaf values to bounds set by their neighbours, so they are no longer sums of "
            "training gradients; refit without monotonic_cst.")
    check_fitted(model)


def _hgb_leaf_predictors(model: Any) -> tuple[list[Any], list[np.ndarray]]:
    """Copies of the model's trees that predict the id of the node a row ends in (the model is untouched)."""
    copies, ranks = [], []
    for iteration in hgb_predictors(model):
        for predictor in iteration:
            copies.append(hgb_node_id_predictor(predictor))
            ranks.append(leaf_ranks(predictor.nodes["is_leaf"].astype(bool)))
    return copies, ranks


def read_hgb(model: Any, X: Any, y: ArrayLike, sample_weight: ArrayLike | None) -> BoostedTrees:
    """Read a fitted HistGradientBoostingRegressor / Classifier fitted on ``(X, y, sample_weight)``."""
    check_hgb(model)
    n = X.shape[0]
    classifier = _classifier(model)
    targets = _targets(model, y, n, classifier)
    weights = hgb_sample_weight(model, _weights(sample_weight, n), targets)
    row_weight = np.ones(n) if weights is None else np.asarray(weights, dtype=np.float64)
    K = int(model.n_trees_per_iteration_)
    copies, ranks = _hgb_leaf_predictors(model)
    n_trees = len(copies)
    if n_trees == 0:
        raise UnsupportedModelError("The model has no trees (n_iter_ = 0); nothing to decompose.")
    used = _hgb_used_rows(model, targets, classifier)
    n_leaves = np.array([int(r.max()) + 1 for r in ranks], dtype=np.int64)
    leaf_values = np.zeros((n_trees, int(n_leaves.max())))
    stored = [p for iteration in hgb_predictors(model) for p in iteration]
    for t, predictor in enumerate(stored):
        leaf_values[t, : n_leaves[t]] = predictor.nodes["value"][ranks[t] >= 0]  # shrinkage applied
    view = _HGBView(model, copies, ranks, K, classifier)
    train_leaves = np.ascontiguousarray(view.apply(X).T)
    rows = np.flatnonzero(used)
    _check_hgb_leaf_counts(stored, ranks, n_leaves, train_leaves, rows)
    gradients = _hgb_gradient_function(model, targets[rows], None if weights is None else row_weight[rows], K)

    def add_tree(raw: np.ndarray, t: int) -> None:
        raw[:, t % K] += leaf_values[t, train_leaves[t, rows]]

    raw0 = np.zeros((rows.size, K), order="F") + hgb_baseline(model)
    init = "mean" if model.loss == "squared_error" else "constant"
    return BoostedTrees(
        library="scikit-learn", loss=model.loss, n_outputs=K, learning_rate=float(model.learning_rate),
        l2=float(model.l2_regularization) + 1e-15, tree_output=np.tile(np.arange(K), n_trees // K).astype(np.int64),
        n_leaves=n_leaves, train_leaves=train_leaves, leaf_values=leaf_values, row_weight=row_weight, used=used,
        init=init, init_constant=np.asarray(hgb_baseline(model), dtype=np.float64).reshape(K),
        targets=targets, view=view, float32=True,
        replay=Replay(raw=raw0, gradients=gradients, add_tree=add_tree),
    )


def _hgb_used_rows(model: Any, targets: np.ndarray, classifier: bool) -> np.ndarray:
    """The rows the trees were grown on: all of them, or the early-stopping split's training part (drawn again
    from the stored seed as fit drew it); refused when neither matches the first tree's root count."""
    n = targets.shape[0]
    root_count = int(hgb_predictors(model)[0][0].nodes["count"][0])
    used = np.ones(n, dtype=bool)
    if root_count != n:
        if not (model.do_early_stopping_ and model.validation_fraction is not None):
            raise DataValidationError(f"The model was fitted on {root_count} rows, but X has {n}: pass exactly the X "
                                      "given to fit.")
        train, _ = train_test_split(np.arange(n), test_size=model.validation_fraction,
                                    stratify=targets if classifier else None, random_state=hgb_split_seed(model))
        used[:] = False
        used[train] = True
        if used.sum() != root_count:
            raise DataValidationError(f"The model was fitted on {root_count} rows, which the early-stopping split "
                                      f"of these {n} rows does not reproduce: pass exactly the X and y given to fit.")
    return used


def _check_hgb_leaf_counts(stored: list[Any], ranks: list[np.ndarray], n_leaves: np.ndarray, train_leaves: np.ndarray,
                           rows: np.ndarray) -> None:
    """Refuse training rows that do not fill each tree's leaves with the stored counts (``nodes["count"]``)."""
    for t, predictor in enumerate(stored):
        counts = np.bincount(train_leaves[t, rows], minlength=n_leaves[t])
        if not np.array_equal(counts, predictor.nodes["count"][ranks[t] >= 0].astype(np.int64)):
            raise DataValidationError(
                f"The training rows do not fill the leaves of tree {t} as in fitting (rows per leaf): pass exactly "
                "the X given to fit (same rows, same order).")


def _hgb_gradient_function(model: Any, y_used: np.ndarray, w_used: np.ndarray | None,
                           K: int) -> Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]:
    """``gradients(raw) -> (negative gradients, hessians)`` of the rows used, computed by the model's own loss
    object into float32 buffers, as training computed them."""
    loss = hgb_loss(model)
    size = y_used.shape[0]
    gradient, hessian = loss.init_gradient_and_hessian(n_samples=size, dtype=np.float32, order="F")

    def gradients(raw: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        view = raw[:, 0] if K == 1 else raw
        if loss.constant_hessian:
            loss.gradient(y_true=y_used, raw_prediction=view, sample_weight=w_used, gradient_out=gradient)
            hess = np.ones((size, K))
        else:
            loss.gradient_hessian(y_true=y_used, raw_prediction=view, sample_weight=w_used,
                                  gradient_out=gradient, hessian_out=hessian)
            hess = hessian.astype(np.float64).reshape(size, K)
        return -gradient.astype(np.float64).reshape(size, K), hess

    return gradients


class _GBView:
    """What the explainer asks a GradientBoosting model: leaves, initial and full raw predictions."""

    def __init__(self, model: Any, ranks: list[np.ndarray], K: int, classifier: bool) -> None:
        self.model, self.ranks, self.K, self.classifier = model, ranks, K, classifier

    def apply(self, X: Any) -> np.ndarray:
        # arrays, not DataFrames: GradientBoosting validates X with its first tree, which was fitted on arrays
        nodes = np.asarray(self.model.apply(X)).reshape(X.shape[0], -1).astype(np.int64)
        return np.stack([rank[nodes[:, t]] for t, rank in enumerate(self.ranks)], axis=1).astype(np.int32)

    def init_raw(self, X: Any) -> np.ndarray:
        raw = gb_init_raw(self.model, X)  # an array, as in apply
        return np.asarray(raw, dtype=np.float64).reshape(X.shape[0], self.K)

    def margin(self, X: Any) -> np.ndarray:
        X_model = model_input(self.model, X)
        if self.classifier:
            return np.asarray(self.model.decision_function(X_model), dtype=np.float64).reshape(X.shape[0], self.K)
        return np.asarray(self.model.predict(X_model), dtype=np.float64).reshape(X.shape[0], 1)


class _HGBView:
    """What the explainer asks a HistGradientBoosting model (its trees predict node ids to give leaves)."""

    def __init__(self, model: Any, copies: list[Any], ranks: list[np.ndarray], K: int, classifier: bool) -> None:
        self.model, self.copies, self.ranks, self.K, self.classifier = model, copies, ranks, K, classifier

    def apply(self, X: Any) -> np.ndarray:
        X_model, known_cat_bitsets, f_idx_map = hgb_apply_input(self.model, model_input(self.model, X))
        out = np.empty((X_model.shape[0], len(self.copies)), dtype=np.int32)
        for t, predictor in enumerate(self.copies):
            nodes = predictor.predict(X_model, known_cat_bitsets, f_idx_map, 1).astype(np.int64)
            out[:, t] = self.ranks[t][nodes]
        return out

    def init_raw(self, X: Any) -> np.ndarray:
        return np.zeros((X.shape[0], self.K)) + hgb_baseline(self.model)

    def margin(self, X: Any) -> np.ndarray:
        X_model = model_input(self.model, X)
        if self.classifier:
            return np.asarray(self.model.decision_function(X_model), dtype=np.float64).reshape(X.shape[0], self.K)
        prediction = np.asarray(self.model.predict(X_model), dtype=np.float64).reshape(X.shape[0], 1)
        return prediction if self.model.loss == "squared_error" else np.log(prediction)
