"""Trace-norm regression on matrix inputs and its representer (Tsai et al., 2023, Eq. 7 and Corollary 3).

``TraceNormRegression`` minimises ``1/n sum_i 1/2 (y_i - b - <X_i, Theta>_F)^2 + lam ||Theta||_*`` over
``Theta`` in ``R^{d1 x d2}`` (and an unpenalised intercept ``b``) for general matrix-valued inputs ``X_i``,
by accelerated proximal gradient with singular-value soft-thresholding. ``TraceNormRepresenter`` decomposes
its predictions over the training matrices: with the thin SVD ``Theta = U S V^T`` and
``alpha_i = (y_i - f_i) / (n lam)``,

* column-based (Eq. 10): ``<X', Theta> = sum_i alpha_i <sqrt(S) U^T X_i, sqrt(S) U^T X'>_F``,
* row-based (Eq. 11): ``<X', Theta> = sum_i alpha_i <X_i V sqrt(S), X' V sqrt(S)>_F``.

One-hot ``X_i`` (matrix completion) give Corollary 4; see ``MatrixFactorizationRepresenter`` for that case.
"""

from __future__ import annotations

import time

import numpy as np
import shap
from numpy.typing import ArrayLike
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.utils.validation import check_is_fitted

from .._explanation import build_explanation
from ..exceptions import DataValidationError

__all__ = ["TraceNormRegression", "TraceNormRepresenter"]


def _check_matrices(X, name="X", shape=None) -> np.ndarray:
    arr = np.asarray(X, dtype=np.float64)
    if arr.ndim != 3:
        raise DataValidationError(f"{name} must be an (n, d1, d2) array of matrix inputs, got shape {arr.shape}.")
    if shape is not None and arr.shape[1:] != tuple(shape):
        raise DataValidationError(f"{name} must hold {shape[0]} x {shape[1]} matrices, got {arr.shape[1:]}.")
    if not np.all(np.isfinite(arr)):
        raise DataValidationError(f"{name} must be finite.")
    return arr


class TraceNormRegression(RegressorMixin, BaseEstimator):
    """Least squares on matrix inputs with a nuclear-norm (trace-norm) penalty (Eq. 7, squared loss).

    Parameters
    ----------
    lam : float, default=0.1
        ``lam`` of ``1/n sum 1/2 (y - b - <X_i, Theta>)^2 + lam ||Theta||_*``.
    fit_intercept : bool, default=True
        Fit an unpenalised intercept ``b`` (the base value of explanations).
    max_iter : int, default=20000
    tol : float, default=1e-12
        Stop when ``||Theta_new - Theta||_F / max(||Theta_new||_F, 1) < tol``.

    Attributes
    ----------
    coef_ (d1, d2), intercept_, left_vectors_ (d1, k), singular_values_ (k,), right_vectors_ (d2, k), n_iter_

    Examples
    --------
    >>> import numpy as np
    >>> from shap_instances.lowrank import TraceNormRegression
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(100, 4, 3))
    >>> y = np.einsum("nij,ij->n", X, np.outer([1.0, 0, 2, 0], [1.0, -1, 0]))
    >>> model = TraceNormRegression(lam=0.05).fit(X, y)
    >>> model.singular_values_.size
    1
    """

    def __init__(self, lam: float = 0.1, *, fit_intercept: bool = True, max_iter: int = 20_000,
                 tol: float = 1e-12) -> None:
        self.lam = lam
        self.fit_intercept = fit_intercept
        self.max_iter = max_iter
        self.tol = tol

    def fit(self, X: ArrayLike, y: ArrayLike) -> TraceNormRegression:
        """Fit on ``X`` (n, d1, d2) matrix inputs and targets ``y`` (n,)."""
        if not (isinstance(self.lam, int | float | np.number) and float(self.lam) > 0):
            raise DataValidationError(f"lam must be a positive number, got {self.lam!r}.")
        Xa = _check_matrices(X)
        n, d1, d2 = Xa.shape
        y = np.asarray(y, dtype=np.float64).reshape(-1)
        if y.shape[0] != n or not np.all(np.isfinite(y)):
            raise DataValidationError(f"y must hold {n} finite targets, got shape {y.shape}.")
        A = Xa.reshape(n, d1 * d2)
        if self.fit_intercept:
            A = np.hstack([A, np.ones((n, 1))])
        step = n / max(float(np.linalg.norm(A, 2)) ** 2, 1e-300)  # 1 / Lipschitz constant of the smooth part
        lam = float(self.lam)
        w = np.zeros(A.shape[1])
        z, t = w.copy(), 1.0
        P, S, Qt = np.zeros((d1, 0)), np.zeros(0), np.zeros((0, d2))
        it = 0
        while it < int(self.max_iter):
            it += 1
            g = z - step * (A.T @ (A @ z - y)) / n
            P, S, Qt = np.linalg.svd(g[:d1 * d2].reshape(d1, d2), full_matrices=False)
            S = np.maximum(S - step * lam, 0.0)
            w_new = g.copy()
            w_new[:d1 * d2] = ((P * S) @ Qt).ravel()
            change = float(np.linalg.norm(w_new - w)) / max(float(np.linalg.norm(w_new)), 1.0)
            t_new = 0.5 * (1.0 + np.sqrt(1.0 + 4.0 * t * t))
            z = w_new + ((t - 1.0) / t_new) * (w_new - w)
            w, t = w_new, t_new
            if change < self.tol:
                break
        keep = S > 0
        self.left_vectors_, self.singular_values_, self.right_vectors_ = P[:, keep], S[keep], Qt[keep].T
        self.coef_ = (self.left_vectors_ * self.singular_values_) @ self.right_vectors_.T
        self.intercept_ = float(w[-1]) if self.fit_intercept else 0.0
        self.n_iter_ = it
        return self

    def predict(self, X: ArrayLike) -> np.ndarray:
        """``b + <X_i, Theta>_F`` for (n, d1, d2) inputs."""
        check_is_fitted(self, "coef_")
        return self.intercept_ + np.einsum("nij,ij->n", _check_matrices(X, shape=self.coef_.shape), self.coef_)


