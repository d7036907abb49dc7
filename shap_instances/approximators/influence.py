"""Influence-function approximations of residual Shapley values for ridge (Liu & Barnard section 5).

Fitting ridge on a coalition S gives, through the influence function, the marginal contribution of every
member i of S at once: with ``H_S = Z_S^T Z_S + A`` (Z the design with a column of ones when there is an
intercept, A = alpha on the coefficients and 0 on the intercept) and ``e_i = y_i - f_S(x_i)``,

``v(S)_j - v(S - i)_j = f_S(x_j) - f_{S-i}(x_j)  ~=  z_j^T H_S^{-1} z_i e_i``.

This is the first-order (Newton) step of removing i; the exact leave-one-out change is the same quantity
divided by ``1 - z_i^T H_S^{-1} z_i`` (Sherman-Morrison), which the tests use as the reference. The sign:
a training row whose label lies above the fit (``e_i > 0``) pulls the predictions of similar rows up.
With an intercept, ``z_j^T H_S^{-1} z_i = 1/|S| + (x_j - m_S)^T (Xc^T Xc + alpha I)^{-1} (x_i - m_S)``,
``m_S`` the mean of S and Xc the rows of S centred by it (a pseudo-inverse when alpha = 0).

* **all-S**: ``phi_i = (1/n) sum_k mean_{S : |S| = k, i in S} [v(S) - v(S - i)]`` with each stratum's mean
  taken over sampled coalitions: each round draws, for every size k, a random permutation cut into blocks
  of k rows (the last block topped up with other rows), so every row is covered once per size and round,
  at ``sum_k ceil(n/k) ~ n ln n`` ridge fits per round. Singletons use the exact ``v({i}) - v(empty)``
  (the empty coalition is a convention, not a fit, so no influence function reaches it).
* **largest-S**: only S = all training rows, ``phi_i = v(N) - v(N - i)`` approximated by influence.

Neither sums to the residual. With ``efficiency="complete"`` (the default) the gap
``v(N) - v(empty) - sum_i phi_i`` of each explained row is shared equally among the n training rows, the
Euclidean projection onto the vectors that satisfy efficiency; ``info["raw_efficiency_gap"]`` reports
the largest gap before completion. ``efficiency="none"`` returns the raw approximation.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..exceptions import UnsupportedModelError
from ..utils import RandomStateLike, check_random_state
from ._result import ShapleyResult
from .sampling import random_permutations

if TYPE_CHECKING:
    from ..games import Game

__all__ = ["RidgeInfluenceApproximator", "ridge_influence"]


def _ridge_fit(X: np.ndarray, y: np.ndarray, alpha: float,
               fit_intercept: bool) -> tuple[np.ndarray, float | np.ndarray, np.ndarray | float, np.ndarray]:
    """Coefficients and the inverse (pseudo-inverse) of the penalised scatter of one fit, as scikit-learn's Ridge."""
    mean = X.mean(axis=0) if fit_intercept else np.zeros(X.shape[1])
    centred = X - mean
    scatter = centred.T @ centred + alpha * np.eye(X.shape[1])
    inverse = np.linalg.inv(scatter) if alpha > 0 else np.linalg.pinv(scatter, rcond=1e-12, hermitian=True)
    w = inverse @ (centred.T @ (y - y.mean() if fit_intercept else y))
    b = y.mean() - mean @ w if fit_intercept else 0.0
    return w, b, mean, inverse


