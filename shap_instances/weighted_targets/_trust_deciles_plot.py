"""Out-of-sample error against a trust score, by decile (Rosaler et al., figures 2, 10, 11)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from ..exceptions import DataValidationError
from ._deciles import trust_decile_table

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = ["trust_deciles"]


def trust_deciles(score_or_table: Any, error: ArrayLike | None = None, *, n_bins: int = 10, ax: Axes | None = None,
                  show: bool = True, xlabel: str = "trust score decile", ylabel: str = "mean out-of-sample error",
                  color: str = "#1E88E5") -> Axes | None:
    """Bar chart of the mean out-of-sample error (or accuracy) in each quantile bin of a trust score.

    Parameters
    ----------
    score_or_table : array-like of shape (n,) or DataFrame
        The trust score of each test point, or a table from
        :func:`shap_instances.weighted_targets.trust_decile_table`.
    error : array-like of shape (n,), optional
        The realised error (or 0/1 correctness) of each point; required with a score.
    n_bins : int, default=10
    ax : matplotlib Axes, optional
    show : bool, default=True
    xlabel, ylabel, color : str

    Returns
    -------
    matplotlib Axes when ``show=False``.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import numpy as np
    >>> from shap_instances.plots import trust_deciles
    >>> rng = np.random.default_rng(0)
    >>> score = rng.uniform(size=200)
    >>> ax = trust_deciles(score, score + rng.normal(0, 0.1, 200), show=False)
    >>> len(ax.patches)
    10
    """
    if isinstance(score_or_table, pd.DataFrame):
        table = score_or_table
        missing = {"bin", "error_mean"} - set(table.columns)
        if missing:
            raise DataValidationError(f"the table lacks columns {sorted(missing)}; build it with trust_decile_table.")
    else:
        if error is None:
            raise DataValidationError("error is required with a score: trust_deciles(score, error).")
        table = trust_decile_table(score_or_table, error, n_bins=n_bins)
    if ax is None:
        _, ax = plt.subplots(figsize=(7, 3.8))
    positions = np.arange(len(table))
    sem = table["error_sem"].fillna(0.0) if "error_sem" in table else None
    ax.bar(positions, table["error_mean"], yerr=sem, color=color, alpha=0.85, capsize=3)
    ax.set_xticks(positions)
    ax.set_xticklabels(table["bin"].astype(str), rotation=45, ha="right", fontsize=7)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if show:
        plt.show()
        return None
    return ax
