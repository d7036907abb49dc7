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

from ..games import Game, fast_path_for
from ..utils import RandomStateLike, check_random_state
from ._result import ShapleyResult
from .control_variate import FirstOrderGame, LabelShareGame, _CoMoments, first_order_game, label_share_game
from .sampling import random_permutations

__all__ = ["PlaceStratifiedApproximator", "cuts_walks"]

#: The last place up to which :class:`LabelShareGame` is a candidate control (its stratum means cost O(place^2);
#: beyond a few hundred rows the first-order game explains more of a logistic game).
SHARE_PLACES = 256
#: Control games whose prefix values along the first places of an order cost O(places): a draw walks those only.
CONTROL_GAMES = (FirstOrderGame, LabelShareGame)


class PlaceStratifiedApproximator:
    """Shapley values stratified by the place each player joins at, with a Neyman allocation of the budget.

    The places ``0 .. n-1`` are cut into strata ``[lo, hi)`` (default: ``[0, 1), [1, 2), [2, 4), [4, 8), ...``).
    A draw of stratum h is the first ``hi`` places of a uniformly random order, evaluated on its first ``hi``
    prefixes (``hi + 1`` evaluations; games whose fast path walks a prefix, such as the ridge and logistic ones,
    stop there, other cheap games walk a whole order and the budget counts ``n_players + 1`` for them:
    :func:`cuts_walks`; the logistic path also starts there, with a cold fit on the first ``lo`` rows, and games
    evaluated as masks evaluate only prefixes ``lo`` to ``hi``: the budget still charges ``hi + 1``); it gives every
    player joining at a place in ``[lo, hi)`` its marginal contribution and every other player 0, an unbiased
    draw of ``E[x_i 1{place in h}]``, whose sum over the strata is ``phi_i``. Every stratum first gets ``pilot``
    draws; the rest of the budget goes to the strata in proportion to ``S_h / sqrt(c_h)`` (Neyman), with ``S_h``
    the pilot's standard deviation (summed over players and outputs) and ``c_h`` the evaluations of a draw.

    With a control game, each stratum's draws are corrected by the control's contributions along the same orders,
    with one coefficient per stratum and output pooled over the players, and the control's exact stratum means
    (:meth:`FirstOrderGame.place_values`). ``control="auto"`` offers each stratum the candidates the game has:
    :func:`first_order_game` (ridge, least squares, l2 logistic regression) and, for a binary l2 logistic
    regression, :func:`label_share_game` (strata up to place :data:`SHARE_PLACES`); each stratum keeps the one
    whose corrected pilot draws vary least. The first-order game is poor on a few rows and good beyond; the share of
    label 1 is what a few rows' logistic fit mostly follows (on diabetes split at its median it explains 78% of the
    variance of the draws at places 2 to 8, the first-order game 2% to 24%).

    *Efficiency and standard errors.* Strata are independent and draws within a stratum i.i.d., so a player's
    variance is ``V_i = sum_h s_ih^2 / N_h`` (``s_ih^2`` of the control-variate residuals). The gap to efficiency
    (``info["efficiency_gap"]``) is shared in proportion to ``V_i``, so the values add up exactly; the standard
    error is that of this projection, ``sqrt(V_i (1 - w_i))`` with ``w_i = V_i / sum_j V_j``, scaled by
    ``t_nu(0.975) / 1.96`` (``nu``: Welch-Satterthwaite over the strata, each counting the draws that placed the
    player there, less one) so that 1.96 of them make a 95% interval at small budgets too. The pilot draws are part
    of the estimate; the allocation, the coefficients and the efficiency weights depend on the same draws: each
    biases the estimate by O(1 / N_h), below its standard error.

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
        The control game (with ``prefix_values`` and ``place_values(start, stop)``) of every stratum, None for
        none, or ``"auto"``: each stratum's choice among the game's candidates (above).
    random_state : None, int, numpy.random.Generator, numpy.random.BitGenerator or numpy.random.RandomState
        As :class:`PermutationApproximator`'s.
    max_time : float, optional
        Seconds after which no more draws start: the draws beyond the pilot come in rounds over all strata (8, or
        one per 16 permutations' worth of evaluations, at most 4,096), so a cut run keeps the allocation's
        proportions (``info["stopped_by"] == "max_time"``, ``converged`` False).

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
                 control: Any = "auto", random_state: RandomStateLike = None,
                 max_time: float | None = None) -> None:
        self.n_permutations, self.boundaries, self.pilot = n_permutations, boundaries, pilot
        self.control, self.random_state, self.max_time = control, random_state, max_time

    def _strata(self, m: int) -> list[tuple[int, int]]:
        if self.boundaries is None:
            cuts = [0] + [2**k for k in range(m.bit_length()) if 2**k < m] + [m]
        else:
            cuts = [int(b) for b in self.boundaries]
            if cuts[0] != 0 or cuts[-1] != m or np.any(np.diff(cuts) <= 0):
                raise ValueError(f"boundaries must increase from 0 to the number of players ({m}), got "
                                 f"{self.boundaries!r}.")
        return list(zip(cuts[:-1], cuts[1:], strict=True))

    def pilot_permutations(self, n_players: int) -> int:
        """The budget, in permutations, that the pilot draws take on a game of ``n_players`` whose draws are cut
        short (:func:`cuts_walks`); ``n_permutations`` must be at least this.

        Examples
        --------
        >>> from shap_instances.approximators import PlaceStratifiedApproximator
        >>> PlaceStratifiedApproximator().pilot_permutations(1000)   # 8 draws of 11 strata, about 2 places each
        17
        """
        cost = sum(hi + 1 for _, hi in self._strata(n_players))
        return -(-int(self.pilot) * cost // (n_players + 1))

    def _controls(self, game: Game) -> list[Any]:
        """The candidate control games (none, the given one, or those of ``"auto"``)."""
        if self.control is None or isinstance(self.control, Game):
            return [] if self.control is None else [self.control]
        if self.control != "auto":
            raise ValueError(f"control must be 'auto', None or a Game, got {self.control!r}.")
        return [control for control in (first_order_game(game), label_share_game(game)) if control is not None]

    def estimate(self, game: Game) -> ShapleyResult:
        """Shapley values of ``game`` with standard errors (see the class docstring)."""
        m = game.n_players
        strata = [_Stratum(game, self._controls(game), lo, hi) for lo, hi in self._strata(m)]
        budget = int(self.n_permutations if self.n_permutations is not None else max(32, 2 * m)) * (m + 1)
        rng = check_random_state(self.random_state)
        started, evals = time.perf_counter(), game.n_evaluations
        stopped_by = _allocate(strata, self._pilot(strata, budget, rng), rng, started, self.max_time)
        values, parts = _combined(strata, m, game.n_outputs)
        empty, full, spent = game.empty_value, game.full_value, game.n_evaluations - evals
        gap = full - empty - values.sum(axis=0)
        variance = parts.sum(axis=0)
        weight = variance / np.where(variance.sum(axis=0) > 0, variance.sum(axis=0), np.inf)
        weight[:, variance.sum(axis=0) == 0] = 1.0 / m
        values += weight * gap  # efficiency restored, the gap shared in proportion to the variances
        errors = np.sqrt(variance * (1 - weight)) * _t_scale(parts, np.array([stratum.seen for stratum in strata]))
        used = [None if stratum.control is None else type(stratum.control).__name__ for stratum in strata]
        info = {"strata": [[stratum.lo, stratum.hi] for stratum in strata],
                "draws": [stratum.sums.units for stratum in strata],
                "control": ", ".join(sorted({name for name in used if name})) or None, "controls": used,
                "seconds": time.perf_counter() - started, "n_permutations": int(round(spent / (m + 1))),
                "stopped_by": stopped_by, "efficiency_gap": float(np.max(np.abs(gap)))}
        return ShapleyResult(values, empty, full, standard_errors=errors, n_evaluations=spent,
                             approximator="place-stratified", converged=stopped_by is None, info=info)

    def _pilot(self, strata: list[_Stratum], budget: int, rng: np.random.Generator) -> np.ndarray:
        """Draw ``pilot`` draws of each stratum and choose its control; returns the draws the rest of ``budget``
        allots to each stratum (Neyman: in proportion to its spread over the square root of its cost)."""
        pilot = int(self.pilot)
        costs = np.array([stratum.cost for stratum in strata], dtype=float)  # evaluations a draw
        if pilot < 2 or pilot * costs.sum() > budget:
            raise ValueError(f"the budget ({budget} evaluations) must cover pilot={self.pilot} (at least 2) draws of "
                             f"each of the {len(strata)} strata ({int(pilot * costs.sum())} evaluations); raise "
                             "n_permutations or lower pilot.")
        for stratum in strata:
            stratum.draw(pilot, rng)
            stratum.choose()
        spread = np.array([np.sqrt(stratum.residual_variance().sum()) for stratum in strata])
        share = spread / np.sqrt(costs)
        total = (budget - pilot * costs.sum()) / max(float((share * costs).sum()), 1e-300)
        return (share * total).astype(int) if share.sum() > 0 else np.zeros(len(strata), int)


def _combined(strata: list[_Stratum], m: int, d: int) -> tuple[np.ndarray, np.ndarray]:
    """The strata's control-corrected values summed, shape (m, d), and each stratum's variances (strata, m, d)."""
    values, parts = np.zeros((m, d)), np.zeros((len(strata), m, d))
    for h, stratum in enumerate(strata):
        control = stratum.control
        exact = control.place_values(stratum.lo, stratum.hi) if control is not None else np.zeros((m, d))
        part, errors, _ = stratum.moments().corrected(exact, "pooled")
        values += part
        parts[h] = errors**2
    return values, parts


def _allocate(strata: list[_Stratum], extra: np.ndarray, rng: np.random.Generator, started: float,
              max_time: float | None) -> str | None:
    """Draw ``extra[h]`` more draws of each stratum, in rounds over all strata so that a run cut by ``max_time``
    keeps the allocation's proportions: 8 rounds, or one per 16 permutations' worth of evaluations when that is more
    (at most 4,096), so that time is checked often on large games. Returns ``"max_time"`` when cut, else None."""
    m = strata[0].game.n_players
    evaluations = float(sum(k * stratum.cost for k, stratum in zip(extra, strata, strict=True)))
    slices = int(np.clip(evaluations / (16 * (m + 1)), 8, 4096)) if max_time is not None else 1
    done = np.zeros(len(strata), dtype=int)
    for step in range(1, slices + 1):
        if max_time is not None and time.perf_counter() - started > max_time:
            return "max_time"
        goal = extra * step // slices
        for stratum, k, before in zip(strata, goal, done, strict=True):
            stratum.draw(int(k - before), rng)
        done = goal
    return None


def _t_scale(parts: np.ndarray, seen: np.ndarray) -> np.ndarray:
    """``t_nu(0.975) / z(0.975)``, the factor that makes 1.96 standard errors a 95% interval, from the strata's
    variances ``parts`` (strata, players, outputs): ``nu`` is Welch-Satterthwaite's degrees of freedom over the
    strata, each with ``seen - 1`` (a player's draws in a stratum are mostly zeros: only the ``seen`` draws that
    place it there carry information about its contributions)."""
    total = parts.sum(axis=0)
    dof = np.maximum(seen - 1.0, 1.0)[:, :, None]
    nu = total**2 / np.maximum((parts**2 / dof).sum(axis=0), 1e-300)
    return np.where(total > 0, student_t.ppf(0.975, np.maximum(nu, 1.0)) / norm.ppf(0.975), 1.0)


class _Sums:
    """Per player and output, sums over draws of ``x``, ``c``, ``x^2``, ``c^2`` and ``x c``, updated only where a
    draw places a player (a draw of a stratum ``[lo, hi)`` touches ``hi - lo`` players, not all of them)."""

    def __init__(self, m: int, d: int) -> None:
        self.units = 0
        self.x, self.c, self.xx, self.cc, self.xc = (np.zeros((m, d)) for _ in range(5))

    def add(self, players: np.ndarray, x: np.ndarray, c: np.ndarray) -> None:
        """Add ``len(players)`` draws: ``players`` (k, w) with contributions ``x``, ``c`` (k, w, d)."""
        self.units += len(players)
        index, x, c = players.ravel(), x.reshape(-1, x.shape[-1]), c.reshape(-1, c.shape[-1])
        for total, term in ((self.x, x), (self.c, c), (self.xx, x * x), (self.cc, c * c), (self.xc, x * c)):
            np.add.at(total, index, term)

    def moments(self) -> _CoMoments:
        """The draws' means and centred sums, as :class:`_CoMoments` (the zeros of unplaced players included)."""
        out, n = _CoMoments(*self.x.shape), max(self.units, 1)
        out.units, out.mx, out.mc = self.units, self.x / n, self.c / n
        out.sxx = np.maximum(self.xx - self.x * out.mx, 0.0)
        out.scc = np.maximum(self.cc - self.c * out.mc, 0.0)
        out.sxc = self.xc - self.x * out.mc
        return out


