"""Numba kernel of the matrix-factorisation representer: dense (explained x interactions) attributions.

For explained pair ``(u, i)`` row ``r``: item-based shares ``alpha_d <V~_{i_d}, V~_i>`` on the user's
interactions ``d`` (CSR slice ``by_user[user_ptr[u]:user_ptr[u + 1]]``) and user-based shares
``alpha_d <U~_{u_d}, U~_u>`` on the item's interactions, each multiplied by ``weight`` (1/2 for "both").
The caller validates every index; the kernel trusts its inputs.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..utils import JIT_OPTIONS

__all__ = ["mf_representer_values"]


@njit(**JIT_OPTIONS)
def _add_shares(out_row: np.ndarray, interactions: np.ndarray, partners: np.ndarray, embedding: np.ndarray,
                explained: int, alpha: np.ndarray, weight: float) -> None:
    """``out_row[d] += weight alpha_d <E_{partners[d]}, E_explained>`` for each interaction ``d`` given."""
    for d in interactions:
        s = 0.0
        for c in range(embedding.shape[1]):
            s += embedding[partners[d], c] * embedding[explained, c]
        out_row[d] += weight * alpha[d] * s


@njit(**JIT_OPTIONS)
def mf_representer_values(users: np.ndarray, items: np.ndarray, train_users: np.ndarray, train_items: np.ndarray,
                          alpha: np.ndarray, user_emb: np.ndarray, item_emb: np.ndarray, user_ptr: np.ndarray,
                          by_user: np.ndarray, item_ptr: np.ndarray, by_item: np.ndarray, use_item: bool,
                          use_user: bool, weight: float) -> np.ndarray:
    n = users.shape[0]
    out = np.zeros((n, alpha.shape[0]))
    for r in range(n):
        u = users[r]
        i = items[r]
        if use_item:  # the user's interactions, by the similarity of their items to item i
            _add_shares(out[r], by_user[user_ptr[u]:user_ptr[u + 1]], train_items, item_emb, i, alpha, weight)
        if use_user:  # the item's interactions, by the similarity of their users to user u
            _add_shares(out[r], by_item[item_ptr[i]:item_ptr[i + 1]], train_users, user_emb, u, alpha, weight)
    return out
