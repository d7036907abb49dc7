"""LightGBM's LGBMRegressor / LGBMClassifier / Booster read into :class:`BoostedTrees` (imported only when used).

The trees come from ``dump_model()`` (leaf values with the learning rate applied, hessian sums and counts per
leaf), the settings from the canonical parameter names of ``model_to_string()``, the leaves of any rows from
``predict(pred_leaf=True)``, the raw margin from ``predict(raw_score=True)``. LightGBM folds its initial score
(``boost_from_average``) into the first tree of each class; it is taken out here and used as the base value.
LightGBM keeps scores and leaf values in float64 and gradients in float32 (labels and weights too); the replay
rounds them the same way, so the gradient decomposition reproduces the raw score to float64 rounding.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NoReturn

import lightgbm as lgb
import numpy as np
from numpy.typing import ArrayLike

from ..exceptions import DataValidationError, NotFittedError, UnsupportedModelError
from ..utils import check_labels, check_target, class_codes
from ._ensemble import BoostedTrees, Replay

__all__ = ["check", "read"]

#: Objectives (LightGBM's canonical names) whose gradients are replayed here.
OBJECTIVES = ("regression", "binary", "multiclass", "poisson")
_EPSILON = 1e-15  # LightGBM's kEpsilon


def _booster(model: Any) -> lgb.Booster:
    if isinstance(model, lgb.Booster):
        return model
    booster = getattr(model, "_Booster", None)
    if booster is None:
        raise NotFittedError(f"The model {type(model).__name__} is not fitted; call model.fit(X, y) before explaining "
                             "it.")
    return booster


def _parameters(booster: Any) -> dict[str, str]:
    """The canonical training parameters written in the model string."""
    text = booster.model_to_string()
    start, end = text.find("parameters:"), text.find("end of parameters")
    params = {}
    for line in text[start:end].splitlines():
        if line.startswith("[") and ": " in line:
            key, value = line[1:-1].split(": ", 1)
            params[key] = value
    return params


def _refuse(setting: str, why: str, instead: str) -> NoReturn:
    raise UnsupportedModelError(f"LightGBM {setting}: {why}; {instead}.")


def _check_parameters(p: dict) -> None:
    def number(key: str, default: float = 0.0) -> float:
        try:
            return float(p.get(key, default))
        except ValueError:
            return default

    boosting = p.get("boosting", "gbdt")
    if boosting != "gbdt":
        _refuse(f"boosting={boosting!r}", "only plain gradient boosting is a sum of Newton-step trees over all rows",
                "use boosting='gbdt'")
    if p.get("data_sample_strategy", "bagging") == "goss":
        _refuse("data_sample_strategy='goss'", "each tree sees a reweighted subset of rows that is not stored",
                "use the default bagging strategy without subsampling")
    objective = p.get("objective", "regression").split()[0]
    if objective not in OBJECTIVES:
        _refuse(f"objective={objective!r}", "its leaves are not replayed here (L1, Huber, fair, quantile, MAPE, "
                "gamma, Tweedie, cross-entropy and ranking objectives are not supported)",
                f"use one of {list(OBJECTIVES)}")
    if number("lambda_l1"):
        _refuse(f"lambda_l1={p['lambda_l1']}", "the L1 penalty soft-thresholds the gradient sums, so a leaf is not "
                "linear in its rows' gradients", "refit with reg_alpha=0")
    if number("max_delta_step") > 0:
        _refuse(f"max_delta_step={p['max_delta_step']}", "leaf steps are clipped", "refit with max_delta_step=0")
    if number("path_smooth"):
        _refuse(f"path_smooth={p['path_smooth']}", "leaf values are shrunk towards their parents'",
                "refit with path_smooth=0")
    if p.get("linear_tree", "0") not in ("0", "false", "False"):
        _refuse("linear_tree=True", "leaves hold linear models", "refit with linear_tree=False")
    if p.get("use_quantized_grad", "0") not in ("0", "false", "False"):
        _refuse("use_quantized_grad=True", "gradients are quantised with stochastic rounding",
                "refit with use_quantized_grad=False")
    if number("bagging_freq") > 0 and min(number("bagging_fraction", 1), number("pos_bagging_fraction", 1),
                                          number("neg_bagging_fraction", 1)) < 1:
        _refuse(f"bagging_fraction={p.get('bagging_fraction')} with bagging_freq={p.get('bagging_freq')}",
                "each tree is fitted on a random subset of rows that LightGBM does not store",
                "refit with subsample=1.0 (bagging_fraction=1)")
    if objective == "regression" and p.get("reg_sqrt", "0") not in ("0", "false", "False"):
        _refuse("reg_sqrt=True", "the model is fitted to the square root of the target",
                "refit with reg_sqrt=False")
    if any(v.strip() not in ("", "0") for v in p.get("monotone_constraints", "").split(",")):
        _refuse("monotone_constraints", "leaf values are clipped to keep the model monotone",
                "refit without monotone_constraints")


def check(model: Any) -> None:
    """Refuse settings whose leaves are not Newton steps of known rows (parameters first, then the fit)."""
    if not isinstance(model, lgb.Booster):
        params = model.get_params()
        subsample, freq = params.get("subsample", 1.0), params.get("subsample_freq", 0)
        canonical = {"boosting": params.get("boosting_type", "gbdt"), "lambda_l1": params.get("reg_alpha", 0),
                     "bagging_fraction": subsample, "bagging_freq": freq}
        if isinstance(params.get("objective"), str):
            canonical["objective"] = {"l2": "regression", "mse": "regression", "mean_squared_error": "regression",
                                      "regression_l2": "regression", "softmax": "multiclass"}.get(
                params["objective"], params["objective"])
        _check_parameters({k: str(v) for k, v in canonical.items() if v is not None})
    _check_parameters(_parameters(_booster(model)))


def _walk(node: dict[str, Any], values: list[float], l2s: list[float], counts: list[float], l2: float,
          split_l2: Callable[[dict[str, Any]], float]) -> None:
    """Fill each leaf's value, row count and L2 term (``l2``: that of the split that made the leaf)."""
    if "leaf_value" in node:
        leaf = node.get("leaf_index", 0)
        values[leaf] = node["leaf_value"]
        l2s[leaf] = l2
        counts[leaf] = node.get("leaf_count", -1)
        return
    for child in (node["left_child"], node["right_child"]):
        _walk(child, values, l2s, counts, split_l2(node), split_l2)


