"""The report's instance figures: each helper draws on the Axes it is given and returns nothing else."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal, cast

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.ticker import MaxNLocator, NullFormatter

from .._explanation import Z_95
from ..utils import beyond_noise

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = ["beyond_noise_sentence", "helpful_and_harmful_rows", "helpful_harmful_bars", "outlier_scatter",
           "data_value_rank", "data_value_top", "gap_waterfall", "short_ticks"]

HELPFUL, HARMFUL = "#1e88e5", "#ff0d57"
_NEUTRAL = "#b8bec9"


def short_ticks(ax: Axes, axis: Literal["both", "x", "y"] = "x", nbins: int = 5) -> None:
    """At most ``nbins`` tick labels on ``axis``, small or large numbers written with a common power of ten."""
    (ax.xaxis if axis == "x" else ax.yaxis).set_major_locator(MaxNLocator(nbins=nbins))
    ax.ticklabel_format(axis=axis, style="sci", scilimits=(-3, 4), useMathText=True)


def helpful_and_harmful_rows(contribution: pd.Series, errors: pd.Series, *, k: int) -> tuple[pd.Series, pd.Series]:
    """The ``k`` most helpful and ``k`` most harmful rows among those beyond their noise
    (:func:`~shap_instances.utils.beyond_noise`: ``value -/+ z se`` away from 0, ``z`` corrected for ranking all the
    rows), largest first and smallest last; fewer, or none, when fewer rows are beyond their noise.

    Examples
    --------
    >>> import pandas as pd
    >>> from shap_instances.report._figures import helpful_and_harmful_rows
    >>> helpful, harmful = helpful_and_harmful_rows(pd.Series([0.9, 0.01, -0.5, 0.4]), pd.Series([0.1] * 4), k=2)
    >>> helpful.index.tolist(), harmful.index.tolist()
    ([0, 3], [2])
    """
    sign = beyond_noise(contribution.to_numpy(), errors.reindex(contribution.index).to_numpy())
    ordered = contribution.astype(float).iloc[np.argsort(-contribution.to_numpy(), kind="stable")]
    signs = pd.Series(sign, index=contribution.index).reindex(ordered.index).to_numpy()
    helpful, harmful = ordered[signs > 0], ordered[signs < 0]
    return helpful.iloc[:k], harmful.iloc[max(len(harmful) - k, 0):]


def beyond_noise_sentence(n_helpful: int, n_harmful: int, k: int) -> str:
    """How many rows the lists name, and that the others are within their noise when fewer than ``k`` are named.

    Examples
    --------
    >>> from shap_instances.report._figures import beyond_noise_sentence
    >>> beyond_noise_sentence(3, 10, 10)
    '3 rows are helpful beyond their error (the rest are within noise); the 10 most harmful beyond their error.'
    """
    def part(count: int, what: str) -> str:
        if count >= k:
            return f"the {k} most {what} beyond their error"
        if count == 0:
            return f"no row is {what} beyond its error"
        if count == 1:
            return f"1 row is {what} beyond its error (the rest are within noise)"
        return f"{count} rows are {what} beyond their error (the rest are within noise)"

    text = f"{part(n_helpful, 'helpful')}; {part(n_harmful, 'harmful')}."
    return text[0].upper() + text[1:]


def helpful_harmful_bars(ax: Axes, contribution: pd.Series, errors: pd.Series, *, k: int = 10) -> None:
    """Horizontal bars of the ``k`` most helpful (top) and ``k`` most harmful (bottom) training rows beyond their
    noise (:func:`helpful_and_harmful_rows`), each with a 95% error bar (``+/- 1.96`` standard errors).

    ``contribution`` is each training row's mean sign-normalised contribution, indexed by row name: positive
    when the row shrinks the other residuals; ``errors`` their standard errors. When fewer rows than ``k`` are
    beyond their noise on a side, the legend says so; when none are, the Axes says so in words.
    """
    helpful, harmful = helpful_and_harmful_rows(contribution, errors, k=k)
    shown = pd.concat([helpful, harmful])
    values = shown.to_numpy()
    names = [f"row {name}" for name in shown.index]
    colors = [HELPFUL] * len(helpful) + [HARMFUL] * len(harmful)
    positions = np.arange(len(values))[::-1].astype(float)
    positions[len(helpful):] -= 0.8  # a gap between the two groups
    ax.barh(positions, values, color=colors, height=0.75)
    bars = ax.errorbar(values, positions, xerr=Z_95 * errors.reindex(shown.index).to_numpy(), fmt="none",
                       ecolor="#333", elinewidth=1, capsize=2.5)
    ax.set_yticks(positions, names, fontsize=8)
    ax.axvline(0, color="#666", lw=0.8)
    if len(helpful) and len(harmful):
        ax.axhline(positions[len(helpful)] + 0.9, color="#999", lw=0.6, ls="--")
    ax.set_xlabel("mean contribution (sign-normalised: > 0 shrinks the other residuals)")
    short_ticks(ax, "x")
    if not len(shown):
        ax.text(0.5, 0.5, "No training row is helpful or harmful beyond its error:\nevery mean contribution is "
                "within its noise.", transform=ax.transAxes, ha="center", va="center", fontsize=9)
        return
    labels = [_count_label(len(helpful), "helpful", k), _count_label(len(harmful), "harmful", k),
              "95% interval (+/- 1.96 standard errors)"]
    ax.legend([Patch(color=HELPFUL), Patch(color=HARMFUL), bars], labels, loc="upper center", fontsize=8,
              frameon=False, bbox_to_anchor=(0.5, -0.1), ncol=2)  # below the axis: never over a bar
    ax.margins(y=0.02)


def _count_label(count: int, what: str, k: int) -> str:
    """A legend entry: the ``k`` most helpful, or how many are, beyond their error."""
    if count >= k:
        return f"{k} most {what} (beyond their error)"
    if count == 0:
        return f"no row {what} beyond its error"
    return f"{count} {what} beyond {'its' if count == 1 else 'their'} error (the rest within noise)"


def outlier_scatter(ax: Axes, x: Any, y: Any, by_behaviour: Any, by_features: Any, *, xlabel: str, ylabel: str,
                    legend: bool = True) -> None:
    """Training rows as points, marked by the two outlier flags (behaviour and raw features)."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    behaviour, features = np.asarray(by_behaviour, dtype=bool), np.asarray(by_features, dtype=bool)
    groups: list[tuple[Any, dict[str, Any], str]] = [
        (~behaviour & ~features, dict(s=10, color=_NEUTRAL, alpha=0.7), "neither"),
        (~behaviour & features, dict(s=34, facecolors="none", edgecolors=HELPFUL, linewidths=1.2),
         "feature outlier only"),
        (behaviour & ~features, dict(s=30, color=HARMFUL, edgecolors="white", linewidths=0.4),
         "behaviour outlier only"),
        (behaviour & features, dict(s=48, color=HARMFUL, edgecolors=HELPFUL, linewidths=1.4, marker="D"),
         "both"),
    ]
    for mask, style, label in groups:
        ax.scatter(x[mask], y[mask], label=f"{label} ({int(mask.sum())})", **style)
    ax.axhline(0, color="#999", lw=0.6, zorder=0)
    ax.axvline(0, color="#999", lw=0.6, zorder=0)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if legend:
        ax.legend(fontsize=8, loc="best", framealpha=0.85)