def ridge_influence(X: np.ndarray, y: np.ndarray, X_eval: np.ndarray, alpha: float, fit_intercept: bool = True,
                    ones: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Influence estimates ``f_S(x_j) - f_{S-i}(x_j)`` for every row i of the fit on (X, y): shape (n_eval, |S|).

    Also returns the leverages ``z_i^T H_S^{-1} z_i`` (dividing by ``1 - leverage`` gives the exact change).
    ``ones`` (n_eval,) multiplies the intercept of each output (weighted sums of explained rows: ``W^T 1``).
    """
    w, b, mean, inverse = _ridge_fit(X, y, alpha, fit_intercept)
    errors = y - (X @ w + b)
    offset = 1.0 / len(y) if fit_intercept else 0.0
    ones = np.ones(len(X_eval)) if ones is None else ones
    kernel = offset * ones[:, None] + (X_eval - ones[:, None] * mean) @ inverse @ (X - mean).T
    leverage = offset + np.einsum("ip,pq,iq->i", X - mean, inverse, X - mean)
    return kernel * errors[None, :], leverage


class RidgeInfluenceApproximator:
    """All-S or largest-S influence approximation of the residual game of Ridge / LinearRegression.

    The game must describe its refits as a penalised least-squares problem: ``game.ridge_problem`` (a
    :class:`~shap_instances.games.RidgeProblem`, which :class:`~shap_instances.games.ResidualGame` provides for
    Ridge with ``alpha > 0`` and LinearRegression); :meth:`supports` checks it.

    Parameters
    ----------
    variant : {"all", "largest"}, default="all"
    n_rounds : int, default=1
        All-S: rounds of coalitions (each covers every row once per coalition size).
    efficiency : {"complete", "none"}, default="complete"
        Share each row's efficiency gap equally among the training rows, or leave it.
    random_state : None, int, numpy.random.Generator, numpy.random.BitGenerator or numpy.random.RandomState
        Seed of the all-S coalitions, read by :func:`shap_instances.utils.check_random_state` at every
        :meth:`estimate`: an int gives bitwise identical results on every call, a Generator advances;
        -1, a string or a float raise :class:`~shap_instances.exceptions.InvalidParameterError`.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import Ridge
    >>> from shap_instances.games import ResidualGame
    >>> from shap_instances.approximators.influence import RidgeInfluenceApproximator
    >>> rng = np.random.default_rng(0)
    >>> X, y = rng.normal(size=(8, 2)), rng.normal(size=8)
    >>> r = RidgeInfluenceApproximator("largest").estimate(ResidualGame(Ridge(), X, y))
    >>> r.values.shape, r.efficiency_gap() < 1e-12
    ((8, 8), True)
    """

    def __init__(self, variant: str = "all", *, n_rounds: int = 1, efficiency: str = "complete",
                 random_state: RandomStateLike = None) -> None:
        self.variant, self.n_rounds, self.efficiency, self.random_state = variant, n_rounds, efficiency, random_state

    @staticmethod
    def supports(game: Game) -> bool:
        """Whether ``game`` exposes the ridge problem of its refits (``game.ridge_problem`` is not None).

        Examples
        --------
        >>> import numpy as np
        >>> from sklearn.linear_model import Lasso, Ridge
        >>> from shap_instances.approximators import RidgeInfluenceApproximator
        >>> from shap_instances.games import ResidualGame
        >>> X, y = np.arange(12.0).reshape(6, 2), np.arange(6.0)
        >>> RidgeInfluenceApproximator.supports(ResidualGame(Ridge(), X, y)), RidgeInfluenceApproximator.supports(
        ...     ResidualGame(Lasso(), X, y))
        (True, False)
        """
        return getattr(game, "ridge_problem", None) is not None

    def estimate(self, game: Game) -> ShapleyResult:
        """Influence approximation of the Shapley values of ``game`` (efficiency completed unless "none")."""
        rng = check_random_state(self.random_state)
        problem = getattr(game, "ridge_problem", None)
        if problem is None:
            raise UnsupportedModelError(
                f"RidgeInfluenceApproximator needs the residual game of Ridge (scalar alpha > 0) or LinearRegression "
                f"(game.ridge_problem); {type(game).__name__} has none. Use ExactApproximator, "
                "PermutationApproximator or KernelApproximator."
            )
        X, y, X_eval, y_eval, alpha, fit_intercept, ones = problem
        ones = np.ones(len(X_eval)) if ones is None else ones
        n = len(y)
        empty, full = game.empty_value, game.full_value
        if self.variant == "largest" or n == 1:
            values = (ridge_influence(X, y, X_eval, alpha, fit_intercept, ones)[0] if n > 1
                      else full[:, None] - empty[:, None])
            n_fits = 1
        else:
            values, n_fits = self._all_subsets(X, y, X_eval, y_eval, empty, alpha, fit_intercept, ones, rng)
        gap = full - empty - values.sum(axis=1)
        if self.efficiency == "complete":
            values = values + gap[:, None] / n
        return ShapleyResult(values.T, empty, full, n_evaluations=n_fits, approximator=f"influence-{self.variant}",
                             info={"raw_efficiency_gap": float(np.max(np.abs(gap))), "n_fits": n_fits})

    def _all_subsets(self, X: np.ndarray, y: np.ndarray, X_eval: np.ndarray, y_eval: np.ndarray, empty: np.ndarray,
                     alpha: float, fit_intercept: bool, ones: np.ndarray,
                     rng: np.random.Generator) -> tuple[np.ndarray, int]:
        n, n_eval = len(y), len(X_eval)
        values = np.zeros((n_eval, n))
        # singletons: the exact v({i}) - v(empty)
        for i in range(n):
            w, b, _, _ = _ridge_fit(X[i:i + 1], y[i:i + 1], alpha, fit_intercept)
            values[:, i] = X_eval @ w + b * ones
        values -= (y_eval + empty)[:, None]
        n_fits = n
        for k in range(2, n + 1):
            total, count = np.zeros((n_eval, n)), np.zeros(n)
            for _ in range(self.n_rounds):
                order = random_permutations(rng, 1, n, by="shuffling")[0]
                for start in range(0, n, k):
                    block = order[start:start + k]
                    if len(block) < k:  # top up the last block with rows not in it
                        others = np.setdiff1d(order, block)
                        block = np.concatenate([block, rng.choice(others, k - len(block), replace=False)])
                    change, _ = ridge_influence(X[block], y[block], X_eval, alpha, fit_intercept, ones)
                    total[:, block] += change
                    count[block] += 1
                    n_fits += 1
            values += total / count[None, :]
        return values / n, n_fits
