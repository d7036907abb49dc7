"""Conformance checks for explainers and plugins, in the style of scikit-learn's ``check_estimator``.

* :func:`check_explainer`: runs every rule of the contract against an explainer class;
* :class:`ConformanceProblem`: the small problem an explainer hands the checks.
"""

from ._checks import ConformanceProblem, check_explainer

__all__ = ["ConformanceProblem", "check_explainer"]
