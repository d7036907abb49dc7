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

import copy
from typing import Any, ClassVar, Self

import numpy as np
from numpy.typing import ArrayLike
from sklearn.dummy import DummyRegressor

from ..games import accumulate_prefix_units, register_fast_path
from ._ridge_kernels import ridge_prefix_values, ridge_units, uses_u

__all__ = ["MeanPath"]


@register_fast_path
class MeanPath:
    """Exact refits of DummyRegressor(strategy="mean"), and its Shapley values in closed form.

    One of the :data:`~shap_instances.games.exact_fast_paths` that :class:`~shap_instances.games.ResidualGame`
    picks by itself; its :meth:`shapley_values` make the game's
    :attr:`~shap_instances.games.Game.closed_form` ``"Mean"``.

    Parameters
    ----------
    model : DummyRegressor
        Only ``strategy`` is read.
    X, y : ndarray
        Training rows (unused) and their targets.
    X_eval, y_eval : ndarray
        Explained rows (unused) and their targets.
    empty : ndarray (n_eval,)
        v(empty), the residual that the empty coalition stands for.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.dummy import DummyRegressor
    >>> from shap_instances.linear import MeanPath
    >>> y = np.array([1.0, 2.0, 6.0])
    >>> path = MeanPath(DummyRegressor(), None, y, None, y, np.zeros(3))
    >>> path.residuals(np.array([True, True, False])).tolist()   # mean 1.5 minus each target
    [0.5, -0.5, -4.5]
    >>> bool(np.allclose(path.shapley_values().sum(1), y.mean() - y))   # efficiency
    True
    """

    #: Prefix values along a permutation come from a fused numba kernel (no process pool is worth starting).
    fused: ClassVar[bool] = True

    def __init__(self, model: Any, X: Any, y: ArrayLike, X_eval: Any, y_eval: ArrayLike, empty: ArrayLike) -> None:
        self.y = np.asarray(y, dtype=np.float64)
        self.y_eval, self.empty = np.asarray(y_eval, dtype=np.float64), np.asarray(empty, dtype=np.float64)
        self.ones = np.ones(len(self.y_eval))  # multiplier of the prediction (W^T 1 when aggregated)

    def aggregated(self, weights: ArrayLike) -> Self:
        """The path of the weighted sums ``weights^T residuals`` (weights of shape (n_eval, K)).

        Examples
        --------
        >>> import numpy as np
        >>> from sklearn.dummy import DummyRegressor
        >>> from shap_instances.linear import MeanPath
        >>> y = np.array([1.0, 2.0, 6.0])
        >>> path = MeanPath(DummyRegressor(), None, y, None, y, np.zeros(3))
        >>> path.aggregated(np.full((3, 1), 1 / 3)).shapley_values().shape
        (1, 3)
        """
        weights = np.asarray(weights, dtype=np.float64)
        new = copy.copy(self)
        new.y_eval, new.ones, new.empty = weights.T @ self.y_eval, weights.T @ self.ones, weights.T @ self.empty
        return new

    @classmethod
    def supports(cls, model: Any) -> bool:
        """DummyRegressor with ``strategy="mean"``."""
        return type(model) is DummyRegressor and model.strategy == "mean"

    def fits_all_rows(self) -> bool:
        """Always True: every non-empty coalition can be fitted."""
        return True

    def prefix_residuals(self, permutation: np.ndarray) -> np.ndarray:
        """Residuals on the evaluation rows of the fit on each prefix, shape (n, n_eval)."""
        means = np.cumsum(self.y[permutation]) / np.arange(1, len(permutation) + 1)
        return means[:, None] * self.ones[None, :] - self.y_eval[None, :]

    def accumulate(self, permutations: np.ndarray, per_unit: int, unit: np.ndarray, mean: np.ndarray, m2: np.ndarray,
                   count: int) -> tuple[int, np.ndarray]:
        """Running means, differences, scatter and Welford update: the ridge kernels with no feature.

        Returns ``(count, full)`` as :meth:`RidgePath.accumulate`.
        """
        permutations = np.ascontiguousarray(permutations, dtype=np.intp)
        k, d = len(permutations), len(self.y_eval)
        design = np.ascontiguousarray(self.ones[None, :])
        args = (np.zeros((len(self.y), 0)), self.y, design, self.y_eval, self.empty, permutations)
        starts = (np.zeros((k, 1, 0)), np.zeros((k, 1)), np.ones(k, dtype=np.int64))
        if uses_u(d, 1):
            prefixes = np.empty((k, len(self.y) + 1, d))
            ridge_prefix_values(*args, True, 1.0, 1.0, *starts, prefixes)
            count = accumulate_prefix_units(prefixes, permutations, per_unit, unit, mean, m2, count)
            return count, prefixes[0, -1].copy()
        full = np.empty(d)
        count = ridge_units(*args, per_unit, True, 1.0, 1.0, *starts, unit, mean, m2, count, full)
        return count, full

    def residuals(self, mask: np.ndarray) -> np.ndarray:
        """Residuals of the fit on the rows in ``mask`` (non-empty)."""
        return self.y[mask].mean() * self.ones - self.y_eval

    def shapley_values(self) -> np.ndarray:
        """Exact Shapley values, shape (n_eval, n), by the closed form of the module docstring."""
        n = len(self.y)
        others = (self.y.sum() - self.y) / max(n - 1, 1)
        harmonic = np.sum(1.0 / np.arange(1, n + 1))
        share = (self.y + (harmonic - 1.0) * (self.y - others)) / n
        return self.ones[:, None] * share[None, :] - (self.y_eval + self.empty)[:, None] / n
