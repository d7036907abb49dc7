"""Gradient-boosted trees as exact sums over their training rows (the machinery of ``BoostingExplainer``).

:func:`read_boosted_model` reads a fitted scikit-learn, XGBoost or LightGBM model into one form
(:class:`BoostedTrees`), replays its training (every leaf value recomputed from the training gradients and
checked against the model), and :func:`target_weights` / :func:`gradient_contributions` compute the two
decompositions derived in ``docs/explainers/boosting.md``. XGBoost and LightGBM are optional: their
modules are imported only when a model of theirs is passed.
"""

from __future__ import annotations

import importlib
from typing import Any, cast

from numpy.typing import ArrayLike

from ..exceptions import UnsupportedModelError
from ._analyses import (
    boosting_trust_scores,
    boosting_values,
    decomposition_kind,
    loo_predictions,
    reconstruction_tolerance,
    row_chunk,
    row_major_index,
    self_weights,
    top_k_values,
)
from ._ensemble import (
    BoostedTrees,
    Replay,
    gradient_contributions,
    leaf_ranks,
    replay_training,
    row_major_contributions,
    target_weights,
    top_gradient_contributions,
)
from ._sklearn import GB_MODELS, HGB_MODELS, check_gb, check_hgb, read_gb, read_hgb

__all__ = [
    "BoostedTrees",
    "Replay",
    "boosting_library",
    "boosting_trust_scores",
    "boosting_values",
    "decomposition_kind",
    "loo_predictions",
    "reconstruction_tolerance",
    "row_chunk",
    "row_major_index",
    "self_weights",
    "top_k_values",
    "check_boosted_model",
    "gradient_contributions",
    "row_major_contributions",
    "top_gradient_contributions",
    "leaf_ranks",
    "n_model_features",
    "native_categorical_columns",
    "read_boosted_model",
    "replay_training",
    "target_weights",
]

#: Leaf values are recomputed from the replayed gradients and must match the stored ones to this fraction of
#: the largest leaf value of that tree and the trees before it (float64 libraries; float32 storage gets its own
#: bound).
_RTOL = {"scikit-learn": 1e-9, "lightgbm": 1e-9, "xgboost": 1e-5, "catboost": 1e-6}


def boosting_library(model: Any) -> str | None:
    """``"scikit-learn"``, ``"xgboost"``, ``"lightgbm"``, ``"catboost"`` for a supported boosted model, else None.

    XGBoost and LightGBM models are recognised by their class's module, without importing either library.

    Examples
    --------
    >>> from sklearn.ensemble import GradientBoostingRegressor, RandomForestRegressor
    >>> from shap_instances.boosting import boosting_library
    >>> boosting_library(GradientBoostingRegressor()), boosting_library(RandomForestRegressor())
    ('scikit-learn', None)
    """
    if isinstance(model, GB_MODELS + HGB_MODELS):
        return "scikit-learn"
    module = type(model).__module__.split(".")[0]
    name = type(model).__name__
    if module == "xgboost" and name in ("XGBRegressor", "XGBClassifier", "Booster"):
        return "xgboost"
    if module == "lightgbm" and name in ("LGBMRegressor", "LGBMClassifier", "Booster"):
        return "lightgbm"
    if module == "catboost" and name in ("CatBoostRegressor", "CatBoostClassifier"):
        return "catboost"
    return None


def native_categorical_columns(model: Any, columns: list[str]) -> set[str]:
    """Which of ``columns`` (the DataFrame's, in the fitted order) ``model`` split as categories of its own:
    HistGradientBoosting's ``is_categorical_``, or every column for a LightGBM model fitted on pandas categoricals;
    none otherwise (a string column is then no input the model can read).

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from sklearn.ensemble import HistGradientBoostingRegressor
    >>> from shap_instances.boosting import native_categorical_columns
    >>> X = pd.DataFrame({"a": np.arange(40.0), "c": pd.Categorical(list("pq") * 20)})
    >>> model = HistGradientBoostingRegressor(max_iter=2, categorical_features="from_dtype").fit(X, X["a"])
    >>> native_categorical_columns(model, ["a", "c"])
    {'c'}
    """
    mask = getattr(model, "is_categorical_", None)
    if mask is not None:
        return {column for column, categorical in zip(columns, mask) if categorical}
    booster = getattr(model, "booster_", model)
    if boosting_library(model) == "lightgbm" and getattr(booster, "pandas_categorical", None):
        return set(columns)
    return set()


