"""The one place that reads scikit-learn's internals: private attributes, private modules, version-dependent fit rules.

``forest/`` and ``boosting/`` decompose a fitted scikit-learn ensemble into sums over its training rows, which
needs what ``fit`` did and what the public API does not give: the loss object a gradient-boosting model trained
with, HistGradientBoosting's trees (which have no public ``apply``), and how a forest weighted each bootstrap
draw. Every such read is an accessor below; each names the internal it reads, and every result it gives is
verified afterwards by the caller against the fitted model (each leaf's size and value recomputed from the
training rows), so a scikit-learn release that changes an internal fails loudly instead of giving wrong values.

Supported scikit-learn: :data:`SKLEARN_SUPPORTED` (``>=1.4,<1.10``). The lower bound is the package's
dependency (``pyproject.toml``); the upper bound is the newest release the tests ran on
(``scripts/test_oldest_sklearn.sh`` runs them on the oldest). A newer scikit-learn is used with a
:class:`~shap_instances.exceptions.SklearnVersionWarning`, once per process; an older one is refused.
"""

from __future__ import annotations

import copy
import functools
import inspect
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import sklearn
from sklearn.utils.class_weight import compute_class_weight, compute_sample_weight

from ..exceptions import DataValidationError, SklearnVersionWarning

__all__ = [
    "NEWEST_TESTED_SKLEARN",
    "OLDEST_SKLEARN",
    "SKLEARN_SUPPORTED",
    "bagging_n_samples",
    "check_sklearn_version",
    "estimator_type",
    "sklearn_compiled_losses",
    "sklearn_tree_class",
    "forest_class_weights",
    "forest_draw_semantics",
    "forest_inbag_draws",
    "forest_tree_weights",
    "gb_init_raw",
    "gb_loss",
    "hgb_apply_input",
    "hgb_baseline",
    "hgb_loss",
    "hgb_node_id_predictor",
    "hgb_predictors",
    "hgb_sample_weight",
    "hgb_split_seed",
    "logistic_one_vs_rest",
    "scorer_task",
    "sklearn_version",
]

#: The oldest scikit-learn release supported (the dependency's lower bound in ``pyproject.toml``).
OLDEST_SKLEARN = (1, 4)
#: The newest scikit-learn release the readers of its internals were tested on.
NEWEST_TESTED_SKLEARN = (1, 9)
#: The supported range, as a requirement specifier.
SKLEARN_SUPPORTED = ">=1.4,<1.10"

#: From this release a forest draws bootstrap samples with probabilities proportional to the sample weights
#: and fits each tree on the draw counts alone; before it, it drew uniformly and multiplied by the weights.
_DRAW_PROBABILITY_VERSION = (1, 9)


def estimator_type(model: Any) -> str | None:
    """scikit-learn's estimator type of ``model`` (``"classifier"``, ``"clusterer"``, ...): its tags from
    scikit-learn 1.6, the private ``_estimator_type`` before; None for an object without either.

    Examples
    --------
    >>> from sklearn.cluster import KMeans
    >>> from shap_instances.utils._sklearn_internals import estimator_type
    >>> estimator_type(KMeans())
    'clusterer'
    """
    try:
        from sklearn.utils import get_tags

        return get_tags(model).estimator_type
    except Exception:  # noqa: BLE001 - scikit-learn < 1.6, or an object that has no tags
        return getattr(model, "_estimator_type", None)


def sklearn_tree_class() -> Any:
    """scikit-learn's compiled ``Tree`` (``sklearn.tree._tree``): the type of a fitted tree's ``tree_``.

    Examples
    --------
    >>> from sklearn.tree import DecisionTreeRegressor
    >>> from shap_instances.utils._sklearn_internals import sklearn_tree_class
    >>> isinstance(DecisionTreeRegressor().fit([[0.0], [1.0]], [0.0, 1.0]).tree_, sklearn_tree_class())
    True
    """
    from sklearn.tree._tree import Tree

    return Tree


def sklearn_compiled_losses() -> list[type]:
    """The compiled losses of ``sklearn._loss._loss`` (``CyHalfSquaredError``, ...), which fitted gradient-boosting
    models and linear models hold.

    Examples
    --------
    >>> from shap_instances.utils._sklearn_internals import sklearn_compiled_losses
    >>> "CyHalfSquaredError" in {cls.__name__ for cls in sklearn_compiled_losses()}
    True
    """
    from sklearn._loss import _loss

    return [cls for name, cls in vars(_loss).items() if name.startswith("Cy") and isinstance(cls, type)]


