"""Plots over instances; every function takes ``ax=None, show=True`` and returns the Axes when ``show=False``."""

__all__: list[str] = []
from .cc_plot import cc_plot  # noqa: E402
from .gap_cumulative_weight import gap_cumulative_weight  # noqa: E402
from .gap_predictive_distribution import gap_predictive_distribution  # noqa: E402
from .gap_weighted_histograms import gap_weighted_histograms  # noqa: E402
from .gap_weighted_scatter import gap_weighted_scatter  # noqa: E402
from .instance_force import instance_force  # noqa: E402
from .isotonic_transform import isotonic_transform  # noqa: E402
from .trust_deciles import trust_deciles  # noqa: E402

__all__ += [
    "cc_plot",
    "gap_cumulative_weight",
    "gap_predictive_distribution",
    "gap_weighted_histograms",
    "gap_weighted_scatter",
    "instance_force",
    "isotonic_transform",
    "trust_deciles",
]
