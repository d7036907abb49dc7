"""Fast influence analysis (FIA) for matrix factorisation (Cheng et al., 2019), the baseline of Tsai et al.'s Table 2.

Tsai et al. (2023, Section 6.3.1) describe FIA as "an approximation of the influence function for MF-based
models", made necessary because the full influence function "is not scalable". It is built here from that
description and from the structure that makes it cheap: the prediction ``f = mu + <p_u, q_i>`` at a pair
``(u, i)`` depends only on the ``2k`` parameters ``theta = (p_u, q_i)``, so the influence function is
evaluated with every other embedding held fixed, i.e. with the Hessian of the training objective restricted
to that ``2k x 2k`` block. Only the ratings of user ``u`` and of item ``i`` enter it:

* ``H_pp = sum_{j in I(u)} q_j q_j^T + alpha I``, ``H_qq = sum_{v in U(i)} p_v p_v^T + alpha I``,
* ``H_pq = q_i p_u^T - e_ui I`` if ``(u, i)`` is a training pair (``e`` the residual), else 0.

Removing a training rating ``z`` moves ``theta`` by about ``H^{-1} grad l_z`` (one Newton step on the
objective without ``z``), so the prediction moves by ``grad f^T H^{-1} grad l_z``; the score is its negative
(positive: removing ``z`` lowers the prediction), with ``grad f = (q_i, p_u)`` and ``grad l_z = -e_z q_j``
on ``p_u`` for ``z = (u, j)``, ``-e_z p_v`` on ``q_i`` for ``z = (v, i)``. Cost per explained pair:
``O(n' k^2 + k^3)``, ``n'`` the number of ratings of the user and the item.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from sklearn.utils.validation import check_is_fitted

from ..exceptions import DataValidationError
from ..utils import check_pairs

__all__ = ["fia_scores"]


def fia_scores(model: Any, X_train: ArrayLike, y_train: ArrayLike, X: ArrayLike) -> np.ndarray:
    """FIA importance of every training rating for each explained (user, item) pair.

    Parameters
    ----------
    model : fitted :class:`MatrixFactorization` (``user_factors_``, ``item_factors_``, ``mean_``, ``alpha``)
    X_train : array of shape (n_train, 2), the training (user, item) pairs
    y_train : array of shape (n_train,), the training ratings
    X : array of shape (n, 2), the explained pairs

    Returns
    -------
    ndarray of shape (n, n_train)
        Positive: removing the rating lowers the prediction. Only ratings that share the user or the
        item are nonzero.

    Examples
    --------
    >>> import numpy as np
    >>> from shap_instances.lowrank import MatrixFactorization, fia_scores
    >>> rng = np.random.default_rng(0)
    >>> pairs = np.argwhere(rng.random((20, 15)) < 0.6)
    >>> ratings = rng.normal(size=len(pairs))
    >>> mf = MatrixFactorization(n_components=2).fit(pairs, ratings)
    >>> fia_scores(mf, pairs, ratings, [[0, 1]]).shape[1] == len(pairs)
    True
    """
    check_is_fitted(model, "user_factors_")
    P, Q = model.user_factors_, model.item_factors_
    shape = (P.shape[0], Q.shape[0])
    users, items = check_pairs(X_train, name="X_train", shape=shape)
    qu, qi = check_pairs(X, shape=shape)
    y = np.asarray(y_train, dtype=np.float64).reshape(-1)
    if y.shape[0] != users.shape[0]:
        raise DataValidationError(f"y_train must hold {users.shape[0]} ratings, got shape {y.shape}.")
    e = y - model.predict(np.column_stack([users, items]))
    k, alpha = P.shape[1], float(model.alpha)
    eye = np.eye(k)
    out = np.zeros((qu.shape[0], users.shape[0]))
    for row, (u, i) in enumerate(zip(qu, qi, strict=True)):
        of_user, of_item = np.flatnonzero(users == u), np.flatnonzero(items == i)
        Qj, Pv = Q[items[of_user]], P[users[of_item]]
        H = np.zeros((2 * k, 2 * k))
        H[:k, :k] = Qj.T @ Qj + alpha * eye
        H[k:, k:] = Pv.T @ Pv + alpha * eye
        both = of_user[items[of_user] == i]
        if both.size:  # the explained pair is itself a training rating: the loss couples p_u and q_i
            H[:k, k:] = np.outer(Q[i], P[u]) - e[both[0]] * eye
            H[k:, :k] = H[:k, k:].T
        s = np.linalg.solve(H, np.concatenate([Q[i], P[u]]))
        out[row, of_user] += e[of_user] * (Qj @ s[:k])
        out[row, of_item] += e[of_item] * (Pv @ s[k:])
    return out
