"""What a loaded file's objects may hold before anything uses them: indices inside their buffers, no file names.

skops checks a file's *types*; some allowed types carry *indices* that compiled code follows without bounds
checks (a scikit-learn ``Tree``'s children and features, a HistGradientBoosting ``TreePredictor``'s nodes and
category bitsets, a GradientBoosting model's grid of trees), so a crafted file of allowed types could still
crash the process at the first ``predict``. Others carry parameters that make a refit read or write files or
reach other machines (a pipeline's ``memory`` folder, CatBoost's ``train_dir``, LightGBM's ``output_model``).
:func:`check_model_state` walks every object the file built and refuses both, naming the object and the fault.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from ..exceptions import DataValidationError
from ._sklearn_internals import sklearn_tree_class

__all__ = ["FILE_PARAMETERS", "check_model_state"]

#: Estimator parameters that name files, folders or machines a fit would read, write or reach; a loaded model
#: whose value for one of them is set (not None / False / empty) is refused.
FILE_PARAMETERS = frozenset({
    "memory",  # scikit-learn: a joblib cache folder
    "train_dir", "snapshot_file", "save_snapshot", "input_borders", "output_borders", "json_log",  # CatBoost
    "profile_log", "learn_error_log", "test_error_log", "time_left_log",
    "output_model", "model_output", "model_out", "input_model", "model_input", "model_in", "save_binary",  # LightGBM
    "is_save_binary", "is_save_binary_file", "output_result", "predict_result", "prediction_result",
    "convert_model", "convert_model_file", "forcedsplits_filename", "forced_splits", "forced_splits_file",
    "forced_splits_filename", "fs", "forcedbins_filename", "machine_list_filename", "machine_list_file",
    "machine_list", "mlist", "machines", "workers", "nodes", "local_listen_port", "local_port", "port",
    "initscore_filename", "init_score_filename", "init_score_file", "init_score", "input_init_score",
})
_BUILT_BY_FILES = ("sklearn.", "xgboost.", "lightgbm.", "catboost.", "shap_instances.")


def check_model_state(value: Any, name: str) -> None:
    """Refuse a loaded object graph whose trees index outside their buffers or whose models name files.

    Raises :class:`~shap_instances.exceptions.DataValidationError` naming the file (``name``), the object and
    what is wrong. Objects a legitimate save wrote always pass.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.tree import DecisionTreeRegressor
    >>> from shap_instances.utils._model_state import check_model_state
    >>> check_model_state({"model": DecisionTreeRegressor().fit(np.eye(3), [0.0, 1.0, 2.0])}, "'m.skops'")
    """
    objects = list(_objects(value))
    # the index-carrying objects first, the owners' cross-checks next, and last what runs a model (a
    # GradientBoosting's init estimator predicts), once every tree it could reach has passed
    for check in (_index_problem, _problem, _init_problem):
        problem = next(filter(None, map(check, objects)), None)
        if problem:
            raise DataValidationError(f"{name} holds {problem}: it was not written by a fitted model's save (it "
                                      "is damaged or crafted); save the model again from the fitted estimator.")


def _objects(value: Any) -> Iterator[Any]:
    """Every object reachable from ``value`` through containers and the state of the types a file may build."""
    stack, seen = [value], set()
    while stack:
        obj = stack.pop()
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        yield obj
        if isinstance(obj, dict):
            stack.extend(obj.values())
        elif isinstance(obj, list | tuple | set | frozenset):
            stack.extend(obj)
        elif isinstance(obj, np.ndarray) and obj.dtype == object:
            stack.extend(obj.ravel().tolist())
        elif type(obj).__module__.startswith(_BUILT_BY_FILES) and isinstance(getattr(obj, "__dict__", None), dict):
            stack.extend(vars(obj).values())


def _kind(obj: Any) -> str:
    return f"{type(obj).__module__}.{type(obj).__name__}"


def _index_problem(obj: Any) -> str | None:
    kind = _kind(obj)
    if kind == "sklearn.tree._tree.Tree":
        return _tree_problem(obj)
    if kind in ("sklearn.neighbors._kd_tree.KDTree", "sklearn.neighbors._ball_tree.BallTree"):
        return _binary_tree_problem(obj)
    if kind == "sklearn.ensemble._hist_gradient_boosting.predictor.TreePredictor":
        return _predictor_nodes_problem(obj)
    return None


def _problem(obj: Any) -> str | None:
    kind = _kind(obj)
    if not kind.startswith(_BUILT_BY_FILES) or not hasattr(obj, "get_params"):
        return None
    problem = _parameter_problem(obj)
    if problem is None and isinstance(getattr(obj, "tree_", None), sklearn_tree_class()):
        problem = _tree_owner_problem(obj, obj.tree_)
    if problem is None and kind.startswith("sklearn.ensemble._gb."):
        problem = _gradient_boosting_problem(obj)
    if problem is None and kind.startswith("sklearn.ensemble._hist_gradient_boosting.gradient_boosting."):
        problem = _hist_boosting_problem(obj)
    return problem


def _parameter_problem(model: Any) -> str | None:
    try:
        params = model.get_params(deep=False)
    except Exception as exc:  # noqa: BLE001 - a fitted model always has its parameters
        return f"a {type(model).__name__} without its parameters ({type(exc).__name__}: {exc})"
    named = sorted(key for key, setting in params.items() if key in FILE_PARAMETERS and _is_set(setting))
    if named:
        return (f"a {type(model).__name__} whose parameters {named} name files, folders or machines a refit "
                f"would use ({', '.join(f'{key}={params[key]!r}' for key in named)[:200]})")
    return None


def _is_set(setting: Any) -> bool:
    return setting is not None and setting is not False and not (isinstance(setting, str | list | tuple | dict)
                                                                 and len(setting) == 0)


def _structure_problem(left: np.ndarray, right: np.ndarray, leaf: np.ndarray) -> str | None:
    """Children after their parent, inside the array, and every node but the root some node's child once."""
    n = len(leaf)
    inner = np.flatnonzero(~leaf)
    children = np.concatenate([left[inner], right[inner]]).astype(np.int64)
    if np.any(children <= np.concatenate([inner, inner])) or np.any(children >= n):
        return f"a tree whose children point outside its {n} nodes or back to an ancestor"
    if not np.array_equal(np.sort(children), np.arange(1, n)):
        return f"a tree whose {n} nodes are shared by two parents or unreachable"
    return None


