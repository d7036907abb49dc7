"""shap-instances-loo: leave-one-out values of training rows as a shap_instances plugin.

Registers ``loo`` in the entry-point group ``shap_instances.explainers``, so that
``shap_instances.list_explainers()`` finds it and ``shap_instances.Explainer(model, X, y=y, algorithm="loo")``
builds it. Leave-one-out values do not add up to the prediction: the explainer declares ``efficient = False``
and its ``base_values`` are the remainder (see ``docs/plugins.md``).
"""

from .explainer import LeaveOneOutExplainer
from .linear import linear_loo_values

__version__ = "0.1.0"

__all__ = ["LeaveOneOutExplainer", "linear_loo_values"]
