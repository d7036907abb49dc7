"""shap's scatter plot of one training row, its x-axis named for what it is."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import matplotlib.pyplot as plt
import shap

from ._training_rows import colour_legend, column_label, over_training_rows

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = ["scatter"]


def scatter(explanation: shap.Explanation, *, show: bool = True, **options: Any) -> Axes | None:
    """:func:`shap.plots.scatter` of one column: for a training row, x is that row's target compared with each
    explained row's prediction (``data``, ``docs/pictures.md``), and the axis says so.

    Parameters
    ----------
    explanation : shap.Explanation
        One column over several explained rows (``explanation[:, "train[17]"]``).
    show : bool, default=True
        Show the figure; ``show=False`` returns the Axes.
    **options
        Passed to :func:`shap.plots.scatter`.

    Examples
    --------
    >>> import matplotlib; matplotlib.use("Agg")
    >>> from sklearn.ensemble import RandomForestRegressor
    >>> from shap_instances.datasets import load_diabetes
    >>> import shap_instances as si
    >>> X, y = load_diabetes()
    >>> forest = RandomForestRegressor(10, random_state=0).fit(X[:40], y[:40])
    >>> e = si.GapExplainer(forest, X[:40], y=y[:40])(X[40:50])
    >>> si.plots.scatter(e[:, 3], show=False).get_xlabel()
    'train[3] (y = 206): training target - prediction'
    """
    ax = shap.plots.scatter(explanation, show=False, **options)
    if over_training_rows(explanation):
        ax.set_xlabel(f"{column_label(explanation)}: {colour_legend(explanation)}")
    if show:
        plt.show()
        return None
    return ax

