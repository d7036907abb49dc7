"""The weighted distribution of the training targets at one point (Rosaler et al., figures 3 and 6), for RF-GAP
proximities and signed boosting weights."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import scipy.sparse as sp
from numpy.typing import ArrayLike

from ..exceptions import DataValidationError
from ._plot_common import draw_weighted_histogram, weight_row
from ._targets import weighted_error, weighted_quantiles

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = ["gap_predictive_distribution"]


def gap_predictive_distribution(targets: Any, *, weights: ArrayLike,
                                true_value: float | None = None, errors: ArrayLike | str | None = None,
                                quantiles: Sequence[float] = (0.1, 0.5, 0.9), bins: int = 30,
                                ax: Axes | None = None, show: bool = True, color: str = "#0D47A1") -> Axes | None:
    """Histogram of the training targets weighted by one point's weights, with its mean and quantiles.

    A forest's regression prediction is the mean of this distribution exactly
    (``predict(x) = sum_i k(x, i) y_i``), and so is a squared-error boosted model's with its target weights
    (``BoostingExplainer.weights``): the histogram shows the whole predictive distribution behind the
    prediction, a narrow one where the neighbours agree, a wide one where they do not. Boosting weights are
    signed: their positive part is drawn up and their negative part down (the targets the prediction is pushed
    away from), both per unit of the weights' sum, so that the signed density integrates to one and its mean
    is still the prediction (:func:`~shap_instances.weighted_targets.signed_histogram`).

    Parameters
    ----------
    targets : array-like of shape (n_train,), a GapExplainer or a BoostingExplainer
        The training targets; for a (single-output regression) explainer, its targets. Any object with the
        explainers' public methods ``regression_targets()`` and ``training_errors(kind)`` is read as they are.
    weights : array-like of shape (n_train,) or a one-row sparse matrix
        The weights of the explained point, e.g. ``ex.proximities(x)[0]`` or ``ex.weights(x)[0]``; divided by
        their sum (which must be positive).
    true_value : float, optional
        The realised target of the explained point: a red vertical line.
    errors : array-like of shape (n_train,), "oob" or "loo", optional
        Absolute errors of the training points; ``"oob"`` (with a GapExplainer) uses their out-of-bag errors
        ``|y_i - oob_i|``, ``"loo"`` (with a BoostingExplainer) their leave-self-out errors
        (``BoostingExplainer.loo_predictions``). The legend then reports their weighted mean (under ``|w|``,
        :func:`~shap_instances.weighted_targets.weighted_error`) beside their plain mean, as the paper's
        figures 3 and 6 do (weighted training MAE against the training MAE).
    quantiles : sequence of float in (0, 1], default=(0.1, 0.5, 0.9)
        Weighted quantiles drawn as dashed lines (the smallest target whose cumulative weight reaches q, under
        the positive part of the weights, as in :func:`~shap_instances.weighted_targets.weighted_quantiles` and
        the trust scores' ``q10`` ... columns).
    bins : int, default=30
    ax : matplotlib Axes, optional
    show : bool, default=True
    color : str
        Colour of the weighted histogram.

    Returns
    -------
    matplotlib Axes when ``show=False``. The prediction line is labelled ``"prediction ..."``; its x position
    is the weighted mean.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import numpy as np
    >>> from sklearn.datasets import load_diabetes
    >>> from sklearn.ensemble import RandomForestRegressor
    >>> from shap_instances import GapExplainer
    >>> from shap_instances.plots import gap_predictive_distribution
    >>> X, y = load_diabetes(return_X_y=True)
    >>> forest = RandomForestRegressor(30, random_state=0).fit(X[:400], y[:400])
    >>> ex = GapExplainer(forest, X[:400], y=y[:400])
    >>> ax = gap_predictive_distribution(ex, weights=ex.proximities(X[400:401]), true_value=y[400], errors="oob",
    ...                                  show=False)
    >>> line = next(l for l in ax.get_lines() if l.get_label().startswith("prediction"))
    >>> bool(np.isclose(line.get_xdata()[0], forest.predict(X[400:401])[0]))
    True
    """
    source = targets if hasattr(targets, "regression_targets") and hasattr(targets, "training_errors") else None
    y, name = _targets(targets) if source is None else (np.asarray(source.regression_targets(), np.float64), "target")
    w = _normalised(weights, y.shape[0])
    prediction = float(w @ y)
    qs = np.atleast_1d(np.asarray(quantiles, dtype=np.float64))
    levels = weighted_quantiles(w, y, qs)[0] if qs.size else np.array([])
    if isinstance(errors, str):
        if source is None:
            raise DataValidationError('errors="oob" needs a GapExplainer and errors="loo" a BoostingExplainer as first '
                                      "argument; otherwise pass an array of absolute training errors.")
        errors = source.training_errors(errors)
    if ax is None:
        _, ax = plt.subplots(figsize=(6, 4))
    edges: Any = np.histogram_bin_edges(y, bins=bins)
    ax.hist(y, bins=edges, density=True, color="#90CAF9", alpha=0.6, label="training targets (unweighted)")
    draw_weighted_histogram(ax, y, w, edges, color=color, label="weighted")
    ax.axvline(prediction, color="#2E7D32", linewidth=2.2, label=f"prediction (weighted mean) {prediction:.4g}")
    for q, level in zip(qs, levels):
        ax.axvline(level, color="#424242", linestyle="--", linewidth=1, label=f"q{100 * q:g} {level:.4g}")
    if true_value is not None:
        ax.axvline(float(true_value), color="#D50000", linewidth=2, label=f"true value {float(true_value):.4g}")
    if errors is not None:
        _error_legend(ax, w, np.asarray(errors, dtype=np.float64), y.shape)
    ax.set_xlabel(name)
    ax.set_ylabel("density")
    ax.legend(loc="best", frameon=False, fontsize=7)
    if show:
        plt.show()
        return None
    return ax


def _targets(targets: Any) -> tuple[np.ndarray, str]:
    """``(y, axis label)`` of an array of training targets, validated."""
    name = str(targets.name) if isinstance(targets, pd.Series) and targets.name is not None else "target"
    y = np.asarray(targets, dtype=np.float64) if not sp.issparse(targets) else None
    if y is None or y.ndim != 1 or not np.all(np.isfinite(y)):
        raise DataValidationError("targets must be a 1-D array of finite training targets, or a GapExplainer "
                                  "or BoostingExplainer.")
    return y, name


def _normalised(weights: Any, n: int) -> np.ndarray:
    """One row of weights divided by its (positive) sum."""
    w = weight_row(weights, n)
    total = w.sum()
    if not w.any():
        raise DataValidationError("weights are all zero: the explained point has no training neighbour.")
    if total <= 0:
        raise DataValidationError(f"weights sum to {total:.4g}: a distribution needs a positive sum.")
    return w / total


def _error_legend(ax: Axes, w: np.ndarray, errors: np.ndarray, shape: tuple[int, ...]) -> None:
    """A legend entry: the weighted mean of the training errors beside their plain mean."""
    if errors.shape != shape:
        raise DataValidationError(f"errors must have one entry per training point ({shape[0]}), got shape "
                                  f"{errors.shape}.")
    valid = np.isfinite(errors)  # points never out of bag have no out-of-bag error
    weighted = float(weighted_error(w, np.where(valid, errors, np.nan))[0, 0])
    ax.plot([], [], " ", label=f"weighted training error {weighted:.4g} (all training: "
                               f"{errors[valid].mean():.4g})")