def _sign_colours(signs: Any) -> np.ndarray:
    """Helpful (+1), harmful (-1) or within noise (0): the colour of a row by the sign of its contribution mean
    beyond its error (:func:`~shap_instances.utils.beyond_noise`)."""
    signs = np.asarray(signs)
    return np.where(signs > 0, HELPFUL, np.where(signs < 0, HARMFUL, _NEUTRAL))


def _sign_legend(signs: Any) -> list[Patch]:
    """Legend patches for the signs present (a colour in the legend only when a drawn row has it)."""
    signs = np.asarray(signs)
    labels = {1: (HELPFUL, "helpful row (contribution mean > 0 beyond its error)"),
              -1: (HARMFUL, "harmful row (contribution mean < 0 beyond its error)"),
              0: (_NEUTRAL, "contribution mean within its noise")}
    return [Patch(color=colour, label=label) for sign, (colour, label) in labels.items() if np.any(signs == sign)]


def data_value_rank(ax: Axes, values: pd.Series, signs: Any, *, shown: Any) -> None:
    """Every training row's data value against its rank (largest first, log scale); the rows ``shown`` (names,
    labelled on the right) marked and coloured by ``signs`` (+1 helpful, -1 harmful, 0 within noise)."""
    order = np.argsort(-values.to_numpy(), kind="stable")
    sorted_values = values.to_numpy()[order]
    ranks = np.arange(1, len(sorted_values) + 1)
    ax.plot(ranks, sorted_values, color="#5b6475", lw=1)
    marked = np.isin(values.index[order], list(shown))
    marked_signs = np.asarray(signs)[order][marked]
    ax.scatter(ranks[marked], sorted_values[marked], c=_sign_colours(marked_signs), s=24, zorder=3)
    ax.set_xscale("log")
    ax.set_xlim(0.8, len(sorted_values) * 1.1)
    ticks = [t for t in (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000) if t <= len(sorted_values)]
    ax.set_xticks(ticks, [str(t) for t in ticks])
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel("rank of the training row (largest value first, log scale)")
    ax.set_ylabel("data value (squared mean contribution)")
    short_ticks(ax, "y")
    handles: list[Any] = [Line2D([], [], marker="o", ls="none", color="#5b6475",
                                 label=f"marked: the {int(marked.sum())} rows labelled on the right")]
    ax.legend(handles=handles + _sign_legend(marked_signs), loc="upper right", fontsize=8, framealpha=0.9)