class TraceNormRepresenter:
    """Corollary 3: a trace-norm model's predictions as sums over its training matrices.

    Parameters
    ----------
    model : fitted :class:`TraceNormRegression`
    X_train : array of shape (n, d1, d2), the matrices it was fitted on
    y : array of shape (n,), the targets

    Attributes
    ----------
    global_importance_ : (n,) ``alpha_i = (y_i - f(X_i)) / (n lam)``
    column_projections_ : (n, k, d2) ``sqrt(S) U^T X_i``
    row_projections_ : (n, d1, k) ``X_i V sqrt(S)``
    optimality_violation_ : ``max |Theta - sum_i alpha_i U S U^T X_i| / max |Theta|`` (0 at the optimum)

    Examples
    --------
    >>> import numpy as np
    >>> from shap_instances.lowrank import TraceNormRegression, TraceNormRepresenter
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(80, 4, 3))
    >>> y = np.einsum("nij,ij->n", X, np.outer([1.0, 0, 2, 0], [1.0, -1, 0])) + 0.1 * rng.normal(size=80)
    >>> model = TraceNormRegression(lam=0.05).fit(X, y)
    >>> e = TraceNormRepresenter(model, X, y)(X[:2], mode="column")
    >>> bool(np.allclose(e.base_values + e.values.sum(1), model.predict(X[:2]), atol=1e-8))
    True
    """

    def __init__(self, model: TraceNormRegression, X_train: ArrayLike, y: ArrayLike) -> None:
        check_is_fitted(model, "coef_")
        Xa = _check_matrices(X_train, name="X_train", shape=model.coef_.shape)
        y = np.asarray(y, dtype=np.float64).reshape(-1)
        if y.shape[0] != Xa.shape[0] or not np.all(np.isfinite(y)):
            raise DataValidationError(f"y must hold {Xa.shape[0]} finite targets, got shape {y.shape}.")
        self.model = model
        U, S, V = model.left_vectors_, model.singular_values_, model.right_vectors_
        self._root_s, self._U, self._V = np.sqrt(S), U, V
        self.global_importance_ = (y - model.predict(Xa)) / (Xa.shape[0] * float(model.lam))
        self.column_projections_ = self._columns(Xa)
        self.row_projections_ = self._rows(Xa)
        rebuilt = (U * S) @ U.T @ np.einsum("n,nij->ij", self.global_importance_, Xa)
        scale = max(float(np.max(np.abs(model.coef_))), 1e-300)
        self.optimality_violation_ = float(np.max(np.abs(rebuilt - model.coef_))) / scale
        self.feature_names_ = [f"train[{i}]" for i in range(Xa.shape[0])]
        self._y = y

    def _columns(self, Xa):
        return np.einsum("k,ik,nij->nkj", self._root_s, self._U, Xa)

    def _rows(self, Xa):
        return np.einsum("nij,jk,k->nik", Xa, self._V, self._root_s)

    def __call__(self, X: ArrayLike, *, mode: str = "column", atol: float = 1e-6) -> shap.Explanation:
        """Explanation (n, n_train) of ``b + <X', Theta>``.

        ``mode``: "column" (Eq. 10, local importance in the column space of ``Theta``), "row" (Eq. 11, in
        its row space) or "both" (their mean, as the paper suggests where neither reading is natural). Each
        sums to the prediction at the optimum; a gap above ``atol`` warns (refit with a smaller ``tol``).
        """
        start = time.perf_counter()
        if mode not in ("column", "row", "both"):
            raise DataValidationError(f"mode must be 'column', 'row' or 'both', got {mode!r}.")
        Xq = _check_matrices(X, shape=self.model.coef_.shape)
        local = np.zeros((Xq.shape[0], self.global_importance_.shape[0]))
        if mode in ("column", "both"):
            local += np.einsum("qkj,nkj->qn", self._columns(Xq), self.column_projections_)
        if mode in ("row", "both"):
            local += np.einsum("qik,nik->qn", self._rows(Xq), self.row_projections_)
        if mode == "both":
            local *= 0.5
        values = local * self.global_importance_[None, :]
        n = Xq.shape[0]
        return build_explanation(
            values, np.full(n, self.model.intercept_), feature_names=self.feature_names_,
            data=np.broadcast_to(self._y, values.shape), explained=self.model.predict(Xq), atol=atol,
            on_violation="warn", compute_time=time.perf_counter() - start,
        )
