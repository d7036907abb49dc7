"""Plots over training instances; every function takes ``ax=None, show=True`` and returns the Axes when ``show=False``.

The family-independent plots live here (:func:`cc_plot`, :func:`instance_force`, and shap's :func:`waterfall`,
:func:`bar`, :func:`beeswarm`, :func:`heatmap`, :func:`violin`, :func:`scatter`, :func:`force` and
:func:`decision` labelled for training rows: ``docs/pictures.md``); the plots of one model family
live in that family's package and are re-exported here, so ``si.plots`` lists them all:
:mod:`shap_instances.weighted_targets` (random forests and boosting as weights on training targets) and
:mod:`shap_instances.isotonic`.
"""

from ..isotonic import isotonic_transform
from ..weighted_targets import (
    gap_cumulative_weight,
    gap_predictive_distribution,
    gap_weighted_histograms,
    gap_weighted_scatter,
    trust_deciles,
)
from .cc_plot import cc_plot
from .instance_force import instance_force
from .shap_plots import bar, beeswarm, decision, force, heatmap, scatter, violin, waterfall

__all__ = [
    "bar",
    "beeswarm",
    "cc_plot",
    "decision",
    "force",
    "gap_cumulative_weight",
    "gap_predictive_distribution",
    "gap_weighted_histograms",
    "gap_weighted_scatter",
    "heatmap",
    "instance_force",
    "isotonic_transform",
    "scatter",
    "trust_deciles",
    "violin",
    "waterfall",
]