class _Stratum:
    """The draws of one stratum of places ``[lo, hi)``: their sums, with each candidate control until
    :meth:`choose` keeps one, and how often each player was placed in it."""

    def __init__(self, game: Game, controls: list[Any], lo: int, hi: int) -> None:
        self.game, self.lo, self.hi = game, lo, hi
        self.controls = [c for c in controls if not isinstance(c, LabelShareGame) or hi <= SHARE_PLACES] or [None]
        self.cost = _walk(game, hi) + 1
        self.candidates = [_Sums(game.n_players, game.n_outputs) for _ in self.controls]
        self.seen = np.zeros(game.n_players)

    @property
    def control(self) -> Any:
        return self.controls[0]

    @property
    def sums(self) -> _Sums:
        return self.candidates[0]

    def moments(self) -> _CoMoments:
        return self.sums.moments()

    def residual_variance(self) -> np.ndarray:
        """Per player and output, the variance of one draw after the correction by the (first) control."""
        return _residual_variance(self.moments(), self.control)

    def choose(self) -> None:
        """Keep the candidate control whose corrected draws vary least (summed over players and outputs)."""
        spread = [_residual_variance(sums.moments(), control).sum()
                  for sums, control in zip(self.candidates, self.controls, strict=True)]
        best = int(np.argmin(spread))
        self.controls, self.candidates = [self.controls[best]], [self.candidates[best]]

    def draw(self, k: int, rng: np.random.Generator) -> None:
        """``k`` draws: random orders' first ``hi`` places; the contributions at places ``[lo, hi)``."""
        lo, hi, m = self.lo, self.hi, self.game.n_players
        batch = max(64, 16384 // (hi + 1))
        for start in range(0, k, batch):
            orders = random_permutations(rng, min(batch, k - start), m,
                                         first=hi if _walk(self.game, hi) == hi else m)
            x = np.diff(_prefix_values(self.game, orders, lo, hi), axis=1)
            for sums, control in zip(self.candidates, self.controls, strict=True):
                c = np.zeros_like(x) if control is None else np.diff(_prefix_values(control, orders, lo, hi), axis=1)
                sums.add(orders[:, lo:hi], x, c)
            self.seen += np.bincount(orders[:, lo:hi].ravel(), minlength=m)


def _residual_variance(stats: _CoMoments, control: Any) -> np.ndarray:
    """Per player and output, the variance of one draw after the pooled control-variate correction."""
    if control is None:
        return stats.sxx / max(stats.units - 1, 1)
    beta = stats.sxc.sum(axis=0) / np.maximum(stats.scc.sum(axis=0), 1e-300)
    return np.maximum(stats.sxx - 2 * beta * stats.sxc + beta**2 * stats.scc, 0.0) / max(stats.units - 1, 1)


def cuts_walks(model: Any) -> bool:
    """Whether a draw of :class:`PlaceStratifiedApproximator` on a residual game of ``model`` evaluates only the
    prefixes it needs: the model's refit shortcut walks the first places of an order only (ridge, least squares,
    l2 logistic regression) or there is none (each coalition is a refit). Where the shortcut walks whole orders
    (KNN, naive Bayes, ...) a draw costs a whole permutation and place strata lose to antithetic permutations.

    Examples
    --------
    >>> from sklearn.linear_model import Ridge
    >>> from sklearn.neighbors import KNeighborsRegressor
    >>> from shap_instances.approximators import cuts_walks
    >>> cuts_walks(Ridge()), cuts_walks(KNeighborsRegressor())
    (True, False)
    """
    path = fast_path_for(model)
    return path is None or getattr(path, "cuts_walks", False)


def _walk(game: Any, hi: int) -> int:
    """Prefixes a draw that needs the first ``hi`` evaluates (besides the empty one): ``hi`` where the game's path
    walks prefixes (the logistic and ridge paths, the control games) or evaluates coalitions one by one, every
    prefix for other cheap games (their fused paths walk the whole order)."""
    short = isinstance(game, CONTROL_GAMES) or getattr(getattr(game, "fast_path", None), "cuts_walks", False)
    return hi if short or not getattr(game, "cheap", False) else game.n_players


def _prefix_values(game: Any, orders: np.ndarray, lo: int, hi: int) -> np.ndarray:
    """Values of the prefixes of ``lo`` to ``hi`` players of each order, shape (k, hi + 1 - lo, n_outputs),
    walking as :func:`_walk` says: every prefix of a cheap game (``orders`` whole), a walk cut at ``hi`` (started
    at ``lo`` where the fast path ``starts_walks``: the logistic one), or the ``hi + 1 - lo`` coalitions as masks
    (``orders`` (k, >= hi): their first ``hi`` places are used)."""
    k, m = len(orders), game.n_players
    if orders.shape[1] == m and _walk(game, hi) == m:
        return game.prefix_values(orders)[:, lo:hi + 1]
    if getattr(getattr(game, "fast_path", None), "starts_walks", False):
        return game.prefix_values(orders[:, :hi], first=lo)
    if getattr(game, "cheap", False) or isinstance(game, CONTROL_GAMES):
        return game.prefix_values(orders[:, :hi])[:, lo:]
    place = np.full((k, m), m)
    np.put_along_axis(place, orders[:, :hi], np.arange(hi)[None, :], axis=1)
    masks = place[:, None, :] < np.arange(lo, hi + 1)[None, :, None]
    return game(masks.reshape(k * (hi + 1 - lo), m)).reshape(k, hi + 1 - lo, game.n_outputs)
