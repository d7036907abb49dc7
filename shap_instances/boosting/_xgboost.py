"""XGBoost's XGBRegressor / XGBClassifier / Booster read into :class:`BoostedTrees` (imported only when used).

The trees come from the model's JSON (``save_raw("json")``: leaf values with the learning rate applied,
hessian sums per node), the leaves of any rows from ``predict(pred_leaf=True)``, the raw margin from
``predict(output_margin=True)``. XGBoost keeps its margins, gradients and leaf values in float32; the replay
does the same (float32 margins, gradients and hessians computed in float32 with XGBoost's formulas), so each
recomputed leaf value matches the stored one to float32 rounding, and the decomposition reproduces the
margin to float32 rounding (see the docs for the bound).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, NoReturn

import numpy as np
import xgboost as xgb
from numpy.typing import ArrayLike

from ..exceptions import DataValidationError, NotFittedError, UnsupportedModelError
from ..utils import check_target, class_codes
from ._ensemble import BoostedTrees, Replay, leaf_ranks

__all__ = ["check", "read"]

#: Objectives whose leaves are Newton steps XGBoost's formulas are replayed for.
OBJECTIVES = ("reg:squarederror", "binary:logistic", "binary:logitraw", "reg:logistic", "multi:softprob",
              "multi:softmax", "count:poisson")


def _booster(model: Any) -> Any:
    if isinstance(model, xgb.Booster):
        return model
    try:
        return model.get_booster()
    except Exception as exc:  # xgboost raises its own NotFittedError (a ValueError) or XGBoostError
        raise NotFittedError(f"The model {type(model).__name__} is not fitted; call model.fit(X, y) before "
                             "explaining it.") from exc


def _refuse(setting: str, why: str, instead: str) -> NoReturn:
    raise UnsupportedModelError(f"XGBoost {setting}: {why}; {instead}.")


def _check_settings(booster_name: str | None, objective: str | None, alpha: float | None, subsample: float | None,
                    parallel: int | None,
                    multi_strategy: str | None, monotone: Any) -> None:
    if booster_name not in (None, "gbtree"):
        _refuse(f"booster={booster_name!r}", "only tree boosting without dropout is a sum of Newton-step trees",
                "use booster='gbtree'")
    if objective is not None and objective not in OBJECTIVES:
        _refuse(f"objective={objective!r}", "its leaves are not replayed here (absolute, quantile, ranking, "
                "survival, gamma and Tweedie objectives are not supported)", f"use one of {list(OBJECTIVES)}")
    if alpha:
        _refuse(f"reg_alpha={alpha}", "the L1 penalty soft-thresholds the gradient sums, so a leaf is not linear in "
                "its rows' gradients", "refit with reg_alpha=0")
    if subsample is not None and subsample < 1:
        _refuse(f"subsample={subsample}", "each tree is fitted on a random subset of rows that XGBoost does not "
                "store", "refit with subsample=1")
    if parallel not in (None, 1):
        _refuse(f"num_parallel_tree={parallel}", "boosted random forests are not supported",
                "refit with num_parallel_tree=1")
    if multi_strategy not in (None, "one_output_per_tree"):
        _refuse(f"multi_strategy={multi_strategy!r}", "vector-leaf trees are not supported",
                "use multi_strategy='one_output_per_tree'")
    if monotone not in (None, "", "()", {}, ()) and any(float(v) != 0 for v in _constraint_values(monotone)):
        _refuse("monotone_constraints", "leaf values are clipped to keep the model monotone",
                "refit without monotone_constraints")


def _constraint_values(monotone: Any) -> list[Any]:
    if isinstance(monotone, dict):
        return list(monotone.values())
    if isinstance(monotone, str):
        return [v for v in monotone.strip("()").split(",") if v.strip()]
    return list(monotone)


def _config(booster: Any) -> dict:
    return json.loads(booster.save_config())


def check(model: Any) -> None:
    """Refuse settings whose leaves are not Newton steps of known rows (parameters first, then the fit)."""
    if not isinstance(model, xgb.Booster):
        params = model.get_params()
        _check_settings(params.get("booster"), params.get("objective"), params.get("reg_alpha"),
                        params.get("subsample"), params.get("num_parallel_tree"),
                        params.get("multi_strategy"), params.get("monotone_constraints"))
    booster = _booster(model)
    learner = _config(booster)["learner"]
    gbm = learner["gradient_booster"]
    if gbm["name"] != "gbtree":
        _check_settings(gbm["name"], None, 0, None, None, None, None)
    tree = gbm["tree_train_param"]
    _check_settings("gbtree", learner["objective"]["name"], float(tree["alpha"]), float(tree["subsample"]),
                    int(gbm["gbtree_model_param"]["num_parallel_tree"]),
                    learner["learner_train_param"].get("multi_strategy"), tree.get("monotone_constraints"))


def _floats(text: str) -> np.ndarray:
    return np.array([float(v) for v in str(text).strip("[]").split(",")], dtype=np.float32)


def _base_margin(learner: Any) -> np.ndarray:
    """The initial margin per output (float32), from base_score and the objective's link."""
    objective = learner["objective"]["name"]
    base = _floats(learner["learner_model_param"]["base_score"])
    if objective in ("binary:logistic", "reg:logistic"):
        return (-np.log(np.float32(1.0) / base - np.float32(1.0))).astype(np.float32)
    if objective == "count:poisson":
        return np.log(base).astype(np.float32)
    return base


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return np.float32(1.0) / (np.exp(-x) + np.float32(1.0))


