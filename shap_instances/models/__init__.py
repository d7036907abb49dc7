"""Models this package fits itself: the command line's and report's models, and a weighted naive Bayes.

* :func:`fit_model` and :data:`MODELS`: the ``--model`` choices of ``shap-instances`` (one place, so neither
  ``cli.py`` nor :mod:`shap_instances.report` imports the other);
* :class:`WeightedNaiveBayes`: a selective / weighted naive Bayes (the paper's family of classifiers) that
  :class:`~shap_instances.NaiveBayesExplainer` explains exactly.
"""

from ._fit import (
    EXPLAINER_MODELS,
    MODELS,
    auto_model,
    categorical_columns,
    describe_preprocessing,
    encode,
    final_estimator,
    fit_model,
    make_model,
)
from ._weighted_nb import WeightedNaiveBayes

__all__ = [
    "EXPLAINER_MODELS", "MODELS", "WeightedNaiveBayes", "auto_model", "categorical_columns", "describe_preprocessing",
    "encode", "final_estimator", "fit_model", "make_model",
]
