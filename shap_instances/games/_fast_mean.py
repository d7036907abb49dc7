"""Exact refits of DummyRegressor(strategy="mean"): the prediction is the mean target of the coalition."""

from __future__ import annotations

import numpy as np
from sklearn.dummy import DummyRegressor

__all__ = ["MeanPath"]


class MeanPath:
    """Residuals of the mean model on coalitions and on every permutation prefix."""

    def __init__(self, model, X, y, X_eval, y_eval):
        self.y, self.y_eval = y, y_eval

    @classmethod
    def supports(cls, model) -> bool:
        return type(model) is DummyRegressor and model.strategy == "mean"

    def prefix_residuals(self, permutation):
        means = np.cumsum(self.y[permutation]) / np.arange(1, len(permutation) + 1)
        return means[:, None] - self.y_eval[None, :]

    def residuals(self, mask):
        return np.full(self.y_eval.shape, self.y[mask].mean()) - self.y_eval