def data_value_top(ax: Axes, values: pd.Series, signs: Any, *, errors: pd.Series | None = None, k: int = 12) -> None:
    """Horizontal bars of the ``k`` largest data values, labelled by row, coloured by ``signs`` (+1 helpful, -1
    harmful, 0 within noise), with 95% error bars (``+/- 1.96 errors``) when ``errors`` are given."""
    top = np.argsort(-values.to_numpy(), kind="stable")[:k]
    positions = np.arange(len(top))[::-1]
    ax.barh(positions, values.to_numpy()[top], color=_sign_colours(np.asarray(signs)[top]), height=0.75)
    if errors is not None:
        bars = ax.errorbar(values.to_numpy()[top], positions, xerr=Z_95 * errors.reindex(values.index[top]).to_numpy(),
                           fmt="none", ecolor="#333", elinewidth=1, capsize=2.5)
        ax.legend([bars], ["95% interval (+/- 1.96 standard errors)"], loc="upper center", fontsize=8, frameon=False,
                  bbox_to_anchor=(0.5, -0.12))  # below the axis: never over a bar
    ax.set_yticks(positions, [f"row {n}" for n in values.index[top]], fontsize=8)
    ax.set_xlabel("data value")
    short_ticks(ax, "x", nbins=4)


def gap_waterfall(values: Any, base: float, names: Sequence[str], targets: Any, *, max_display: int = 12,
                  target_label: str = "target") -> Figure:
    """shap's waterfall of one RF-GAP explanation, its bars labelled as the training rows they are.

    Parameters
    ----------
    values : array-like of shape (n_train,)
        The contributions ``k(x, i) (y_i - base)`` of the training rows to one prediction.
    base : float
        The base value (the mean training target, or a class's prior).
    names, targets : sequences of length n_train
        The training rows' names and targets (class labels for a classifier).
    max_display : int, default=12
        Bars drawn, the last merging the other training rows.
    target_label : str
        What the target is called in the labels ("target", "class").

    Returns
    -------
    matplotlib Figure
        Each bar is labelled "row NAME (target VALUE)"; the merged bar "N other training rows" (shap's own label
        says "features").
    """
    import shap

    labels = [f"row {name} ({target_label} {_short(t)})" for name, t in zip(names, targets)]
    row = shap.Explanation(np.asarray(values, dtype=np.float64), base_values=float(base), feature_names=labels)
    fig = plt.figure()  # shap's waterfall draws on the current figure: never on one the caller left open
    shap.plots.waterfall(row, max_display=max_display, show=False)
    ax = fig.axes[0]
    # shap writes every label twice at the same height (a grey "value = " part under the name); the labels here
    # carry no "=", so keep one copy, and call the merged bar what it is
    labels = [t.get_text().replace("other features", "other training rows") for t in ax.get_yticklabels()]
    half = len(labels) // 2
    ax.set_yticks(ax.get_yticks(), [""] * half + labels[half:])
    fig.set_size_inches(8.5, 5.5)
    return fig


def _short(value) -> str:
    """A target value in a label: numbers with four significant digits, class labels as they are."""
    if isinstance(value, int | float | np.integer | np.floating):
        return f"{float(value):.4g}"
    return str(value)


def figure_of(ax: Axes | None) -> Figure:
    """The figure of the Axes a plot returned (the package's plots return their Axes when ``show=False``)."""
    return cast("Figure", cast("Axes", ax).figure)
