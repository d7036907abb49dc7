"""Exact refits of uniform-weight KNeighborsRegressor, and its Shapley values in closed form.

The refit game of :class:`~shap_instances.games.ResidualGame` on K-nearest-neighbour regression is

``v(S)_j = mean of the labels of the K rows of S nearest to x_j  - y_j``  when ``|S| >= K``,
``v(S)_j = v(empty)_j``                                                  when ``|S| < K``,

the second line being the game's failure policy (scikit-learn cannot fit fewer than ``n_neighbors`` rows).
Write ``G(S) = [|S| >= K] * (1/K) * sum of the K nearest labels`` and
``U(S) = (1/K) * sum of the min(K, |S|) nearest labels`` (Jia et al. 2019's KNN utility with labels in
place of match indicators). Then ``v(S) - v(empty) = G(S) - [|S| >= K] (y_j + v(empty)_j)``: G plus a
symmetric threshold game (each player gets ``-(y_j + v(empty)_j) / n``), and
``U - G = [|S| < K] * (1/K) * sum_{i in S} y_i``, whose Shapley values are
``(K - 1) / (n K) * (y_l - mean_{i != l} y_i)`` for player l. Hence, with ``s`` Jia's recursion over the
training rows sorted by distance to ``x_j`` (closest first, ``a_1 .. a_n``),

``s_{a_n} = y_{a_n} / n``,  ``s_{a_i} = s_{a_{i+1}} + (y_{a_i} - y_{a_{i+1}}) / K * min(K, i) / i``,

``phi_l(j) = s_l - (K - 1) / (n K) * (y_l - mean_{i != l} y_i) - (y_j + v(empty)_j) / n``:
O(n log n) per explained row, exact. Ties in distance are broken by training order (a stable sort), which
is what a refit does unless tied rows carry different labels.
"""

from __future__ import annotations

import copy
from typing import Any, Self

import numpy as np
from numpy.typing import ArrayLike
from sklearn.metrics import pairwise_distances
from sklearn.neighbors import KNeighborsRegressor

from ..games import register_fast_path
from ._knn_kernels import knn_prefix_values

__all__ = ["KNNPath", "jia_knn_shapley"]


def jia_knn_shapley(order: np.ndarray, y: np.ndarray, k: int) -> np.ndarray:
    """Jia et al.'s recursion with labels: Shapley values of ``U(S) = (1/K) sum of the min(K,|S|) nearest labels``.

    ``order`` (m, n): training indices sorted by distance for each of m explained rows. Returns (m, n),
    column i = training row i.
    """
    m, n = order.shape
    labels = y[order]  # (m, n), closest first
    rank = np.arange(1, n, dtype=np.float64)  # i = 1 .. n-1
    steps = (labels[:, :-1] - labels[:, 1:]) / k * np.minimum(k, rank) / rank
    sorted_values = np.empty((m, n))
    sorted_values[:, -1] = labels[:, -1] / n
    sorted_values[:, :-1] = labels[:, -1:] / n + np.cumsum(steps[:, ::-1], axis=1)[:, ::-1]
    values = np.empty((m, n))
    np.put_along_axis(values, order, sorted_values, axis=1)
    return values


