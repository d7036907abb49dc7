"""``AggregateGame``: weighted sums of a vector game's outputs, one game with K outputs (often one)."""

from __future__ import annotations

import copy
import hashlib
from collections.abc import Sequence
from typing import Any, Self

import numpy as np
from numpy.typing import ArrayLike

from ..exceptions import InvalidParameterError
from ._base import CoalitionMatrix, Game, GameValues

__all__ = ["AGGREGATE_WEIGHTS", "AggregateGame", "aggregate_weights"]

#: The named weightings of :func:`aggregate_weights`.
AGGREGATE_WEIGHTS = ("sign", "mean")


def aggregate_weights(weights: ArrayLike | str | Sequence[Any], residuals: np.ndarray) -> tuple[np.ndarray, list[str]]:
    """``(weights (m, K), names)`` of K weightings of the m explained rows, from names, arrays or a list of them.

    ``"sign"``: ``w_j = -sgn(e_j) / m`` (Liu & Barnard's eq. 5 sign normalisation, ``e_j = residuals[j]``);
    ``"mean"``: ``w_j = 1 / m``; an array of m finite numbers is used as given (named ``"weights[k]"``); a list
    or tuple gives one column per entry. See :meth:`shap_instances.InstanceKernelExplainer.aggregate`.

    Examples
    --------
    >>> import numpy as np
    >>> from shap_instances.games import aggregate_weights
    >>> matrix, names = aggregate_weights(["sign", "mean"], np.array([2.0, -1.0]))
    >>> matrix.tolist(), names
    ([[-0.5, 0.5], [0.5, 0.5]], ['sign', 'mean'])
    """
    m = len(residuals)
    specs = list(weights) if isinstance(weights, list | tuple) else [weights]
    if not specs:
        raise InvalidParameterError("aggregate: weights must not be an empty list.")
    columns, names = [], []
    for number, spec in enumerate(specs):
        if isinstance(spec, str):
            if spec not in AGGREGATE_WEIGHTS:
                raise InvalidParameterError(f"aggregate: weights must be 'sign', 'mean', an array of {m} weights "
                                            f"or a list of these; got {spec!r}.")
            columns.append(-np.sign(residuals) / m if spec == "sign" else np.full(m, 1.0 / m))
            names.append(spec)
            continue
        column = np.asarray(spec, dtype=np.float64)
        if column.shape != (m,) or not np.all(np.isfinite(column)):
            raise InvalidParameterError(f"aggregate: an array of weights must hold {m} finite numbers, one per "
                                        f"explained row; got shape {column.shape}.")
        columns.append(column)
        names.append(f"weights[{number}]")
    return np.column_stack(columns), names