def sklearn_version() -> tuple[int, int]:
    """The installed scikit-learn's ``(major, minor)`` release (``"1.9.dev0"`` gives ``(1, 9)``).

    Examples
    --------
    >>> from shap_instances.utils import sklearn_version
    >>> sklearn_version() >= (1, 4)
    True
    """
    parts = sklearn.__version__.split(".")
    return int(parts[0]), int("".join(ch for ch in parts[1] if ch.isdigit()) or 0)


def logistic_one_vs_rest(model: Any) -> bool:
    """Whether a fitted ``LogisticRegression`` of three or more classes fit one binary model per class.

    scikit-learn fits one-vs-rest with ``solver="liblinear"``, with ``multi_class="ovr"`` (removed in 1.8), and,
    before 1.6, with ``solver="newton-cholesky"``; every other case is one multinomial model. The coefficients
    of the two look alike, so a reader of them must ask.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.linear_model import LogisticRegression
    >>> from shap_instances.utils import logistic_one_vs_rest
    >>> X, y = load_iris(return_X_y=True)
    >>> logistic_one_vs_rest(LogisticRegression(max_iter=1000).fit(X, y))
    False
    """
    return (model.solver == "liblinear" or getattr(model, "multi_class", "auto") == "ovr"
            or (model.solver == "newton-cholesky" and sklearn_version() < (1, 6)))


def check_sklearn_version(version: tuple[int, int] | None = None) -> None:
    """Refuse a scikit-learn older than :data:`OLDEST_SKLEARN`; warn about one newer than the newest tested.

    Parameters
    ----------
    version : tuple of int, optional
        ``(major, minor)``; default: the installed release.

    Raises
    ------
    ImportError
        Below the supported range: the internals read here differ.

    Warns
    -----
    SklearnVersionWarning
        Above the newest tested release: the readers may meet internals they do not know (what they read is
        still verified against the fitted model, so a change fails with an error rather than wrong values).

    Examples
    --------
    >>> import warnings
    >>> from shap_instances.utils import check_sklearn_version
    >>> check_sklearn_version((1, 4))
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     check_sklearn_version((2, 0))
    >>> type(caught[0].message).__name__
    'SklearnVersionWarning'
    """
    version = sklearn_version() if version is None else version
    shown = ".".join(map(str, version))
    if version < OLDEST_SKLEARN:
        raise ImportError(f"shap_instances needs scikit-learn {SKLEARN_SUPPORTED}, found {shown}: upgrade it "
                          f"(pip install 'scikit-learn{SKLEARN_SUPPORTED}').")
    if version > NEWEST_TESTED_SKLEARN:
        warnings.warn(f"scikit-learn {shown} is newer than the newest release shap_instances was tested on "
                      f"({'.'.join(map(str, NEWEST_TESTED_SKLEARN))}; supported: {SKLEARN_SUPPORTED}). Its forest "
                      "and boosting readers use scikit-learn internals and verify every leaf they read, so a change "
                      "fails with an error, not wrong values; if one does, install "
                      f"'scikit-learn{SKLEARN_SUPPORTED}'.", SklearnVersionWarning, stacklevel=3)


@functools.cache
def _checked_once() -> None:
    """:func:`check_sklearn_version` on the installed release, once per process (every accessor calls it)."""
    check_sklearn_version()


# ------------------------------------------------------------------------------------------------- forests
def forest_draw_semantics(version: tuple[int, int] | None = None) -> list[str]:
    """How a forest weighted its bootstrap draws, the likelier rule first: the rules to try, in order.

    Reads no attribute: the rule changed in scikit-learn 1.9. ``"draw_probability"`` (1.9 on): rows are
    drawn with probabilities proportional to the sample weights and each tree is fitted on the draw counts
    alone. ``"multiplicative"`` (before): rows are drawn uniformly and the counts multiplied by the weights.

    Parameters
    ----------
    version : tuple of int, optional
        ``(major, minor)``; default: the installed release.

    Returns
    -------
    list of str
        Both rules, the one of ``version`` first (the caller verifies every leaf and falls back to the other).

    Examples
    --------
    >>> from shap_instances.utils import forest_draw_semantics
    >>> forest_draw_semantics((1, 8)), forest_draw_semantics((1, 9))
    (['multiplicative', 'draw_probability'], ['draw_probability', 'multiplicative'])
    """
    _checked_once()
    version = sklearn_version() if version is None else version
    if version >= _DRAW_PROBABILITY_VERSION:
        return ["draw_probability", "multiplicative"]
    return ["multiplicative", "draw_probability"]


