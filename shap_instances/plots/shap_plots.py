"""shap's plots of an explanation over training rows, labelled for what is drawn (``docs/pictures.md``).

Each function draws with shap's own plot (same bars, dots and colours) and then relabels the figure when the
explanation's players are training rows: a training row is named ``train[17] (y = 239)`` (its name and its
target, the class label for classifiers) instead of shap's ``<data> = <name>``, the remainder is "N other training
rows", not "features", and the colour bar and a scatter plot's x-axis say what ``data`` holds (``training target -
prediction``, or ``training label = predicted label``). An explanation over features is drawn by shap unchanged.
Every function takes ``show=True`` and returns the Axes when ``show=False``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import matplotlib.pyplot as plt
import numpy as np
import shap

from ..exceptions import DataValidationError
from ._training_rows import colour_legend, column_label, over_training_rows, row_labels

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = ["bar", "beeswarm", "decision", "force", "heatmap", "scatter", "violin", "waterfall"]

def waterfall(explanation: shap.Explanation, *, max_display: int = 10, show: bool = True) -> Axes | None:
    """:func:`shap.plots.waterfall` of one explained row (``e[0]``), bars named ``train[17] (y = 239)``.

    Examples
    --------
    >>> import matplotlib; matplotlib.use("Agg")
    >>> from sklearn.ensemble import RandomForestRegressor
    >>> from shap_instances.datasets import load_diabetes
    >>> import shap_instances as si
    >>> X, y = load_diabetes()
    >>> forest = RandomForestRegressor(10, random_state=0).fit(X[:40], y[:40])
    >>> e = si.GapExplainer(forest, X[:40], y=y[:40])(X[40:50])
    >>> ax = si.plots.waterfall(e[0], show=False)
    >>> [t.get_text() for t in ax.get_yticklabels()][:2]
    ['31 other training rows', 'train[7] (y = 63)']
    """
    return _finish(shap.plots.waterfall(explanation, max_display=max_display, show=False), explanation, show)


def bar(explanation: shap.Explanation, *, show: bool = True, **options: Any) -> Axes | None:
    """:func:`shap.plots.bar` (mean absolute values over explained rows, or one row's), relabelled; a
    ``clustering=`` of another number of players (shap's feature clustering) is refused with
    :class:`~shap_instances.exceptions.DataValidationError` (shap's own bar raises an IndexError).

    Examples
    --------
    >>> import matplotlib; matplotlib.use("Agg")
    >>> from sklearn.ensemble import RandomForestRegressor
    >>> from shap_instances.datasets import load_diabetes
    >>> import shap_instances as si
    >>> X, y = load_diabetes()
    >>> forest = RandomForestRegressor(10, random_state=0).fit(X[:40], y[:40])
    >>> e = si.GapExplainer(forest, X[:40], y=y[:40])(X[40:50])
    >>> ax = si.plots.bar(e, show=False)
    >>> [t.get_text() for t in ax.get_yticklabels()][-1]
    'Sum of 31 other training rows'
    """
    clustering = options.get("clustering")
    n_players = np.shape(explanation.values)[-1]
    if clustering is not None and not isinstance(clustering, bool) and np.shape(clustering)[0] + 1 != n_players:
        raise DataValidationError(
            f"clustering= merges {np.shape(clustering)[0] + 1} leaves, but the explanation has {n_players} players"
            + (" (training rows): a clustering of features, e.g. shap.utils.hclust(X), does not apply to them; use "
               "shap_instances.utils.player_clustering(explainer)." if over_training_rows(explanation) else "."))
    return _finish(shap.plots.bar(explanation, show=False, **options), explanation, show)


def beeswarm(explanation: shap.Explanation, *, show: bool = True, **options: Any) -> Axes | None:
    """:func:`shap.plots.beeswarm`, the colour bar labelled by what ``data`` holds.

    Examples
    --------
    >>> import matplotlib; matplotlib.use("Agg")
    >>> from sklearn.ensemble import RandomForestRegressor
    >>> from shap_instances.datasets import load_diabetes
    >>> import shap_instances as si
    >>> X, y = load_diabetes()
    >>> forest = RandomForestRegressor(10, random_state=0).fit(X[:40], y[:40])
    >>> e = si.GapExplainer(forest, X[:40], y=y[:40])(X[40:50])
    >>> ax = si.plots.beeswarm(e, show=False)
    >>> ax.figure.axes[-1].get_ylabel()
    'training target - prediction'
    """
    if over_training_rows(explanation):
        options.setdefault("color_bar_label", colour_legend(explanation))
    return _finish(shap.plots.beeswarm(explanation, show=False, **options), explanation, show)


def heatmap(explanation: shap.Explanation, *, show: bool = True, **options: Any) -> Axes | None:
    """:func:`shap.plots.heatmap`, relabelled.

    Examples
    --------
    >>> import matplotlib; matplotlib.use("Agg")
    >>> from sklearn.ensemble import RandomForestRegressor
    >>> from shap_instances.datasets import load_diabetes
    >>> import shap_instances as si
    >>> X, y = load_diabetes()
    >>> forest = RandomForestRegressor(10, random_state=0).fit(X[:40], y[:40])
    >>> e = si.GapExplainer(forest, X[:40], y=y[:40])(X[40:50])
    >>> ax = si.plots.heatmap(e, show=False)
    >>> "other training rows" in ax.get_yticklabels()[-1].get_text()
    True
    """
    return _finish(shap.plots.heatmap(explanation, show=False, **options), explanation, show)


def violin(explanation: shap.Explanation, *, show: bool = True, **options: Any) -> Axes | None:
    """:func:`shap.plots.violin`, relabelled, the colour bar labelled by what ``data`` holds.

    Examples
    --------
    >>> import matplotlib; matplotlib.use("Agg")
    >>> from sklearn.ensemble import RandomForestRegressor
    >>> from shap_instances.datasets import load_diabetes
    >>> import shap_instances as si
    >>> X, y = load_diabetes()
    >>> forest = RandomForestRegressor(10, random_state=0).fit(X[:40], y[:40])
    >>> e = si.GapExplainer(forest, X[:40], y=y[:40])(X[40:50])
    >>> ax = si.plots.violin(e, max_display=3, show=False)
    >>> ax.get_yticklabels()[-1].get_text().startswith("train[")
    True
    """
    if over_training_rows(explanation):
        options.setdefault("color_bar_label", colour_legend(explanation))
    shap.plots.violin(explanation, show=False, **options)
    return _finish(plt.gca(), explanation, show)


def scatter(explanation: shap.Explanation, *, show: bool = True, **options: Any) -> Axes | None:
    """:func:`shap.plots.scatter` of one training row (``e[:, "train[3]"]``): x is that row's target compared with
    each explained row's prediction (a number per explained row: shap would draw the row's one target text as a
    lone tick), y its contribution, and the axes say so.

    Examples
    --------
    >>> import matplotlib; matplotlib.use("Agg")
    >>> from sklearn.ensemble import RandomForestRegressor
    >>> from shap_instances.datasets import load_diabetes
    >>> import shap_instances as si
    >>> X, y = load_diabetes()
    >>> forest = RandomForestRegressor(10, random_state=0).fit(X[:40], y[:40])
    >>> e = si.GapExplainer(forest, X[:40], y=y[:40])(X[40:50])
    >>> ax = si.plots.scatter(e[:, 3], show=False)
    >>> ax.get_xlabel(), ax.get_ylabel()
    ('train[3] (y = 206): training target - prediction', 'contribution of train[3] (y = 206)')
    """
    if not over_training_rows(explanation):
        return _finish(shap.plots.scatter(explanation, show=False, **options), explanation, show)
    label = column_label(explanation)
    # shap draws x from display_data when it is set: the row's target, one text for every explained row (a lone
    # tick). x is data, a number per explained row, so the row is drawn without display_data.
    numeric = shap.Explanation(values=np.asarray(explanation.values), base_values=explanation.base_values,
                               data=np.asarray(explanation.data, dtype=np.float64),
                               feature_names=explanation.feature_names)
    ax = shap.plots.scatter(numeric, show=False, **options)
    ax.set_xlabel(f"{label}: {colour_legend(explanation)}")
    ax.set_ylabel(f"contribution of {label}")
    return _finish(ax, explanation, show)


def force(explanation: shap.Explanation, *, show: bool = True, matplotlib: bool = True, **options: Any) -> Any:
    """:func:`shap.plots.force` of one explained row (``e[0]``), forces named ``train[17] (y = 239)``; with
    ``matplotlib=False`` it returns shap's HTML (JavaScript) plot with the same names.

    Examples
    --------
    >>> import matplotlib; matplotlib.use("Agg")
    >>> from sklearn.ensemble import RandomForestRegressor
    >>> from shap_instances.datasets import load_diabetes
    >>> import shap_instances as si
    >>> X, y = load_diabetes()
    >>> forest = RandomForestRegressor(10, random_state=0).fit(X[:40], y[:40])
    >>> e = si.GapExplainer(forest, X[:40], y=y[:40])(X[40:50])
    >>> figure = si.plots.force(e[0], show=False)
    >>> any(t.get_text().startswith("train[") for t in figure.axes[0].texts)
    True
    """
    values = np.asarray(explanation.values)
    base = float(np.asarray(explanation.base_values).ravel()[0])
    if not over_training_rows(explanation):
        return shap.plots.force(explanation, matplotlib=matplotlib, show=show, **options)
    return shap.plots.force(base, values, feature_names=row_labels(explanation), matplotlib=matplotlib, show=show,
                            **options)


def decision(explanation: shap.Explanation, *, show: bool = True, **options: Any) -> Axes | None:
    """shap's decision plot of several explained rows (one output), training rows named ``train[17] (y = 239)``.

    Examples
    --------
    >>> import matplotlib; matplotlib.use("Agg")
    >>> from sklearn.ensemble import RandomForestRegressor
    >>> from shap_instances.datasets import load_diabetes
    >>> import shap_instances as si
    >>> X, y = load_diabetes()
    >>> forest = RandomForestRegressor(10, random_state=0).fit(X[:40], y[:40])
    >>> e = si.GapExplainer(forest, X[:40], y=y[:40])(X[40:50])
    >>> ax = si.plots.decision(e, show=False)
    >>> ax.get_yticklabels()[-1].get_text().startswith("train[")
    True
    """
    names = row_labels(explanation) if over_training_rows(explanation) else list(explanation.feature_names)
    base = float(np.asarray(explanation.base_values).ravel()[0])
    shap.decision_plot(base, np.asarray(explanation.values), feature_names=names, show=False, **options)
    return _finish(plt.gca(), explanation, show)


def _finish(ax: Axes, explanation: shap.Explanation, show: bool) -> Axes | None:
    if over_training_rows(explanation):
        _relabel(ax, explanation)
    if show:
        plt.show()
        return None
    return ax


def _relabel(ax: Axes, explanation: shap.Explanation) -> None:
    """Name the training rows on ``ax``'s y-axis (the axis that lists players) and fix "features" wherever shap
    wrote it; ``<data> = <name>`` labels (the waterfall's) become the row's label."""
    names = explanation.feature_names
    if isinstance(names, str):  # one column (a scatter plot's)
        labels = {names: column_label(explanation)}
    else:
        labels = dict(zip([str(n) for n in names], row_labels(explanation)))
    new = [_relabelled(t.get_text(), labels) for t in ax.get_yticklabels()]
    ax.set_yticks(ax.get_yticks(), new)
    for axes in ax.figure.axes:
        for text in axes.texts:
            text.set_text(_relabelled(text.get_text(), labels))
        if axes.get_ylabel() == "Feature value":
            axes.set_ylabel(colour_legend(explanation))


def _relabelled(text: str, labels: dict[str, str]) -> str:
    stripped = text.strip()
    if stripped in labels:
        return labels[stripped]
    if " = " in stripped and stripped.rsplit(" = ", 1)[1] in labels:  # shap's "<data> = <name>"
        return labels[stripped.rsplit(" = ", 1)[1]]
    return text.replace("other features", "other training rows")
