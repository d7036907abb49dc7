"""Evaluation metrics: deletion curves, removal experiments, trust scores, approximation errors."""

__all__: list[str] = []
from ._deletion import DeletionResult, deletion_diagnostics  # noqa: E402
from ._influence import InfluenceFunction, influence_scores  # noqa: E402
from ._l2_representer import l2_representer_scores  # noqa: E402
from ._random_scores import random_scores  # noqa: E402

__all__ += ["DeletionResult", "deletion_diagnostics", "InfluenceFunction", "influence_scores",
            "l2_representer_scores", "random_scores"]