@register_fast_path
class KNNPath:
    """Exact refits of uniform-weight KNeighborsRegressor, and its Shapley values in closed form.

    One of the :data:`~shap_instances.games.exact_fast_paths` that :class:`~shap_instances.games.ResidualGame`
    picks by itself. Coalitions of fewer than ``n_neighbors`` rows get v(empty), as the game's failure policy
    would give them, without being counted as failed fits; :meth:`shapley_values` (the module docstring
    derives it) makes the game's :attr:`~shap_instances.games.Game.closed_form` ``"KNN"``.

    Parameters
    ----------
    model : KNeighborsRegressor
        Only its hyper-parameters are read (``n_neighbors``, ``metric``, ``p``, ``metric_params``).
    X, y : ndarray
        Training rows (the players) and their targets.
    X_eval, y_eval : ndarray
        Explained rows and their targets.
    empty : ndarray (n_eval,), optional
        v(empty) (default zeros).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.neighbors import KNeighborsRegressor
    >>> from shap_instances.neighbors import KNNPath
    >>> X, y = np.arange(10.0).reshape(5, 2), np.array([1.0, 2.0, 2.0, 5.0, 4.0])
    >>> path = KNNPath(KNeighborsRegressor(n_neighbors=2), X, y, X[:2], y[:2])
    >>> refit = KNeighborsRegressor(n_neighbors=2).fit(X, y).predict(X[:2]) - y[:2]
    >>> bool(np.allclose(path.residuals(np.ones(5, bool)), refit)), path.shapley_values().shape
    (True, (2, 5))
    """

    def __init__(self, model: Any, X: np.ndarray, y: ArrayLike, X_eval: np.ndarray, y_eval: np.ndarray,
                 empty: ArrayLike | None = None) -> None:
        self.k = int(model.n_neighbors)
        self.y, self.y_eval = np.asarray(y, dtype=np.float64), np.asarray(y_eval, dtype=np.float64)
        self.empty = np.zeros(len(y_eval)) if empty is None else np.asarray(empty, dtype=np.float64)
        self.X, self.X_eval = X, X_eval
        self.metric, self.metric_kwargs = model.metric, dict(model.metric_params or {})
        if model.metric == "minkowski":
            self.metric_kwargs["p"] = model.p
        self.weights: np.ndarray | None = None  # (n_eval, K) for an aggregated path: outputs are weights^T residuals
        self._rank: np.ndarray | None = None

    def _order(self, rows: slice = slice(None)) -> np.ndarray:
        """Training rows sorted by distance (closest first) for the explained rows ``rows``: (len(rows), n)."""
        distances = pairwise_distances(self.X_eval[rows], self.X, metric=self.metric, **self.metric_kwargs)
        return np.argsort(distances, axis=1, kind="stable")

    @property
    def rank(self) -> np.ndarray:
        """``rank[j, i]``: position of training row i in explained row j's distance order (built on first use).

        An (n_eval, n) integer matrix: the sampled paths need it; the closed form works in chunks without it.
        """
        if self._rank is None:
            n = len(self.y)
            rank = np.empty((len(self.y_eval), n), dtype=np.int32 if n < 2**31 else np.int64)
            for rows in _chunks(len(self.y_eval), n):
                np.put_along_axis(rank[rows], self._order(rows), np.arange(n, dtype=rank.dtype)[None, :], axis=1)
            self._rank = rank
        return self._rank

    def aggregated(self, weights: ArrayLike) -> Self:
        """The path of the weighted sums ``weights^T residuals`` (weights of shape (n_eval, K)).

        Examples
        --------
        >>> import numpy as np
        >>> from sklearn.neighbors import KNeighborsRegressor
        >>> from shap_instances.neighbors import KNNPath
        >>> X, y = np.arange(10.0).reshape(5, 2), np.array([1.0, 2.0, 2.0, 5.0, 4.0])
        >>> path = KNNPath(KNeighborsRegressor(n_neighbors=2), X, y, X, y)
        >>> path.aggregated(np.full((5, 1), 0.2)).shapley_values().shape
        (1, 5)
        """
        weights = np.asarray(weights, dtype=np.float64)
        new = copy.copy(self)
        new.weights = weights if self.weights is None else self.weights @ weights
        return new

    def _out(self, values: np.ndarray) -> np.ndarray:
        return values if self.weights is None else values @ self.weights

    @classmethod
    def supports(cls, model: Any) -> bool:
        """Uniform-weight KNeighborsRegressor with a named metric (not a callable, not "precomputed")."""
        return (type(model) is KNeighborsRegressor and model.weights == "uniform" and isinstance(model.metric, str)
                and model.metric != "precomputed")

    def fits_all_rows(self) -> bool:
        """Whether the model can be fitted on all training rows (at least ``n_neighbors`` of them)."""
        return len(self.y) >= self.k

    def residuals(self, mask: np.ndarray) -> np.ndarray:
        """Residuals of the refit on the rows in ``mask``; v(empty) below K rows (the failure policy)."""
        if mask.sum() < self.k:
            return self._out(self.empty)
        ranks = np.where(mask[None, :], self.rank, len(mask))
        nearest = np.argpartition(ranks, self.k - 1, axis=1)[:, :self.k]
        return self._out(self.y[nearest].mean(axis=1) - self.y_eval)

    def prefix_residuals(self, permutation: np.ndarray) -> np.ndarray:
        """Residuals (or their weighted sums) of the fit on each prefix, shape (n, n_outputs): a numba kernel."""
        aggregate = self.weights is not None
        weights = self.weights if self.weights is not None else np.zeros((1, 1))
        out = np.empty((len(permutation) + 1, weights.shape[1] if aggregate else len(self.y_eval)))
        knn_prefix_values(self.rank, self.y, self.y_eval, self.empty, np.ascontiguousarray(permutation, dtype=np.intp),
                          self.k, np.ascontiguousarray(weights), aggregate, out)
        return out[1:]

    def shapley_values(self) -> np.ndarray:
        """Exact Shapley values of the refit game, shape (n_outputs, n): Jia's recursion plus two corrections.

        Computed in chunks of explained rows; an aggregated path sums each chunk into its K outputs at once,
        so it never holds more than a chunk of the (n_eval, n) matrix.
        """
        n, k = len(self.y), self.k
        rows_out = len(self.y_eval) if self.weights is None else self.weights.shape[1]
        if n < k:  # no coalition can be fitted: every coalition has the empty value
            return np.zeros((rows_out, n))
        others = (self.y.sum() - self.y) / max(n - 1, 1)
        below_k = (k - 1) / (n * k) * (self.y - others)
        out = np.empty((len(self.y_eval), n)) if self.weights is None else np.zeros((rows_out, n))
        for rows in _chunks(len(self.y_eval), n):
            block = jia_knn_shapley(self._order(rows), self.y, k) - below_k[None, :]
            block -= (self.y_eval[rows] + self.empty[rows])[:, None] / n
            if self.weights is None:
                out[rows] = block
            else:
                out += self.weights[rows].T @ block
        return out


def _chunks(m: int, n: int, budget: int = 2**22) -> list[slice]:
    """Slices of at most ``budget / n`` explained rows (a few (rows, n) float64 blocks of about 32 MiB)."""
    step = max(1, budget // max(n, 1))
    return [slice(start, min(m, start + step)) for start in range(0, m, step)]
