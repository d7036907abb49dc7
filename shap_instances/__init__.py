"""shap-instances: explain models in terms of their training instances, inside the SHAP ecosystem.

Everything that needs shap (the explainers, :class:`InstanceExplainer`, :func:`build_explanation`) is imported
lazily, on first access, so ``import shap_instances`` and ``shap-instances --version`` / ``--help`` stay fast
and do not import shap; ``si.Explainer(...)``, ``from shap_instances import GapExplainer`` and pickling work as
before.
"""

from __future__ import annotations

import importlib
import sys
from typing import TYPE_CHECKING, Any

from . import _deprecated
from .registry import Explainer, get_explainer, list_explainers, register_explainer

_deprecated.install()  # the 0.1 import paths (shap_instances.estimators, ...), with a warning until 0.3

if TYPE_CHECKING:  # pragma: no cover - what the lazy names below resolve to (re-exported), for type checkers
    from ._base import InstanceExplainer as InstanceExplainer
    from ._explanation import build_explanation as build_explanation
    from ._explanation import training_row_data as training_row_data
    from .explainers.boosting import BoostingExplainer as BoostingExplainer
    from .explainers.gap import GapExplainer as GapExplainer
    from .explainers.isotonic import IsotonicShapleyExplainer as IsotonicShapleyExplainer
    from .explainers.naive_bayes import NaiveBayesExplainer as NaiveBayesExplainer
    from .explainers.representer import RepresenterExplainer as RepresenterExplainer
    from .explainers.residual import InstanceKernelExplainer as InstanceKernelExplainer

__version__ = "0.1.0"

_LAZY = {
    "InstanceExplainer": "shap_instances._base",
    "build_explanation": "shap_instances._explanation",
    "training_row_data": "shap_instances._explanation",
    "InstanceKernelExplainer": "shap_instances.explainers.residual",
    "IsotonicShapleyExplainer": "shap_instances.explainers.isotonic",
    "NaiveBayesExplainer": "shap_instances.explainers.naive_bayes",
    "GapExplainer": "shap_instances.explainers.gap",
    "RepresenterExplainer": "shap_instances.explainers.representer",
    "BoostingExplainer": "shap_instances.explainers.boosting",
}
_SUBMODULES = {
    "approximators", "boosting", "cli", "datasets", "discriminant", "exceptions", "explainers", "forest", "games",
    "isotonic", "linear", "lowrank", "metrics", "naive_bayes", "neighbors", "neural", "plots", "report", "testing",
    "utils", "valuation", "weighted_targets",
}

__all__ = [
    "Explainer",
    "get_explainer",
    "list_explainers",
    "register_explainer",
    *_LAZY,
    *sorted(_SUBMODULES),
]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
    elif name in _SUBMODULES:
        value = importlib.import_module(f"shap_instances.{name}")
    elif name in _deprecated.RENAMED_CLASSES:  # not cached: each use of the old name warns
        return _deprecated.renamed_class(sys.modules[__name__], name)
    elif (alias := _deprecated.top_level_alias(name)) is not None:
        return alias  # not cached: each use of the old name warns when a name is read from it
    else:
        raise AttributeError(f"module 'shap_instances' has no attribute {name!r}")
    globals()[name] = value  # later lookups skip __getattr__
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