def forest_class_weights(model: Any, y_raw: np.ndarray, sample_weight: np.ndarray | None, *,
                         with_sample_weight: bool, classifier: bool) -> np.ndarray | None:
    """The per-row class weights a forest applied in ``fit`` (None when there are none).

    Mirrors ``BaseForest.fit``: ``class_weight`` (a dict, a list of dicts, ``"balanced"``, or
    ``"balanced_subsample"``, computed per bootstrap sample and so left to :func:`forest_tree_weights`) expanded
    with :func:`sklearn.utils.class_weight.compute_sample_weight`; under the ``"draw_probability"`` rule,
    ``"balanced"`` weighs the classes by the sample weights where ``compute_class_weight`` takes them.

    Parameters
    ----------
    model : RandomForestClassifier or ExtraTreesClassifier (or a regressor: None)
    y_raw : ndarray of shape (n_samples, n_outputs)
        The training labels as given to ``fit``.
    sample_weight : ndarray of shape (n_samples,) or None
    with_sample_weight : bool
        Weigh ``"balanced"`` classes by ``sample_weight`` (the ``"draw_probability"`` rule).
    classifier : bool
        Whether ``model`` is a forest classifier.

    Returns
    -------
    ndarray of shape (n_samples,) or None

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.ensemble import RandomForestClassifier
    >>> from shap_instances.utils import forest_class_weights
    >>> y = np.array([[0], [0], [0], [1]])
    >>> model = RandomForestClassifier(2, class_weight="balanced", random_state=0).fit(np.eye(4), y.ravel())
    >>> forest_class_weights(model, y, None, with_sample_weight=False, classifier=True)
    array([0.66666667, 0.66666667, 0.66666667, 2.        ])
    """
    _checked_once()
    cw = getattr(model, "class_weight", None)
    if cw is None or not classifier:
        return None
    target = y_raw[:, 0] if y_raw.shape[1] == 1 else y_raw
    if isinstance(cw, dict | list):
        return compute_sample_weight(cw, target)
    if cw == "balanced_subsample" and model.bootstrap:
        return None  # computed per bootstrap sample
    classes = [model.classes_] if model.n_outputs_ == 1 else list(model.classes_)
    dicts = []
    accepts_weights = "sample_weight" in inspect.signature(compute_class_weight).parameters
    for k, cls in enumerate(classes):
        kwargs = {"sample_weight": sample_weight} if with_sample_weight and accepts_weights else {}
        values = compute_class_weight("balanced", classes=cls, y=y_raw[:, k], **kwargs)
        dicts.append(dict(zip(cls, values)))
    return compute_sample_weight(dicts[0] if model.n_outputs_ == 1 else dicts, target)