def _tree_problem(tree: Any) -> str | None:
    n = tree.node_count
    if not 0 < n == tree.capacity or tree.n_outputs < 1 or tree.n_features < 1:
        return (f"a tree of {n} nodes in a buffer of {tree.capacity}, {tree.n_features} features and "
                f"{tree.n_outputs} outputs")
    left, right, feature = tree.children_left, tree.children_right, tree.feature
    leaf = left == -1
    if np.any(leaf != (right == -1)):
        return "a tree whose nodes have one child"
    problem = _structure_problem(left, right, leaf)
    if problem is None and np.any((feature[~leaf] < 0) | (feature[~leaf] >= tree.n_features)):
        problem = f"a tree that splits on features outside its {tree.n_features}"
    if problem is None and _depth(left, right, leaf) != tree.max_depth:
        problem = f"a tree whose max_depth {tree.max_depth} is not its depth"
    return problem


def _depth(left: np.ndarray, right: np.ndarray, leaf: np.ndarray) -> int:
    """The depth of a tree already checked by :func:`_structure_problem` (so the walk ends)."""
    frontier, depth = np.array([0]), -1
    while frontier.size:
        inner = frontier[~leaf[frontier]]
        frontier, depth = np.concatenate([left[inner], right[inner]]), depth + 1
    return depth


def _tree_owner_problem(model: Any, tree: Any) -> str | None:
    if getattr(model, "n_features_in_", None) != tree.n_features:
        return (f"a {type(model).__name__} of {getattr(model, 'n_features_in_', None)} features whose tree has "
                f"{tree.n_features}")
    return None


