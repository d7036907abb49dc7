"""The last-layer representer of a two-tower recommender: its item embeddings as the output layer.

A two-tower model predicts ``f(u, i) = mu + <U_u, V_i>`` with ``U_u`` the user tower's output. Read with the user
tower frozen, ``V`` is a linear output layer on the features ``U_u`` whose output is selected by the item, so
Yeh et al.'s theorem applies to it: fine-tuned to the optimum of

.. math::

    \\frac{1}{|D|} \\sum_{(u, i) \\in D} \\tfrac{1}{2} (r_{ui} - \\mu - \\langle U_u, V_i \\rangle)^2
    + \\lambda \\lVert V \\rVert_F^2,

each ``V_i`` is a ridge regression over the item's raters, ``V_i = sum_{u rated i} alpha_ui U_u`` with
``alpha_ui = (r_ui - f(u, i)) / (2 lambda |D|)``, and for every user ``u'``

.. math::

    f(u', i') = \\mu + \\sum_{u \\text{ rated } i'} \\alpha_{ui'} \\langle U_u, U_{u'} \\rangle

exactly: the user-based attribution of Tsai et al.'s Definition 1 with the raw user embeddings, an identity
that holds without a nuclear-norm optimum (derivation: ``docs/explainers/representer.md``).
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import shap
from numpy.typing import ArrayLike

from .._explanation import build_explanation
from ..exceptions import DataValidationError
from ..utils import check_memory, check_pairs

__all__ = ["TwoTowerRepresenter"]


class TwoTowerRepresenter:
    """Training-interaction attributions of a two-tower model whose item embeddings are fine-tuned (l2).

    Parameters
    ----------
    user_embeddings : array of shape (n_users, k)
        The user tower's outputs (frozen features).
    X : array of shape (n_interactions, 2)
        Training (user, item) index pairs.
    y : array of shape (n_interactions,)
        Training ratings.
    n_items : int
        Number of items (item indices lie in ``[0, n_items)``).
    lam : float, default=1e-3
        ``lambda`` of the fine-tuning objective (module docstring).
    offset : float, default=0.0
        The model's global bias ``mu``: the base value.
    item_embeddings : array of shape (n_items, k), optional
        The model's own item embeddings, to measure ``fidelity_``.

    Attributes
    ----------
    item_factors_ : ndarray (n_items, k)
        The fine-tuned item embeddings.
    global_importance_ : ndarray (n_interactions,)
        ``alpha_ui``.
    optimality_violation_ : float
        ``max |sum alpha U - V| / max |V|``: zero at the optimum.
    fidelity_ : float
        ``max |fine-tuned - original prediction| / max |original|`` over the training pairs (nan without
        ``item_embeddings``).

    Examples
    --------
    >>> import numpy as np
    >>> from shap_instances.neural import TwoTowerRepresenter
    >>> rng = np.random.default_rng(0)
    >>> U = rng.normal(size=(6, 2)); pairs = np.argwhere(rng.random((6, 4)) < 0.7); r = rng.normal(size=len(pairs))
    >>> rep = TwoTowerRepresenter(U, pairs, r, n_items=4, lam=0.01)
    >>> e = rep([[0, 1], [5, 3]])
    >>> bool(np.allclose(e.base_values + e.values.sum(1), rep.predict([[0, 1], [5, 3]])))
    True
    """

    def __init__(self, user_embeddings: ArrayLike, X: Any, y: ArrayLike, *, n_items: int, lam: float = 1e-3,
                 offset: float = 0.0, item_embeddings: ArrayLike | None = None) -> None:
        U = np.asarray(user_embeddings, dtype=np.float64)
        if U.ndim != 2 or not np.all(np.isfinite(U)):
            raise DataValidationError(f"user_embeddings must be a finite 2-D array, got shape {U.shape}.")
        if not (np.isfinite(lam) and lam > 0):
            raise DataValidationError(f"lam must be a positive number (the fine-tuning's l2 strength), got {lam!r}.")
        users, items = check_pairs(X, shape=(U.shape[0], int(n_items)))
        r = np.asarray(y, dtype=np.float64).reshape(-1)
        if r.shape[0] != users.shape[0] or not np.all(np.isfinite(r)):
            raise DataValidationError(f"y must hold {users.shape[0]} finite ratings, got shape {r.shape}.")
        self.users_, self.items_, self.ratings_, self.offset = users, items, r, float(offset)
        self.user_embeddings_ = U
        n, k = r.shape[0], U.shape[1]
        V = np.zeros((int(n_items), k))
        ridge = 2.0 * lam * n  # (1/n) sum r^2/2 + lam ||V||^2  <=>  sum r^2/2 + (2 lam n)/2 ||V||^2
        for i in np.unique(items):  # one small ridge per item over its raters
            Ui = U[users[items == i]]
            V[i] = np.linalg.solve(Ui.T @ Ui + ridge * np.eye(k), Ui.T @ (r[items == i] - self.offset))
        self.item_factors_ = V
        residual = r - self.predict(np.column_stack([users, items]))
        self.global_importance_ = residual / ridge
        rebuilt = np.zeros_like(V)
        np.add.at(rebuilt, items, self.global_importance_[:, None] * U[users])
        self.optimality_violation_ = float(np.max(np.abs(rebuilt - V)) / max(float(np.max(np.abs(V))), 1e-300))
        self.fidelity_ = float("nan")
        if item_embeddings is not None:
            original = self.offset + np.einsum("ij,ij->i", U[users], np.asarray(item_embeddings)[items])
            fine = r - residual
            self.fidelity_ = float(np.max(np.abs(fine - original)) / max(float(np.max(np.abs(original))), 1e-300))
        self.feature_names_ = [f"({u}, {i})" for u, i in zip(users, items, strict=True)]

    def predict(self, X: Any) -> np.ndarray:
        """``offset + <U_u, V_i>`` of the fine-tuned model for (n, 2) pairs."""
        users, items = check_pairs(X, shape=(self.user_embeddings_.shape[0], self.item_factors_.shape[0]))
        return self.offset + np.einsum("ij,ij->i", self.user_embeddings_[users], self.item_factors_[items])

    def __call__(self, X: Any, *, max_memory: float | None = None) -> shap.Explanation:
        """Explanation (n, n_interactions): ``alpha_ui <U_u, U_u'>`` on the explained item's ratings, 0 elsewhere;
        ``base_values + values.sum(1)`` is the fine-tuned prediction (checked, tolerance 1e-6 relative)."""
        start = time.perf_counter()
        users, items = check_pairs(X, shape=(self.user_embeddings_.shape[0], self.item_factors_.shape[0]))
        n, m = users.shape[0], self.users_.shape[0]
        check_memory(16.0 * n * m, f"two-tower representer values of {n} x {m}", max_memory=max_memory,
                     instead="Explain fewer pairs at once.")
        kernel = self.user_embeddings_[users] @ self.user_embeddings_[self.users_].T  # (n, m)
        values = np.where(self.items_[None, :] == items[:, None], kernel * self.global_importance_[None, :], 0.0)
        return build_explanation(
            values, np.full(n, self.offset), feature_names=self.feature_names_,
            data=np.broadcast_to(self.ratings_, (n, m)),
            row_names=[f"({u}, {i})" for u, i in zip(users, items, strict=True)],
            explained=self.predict(np.column_stack([users, items])), atol=1e-6, on_violation="warn",
            compute_time=time.perf_counter() - start,
        )
