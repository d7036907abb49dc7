"""High-dimensional representers of user/item factor models (Tsai et al., 2023, Definition 1, Algorithm 1).

A training interaction ``(u, i)`` explains a prediction for ``(u', i')`` only when it shares its item
(user-based attribution, ``alpha_ui <U~_u, U~_u'>``) or its user (item-based attribution,
``alpha_ui <V~_i, V~_i'>``), with ``U~ = U sqrt(S)``, ``V~ = V sqrt(S)`` from the SVD of the rating matrix
``U_hat V_hat^T``, computed by three small SVDs (Algorithm 1) and never by the SVD of ``U_hat V_hat^T``.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import shap
from numpy.typing import ArrayLike
from scipy.special import expit

from .._explanation import build_explanation
from ..exceptions import DataValidationError
from ..utils import check_memory, check_pairs
from ._kernels import mf_representer_values
from ._soft_impute import SoftImpute

__all__ = ["MatrixFactorizationRepresenter", "normalized_embeddings"]


def normalized_embeddings(user_factors: np.ndarray, item_factors: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Algorithm 1: ``U~, V~`` with ``U~ V~^T = U_hat V_hat^T`` and ``U~ = U sqrt(S)``, ``V~ = V sqrt(S)``.

    Three SVDs of sizes (n_users x k), (k x n_items) and (k x k) give a thin SVD ``(U1 U3) S3 (V2 V3)^T``
    of ``U_hat V_hat^T`` in ``O((n_users + n_items) k^2)``.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> U, V = rng.normal(size=(6, 2)), rng.normal(size=(5, 2))
    >>> Ut, Vt = normalized_embeddings(U, V)
    >>> bool(np.allclose(Ut @ Vt.T, U @ V.T))
    True
    """
    U_hat = np.asarray(user_factors, dtype=np.float64)
    V_hat = np.asarray(item_factors, dtype=np.float64)
    U1, S1, V1t = np.linalg.svd(U_hat, full_matrices=False)
    U2, S2, V2t = np.linalg.svd(V_hat.T, full_matrices=False)
    U3, S3, V3t = np.linalg.svd((S1[:, None] * V1t) @ (U2 * S2[None, :]), full_matrices=False)
    root = np.sqrt(S3)
    return (U1 @ U3) * root, (V2t.T @ V3t.T) * root