def _stage_grid(model: Any) -> tuple[np.ndarray, int] | None:
    """A fitted GradientBoosting model's grid of trees (stages x trees per stage) and width; None if unfitted
    (check_fitted says so)."""
    grid, n = getattr(model, "estimators_", None), getattr(model, "n_features_in_", None)
    if isinstance(grid, np.ndarray) and grid.ndim == 2 and grid.size and isinstance(n, int) and n > 0:
        return grid, n
    return None


def _gradient_boosting_problem(model: Any) -> str | None:
    if (fitted := _stage_grid(model)) is None:
        return None
    grid, n = fitted
    for estimator in grid.ravel():
        tree: Any = getattr(estimator, "tree_", None)
        if not isinstance(tree, sklearn_tree_class()) or tree.n_features != n or tree.n_outputs != 1 \
                or tree.max_n_classes != 1 or getattr(estimator, "n_features_in_", None) != n:
            return f"a {type(model).__name__} of {n} features whose trees do not all take {n} features, one output"
    return None


def _init_problem(model: Any) -> str | None:
    """A GradientBoosting model's init estimator must give one raw prediction per tree of a stage."""
    from ._sklearn_internals import gb_init_raw

    if not _kind(model).startswith("sklearn.ensemble._gb.") or (fitted := _stage_grid(model)) is None:
        return None
    grid, n = fitted
    try:
        width = gb_init_raw(model, np.zeros((1, n))).shape[1]
    except Exception as exc:  # noqa: BLE001 - the init estimator is the file's; any failure is the file's fault
        return f"a {type(model).__name__} whose init estimator fails ({type(exc).__name__}: {exc})"
    if width != grid.shape[1]:
        return f"a {type(model).__name__} of {grid.shape[1]} trees per stage whose init estimator gives {width}"
    return None


def _hist_boosting_problem(model: Any) -> str | None:
    from ._sklearn_internals import hgb_bin_mapper, hgb_predictors

    n = getattr(model, "n_features_in_", None)
    try:
        mapper, predictors = hgb_bin_mapper(model), hgb_predictors(model)
    except AttributeError:
        return None  # not fitted: check_fitted says so
    is_categorical = np.asarray(getattr(mapper, "is_categorical_", ()), dtype=bool)
    thresholds = getattr(mapper, "bin_thresholds_", ())
    if not isinstance(n, int) or len(is_categorical) != n or len(thresholds) != n:
        return f"a {type(model).__name__} of {n} features whose binning describes {len(is_categorical)}"
    for f in np.flatnonzero(is_categorical):
        known = np.asarray(thresholds[f], dtype=float)
        if not np.all((known >= 0) & (known < 256)):
            return f"a {type(model).__name__} whose categories of feature {f} are not codes 0 to 255"
    for predictor in (p for iteration in predictors for p in iteration):
        problem = _predictor_problem(predictor, is_categorical)
        if problem:
            return problem
    return None


def _predictor_nodes_problem(predictor: Any) -> str | None:
    """A HistGradientBoosting ``TreePredictor`` on its own: node records forming a tree, category splits inside
    its bitsets."""
    nodes = getattr(predictor, "nodes", None)
    fields = {"left", "right", "is_leaf", "feature_idx", "is_categorical", "bitset_idx"}
    if not (isinstance(nodes, np.ndarray) and nodes.ndim == 1 and len(nodes) and fields <= set(nodes.dtype.names
                                                                                               or ())):
        return "a HistGradientBoosting tree without its node records"
    leaf = nodes["is_leaf"].astype(bool)
    problem = _structure_problem(nodes["left"], nodes["right"], leaf)
    split = nodes[~leaf & nodes["is_categorical"].astype(bool)]
    for bitsets in (getattr(predictor, "raw_left_cat_bitsets", None),
                    getattr(predictor, "binned_left_cat_bitsets", None)):
        if problem is None and not (isinstance(bitsets, np.ndarray) and bitsets.ndim == 2 and bitsets.shape[1] == 8
                                    and np.all(split["bitset_idx"] < bitsets.shape[0])):
            problem = "a HistGradientBoosting tree whose category splits point outside its bitsets"
    return problem


