"""Proximity-based trust scores for random-forest predictions (Rosaler et al., 2023).

The computations on rows of weights (quantiles, weighted errors, outlier scores, ...) live in
:mod:`shap_instances.weighted_targets`, shared with ``BoostingExplainer``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from ..exceptions import DataValidationError, UnsupportedModelError
from ..utils import model_input
from ..weighted_targets import (
    OUTLIER_SCALES,
    class_outlier_scores,
    neighbours_for_weight,
    trust_columns,
    weighted_error,
)

__all__ = ["gap_trust_scores"]

RUNNER_UP_RULES = ("outlier", "probability")


def _runner_up(key: np.ndarray, proba: np.ndarray, predicted: np.ndarray) -> np.ndarray:
    """Per row, the class other than ``predicted`` with the smallest ``key`` (ties: larger probability, then
    the first class)."""
    m, n_classes = key.shape
    best = np.full(m, -1, dtype=np.int64)
    best_key = np.full(m, np.inf)
    best_p = np.full(m, -np.inf)
    for c in range(n_classes):
        k, p = key[:, c], proba[:, c]
        take = (c != predicted) & ((best < 0) | (k < best_key) | ((k == best_key) & (p > best_p)))
        best[take], best_key[take], best_p[take] = c, k[take], p[take]
    return best


def gap_trust_scores(explainer: Any, X: Any, *, quantiles: Sequence[float] = (0.1, 0.5, 0.9), level: float = 0.9,
                     outlier_scale: str = "raw", runner_up: str = "outlier", n_jobs: int | None = None
                     ) -> pd.DataFrame:
    """Trust scores of a :class:`~shap_instances.explainers.gap.GapExplainer`'s predictions at ``X``.

    Columns, regression:

    * ``prediction`` (``prediction_<output>`` for multi-output forests);
    * ``weighted_oob_error``: ``sum_i k(x, i) |y_i - oob_i|``, the proximity-weighted mean absolute
      out-of-bag error of the training neighbours, renormalised over training points that have an
      out-of-bag prediction. Multi-output forests get one column per output, ``weighted_oob_error_<output>``,
      each in the units of its output (an average over outputs would mix scales);
    * ``q10``, ``q50``, ``q90`` (``quantiles``): quantiles of the proximity-weighted distribution of the
      training target (``q50_<output>`` ... for multi-output);
    * ``n_neighbours_90``: neighbours carrying ``level`` of the weight.

    Classification (single output only; multi-output classifiers are refused):

    * ``predicted_class``; ``class_probability``: the proximity-weighted probability of the predicted class,
      ``sum_i k(x, i) [y_i = predicted]``, which is the forest's own ``predict_proba`` of that class;
    * ``weighted_oob_accuracy``: proximity-weighted share of neighbours whose out-of-bag prediction is right;
    * ``outlier_<class>``: class-wise outlier scores (:func:`class_outlier_scores` with ``outlier_scale``;
      ``+inf`` when the point shares no leaf with any training point of the class);
    * ``runner_up_class``: the class compared with the predicted one (see ``runner_up``);
    * ``outlier_margin``: ``outlier_<runner-up> - outlier_<predicted>``, a difference of two z-scores: large
      when the point is typical of its predicted class and atypical of the alternative (``+inf`` when no
      neighbour has the runner-up class). It is not a logarithm of the paper's ratio, on either scale;
    * ``outlier_ratio``: ``outlier_<runner-up> / outlier_<predicted>``, the paper's quotient (its figure
      11). The denominator is a z-score centred on 0 for typical points of the predicted class, so the ratio
      changes sign and explodes there (0/0 gives NaN); ``outlier_margin`` ranks points more stably;
    * ``n_neighbours_90``.

    There are no quantile columns for classifiers: the target is a class label, with no order to take
    quantiles in, and its whole proximity-weighted distribution is the vector of class probabilities,
    ``predict_proba`` itself.

    Parameters
    ----------
    explainer : GapExplainer or GapForest
        The explainer (its public ``gap_`` and ``n_jobs`` are read), or a :class:`GapForest`.
    X : array-like of shape (m, n_features)
    quantiles : sequence of float in (0, 1], default=(0.1, 0.5, 0.9)
        Regression only.
    level : float in (0, 1], default=0.9
    outlier_scale : {"raw", "log"}, default="raw"
        What the outlier z-scores standardise (:func:`class_outlier_scores`): the paper's raw score, or its
        logarithm.
    runner_up : {"outlier", "probability"}, default="outlier"
        The class compared with the predicted one. The paper compares the predicted class with "the class
        that was not predicted" and, for three or more classes, takes "the class that is next-closest in
        terms of median proximity to the test point" (footnote to its figure 11). Read literally (the median
        over the training points of a class of the test point's proximities), this is mostly undefined:
        proximity rows are sparse, and in five-fold runs with 100 trees the median was 0 for every
        non-predicted class for 82% of iris, 41% of wine and 60% of digits test points, leaving the choice
        to ties. ``"outlier"`` (default) takes the other class with the smallest outlier score: the class the
        point is most typical of after the predicted one, in the median-based terms the scores are built on,
        so ``outlier_margin`` is the smallest margin over all other classes. ``"probability"`` takes the class
        with the second-largest probability (the largest total proximity after the predicted class). Both
        are the same for two classes; on those runs they picked different classes for 1% (iris), 5% (wine)
        and 36% (digits) of points, and the margins ranked correctness about equally well.
    n_jobs : int, optional
        Threads for the proximity kernel (default: the explainer's ``n_jobs``).

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.ensemble import RandomForestClassifier
    >>> from shap_instances import GapExplainer
    >>> from shap_instances.forest import gap_trust_scores
    >>> X, y = load_iris(return_X_y=True)
    >>> forest = RandomForestClassifier(30, random_state=0).fit(X[::2], y[::2])
    >>> scores = gap_trust_scores(GapExplainer(forest, X[::2], y=y[::2]), X[1::2])
    >>> scores[["class_probability", "outlier_margin"]].shape
    (75, 2)
    """
    if outlier_scale not in OUTLIER_SCALES:
        raise DataValidationError(f"outlier_scale must be one of {OUTLIER_SCALES}, got {outlier_scale!r}.")
    if runner_up not in RUNNER_UP_RULES:
        raise DataValidationError(f"runner_up must be one of {RUNNER_UP_RULES}, got {runner_up!r}.")
    gap = getattr(explainer, "gap_", explainer)
    n_jobs = getattr(explainer, "n_jobs", None) if n_jobs is None else n_jobs
    model = gap.model
    if gap.is_classifier and model.n_outputs_ != 1:
        raise UnsupportedModelError(
            "Trust scores support single-output classifiers only: the class probability, the out-of-bag "
            "accuracy and the class-wise outlier scores are defined for one class label per point. Explain "
            "each output with its own single-output forest."
        )
    X = gap.check_X(X)  # validated once: a DataFrame in the fitted column order, as an array
    P = gap.index.rows_of(X, n_jobs=n_jobs)
    P_oob = gap.oob_proximities(n_jobs=n_jobs)
    oob = gap.oob_predictions(n_jobs=n_jobs)
    targets = gap.target_columns
    if not gap.is_classifier:
        pred = model.predict(model_input(model, X)).reshape(X.shape[0], -1)
        return pd.DataFrame(trust_columns(P, targets, pred, np.abs(targets - oob), quantiles=quantiles, level=level,
                                          output_names=gap.output_names, error_name="weighted_oob_error"))
    columns = _classifier_columns(model, P, P_oob, oob, gap.y_train[:, 0], model.predict_proba(model_input(model, X)),
                                  outlier_scale=outlier_scale, runner_up=runner_up)
    columns[f"n_neighbours_{round(100 * level)}"] = neighbours_for_weight(P, level)
    return pd.DataFrame(columns)


def _classifier_columns(model: Any, P: Any, P_oob: Any, oob: np.ndarray, codes: np.ndarray, proba: np.ndarray, *,
                        outlier_scale: str, runner_up: str) -> dict[str, Any]:
    """The classification columns of :func:`gap_trust_scores`, in order, ``n_neighbours_*`` excepted."""
    valid = ~np.isnan(oob).any(axis=1)
    columns = {}
    rows = np.arange(proba.shape[0])
    predicted = np.argmax(proba, axis=1)  # what predict returns (first class on ties)
    columns["predicted_class"] = model.classes_[predicted]
    columns["class_probability"] = proba[rows, predicted]
    correct = (np.nan_to_num(oob).argmax(axis=1) == codes) & valid
    columns["weighted_oob_accuracy"] = weighted_error(P, np.where(valid, correct, np.nan))[:, 0]
    z = class_outlier_scores(P, P_oob, codes, proba.shape[1], reference_valid=valid, scale=outlier_scale)
    for c, cls in enumerate(model.classes_):
        columns[f"outlier_{cls}"] = z[:, c]
    if proba.shape[1] == 1:
        other = predicted
    else:
        key = -proba if runner_up == "probability" else np.where(np.isnan(z), np.inf, z)
        other = _runner_up(key, proba, predicted)
    columns["runner_up_class"] = model.classes_[other]
    with np.errstate(invalid="ignore", divide="ignore"):
        columns["outlier_margin"] = z[rows, other] - z[rows, predicted]
        columns["outlier_ratio"] = z[rows, other] / z[rows, predicted]
    return columns
