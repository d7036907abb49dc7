"""Estimators of any semivalue of a vector-valued game, each an ``Approximator`` (``estimate(game)``).

They call the game through ``game(masks)`` and ``game.prefix_values(permutations)`` only, so every exact refit
shortcut of :class:`~shap_instances.games.ResidualGame` (ridge, OLS, mean, KNN) serves every semivalue.

* :func:`semivalue_approximator` picks one by name;
* :class:`ExactApproximator` (``coalition_weights=semivalue.coalition_weights``): every coalition, small games;
* :class:`WeightedPermutationApproximator`: random permutations, each marginal contribution weighted by
  ``n C(n-1, s) p(s)`` (for Shapley it is :class:`~shap_instances.approximators.PermutationApproximator`, with
  its fused kernels, antithetic pairs and truncation);
* :class:`MSRBanzhafApproximator`: maximum sample reuse (Wang & Jia 2023): uniform random coalitions, each one
  updating every player, ``phi_i = mean v(S | i in S) - mean v(S | i not in S)``;
* :class:`RegressionBanzhafApproximator`: the same uniform coalitions, Banzhaf values read as the least-squares
  coefficients of ``v`` on the membership indicators (lower error than MSR where the game is close to additive);
* :class:`LeaveOneOutApproximator`: ``v(N) - v(N - i)``, ``n + 2`` evaluations.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from ..approximators import (
    DEFAULT_TIME_LIMIT,
    ExactApproximator,
    PermutationApproximator,
    ShapleyResult,
    format_seconds,
    random_coalitions,
    random_permutations,
)
from ..exceptions import BudgetError, InvalidParameterError
from ..utils import RandomStateLike, check_finite_result, check_memory, check_min_evals, check_random_state
from ._semivalues import Semivalue

if TYPE_CHECKING:
    from ..games import Game

__all__ = ["LeaveOneOutApproximator", "MSRBanzhafApproximator", "RegressionBanzhafApproximator",
           "WeightedPermutationApproximator", "semivalue_approximator", "ESTIMATORS"]

#: The estimators by name, as ``semivalue_approximator(estimator=...)`` accepts them.
ESTIMATORS = ("auto", "exact", "permutation", "msr", "regression", "loo")

_BATCH_FLOATS = 1 << 22  # floats of prefix values held per batch

#: The fewest utility evaluations each estimator spends on ``n`` players (one permutation, two coalitions and
#: v(empty), v(all), every coalition...): a smaller ``max_evals`` is refused with this number.
MIN_EVALS: dict[str, Callable[[int], int]] = {
    "exact": lambda n: 2**n,
    "loo": lambda n: n + 2,
    "permutation": lambda n: n + 1,
    "msr": lambda n: 4,
    "regression": lambda n: 2 * (n + 1) + 2,
}


def check_time_left(started: float, done: int, total: int, what: str, instead: str) -> None:
    """Refuse a run whose first ``done`` of ``total`` items, begun at ``started`` (``time.perf_counter``), put the
    rest above :data:`~shap_instances.approximators.DEFAULT_TIME_LIMIT` (24 hours), with the estimate."""
    spent = time.perf_counter() - started
    estimate = spent / max(done, 1) * (total - done)
    if estimate > DEFAULT_TIME_LIMIT:
        raise BudgetError(f"refused before the rest of the work: the {total - done:,} remaining {what} are estimated "
                          f"to need about {format_seconds(estimate)} ({format_seconds(spent)} for the first {done:,}), "
                          f"above the limit of {format_seconds(DEFAULT_TIME_LIMIT)}; {instead}.")


def _tagged(result: ShapleyResult, semivalue: Semivalue, name: str) -> ShapleyResult:
    """The result, with what its values are and what they add up to in ``info``."""
    result.approximator = name
    result.info.update(semivalue=semivalue.label, efficient=semivalue.efficient,
                       adds_up_to="v(all) - v(empty)" if semivalue.efficient else None)
    return result


def _standard_errors(total: np.ndarray, squares: np.ndarray, count: np.ndarray) -> np.ndarray:
    """Standard error of a mean from the sums of the samples and of their squares (count > 1, else inf)."""
    count = np.asarray(count, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        mean = total / count
        variance = np.maximum(squares / count - mean**2, 0.0) * count / (count - 1)
        return np.where(count > 1, np.sqrt(variance / count), np.inf)


class WeightedPermutationApproximator:
    """Any semivalue from random permutations: contributions at position ``s`` weighted by ``n C(n-1, s) p(s)``.

    A uniform permutation puts player ``i`` after a uniform set of ``s`` others, ``s`` uniform on ``0..n-1``, so
    the weighted contribution is an unbiased sample of the semivalue; one permutation gives one sample for every
    player (standard errors from the spread of the samples). For Shapley the weights are all 1 and
    :class:`~shap_instances.approximators.PermutationApproximator` is used instead (same estimator, plus
    antithetic pairs, truncation and checkpoints).

    Parameters
    ----------
    semivalue : Semivalue
    n_permutations : int, optional
        Default: as many as ``max_evals`` allows (one permutation costs ``n + 1`` evaluations), else ``max(32, 2n)``.
    max_evals : int, optional
    random_state : int, Generator or None

    Examples
    --------
    >>> import numpy as np
    >>> from shap_instances.games import FunctionGame
    >>> from shap_instances.valuation import Semivalue, WeightedPermutationApproximator
    >>> game = FunctionGame(lambda m: m @ np.arange(1.0, 5.0), 4)          # additive: every semivalue is the weight
    >>> r = WeightedPermutationApproximator(Semivalue("banzhaf"), 2000, random_state=0).estimate(game)
    >>> bool(np.all(np.abs(r.values.ravel() - [1, 2, 3, 4]) < 4 * r.standard_errors.ravel())), r.info["efficient"]
    (True, False)
    """

    def __init__(self, semivalue: Semivalue, n_permutations: int | None = None, max_evals: int | None = None,
                 random_state: RandomStateLike = None) -> None:
        self.semivalue = semivalue
        self.n_permutations = n_permutations
        self.max_evals = max_evals
        self.random_state = random_state

    def estimate(self, game: Game) -> ShapleyResult:
        """The semivalue of every player of ``game``, with standard errors."""
        n, d = game.n_players, game.n_outputs
        k = self.n_permutations or (max(1, self.max_evals // (n + 1)) if self.max_evals else max(32, 2 * n))
        if self.semivalue.efficient:
            approximator = PermutationApproximator(n_permutations=k, antithetic=False, random_state=self.random_state,
                                                   silent=True)
            return _tagged(approximator.estimate(game), self.semivalue, "permutation")
        rng, weights = check_random_state(self.random_state), self.semivalue.size_weights(n)
        total, squares = np.zeros((n, d)), np.zeros((n, d))
        start, done, rows, started = game.n_evaluations, 0, np.arange(n), time.perf_counter()
        empty = full = np.zeros(d)
        while done < k:
            batch = min(k - done, max(1, _BATCH_FLOATS // ((n + 1) * d)), k if done else 8)  # a first batch timed
            permutations = random_permutations(rng, batch, n, by="shuffling")
            prefixes = game.prefix_values(permutations)
            empty, full = prefixes[0, 0], prefixes[0, -1]
            contributions = np.diff(prefixes, axis=1) * weights[None, :, None]  # (batch, n, d) by position
            for r in range(batch):
                sample = np.empty((n, d))
                sample[permutations[r]] = contributions[r, rows]
                total += sample
                squares += sample**2
            if done == 0 and batch < k:
                check_time_left(started, batch, k, "permutations", "pass a smaller max_evals")
            done += batch
        result = ShapleyResult(total / k, np.asarray(empty, dtype=np.float64), np.asarray(full, dtype=np.float64),
                               standard_errors=_standard_errors(total, squares, np.full((n, 1), k)),
                               n_evaluations=game.n_evaluations - start, info={"n_permutations": k})
        return _tagged(result, self.semivalue, "weighted permutation")


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
    >>> from shap_instances.valuation import MSRBanzhafApproximator
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
        k = self.n_samples or (max(2, self.max_evals - 2) if self.max_evals else max(64, 4 * n))
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
        errors = np.sqrt(sum(_standard_errors(sums[j], squares[j], counts[j]) ** 2 for j in range(2)))
        result = ShapleyResult(values, game.empty_value, game.full_value, standard_errors=errors,
                               n_evaluations=game.n_evaluations - start, info={"n_samples": k})
        return _tagged(result, Semivalue("banzhaf"), "msr")


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
    >>> from shap_instances.valuation import RegressionBanzhafApproximator
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
        k = self.n_samples or (max(2, self.max_evals - 2) if self.max_evals else max(64, 4 * n))
        if k < 2 * (n + 1):
            raise InvalidParameterError(f"the regression estimator of Banzhaf values needs at least 2 (n + 1) = "
                                        f"{2 * (n + 1)} sampled coalitions for {n} players, got {k}; use "
                                        f"estimator='msr' below that.")
        check_memory(25.0 * k * (n + 1), f"the least-squares Banzhaf design of {k:,} coalitions of {n} players",
                     instead="Pass a smaller max_evals, or estimator='msr', whose memory does not grow with it.")
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
        return _tagged(result, Semivalue("banzhaf"), "regression")


def _r2(values: np.ndarray, residuals: np.ndarray) -> float:
    """Share of the variance of the sampled values explained by the additive fit (first output)."""
    total = float(np.var(values[:, 0]))
    return 1.0 - float(np.var(residuals[:, 0])) / total if total > 0 else 1.0


class LeaveOneOutApproximator:
    """Leave-one-out values ``v(N) - v(N - i)``: exact, ``n + 2`` evaluations (with v(empty)).

    Examples
    --------
    >>> import numpy as np
    >>> from shap_instances.games import FunctionGame
    >>> from shap_instances.valuation import LeaveOneOutApproximator
    >>> game = FunctionGame(lambda m: np.minimum(m.sum(1), 2.0), 3)
    >>> LeaveOneOutApproximator().estimate(game).values.ravel().tolist()
    [0.0, 0.0, 0.0]
    """

    def estimate(self, game: Game) -> ShapleyResult:
        """Leave-one-out values of every player of ``game``."""
        n, start = game.n_players, game.n_evaluations
        values = game(np.vstack([np.zeros((1, n), dtype=bool), np.ones((1, n), dtype=bool), ~np.eye(n, dtype=bool)]))
        result = ShapleyResult(values[1] - values[2:], values[0], values[1],
                               n_evaluations=game.n_evaluations - start)
        return _tagged(result, Semivalue("loo"), "loo")


class _ExactSemivalue:
    """Exact enumeration of any semivalue (``ExactApproximator`` with the semivalue's coalition weights)."""

    def __init__(self, semivalue: Semivalue) -> None:
        self.semivalue = semivalue

    def estimate(self, game: Game) -> ShapleyResult:
        exact = ExactApproximator(silent=True, coalition_weights=self.semivalue.coalition_weights)
        return _tagged(exact.estimate(game), self.semivalue, "exact")


def semivalue_approximator(semivalue: Semivalue, estimator: str = "auto", *, max_evals: int | None = None,
                           random_state: RandomStateLike = None, n_players: int | None = None) -> object:
    """The estimator of ``semivalue`` named by ``estimator`` (an object with ``estimate(game)``).

    ``"auto"``: leave-one-out exactly; every coalition for games of at most 10 players (``n_players``); MSR for
    Banzhaf; weighted permutations otherwise. ``"msr"`` and ``"regression"`` serve Banzhaf only, ``"loo"``
    leave-one-out only.

    Examples
    --------
    >>> from shap_instances.valuation import Semivalue, semivalue_approximator
    >>> type(semivalue_approximator(Semivalue("banzhaf"), n_players=100)).__name__
    'MSRBanzhafApproximator'
    """
    if estimator not in ESTIMATORS:
        raise InvalidParameterError(f"estimator must be one of {list(ESTIMATORS)}, got {estimator!r}.")
    if estimator == "auto":
        enumerable = n_players is not None and n_players <= 10 and (max_evals is None or max_evals >= 2**n_players)
        estimator = ("loo" if semivalue.name == "loo" else "exact" if enumerable
                     else "msr" if semivalue.name == "banzhaf" else "permutation")
    if n_players is not None:
        if estimator == "exact" and n_players > ExactApproximator().max_players:  # refused below, with the reason
            return _ExactSemivalue(semivalue)
        check_min_evals(max_evals, MIN_EVALS[estimator](n_players),
                        f"estimator={estimator!r} of {semivalue.label} values of {n_players} players")
        check_finite_result(semivalue.size_weights(n_players), f"the {semivalue.label} weights of {n_players} "
                            "players", why="Beta Shapley's weights overflow at these parameters; pass alpha and beta "
                            "of a size the Beta function can be evaluated at (Kwon & Zou use 16 and 1)")
    if estimator in ("msr", "regression", "loo") and semivalue.name != ("loo" if estimator == "loo" else "banzhaf"):
        raise InvalidParameterError(f"estimator={estimator!r} estimates "
                                    f"{'leave-one-out' if estimator == 'loo' else 'Banzhaf'} values only, not "
                                    f"{semivalue.label}; use 'permutation' or 'exact'.")
    if estimator == "exact":
        return _ExactSemivalue(semivalue)
    if estimator == "loo":
        return LeaveOneOutApproximator()
    if estimator == "msr":
        return MSRBanzhafApproximator(max_evals=max_evals, random_state=random_state)
    if estimator == "regression":
        return RegressionBanzhafApproximator(max_evals=max_evals, random_state=random_state)
    return WeightedPermutationApproximator(semivalue, max_evals=max_evals, random_state=random_state)
