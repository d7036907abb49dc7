"""Evaluation metrics: deletion curves, removal experiments, trust scores, approximation errors."""

__all__: list[str] = []
from .trust import class_outlier_scores, gap_trust_scores, neighbours_for_weight, trust_decile_table, weighted_quantiles  # noqa: E402

__all__ += ["class_outlier_scores", "gap_trust_scores", "neighbours_for_weight", "trust_decile_table",
            "weighted_quantiles"]