class _View:
    """What the explainer asks an XGBoost model: leaves, initial and full raw margins."""

    def __init__(self, booster: Any, n_rounds: int, ranks: list[np.ndarray], K: int, base: np.ndarray,
                 missing: float) -> None:
        self.booster, self.n_rounds, self.ranks, self.K, self.base, self.missing = (
            booster, n_rounds, ranks, K, base, missing)

    def _matrix(self, X: Any) -> Any:
        categorical = hasattr(X, "dtypes") and any(str(t) == "category" for t in X.dtypes)
        return xgb.DMatrix(X, missing=self.missing, feature_names=self.booster.feature_names,
                           enable_categorical=categorical)

    def apply(self, X: Any) -> np.ndarray:
        nodes = self.booster.predict(self._matrix(X), pred_leaf=True, iteration_range=(0, self.n_rounds))
        nodes = np.asarray(nodes).reshape(X.shape[0], -1).astype(np.int64)
        return np.stack([rank[nodes[:, t]] for t, rank in enumerate(self.ranks)], axis=1).astype(np.int32)

    def init_raw(self, X: Any) -> np.ndarray:
        return np.broadcast_to(self.base.astype(np.float64), (X.shape[0], self.K)).copy()

    def margin(self, X: Any) -> np.ndarray:
        out = self.booster.predict(self._matrix(X), output_margin=True, iteration_range=(0, self.n_rounds))
        return np.asarray(out, dtype=np.float64).reshape(X.shape[0], self.K)


def read(model: Any, X: Any, y: ArrayLike, sample_weight: ArrayLike) -> BoostedTrees:
    """Read a fitted XGBoost model fitted on ``(X, y, sample_weight)``."""
    check(model)
    booster = _booster(model)
    learner = _config(booster)["learner"]
    objective = learner["objective"]["name"]
    n = X.shape[0]
    K = max(1, int(learner["learner_model_param"]["num_class"]))
    n_rounds = _rounds(model, booster)
    raw_model = json.loads(booster.save_raw("json"))["learner"]["gradient_booster"]["model"]
    trees_json = raw_model["trees"][: n_rounds * K]
    # categorical splits (split_type 1) are routed by XGBoost itself (pred_leaf on a DataFrame with pandas
    # categories); the leaves of the training rows are checked against the stored covers below
    tree_param = learner["gradient_booster"]["tree_train_param"]
    max_step = float(tree_param["max_delta_step"])
    ranks, covers, n_leaves, leaf_values32 = _read_trees(trees_json)
    base = np.broadcast_to(_base_margin(learner), (K,)).astype(np.float32)
    missing = getattr(model, "missing", np.nan) if not isinstance(model, xgb.Booster) else np.nan
    view = _View(booster, n_rounds, ranks, K, base, missing)

    y32 = _targets(model, y, n, objective.startswith(("binary:", "multi:")), K)
    weights = None if sample_weight is None else check_target(sample_weight, n, name="sample_weight")
    w32 = np.ones(n, dtype=np.float32) if weights is None else weights.astype(np.float32)
    train_leaves = np.ascontiguousarray(view.apply(X).T)
    if objective == "reg:squarederror":  # the covers are the rows' weights only when every hessian is 1
        _check_covers(train_leaves, covers, n_leaves, w32)
    gradients = _gradient_function(learner["objective"], objective, y32, w32, K)

    def add_tree(raw: np.ndarray, t: int) -> None:
        raw[:, t % K] += leaf_values32[t, train_leaves[t]]

    return BoostedTrees(
        library="xgboost", loss="squared_error" if objective == "reg:squarederror" else objective, n_outputs=K,
        learning_rate=float(tree_param["eta"]), l2=float(tree_param["lambda"]),
        tree_output=np.tile(np.arange(K), n_rounds).astype(np.int64), n_leaves=n_leaves, train_leaves=train_leaves,
        leaf_values=leaf_values32.astype(np.float64), row_weight=w32.astype(np.float64), used=np.ones(n, bool),
        init=_init_kind(objective, base, y32, w32), init_constant=base.astype(np.float64),
        targets=y32.astype(np.float64), view=view, float32=True,
        replay=Replay(raw=np.broadcast_to(base, (n, K)).astype(np.float32), gradients=gradients, add_tree=add_tree,
                      max_step=max_step if max_step > 0 else None),
    )


