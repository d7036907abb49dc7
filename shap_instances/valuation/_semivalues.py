"""Semivalues: the weight ``p(s)`` each one gives a marginal contribution made to a coalition of ``s`` others.

A semivalue of player ``i`` in a game ``v`` on ``n`` players is
``phi_i = sum_{S subset of N - i} p(|S|) (v(S + i) - v(S))`` with ``sum_s C(n-1, s) p(s) = 1``:

* Shapley: ``p(s) = 1 / (n C(n-1, s))`` (every size equally likely, then every set of that size);
* Banzhaf: ``p(s) = 2^-(n-1)`` (every set of the others equally likely);
* Beta Shapley (alpha, beta) of Kwon & Zou (2022): ``p(s) = B(s + beta, n - 1 - s + alpha) / B(alpha, beta)``
  (a beta-binomial law on the sizes; (1, 1) is Shapley, (16, 1) stresses small sets);
* leave-one-out: ``p(n - 1) = 1``, all other weights 0.

Only Shapley is efficient (the values add up to ``v(N) - v(empty)``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import gammaln

from ..exceptions import InvalidParameterError

__all__ = ["Semivalue", "SEMIVALUES", "check_semivalue"]


@dataclass(frozen=True)
class Semivalue:
    """A semivalue by name: ``"shapley"``, ``"banzhaf"``, ``"beta"`` (with ``alpha``, ``beta``) or ``"loo"``.

    Parameters
    ----------
    name : {"shapley", "banzhaf", "beta", "loo"}
    alpha, beta : float, default=1.0
        Beta Shapley's parameters (read only when ``name="beta"``; (1, 1) is Shapley).

    Examples
    --------
    >>> import numpy as np
    >>> from shap_instances.valuation import Semivalue
    >>> Semivalue("banzhaf").weights(3).tolist()
    [0.25, 0.25, 0.25]
    >>> bool(np.allclose(Semivalue("beta", alpha=1.0, beta=1.0).weights(3), Semivalue("shapley").weights(3)))
    True
    """

    name: str = "shapley"
    alpha: float = 1.0
    beta: float = 1.0

    @property
    def efficient(self) -> bool:
        """True for Shapley (and Beta(1, 1)): the only semivalue whose values add up to ``v(N) - v(empty)``."""
        return self.name == "shapley" or (self.name == "beta" and self.alpha == 1.0 and self.beta == 1.0)

    @property
    def label(self) -> str:
        """The semivalue's name, with its parameters for Beta Shapley."""
        return f"beta({self.alpha:g}, {self.beta:g})" if self.name == "beta" else self.name

    def log_weights(self, n_players: int) -> np.ndarray:
        """``log p(s)`` for ``s = 0 .. n_players - 1`` (``-inf`` where the weight is 0)."""
        n = int(n_players)
        s = np.arange(n, dtype=np.float64)
        log_binom = gammaln(n) - gammaln(s + 1) - gammaln(n - s)  # log C(n-1, s)
        if self.name == "shapley":
            return -np.log(n) - log_binom
        if self.name == "banzhaf":
            return np.full(n, -(n - 1) * np.log(2.0))
        if self.name == "beta":
            return self._beta_log_weights(n)
        out = np.full(n, -np.inf)  # leave-one-out
        out[-1] = 0.0
        return out

    def _beta_log_weights(self, n: int) -> np.ndarray:
        """``log B(s + beta, n - 1 - s + alpha) / B(alpha, beta)`` as rising factorials,
        ``(beta)_s (alpha)_(n-1-s) / (alpha + beta)_(n-1)``: sums of ``n`` logarithms, exact to rounding for any
        parameters (a difference of ``betaln`` loses every digit from alpha, beta ~ 1e15); NaN where
        ``alpha + beta + n`` overflows."""
        a, b = self.alpha, self.beta
        if not np.isfinite(a + b + n):
            return np.full(n, np.nan)
        steps = np.arange(n - 1, dtype=np.float64)
        rising_b = np.concatenate([[0.0], np.cumsum(np.log(b + steps))])  # log (beta)_s, s = 0..n-1
        rising_a = np.concatenate([[0.0], np.cumsum(np.log(a + steps))])
        return rising_b + rising_a[::-1] - np.sum(np.log(a + b + steps))

    def weights(self, n_players: int) -> np.ndarray:
        """``p(s)``, the weight of one coalition of ``s`` other players, for ``s = 0 .. n_players - 1``."""
        return np.exp(self.log_weights(n_players))

    def size_weights(self, n_players: int) -> np.ndarray:
        """``n C(n-1, s) p(s)``: the weight of a marginal contribution at position ``s`` of a random permutation.

        A uniform permutation puts ``i`` after ``s`` others with probability ``1/n`` and those others are then a
        uniform set of size ``s``, so the mean of these weighted contributions is the semivalue (1 for Shapley).
        """
        n = int(n_players)
        s = np.arange(n, dtype=np.float64)
        log_binom = gammaln(n) - gammaln(s + 1) - gammaln(n - s)
        return np.exp(np.log(n) + log_binom + self.log_weights(n))

    def coalition_weights(self, n_players: int) -> tuple[np.ndarray, np.ndarray]:
        """Weights by coalition size ``t = 0..n`` of the sum over coalitions (as ``shapley_weights``).

        ``phi_i = sum_{T contains i} w_in[|T|] v(T) - sum_{S lacks i} w_out[|S|] v(S)``, with
        ``w_in[t] = p(t - 1)`` and ``w_out[s] = p(s)`` (zero where undefined).
        """
        p = self.weights(n_players)
        w_in, w_out = np.zeros(n_players + 1), np.zeros(n_players + 1)
        w_in[1:], w_out[:-1] = p, p
        return w_in, w_out


#: The names :func:`check_semivalue` accepts.
SEMIVALUES = ("shapley", "banzhaf", "beta", "loo")


def check_semivalue(semivalue: str | Semivalue, alpha: float = 1.0, beta: float = 1.0) -> Semivalue:
    """A :class:`Semivalue` from a name (with Beta's parameters) or an instance; anything else is refused.

    Examples
    --------
    >>> from shap_instances.valuation import check_semivalue
    >>> check_semivalue("beta", alpha=16, beta=1).label
    'beta(16, 1)'
    """
    if isinstance(semivalue, Semivalue):
        candidate = semivalue
    elif isinstance(semivalue, str) and semivalue in SEMIVALUES:
        candidate = Semivalue(semivalue, float(alpha), float(beta))
    else:
        raise InvalidParameterError(f"semivalue must be one of {list(SEMIVALUES)} or a Semivalue, got {semivalue!r}.")
    if candidate.name not in SEMIVALUES:
        raise InvalidParameterError(f"Semivalue name must be one of {list(SEMIVALUES)}, got {candidate.name!r}.")
    if not (np.isfinite(candidate.alpha) and np.isfinite(candidate.beta) and candidate.alpha > 0
            and candidate.beta > 0):
        raise InvalidParameterError(f"Beta Shapley needs alpha > 0 and beta > 0, got ({candidate.alpha}, "
                                    f"{candidate.beta}).")
    return candidate
