"""Every Explanation the package produces renders in shap's plots (Agg backend).

The explanations come from ``tests/render_cases/``: one module per explainer.
"""

import matplotlib.pyplot as plt
import numpy as np
import pytest
import shap

from .render_cases import all_case_builders

PLOTS = {
    "bar": lambda e: shap.plots.bar(e, show=False),
    "waterfall": lambda e: shap.plots.waterfall(e[0], show=False),
    "force": lambda e: shap.plots.force(e[0], matplotlib=True, show=False),
    "beeswarm": lambda e: shap.plots.beeswarm(e, show=False),
    "heatmap": lambda e: shap.plots.heatmap(e, show=False),
    "violin": lambda e: shap.plots.violin(e, show=False),
    "scatter": lambda e: shap.plots.scatter(e[:, int(np.argmax(np.abs(e.values).sum(0)))], show=False),
}

#: Plots of a distribution over rows; shap cannot draw them for a single explained row.
NEEDS_SEVERAL_ROWS = {"beeswarm", "heatmap", "violin", "scatter"}

#: shap's violin plot (a density per player) takes 2 to 10 s per explainer: run with the slow tests.
SLOW_PLOTS = {"violin"}

_CACHE: dict = {}


def _explanations(module):
    if module not in _CACHE:
        _CACHE[module] = all_case_builders()[module]()
    return _CACHE[module]


def _single_output(explanation):
    """Plots take one output: slice a (n, M, D) explanation to its first output."""
    return explanation[..., 0] if explanation.values.ndim == 3 else explanation


@pytest.mark.parametrize("plot", [pytest.param(p, marks=pytest.mark.slow) if p in SLOW_PLOTS else p
                                  for p in sorted(PLOTS)])
@pytest.mark.parametrize("module", sorted(all_case_builders()))
def test_every_explanation_renders(module, plot):
    rendered = 0
    for name, explanation in _explanations(module).items():
        assert isinstance(explanation, shap.Explanation), name
        e = _single_output(explanation)
        if plot in NEEDS_SEVERAL_ROWS and e.values.shape[0] < 2:
            continue
        PLOTS[plot](e)
        rendered += 1
        figure = plt.gcf()
        assert figure.axes, f"{plot} drew nothing for {module}:{name}"
        plt.close("all")
    if plot not in NEEDS_SEVERAL_ROWS:
        assert rendered == len(_explanations(module))
