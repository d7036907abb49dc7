"""Evaluation metrics: composition and contribution, data values, deletion diagnostics, baselines, trust scores,
naive Bayes importance indicators."""

from ._deletion import DeletionResult, deletion_diagnostics
from ._influence import InfluenceFunction, influence_scores
from ._l2_representer import l2_representer_scores
from ._nb_indicators import NB_INDICATORS, nb_indicators
from ._random_scores import random_scores
from .composition import cc_means, cc_summary, contribution_statistics, instance_values, normalised_contributions
from .outliers import behaviour_outliers
from .trust import (
    class_outlier_scores,
    gap_trust_scores,
    neighbours_for_weight,
    trust_decile_table,
    weighted_quantiles,
)
from .valuation import data_shapley, removal_curve

__all__ = [
    "cc_means",
    "cc_summary",
    "contribution_statistics",
    "instance_values",
    "normalised_contributions",
    "behaviour_outliers",
    "data_shapley",
    "removal_curve",
    "DeletionResult",
    "deletion_diagnostics",
    "InfluenceFunction",
    "influence_scores",
    "l2_representer_scores",
    "random_scores",
    "nb_indicators",
    "NB_INDICATORS",
    "class_outlier_scores",
    "gap_trust_scores",
    "neighbours_for_weight",
    "trust_decile_table",
    "weighted_quantiles",
]
