"""Permutation sampling with a control variate: the first-order game, whose Shapley values are known exactly.

For a model fitted by a smooth penalised loss (ridge, least squares, l2 logistic regression), one Newton step
from the fit on all rows N, with the Hessian of a coalition S replaced by its share of the full one,
``H_S ~ (|S| / n) H``, gives the first-order game

``g(S)_j = v(N)_j + mean_{i in S} a_ij - mean_{i in N} a_ij`` (S non-empty), ``g(empty) = v(empty)``,

``a_ij = n s_j z_j^T H^{-1} z_i r_i``: ``z`` the design rows (a leading 1 with an intercept), ``r_i`` the
residual ``y_i - f_N(x_i)`` (the row's gradient of the loss at the full fit), ``s_j`` the slope of the link at
explained row j (1 for ridge, ``p_j (1 - p_j)`` for the logistic probability). It is a *mean game*: a player
joining a coalition of size ``k >= 1`` adds ``(a_i - mean_S a) / (k + 1)``, whose average over the coalitions
of size k is ``(a_i - abar_{-i}) / (k + 1)`` (``abar_{-i}`` the mean of the other players' ``a``), so

``phi_i(g) = [a_i - c + (H_n - 1)(a_i - abar_{-i})] / n``,  ``c = v(N) - mean_N a - v(empty)``,

``H_n`` the n-th harmonic number (the closed form of :class:`~shap_instances.linear.MeanPath` with one target
per output). Along the same permutations, the estimator ``xbar - beta (cbar - phi(g))`` is the control-variate
estimate (docs/engine.md, "Variance reduction").
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import numpy as np
from scipy.special import gammaln

from ..exceptions import UnsupportedModelError
from ..games import Game
from ..utils import RandomStateLike, check_random_state
from ._result import ShapleyResult
from .sampling import random_permutations

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

__all__ = ["ControlVariateApproximator", "FirstOrderGame", "LabelShareGame", "control_game", "first_order_game",
           "label_share_game"]


class FirstOrderGame(Game):
    """The mean game ``g(S) = full + mean_{i in S} pieces_i - mean_N pieces`` (``g(empty) = empty``).

    Its Shapley values are in closed form (:meth:`closed_form_values`) and its prefix values cost O(n) per
    permutation and output, so it serves as the control variate of :class:`ControlVariateApproximator`; any game
    can have one built from its own first-order pieces.

    Parameters
    ----------
    pieces : array-like of shape (n_players, n_outputs)
        ``a_i``: each player's piece of every output.
    empty, full : array-like of shape (n_outputs,)
        g(empty) and g(all players).

    Examples
    --------
    >>> import numpy as np
    >>> from shap_instances.approximators import ExactApproximator, FirstOrderGame
    >>> game = FirstOrderGame(np.array([[1.0], [2.0], [6.0]]), empty=[0.0], full=[3.0])
    >>> game(np.array([[True, True, False]])).tolist()     # 3 + 1.5 - 3
    [[1.5]]
    >>> bool(np.allclose(game.closed_form_values(), ExactApproximator().estimate(game).values))
    True
    """

    @property
    def closed_form(self) -> str:
        """``"first-order"``: :meth:`closed_form_values` are exact (ClosedFormApproximator takes the game)."""
        return "first-order"

    def __init__(self, pieces: ArrayLike, empty: ArrayLike, full: ArrayLike) -> None:
        self.pieces = np.atleast_2d(np.asarray(pieces, dtype=np.float64))
        m, d = self.pieces.shape
        super().__init__(m, d)
        self.empty = np.asarray(empty, dtype=np.float64).reshape(d)
        self.full = np.asarray(full, dtype=np.float64).reshape(d)
        self.offset = self.full - self.pieces.mean(axis=0)  # g(S) = offset + mean_S pieces

    def value_function(self, coalitions: np.ndarray) -> np.ndarray:
        size = coalitions.sum(axis=1)[:, None]
        means = (coalitions @ self.pieces) / np.maximum(size, 1)
        return np.where(size > 0, self.offset + means, self.empty)

    def prefix_values(self, permutations: np.ndarray, first: int = 0) -> np.ndarray:
        permutations = np.asarray(permutations, dtype=np.intp)
        k, m = permutations.shape
        self.n_evaluations += k * (m + 1)
        out = np.empty((k, m + 1, self.n_outputs))
        out[:, 0] = self.empty
        np.cumsum(self.pieces[permutations], axis=1, out=out[:, 1:])
        out[:, 1:] /= np.arange(1, m + 1)[None, :, None]
        out[:, 1:] += self.offset
        return out[:, first:]

    def closed_form_values(self) -> np.ndarray:
        """Exact Shapley values, shape (n_players, n_outputs): the formula of the module docstring."""
        return self.place_values(0, self.n_players)

    def place_values(self, start: int, stop: int) -> np.ndarray:
        """Each player's expected marginal contribution times the chance it joins at a place in
        ``[start, stop)``: ``(1 / n) sum_{k = start}^{stop - 1} E[g(S_k + i) - g(S_k)]`` over uniformly random
        coalitions ``S_k`` of k other players, shape (n_players, n_outputs). Over ``[0, n)`` these are the Shapley
        values; the control variate of :class:`PlaceStratifiedApproximator` needs them stratum by stratum.

        Examples
        --------
        >>> import numpy as np
        >>> from shap_instances.approximators import FirstOrderGame
        >>> game = FirstOrderGame(np.array([[1.0], [2.0], [6.0]]), empty=[0.0], full=[3.0])
        >>> bool(np.allclose(game.place_values(0, 1) + game.place_values(1, 3), game.closed_form_values()))
        True
        """
        m = self.n_players
        joins_empty = (self.pieces + self.offset - self.empty) if start == 0 else 0.0  # g({i}) - g(empty)
        if m == 1:
            return np.broadcast_to(joins_empty, self.pieces.shape) / m
        others = (self.pieces.sum(axis=0) - self.pieces) / (m - 1)
        weight = np.sum(1.0 / np.arange(max(start, 1) + 1, stop + 1))  # sum over k >= 1 of 1 / (k + 1)
        return (joins_empty + weight * (self.pieces - others)) / m


class LabelShareGame(Game):
    """The residual game of the model that predicts the share of label 1 among its rows, as a control.

    ``g(S) = share_S * scale - shift`` where S holds both labels, ``share_S`` the share of label 1 in S, and
    ``g(S) = empty`` otherwise (one label or none: the coalitions that the residual game of a classifier gives
    v(empty)). For the residuals ``p_S(x_j) - y_j`` of a classifier, ``scale`` is 1 and ``shift`` the explained
    rows' targets (an aggregate game with weights W: ``1^T W`` and ``y^T W``). On a few rows an l2 logistic fit is
    close to this model (the penalty holds the slopes near 0, the intercept carries the share), which is where the
    first-order game is poor: :class:`PlaceStratifiedApproximator` offers it to its early strata.

    Its values depend on a coalition through its size and its count of label 1 only, so a player's expected
    marginal contribution at place k is a sum over the hypergeometric law of that count
    (:meth:`place_values`, O(k) a place).

    Parameters
    ----------
    labels : array-like of shape (n_players,)
        0/1 labels of the players.
    scale, shift, empty : array-like of shape (n_outputs,)

    Examples
    --------
    >>> import numpy as np
    >>> from shap_instances.approximators import ExactApproximator, LabelShareGame
    >>> game = LabelShareGame([0, 1, 1, 0], scale=[1.0], shift=[0.5], empty=[0.0])
    >>> game(np.array([[True, True, True, False], [True, False, False, True]])).ravel().tolist()
    [0.16666666666666663, 0.0]
    >>> bool(np.allclose(game.place_values(0, 4), ExactApproximator().estimate(game).values))
    True
    """

    def __init__(self, labels: ArrayLike, scale: ArrayLike, shift: ArrayLike, empty: ArrayLike) -> None:
        self.labels = (np.asarray(labels) == 1).astype(np.float64)
        self.scale = np.atleast_1d(np.asarray(scale, dtype=np.float64))
        super().__init__(len(self.labels), len(self.scale))
        self.shift = np.asarray(shift, dtype=np.float64).reshape(self.n_outputs)
        self.empty = np.asarray(empty, dtype=np.float64).reshape(self.n_outputs)

    def _values(self, ones: np.ndarray, size: np.ndarray) -> np.ndarray:
        """``g`` of coalitions with ``ones`` players of label 1 among ``size`` (any shape), outputs last."""
        both = ((ones > 0) & (ones < size))[..., None]
        share = (ones / np.maximum(size, 1))[..., None]
        return np.where(both, share * self.scale - self.shift, self.empty)

    def value_function(self, coalitions: np.ndarray) -> np.ndarray:
        return self._values(coalitions @ self.labels, coalitions.sum(axis=1))

    def prefix_values(self, permutations: np.ndarray, first: int = 0) -> np.ndarray:
        permutations = np.asarray(permutations, dtype=np.intp)
        k, m = permutations.shape
        self.n_evaluations += k * (m + 1)
        ones = np.zeros((k, m + 1))
        np.cumsum(self.labels[permutations], axis=1, out=ones[:, 1:])
        return self._values(ones, np.broadcast_to(np.arange(m + 1), (k, m + 1)))[:, first:]

    def place_values(self, start: int, stop: int) -> np.ndarray:
        """Each player's expected marginal contribution times the chance it joins at a place in ``[start, stop)``,
        as :meth:`FirstOrderGame.place_values`, shape (n_players, n_outputs); O(stop^2) in all."""
        m, total = self.n_players, int(self.labels.sum())
        size, ones = np.arange(start, stop)[:, None], np.arange(stop)[None, :]  # (places, counts): 0 beyond size
        by_label = np.zeros((2, self.n_outputs))
        for label in (0, 1):  # S: ``size`` of the other m - 1 players, holding ``ones`` of label 1
            law = _hypergeometric(ones, m - 1, total - label, size)
            change = self._values(ones + label, size + 1) - self._values(ones, size)
            by_label[label] = np.einsum("kc,kcd->d", law, change)
        return by_label[self.labels.astype(int)] / m

    def closed_form_values(self) -> np.ndarray:
        """Exact Shapley values (:meth:`place_values` over every place), shape (n_players, n_outputs)."""
        return self.place_values(0, self.n_players)


def _hypergeometric(ones: np.ndarray, population: int, marked: int, size: np.ndarray) -> np.ndarray:
    """``P(ones marked among size drawn)`` without replacement from ``population`` holding ``marked`` (scipy's
    ``hypergeom.pmf`` by log-binomials: 15 times faster on the grids of place strata), 0 outside the support."""
    def log_choose(n: Any, k: Any) -> np.ndarray:
        return np.asarray(gammaln(n + 1.0) - gammaln(k + 1.0) - gammaln(n - k + 1.0))

    rest = size - ones
    inside = (ones >= 0) & (ones <= marked) & (rest >= 0) & (rest <= population - marked)
    ones, rest = np.where(inside, ones, 0), np.where(inside, rest, 0)
    log = log_choose(marked, ones) + log_choose(population - marked, rest) - log_choose(population, ones + rest)
    return np.where(inside, np.exp(log), 0.0)


def label_share_game(game: Game) -> LabelShareGame | None:
    """The :class:`LabelShareGame` of a residual game of a binary l2 LogisticRegression (whose refit shortcut has
    ``label_shares``: :class:`~shap_instances.linear.LogisticPath`, labels
    0/1, aggregated or not), else None.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import LogisticRegression
    >>> from shap_instances.approximators import label_share_game
    >>> from shap_instances.games import ResidualGame
    >>> X, y = np.arange(8.0).reshape(-1, 1), np.array([0, 1] * 4)
    >>> control = label_share_game(ResidualGame(LogisticRegression(), X, y))
    >>> control.n_players, control.n_outputs
    (8, 8)
    """
    shares = _ask_path(game, "label_shares")
    if shares is None:
        return None
    labels, totals, targets = shares
    return LabelShareGame(labels, totals, targets, game.empty_value)


def first_order_game(game: Game) -> FirstOrderGame | None:
    """The first-order game of a residual game of Ridge, LinearRegression or l2 LogisticRegression, else None.

    Built from the fit on all rows (one solve of a ``P x P`` system and an ``n_eval x n`` kernel), so it costs
    about one refit; its value at all rows is the game's ``v(N)`` and at the empty coalition ``v(empty)``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import Lasso, Ridge
    >>> from shap_instances.approximators import first_order_game
    >>> from shap_instances.games import ResidualGame
    >>> rng = np.random.default_rng(0)
    >>> X, y = rng.normal(size=(20, 2)), rng.normal(size=20)
    >>> game = ResidualGame(Ridge(alpha=1.0), X, y)
    >>> control = first_order_game(game)
    >>> bool(np.allclose(control.full_value, game.full_value)), first_order_game(ResidualGame(Lasso(), X, y))
    (True, None)
    """
    problem = getattr(game, "ridge_problem", None)
    if problem is not None:
        X, y, X_eval, _, alpha, fit_intercept, ones = problem
        Z, ZE = _design(np.asarray(X, dtype=np.float64), fit_intercept), np.asarray(X_eval, dtype=np.float64)
        if fit_intercept:
            ZE = np.column_stack([np.ones(len(ZE)) if ones is None else ones, ZE])
        penalty = np.full(Z.shape[1], float(alpha))
        penalty[: int(fit_intercept)] = 0.0
        hessian = Z.T @ Z + np.diag(penalty)
        inverse = np.linalg.pinv(hessian, rcond=1e-12, hermitian=True)
        r = np.asarray(y, dtype=np.float64) - Z @ (inverse @ (Z.T @ y))
        pieces = len(r) * (Z @ inverse @ ZE.T) * r[:, None]  # (n, n_outputs)
    else:
        pieces = _ask_path(game, "first_order_pieces")
    if pieces is None:
        return None
    if not np.all(np.isfinite(pieces)):  # a fit that diverged (near-separable classes, no penalty): no control
        return None
    return FirstOrderGame(pieces, game.empty_value, game.full_value)


def control_game(game: Game) -> Game | None:
    """The default control game of :class:`ControlVariateApproximator`: the game with its refit shortcut's
    ``control_path()`` where it has one (the fixed-structure forest, ``refit="fixed_structure"``: the same forest
    with equal multiplicities, :meth:`~shap_instances.forest.FixedForestPath.equal_multiplicities`, plain leaf
    means, exact Shapley values in O(|M|) a leaf), else :func:`first_order_game` (ridge, least squares and binary
    l2 logistic residual games), else None.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.ensemble import RandomForestRegressor
    >>> from shap_instances.approximators import ExactApproximator, control_game
    >>> from shap_instances.games import ResidualGame
    >>> rng = np.random.default_rng(0)
    >>> X, y = rng.normal(size=(9, 2)), rng.normal(size=9)
    >>> forest = RandomForestRegressor(n_estimators=4, min_samples_leaf=3, random_state=0)
    >>> game = ResidualGame(forest, X, y, refit="fixed_structure")
    >>> control = control_game(game)     # every in-bag row counted once: a plain mean in each leaf
    >>> bool(np.allclose(control.closed_form_values(), ExactApproximator().estimate(control).values))
    True
    >>> bool(np.allclose(control.closed_form_values(), game.closed_form_values()))   # not the game itself
    False
    """
    control = _ask_path(game, "control_path")
    return first_order_game(game) if control is None else game.with_fast_path(control)  # type: ignore[attr-defined]


def _ask_path(game: Game, capability: str) -> Any:
    """What the game's refit shortcut answers to ``capability()`` (a method of the
    :class:`~shap_instances.games.FastPath` protocol: ``first_order_pieces``, ``label_shares``, ``control_path``),
    else None (no shortcut, or one without it)."""
    method = getattr(getattr(game, "fast_path", None), capability, None)
    return None if method is None else method()


def _design(X: np.ndarray, fit_intercept: bool) -> np.ndarray:
    return np.column_stack([np.ones(len(X)), X]) if fit_intercept else X


class ControlVariateApproximator:
    """Permutation sampling corrected by a control variate whose Shapley values are known exactly.

    Every sampling unit (a permutation, an antithetic pair, or a stratified unit: ``strata`` as in
    :class:`PermutationApproximator`) gives each player's mean marginal contribution ``x`` in the game and ``c``
    in the control game (by default :func:`first_order_game`) along the same permutations. The estimate is
    ``xbar - beta (cbar - phi_control)`` with ``beta = cov(x, c) / var(c)`` estimated from the same units:
    one coefficient per output pooled over the players (``coefficient="pooled"``, the default) or one per player
    and output (``"player"``: it adapts to each player, but with few units its noise can cost more than it
    gains: docs/benchmarks.md, "Variance reduction at equal wall time"). Estimating ``beta`` from the same draws
    biases the estimate by O(1 / units) (a covariance of ``beta`` with ``cbar``), below the standard error's
    O(1 / sqrt(units)); the standard errors
    are those of the regression residuals ``x - beta c`` (``units - 2`` degrees of freedom per player, ``units - 1``
    pooled). The pooled coefficient keeps efficiency exactly (``cbar`` and ``phi_control`` both sum to
    ``v(N) - v(empty)``); per player it does not, and ``info["efficiency_gap"]`` is the largest gap.

    Parameters
    ----------
    n_permutations : int, optional
        Permutations (rounded up to whole units). Default ``max(32, 2 * n_players)``.
    antithetic : bool, default=True
        Pair each permutation with its reverse.
    strata : int, default=1
        Cyclic shifts per unit (:func:`~shap_instances.approximators.random_permutations`).
    coefficient : {"pooled", "player"}, default="pooled"
    control : Game, optional
        A game with ``closed_form_values()`` and ``prefix_values`` and the same players and outputs; default
        :func:`first_order_game` of the game (refused, ``UnsupportedModelError``, when it has none).
    batch_size : int, optional
        Units per batch (default: as many as fit in about 64 MB of prefix values).
    max_time : float, optional
        Seconds: stop after the batch that crosses it (``info["stopped_by"] = "max_time"``).
    random_state : None, int, numpy.random.Generator, numpy.random.BitGenerator or numpy.random.RandomState
        As :class:`PermutationApproximator`'s.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import Ridge
    >>> from shap_instances.approximators import ControlVariateApproximator, ExactApproximator
    >>> from shap_instances.games import ResidualGame
    >>> rng = np.random.default_rng(0)
    >>> X, y = rng.normal(size=(10, 2)), rng.normal(size=10)
    >>> game = ResidualGame(Ridge(alpha=1.0), X, y).aggregate(np.full(10, 0.1))
    >>> r = ControlVariateApproximator(200, random_state=0).estimate(game)
    >>> exact = ExactApproximator().estimate(game).values
    >>> bool(np.all(np.abs(r.values - exact) < 4 * r.standard_errors))
    True
    """

    def __init__(self, n_permutations: int | None = None, *, antithetic: bool = True, strata: int = 1,
                 coefficient: str = "pooled", control: Game | None = None, batch_size: int | None = None,
                 max_time: float | None = None, random_state: RandomStateLike = None) -> None:
        self.n_permutations, self.antithetic, self.strata = n_permutations, antithetic, strata
        self.coefficient, self.control, self.batch_size = coefficient, control, batch_size
        self.max_time, self.random_state = max_time, random_state

    @staticmethod
    def supports(game: Game) -> bool:
        """Whether :func:`control_game` builds a control game for ``game``."""
        path = getattr(game, "fast_path", None)
        return (getattr(game, "ridge_problem", None) is not None or hasattr(path, "control_path")
                # a binary logistic path with both classes: its label shares, as its first-order pieces, exist
                or (hasattr(path, "first_order_pieces") and _ask_path(game, "label_shares") is not None))

    def estimate(self, game: Game) -> ShapleyResult:
        """Shapley values of ``game`` with standard errors (see the class docstring)."""
        if self.coefficient not in ("player", "pooled"):
            raise ValueError(f"coefficient must be 'player' or 'pooled', got {self.coefficient!r}.")
        control = self.control if self.control is not None else control_game(game)
        if control is None:
            raise UnsupportedModelError(
                f"{type(game).__name__} has no control game (ridge, least squares and l2 logistic residual games "
                "have their first-order game, fixed-structure forests their equal-multiplicity forest); pass "
                "control= or use PermutationApproximator.")
        m, d = game.n_players, game.n_outputs
        per_unit = _permutation_plan(self, m)
        total = self.n_permutations if self.n_permutations is not None else max(32, 2 * m)
        n_units = max(3, -(-int(total) // per_unit))
        batch = int(self.batch_size or max(1, 64e6 // (8 * per_unit * (m + 1) * d)))
        rng = check_random_state(self.random_state)
        moments, started, stopped_by, evals = _CoMoments(m, d), time.perf_counter(), None, game.n_evaluations
        while moments.units < n_units:
            if moments.units >= 3 and self.max_time is not None and time.perf_counter() - started > self.max_time:
                stopped_by = "max_time"
                break
            k = min(batch, n_units - moments.units)
            permutations = random_permutations(rng, k, m, int(self.strata), bool(self.antithetic))
            x = _unit_contributions(game.prefix_values(permutations), permutations, per_unit)
            moments.add(x, _unit_contributions(control.prefix_values(permutations), permutations, per_unit))
        values, errors, beta = moments.corrected(control.closed_form_values(), self.coefficient)
        empty, full = game.empty_value, game.full_value
        info = {"n_permutations": moments.units * per_unit, "units": moments.units, "antithetic": self.antithetic,
                "strata": self.strata, "coefficient": self.coefficient, "beta": beta, "stopped_by": stopped_by,
                "seconds": time.perf_counter() - started,
                "efficiency_gap": float(np.max(np.abs(values.sum(axis=0) - (full - empty))))}
        return ShapleyResult(values, empty, full, standard_errors=errors, n_evaluations=game.n_evaluations - evals,
                             approximator="permutation+control variate", converged=stopped_by is None, info=info)


def _permutation_plan(approximator: ControlVariateApproximator, m: int) -> int:
    """Permutations per unit, the arguments checked."""
    strata = approximator.strata
    if not (isinstance(strata, (int, np.integer)) and not isinstance(strata, bool) and 1 <= strata <= m):
        raise ValueError(f"strata must be an integer from 1 to the number of players ({m}), got {strata!r}.")
    if approximator.n_permutations is not None and int(approximator.n_permutations) < 1:
        raise ValueError(f"n_permutations must be a positive integer, got {approximator.n_permutations!r}.")
    return int(strata) * (2 if approximator.antithetic else 1)


def _unit_contributions(prefixes: np.ndarray, permutations: np.ndarray, per_unit: int) -> np.ndarray:
    """Each unit's mean marginal contribution of every player, shape (units, n_players, n_outputs)."""
    k, m = permutations.shape
    steps = np.diff(np.asarray(prefixes, dtype=np.float64), axis=1)  # (k, m, d): the player at place t
    out = np.empty_like(steps)
    np.put_along_axis(out, permutations[:, :, None], steps, axis=1)
    return out.reshape(k // per_unit, per_unit, m, -1).mean(axis=1)


class _CoMoments:
    """Running means and centred sums of squares and products of two unit statistics (Chan's merge)."""

    def __init__(self, m: int, d: int) -> None:
        self.units = 0
        self.mx, self.mc, self.sxx, self.scc, self.sxc = (np.zeros((m, d)) for _ in range(5))

    def add(self, x: np.ndarray, c: np.ndarray) -> None:
        nb = len(x)
        bx, bc = x.mean(axis=0), c.mean(axis=0)
        dx, dc = x - bx, c - bc
        n = self.units + nb
        ex, ec = bx - self.mx, bc - self.mc
        weight = self.units * nb / n
        self.sxx += (dx * dx).sum(axis=0) + ex * ex * weight
        self.scc += (dc * dc).sum(axis=0) + ec * ec * weight
        self.sxc += (dx * dc).sum(axis=0) + ex * ec * weight
        self.mx += ex * nb / n
        self.mc += ec * nb / n
        self.units = n

    def corrected(self, exact: np.ndarray, coefficient: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The control-variate estimate, its standard errors and the coefficients used."""
        n = self.units
        if coefficient == "pooled":
            beta = self.sxc.sum(axis=0, keepdims=True) / np.maximum(self.scc.sum(axis=0, keepdims=True), 1e-300)
            dof = n - 1
        else:
            beta = np.where(self.scc > 0, self.sxc / np.where(self.scc > 0, self.scc, 1.0), 0.0)
            dof = n - 2
        residual = np.maximum(self.sxx - 2 * beta * self.sxc + beta * beta * self.scc, 0.0)
        values = self.mx - beta * (self.mc - exact)
        return values, np.sqrt(residual / (dof * n)), np.broadcast_to(beta, self.mx.shape).copy()