class MatrixFactorizationRepresenter:
    """User- and item-based attributions of a factor model's predictions to its training interactions.

    Parameters
    ----------
    user_factors : array of shape (n_users, k)
        Final user embeddings (the user tower's outputs for a two-tower model).
    item_factors : array of shape (n_items, k)
        Final item embeddings.
    X : array of shape (n_interactions, 2)
        Training (user, item) index pairs.
    y : array of shape (n_interactions,)
        Training ratings (0/1 labels for ``loss="logistic"``).
    loss : {"squared", "logistic"}, default="squared"
        Point-wise training loss (``1/2 (y - f)^2`` or binary cross-entropy on logits).
    scale : float, default=1.0
        Multiplies ``-loss'``: ``1 / lam`` for a nuclear-norm model solved to optimum (then
        ``base + sum == prediction`` exactly), 1 otherwise (the paper drops the unknown constant).
    offset : float, default=0.0
        Added to ``<U_u, V_i>`` by the model (a global mean rating); the base value.
    exact : bool, default=False
        Whether the representer theorem holds (nuclear-norm optimum): then explanations are checked for
        efficiency. For other factor models the attributions rank interactions but do not sum to the
        prediction (Tsai et al., 2023, Section 5.2).

    Examples
    --------
    >>> import numpy as np
    >>> from shap_instances.lowrank import SoftImpute, MatrixFactorizationRepresenter
    >>> rng = np.random.default_rng(0)
    >>> full = rng.normal(size=(8, 2)) @ rng.normal(size=(2, 6))
    >>> pairs = np.argwhere(rng.random((8, 6)) < 0.7)
    >>> ratings = full[pairs[:, 0], pairs[:, 1]]
    >>> model = SoftImpute(lam=0.5).fit(pairs, ratings)
    >>> rep = MatrixFactorizationRepresenter.from_soft_impute(model, pairs, ratings)
    >>> e = rep([[0, 1]], mode="item")
    >>> bool(np.allclose(e.base_values + e.values.sum(1), model.predict([[0, 1]])))
    True
    """

    def __init__(self, user_factors: np.ndarray, item_factors: np.ndarray, X: Any, y: ArrayLike, *,
                 loss: str = "squared", scale: float = 1.0, offset: float = 0.0, exact: bool = False) -> None:
        U = np.asarray(user_factors, dtype=np.float64)
        V = np.asarray(item_factors, dtype=np.float64)
        if U.ndim != 2 or V.ndim != 2 or U.shape[1] != V.shape[1]:
            raise DataValidationError(
                f"user_factors and item_factors must be 2-D with the same number of columns, got {U.shape} "
                f"and {V.shape}."
            )
        if not (np.all(np.isfinite(U)) and np.all(np.isfinite(V))):
            raise DataValidationError("user_factors and item_factors must be finite.")
        if loss not in ("squared", "logistic"):
            raise DataValidationError(f"loss must be 'squared' or 'logistic', got {loss!r}.")
        users, items = check_pairs(X, shape=(U.shape[0], V.shape[0]))
        y = np.asarray(y, dtype=np.float64).reshape(-1)
        if y.shape[0] != users.shape[0] or not np.all(np.isfinite(y)):
            raise DataValidationError(f"y must hold {users.shape[0]} finite ratings, got shape {y.shape}.")
        self.users_, self.items_, self.ratings_ = users, items, y
        self.offset, self.scale, self.loss, self.exact = float(offset), float(scale), loss, bool(exact)
        self.user_embeddings_, self.item_embeddings_ = normalized_embeddings(U, V)
        f = self.offset + np.einsum("ij,ij->i", self.user_embeddings_[users], self.item_embeddings_[items])
        residual = y - f if loss == "squared" else y - expit(f)
        self.global_importance_ = self.scale * residual
        # Group interactions by user and by item (CSR-style offsets) for O(n' k) explanations.
        self._by_user = np.argsort(users, kind="stable").astype(np.int64)
        self._user_ptr = np.searchsorted(users[self._by_user], np.arange(U.shape[0] + 1))
        self._by_item = np.argsort(items, kind="stable").astype(np.int64)
        self._item_ptr = np.searchsorted(items[self._by_item], np.arange(V.shape[0] + 1))
        self.feature_names_ = [f"({u}, {i})" for u, i in zip(users, items, strict=True)]

    @classmethod
    def from_soft_impute(cls, model: SoftImpute, X: Any, y: ArrayLike) -> MatrixFactorizationRepresenter:
        """The exact representer of a fitted :class:`SoftImpute` (``scale = 1 / lam``, ``offset = mean_``)."""
        return cls(model.user_factors_, model.item_factors_, X, y, scale=1.0 / model.lam, offset=model.mean_,
                   exact=True)

    def attributions(self, user: int, item: int, mode: str = "item") -> tuple[np.ndarray, np.ndarray]:
        """Interactions that explain ``(user, item)`` and their scores, without any dense allocation.

        Parameters
        ----------
        user, item : int
        mode : {"item", "user", "union"}
            "item": the user's own past interactions (``<V~_i, V~_item>``); "user": other users'
            interactions with the item (``<U~_u, U~_user>``); "union": both sets, each scored by its own
            formula (Definition 1; the pair itself, if it is a training interaction, counts as user-based).

        Returns
        -------
        indices : ndarray of int
            Rows of the training interactions.
        scores : ndarray

        Examples
        --------
        >>> import numpy as np
        >>> U, V = np.eye(3, 2), np.eye(4, 2)
        >>> rep = MatrixFactorizationRepresenter(U, V, [[0, 0], [0, 1], [1, 1]], [1.0, 0.0, 2.0])
        >>> idx, scores = rep.attributions(0, 1, mode="item")
        >>> idx.tolist()
        [0, 1]
        """
        users_, items_ = check_pairs([[user, item]], shape=(self.user_embeddings_.shape[0],
                                                           self.item_embeddings_.shape[0]))
        return self._attributions(int(users_[0]), int(items_[0]), mode)

    def _attributions(self, u, i, mode):
        if mode == "item":
            idx = self._by_user[self._user_ptr[u]:self._user_ptr[u + 1]]
            sim = self.item_embeddings_[self.items_[idx]] @ self.item_embeddings_[i]
        elif mode == "user":
            idx = self._by_item[self._item_ptr[i]:self._item_ptr[i + 1]]
            sim = self.user_embeddings_[self.users_[idx]] @ self.user_embeddings_[u]
        elif mode == "union":  # Definition 1: the item's raters (j = j' first), then the user's other ratings
            by_user, by_user_scores = self._attributions(u, i, "item")
            by_item, by_item_scores = self._attributions(u, i, "user")
            other = self.items_[by_user] != i
            return (np.concatenate([by_item, by_user[other]]),
                    np.concatenate([by_item_scores, by_user_scores[other]]))
        else:
            raise DataValidationError(f"mode must be 'item', 'user' or 'union' here, got {mode!r}.")
        return idx, self.global_importance_[idx] * sim

    def predict(self, X: Any) -> np.ndarray:
        """The model's prediction ``offset + <U~_u, V~_i>`` for (n, 2) pairs."""
        users, items = check_pairs(X, shape=(self.user_embeddings_.shape[0], self.item_embeddings_.shape[0]))
        return self.offset + np.einsum("ij,ij->i", self.user_embeddings_[users], self.item_embeddings_[items])

    def __call__(self, X: Any, *, mode: str = "item", max_memory: float | None = None) -> shap.Explanation:
        """Explanation of shape (n, n_interactions): players are the training interactions.

        ``mode``: "item" (the default: the user's own past ratings, the paper's Table 3 reading), "user"
        (other users' ratings of the item), "both" (the mean of the two; at a nuclear-norm optimum each sums
        to the prediction, so their mean does too) or "union" (Definition 1: every interaction that shares
        the user or the item with its own score, the ranking the paper's Table 2 deletes by; it is "both"
        times two except on the explained pair itself, and sums to about twice the prediction, so no
        efficiency is claimed).
        """
        start = time.perf_counter()
        if mode not in ("item", "user", "both", "union"):
            raise DataValidationError(f"mode must be 'item', 'user', 'both' or 'union', got {mode!r}.")
        users, items = check_pairs(X, shape=(self.user_embeddings_.shape[0], self.item_embeddings_.shape[0]))
        n, m = users.shape[0], self.users_.shape[0]
        check_memory((16.0 + (mode == "union")) * n * m, f"matrix-factorisation representer values of {n} x {m}",
                     max_memory=max_memory, instead="Use attributions(user, item), which returns only the nonzeros.")
        U, V = np.ascontiguousarray(self.user_embeddings_), np.ascontiguousarray(self.item_embeddings_)

        def kernel(use_item, use_user, weight):
            return mf_representer_values(users, items, self.users_, self.items_, self.global_importance_, U, V,
                                         self._user_ptr, self._by_user, self._item_ptr, self._by_item,
                                         use_item, use_user, weight)

        if mode == "union":
            # item-based scores, but the explained pair itself counts once (user-based), plus the user-based ones:
            # two (n, m) blocks and one mask at a time
            values = kernel(True, False, 1.0)
            values[(self.users_[None, :] == users[:, None]) & (self.items_[None, :] == items[:, None])] = 0.0
            values += kernel(False, True, 1.0)
        else:
            values = kernel(mode in ("item", "both"), mode in ("user", "both"), 0.5 if mode == "both" else 1.0)
        prediction = self.offset + np.einsum("ij,ij->i", self.user_embeddings_[users], self.item_embeddings_[items])
        return build_explanation(
            values, np.full(n, self.offset), feature_names=self.feature_names_,
            data=np.broadcast_to(self.ratings_, (n, m)),
            row_names=[f"({u}, {i})" for u, i in zip(users, items, strict=True)],
            explained=prediction if self.exact and mode != "union" else None, atol=1e-6, on_violation="warn",
            compute_time=time.perf_counter() - start,
        )
