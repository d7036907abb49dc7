"""Cumulative weight against the number of nearest neighbours (Rosaler et al., figures 1 and 9), for RF-GAP
proximities and signed boosting weights alike (the share of ``sum |w|``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import matplotlib.pyplot as plt
import numpy as np

from ._plot_common import weight_matrix
from ._targets import cumulative_weight

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = ["gap_cumulative_weight"]


def gap_cumulative_weight(explanation_or_data: Any, *, ax: Axes | None = None, show: bool = True, max_rows: int = 50,
                          level: float = 0.9, log_x: bool = True, color: Any = "#1E88E5") -> Axes | None:
    """Plot, for each explained point, the share of its absolute weight carried by its k largest weights.

    Parameters
    ----------
    explanation_or_data : scipy.sparse matrix, ndarray or shap.Explanation
        Weights (rows: explained points, columns: training points): RF-GAP proximities, e.g.
        ``ex.proximities(X)``, or boosting target weights, ``BoostingExplainer(...).weights(X)``, whose signs
        are dropped (the curve is the share of ``sum_j |w_j|``, see
        :func:`~shap_instances.weighted_targets.cumulative_weight`). For an Explanation, the normalised
        absolute values are used (the cumulative share of attribution).
    ax : matplotlib Axes, optional
        Where to draw (a new figure when None).
    show : bool, default=True
        Call ``plt.show()``; with False the Axes is returned.
    max_rows : int, default=50
        Draw at most this many rows (the first ones), plus their mean curve.
    level : float, default=0.9
        Draw a horizontal guide at this cumulative weight.
    log_x : bool, default=True
        Logarithmic neighbour axis.
    color : str
        Colour of the curves.

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
    >>> from shap_instances.plots import gap_cumulative_weight
    >>> X, y = load_diabetes(return_X_y=True)
    >>> forest = RandomForestRegressor(30, random_state=0).fit(X[:400], y[:400])
    >>> ax = gap_cumulative_weight(GapExplainer(forest, X[:400], y=y[:400]).proximities(X[400:]), show=False)
    >>> ax.get_xlabel()
    'number of nearest neighbours (largest weights first)'
    """
    matrix = weight_matrix(explanation_or_data)[: max(1, int(max_rows))]
    if ax is None:
        _, ax = plt.subplots(figsize=(6, 4))
    curves = cumulative_weight(matrix)
    width = curves.shape[1]
    ranks = np.arange(1, width + 1)
    for curve in curves:
        ax.plot(ranks, curve, color=color, alpha=0.25, linewidth=0.8)
    ax.plot(ranks, np.nanmean(curves, axis=0), color="black", linewidth=2, label="mean")
    ax.axhline(level, color="#FF0051", linestyle="--", linewidth=1, label=f"{level:.0%} of the weight")
    if log_x:
        ax.set_xscale("log")
    ax.set_ylim(0, 1.02)
    ax.set_xlabel("number of nearest neighbours (largest weights first)")
    signed = matrix.nnz and matrix.data.min() < 0
    ax.set_ylabel("cumulative share of |weight|" if signed else "cumulative weight")
    ax.legend(loc="lower right", frameon=False)
    if show:
        plt.show()
        return None
    return ax
