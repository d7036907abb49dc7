"""shap's own :class:`shap.Explainer` class, found once, whatever users assigned to ``shap.Explainer``.

Users make this package the library-wide default with ``shap.Explainer = shap_instances.Explainer`` (or the same
on ``shap.explainers``). Code here that needs shap's class (the base of :class:`~shap_instances.InstanceExplainer`,
the hand-over of shap's algorithms in :class:`~shap_instances.Explainer`) must not read that attribute: it may be
this package's own dispatcher, and subclassing or calling it would recurse. The class is read from where shap
defines it, checked, and cached.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

__all__ = ["shap_explainer_class"]

_DEFINED_IN = "shap.explainers._explainer"


@lru_cache(maxsize=1)
def shap_explainer_class() -> Any:
    """shap's own ``Explainer`` class (the base of all its explainers), never a replacement assigned to it.

    It is the class named ``Explainer`` defined in shap's ``explainers._explainer`` module, found in the method
    resolution order of shap's :class:`~shap.explainers.Exact` explainer, which an assignment to
    ``shap.Explainer`` or ``shap.explainers.Explainer`` does not change.

    Examples
    --------
    >>> import shap
    >>> from shap_instances.utils import shap_explainer_class
    >>> shap_explainer_class() is shap.explainers.Exact.__mro__[1]
    True
    """
    import shap

    for cls in shap.explainers.Exact.__mro__:
        if cls.__name__ == "Explainer" and cls.__module__ == _DEFINED_IN:
            return cls
    raise ImportError(f"shap {shap.__version__}: no class Explainer in {_DEFINED_IN} among the bases of "
                      "shap.explainers.Exact; this shap release is not supported.")  # pragma: no cover
