"""The one place that looks inside the models users ship: pipelines, search objects and other meta-estimators.

An instance explainer's players are training rows, not features, so preprocessing does not change what is
explained: a fitted :class:`~sklearn.pipeline.Pipeline` is explained by its last step on the rows its fitted
steps produce. :func:`unwrap_model` peels a fitted model down to the estimator that explainers know and records
what it went through (:class:`UnwrappedModel`): the pipeline steps that transform the rows (applied once to the
training data and on every call to the explained rows, the columns first matched by name), the map of the
targets (a :class:`~sklearn.compose.TransformedTargetRegressor`'s transformer), and one sentence saying what is
explained. Explainers call it through :meth:`shap_instances.InstanceExplainer._unwrap`.

Unwrapped, in any nesting:

* ``Pipeline`` (``make_pipeline``): the fitted steps before the last transform the rows; the last step is
  explained. Steps set to ``"passthrough"`` or ``None`` are skipped, as ``Pipeline`` skips them.
* ``GridSearchCV``, ``RandomizedSearchCV``, ``HalvingGridSearchCV``, ``HalvingRandomSearchCV`` (any fitted
  search with ``best_estimator_``): the refitted best estimator, which is what the search predicts with.
* ``TransformedTargetRegressor``: ``regressor_``, fitted on the transformed targets; the explanation is on the
  transformed scale (``transformer_.inverse_transform`` of it is the regressor's ``predict``).
* ``CalibratedClassifierCV`` fitted with one calibrated classifier (``ensemble=False``, or a prefit / frozen
  estimator) of a binary task: the uncalibrated estimator is explained; the calibrated probability of the
  positive class is a monotone (sigmoid or isotonic) map of its output, so the order of the explained rows and
  the direction of every training row's push are those of the calibrated model. With several calibrated
  classifiers (``ensemble=True``, cross-validated) the probabilities average several models fitted on
  different rows, and the model is refused.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ..exceptions import DataValidationError, NotFittedError, UnsupportedModelError
from ._sklearn_internals import estimator_type
from ._validation import check_fitted, in_column_order

__all__ = ["UnwrappedModel", "check_model_kind", "final_estimator", "model_kind", "unwrap_model"]


@dataclass(frozen=True)
class UnwrappedModel:
    """A fitted model peeled down to the estimator an explainer explains (see :func:`unwrap_model`).

    Attributes
    ----------
    model : object
        The model as the user passed it.
    estimator : object
        The estimator explained (the model itself when nothing was unwrapped).
    steps : tuple
        The fitted transformers applied, in order, to rows before ``estimator`` (a pipeline's steps).
    target_transformer : object or None
        A ``TransformedTargetRegressor``'s fitted ``transformer_``: the estimator was fitted on
        ``target_transformer.transform(y)``.
    path : tuple of str
        What was unwrapped, outermost first (``("Pipeline", "GridSearchCV")``).
    note : str
        What the explanation explains, in one sentence ("" when nothing was unwrapped).
    columns : list of str or None
        The column names the first step was fitted on (rows given as a DataFrame are matched by name).

    Examples
    --------
    >>> import pandas as pd
    >>> from sklearn.linear_model import Ridge
    >>> from sklearn.pipeline import make_pipeline
    >>> from sklearn.preprocessing import StandardScaler
    >>> from shap_instances.utils import unwrap_model
    >>> X = pd.DataFrame({"a": [0.0, 1.0, 2.0], "b": [1.0, 0.0, 1.0]})
    >>> unwrapped = unwrap_model(make_pipeline(StandardScaler(), Ridge()).fit(X, [0.0, 1.0, 2.0]))
    >>> type(unwrapped.estimator).__name__, unwrapped.transform(X[["b", "a"]]).shape
    ('Ridge', (3, 2))
    """

    model: Any
    estimator: Any
    steps: tuple = ()
    target_transformer: Any = None
    path: tuple[str, ...] = ()
    note: str = ""
    columns: list[str] | None = field(default=None)

    @property
    def wrapped(self) -> bool:
        """Whether anything was unwrapped (False for a bare estimator)."""
        return bool(self.path)

    def transform(self, X: Any, name: str = "X") -> Any:
        """``X`` as the estimator sees it: the pipeline's fitted steps applied, in the form they give.

        A DataFrame is first put in the column order the pipeline was fitted on (other columns are refused); a
        DataFrame output keeps the index of ``X`` (explainers name rows by it). ``None`` stays ``None``.
        """
        if X is None or not self.steps:
            return X
        if self.columns is not None and isinstance(X, pd.DataFrame):
            X = in_column_order(X, self.columns, name)
        out = X
        try:
            for step in self.steps:
                out = step.transform(out)
        except (ValueError, TypeError, KeyError) as exc:
            shown = " -> ".join(type(step).__name__ for step in self.steps)
            raise DataValidationError(f"{name}: the pipeline's preprocessing ({shown}) failed on it: {exc}; pass "
                                      "rows with the columns the pipeline was fitted on.") from exc
        if isinstance(out, pd.DataFrame) and isinstance(X, pd.DataFrame):
            out = out.set_axis(X.index, axis=0)
        return out

    def transform_y(self, y: Any) -> Any:
        """The targets as the estimator was fitted on them (a ``TransformedTargetRegressor``'s transform)."""
        if y is None or self.target_transformer is None:
            return y
        values = np.asarray(y.to_numpy() if isinstance(y, pd.Series | pd.DataFrame) else y, dtype=np.float64)
        out = self.target_transformer.transform(values.reshape(len(values), -1))
        out = np.asarray(out, dtype=np.float64)
        return out.ravel() if values.ndim == 1 else out


def unwrap_model(model: Any) -> UnwrappedModel:
    """Peel a fitted pipeline or meta-estimator down to the estimator an explainer explains.

    Parameters
    ----------
    model : object
        A fitted estimator, ``Pipeline``, search object (``GridSearchCV`` and the like),
        ``TransformedTargetRegressor`` or ``CalibratedClassifierCV``, nested in any order.

    Returns
    -------
    UnwrappedModel
        ``estimator`` the innermost estimator, ``steps`` the fitted transformers before it; a model that is
        none of these comes back as its own ``estimator`` with nothing to apply.

    Raises
    ------
    NotFittedError
        A search fitted with ``refit=False`` (no ``best_estimator_``) or a meta-estimator not fitted.
    UnsupportedModelError
        A ``CalibratedClassifierCV`` averaging several calibrated classifiers, or of more than two classes.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.ensemble import RandomForestRegressor
    >>> from sklearn.model_selection import GridSearchCV
    >>> from shap_instances.utils import unwrap_model
    >>> X, y = np.random.default_rng(0).normal(size=(40, 3)), np.arange(40.0)
    >>> search = GridSearchCV(RandomForestRegressor(5, random_state=0), {"max_depth": [2, 3]}, cv=2).fit(X, y)
    >>> unwrapped = unwrap_model(search)
    >>> unwrapped.estimator is search.best_estimator_, unwrapped.path
    (True, ('GridSearchCV',))
    """
    steps: list[Any] = []
    path: list[str] = []
    notes: list[str] = []
    target = None
    current = model
    while True:
        inner, before, note = _peel(current)
        if inner is None:
            break
        if type(current).__name__ == "TransformedTargetRegressor":
            if target is not None:
                raise UnsupportedModelError("a TransformedTargetRegressor inside another one is not unwrapped; "
                                            "explain the inner one.")
            target = current.transformer_
        path.append(type(current).__name__)
        steps.extend(before)
        notes.append(note)
        current = inner
    if not path:
        return UnwrappedModel(model, model)
    names = getattr(model, "feature_names_in_", None)
    columns = None if names is None else [str(c) for c in names]
    return UnwrappedModel(model, current, tuple(steps), target, tuple(path), "; ".join(n for n in notes if n),
                          columns)


def final_estimator(model: Any) -> Any:
    """The last step of a pipeline (the model itself otherwise): one layer, where :func:`unwrap_model` peels every
    pipeline and meta-estimator and checks that they are fitted.

    Examples
    --------
    >>> from sklearn.linear_model import Ridge
    >>> from sklearn.pipeline import make_pipeline
    >>> from sklearn.preprocessing import StandardScaler
    >>> from shap_instances.utils import final_estimator
    >>> final_estimator(Ridge()).__class__.__name__, final_estimator(make_pipeline(StandardScaler(), Ridge()))
    ('Ridge', Ridge())
    """
    from sklearn.pipeline import Pipeline

    return model.steps[-1][1] if isinstance(model, Pipeline) else model


def _peel(model: Any) -> tuple[Any, list[Any], str]:
    """One layer: (the inner estimator or None, the fitted transformers before it, what is explained)."""
    from sklearn.pipeline import Pipeline

    name = type(model).__name__
    if isinstance(model, Pipeline):
        _fitted(model, "steps", name)
        before = [step for _, step in model.steps[:-1] if step not in (None, "passthrough")]
        return final_estimator(model), before, ""
    if hasattr(model, "param_grid") or hasattr(model, "param_distributions"):  # BaseSearchCV and the halving ones
        if not hasattr(model, "best_estimator_"):
            raise NotFittedError(f"the {name} has no best_estimator_: fit it (with refit=True, the default) "
                                 "before explaining it.")
        return model.best_estimator_, [], ""
    if name == "TransformedTargetRegressor":
        _fitted(model, "regressor_", name)
        return model.regressor_, [], ("the regressor on the transformed targets (transformer_.transform(y)); "
                                      "transformer_.inverse_transform of it is the model's predict")
    if name == "CalibratedClassifierCV":
        return _calibrated(model), [], ("the uncalibrated classifier; the calibrated probability of the positive "
                                        "class is a monotone map of its output")
    return None, [], ""


def _calibrated(model: Any) -> Any:
    """The one uncalibrated classifier of a binary ``CalibratedClassifierCV`` (others refused)."""
    _fitted(model, "calibrated_classifiers_", "CalibratedClassifierCV")
    if len(model.calibrated_classifiers_) != 1 or len(model.classes_) != 2:
        raise UnsupportedModelError(
            f"this CalibratedClassifierCV averages {len(model.calibrated_classifiers_)} calibrated classifiers "
            f"over {len(model.classes_)} classes: its probabilities are not a monotone map of one model. Fit it "
            "with ensemble=False (or a prefit estimator) on a binary target, or explain the estimator itself."
        )
    estimator = model.calibrated_classifiers_[0].estimator
    return getattr(estimator, "estimator", estimator)  # a FrozenEstimator holds the prefit model


def _fitted(model: Any, attribute: str, name: str) -> None:
    """Refuse a meta-estimator that is not fitted (a pipeline: its last step)."""
    if attribute == "steps":
        check_fitted(model.steps[-1][1], f"last step of the {name}")
    elif not hasattr(model, attribute):
        raise NotFittedError(f"the {name} is not fitted ({attribute} missing); fit it before explaining it.")


def model_kind(model: Any) -> str:
    """What ``model`` predicts: ``"classifier"``, ``"regressor"``, ``"clusterer"``, ``"outlier detector"``,
    ``"transformer"``, or ``"not an estimator"`` (no ``fit``) / ``"estimator of unknown kind"``.

    A pipeline or search object is what its last step is (scikit-learn's tags).

    Examples
    --------
    >>> from sklearn.cluster import KMeans
    >>> from sklearn.linear_model import Ridge
    >>> from shap_instances.utils import model_kind
    >>> model_kind(Ridge()), model_kind(KMeans())
    ('regressor', 'clusterer')
    """
    if not callable(getattr(model, "fit", None)):
        return "not an estimator"
    kind = estimator_type(model)  # not is_classifier(): it raises on an estimator without tags
    if kind in ("classifier", "regressor", "clusterer", "outlier_detector"):
        return str(kind).replace("_", " ")
    if callable(getattr(model, "transform", None)) and not callable(getattr(model, "predict", None)):
        return "transformer"
    return "estimator of unknown kind"


def check_model_kind(model: Any, what: str, kinds: tuple[str, ...] = ("classifier", "regressor")) -> str:
    """``model``'s kind (:func:`model_kind`), refused with :class:`~shap_instances.exceptions.UnsupportedModelError`
    unless it is one of ``kinds``: clusterers, outlier detectors and transformers have no score to value rows by.

    Examples
    --------
    >>> from sklearn.cluster import KMeans
    >>> from shap_instances.utils import check_model_kind
    >>> try:
    ...     check_model_kind(KMeans(), "data_values")
    ... except TypeError as exc:
    ...     print(str(exc).split(";")[0])
    data_values needs a classifier or regressor, but KMeans is a clusterer
    """
    if isinstance(model, type):
        raise UnsupportedModelError(f"{what} needs an estimator object, got the class {model.__name__}; pass an "
                                    f"instance, {model.__name__}().")
    kind = model_kind(model)
    if kind not in kinds:
        wanted = " or ".join(kind for kind in kinds if kind != "estimator of unknown kind")
        is_what = kind if kind.startswith("not ") else f"{'an' if kind[0] in 'aeiou' else 'a'} {kind}"
        raise UnsupportedModelError(f"{what} needs a {wanted}, but {type(model).__name__} is {is_what}; pass a "
                                    f"scikit-learn {wanted} (or a pipeline ending in one).")
    return kind
