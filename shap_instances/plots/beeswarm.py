"""shap's beeswarm plot, its colour bar saying what the colour of a training row means."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import matplotlib.pyplot as plt
import shap

from ._training_rows import colour_legend, over_training_rows

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = ["beeswarm"]


def beeswarm(explanation: shap.Explanation, *, max_display: int = 10, show: bool = True, **options: Any) -> Axes | None:
    """:func:`shap.plots.beeswarm`, with the colour bar of an explanation over training rows labelled by what its
    ``data`` holds: ``training target - prediction`` (regression) or ``training label = predicted label``
    (classification, 1 where they agree), instead of shap's "Feature value".

    Parameters
    ----------
    explanation : shap.Explanation
        Several explained rows, one output.
    max_display : int, default=10
    show : bool, default=True
        Show the figure; ``show=False`` returns the Axes.
    **options
        Passed to :func:`shap.plots.beeswarm` (``color_bar_label`` overrides the label).

    Examples
    --------
    >>> import matplotlib; matplotlib.use("Agg")
    >>> from sklearn.ensemble import RandomForestRegressor
    >>> from shap_instances.datasets import load_diabetes
    >>> import shap_instances as si
    >>> X, y = load_diabetes()
    >>> forest = RandomForestRegressor(10, random_state=0).fit(X[:40], y[:40])
    >>> ax = si.plots.beeswarm(si.GapExplainer(forest, X[:40], y=y[:40])(X[40:50]), show=False)
    >>> ax.figure.axes[-1].get_ylabel()
    'training target - prediction'
    """
    if over_training_rows(explanation):
        options.setdefault("color_bar_label", colour_legend(explanation))
    ax = shap.plots.beeswarm(explanation, max_display=max_display, show=False, **options)
    if show:
        plt.show()
        return None
    return ax
