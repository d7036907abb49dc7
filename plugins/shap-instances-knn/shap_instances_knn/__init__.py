"""shap-instances-knn: exact KNN-Shapley values as a shap_instances plugin.

Registers ``knn_shapley`` in the entry-point group ``shap_instances.explainers``, so that
``shap_instances.list_explainers()`` finds it and ``shap_instances.Explainer(knn_model, X, y=y)`` picks it.
"""

from .explainer import KNNShapleyExplainer
from .values import UTILITIES, knn_shapley_values, knn_utility

__version__ = "0.1.0"

__all__ = ["KNNShapleyExplainer", "UTILITIES", "knn_shapley_values", "knn_utility"]
