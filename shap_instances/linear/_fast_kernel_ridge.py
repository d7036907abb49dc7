"""Refits of KernelRidge and of GaussianProcessRegressor (hyper-parameters fixed) on coalitions and prefixes.

Both fit ``(K_SS + alpha I) a = y_S`` (a Gaussian process on ``y_S - mean(y_S)`` with ``normalize_y``) and
predict ``k_S(x)^T a``: the kernel matrices are computed once, and the numba kernels of
``linear/_kernel_ridge_kernels.py`` (the bordered Cholesky update is derived there) grow the factor by one row per
prefix. Single coalitions are dense solves with scikit-learn's own LAPACK calls.

A Gaussian process is served only with ``optimizer=None``: its refits then keep the kernel's hyper-parameters,
as this path does. With an optimizer, every scikit-learn refit re-optimises them on its subset, which a fixed
kernel does not reproduce: such a model is refitted (slow, exact). To hold a fitted kernel fixed on purpose
(an approximation of re-optimised refits, not a refit), pass
``GaussianProcessRegressor(kernel=fitted.kernel_, optimizer=None, ...)``.
"""

from __future__ import annotations

import copy
from typing import Any, ClassVar, Self

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike
from scipy import linalg
from sklearn.gaussian_process import GaussianProcessRegressor
from sklearn.gaussian_process.kernels import RBF, ConstantKernel
from sklearn.kernel_ridge import KernelRidge
from sklearn.metrics.pairwise import pairwise_kernels

from ..games import register_fast_path
from ._kernel_ridge_kernels import kernel_prefix_values

__all__ = ["KernelRidgePath"]


