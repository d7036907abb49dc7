"""Shapley-value estimators for vector-valued games."""

from ._result import ShapleyResult

__all__ = ["ShapleyResult"]
