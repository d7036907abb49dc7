"""Training points in two features, with opacity by RF-GAP weight (Rosaler et al., figures 4, 7, 12)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, cast

import matplotlib.pyplot as plt
import numpy as np
from numpy.typing import ArrayLike

from ..exceptions import DataValidationError
from ._plot_common import column, point_value, weight_row

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = ["gap_weighted_scatter"]


def gap_weighted_scatter(data: Any, *, weights: ArrayLike, features: Sequence[int | str] = (0, 1), point: Any = None,
                         labels: Any = None, ax: Axes | None = None, show: bool = True,
                         color: Any = "#FF7F0E") -> Axes | None:
    """Scatter the training set in two features; the neighbours of one point drawn with opacity ~ weight.

    Parameters
    ----------
    data : DataFrame or array of shape (n_train, n_features)
        The training data.
    weights : array-like of shape (n_train,) or a one-row sparse matrix
        The proximities of the explained point, e.g. ``ex.proximities(x)[0]``; non-negative.
    features : pair of column names or positions, default=(0, 1)
        The two features to draw (e.g. the two with the largest mean |SHAP|).
    point : array-like or Series, optional
        The explained point, drawn as a red star.
    labels : array-like of shape (n_train,), optional
        Class labels: the background is then coloured by class.
    ax : matplotlib Axes, optional
    show : bool, default=True
    color : str
        Colour of the weighted neighbours (when ``labels`` is None).

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
    >>> from shap_instances.plots import gap_weighted_scatter
    >>> X, y = load_diabetes(return_X_y=True, as_frame=True)
    >>> forest = RandomForestRegressor(30, random_state=0).fit(X[:400], y[:400])
    >>> P = GapExplainer(forest, X[:400], y=y[:400]).proximities(X[400:])
    >>> ax = gap_weighted_scatter(X[:400], weights=P[0], features=("bmi", "s5"), point=X.iloc[400], show=False)
    >>> ax.get_xlabel(), ax.get_ylabel()
    ('bmi', 's5')
    """
    if len(features) != 2:
        raise DataValidationError(f"features must name two columns, got {features!r}.")
    x, x_name = column(data, features[0])
    y, y_name = column(data, features[1])
    w = weight_row(weights, x.shape[0])
    if np.any(w < 0):  # opacity and size read a weight as closeness: a negative one has no such reading
        raise DataValidationError("weights must be non-negative here (RF-GAP proximities are); for signed weights "
                                  "(BoostingExplainer.weights) use gap_weighted_histograms or "
                                  "gap_predictive_distribution, which draw the negative part.")
    if ax is None:
        _, ax = plt.subplots(figsize=(5.5, 4.5))
    labels = None if labels is None else np.asarray(labels)
    colours = _draw_training_points(ax, x, y, labels)
    _draw_neighbours(ax, x, y, w, labels, colours, color)
    if point is not None:
        x_point = cast(float, point_value(point, data, features[0]))  # a point: its values are numbers
        y_point = cast(float, point_value(point, data, features[1]))
        ax.scatter([x_point], [y_point], marker="*",
                   s=220, color="#D50000", edgecolors="white", linewidths=0.8, zorder=5, label="explained point")
    ax.set_xlabel(x_name)
    ax.set_ylabel(y_name)
    ax.legend(loc="best", frameon=False, fontsize=8)
    if show:
        plt.show()
        return None
    return ax


def _draw_training_points(ax: Axes, x: np.ndarray, y: np.ndarray, labels: np.ndarray | None) -> dict[Any, Any]:
    """Every training point, faint, coloured by class when there are labels; the class colours."""
    if labels is None:
        ax.scatter(x, y, s=8, color="#9E9E9E", alpha=0.3, linewidths=0, label="training points")
        return {}
    if labels.shape[0] != x.shape[0]:
        raise DataValidationError(f"labels has {labels.shape[0]} entries but data has {x.shape[0]} rows.")
    classes = np.unique(labels)
    palette = plt.get_cmap("tab10")
    colours = {c: palette(i % 10) for i, c in enumerate(classes)}
    for c in classes:
        ax.scatter(x[labels == c], y[labels == c], s=8, color=colours[c], alpha=0.15, linewidths=0,
                   label=f"class {c}")
    return colours


def _draw_neighbours(ax: Axes, x: np.ndarray, y: np.ndarray, w: np.ndarray, labels: np.ndarray | None,
                     colours: dict[Any, Any], color: Any) -> None:
    """The points with positive weight, opacity and size by weight, heaviest drawn last."""
    near = np.flatnonzero(w > 0)
    if not near.size:
        return
    order = near[np.argsort(w[near])]
    alpha = np.clip(w[order] / w[order].max(), 0.05, 1.0)
    if labels is not None:
        rgba = np.array([colours[c] for c in labels[order]], dtype=float)
    else:
        rgba = np.tile(np.array(plt.matplotlib.colors.to_rgba(color)), (order.size, 1))
    rgba[:, 3] = alpha
    ax.scatter(x[order], y[order], s=18 + 120 * w[order] / w[order].max(), c=rgba, linewidths=0,
               label="neighbours (opacity = weight)")