@register_fast_path
class KernelRidgePath:
    """Exact refits of KernelRidge (scalar ``alpha > 0``, any kernel but "precomputed") and of
    GaussianProcessRegressor with ``optimizer=None`` (scalar ``alpha``, ``normalize_y`` either way).

    One of the :data:`~shap_instances.games.exact_fast_paths`: the residual game picks it by itself. The
    Gaussian process's prediction is its posterior mean (what ``predict`` returns).

    Parameters
    ----------
    model : KernelRidge or GaussianProcessRegressor
        Only its hyper-parameters are read (it need not be fitted).
    X, y : ndarray
        Training rows (the players) and their targets.
    X_eval, y_eval : ndarray
        Explained rows and their targets.
    empty : ndarray (n_eval,)
        v(empty).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.kernel_ridge import KernelRidge
    >>> from shap_instances.linear import KernelRidgePath
    >>> X = np.array([[0.0], [1.0], [2.0], [4.0]]); y = np.array([0.0, 1.0, 1.5, 3.0])
    >>> model = KernelRidge(alpha=0.1, kernel="rbf")
    >>> path = KernelRidgePath(model, X, y, X, y, np.zeros(4))
    >>> refit = KernelRidge(alpha=0.1, kernel="rbf").fit(X[:3], y[:3]).predict(X) - y
    >>> bool(np.allclose(path.prefix_residuals(np.arange(4))[2], refit))
    True
    """

    #: Prefix values come from a numba kernel (threads over permutations), scattered by the generic accumulator.
    fused: ClassVar[bool] = False

    def __init__(self, model: Any, X: Any, y: ArrayLike, X_eval: Any, y_eval: ArrayLike, empty: ArrayLike) -> None:
        self.process = isinstance(model, GaussianProcessRegressor)
        self.centre = bool(self.process and model.normalize_y)
        self.y = np.ascontiguousarray(y, dtype=np.float64)
        self.y_eval = np.ascontiguousarray(y_eval, dtype=np.float64)
        self.empty = np.ascontiguousarray(empty, dtype=np.float64)
        self.ones = np.ones(len(self.y_eval))  # multiplier of the mean target (W^T 1 when aggregated)
        #: False for data the kernels do not cover (sparse, non-numeric): the game then refits clones.
        self.usable = not (sp.issparse(X) or sp.issparse(X_eval))
        if self.usable:
            try:
                K, KE = _kernels(model, np.asarray(X, dtype=np.float64), np.asarray(X_eval, dtype=np.float64))
            except (TypeError, ValueError):
                K = KE = np.full((1, 1), np.nan)  # rows the kernel cannot take: refits say why
            self.A = np.ascontiguousarray(K + float(model.alpha) * np.eye(len(K)))
            self.KET = np.ascontiguousarray(KE.T)
            self.usable = bool(np.all(np.isfinite(self.A)) and np.all(np.isfinite(self.KET)))

    @classmethod
    def supports(cls, model: Any) -> bool:
        """KernelRidge with a scalar ``alpha > 0`` and a kernel other than "precomputed"; GaussianProcessRegressor
        with ``optimizer=None``, a scalar ``alpha >= 0`` and one target."""
        if type(model) is KernelRidge:
            return np.ndim(model.alpha) == 0 and model.alpha > 0 and model.kernel != "precomputed"
        return (type(model) is GaussianProcessRegressor and model.optimizer is None and np.ndim(model.alpha) == 0
                and model.alpha >= 0 and model.n_targets in (None, 1))

    def aggregated(self, weights: ArrayLike) -> Self:
        """The path of the weighted sums ``weights^T residuals`` (weights of shape (n_eval, K))."""
        weights = np.asarray(weights, dtype=np.float64)
        new = copy.copy(self)
        new.KET = np.ascontiguousarray(self.KET @ weights)
        new.y_eval, new.ones = weights.T @ self.y_eval, weights.T @ self.ones
        new.empty = np.ascontiguousarray(weights.T @ self.empty)
        return new

    def fits_all_rows(self) -> bool:
        """False: the game fits the model once on all rows, so it refuses exactly what the refit path refuses."""
        return False

    def memory_bytes(self) -> float:
        """Bytes held: the kernel matrices, and one ``n x n`` Cholesky factor per numba thread."""
        import numba

        n, d = self.KET.shape
        return 8.0 * (n * n + n * d) + 8.0 * n * (n + 5) * max(int(numba.get_num_threads()), 1)

    def residuals(self, mask: np.ndarray) -> np.ndarray:
        """Residuals (or their weighted sums) of the fit on the rows in ``mask`` (non-empty): one dense solve,
        with scikit-learn's calls (a kernel ridge's positive-definite solve falling back to least squares; a
        Gaussian process's Cholesky factor, whose failure gives v(empty) as a failed refit does)."""
        rows = np.flatnonzero(mask)
        A, target = self.A[np.ix_(rows, rows)], self.y[rows]
        mean = target.mean() if self.centre else 0.0
        try:
            if self.process:
                coefficients = linalg.cho_solve((linalg.cholesky(A, lower=True), True), target - mean)
            else:
                coefficients = linalg.solve(A, target, assume_a="pos")
        except np.linalg.LinAlgError:
            if self.process:
                return self.empty
            coefficients = linalg.lstsq(A, target)[0]
        return self.KET[rows].T @ coefficients + mean * self.ones - self.y_eval

    def prefix_values_batch(self, permutations: np.ndarray) -> np.ndarray:
        """Values of every prefix of each permutation, shape (k, n + 1, n_outputs), ``[:, 0]`` = v(empty).

        A permutation whose factor fails at some prefix is finished with :meth:`residuals` (kernel ridge) or
        v(empty) (a Gaussian process: every larger prefix holds the failing matrix).
        """
        permutations = np.ascontiguousarray(permutations, dtype=np.intp)
        k, n = permutations.shape
        out = np.empty((k, n + 1, len(self.empty)))
        failed = np.empty(k, dtype=np.int64)
        kernel_prefix_values(self.A, self.y, self.KET, self.y_eval, self.ones, self.empty, permutations,
                             self.centre, out, failed)
        for r in np.flatnonzero(failed <= n):
            for t in range(failed[r], n + 1):
                mask = np.zeros(n, dtype=bool)
                mask[permutations[r, :t]] = True
                out[r, t] = self.empty if self.process else self.residuals(mask)
        return out

    def prefix_residuals(self, permutation: ArrayLike) -> np.ndarray:
        """Residuals on the evaluation rows of the fit on each prefix, shape (n, n_outputs)."""
        return self.prefix_values_batch(np.asarray(permutation)[None, :])[0, 1:]


def _kernels(model: Any, X: Any, X_eval: Any) -> tuple[np.ndarray, np.ndarray]:
    """``(K(X, X), K(X_eval, X))`` as the model computes them when it fits on ``X`` and predicts ``X_eval``."""
    if isinstance(model, GaussianProcessRegressor):
        kernel = ConstantKernel() * RBF() if model.kernel is None else model.kernel
        return kernel(X), kernel(X_eval, X)
    params = model.kernel_params or {} if callable(model.kernel) else {
        "gamma": model.gamma, "degree": model.degree, "coef0": model.coef0}
    return (pairwise_kernels(X, metric=model.kernel, filter_params=True, **params),
            pairwise_kernels(X_eval, X, metric=model.kernel, filter_params=True, **params))
