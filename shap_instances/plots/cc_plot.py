"""The contribution-composition (CC) plot of a symmetric residual decomposition (Liu & Barnard, figure 3)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import shap
from matplotlib.ticker import MaxNLocator

from ._training_rows import target_texts

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = ["cc_plot"]


def cc_plot(explanation: shap.Explanation | pd.DataFrame, *, statistic: str = "mean", color: Any = None,
            sign_by: str = "training", ax: Axes | None = None, show: bool = True, cmap: str = "viridis",
            label: str = "target") -> Axes | None:
    """Scatter of each instance's mean (or variance of) composition against its contribution.

    Parameters
    ----------
    explanation : shap.Explanation or DataFrame
        A symmetric decomposition from :class:`~shap_instances.InstanceKernelExplainer`, or a table with the
        columns of :func:`~shap_instances.metrics.cc_summary` (``composition_mean``, ``contribution_mean``, ...;
        e.g. statistics estimated from a sample of explained rows). Rows whose statistic is NaN are not drawn.
    statistic : {"mean", "var"}, default="mean"
        "var" draws the CC variance plot (figure 5). Its axes show the range of the data (variances are
        non-negative, so no zero lines are drawn); the mean plot draws the zero lines, where residuals and
        contributions change sign.
    color : array-like, optional
        Colour of each instance (default: the training target, read from ``explanation.display_data``: ``data``
        holds each target minus an explained row's prediction; required with a table).
        With ten distinct values or fewer (class labels) the colour bar is labelled at those values.
    sign_by : {"training", "explained"}, default="training"
        Whose residual signs the contributions (:func:`shap_instances.metrics.normalised_contributions`).
        "training" (the default): training instance i's contribution mean is ``-sgn(e_i) mean_j phi[j, i]``,
        signed by its *own* residual, the convention of the paper's figure 3 (its Boston rows with MEDV = 50 sit
        at the top, "a high contribution value"; docs/explainers/residual.md, "Which sign the paper's figure 3
        used", derives it). "explained": eq. 5 read literally, each entry signed by the residual it is part of,
        ``mean_j -sgn(e_j) phi[j, i]``, positive when i shrinks the residuals on average (the default of
        :func:`~shap_instances.metrics.cc_summary`). Ignored when ``explanation`` is a table.
    ax, show
        shap conventions: draw on ``ax``; ``show=False`` returns the Axes.
    cmap, label : str
        Colour map, and the colour bar's label.

    Examples
    --------
    >>> import numpy as np, shap, matplotlib
    >>> matplotlib.use("Agg")
    >>> from shap_instances.plots import cc_plot
    >>> e = shap.Explanation(np.random.default_rng(0).normal(size=(5, 5)), base_values=np.zeros(5),
    ...                      data=np.tile(np.arange(5.0), (5, 1)))
    >>> ax = cc_plot(e, show=False)                        # the paper's figure 3 convention
    >>> ax = cc_plot(e, sign_by="explained", show=False)   # eq. 5 read literally
    >>> ax = cc_plot(e, statistic="var", show=False)
    >>> bool(ax.get_xlim()[0] > 0)
    True
    """
    from ..metrics.composition import cc_summary

    if isinstance(explanation, pd.DataFrame):
        summary, zero_base = explanation, True
        if color is None:
            raise ValueError("cc_plot(table) needs color=, one value per row of the table (the training target).")
    else:
        summary = cc_summary(explanation, sign_by)
        zero_base = np.allclose(explanation.base_values, 0.0)
        color = _training_targets(explanation) if color is None else color
    color = np.asarray(color, dtype=np.float64)
    x = summary[f"composition_{statistic}"].to_numpy(dtype=np.float64)
    y = summary[f"contribution_{statistic}"].to_numpy(dtype=np.float64)
    drawn = np.isfinite(x) & np.isfinite(y)
    if ax is None:
        _, ax = plt.subplots(figsize=(6, 5))
    points = ax.scatter(x[drawn], y[drawn], c=color[drawn], cmap=cmap, s=14, alpha=0.8)
    levels = np.unique(color[drawn])
    bar = ax.figure.colorbar(points, ax=ax, label=label)
    if 1 < levels.size <= 10:
        bar.set_ticks(levels.tolist())
    name = "mean" if statistic == "mean" else "variance"
    ax.set_xlabel(f"composition {name}" + (" (residual / n)" if statistic == "mean" and zero_base else ""))
    sign = {"training": " (signed by own residual)", "explained": " (eq. 5: signed by each residual)"}
    ax.set_ylabel(f"contribution {name}" + ("" if isinstance(explanation, pd.DataFrame) else sign.get(sign_by, "")))
    if statistic == "mean":
        ax.axhline(0, color="#999", lw=0.6)
        ax.axvline(0, color="#999", lw=0.6)
    for axis in (ax.xaxis, ax.yaxis):  # few, short tick labels: they never run together
        axis.set_major_locator(MaxNLocator(nbins=6))
    ax.ticklabel_format(style="sci", scilimits=(-3, 4), useMathText=True)
    if show:
        plt.show()
        return None
    return ax


def _training_targets(explanation: shap.Explanation) -> np.ndarray:
    """Each training row's target (class labels as their codes, in sorted order), from the explanation's
    ``display_data`` (the target as text; ``data[j, i]`` is target ``i`` minus prediction ``j``)."""
    if getattr(explanation, "display_data", None) is None:
        return np.asarray(explanation.data)[0]
    text = target_texts(explanation).astype(str)
    try:
        return text.astype(np.float64)
    except ValueError:  # class labels
        return np.unique(text, return_inverse=True)[1].astype(np.float64)
