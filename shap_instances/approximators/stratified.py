"""Shapley values stratified by the place a player joins at: short prefixes for the early places, a Neyman
allocation of the budget, and the first-order control variate within each stratum.

``phi_i = sum_h E[x_i(pi) 1{place_i(pi) in h}]`` for any partition of the places 0..n-1 into strata h, and a
draw for stratum ``h = [lo, hi)`` needs only the first ``hi`` prefixes of a random order (``hi + 1``
evaluations). In data games the early places carry most of the variance (a coalition of a few rows fits
anything) and cost least, so they get most of the draws (docs/engine.md, "Variance reduction").
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
from scipy.stats import norm
from scipy.stats import t as student_t

from ..games import Game
from ..utils import RandomStateLike, check_random_state
from ._result import ShapleyResult
from .control_variate import FirstOrderGame, _CoMoments, first_order_game

__all__ = ["PlaceStratifiedApproximator"]


class PlaceStratifiedApproximator:
    """Shapley values stratified by the place each player joins at, with a Neyman allocation of the budget.

    The places ``0 .. n-1`` are cut into strata ``[lo, hi)`` (default: ``[0, 1), [1, 2), [2, 4), [4, 8), ...``).
    A draw of stratum h is a uniformly random order, evaluated on its first ``hi`` prefixes (``hi + 1``
    evaluations; games whose fast path walks a prefix, such as the logistic one, stop there, other cheap games
    walk the whole order and the budget counts ``n_players + 1`` for them); it gives every
    player joining at a place in ``[lo, hi)`` its marginal contribution and every other player 0, an unbiased
    draw of ``E[x_i 1{place in h}]``, whose sum over the strata is ``phi_i``. Every stratum first gets ``pilot``
    draws; the rest of the budget goes to the strata in proportion to ``S_h / sqrt(c_h)`` (Neyman), with ``S_h``
    the pilot's standard deviation (summed over players and outputs) and ``c_h`` the evaluations of a draw.

    With a control game (``control="auto"``: :func:`first_order_game` where the game has one), each stratum's
    draws are corrected by the control's contributions along the same orders, with one coefficient per stratum
    and output pooled over the players (the first-order game is poor on a few rows and good beyond: the
    coefficient adapts to each stratum), and the control's exact stratum means
    (:meth:`FirstOrderGame.place_values`).

    *Standard errors.* Strata are independent and draws within a stratum i.i.d., so the variance is
    ``sum_h s_h^2 / N_h`` (``s_h^2`` of the control-variate residuals, ``N_h - 1`` degrees of freedom). The
    pilot draws are part of the estimate; the allocation depends on them, and the coefficients are estimated
    from the same draws: both bias the estimate by O(1 / N_h), below its standard error. Efficiency does not hold
    exactly (``info["efficiency_gap"]``).

    Parameters
    ----------
    n_permutations : int, optional
        The budget, in evaluations of whole permutations: ``n_permutations * (n_players + 1)`` evaluations.
        Default ``max(32, 2 * n_players)``.
    boundaries : sequence of int, optional
        Increasing places from 0 to ``n_players`` that cut the strata. Default: 0, 1, 2, 4, 8, ... and
        ``n_players``.
    pilot : int, default=8
        Draws per stratum before the allocation (at least 2).
    control : "auto", None or Game, default="auto"
        The control game (with ``prefix_values`` and ``place_values(start, stop)``), or None for none.
    random_state : None, int, numpy.random.Generator, numpy.random.BitGenerator or numpy.random.RandomState
        As :class:`PermutationApproximator`'s.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import Ridge
    >>> from shap_instances.approximators import ExactApproximator, PlaceStratifiedApproximator
    >>> from shap_instances.games import ResidualGame
    >>> rng = np.random.default_rng(0)
    >>> X, y = rng.normal(size=(10, 2)), rng.normal(size=10)
    >>> game = ResidualGame(Ridge(alpha=1.0), X, y).aggregate(np.full(10, 0.1))
    >>> r = PlaceStratifiedApproximator(100, random_state=0).estimate(game)
    >>> exact = ExactApproximator().estimate(game).values
    >>> bool(np.all(np.abs(r.values - exact) < 4 * r.standard_errors)), r.info["strata"][:3]
    (True, [[0, 1], [1, 2], [2, 4]])
    """

    def __init__(self, n_permutations: int | None = None, *, boundaries: Any = None, pilot: int = 8,
                 control: Any = "auto", random_state: RandomStateLike = None) -> None:
        self.n_permutations, self.boundaries, self.pilot = n_permutations, boundaries, pilot
        self.control, self.random_state = control, random_state

    def _strata(self, m: int) -> list[tuple[int, int]]:
        if self.boundaries is None:
            cuts = [0] + [2**k for k in range(m.bit_length()) if 2**k < m] + [m]
        else:
            cuts = [int(b) for b in self.boundaries]
            if cuts[0] != 0 or cuts[-1] != m or np.any(np.diff(cuts) <= 0):
                raise ValueError(f"boundaries must increase from 0 to the number of players ({m}), got "
                                 f"{self.boundaries!r}.")
        return list(zip(cuts[:-1], cuts[1:], strict=True))

    def _control(self, game: Game) -> Any:
        if self.control is None or isinstance(self.control, Game):
            return self.control
        if self.control != "auto":
            raise ValueError(f"control must be 'auto', None or a Game, got {self.control!r}.")
        return first_order_game(game)

    def estimate(self, game: Game) -> ShapleyResult:
        """Shapley values of ``game`` with standard errors (see the class docstring)."""
        m, d = game.n_players, game.n_outputs
        strata, control = self._strata(m), self._control(game)
        budget = int(self.n_permutations if self.n_permutations is not None else max(32, 2 * m)) * (m + 1)
        pilot = int(self.pilot)
        costs = np.array([_walk(game, hi) + 1 for _, hi in strata], dtype=float)  # evaluations a draw
        if pilot < 2 or pilot * costs.sum() > budget:
            raise ValueError(f"the budget ({budget} evaluations) must cover pilot={self.pilot} (at least 2) draws of "
                             f"each of the {len(strata)} strata ({int(pilot * costs.sum())} evaluations); raise "
                             "n_permutations or lower pilot.")
        rng = check_random_state(self.random_state)
        started, evals = time.perf_counter(), game.n_evaluations
        moments = [_CoMoments(m, d) for _ in strata]
        seen = np.zeros((len(strata), m))  # draws that placed each player in each stratum
        for h, (stratum, stats) in enumerate(zip(strata, moments, strict=True)):
            seen[h] += _draw(game, control, stratum, pilot, rng, stats)
        spread = np.array([np.sqrt(_residual_variance(stats, control).sum()) for stats in moments])
        share = spread / np.sqrt(costs)
        total = (budget - pilot * costs.sum()) / max(float((share * costs).sum()), 1e-300)
        extra = (share * total).astype(int) if share.sum() > 0 else np.zeros(len(strata), int)
        for h, (stratum, stats, k) in enumerate(zip(strata, moments, extra, strict=True)):
            seen[h] += _draw(game, control, stratum, int(k), rng, stats)
        values, parts = np.zeros((m, d)), np.zeros((len(strata), m, d))
        for h, ((lo, hi), stats) in enumerate(zip(strata, moments, strict=True)):
            exact = control.place_values(lo, hi) if control is not None else np.zeros((m, d))
            part, errors, _ = stats.corrected(exact, "pooled")
            values += part
            parts[h] = errors**2
        empty, full = game.empty_value, game.full_value
        info = {"strata": [[lo, hi] for lo, hi in strata], "draws": [stats.units for stats in moments],
                "control": None if control is None else type(control).__name__,
                "seconds": time.perf_counter() - started,
                "efficiency_gap": float(np.max(np.abs(values.sum(axis=0) - (full - empty))))}
        return ShapleyResult(values, empty, full, standard_errors=_t_scaled(parts, seen),
                             n_evaluations=game.n_evaluations - evals, approximator="place-stratified", info=info)


def _t_scaled(parts: np.ndarray, seen: np.ndarray) -> np.ndarray:
    """Standard errors from the strata's variances ``parts`` (strata, players, outputs), scaled by
    ``t_nu(0.975) / z(0.975)`` so that 1.96 of them make a 95% interval: ``nu`` is Welch-Satterthwaite's degrees of
    freedom over the strata, each with ``seen - 1`` (a player's draws in a stratum are mostly zeros: only the
    ``seen`` draws that place it there carry information about its contributions)."""
    total = parts.sum(axis=0)
    dof = np.maximum(seen - 1.0, 1.0)[:, :, None]
    nu = total**2 / np.maximum((parts**2 / dof).sum(axis=0), 1e-300)
    scale = np.where(total > 0, student_t.ppf(0.975, np.maximum(nu, 1.0)) / norm.ppf(0.975), 1.0)
    return np.sqrt(total) * scale


def _residual_variance(stats: _CoMoments, control: Any) -> np.ndarray:
    """Per player and output, the variance of one draw after the pooled control-variate correction."""
    if control is None:
        return stats.sxx / max(stats.units - 1, 1)
    beta = stats.sxc.sum(axis=0) / np.maximum(stats.scc.sum(axis=0), 1e-300)
    return np.maximum(stats.sxx - 2 * beta * stats.sxc + beta**2 * stats.scc, 0.0) / max(stats.units - 1, 1)


def _draw(game: Game, control: Any, stratum: tuple[int, int], k: int, rng: np.random.Generator,
          stats: _CoMoments, batch: int = 64) -> np.ndarray:
    """``k`` draws of ``stratum`` into ``stats``: contributions at places in the stratum, 0 elsewhere. Returns
    how many of the draws placed each player in the stratum."""
    lo, hi = stratum
    m = game.n_players
    seen = np.zeros(m)
    for start in range(0, k, batch):
        orders = np.argsort(rng.random((min(batch, k - start), m)), axis=1)
        x = _placed(_prefix_values(game, orders, hi), orders, lo, hi)
        c = np.zeros_like(x) if control is None else _placed(_prefix_values(control, orders, hi), orders, lo, hi)
        stats.add(x, c)
        np.add.at(seen, orders[:, lo:hi].ravel(), 1.0)
    return seen


def _placed(prefixes: np.ndarray, orders: np.ndarray, lo: int, hi: int) -> np.ndarray:
    """Contributions (k, n_players, n_outputs) of the players at places ``[lo, hi)``, 0 for the others."""
    k, m = orders.shape
    steps = np.zeros((k, m, prefixes.shape[2]))  # by place
    steps[:, lo:hi] = np.diff(np.asarray(prefixes, dtype=np.float64)[:, lo:hi + 1], axis=1)
    out = np.empty_like(steps)  # by player
    np.put_along_axis(out, orders[:, :, None], steps, axis=1)
    return out


def _walk(game: Any, hi: int) -> int:
    """Prefixes a draw that needs the first ``hi`` evaluates (besides the empty one): ``hi`` where the game's path
    walks prefixes (the logistic path, the first-order game) or evaluates coalitions one by one, every prefix for
    other cheap games (their fused paths walk the whole order)."""
    short = isinstance(game, FirstOrderGame) or type(getattr(game, "fast_path", None)).__name__ == "LogisticPath"
    return hi if short or not getattr(game, "cheap", False) else game.n_players


def _prefix_values(game: Any, orders: np.ndarray, hi: int) -> np.ndarray:
    """Values of the first ``hi + 1`` prefixes of each order, shape (k, hi + 1, n_outputs), walking as
    :func:`_walk` says: a walk cut at ``hi``, every prefix of a cheap game, or the ``hi + 1`` coalitions as masks."""
    k, m = orders.shape
    if _walk(game, hi) == m:
        return game.prefix_values(orders)[:, :hi + 1]
    if getattr(game, "cheap", False) or isinstance(game, FirstOrderGame):
        return game.prefix_values(orders[:, :hi])
    ranks = np.argsort(orders, axis=1)
    masks = ranks[:, None, :] < np.arange(hi + 1)[None, :, None]
    return game(masks.reshape(k * (hi + 1), m)).reshape(k, hi + 1, game.n_outputs)
