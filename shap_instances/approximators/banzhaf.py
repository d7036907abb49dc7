"""Banzhaf values of a vector-valued game from uniform random coalitions: maximum sample reuse (Wang & Jia 2023)
and least squares on the membership indicators."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

import numpy as np

from ..exceptions import InvalidParameterError
from ..utils import RandomStateLike, check_memory, check_random_state
from ._budget import check_time_left
from ._result import ShapleyResult, standard_errors_of_means
from .sampling import random_coalitions

if TYPE_CHECKING:
    from ..games import Game

__all__ = ["MSRBanzhafApproximator", "RegressionBanzhafApproximator"]


def _sample_count(n_samples: int | None, max_evals: int | None, n: int) -> int:
    """Coalitions to sample: ``n_samples``, else ``max_evals - 2`` (v(empty) and v(all) cost two), else
    ``max(64, 4n)``."""
    return n_samples or (max(2, max_evals - 2) if max_evals else max(64, 4 * n))


class MSRBanzhafApproximator:
    """Banzhaf values by maximum sample reuse: each uniform random coalition updates every player.

    Every player is in a sampled coalition with probability 1/2, independently of the others, so the mean value
    of the sampled coalitions that contain ``i`` minus the mean of those that lack it is an unbiased estimate of
    ``phi_i = 2^-(n-1) sum_S (v(S + i) - v(S))``; each evaluation is used by all ``n`` players, where a
    permutation or a pair of coalitions serves one. Standard errors: ``sqrt(var_in / n_in + var_out / n_out)``.

    Parameters
    ----------
    n_samples : int, optional
        Coalitions sampled (default ``max_evals - 2``, else ``max(64, 4n)``); v(empty) and v(all) cost two more.
    max_evals : int, optional
    random_state : int, Generator or None
    batch_size : int, default=256

    Examples
    --------
    >>> import numpy as np
    >>> from shap_instances.games import FunctionGame
    >>> from shap_instances.approximators import MSRBanzhafApproximator
    >>> game = FunctionGame(lambda m: m @ np.arange(1.0, 5.0), 4)
    >>> r = MSRBanzhafApproximator(2000, random_state=0).estimate(game)
    >>> bool(np.all(np.abs(r.values.ravel() - [1, 2, 3, 4]) < 4 * r.standard_errors.ravel() + 1e-9))
    True
    """

    def __init__(self, n_samples: int | None = None, max_evals: int | None = None,
                 random_state: RandomStateLike = None, batch_size: int = 256) -> None:
        self.n_samples = n_samples
        self.max_evals = max_evals
        self.random_state = random_state
        self.batch_size = batch_size

    def estimate(self, game: Game) -> ShapleyResult:
        """Banzhaf values of every player of ``game``, with standard errors."""
        n, d = game.n_players, game.n_outputs
        k = _sample_count(self.n_samples, self.max_evals, n)
        rng, start, started = check_random_state(self.random_state), game.n_evaluations, time.perf_counter()
        count_in, sums, squares = np.zeros(n), np.zeros((2, n, d)), np.zeros((2, n, d))
        all_sum, all_squares, shift = np.zeros(d), np.zeros(d), None
        for begin in range(0, k, self.batch_size):
            masks = random_coalitions(rng, min(self.batch_size, k - begin), n)
            values = game(masks)
            shift = values[0].copy() if shift is None else shift  # centred sums: no cancellation
            values = values - shift
            count_in += masks.sum(axis=0)
            sums[0] += masks.T @ values
            squares[0] += masks.T @ values**2
            all_sum += values.sum(axis=0)
            all_squares += (values**2).sum(axis=0)
            if begin == 0 and len(masks) < k:
                check_time_left(started, len(masks), k, "sampled coalitions", "pass a smaller max_evals")
        sums[1], squares[1] = all_sum - sums[0], all_squares - squares[0]
        counts = np.stack([count_in, k - count_in])[:, :, None]
        with np.errstate(divide="ignore", invalid="ignore"):
            values = sums[0] / counts[0] - sums[1] / counts[1]
        errors = np.sqrt(sum(standard_errors_of_means(sums[j], squares[j], counts[j]) ** 2 for j in range(2)))
        result = ShapleyResult(values, game.empty_value, game.full_value, standard_errors=errors,
                               n_evaluations=game.n_evaluations - start, info={"n_samples": k})
        return result.of_semivalue("msr", "banzhaf", False)


class RegressionBanzhafApproximator:
    """Banzhaf values as least-squares coefficients: ``v(S) ~ b + sum_j w_j [j in S]`` on uniform coalitions.

    Under uniform coalitions the indicators ``x_j = [j in S]`` are independent with variance 1/4, so the population
    least-squares coefficient of ``x_i`` is ``4 Cov(v, x_i) = E[v | i in S] - E[v | i not in S]``, the Banzhaf value
    (the Banzhaf value is the best additive approximation of a game, Hammer & Holzman 1992). Fitted on sampled
    coalitions the coefficients are consistent (bias of order 1/m) with variance about ``4 s^2 / m``, ``s^2`` the
    variance of what the additive fit leaves, where MSR's is ``4 Var(v) / m``: the gain is ``1 / (1 - R^2)`` of the
    additive fit. Standard errors: the heteroscedasticity-robust (HC0) sandwich. Needs more samples than players
    (at least ``2 (n + 1)``); costs ``O(m n^2)`` arithmetic beside the evaluations.

    Parameters
    ----------
    n_samples : int, optional
        Coalitions sampled (default ``max_evals - 2``, else ``max(64, 4n)``).
    max_evals : int, optional
    random_state : int, Generator or None
        Seed of the sampled coalitions.

    Examples
    --------
    >>> import numpy as np
    >>> from shap_instances.games import FunctionGame
    >>> from shap_instances.approximators import RegressionBanzhafApproximator
    >>> game = FunctionGame(lambda m: m @ np.arange(1.0, 5.0), 4)       # additive: recovered exactly
    >>> np.round(RegressionBanzhafApproximator(40, random_state=0).estimate(game).values.ravel(), 9).tolist()
    [1.0, 2.0, 3.0, 4.0]
    """

    def __init__(self, n_samples: int | None = None, max_evals: int | None = None,
                 random_state: RandomStateLike = None) -> None:
        self.n_samples = n_samples
        self.max_evals = max_evals
        self.random_state = random_state

    def estimate(self, game: Game) -> ShapleyResult:
        """Banzhaf values of every player of ``game``, with standard errors."""
        n = game.n_players
        k = _sample_count(self.n_samples, self.max_evals, n)
        if k < 2 * (n + 1):
            raise InvalidParameterError(f"the regression approximator of Banzhaf values needs at least 2 (n + 1) = "
                                        f"{2 * (n + 1)} sampled coalitions for {n} players, got {k}; use "
                                        f"approximator='msr' below that.")
        check_memory(25.0 * k * (n + 1), f"the least-squares Banzhaf design of {k:,} coalitions of {n} players",
                     instead="Pass a smaller max_evals, or approximator='msr', whose memory does not grow with it.")
        rng, start = check_random_state(self.random_state), game.n_evaluations
        masks = random_coalitions(rng, k, n)
        values = np.asarray(game(masks), dtype=np.float64)
        design = np.column_stack([np.ones(k), masks])
        gram = design.T @ design
        coefficients = np.linalg.solve(gram, design.T @ values)  # (n + 1, d)
        residuals = values - design @ coefficients
        spread = np.linalg.solve(gram, design.T)  # (n + 1, k): the coefficients' weights on the samples
        errors = np.sqrt(spread[1:] ** 2 @ residuals**2)
        result = ShapleyResult(coefficients[1:], game.empty_value, game.full_value, standard_errors=errors,
                               n_evaluations=game.n_evaluations - start,
                               info={"n_samples": k, "r2": _r2(values, residuals)})
        return result.of_semivalue("regression", "banzhaf", False)


def _r2(values: np.ndarray, residuals: np.ndarray) -> float:
    """Share of the variance of the sampled values explained by the additive fit (first output)."""
    total = float(np.var(values[:, 0]))
    return 1.0 - float(np.var(residuals[:, 0])) / total if total > 0 else 1.0
