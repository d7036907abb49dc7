"""shap's waterfall plot, with training rows labelled as training rows."""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING

import matplotlib.pyplot as plt
import shap

from ._training_rows import over_training_rows, row_labels

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = ["waterfall"]


def waterfall(explanation: shap.Explanation, *, max_display: int = 10, show: bool = True) -> Axes | None:
    """:func:`shap.plots.waterfall` of one explained row, its bars labelled ``train[17] (y = 239)``.

    shap labels a bar ``<data> = <name>`` and the remainder ``N other features``, which over training rows reads
    as a feature equal to a number. Here, for an explanation over training rows, each bar is named by the
    training row and its target (the class label for classifiers), and the remainder says ``N other training
    rows``; the bars, their order and the axis are shap's. A feature explanation is drawn by shap unchanged.

    Parameters
    ----------
    explanation : shap.Explanation
        One explained row (``explanation[0]``; one output: ``explanation[0, :, k]``).
    max_display : int, default=10
        Bars drawn, the remainder included.
    show : bool, default=True
        Show the figure; ``show=False`` returns the Axes.

    Examples
    --------
    >>> import matplotlib; matplotlib.use("Agg")
    >>> from sklearn.ensemble import RandomForestRegressor
    >>> from shap_instances.datasets import load_diabetes
    >>> import shap_instances as si
    >>> X, y = load_diabetes()
    >>> forest = RandomForestRegressor(10, random_state=0).fit(X[:40], y[:40])
    >>> e = si.GapExplainer(forest, X[:40], y=y[:40])(X[40:42])
    >>> ax = si.plots.waterfall(e[0], show=False)
    >>> [t.get_text() for t in ax.get_yticklabels()][0]
    '31 other training rows'
    """
    rows = over_training_rows(explanation)
    if rows:
        explanation = copy.copy(explanation)
        explanation.feature_names = row_labels(explanation)
        explanation.data = explanation.display_data = None  # labels are the names alone: no "<data> = "
    ax = shap.plots.waterfall(explanation, max_display=max_display, show=False)
    if rows:
        _relabel(ax)
    if show:
        plt.show()
        return None
    return ax


def _relabel(ax: Axes) -> None:
    """shap's remainder label says "features"; and its second, overlaid set of tick labels (the part after the
    last "=") cuts ``(y = 239)`` to `` 239)``: both sets get the full labels."""
    labels = [t.get_text() for t in ax.get_yticklabels()]
    half = len(labels) // 2
    full = [label.replace("other features", "other training rows") for label in labels[:half]]
    ax.set_yticklabels(full + full)
