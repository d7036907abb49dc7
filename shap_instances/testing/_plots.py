"""The check that shap's idioms and plots work on an explanation."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import shap

from .._base import ConformanceProblem
from ._common import build, call, first, one_output, rule, same

__all__ = ["check_shap_plots"]

#: shap's plots that must render an explanation of one output: name -> draw(explanation, explainer).
PLOTS: dict[str, Callable] = {
    "waterfall": lambda e, ex: shap.plots.waterfall(e[0], show=False),
    "bar": lambda e, ex: shap.plots.bar(e, show=False),
    "beeswarm": lambda e, ex: shap.plots.beeswarm(e, show=False),
    "heatmap": lambda e, ex: shap.plots.heatmap(e, show=False),
    "scatter": lambda e, ex: shap.plots.scatter(e[:, int(np.abs(e.values).mean(0).argmax())], show=False),
    "violin": lambda e, ex: shap.plots.violin(e, show=False),
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


@rule("shap's idioms (e.abs.mean(0).argsort, e[:, i], heatmap(instance_order=e.sum(1))) work and shap's waterfall, "
      "bar, beeswarm, heatmap, scatter, violin, force and decision plots draw the explanation")
def check_shap_plots(cls: type, problem: ConformanceProblem) -> None:
    """shap's idioms and plots work on the explanation (the first output of a multi-output one).

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
    for name, draw in PLOTS.items():
        try:
            draw(e, explainer)
        except Exception as exc:
            raise AssertionError(f"shap's {name} plot raised {type(exc).__name__}: {exc}") from exc
        assert plt.gcf().axes, f"shap's {name} plot drew nothing"
        plt.close("all")
