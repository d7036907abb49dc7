"""Influence-function baseline for l1 / elastic-net / l2 linear models, restricted to the active set.

Removing training point ``i`` moves the parameters (coefficients on the active set ``S`` plus an
unpenalised intercept) by about ``-H^{-1} g_i z_i`` (``z_i = x_{i,S}`` with a 1 appended, ``H`` the Hessian
of the objective on those coordinates, ``g_i`` the negative loss derivative), so the prediction at ``x'``
drops by ``g_i z'^T H^{-1} z_i``: that is the score (Koh and Liang, 2017; Avella-Medina, 2017).

``variant="paper"`` builds the influence function as Tsai et al. (2023, Section 6.2.1) write it, after
Avella-Medina (2017, Proposition 5.3): the active coefficients only (no intercept coordinate, even when the
model has one) and the penalty's gradient added to each point's loss gradient,
``-(c_i grad l_i + lam1 sign(w_S))^T H_S^{-1} x'_S``. The second term is the same for every training point,
so it shifts all scores of one explained point by one constant and changes no ranking.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike

from ..exceptions import InvalidParameterError
from ..utils import check_data, check_fitted
from ._l2_representer import select_output
from ._objective import linear_objective

__all__ = ["InfluenceFunction", "influence_scores"]


class InfluenceFunction:
    """Precomputed influence function: the Hessian on the active set is factorised once.

    Parameters
    ----------
    model : fitted Lasso, ElasticNet, Ridge or LogisticRegression
    X_train, y_train : training data and targets
    sample_weight : optional training sample weights
    output : class label or index for multi-output models (each output treated as its own problem)
    damping : float, default=1e-10
        Added to the Hessian's diagonal (relative to its largest entry) for numerical stability.
    variant : {"leave-one-out", "paper"}, default="leave-one-out"
        "leave-one-out": the Hessian and the scores include the unpenalised intercept (the first-order
        change of the prediction when a point is removed); "paper": the formula of Tsai et al. (2023),
        active coefficients only plus the constant ``-lam1 sign(w_S)^T H_S^{-1} x'_S`` per explained point.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import Lasso
    >>> from shap_instances.metrics import InfluenceFunction
    >>> rng = np.random.default_rng(0)
    >>> X, y = rng.normal(size=(40, 5)), rng.normal(size=40)
    >>> inf = InfluenceFunction(Lasso(alpha=0.05).fit(X, y), X, y)
    >>> inf.scores(X[:3]).shape
    (3, 40)
    """

    def __init__(self, model: Any, X_train: Any, y_train: ArrayLike, *, sample_weight: ArrayLike | None = None,
                 output: int | str | None = None, damping: float = 1e-10, variant: str = "leave-one-out") -> None:
        if variant not in ("leave-one-out", "paper"):
            raise InvalidParameterError(f"variant must be 'leave-one-out' or 'paper', got {variant!r}.")
        check_fitted(model)
        self.variant = variant
        obj = linear_objective(model, np.asarray(y_train), sample_weight)
        Xt = check_data(X_train, name="X_train", allow_sparse=True, n_features=obj.coef.shape[1])
        k = select_output(obj, output)
        F = obj.decision(Xt)
        self.g_ = obj.negative_gradient(F)[:, k]
        h = obj.hessian_weights(F)[:, k]
        w = obj.coef[k]
        active = np.flatnonzero(w != 0) if obj.lam1[k] > 0 or obj.positive else np.arange(w.size)
        self.active_features_ = active
        self._p = obj.coef.shape[1]
        self._intercept = variant == "leave-one-out" and (
            bool(np.any(obj.intercept != 0)) or bool(getattr(model, "fit_intercept", False)))
        self._penalty_gradient = obj.lam1[k] * np.sign(w[active]) if variant == "paper" else None
        self._a = obj.intercept_scaling if obj.intercept_scaling is not None else 1.0
        Z = self._design(Xt)
        HZ = Z.multiply(h[:, None]) if sp.issparse(Z) else Z * h[:, None]
        H = np.asarray((Z.T @ HZ).toarray() if sp.issparse(HZ) else Z.T @ HZ)
        q = len(active)
        reg = np.zeros(H.shape[0])
        reg[:q] = obj.lam2[k]
        if obj.intercept_scaling is not None and H.shape[0] > q:
            reg[q] = obj.lam2[k]  # liblinear penalises the synthetic intercept feature too
        H[np.diag_indices_from(H)] += reg + damping * max(float(np.max(np.abs(np.diag(H)))), 1.0)
        self.hessian_ = H
        self._cho = np.linalg.cholesky(H)
        self._Z = Z.tocsr() if sp.issparse(Z) else Z

    def _design(self, X: Any) -> Any:
        Xa = X[:, self.active_features_]
        if not self._intercept:
            return Xa
        col = np.full((X.shape[0], 1), self._a)
        return sp.hstack([Xa, sp.csr_matrix(col)], format="csr") if sp.issparse(Xa) else np.hstack([Xa, col])

    def scores(self, X: Any) -> np.ndarray:
        """Influence scores (n, n_train): positive means removing the point lowers the prediction."""
        Xq = check_data(X, name="X", allow_sparse=True, n_features=self._p)
        Zq = self._design(Xq)
        Zq = Zq.toarray() if sp.issparse(Zq) else Zq
        from scipy.linalg import cho_solve

        A = cho_solve((self._cho, True), Zq.T)  # (q, n)
        scores = np.asarray(self._Z @ A).T * self.g_[None, :]
        if self._penalty_gradient is not None:  # one constant per explained point: no ranking changes
            scores -= (self._penalty_gradient @ A)[:, None]
        return scores


def influence_scores(model: Any, X_train: Any, y_train: ArrayLike, X: Any, *, sample_weight: ArrayLike | None = None,
                     output: int | str | None = None, variant: str = "leave-one-out") -> np.ndarray:
    """One-shot :class:`InfluenceFunction` scores (n, n_train).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import Ridge
    >>> from shap_instances.metrics import influence_scores
    >>> rng = np.random.default_rng(0)
    >>> X, y = rng.normal(size=(30, 3)), rng.normal(size=30)
    >>> influence_scores(Ridge().fit(X, y), X, y, X[:2]).shape
    (2, 30)
    """
    return InfluenceFunction(model, X_train, y_train, sample_weight=sample_weight, output=output,
                             variant=variant).scores(X)
