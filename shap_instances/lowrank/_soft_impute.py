"""SoftImpute: nuclear-norm regularised matrix completion (Mazumder, Hastie and Tibshirani, 2010).

Minimises ``1/2 sum_{(u, i) observed} (y_ui - mu - Theta_ui)^2 + lam ||Theta||_*`` by the fixed-point
iteration ``Theta <- S_lam(P_obs(Y - mu) + P_obs^perp(Theta))`` (singular-value soft-thresholding).
"""

from __future__ import annotations

from typing import Any, Self

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike
from scipy.sparse.linalg import LinearOperator, svds
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.utils.validation import check_is_fitted

from ..exceptions import DataValidationError
from ..utils import check_memory, check_pairs

__all__ = ["SoftImpute", "check_ratings"]


def check_ratings(X, y, shape=None) -> tuple[np.ndarray, np.ndarray, np.ndarray, tuple[int, int]]:
    """Validate (user, item) pairs and their ratings for a factor model's ``fit``: distinct pairs within
    ``shape`` (default: one more than the largest indices), finite ratings, one per pair.

    Examples
    --------
    >>> users, items, y, shape = check_ratings([[0, 2], [1, 0]], [4.0, 3.0])
    >>> shape
    (2, 3)
    """
    users, items = check_pairs(X)
    if users.size == 0:
        raise DataValidationError("X holds no (user, item) pair: there is nothing to fit.")
    y = np.asarray(y, dtype=np.float64).reshape(-1)
    if y.shape[0] != users.shape[0] or not np.all(np.isfinite(y)):
        raise DataValidationError(f"y must hold {users.shape[0]} finite ratings (one per pair), got {y.shape}.")
    size = tuple(int(d) for d in shape) if shape is not None else (int(users.max()) + 1, int(items.max()) + 1)
    if len(size) != 2 or users.max() >= size[0] or items.max() >= size[1]:
        raise DataValidationError(f"pairs exceed shape={shape}.")
    if np.unique(users * size[1] + items).size != users.size:
        raise DataValidationError("X holds duplicate (user, item) pairs; aggregate the ratings first.")
    return users, items, y, (size[0], size[1])


