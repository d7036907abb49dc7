"""Shapley and Shapley-kernel weights as functions of coalition size."""

from __future__ import annotations

import numpy as np
from scipy.special import gammaln

__all__ = ["shapley_weights", "kernel_weights"]


def shapley_weights(n_players: int) -> tuple[np.ndarray, np.ndarray]:
    """Weights of the exact Shapley sum written over coalitions, by size ``s = 0..M``.

    ``phi_i = sum_{S contains i} w_in[|S|] v(S) - sum_{S lacks i} w_out[|S|] v(S)`` with
    ``w_in[s] = (s-1)! (M-s)! / M!`` and ``w_out[s] = s! (M-s-1)! / M!`` (zero where undefined).

    Examples
    --------
    >>> from shap_instances.approximators import shapley_weights
    >>> w_in, w_out = shapley_weights(2)
    >>> w_in.tolist(), w_out.tolist()
    ([0.0, 0.5, 0.5], [0.5, 0.5, 0.0])
    """
    m = n_players
    s = np.arange(m + 1, dtype=np.float64)
    log_m = gammaln(m + 1)
    w_in = np.zeros(m + 1)
    w_out = np.zeros(m + 1)
    w_in[1:] = np.exp(gammaln(s[1:]) + gammaln(m - s[1:] + 1) - log_m)
    w_out[:-1] = np.exp(gammaln(s[:-1] + 1) + gammaln(m - s[:-1]) - log_m)
    return w_in, w_out


def kernel_weights(n_players: int) -> np.ndarray:
    """Shapley-kernel weight ``(M-1) / (C(M, s) s (M-s))`` of one coalition of size ``s = 1..M-1``.

    Returned by size, index ``s`` (entries 0 and M, infinite in theory, are 0 here: the kernel estimator
    enforces those two coalitions as exact constraints).

    Examples
    --------
    >>> from shap_instances.approximators import kernel_weights
    >>> kernel_weights(3).round(4).tolist()
    [0.0, 0.3333, 0.3333, 0.0]
    """
    m = n_players
    s = np.arange(1, m, dtype=np.float64)
    log_binom = gammaln(m + 1) - gammaln(s + 1) - gammaln(m - s + 1)
    weights = np.zeros(m + 1)
    weights[1:m] = (m - 1) / (np.exp(log_binom) * s * (m - s))
    return weights