def n_model_features(model: Any) -> int | None:
    """Number of input columns the model was fitted on (None when it does not say).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.ensemble import GradientBoostingRegressor
    >>> from shap_instances.boosting import n_model_features
    >>> n_model_features(GradientBoostingRegressor(n_estimators=2).fit(np.zeros((4, 3)), [0.0, 1.0, 0.0, 1.0]))
    3
    """
    n = getattr(model, "n_features_in_", None)
    if not n:  # 0 where a CatBoost model was unpickled (or loaded from a safe file): its feature names still say
        names = getattr(model, "feature_names_", None)
        n = len(names) if isinstance(names, list) and names else None
    if n is None:
        counter = getattr(model, "num_features", None) or getattr(model, "num_feature", None)  # XGBoost / LightGBM
        n = counter() if callable(counter) else None
    return None if n is None else int(n)


def _adapter(library: str) -> Any:
    if library == "scikit-learn":
        return None
    try:
        return importlib.import_module(f"shap_instances.boosting._{library}")
    except ImportError as exc:
        raise UnsupportedModelError(f"Explaining a {library} model needs {library} itself, which failed to import "
                                    f"({exc}): pip install \"shap-instances[boosting]\".") from exc


def check_boosted_model(model: Any) -> None:
    """Raise :class:`~shap_instances.exceptions.UnsupportedModelError` unless ``model`` can be decomposed.

    Checks the type and the settings only (no data): subsampling with unknown in-bag rows, losses whose
    leaves are not Newton steps, L1 penalties, clipped steps, and so on, each named in the message; then that
    the model is fitted (:class:`~shap_instances.exceptions.NotFittedError`).

    Examples
    --------
    >>> from sklearn.ensemble import GradientBoostingRegressor
    >>> from shap_instances.boosting import check_boosted_model
    >>> try:
    ...     check_boosted_model(GradientBoostingRegressor(subsample=0.8))
    ... except TypeError as exc:
    ...     print(str(exc)[:60])
    subsample=0.8 fits each tree on a random subsample of the ro
    """
    library = boosting_library(model)
    if library is None:
        raise UnsupportedModelError(
            f"BoostingExplainer explains scikit-learn's GradientBoosting* / HistGradientBoosting*, XGBoost's "
            f"XGBRegressor / XGBClassifier / Booster, LightGBM's LGBMRegressor / LGBMClassifier / Booster and "
            f"CatBoost's CatBoostRegressor / CatBoostClassifier; "
            f"got {type(model).__name__}. Random forests have GapExplainer.")
    if isinstance(model, GB_MODELS):
        check_gb(model)
    elif isinstance(model, HGB_MODELS):
        check_hgb(model)
    else:
        _adapter(library).check(model)


def read_boosted_model(model: Any, X: Any, y: ArrayLike, sample_weight: ArrayLike | None = None) -> BoostedTrees:
    """Read ``model`` fitted on ``(X, y, sample_weight)`` and replay its training (every leaf checked).

    Parameters
    ----------
    model : a supported boosted model (see :func:`boosting_library`)
    X : ndarray of shape (n, n_features)
        The validated training data (the rows given to ``fit``, in the same order).
    y : array-like of shape (n,)
        The training targets (class labels for classifiers).
    sample_weight : array-like of shape (n,), optional

    Returns
    -------
    BoostedTrees

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import load_diabetes
    >>> from sklearn.ensemble import GradientBoostingRegressor
    >>> from shap_instances.boosting import read_boosted_model, target_weights
    >>> X, y = load_diabetes(return_X_y=True)
    >>> model = GradientBoostingRegressor(n_estimators=20, random_state=0).fit(X, y)
    >>> trees = read_boosted_model(model, X, y)
    >>> W = target_weights(trees, trees.apply(X[:3]))
    >>> bool(np.allclose(W @ y, model.predict(X[:3]), rtol=1e-12)), bool(np.allclose(W.sum(axis=1), 1.0))
    (True, True)
    """
    check_boosted_model(model)
    library = cast(str, boosting_library(model))  # a supported model: its library is known
    if isinstance(model, GB_MODELS):
        trees = read_gb(model, X, y, sample_weight)
    elif isinstance(model, HGB_MODELS):
        trees = read_hgb(model, X, y, sample_weight)
    else:
        trees = _adapter(library).read(model, X, y, sample_weight)
    replay_training(trees, rtol=_RTOL[library])
    return trees