def _rounds(model: Any, booster: Any) -> int:
    """Boosting rounds the model predicts with: up to its best iteration after early stopping (scikit-learn API)."""
    n_rounds = booster.num_boosted_rounds()
    best = getattr(model, "best_iteration", None) if not isinstance(model, xgb.Booster) else None
    if best is not None:
        n_rounds = int(best) + 1  # what the scikit-learn API predicts with after early stopping
    return n_rounds


def _read_trees(trees_json: list[dict[str, Any]]) -> tuple[list[np.ndarray], list[np.ndarray], np.ndarray,
                                                             np.ndarray]:
    """Each tree's leaf ranks and leaf covers (hessian sums), the leaves per tree, and the leaf values (float32,
    trees x most leaves, zero-padded)."""
    ranks, leaf_lists = [], []
    for tree in trees_json:
        is_leaf = np.asarray(tree["left_children"]) == -1
        ranks.append(leaf_ranks(is_leaf))
        leaf_lists.append((np.asarray(tree["split_conditions"], dtype=np.float32)[is_leaf],
                           np.asarray(tree["sum_hessian"], dtype=np.float64)[is_leaf]))
    n_leaves = np.array([values.size for values, _ in leaf_lists], dtype=np.int64)
    leaf_values32 = np.zeros((len(trees_json), int(n_leaves.max())), dtype=np.float32)
    for t, (values, _) in enumerate(leaf_lists):
        leaf_values32[t, : values.size] = values
    return ranks, [cover for _, cover in leaf_lists], n_leaves, leaf_values32


def _targets(model: Any, y: ArrayLike, n: int, classifier: bool, K: int) -> np.ndarray:
    """The training targets as XGBoost saw them (float32; class indices for a classifier)."""
    if not classifier:
        return np.asarray(check_target(y, n), dtype=np.float32)
    classes = getattr(model, "classes_", np.arange(max(K, 2)))  # a Booster: the class indices it was trained on
    return class_codes(y, n, classes, classes_of="the classes the classifier was fitted on").astype(np.float32)


def _check_covers(train_leaves: np.ndarray, covers: list[np.ndarray], n_leaves: np.ndarray, w32: np.ndarray) -> None:
    """Refuse training rows whose weights do not sum to each leaf's cover (squared error: the hessian sums)."""
    for t, cover in enumerate(covers):
        if not np.allclose(np.bincount(train_leaves[t], weights=w32.astype(np.float64), minlength=n_leaves[t]),
                           cover, rtol=1e-5):
            raise DataValidationError(f"The training rows do not fill the leaves of tree {t} as in fitting (total "
                                      "weight per leaf): pass exactly the X and sample_weight given to fit.")


def _gradient_function(params: dict[str, Any], objective: str, y32: np.ndarray, w32: np.ndarray,
                       K: int) -> Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]:
    """``gradients(raw) -> (negative gradients, hessians)`` of the objective, in float32 as XGBoost computes them."""
    n = y32.shape[0]
    scale_pos = float(params.get("reg_loss_param", {}).get("scale_pos_weight", 1.0))
    poisson_step = float(params.get("poisson_regression_param", {}).get("max_delta_step", 0.7))

    def gradients(raw: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        if objective == "reg:squarederror":
            g, h = raw[:, 0] - y32, np.ones(n, dtype=np.float32)
            g, h = g[:, None], h[:, None]
        elif objective == "count:poisson":
            g = np.exp(raw[:, 0]) - y32
            h = np.exp(raw[:, 0] + np.float32(poisson_step))
            g, h = g[:, None], h[:, None]
        elif K == 1:
            p = _sigmoid(raw[:, 0])
            g, h = p - y32, np.maximum(p * (np.float32(1.0) - p), np.float32(1e-16))
            w = np.where(y32 == 1, np.float32(scale_pos), np.float32(1.0)).astype(np.float32)
            g, h = (g * w)[:, None], (h * w)[:, None]
        else:
            shifted = np.exp(raw - raw.max(axis=1, keepdims=True))
            p = shifted / shifted.sum(axis=1, keepdims=True, dtype=np.float32)
            truth = (y32[:, None] == np.arange(K, dtype=np.float32)[None, :]).astype(np.float32)
            g = p - truth
            h = np.maximum(np.float32(2.0) * p * (np.float32(1.0) - p), np.float32(1e-16))
        g, h = (g * w32[:, None]).astype(np.float32), (h * w32[:, None]).astype(np.float32)
        return -g.astype(np.float64), h.astype(np.float64)

    return gradients


def _init_kind(objective: str, base: np.ndarray, y32: np.ndarray, w32: np.ndarray) -> str:
    """``"mean"`` when base_score was estimated from y (squared error, the default), else ``"constant"``."""
    if objective == "reg:squarederror":
        mean = float(np.average(y32.astype(np.float64), weights=w32.astype(np.float64)))
        spread = float(np.std(y32)) + abs(mean)
        if abs(float(base[0]) - mean) <= 1e-6 * max(spread, 1e-30):
            return "mean"  # base_score was estimated from y (the default): the weighted mean, in float32
    return "constant"