def _split_l2(params: dict[str, str], feature_infos: list[dict[str, Any]]) -> Callable[[dict[str, Any]], float]:
    """The L2 term of the leaves a split makes: ``lambda_l2``, plus ``cat_l2`` below a many-vs-many categorical split.

    LightGBM splits a categorical feature one-vs-rest when it has at most ``max_cat_to_onehot`` bins (its
    ``feature_infos`` values), else many-vs-many, and then adds ``cat_l2`` to the leaf outputs' L2 penalty.
    """
    l2 = float(params.get("lambda_l2", 0))
    cat_l2, one_hot = float(params.get("cat_l2", 10)), int(float(params.get("max_cat_to_onehot", 4)))

    def split_l2(node: dict[str, Any]) -> float:
        if node.get("decision_type") != "==":
            return l2
        bins = len(feature_infos[int(node["split_feature"])].get("values", []))
        return l2 if bins <= one_hot else l2 + cat_l2

    return split_l2


class _View:
    """What the explainer asks a LightGBM model: leaves, initial and full raw scores."""

    def __init__(self, booster: Any, n_iter: int, K: int, base: np.ndarray) -> None:
        self.booster, self.n_iter, self.K, self.base = booster, n_iter, K, base

    def apply(self, X: Any) -> np.ndarray:
        return np.asarray(self.booster.predict(X, pred_leaf=True, num_iteration=self.n_iter)).reshape(
            X.shape[0], -1).astype(np.int32)

    def init_raw(self, X: Any) -> np.ndarray:
        return np.broadcast_to(self.base, (X.shape[0], self.K)).copy()

    def margin(self, X: Any) -> np.ndarray:
        out = self.booster.predict(X, raw_score=True, num_iteration=self.n_iter)
        return np.asarray(out, dtype=np.float64).reshape(X.shape[0], self.K)


