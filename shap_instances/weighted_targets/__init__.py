"""Predictions as weighted sums of training targets: the layer shared by random forests and gradient boosting.

A GAP forest (:mod:`shap_instances.forest`) and a boosted model (:mod:`shap_instances.boosting`) both write a
prediction as ``sum_i w_i(x) y_i`` over the training rows. Everything that reads such rows of weights lives here:

* :func:`as_weight_rows`, :func:`weight_parts`: rows of (signed) weights as a sparse matrix and its two parts;
* :func:`weighted_quantiles`, :func:`cumulative_weight`, :func:`neighbours_for_weight`, :func:`weighted_error`,
  :func:`weight_concentration`, :func:`class_outlier_scores`, :func:`trust_columns`, :func:`signed_histogram`;
* :func:`trust_decile_table`: mean error per decile of a trust score;
* the plots over such rows (re-exported by :mod:`shap_instances.plots`): :func:`gap_cumulative_weight`,
  :func:`gap_predictive_distribution`, :func:`gap_weighted_histograms`, :func:`gap_weighted_scatter`,
  :func:`trust_deciles`.
"""

from ._cumulative_weight_plot import gap_cumulative_weight
from ._deciles import trust_decile_table
from ._histograms_plot import gap_weighted_histograms
from ._predictive_distribution_plot import gap_predictive_distribution
from ._scatter_plot import gap_weighted_scatter
from ._targets import (
    OUTLIER_SCALES,
    as_weight_rows,
    class_outlier_scores,
    cumulative_weight,
    neighbours_for_weight,
    signed_histogram,
    trust_columns,
    weight_concentration,
    weight_parts,
    weighted_error,
    weighted_quantiles,
)
from ._trust_deciles_plot import trust_deciles

__all__ = [
    "OUTLIER_SCALES",
    "as_weight_rows",
    "class_outlier_scores",
    "cumulative_weight",
    "gap_cumulative_weight",
    "gap_predictive_distribution",
    "gap_weighted_histograms",
    "gap_weighted_scatter",
    "neighbours_for_weight",
    "signed_histogram",
    "trust_columns",
    "trust_decile_table",
    "trust_deciles",
    "weight_concentration",
    "weight_parts",
    "weighted_error",
    "weighted_quantiles",
]