def _predictor_problem(predictor: Any, is_categorical: np.ndarray) -> str | None:
    """A ``TreePredictor`` of a model whose features are categorical where ``is_categorical``."""
    problem = _predictor_nodes_problem(predictor)
    if problem is None:
        nodes = predictor.nodes
        inner = nodes[~nodes["is_leaf"].astype(bool)]
        split = inner[inner["is_categorical"].astype(bool)]
        if np.any((inner["feature_idx"] < 0) | (inner["feature_idx"] >= len(is_categorical))):
            problem = f"a HistGradientBoosting tree that splits on features outside its {len(is_categorical)}"
        elif not np.all(is_categorical[split["feature_idx"]]):
            problem = "a HistGradientBoosting tree with a category split on a numeric feature"
    return problem


def _binary_tree_problem(tree: Any) -> str | None:
    """A KD- or ball-tree as scikit-learn builds it: a complete binary tree whose nodes split ranges of a
    permutation of the rows, leaves on the last level, bounds for every node, a metric that fits the data."""
    data, order, nodes, bounds, leaf_size, levels, n_nodes, *_, metric, weights = tree.__getstate__()
    if data.ndim != 2 or not data.shape[0] or bounds.ndim != 3:
        return f"a {type(tree).__name__} without its data or node bounds"
    n, d = data.shape
    if not _tree_layout_fits(n, d, order, nodes, bounds, (leaf_size, levels, n_nodes), weights):
        return f"a {type(tree).__name__} whose levels, nodes, bounds or row order do not fit its {n} x {d} data"
    if not _nodes_split_rows(nodes, n):
        return f"a {type(tree).__name__} whose nodes do not split its {n} rows"
    return _metric_problem(metric, d)


def _tree_layout_fits(n: int, d: int, order: Any, nodes: Any, bounds: Any, sizes: tuple, weights: Any) -> bool:
    """The tree's leaf size, levels and node count, its bounds, row order and weights fit ``n`` rows of ``d``."""
    leaf_size, levels, n_nodes = sizes
    return bool(isinstance(leaf_size, int) and leaf_size > 0 and levels == int(np.log2(max(1, (n - 1) / leaf_size)) + 1)
                and n_nodes == 2 ** levels - 1 == len(nodes) == bounds.shape[1] and bounds.shape[2] == d
                and order.shape == (n,) and np.array_equal(np.sort(order), np.arange(n))
                and (weights is None or np.shape(weights) == (n,)))


def _nodes_split_rows(nodes: Any, n: int) -> bool:
    """Each inner node's children split its range of rows in two; leaves on the last level; the root holds all ``n``."""
    i = np.arange(len(nodes))
    inner = i[2 * i + 1 < len(nodes)]
    start, end = nodes["idx_start"], nodes["idx_end"]
    return bool(np.array_equal(nodes["is_leaf"] != 0, 2 * i + 1 >= len(nodes)) and start[0] == 0 and end[0] == n
                and np.all(start[2 * inner + 1] == start[inner]) and np.all(end[2 * inner + 2] == end[inner])
                and np.all(end[2 * inner + 1] == start[2 * inner + 2]) and np.all(start <= end))


def _metric_problem(metric: Any, d: int) -> str | None:
    """The weights and matrices a tree's metric reads at the data's width ``d``."""
    name = type(metric).__name__
    vec, mat = np.shape(metric.__getstate__()[1]), np.shape(metric.__getstate__()[2])
    if (name.startswith("SEuclidean") and vec != (d,)) or (name.startswith("Minkowski") and vec not in ((0,), (d,))) \
            or (name.startswith("Mahalanobis") and mat != (d, d)) or (name.startswith("Haversine") and d != 2):
        return f"a {name} whose weights do not fit the tree's {d} features"
    return None