def _labels(model: Any, y: ArrayLike, n: int, objective: str) -> tuple[np.ndarray, np.ndarray | None]:
    if objective in ("regression", "poisson"):
        return check_target(y, n), None
    classes = getattr(model, "classes_", None)
    if classes is None:  # a Booster: labels are the class indices it was trained on
        labels = check_labels(y, n)
        return check_target(labels, n), labels
    labels = check_labels(y, n)
    codes = class_codes(labels, n, classes, classes_of="the classes the classifier was fitted on")
    return codes.astype(np.float64), labels


def read(model: Any, X: Any, y: ArrayLike, sample_weight: ArrayLike) -> BoostedTrees:
    """Read a fitted LightGBM model fitted on ``(X, y, sample_weight)``."""
    check(model)
    booster = _booster(model)
    params = _parameters(booster)
    dump = booster.dump_model()
    objective = dump["objective"].split()[0]
    K = int(dump["num_tree_per_iteration"])
    n = X.shape[0]
    best = booster.best_iteration
    n_iter = best if best and best > 0 else booster.current_iteration()
    infos = [dump["feature_infos"].get(name, {}) for name in dump["feature_names"]]  # unused columns: absent
    n_leaves, leaf_values, counts, l2 = _read_trees(dump["tree_info"][: n_iter * K], _split_l2(params, infos))

    codes, labels = _labels(model, y, n, objective)
    y64 = codes.astype(np.float32).astype(np.float64)
    weights = _row_weights(model, labels, sample_weight, n)
    w32 = np.ones(n, dtype=np.float32) if weights is None else weights.astype(np.float32)
    w64 = w32.astype(np.float64)

    base = _initial_score(params, objective, codes, y64, w64, K)
    leaf_values[:K] -= base[:, None]  # tree k of the first iteration holds base_k
    for k in range(K):
        leaf_values[k, n_leaves[k]:] = 0.0
    view = _View(booster, n_iter, K, base)
    train_leaves = np.ascontiguousarray(view.apply(X).T)
    _check_leaf_counts(train_leaves, n_leaves, counts)

    gradients = _gradient_function(params, objective, codes, y64, w32, w64, weights is not None, K)

    def add_tree(raw: np.ndarray, t: int) -> None:
        raw[:, t % K] += leaf_values[t, train_leaves[t]]

    init = "mean" if objective == "regression" and base[0] != 0.0 else "constant"
    return BoostedTrees(
        library="lightgbm", loss=objective if objective != "regression" else "squared_error", n_outputs=K,
        learning_rate=float(params.get("learning_rate", 0.1)), l2=l2,
        tree_output=np.tile(np.arange(K), n_iter).astype(np.int64),
        n_leaves=n_leaves, train_leaves=train_leaves, leaf_values=leaf_values, row_weight=w64,
        used=np.ones(n, bool), init=init, init_constant=base.copy(), targets=y64, view=view, float32=True,
        replay=Replay(raw=np.broadcast_to(base, (n, K)).copy(), gradients=gradients, add_tree=add_tree),
    )


def _read_trees(infos: list[dict[str, Any]], split_l2: Callable[[dict[str, Any]], float]
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray, float | np.ndarray]:
    """Leaves per tree, leaf values (trees x most leaves, zero-padded), rows per leaf (-1 where not dumped) and the
    L2 term of the leaves (one number when every leaf has the same, else per leaf)."""
    n_leaves = np.array([int(info["num_leaves"]) for info in infos], dtype=np.int64)
    leaf_values = np.zeros((len(infos), int(n_leaves.max())))
    base_l2 = split_l2({})
    l2s, counts = np.full_like(leaf_values, base_l2), np.zeros(leaf_values.shape, dtype=np.int64)
    for t, info in enumerate(infos):
        _walk(info["tree_structure"], leaf_values[t], l2s[t], counts[t], base_l2, split_l2)
    return n_leaves, leaf_values, counts, base_l2 if np.all(l2s == base_l2) else l2s


def _row_weights(model: Any, labels: np.ndarray | None, sample_weight: ArrayLike | None,
                 n: int) -> np.ndarray | None:
    """The training rows' weights: ``sample_weight`` times the classifier's ``class_weight`` (None: all 1)."""
    weights = None if sample_weight is None else check_target(sample_weight, n, name="sample_weight")
    class_weight = getattr(model, "class_weight", None)
    if class_weight is not None and labels is not None:
        from sklearn.utils.class_weight import compute_sample_weight

        extra = compute_sample_weight(class_weight, labels)
        weights = extra if weights is None else weights * extra
    return weights


