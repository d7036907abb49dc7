"""Shapley-value estimators for vector-valued games.

Every estimator has ``estimate(game) -> ShapleyResult`` and takes its budget and ``random_state`` in
its constructor, so a new estimator is a small class.
"""

from ._result import ShapleyResult
from .exact import ExactEstimator
from .kernel import KernelEstimator
from .permutation import PermutationEstimator

__all__ = ["ShapleyResult", "ExactEstimator", "PermutationEstimator", "KernelEstimator"]