class SoftImpute(RegressorMixin, BaseEstimator):
    """Nuclear-norm regularised matrix completion on observed (user, item, rating) triples.

    Parameters
    ----------
    lam : float, default=1.0
        Nuclear-norm strength ``lam`` of ``1/2 sum (y - mu - Theta)^2 + lam ||Theta||_*``.
    max_rank : int, optional
        Rank of the truncated SVD of each step (required for the sparse path; the dense path uses a full
        SVD and truncates nothing).
    max_iter : int, default=5000
    tol : float, default=1e-10
        Stop when ``||Theta_new - Theta||_F / ||Theta_new||_F < tol``.
    center : bool, default=True
        Subtract the mean rating ``mu`` (kept as ``mean_``, the base value of explanations).
    shape : tuple (n_users, n_items), optional
        Matrix shape; default: one more than the largest indices.
    solver : {"auto", "dense", "sparse"}, default="auto"
        "dense" does a full SVD of the completed matrix each step (exact); "sparse" a rank-``max_rank``
        ``svds`` of the sparse-plus-low-rank operator; "auto" is dense when the matrix has at most
        4 million entries.
    init : tuple (user_factors, item_factors), optional
        Start from ``Theta = user_factors @ item_factors.T`` (e.g. a fitted model's ``user_factors_`` and
        ``item_factors_``) instead of zero. The problem is convex, so the optimum is the same; a start near it
        makes refits after a few deletions (case-deletion diagnostics) much faster.

    Attributes
    ----------
    left_vectors_ (n_users, k), singular_values_ (k,), right_vectors_ (n_items, k), mean_, n_iter_,
    user_factors_ ``U sqrt(S)``, item_factors_ ``V sqrt(S)``.

    Examples
    --------
    >>> import numpy as np
    >>> from shap_instances.lowrank import SoftImpute
    >>> rng = np.random.default_rng(0)
    >>> full = rng.normal(size=(8, 2)) @ rng.normal(size=(2, 6))
    >>> pairs = np.argwhere(rng.random((8, 6)) < 0.7)
    >>> model = SoftImpute(lam=0.5).fit(pairs, full[pairs[:, 0], pairs[:, 1]])
    >>> model.predict(pairs[:2]).shape
    (2,)
    """

    def __init__(self, lam: float = 1.0, *, max_rank: int | None = None, max_iter: int = 5000, tol: float = 1e-10,
                 center: bool = True, shape: tuple[int, int] | None = None, solver: str = "auto",
                 init: Any = None) -> None:
        self.lam = lam
        self.init = init
        self.max_rank = max_rank
        self.max_iter = max_iter
        self.tol = tol
        self.center = center
        self.shape = shape
        self.solver = solver

    def fit(self, X: Any, y: ArrayLike) -> Self:
        """Fit on ``X`` (n, 2) integer (user, item) pairs and ratings ``y`` (n,)."""
        if not (np.isscalar(self.lam) and self.lam > 0):  # type: ignore[operator]  # (np.isscalar narrows badly)
            raise DataValidationError(f"lam must be a positive number, got {self.lam!r}.")
        if self.solver not in ("auto", "dense", "sparse"):
            raise DataValidationError(f"solver must be 'auto', 'dense' or 'sparse', got {self.solver!r}.")
        users, items, y, shape = check_ratings(X, y, self.shape)
        self.shape_ = shape
        self.mean_ = float(y.mean()) if self.center else 0.0
        r = y - self.mean_
        dense = self.solver == "dense" or (self.solver == "auto" and shape[0] * shape[1] <= 4_000_000)
        if dense:
            check_memory(8.0 * shape[0] * shape[1] * 4, f"a dense {shape} SoftImpute",
                         instead="Use solver='sparse' with max_rank=.")
            U, s, V, it = self._fit_dense(users, items, r, shape)
        else:
            if self.max_rank is None:
                raise DataValidationError("solver='sparse' needs max_rank= (the rank of each truncated SVD).")
            U, s, V, it = self._fit_sparse(users, items, r, shape)
        keep = s > 0
        self.left_vectors_, self.singular_values_, self.right_vectors_ = U[:, keep], s[keep], V[:, keep]
        self.n_iter_ = it
        root = np.sqrt(self.singular_values_)
        self.user_factors_ = self.left_vectors_ * root
        self.item_factors_ = self.right_vectors_ * root
        return self

    def _init_factors(self, shape):
        """The start ``(A, B)`` with ``Theta_0 = A B^T``, or None."""
        if self.init is None:
            return None
        A, B = (np.asarray(f, dtype=np.float64) for f in self.init)
        if A.ndim != 2 or B.ndim != 2 or A.shape[0] != shape[0] or B.shape[0] != shape[1] or A.shape[1] != B.shape[1]:
            raise DataValidationError(
                f"init must be (user_factors, item_factors) of shapes ({shape[0]}, k) and ({shape[1]}, k), got "
                f"{A.shape} and {B.shape}.")
        return A, B

    def _fit_dense(self, users, items, r, shape):
        # Accelerated (FISTA) proximal gradient: the gradient step of the loss has Lipschitz constant 1.
        start = self._init_factors(shape)
        Z = np.zeros(shape) if start is None else start[0] @ start[1].T
        Y = Z
        t = 1.0
        lam = float(self.lam)
        it = 0
        while it < self.max_iter:
            it += 1
            M = Y.copy()
            M[users, items] = r
            P, S, Qt = np.linalg.svd(M, full_matrices=False)
            S = np.maximum(S - lam, 0.0)
            if self.max_rank is not None:
                S[self.max_rank:] = 0.0
            k = int(np.count_nonzero(S))
            Z_new = (P[:, :k] * S[:k]) @ Qt[:k]
            change = np.sqrt(np.sum((Z_new - Z) ** 2) / max(np.sum(Z_new ** 2), 1e-300))
            t_new = 0.5 * (1.0 + np.sqrt(1.0 + 4.0 * t * t))
            Y = Z_new + ((t - 1.0) / t_new) * (Z_new - Z)
            Z, t = Z_new, t_new
            if change < self.tol:
                break
        return P[:, :k], S[:k], Qt[:k].T, it

    def _fit_sparse(self, users, items, r, shape):
        lam, rank = float(self.lam), int(self.max_rank)
        U, s, V = np.zeros((shape[0], 0)), np.zeros(0), np.zeros((shape[1], 0))
        start = self._init_factors(shape)
        if start is not None:  # thin SVD of A B^T from two QRs and a k x k SVD
            Qa, Ra = np.linalg.qr(start[0])
            Qb, Rb = np.linalg.qr(start[1])
            P, s, Wt = np.linalg.svd(Ra @ Rb.T)
            U, V = Qa @ P, Qb @ Wt.T
        it = 0
        while it < self.max_iter:
            it += 1
            low = np.einsum("ij,ij->i", U[users] * s, V[items]) if s.size else np.zeros_like(r)
            R = sp.csr_matrix((r - low, (users, items)), shape=shape)
            Us, Vs = U * s, V

            def matvec(v, R=R, Us=Us, Vs=Vs):
                return R @ v + Us @ (Vs.T @ v)

            def rmatvec(v, R=R, Us=Us, Vs=Vs):
                return R.T @ v + Vs @ (Us.T @ v)

            op = LinearOperator(shape, matvec=matvec, rmatvec=rmatvec, matmat=matvec, rmatmat=rmatvec,
                                dtype=np.float64)
            k = min(rank, min(shape) - 1)
            P, S, Qt = svds(op, k=k, random_state=0)
            S = np.maximum(S - lam, 0.0)
            keep = S > 0
            U_new, s_new, V_new = P[:, keep], S[keep], Qt[keep].T
            # ||Z_new - Z||^2 via the small Gram matrices of the two low-rank factorisations.
            norm_new = np.sum(s_new ** 2)
            norm_old = np.sum(s ** 2)
            cross = np.sum(((U.T @ U_new) * s[:, None]) * ((V.T @ V_new) * s_new[None, :])) if s.size else 0.0
            change = np.sqrt(max(norm_new + norm_old - 2 * cross, 0.0) / max(norm_new, 1e-300))
            U, s, V = U_new, s_new, V_new
            if change < self.tol:
                break
        return U, s, V, it

    def predict(self, X: Any) -> np.ndarray:
        """Predicted ratings ``mu + Theta[user, item]`` for (n, 2) pairs."""
        check_is_fitted(self, "singular_values_")
        users, items = check_pairs(X, shape=self.shape_)
        return self.mean_ + np.einsum("ij,ij->i", self.user_factors_[users], self.item_factors_[items])

    def residual_matrix(self, X: Any, y: ArrayLike) -> sp.csr_matrix:
        """Sparse ``P_obs(Y - mu - Theta)``: at the optimum ``U^T R = lam V^T`` and ``R V = lam U``.

        Examples
        --------
        >>> import numpy as np
        >>> pairs = np.array([[0, 0], [0, 1], [1, 0], [1, 1], [2, 1]])
        >>> ratings = np.array([5.0, 3.0, 4.0, 1.0, 2.0])
        >>> model = SoftImpute(lam=0.5).fit(pairs, ratings)
        >>> R = model.residual_matrix(pairs, ratings)
        >>> bool(np.allclose(model.left_vectors_.T @ R, 0.5 * model.right_vectors_.T, atol=1e-6))
        True
        """
        users, items = check_pairs(X, shape=self.shape_)
        return sp.csr_matrix((np.asarray(y, dtype=np.float64) - self.predict(X), (users, items)), shape=self.shape_)