def _initial_score(params: dict[str, str], objective: str, codes: np.ndarray, y64: np.ndarray, w64: np.ndarray,
                   K: int) -> np.ndarray:
    """The initial score LightGBM adds to the first tree of each class (``boost_from_average``), else 0."""
    base = np.zeros(K)
    if params.get("boost_from_average", "1") in ("1", "true", "True"):
        total = w64.sum()
        if objective == "regression":
            base[:] = np.sum(y64 * w64) / total
        elif objective == "poisson":
            base[:] = np.log(np.sum(y64 * w64) / total)
        elif objective == "binary":
            p = np.clip(np.sum((y64 > 0) * w64) / total, _EPSILON, 1 - _EPSILON)
            base[:] = np.log(p / (1 - p)) / float(params.get("sigmoid", 1))
        else:
            p = np.bincount(codes.astype(np.int64), weights=w64, minlength=K) / total
            base[:] = np.log(np.maximum(_EPSILON, p))
    base[np.abs(base) <= _EPSILON] = 0.0
    return base


def _check_leaf_counts(train_leaves: np.ndarray, n_leaves: np.ndarray, counts: np.ndarray) -> None:
    """Refuse training rows that do not fill each tree's leaves with the dumped counts (where dumped)."""
    for t in range(len(n_leaves)):
        found = np.bincount(train_leaves[t], minlength=n_leaves[t])
        if np.all(counts[t, : n_leaves[t]] >= 0) and not np.array_equal(found, counts[t, : n_leaves[t]]):
            raise DataValidationError(f"The training rows do not fill the leaves of tree {t} as in fitting (rows per "
                                      "leaf): pass exactly the X given to fit (same rows, same order).")


def _label_weights(params: dict[str, str], objective: str, y64: np.ndarray) -> np.ndarray:
    """The binary objective's weights of the negative and positive labels (``is_unbalance``, ``scale_pos_weight``)."""
    n = y64.shape[0]
    label_weight = np.ones(2)
    if objective == "binary":
        positives = int(np.sum(y64 > 0))
        if params.get("is_unbalance", "0") in ("1", "true", "True") and 0 < positives < n:
            negatives = n - positives
            if positives > negatives:
                label_weight[0] = positives / negatives
            else:
                label_weight[1] = negatives / positives
        label_weight[1] *= float(params.get("scale_pos_weight", 1))
    return label_weight


def _gradient_function(params: dict[str, str], objective: str, codes: np.ndarray, y64: np.ndarray,
                       w32: np.ndarray, w64: np.ndarray, weighted: bool,
                       K: int) -> Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]:
    """``gradients(raw) -> (negative gradients, hessians)`` of the objective, rounded through float32 as LightGBM."""
    n = y64.shape[0]
    sigmoid = float(params.get("sigmoid", 1))
    label_weight = _label_weights(params, objective, y64)
    poisson_step = float(params.get("poisson_max_delta_step", 0.7))

    def gradients(raw: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        if objective == "regression":  # LightGBM rounds the residual to float32, then weighs it in float32
            g = (raw[:, 0] - y64).astype(np.float32) * w32
            h = w64 if weighted else np.ones(n)
        elif objective == "poisson":
            g, h = (np.exp(raw[:, 0]) - y64) * w64, np.exp(raw[:, 0] + poisson_step) * w64
        elif objective == "binary":
            sign = np.where(y64 > 0, 1.0, -1.0)
            response = -sign * sigmoid / (1.0 + np.exp(sign * sigmoid * raw[:, 0]))
            size = np.abs(response)
            lw = label_weight[(y64 > 0).astype(np.int64)]
            g, h = response * lw * w64, size * (sigmoid - size) * lw * w64
        else:
            shifted = np.exp(raw - raw.max(axis=1, keepdims=True))
            p = shifted / shifted.sum(axis=1, keepdims=True)
            truth = codes[:, None] == np.arange(K)[None, :]
            factor = K / (K - 1.0)
            g, h = (p - truth) * w64[:, None], factor * p * (1.0 - p) * w64[:, None]
        g = np.asarray(g).reshape(n, K).astype(np.float32).astype(np.float64)
        h = np.asarray(h).reshape(n, K).astype(np.float32).astype(np.float64)
        return -g, h

    return gradients
