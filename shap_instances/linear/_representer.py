"""High-dimensional representer points of l1, elastic-net and l2 regularised linear models (Tsai et al., 2023).

:class:`LinearRepresenter` holds, for a fitted model's objective and its training data, the global importances
``alpha_i``, the kernel weights ``d`` (``k(x, x') = <d * x, x'>``), the reconstruction of the coefficients, and
computes the values ``alpha_i k(x_i, x'_j)`` and the top-k training instances of explained rows. What
``RepresenterExplainer`` delegates to; derivations in ``docs/explainers/representer.md``.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
import scipy.sparse as sp

from ..exceptions import DataValidationError
from ._objective import LinearObjective

__all__ = ["LinearRepresenter", "TopK", "largest_magnitude", "representer_kernel_weights"]


class TopK(NamedTuple):
    """The ``k`` most positive and most negative training instances per explained point.

    Arrays are of shape (n_explained, k), ordered from the strongest; indices point into the training data.

    Examples
    --------
    >>> import numpy as np
    >>> from shap_instances.linear import TopK
    >>> top = TopK(np.array([[2, 0]]), np.array([[0.5, 0.1]]), np.array([[1, 3]]), np.array([[-0.4, -0.2]]))
    >>> top.positive_indices[0].tolist()
    [2, 0]
    """

    positive_indices: np.ndarray
    positive_values: np.ndarray
    negative_indices: np.ndarray
    negative_values: np.ndarray


def representer_kernel_weights(coef: np.ndarray, lam1: float, lam2: float,
                               positive: bool = False) -> tuple[np.ndarray, float]:
    """Diagonal ``d`` of the inverse subdifferential map and the scale ``s`` (``alpha_i = g_i / s``).

    ``w = d * sum_i (g_i / s) x_i`` at the optimum, with ``d_j = s |w_j| / (lam1 + lam2 |w_j|)`` on the
    support when ``lam1 > 0`` (zero off it) and ``d_j = 1`` for pure l2 (zero off the support when
    ``positive``). ``s = lam1`` when ``lam1 > 0`` else ``lam2``.

    Examples
    --------
    >>> import numpy as np
    >>> from shap_instances.linear import representer_kernel_weights
    >>> d, s = representer_kernel_weights(np.array([0.5, 0.0, -2.0]), 0.1, 0.0)
    >>> d.tolist(), s
    ([0.5, 0.0, 2.0], 0.1)
    """
    absw = np.abs(np.asarray(coef, dtype=np.float64))
    if lam1 > 0:
        return lam1 * absw / (lam1 + lam2 * absw), float(lam1)
    d = np.ones_like(absw)
    if positive:
        d[absw == 0] = 0.0
    return d, float(lam2)


def largest_magnitude(X: Any) -> float:
    """The largest absolute value of a dense or sparse matrix (0 when empty).

    Examples
    --------
    >>> from shap_instances.linear import largest_magnitude
    >>> largest_magnitude([[1.0, -3.0]])
    3.0
    """
    data = X.data if sp.issparse(X) else np.asarray(X)
    return float(np.max(np.abs(data), initial=0.0))


class LinearRepresenter:
    """The representer decomposition of a fitted regularised linear model over its (validated) training data.

    Parameters
    ----------
    objective : LinearObjective
        The fitted model's objective (:func:`~shap_instances.linear.linear_objective`).
    data : array-like or sparse matrix of shape (n_train, p)
        The training data, validated.

    Attributes
    ----------
    kernel_weights : ndarray (K, p)
    global_importance : ndarray (n_train, K)
        ``alpha_i`` per output.
    coef_reconstruction : ndarray (K, p)
    optimality_violation : float
        Largest ``|reconstruction - coef|`` relative to the largest coefficient.
    intercept_weights, intercept_reconstruction : ndarray (K,)
        liblinear's penalised intercept, carried by the synthetic feature ``intercept_scaling``.
    active_features : ndarray
        The union of the outputs' active coordinates.
    data_active : array or CSR matrix (n_train, n_active)

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import Ridge
    >>> from shap_instances.linear import LinearRepresenter, linear_objective
    >>> rng = np.random.default_rng(0)
    >>> X, y = rng.normal(size=(30, 3)), rng.normal(size=30)
    >>> model = Ridge(alpha=1.0).fit(X, y)
    >>> rep = LinearRepresenter(linear_objective(model, y), X)
    >>> values = rep.values(X[:2])[:, :, 0]
    >>> bool(np.allclose(rep.base() + values.sum(1), model.predict(X[:2])))
    True
    """

    def __init__(self, objective: LinearObjective, data: Any) -> None:
        obj = self.objective = objective
        self.data = data
        with np.errstate(over="ignore", invalid="ignore"):  # overflow is refused below
            g = obj.negative_gradient(obj.decision(data))  # (n, K)
        K = obj.coef.shape[0]
        self.kernel_weights = np.empty_like(obj.coef)
        self.global_importance = np.empty_like(g)
        for k in range(K):
            self.kernel_weights[k], scale = representer_kernel_weights(obj.coef[k], obj.lam1[k], obj.lam2[k],
                                                                       obj.positive)
            self.global_importance[:, k] = g[:, k] / scale
        # The representer reconstruction of the coefficients and its distance to the fitted ones.
        with np.errstate(over="ignore", invalid="ignore"):
            Xt_alpha = np.asarray(data.T @ self.global_importance).T  # (K, p)
        self.coef_reconstruction = self.kernel_weights * Xt_alpha
        scale = max(float(np.max(np.abs(obj.coef))), 1e-300)
        self.optimality_violation = float(np.max(np.abs(self.coef_reconstruction - obj.coef)) / scale)
        if not (np.isfinite(self.global_importance).all() and np.isfinite(self.coef_reconstruction).all()):
            raise DataValidationError(
                "masker: the representer weights overflow float64 (the decision function or X^T alpha of the "
                f"training data is not finite; its largest value is {largest_magnitude(data):.3g}); pass the data "
                "and y the model was fitted on, rescaled if they are that large.")
        # liblinear: the synthetic feature a = intercept_scaling carries weight b / a, penalised like w.
        self.intercept_weights = np.zeros(K)
        if obj.intercept_scaling is not None:
            a = obj.intercept_scaling
            for k in range(K):
                d_b, _ = representer_kernel_weights(np.array([obj.intercept[k] / a]), obj.lam1[k], obj.lam2[k])
                self.intercept_weights[k] = d_b[0] * a * a
        self.intercept_reconstruction = self.intercept_weights * self.global_importance.sum(axis=0)
        # Precompute the projected training data sqrt(d) * x on the union of active coordinates.
        self.active_features = np.flatnonzero(np.any(self.kernel_weights != 0, axis=0))
        Xa = data[:, self.active_features]
        self.data_active = Xa.tocsr() if sp.issparse(Xa) else np.ascontiguousarray(Xa)

    def values(self, Xq: Any, *, penalised_intercept: str = "base") -> np.ndarray:
        """Representer values for validated rows ``Xq`` (sparse or dense): shape (m, n_train, K).

        ``penalised_intercept="instances"`` adds liblinear's penalised intercept to the training instances.
        """
        K = self.objective.coef.shape[0]
        Xa_q = Xq[:, self.active_features]
        out = np.empty((Xq.shape[0], self.data.shape[0], K))
        for k in range(K):
            d = self.kernel_weights[k, self.active_features]
            if sp.issparse(Xa_q):
                gram = (Xa_q.multiply(d[None, :]).tocsr() @ self.data_active.T)
                gram = gram.toarray() if sp.issparse(gram) else np.asarray(gram)
            else:
                gram = np.asarray(self.data_active @ (Xa_q * d).T).T  # sparse training data stays sparse
            np.multiply(gram, self.global_importance[:, k][None, :], out=gram)  # in place: values and one gram
            out[:, :, k] = gram
            if penalised_intercept == "instances":
                out[:, :, k] += self.intercept_weights[k] * self.global_importance[:, k][None, :]
        return out

    def base(self, penalised_intercept: str = "base") -> np.ndarray:
        """The base values (K,): the intercept, or 0 when liblinear's penalised intercept goes to the instances."""
        obj = self.objective
        if penalised_intercept == "instances" and obj.intercept_scaling is not None:
            return np.zeros_like(obj.intercept)
        return obj.intercept

    def colour_by(self) -> np.ndarray:
        """Per training instance: the regression target, or the class index (what plots colour by)."""
        t = self.objective.targets
        if self.objective.loss == "squared":
            return t[:, 0]
        if t.shape[1] == 1:
            return t[:, 0]
        return np.argmax(t, axis=1).astype(np.float64)

    def top_k(self, Xq: Any, k: int, output: int, *, chunk_size: int = 256,
              penalised_intercept: str = "base") -> TopK:
        """The ``k`` most positive and most negative training instances of output ``output`` per row of ``Xq``,
        in chunks of ``chunk_size`` rows with ``np.argpartition`` (no full sort)."""
        n = Xq.shape[0]
        result = [np.empty((n, k), dtype=np.intp), np.empty((n, k)), np.empty((n, k), dtype=np.intp),
                  np.empty((n, k))]
        for start in range(0, n, chunk_size):
            block = self.values(Xq[start:start + chunk_size], penalised_intercept=penalised_intercept)[:, :, output]
            rows = np.arange(block.shape[0])[:, None]
            for slot, sign in ((0, -1.0), (2, 1.0)):  # argpartition finds the smallest: negate for the largest
                part = np.argpartition(sign * block, k - 1, axis=1)[:, :k]
                order = np.argsort(sign * block[rows, part], axis=1, kind="stable")
                idx = part[rows, order]
                result[slot][start:start + block.shape[0]] = idx
                result[slot + 1][start:start + block.shape[0]] = block[rows, idx]
        return TopK(*result)