def forest_tree_weights(model: Any, y_raw: np.ndarray, y_codes: np.ndarray, sample_weight: np.ndarray | None,
                        semantics: str, *,
                        classifier: bool) -> tuple[Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]], bool]:
    """The weight each tree of a forest gave each training row in ``fit`` (``_parallel_build_trees``' rule).

    Parameters
    ----------
    model : a fitted RandomForest* or ExtraTrees*
    y_raw : ndarray of shape (n_samples, n_outputs)
        The training targets as given to ``fit``.
    y_codes : ndarray of shape (n_samples, n_outputs)
        The targets as the trees saw them (class indices for a classifier).
    sample_weight : ndarray of shape (n_samples,) or None
    semantics : {"draw_probability", "multiplicative"}
        The rule, one of :func:`forest_draw_semantics`.
    classifier : bool
        Whether ``model`` is a forest classifier.

    Returns
    -------
    weights : callable
        ``weights(indices_t) -> (counts, c)``: from tree ``t``'s bootstrap draw (its ``estimators_samples_``
        entry), its in-bag counts and the weights its leaves were fitted with.
    integral : bool
        True when ``c`` is the multiplicity alone (so it can be stored as a small integer).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.ensemble import RandomForestRegressor
    >>> from shap_instances.utils import forest_tree_weights
    >>> X, y = np.arange(8.0).reshape(4, 2), np.arange(4.0)
    >>> model = RandomForestRegressor(2, random_state=0).fit(X, y)
    >>> weights, integral = forest_tree_weights(model, y[:, None], y[:, None], None, "draw_probability",
    ...                                         classifier=False)
    >>> counts, c = weights(np.array([0, 0, 3, 2]))
    >>> counts.tolist(), integral
    ([2.0, 0.0, 1.0, 1.0], True)
    """
    n = y_raw.shape[0]
    new = semantics == "draw_probability"
    fit_cw = forest_class_weights(model, y_raw, sample_weight, with_sample_weight=new, classifier=classifier)
    static = np.ones(n)
    if sample_weight is not None and (not new or not model.bootstrap):
        static = static * sample_weight
    if fit_cw is not None and (not new or not model.bootstrap):
        static = static * fit_cw
    subsample = classifier and model.bootstrap and model.class_weight == "balanced_subsample"
    y_float = np.ascontiguousarray(y_codes, dtype=np.float64)
    integral = not subsample and bool(np.all(static == 1.0))

    def weights(indices: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        counts = np.bincount(indices, minlength=n).astype(np.float64)
        if counts.shape[0] != n:
            raise DataValidationError(
                f"model.estimators_samples_ refers to row {counts.shape[0] - 1}, but data has only {n} rows; pass "
                "the training data the forest was fitted on."
            )
        c = counts * static
        if subsample:
            c = c * compute_sample_weight("balanced", y_float, indices=indices)
        return counts, c

    return weights, integral


def forest_inbag_draws(model: Any, chunk: int = 8) -> Iterator[np.ndarray]:
    """The public ``estimators_samples_`` of a fitted forest, ``chunk`` trees at a time.

    The property regenerates the in-bag draws of every tree at once (n_trees arrays of n_train indices, 8 MB
    for 100 trees and 20,000 points). It reads ``estimators_`` (each tree's ``random_state``) and nothing else
    of the forest, so asking it of a shallow copy holding a slice of ``estimators_`` yields the same arrays with
    only ``chunk`` of them alive: that reliance on how the property is computed is the internal read here. The
    caller verifies every leaf against the draws.

    Parameters
    ----------
    model : a fitted RandomForest* or ExtraTrees*
    chunk : int, default=8
        Trees whose draws are alive at once.

    Yields
    ------
    ndarray of int
        The bootstrap draw of each tree, in order.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.ensemble import RandomForestRegressor
    >>> from shap_instances.utils import forest_inbag_draws
    >>> model = RandomForestRegressor(5, random_state=0).fit(np.eye(6), np.arange(6.0))
    >>> all(np.array_equal(a, b) for a, b in zip(forest_inbag_draws(model, 2), model.estimators_samples_))
    True
    """
    _checked_once()
    trees = model.estimators_
    for start in range(0, len(trees), chunk):
        part = copy.copy(model)
        part.estimators_ = trees[start:start + chunk]
        yield from part.estimators_samples_


# ------------------------------------------------------------------------------------------ GradientBoosting
def gb_loss(model: Any) -> Any:
    """``model._loss``: the loss object a fitted GradientBoosting* trained with (its gradients are bitwise fit's).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.ensemble import GradientBoostingRegressor
    >>> from shap_instances.utils import gb_loss
    >>> model = GradientBoostingRegressor(n_estimators=2).fit(np.eye(4), np.arange(4.0))
    >>> gb_loss(model).gradient(y_true=np.zeros(2), raw_prediction=np.ones(2)).tolist()
    [1.0, 1.0]
    """
    _checked_once()
    return model._loss


def gb_init_raw(model: Any, X: Any) -> np.ndarray:
    """``model._raw_predict_init(X)``: the raw predictions of a GradientBoosting*'s init estimator, before any tree.

    ``X`` is an array (GradientBoosting validates it with its first tree, which was fitted on arrays).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.ensemble import GradientBoostingRegressor
    >>> from shap_instances.utils import gb_init_raw
    >>> model = GradientBoostingRegressor(n_estimators=2).fit(np.eye(4), np.arange(4.0))
    >>> gb_init_raw(model, np.eye(4)[:2]).ravel().tolist()   # the mean of y
    [1.5, 1.5]
    """
    _checked_once()
    return model._raw_predict_init(X)


# -------------------------------------------------------------------------------------- HistGradientBoosting
def hgb_loss(model: Any) -> Any:
    """``model._loss``: the loss object a fitted HistGradientBoosting* trained with.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.ensemble import HistGradientBoostingRegressor
    >>> from shap_instances.utils import hgb_loss
    >>> model = HistGradientBoostingRegressor(max_iter=2).fit(np.eye(4), np.arange(4.0))
    >>> hgb_loss(model).constant_hessian
    True
    """
    _checked_once()
    return model._loss


def hgb_sample_weight(model: Any, sample_weight: np.ndarray | None, y: np.ndarray) -> np.ndarray | None:
    """``model._finalize_sample_weight(sample_weight, y)``: the row weights fit used (class weights applied).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.ensemble import HistGradientBoostingClassifier
    >>> from shap_instances.utils import hgb_sample_weight
    >>> y = np.array([0.0, 0.0, 0.0, 1.0])
    >>> model = HistGradientBoostingClassifier(max_iter=2, class_weight="balanced").fit(np.eye(4), y)
    >>> hgb_sample_weight(model, None, y).round(3).tolist()
    [0.667, 0.667, 0.667, 2.0]
    """
    _checked_once()
    return model._finalize_sample_weight(sample_weight, y)


def hgb_predictors(model: Any) -> list[list[Any]]:
    """``model._predictors``: a fitted HistGradientBoosting*'s trees, one list (one tree per output) per iteration.

    Each is a ``TreePredictor`` whose ``nodes`` record array holds every node's ``value`` (shrinkage
    applied), ``count`` (training rows) and ``is_leaf``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.ensemble import HistGradientBoostingRegressor
    >>> from shap_instances.utils import hgb_predictors
    >>> model = HistGradientBoostingRegressor(max_iter=3).fit(np.eye(4), np.arange(4.0))
    >>> [len(iteration) for iteration in hgb_predictors(model)], int(hgb_predictors(model)[0][0].nodes["count"][0])
    ([1, 1, 1], 4)
    """
    _checked_once()
    return model._predictors


def hgb_bin_mapper(model: Any) -> Any:
    """``model._bin_mapper``: how a fitted HistGradientBoosting* bins its features (``is_categorical_``,
    ``bin_thresholds_``: the thresholds, or the category codes of a categorical feature).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.ensemble import HistGradientBoostingRegressor
    >>> from shap_instances.utils._sklearn_internals import hgb_bin_mapper
    >>> model = HistGradientBoostingRegressor(max_iter=2).fit(np.eye(4), np.arange(4.0))
    >>> hgb_bin_mapper(model).is_categorical_.tolist()
    [0, 0, 0, 0]
    """
    _checked_once()
    return model._bin_mapper


def hgb_baseline(model: Any) -> np.ndarray:
    """``model._baseline_prediction``: a fitted HistGradientBoosting*'s raw prediction before any tree.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.ensemble import HistGradientBoostingRegressor
    >>> from shap_instances.utils import hgb_baseline
    >>> model = HistGradientBoostingRegressor(max_iter=2).fit(np.eye(4), np.arange(4.0))
    >>> np.asarray(hgb_baseline(model)).ravel().tolist()   # the mean of y
    [1.5]
    """
    _checked_once()
    return model._baseline_prediction


def hgb_split_seed(model: Any) -> Any:
    """``model._random_seed``: the seed a fitted HistGradientBoosting* drew its early-stopping split with.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.ensemble import HistGradientBoostingRegressor
    >>> from shap_instances.utils import hgb_split_seed
    >>> model = HistGradientBoostingRegressor(max_iter=2, random_state=0).fit(np.eye(4), np.arange(4.0))
    >>> import numbers
    >>> isinstance(hgb_split_seed(model), numbers.Integral)
    True
    """
    _checked_once()
    return model._random_seed


def hgb_apply_input(model: Any, X: Any) -> tuple[Any, np.ndarray, np.ndarray]:
    """What a HistGradientBoosting* tree's ``predict`` takes, from rows ``X`` in the model's input form.

    ``model._preprocess_X(X, reset=False)`` (the categorical columns encoded as in fit) and
    ``model._bin_mapper.make_known_categories_bitsets()``.

    Returns
    -------
    X_model : ndarray
        The preprocessed rows.
    known_cat_bitsets, f_idx_map : ndarray
        The known categories of each categorical feature, and the map from features to their bitsets.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.ensemble import HistGradientBoostingRegressor
    >>> from shap_instances.utils import hgb_apply_input
    >>> model = HistGradientBoostingRegressor(max_iter=2).fit(np.eye(4), np.arange(4.0))
    >>> X_model, bitsets, f_idx_map = hgb_apply_input(model, np.eye(4))
    >>> X_model.shape, f_idx_map.shape
    ((4, 4), (4,))
    """
    _checked_once()
    X_model = model._preprocess_X(X, reset=False)
    known_cat_bitsets, f_idx_map = model._bin_mapper.make_known_categories_bitsets()
    return X_model, known_cat_bitsets, f_idx_map


def hgb_node_id_predictor(predictor: Any) -> Any:
    """A copy of a HistGradientBoosting tree (a ``TreePredictor``) that predicts the id of the node a row ends in.

    Imports ``TreePredictor`` from the private ``sklearn.ensemble._hist_gradient_boosting.predictor`` and builds
    it from the tree's ``nodes`` (values replaced by node ids), ``binned_left_cat_bitsets`` and
    ``raw_left_cat_bitsets``; the model's own tree is untouched. Its ``predict(X_model, known_cat_bitsets,
    f_idx_map, n_threads)`` takes what :func:`hgb_apply_input` gives.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.ensemble import HistGradientBoostingRegressor
    >>> from shap_instances.utils import hgb_apply_input, hgb_node_id_predictor, hgb_predictors
    >>> model = HistGradientBoostingRegressor(max_iter=2, min_samples_leaf=1).fit(np.eye(4), np.arange(4.0))
    >>> tree = hgb_node_id_predictor(hgb_predictors(model)[0][0])
    >>> nodes = tree.predict(*hgb_apply_input(model, np.eye(4)), 1).astype(int)
    >>> bool(hgb_predictors(model)[0][0].nodes["is_leaf"][nodes].all())
    True
    """
    _checked_once()
    from sklearn.ensemble._hist_gradient_boosting.predictor import TreePredictor

    nodes = predictor.nodes.copy()
    nodes["value"] = np.arange(nodes.shape[0], dtype=np.float64)
    return TreePredictor(nodes, predictor.binned_left_cat_bitsets, predictor.raw_left_cat_bitsets)


# ------------------------------------------------------------------------------------------ scorers and bagging
def scorer_task(scorer: Any) -> str | None:
    """``"regression"`` or ``"classification"`` for a scorer of scikit-learn's metrics (by the module of its
    private ``_score_func``: ``sklearn.metrics._regression`` or the others), None for any other callable.

    Examples
    --------
    >>> from sklearn.metrics import get_scorer
    >>> from shap_instances.utils import scorer_task
    >>> scorer_task(get_scorer("r2")), scorer_task(get_scorer("roc_auc")), scorer_task(len)
    ('regression', 'classification', None)
    """
    module = getattr(getattr(scorer, "_score_func", None), "__module__", None) or ""
    if not module.startswith("sklearn.metrics"):
        return None
    return "regression" if module == "sklearn.metrics._regression" else "classification"


def bagging_n_samples(model: Any) -> int | None:
    """The number of rows a fitted forest or bagging ensemble was fitted on (its private ``_n_samples``, from
    which ``estimators_samples_`` are drawn); None where it is not recorded.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.ensemble import RandomForestRegressor
    >>> from shap_instances.utils import bagging_n_samples
    >>> bagging_n_samples(RandomForestRegressor(2, random_state=0).fit(np.eye(6), np.arange(6.0)))
    6
    """
    n = getattr(model, "_n_samples", None)
    return int(n) if isinstance(n, int | np.integer) else None
