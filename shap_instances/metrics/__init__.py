"""Evaluation metrics: composition and contribution, data values, trust scores, approximation errors."""

from .composition import cc_summary, instance_values, normalised_contributions
from .trust import (
    class_outlier_scores,
    gap_trust_scores,
    neighbours_for_weight,
    trust_decile_table,
    weighted_quantiles,
)

__all__ = [
    "cc_summary",
    "instance_values",
    "normalised_contributions",
    "class_outlier_scores",
    "gap_trust_scores",
    "neighbours_for_weight",
    "trust_decile_table",
    "weighted_quantiles",
]
