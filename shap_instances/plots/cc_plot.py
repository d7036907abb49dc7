"""The contribution-composition (CC) plot of a symmetric residual decomposition (Liu & Barnard, figure 3)."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

__all__ = ["cc_plot"]


def cc_plot(explanation, *, statistic="mean", color=None, sign_by="explained", ax=None, show=True,
            cmap="viridis", label="target"):
    """Scatter of each instance's mean (or variance of) composition against its contribution.

    Parameters
    ----------
    explanation : shap.Explanation
        A symmetric decomposition from :class:`~shap_instances.InstanceKernelExplainer`.
    statistic : {"mean", "var"}, default="mean"
        "var" draws the CC variance plot (figure 5).
    color : array-like, optional
        Colour of each instance (default: the training target, ``explanation.data[0]``).
    sign_by : {"explained", "training"}
        Sign normalisation of the contributions, see :func:`shap_instances.metrics.normalised_contributions`.
    ax, show
        shap conventions: draw on ``ax``; ``show=False`` returns the Axes.

    Examples
    --------
    >>> import numpy as np, shap, matplotlib
    >>> matplotlib.use("Agg")
    >>> from shap_instances.plots import cc_plot
    >>> e = shap.Explanation(np.random.default_rng(0).normal(size=(5, 5)), base_values=np.zeros(5),
    ...                      data=np.tile(np.arange(5.0), (5, 1)))
    >>> ax = cc_plot(e, show=False)
    """
    from ..metrics.composition import cc_summary

    summary = cc_summary(explanation, sign_by)
    if ax is None:
        _, ax = plt.subplots(figsize=(6, 5))
    color = np.asarray(explanation.data)[0] if color is None else np.asarray(color)
    points = ax.scatter(summary[f"composition_{statistic}"], summary[f"contribution_{statistic}"], c=color,
                        cmap=cmap, s=14, alpha=0.8)
    ax.figure.colorbar(points, ax=ax, label=label)
    name = "mean" if statistic == "mean" else "variance"
    zero_base = statistic == "mean" and np.allclose(explanation.base_values, 0.0)
    ax.set_xlabel(f"composition {name}" + (" (residual / n)" if zero_base else ""))
    ax.set_ylabel(f"contribution {name} (sign-normalised)")
    ax.axhline(0, color="#999", lw=0.6)
    ax.axvline(0, color="#999", lw=0.6)
    if show:
        plt.show()
        return None
    return ax
