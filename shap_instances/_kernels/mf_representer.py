"""Numba kernel of the matrix-factorisation representer: dense (explained x interactions) attributions.

For explained pair ``(u, i)`` row ``r``: item-based shares ``alpha_d <V~_{i_d}, V~_i>`` on the user's
interactions ``d`` (CSR slice ``by_user[user_ptr[u]:user_ptr[u + 1]]``) and user-based shares
``alpha_d <U~_{u_d}, U~_u>`` on the item's interactions, each multiplied by ``weight`` (1/2 for "both").
The caller validates every index; the kernel trusts its inputs.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ._config import JIT_OPTIONS

__all__ = ["mf_representer_values"]


@njit(**JIT_OPTIONS)
def mf_representer_values(users: np.ndarray, items: np.ndarray, train_users: np.ndarray, train_items: np.ndarray,
                          alpha: np.ndarray, user_emb: np.ndarray, item_emb: np.ndarray, user_ptr: np.ndarray,
                          by_user: np.ndarray, item_ptr: np.ndarray, by_item: np.ndarray, use_item: bool,
                          use_user: bool, weight: float) -> np.ndarray:
    n = users.shape[0]
    m = alpha.shape[0]
    k = user_emb.shape[1]
    out = np.zeros((n, m))
    for r in range(n):
        u = users[r]
        i = items[r]
        if use_item:
            for pos in range(user_ptr[u], user_ptr[u + 1]):
                d = by_user[pos]
                j = train_items[d]
                s = 0.0
                for c in range(k):
                    s += item_emb[j, c] * item_emb[i, c]
                out[r, d] += weight * alpha[d] * s
        if use_user:
            for pos in range(item_ptr[i], item_ptr[i + 1]):
                d = by_item[pos]
                v = train_users[d]
                s = 0.0
                for c in range(k):
                    s += user_emb[v, c] * user_emb[u, c]
                out[r, d] += weight * alpha[d] * s
    return out
