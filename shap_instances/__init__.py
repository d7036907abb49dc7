"""shap-instances: explain models in terms of their training instances, inside the SHAP ecosystem.

The explainers are imported lazily, so ``import shap_instances`` stays fast.
"""

from __future__ import annotations

import importlib
from typing import Any

from ._base import InstanceExplainer
from ._explanation import build_explanation
from .registry import Explainer, get_explainer, list_explainers, register_explainer

__version__ = "0.1.0"

_LAZY = {
    "InstanceKernelExplainer": "shap_instances.explainers.residual",
    "IsotonicShapley": "shap_instances.explainers.isotonic",
    "NaiveBayesExplainer": "shap_instances.explainers.naive_bayes",
    "GapExplainer": "shap_instances.explainers.gap",
    "RepresenterExplainer": "shap_instances.explainers.representer",
    "BoostingExplainer": "shap_instances.explainers.boosting",
}
_SUBMODULES = {
    "plots", "metrics", "datasets", "games", "estimators", "isotonic", "lowrank", "models", "exceptions", "boosting",
    "utils",
}

__all__ = [
    "Explainer",
    "InstanceExplainer",
    "build_explanation",
    "get_explainer",
    "list_explainers",
    "register_explainer",
    *_LAZY,
    *sorted(_SUBMODULES),
]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    if name in _SUBMODULES:
        return importlib.import_module(f"shap_instances.{name}")
    raise AttributeError(f"module 'shap_instances' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
