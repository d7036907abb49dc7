"""Weighted against unweighted distribution of one feature (Rosaler et al., figures 5, 8, 13): RF-GAP
proximities or signed boosting weights."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

import matplotlib.pyplot as plt
import numpy as np
from numpy.typing import ArrayLike

from ..exceptions import DataValidationError
from ._plot_common import column, draw_weighted_histogram, point_value, weight_row

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = ["gap_weighted_histograms"]


def gap_weighted_histograms(data: Any, *, weights: ArrayLike, feature: int | str = 0, point: Any = None,
                            mask: ArrayLike | None = None, bins: int = 30, ax: Axes | None = None,
                            show: bool = True) -> Axes | None:
    """Overlay the training distribution of a feature and its weighted distribution around one point.

    With signed weights (``BoostingExplainer.weights``) the positive part is drawn up and the negative part
    down, both per unit of the weights' sum (:func:`~shap_instances.weighted_targets.signed_histogram`).

    Parameters
    ----------
    data : DataFrame or array of shape (n_train, n_features)
        The training data.
    weights : array-like of shape (n_train,) or a one-row sparse matrix
        The weights of the explained point (RF-GAP proximities or boosting target weights).
    feature : column name or position, default=0
    point : array-like or Series, optional
        The explained point: its value is drawn as a red vertical line.
    mask : bool array of shape (n_train,), optional
        Restrict both distributions to these training points (e.g. those whose label is the predicted class).
    bins : int, default=30
    ax : matplotlib Axes, optional
    show : bool, default=True

    Returns
    -------
    matplotlib Axes when ``show=False``.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from sklearn.datasets import load_diabetes
    >>> from sklearn.ensemble import RandomForestRegressor
    >>> from shap_instances import GapExplainer
    >>> from shap_instances.plots import gap_weighted_histograms
    >>> X, y = load_diabetes(return_X_y=True, as_frame=True)
    >>> forest = RandomForestRegressor(30, random_state=0).fit(X[:400], y[:400])
    >>> P = GapExplainer(forest, X[:400], y=y[:400]).proximities(X[400:])
    >>> ax = gap_weighted_histograms(X[:400], weights=P[0], feature="bmi", point=X.iloc[400], show=False)
    >>> ax.get_xlabel()
    'bmi'
    """
    values, name = column(data, feature)
    w = weight_row(weights, values.shape[0])
    keep = np.ones(values.shape[0], bool)
    if mask is not None:
        keep = np.asarray(mask, dtype=bool)
        if keep.shape != values.shape:
            raise DataValidationError(f"mask must have {values.shape[0]} entries, got shape {keep.shape}.")
    if not keep.any():
        raise DataValidationError("mask selects no training point.")
    if ax is None:
        _, ax = plt.subplots(figsize=(5.5, 3.8))
    edges: Any = np.histogram_bin_edges(values[keep], bins=bins)
    ax.hist(values[keep], bins=edges, density=True, color="#90CAF9", alpha=0.7, label="training (unweighted)")
    if w[keep].sum() > 0:
        draw_weighted_histogram(ax, values[keep], w[keep], edges, color="#0D47A1", label="weighted")
    if point is not None:
        ax.axvline(cast(float, point_value(point, data, feature)), color="#D50000", linewidth=2,
                   label="explained point")
    ax.set_xlabel(name)
    ax.set_ylabel("density")
    ax.legend(loc="best", frameon=False, fontsize=8)
    if show:
        plt.show()
        return None
    return ax
