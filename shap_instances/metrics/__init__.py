"""Evaluation metrics: composition and contribution, data values, deletion diagnostics, baselines.

Family metrics live in their family's package and are re-exported here, so ``si.metrics`` lists them all:
trust scores (:mod:`shap_instances.forest`, :mod:`shap_instances.weighted_targets`), influence and representer
scores (:mod:`shap_instances.linear`), naive Bayes indicators (:mod:`shap_instances.naive_bayes`)."""

from ..forest import gap_trust_scores
from ..linear import InfluenceFunction, influence_scores, l2_representer_scores
from ..naive_bayes import NB_INDICATORS, nb_indicators
from ..weighted_targets import class_outlier_scores, neighbours_for_weight, trust_decile_table, weighted_quantiles
from ._deletion import DeletionResult, deletion_diagnostics
from ._random_scores import random_scores
from .composition import cc_means, cc_summary, contribution_statistics, instance_values, normalised_contributions
from .outliers import behaviour_outliers
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