class AggregateGame(Game):
    """``v_W(S) = v(S) @ weights``: K weighted sums of the D outputs of ``game``.

    Shapley values are linear in the game, so the Shapley values of the aggregate game are ``phi @ weights``,
    ``phi`` (n_players, D) those of ``game``: any estimator run on the aggregate with the same random state
    gives the weighted sums of what it gives on ``game`` (exactly for the exact and permutation estimators,
    to rounding for the kernel one), with standard errors of the sums themselves (which account for the
    correlation between outputs), at the memory of K outputs instead of D.

    This wrapper evaluates ``game`` and multiplies (a batch of prefixes costs what it costs in ``game``). A
    game that can evaluate its aggregates directly offers ``game.aggregate(weights)``:
    :meth:`ResidualGame.aggregate <shap_instances.games.ResidualGame.aggregate>` keeps the exact refit
    shortcuts and never holds the n x D matrix, and ``AggregateGame`` uses it when it exists.

    Parameters
    ----------
    game : Game
        The vector game (D outputs).
    weights : array-like of shape (D,) or (D, K)
        One weight per output (one aggregate), or K columns.
    output_names : sequence of str, optional
        Names of the K aggregates (default ``"aggregate[k]"``).

    Examples
    --------
    >>> import numpy as np
    >>> from shap_instances.approximators import ExactApproximator
    >>> from shap_instances.games import AggregateGame, FunctionGame
    >>> game = FunctionGame(lambda m: np.stack([m.sum(1), m[:, 0] * m[:, 1]], axis=1).astype(float), 3, 2)
    >>> total = AggregateGame(game, [1.0, 1.0])
    >>> ExactApproximator(silent=True).estimate(total).values.ravel().round(3).tolist()
    [1.5, 1.5, 1.0]
    """

    def __init__(self, game: Game, weights: ArrayLike, *, output_names: Sequence[str] | None = None) -> None:
        weights = np.asarray(weights, dtype=np.float64)
        if weights.ndim == 1:
            weights = weights[:, None]
        if weights.ndim != 2 or weights.shape[0] != game.n_outputs or weights.shape[1] < 1:
            raise ValueError(f"weights must have shape ({game.n_outputs},) or ({game.n_outputs}, K), one row per "
                             f"output of the game; got {weights.shape}.")
        if not np.all(np.isfinite(weights)):
            raise ValueError("weights must be finite.")
        names = output_names or [f"aggregate[{k}]" for k in range(weights.shape[1])]
        super().__init__(game.n_players, weights.shape[1], player_names=game.player_names, output_names=names)
        self.game, self.weights = game, weights
        direct = getattr(game, "aggregate", None)
        self._direct = direct(weights, output_names=names) if callable(direct) else None
        self.cheap = bool(getattr(self._inner, "cheap", False))
        self.cuts_walks = bool(getattr(self._inner, "cuts_walks", False))
        self.starts_walks = bool(getattr(self._inner, "starts_walks", False))

    @property
    def _inner(self) -> Any:
        return self._direct if self._direct is not None else self.game

    def value_function(self, coalitions: CoalitionMatrix) -> GameValues:
        if self._direct is not None:
            return self._direct.value_function(coalitions)
        return self.game.value_function(coalitions) @ self.weights

    def prefix_values(self, permutations: np.ndarray, first: int = 0) -> np.ndarray:
        # ``first`` only where asked for: a Game subclass of a user's own may override prefix_values without it
        walk = (permutations, first) if first else (permutations,)
        if self._direct is not None:
            before = self._direct.n_evaluations
            out = self._direct.prefix_values(*walk)
            self.n_evaluations += self._direct.n_evaluations - before
            return out
        before = self.game.n_evaluations
        out = self.game.prefix_values(*walk) @ self.weights
        self.n_evaluations += self.game.n_evaluations - before
        return out

    def accumulate_permutations(self, permutations: np.ndarray, per_unit: int, unit: np.ndarray, mean: np.ndarray,
                                m2: np.ndarray, count: int) -> tuple[int, np.ndarray, np.ndarray]:
        if self._direct is None:
            return super().accumulate_permutations(permutations, per_unit, unit, mean, m2, count)
        before = self._direct.n_evaluations
        out = self._direct.accumulate_permutations(permutations, per_unit, unit, mean, m2, count)
        self.n_evaluations += self._direct.n_evaluations - before
        return out

    @property
    def closed_form(self) -> str | None:
        """The inner game's closed form, when it has one."""
        return getattr(self._inner, "closed_form", None)

    def closed_form_values(self) -> np.ndarray:
        """``phi @ weights`` from the inner game's closed form (directly, when the game aggregates itself)."""
        if self._direct is not None:
            return self._direct.closed_form_values()
        return self.game.closed_form_values() @ self.weights

    def fingerprint(self) -> str | None:
        inner = self.game.fingerprint()
        if inner is None:
            return None
        return hashlib.sha256(inner.encode() + np.ascontiguousarray(self.weights).tobytes()).hexdigest()

    def counters(self) -> dict:
        inner = self._inner.counters()
        return inner | {"n_evaluations": self.n_evaluations}

    def add_counters(self, delta: dict) -> None:
        self.n_evaluations += delta.get("n_evaluations", 0)
        self._inner.add_counters({k: v for k, v in delta.items() if k != "n_evaluations"})

    @property
    def quiet(self) -> bool:
        """Whether the inner game keeps its warnings to itself (parallel workers set it)."""
        return bool(getattr(self._inner, "quiet", False))

    @quiet.setter
    def quiet(self, value: bool) -> None:
        self._inner.quiet = value

    def __copy__(self) -> Self:
        """A copy with its own copy of the inner game, so parallel workers never share counters."""
        new = object.__new__(type(self))
        new.__dict__.update(self.__dict__)
        if self._direct is not None:
            new._direct = copy.copy(self._direct)
        else:
            new.game = copy.copy(self.game)
        return new
