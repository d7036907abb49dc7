"""Force plot over training instances: how the training rows push one residual (Liu & Barnard, figure 7)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import matplotlib.pyplot as plt
import numpy as np
import shap

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = ["instance_force"]


def instance_force(explanation: shap.Explanation, row: int = 0, *, max_display: int = 10, ax: Axes | None = None,
                   show: bool = True, figsize: tuple[float, float] = (20, 3)) -> Axes | None:
    """Force plot of one explained row's residual decomposition, the players being named training instances.

    The ``max_display`` training instances with the largest absolute contributions are drawn by name (with
    their target, ``explanation.data``); the others are merged into one "other instances" force. The plot
    starts at ``base_values[row]`` (v(empty)) and ends at the residual ``base + sum``.

    Parameters
    ----------
    explanation : shap.Explanation
        A decomposition from :class:`~shap_instances.InstanceKernelExplainer`.
    row : int or str, default=0
        The explained row (index, or one of ``explanation.row_names``).
    max_display : int, default=10
        Training instances drawn by name.
    ax : matplotlib Axes, optional
        Without it, :func:`shap.plots.force` draws (``matplotlib=True``) on a new figure; with it, a compact
        force bar is drawn on ``ax`` (shap's force plot cannot draw on a given Axes).
    show : bool, default=True
        Show the figure; ``show=False`` returns the Axes.
    figsize : tuple, default=(20, 3)
        Size of shap's figure (``ax=None`` only).

    Examples
    --------
    >>> import numpy as np, shap, matplotlib
    >>> matplotlib.use("Agg")
    >>> from shap_instances.plots import instance_force
    >>> e = shap.Explanation(np.array([[1.0, -2.0, 0.5]]), base_values=np.zeros(1), data=np.ones((1, 3)),
    ...                      feature_names=["a", "b", "c"])
    >>> ax = instance_force(e, 0, show=False)
    """
    values = np.asarray(explanation.values)
    if values.ndim != 2:
        raise ValueError(f"instance_force needs values of shape (n_explained, n_train), got {values.shape}.")
    if isinstance(row, str):
        names = list(getattr(explanation, "row_names", None) or [])
        if row not in names:
            raise ValueError(f"{row!r} is not an explained row's name.")
        row = names.index(row)
    phi = values[row]
    base = float(np.asarray(explanation.base_values).reshape(len(values), -1)[row, 0])
    names = explanation.feature_names or [f"instance[{i}]" for i in range(len(phi))]
    data = np.zeros_like(values) if explanation.data is None else np.asarray(explanation.data)
    top = np.argsort(-np.abs(phi), kind="stable")[:max_display]
    rest = np.setdiff1d(np.arange(len(phi)), top)
    shown = list(phi[top]) + ([phi[rest].sum()] if len(rest) else [])
    labels = [str(names[i]) for i in top] + ([f"{len(rest)} other instances"] if len(rest) else [])
    targets = [f"{float(data[row, i]):.4g}" for i in top] + ([""] if len(rest) else [])  # "": no "= value"
    if ax is None:
        figure = shap.plots.force(base, np.array(shown), np.array(targets, dtype=object), feature_names=labels,
                                  out_names="residual", matplotlib=True, show=False, figsize=figsize)
        ax = figure.axes[0]
    else:
        _draw_bar(ax, base, np.array(shown), labels)
    if show:
        plt.show()
        return None
    return ax


def _draw_bar(ax: Axes, base: float, shown: Any, labels: list[str]) -> None:
    """A one-line force bar: increases (red) stacked up to the residual, decreases (blue) down to it."""
    order = np.argsort(-np.abs(shown), kind="stable")
    position = base
    for sign, colour in ((1, "#ff0051"), (-1, "#008bfb")):
        for i in order[np.sign(shown[order]) == sign]:
            ax.barh(0, shown[i], left=position, height=0.4, color=colour, edgecolor="white")
            if abs(shown[i]) > 0.05 * np.abs(shown).sum():
                ax.text(position + shown[i] / 2, -0.35, labels[i], ha="center", va="top", rotation=30, fontsize=8)
            position += shown[i]
    ax.axvline(base, color="grey", linestyle=":", label="base value")
    ax.axvline(position, color="black", label="residual")
    ax.set_yticks([])
    ax.set_ylim(-1.2, 0.6)
    ax.set_xlabel("residual contribution")
    ax.legend(loc="upper right", fontsize=8)
