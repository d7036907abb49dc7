"""Exact refits of DummyRegressor(strategy="mean"): the prediction is the mean target of the coalition.

Its Shapley values have a closed form. Write v(S) - v(empty) = u(S) - c_j [S non-empty], with u(S) the mean
target of S (u(empty) = 0) and c_j = v(empty)_j + y_j the prediction the empty coalition stands for. The
second game is c_j times the "non-empty" game, whose value c_j is shared equally (c_j / n each). For u,
a player i joining a coalition of size s >= 1 with target sum T adds (T + y_i) / (s + 1) - T / s, whose
average over the coalitions of size s is (y_i - mean_{-i}) / (s + 1), mean_{-i} the mean target of the other
rows; joining the empty coalition adds y_i. Averaging over the n sizes with the Shapley weight 1 / n:
phi_i = (y_i + (H_n - 1)(y_i - mean_{-i})) / n, with H_n the n-th harmonic number.
"""

from __future__ import annotations

import numpy as np
from sklearn.dummy import DummyRegressor

__all__ = ["MeanPath"]


class MeanPath:
    """Residuals of the mean model on coalitions and on every permutation prefix."""

    def __init__(self, model, X, y, X_eval, y_eval, empty):
        self.y, self.y_eval, self.empty = y, y_eval, empty

    @classmethod
    def supports(cls, model) -> bool:
        return type(model) is DummyRegressor and model.strategy == "mean"

    def prefix_residuals(self, permutation):
        means = np.cumsum(self.y[permutation]) / np.arange(1, len(permutation) + 1)
        return means[:, None] - self.y_eval[None, :]

    def residuals(self, mask):
        return np.full(self.y_eval.shape, self.y[mask].mean()) - self.y_eval

    def shapley_values(self):
        """Exact Shapley values, shape (n_eval, n), by the closed form of the module docstring."""
        n = len(self.y)
        others = (self.y.sum() - self.y) / max(n - 1, 1)
        harmonic = np.sum(1.0 / np.arange(1, n + 1))
        share = (self.y + (harmonic - 1.0) * (self.y - others)) / n
        return share[None, :] - (self.y_eval + self.empty)[:, None] / n
