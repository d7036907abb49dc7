"""Moved to :mod:`shap_instances.linear_objective`; this re-export is kept for ``explainers/representer.py``.

To be removed once ``representer.py`` imports ``from ..linear_objective import ...``.
"""

from ..linear_objective import SUPPORTED_MODELS, LinearObjective, check_supported, is_supported, linear_objective

__all__ = ["LinearObjective", "linear_objective", "SUPPORTED_MODELS", "is_supported", "check_supported"]
