"""The check that shap's idioms and plots work on an explanation."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import shap

from .._base import ConformanceProblem
from ._common import build, call, first, one_output, rule, same

__all__ = ["check_shap_plots"]

#: Players drawn by the plots that draw one shape per player (a violin's density costs about 0.2 s each).
SHOWN = 4

#: shap's plots that must render an explanation of one output: name -> draw(explanation, explainer).
PLOTS: dict[str, Callable] = {
    "waterfall": lambda e, ex: shap.plots.waterfall(e[0], max_display=SHOWN, show=False),
    "bar": lambda e, ex: shap.plots.bar(e, max_display=SHOWN, show=False),
    "beeswarm": lambda e, ex: shap.plots.beeswarm(e, max_display=SHOWN, show=False),
    "heatmap": lambda e, ex: shap.plots.heatmap(e, max_display=SHOWN, show=False),
    "scatter": lambda e, ex: shap.plots.scatter(e[:, int(np.abs(e.values).mean(0).argmax())], show=False),
    "violin": lambda e, ex: shap.plots.violin(e, max_display=SHOWN, show=False),
    "force": lambda e, ex: shap.plots.force(e[0], matplotlib=True, show=False),
    "decision_plot": lambda e, ex: shap.decision_plot(first(ex.expected_value), e.values, show=False),
}


def _idioms(e: shap.Explanation) -> None:
    """shap's idioms on a single-output explanation (shap 0.46 to 0.51 fails on them itself once an output is
    sliced from a multi-output explanation, for its own explainers too: those are checked on the plots only)."""
    import matplotlib.pyplot as plt

    order = e.abs.mean(0).argsort
    top = int(np.asarray(order.values)[-1])
    same(e[:, order[-1]].values, np.asarray(e.values)[:, top], "e[:, e.abs.mean(0).argsort[-1]]")
    shap.plots.heatmap(e, instance_order=e.sum(1), show=False)
    assert plt.gcf().axes, "heatmap(instance_order=e.sum(1)) drew nothing"
    plt.close("all")


def _bar_is_truthful(e: shap.Explanation) -> None:
    """shap's bar plot of the first row draws one bar per player, of the player's value, labelled by its name."""
    import matplotlib.pyplot as plt
    from matplotlib.patches import Rectangle

    row, names = np.asarray(e.values[0], dtype=np.float64), [str(n) for n in e.feature_names]
    shap.plots.bar(e[0], max_display=len(names) + 1, show=False)
    ax = plt.gca()
    widths = [patch.get_width() for patch in ax.patches if isinstance(patch, Rectangle)]
    labels = [label.get_text() for label in ax.get_yticklabels()][:len(widths)]  # then shap's name-only copies
    assert len(widths) == len(names) == len(labels), (
        f"shap's bar plot of one row drew {len(widths)} bars and {len(labels)} labels for {len(names)} players")
    for label, width in zip(labels, widths, strict=True):
        name = next((n for n in names if label == n or label.endswith(f" = {n}")), None)
        assert name is not None, f"shap's bar plot labels a bar {label!r}, which names no player of {names[:4]}..."
        value = row[names.index(name)]
        assert np.isclose(width, value, rtol=1e-9, atol=1e-12), (
            f"shap's bar plot draws player {name!r} as {width:.6g}, its value is {value:.6g}")
    plt.close("all")


@rule("shap's idioms (e.abs.mean(0).argsort, e[:, i], heatmap(instance_order=e.sum(1))) work and shap's waterfall, "
      "bar, beeswarm, heatmap, scatter, violin, force and decision plots draw the explanation; the bar plot of a row "
      "draws each player's value under the player's name")
def check_shap_plots(cls: type, problem: ConformanceProblem) -> None:
    """shap's idioms and plots work on the explanation (the first output of a multi-output one), and its bar plot
    says what the explanation says. The plots draw a few players each (``SHOWN``), which keeps the check to seconds.

    Examples
    --------
    >>> from shap_instances import NaiveBayesExplainer
    >>> from shap_instances.testing import check_shap_plots
    >>> check_shap_plots(NaiveBayesExplainer)
    """
    import matplotlib.pyplot as plt

    explainer = build(cls, problem)
    explanation = call(explainer, problem)
    if np.ndim(explanation.values) == 2:
        _idioms(explanation)
    e = one_output(explanation)
    _bar_is_truthful(e)
    for name, draw in PLOTS.items():
        try:
            draw(e, explainer)
        except Exception as exc:
            raise AssertionError(f"shap's {name} plot raised {type(exc).__name__}: {exc}") from exc
        assert plt.gcf().axes, f"shap's {name} plot drew nothing"
        plt.close("all")
