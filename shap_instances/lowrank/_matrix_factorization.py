"""Matrix factorisation ``rating ~ mu + <U_user, V_item>`` fitted by alternating least squares.

Minimises ``1/2 sum_{(u, i) observed} (y_ui - mu - <U_u, V_i>)^2 + alpha/2 (||U||_F^2 + ||V||_F^2)`` over
rank-``n_components`` factors (Tsai et al., 2023, Eq. 16, with a small ridge term so that every half-step is
a well-posed least-squares problem). Each half-step solves one ``k x k`` system per user (item), batched.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.utils.validation import check_is_fitted

from ..exceptions import DataValidationError
from ..utils import RandomStateLike, check_pairs, check_random_state
from ._soft_impute import check_ratings

__all__ = ["MatrixFactorization"]


def _half_step(indicator, cols, r, other, alpha):
    """Ridge solution of every row's factor given the other side's factors (batched k x k solves).

    ``indicator`` is the sparse (n_rows, n_ratings) matrix with a 1 where a rating belongs to a row, so the
    per-row Gram matrices and right-hand sides are two sparse-dense products.
    """
    k = other.shape[1]
    F = other[cols]
    gram = np.asarray(indicator @ (F[:, :, None] * F[:, None, :]).reshape(-1, k * k)).reshape(-1, k, k)
    rhs = np.asarray(indicator @ (F * r[:, None]))
    gram += alpha * np.eye(k)
    return np.linalg.solve(gram, rhs[:, :, None])[:, :, 0]


class MatrixFactorization(RegressorMixin, BaseEstimator):
    """Rank-``k`` matrix factorisation of observed (user, item, rating) triples by alternating least squares.

    Parameters
    ----------
    n_components : int, default=12
        Embedding dimension ``k``.
    alpha : float, default=0.1
        Ridge strength on both factor matrices.
    max_iter : int, default=200
        Alternating sweeps at most.
    tol : float, default=1e-8
        Stop when the objective decreases by less than ``tol`` times its value over one sweep.
    center : bool, default=True
        Subtract the mean rating ``mu`` (``mean_``).
    shape : tuple (n_users, n_items), optional
    init : tuple (user_factors, item_factors), optional
        Start from these factors (e.g. a fitted model's) instead of a random start; refits after a few
        deletions then stay at the nearby local optimum (case-deletion diagnostics).
    random_state : int, Generator or None, default=0
        Seed of the random start (``N(0, 0.1^2)`` entries).

    Attributes
    ----------
    user_factors_ (n_users, k), item_factors_ (n_items, k), mean_, n_iter_, objective_

    Examples
    --------
    >>> import numpy as np
    >>> from shap_instances.lowrank import MatrixFactorization
    >>> rng = np.random.default_rng(0)
    >>> full = rng.normal(size=(20, 2)) @ rng.normal(size=(2, 15))
    >>> pairs = np.argwhere(rng.random((20, 15)) < 0.6)
    >>> mf = MatrixFactorization(n_components=2, alpha=1e-3, center=False).fit(pairs, full[pairs[:, 0], pairs[:, 1]])
    >>> bool(np.abs(mf.predict(pairs) - full[pairs[:, 0], pairs[:, 1]]).max() < 0.05)
    True
    """

    def __init__(self, n_components: int = 12, *, alpha: float = 0.1, max_iter: int = 200, tol: float = 1e-8,
                 center: bool = True, shape: tuple[int, int] | None = None, init: Any = None,
                 random_state: RandomStateLike = 0) -> None:
        self.n_components = n_components
        self.alpha = alpha
        self.max_iter = max_iter
        self.tol = tol
        self.center = center
        self.shape = shape
        self.init = init
        self.random_state = random_state

    def fit(self, X: ArrayLike, y: ArrayLike) -> MatrixFactorization:
        """Fit on ``X`` (n, 2) integer (user, item) pairs and ratings ``y`` (n,)."""
        if not (isinstance(self.n_components, int | np.integer) and self.n_components >= 1):
            raise DataValidationError(f"n_components must be a positive integer, got {self.n_components!r}.")
        if not (isinstance(self.alpha, int | float | np.number) and float(self.alpha) > 0):
            raise DataValidationError(f"alpha must be a positive number, got {self.alpha!r}.")
        if not (isinstance(self.max_iter, int | np.integer) and self.max_iter >= 1):
            raise DataValidationError(f"max_iter must be a positive integer, got {self.max_iter!r}.")
        users, items, y, shape = check_ratings(X, y, self.shape)
        k, alpha = int(self.n_components), float(self.alpha)
        if self.init is None:
            rng = check_random_state(self.random_state)
            U, V = 0.1 * rng.standard_normal((shape[0], k)), 0.1 * rng.standard_normal((shape[1], k))
        else:
            U, V = (np.array(f, dtype=np.float64) for f in self.init)
            if U.shape != (shape[0], k) or V.shape != (shape[1], k):
                raise DataValidationError(
                    f"init must be factors of shapes {(shape[0], k)} and {(shape[1], k)}, got {U.shape} and {V.shape}.")
        self.mean_ = float(y.mean()) if self.center else 0.0
        r = y - self.mean_
        ones, positions = np.ones(users.shape[0]), np.arange(users.shape[0])
        by_user = sp.csr_matrix((ones, (users, positions)), shape=(shape[0], users.shape[0]))
        by_item = sp.csr_matrix((ones, (items, positions)), shape=(shape[1], users.shape[0]))
        previous = np.inf
        it = 0
        while it < int(self.max_iter):
            it += 1
            U = _half_step(by_user, items, r, V, alpha)
            V = _half_step(by_item, users, r, U, alpha)
            residual = r - np.einsum("ij,ij->i", U[users], V[items])
            objective = 0.5 * (residual @ residual + alpha * (np.sum(U * U) + np.sum(V * V)))
            if previous - objective <= self.tol * objective:
                break
            previous = objective
        self.user_factors_, self.item_factors_ = U, V
        self.shape_, self.n_iter_, self.objective_ = shape, it, float(objective)
        return self

    def predict(self, X: ArrayLike) -> np.ndarray:
        """Predicted ratings ``mu + <U_user, V_item>`` for (n, 2) pairs."""
        check_is_fitted(self, "user_factors_")
        users, items = check_pairs(X, shape=self.shape_)
        return self.mean_ + np.einsum("ij,ij->i", self.user_factors_[users], self.item_factors_[items])
