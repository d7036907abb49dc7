"""The game abstraction: players, a batched vector-valued value function, an evaluation counter."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from numpy.typing import ArrayLike

from ._prefix_kernels import accumulate_prefix_units

__all__ = ["Game", "CoalitionMatrix", "GameValues"]

#: bool array of shape (m, n_players); row k is one coalition, True = player present.
CoalitionMatrix = np.ndarray
#: float64 array of shape (m, n_outputs); row k is the value of coalition k.
GameValues = np.ndarray


class Game:
    """A cooperative game whose value is a vector: ``v: {0,1}^M -> R^D``.

    Subclasses implement :meth:`value_function`, which may trust its input. Estimators call the game
    itself: ``game.values(masks)``, or equivalently ``game(masks)``, validates the masks and the shape of
    what comes back, counts evaluations and, with ``cache=True``, evaluates each distinct coalition only once.

    Parameters
    ----------
    n_players : int
        Number of players M (at least 1).
    n_outputs : int
        Length D of the value vector (at least 1).
    player_names, output_names : sequence of str, optional
        Names used by explanations built from this game.
    cache : bool, default=False
        Remember values of coalitions already evaluated (useful when refits are expensive).

    Examples
    --------
    >>> import numpy as np
    >>> from shap_instances.games import Game
    >>> class Size(Game):
    ...     def value_function(self, coalitions):
    ...         return coalitions.sum(axis=1, keepdims=True).astype(float)
    >>> g = Size(3, 1)
    >>> g.values(np.array([[True, False, True]])).tolist(), g.n_evaluations
    ([[2.0]], 1)
    """

    #: Whether one evaluation is cheap (an exact refit shortcut, say): estimators then never start a process
    #: pool for it. Unknown (False) by default; estimators then measure the cost of the first batch.
    cheap: bool = False
    #: Whether :meth:`prefix_values` takes orders cut after their first places (``(k, s)``, ``s < n_players``) and
    #: walks those places only, at a cost that grows with ``s``: the ridge and logistic refit shortcuts (their
    #: paths' ``cuts_walks``). A permutation estimator then times a short walk to plan a run before its first,
    #: otherwise unbounded, whole one. False by default.
    cuts_walks: bool = False
    #: Whether :meth:`prefix_values` with ``first`` > 0 starts its walks at the prefix of ``first`` players (one
    #: cold fit there) instead of walking the shorter prefixes too: the logistic refit shortcut, whose steps cost
    #: more the longer the prefix. A probe then times a walk through the middle places, where such a step costs
    #: what a whole walk's steps cost on average. False by default (``first`` then only drops the shorter prefixes).
    starts_walks: bool = False

    def __init__(self, n_players: int, n_outputs: int = 1, *, player_names: Sequence[str] | None = None,
                 output_names: Sequence[str] | None = None, cache: bool = False) -> None:
        self.n_players = int(n_players)
        self.n_outputs = int(n_outputs)
        if self.n_players < 1:
            raise ValueError(f"a game needs at least one player, got n_players={n_players!r}.")
        if self.n_outputs < 1:
            raise ValueError(f"a game needs at least one output, got n_outputs={n_outputs!r}.")
        self.player_names = (
            [f"player[{i}]" for i in range(self.n_players)] if player_names is None else [str(p) for p in player_names]
        )
        self.output_names = None if output_names is None else [str(o) for o in output_names]
        self.cache = cache
        self._cache: dict[bytes, np.ndarray] = {}
        self.n_evaluations = 0

    def value_function(self, coalitions: CoalitionMatrix) -> GameValues:
        """Values of a batch of coalitions, shape (m, n_outputs). Implemented by subclasses."""
        raise NotImplementedError

    def values(self, masks: ArrayLike) -> GameValues:
        """The batched value function: values of the coalitions ``masks`` (bool, shape (m, M)), shape (m, D).

        The public name of ``game(masks)``: validated, counted, and cached when ``cache=True``. A single
        coalition of shape (M,) is treated as a batch of one.
        """
        return self.evaluate(masks, self.value_function)

    def __call__(self, coalitions: ArrayLike) -> GameValues:
        """Same as :meth:`values`."""
        return self.values(coalitions)

    def evaluate(self, coalitions: ArrayLike, evaluator: Callable[[CoalitionMatrix], ArrayLike]) -> GameValues:
        """``game(coalitions)`` with the raw values of new coalitions computed by ``evaluator``.

        Validation, caching and the evaluation counter happen here, so an evaluator that distributes the
        work (see :func:`~shap_instances.approximators.parallel_values`) keeps all three.
        """
        coalitions = np.asarray(coalitions, dtype=bool)
        if coalitions.ndim == 1:
            coalitions = coalitions[None, :]
        if coalitions.ndim != 2 or coalitions.shape[1] != self.n_players:
            raise ValueError(f"coalitions must have shape (m, {self.n_players}), got {coalitions.shape}.")
        if not self.cache:
            self.n_evaluations += coalitions.shape[0]
            return self._checked(evaluator(coalitions), coalitions.shape[0])
        keys = [row.tobytes() for row in np.packbits(coalitions, axis=1)]
        todo: dict[bytes, int] = {}
        for i, key in enumerate(keys):
            if key not in self._cache and key not in todo:
                todo[key] = i
        if todo:
            fresh = self._checked(evaluator(coalitions[list(todo.values())]), len(todo))
            self.n_evaluations += len(todo)
            self._cache.update(zip(todo, fresh))
        return np.stack([self._cache[k] for k in keys])

    @property
    def closed_form(self) -> str | None:
        """Name of an exact closed form of this game's Shapley values, or None (the default) when it has none.

        A game that knows its Shapley values without enumerating coalitions (a mean model's residual game,
        say) returns a short name here and implements :meth:`closed_form_values`;
        :class:`~shap_instances.approximators.ClosedFormApproximator` then uses them.

        Examples
        --------
        >>> import numpy as np
        >>> from sklearn.dummy import DummyRegressor
        >>> from shap_instances.games import FunctionGame, ResidualGame
        >>> print(FunctionGame(lambda m: m.sum(1), 3).closed_form)
        None
        >>> game = ResidualGame(DummyRegressor(), np.zeros((3, 1)), np.array([1.0, 2.0, 6.0]))
        >>> game.closed_form, game.closed_form_values().shape
        ('Mean', (3, 3))
        """
        return None

    def closed_form_values(self) -> np.ndarray:
        """Exact Shapley values, shape (n_players, n_outputs), of a game whose :attr:`closed_form` is not None."""
        raise NotImplementedError(f"{type(self).__name__} has no closed form of its Shapley values; estimate them "
                                  "(ExactApproximator, PermutationApproximator or KernelApproximator).")

    def fingerprint(self) -> str | None:
        """A digest of what defines the game's values, or None when unknown.

        A checkpointed estimator refuses to resume a run whose game has another fingerprint.
        """
        return None

    def counters(self) -> dict:
        """Counts kept while evaluating (merged back from parallel workers by :meth:`add_counters`)."""
        return {"n_evaluations": self.n_evaluations}

    def add_counters(self, delta: dict) -> None:
        """Add the counts that a worker's copy of this game accumulated (``delta`` as :meth:`counters`)."""
        self.n_evaluations += delta.get("n_evaluations", 0)

    def _checked(self, values: ArrayLike, m: int) -> GameValues:
        """The values returned for ``m`` coalitions as float64 (m, n_outputs); a wrong shape is an error."""
        values = np.asarray(values, dtype=np.float64)
        if values.shape == (m, self.n_outputs):
            return values
        if values.shape == (m,) and self.n_outputs == 1:
            return values[:, None]
        allowed = f"({m}, {self.n_outputs})" + (f" or ({m},)" if self.n_outputs == 1 else "")
        raise ValueError(
            f"{type(self).__name__}.value_function returned an array of shape {values.shape} for {m} coalition(s); "
            f"expected {allowed} (one row per coalition, one column per output; n_outputs={self.n_outputs})."
        )

    def prefix_values(self, permutations: np.ndarray, first: int = 0) -> np.ndarray:
        """Values of every prefix of each permutation, shape (k, n_players + 1 - first, n_outputs).

        ``out[r, t]`` is the value of the coalition made of the first ``first + t`` players of permutation ``r``
        (``t = 0``, ``first = 0``: the empty coalition). Permutation estimators call this; games with an
        incremental fast path (for example a ridge refit updated one row at a time) override it. The default
        builds the prefix masks and evaluates them in one batch, counting ``n_players + 1`` evaluations each;
        ``first`` drops the shorter prefixes from the result (a game that :attr:`starts_walks` does not value them).
        """
        permutations = np.asarray(permutations, dtype=np.intp)
        k, m = permutations.shape
        ranks = np.empty_like(permutations)
        np.put_along_axis(ranks, permutations, np.arange(m)[None, :], axis=1)
        masks = ranks[:, None, :] < np.arange(m + 1)[None, :, None]  # (k, m + 1, m)
        return self(masks.reshape(k * (m + 1), m)).reshape(k, m + 1, self.n_outputs)[:, first:]

    def accumulate_permutations(self, permutations: np.ndarray, per_unit: int, unit: np.ndarray, mean: np.ndarray,
                                m2: np.ndarray, count: int) -> tuple[int, np.ndarray, np.ndarray]:
        """Add the marginal contributions along ``permutations`` to running Shapley accumulators, in place.

        Units of ``per_unit`` consecutive permutations (1, or 2 for antithetic pairs) are averaged into the work
        block ``unit`` (n_players, n_outputs) and added to Welford's ``mean`` and ``m2`` (same shape); ``count``
        is the number of units so far. The default evaluates :meth:`prefix_values` for the whole batch and
        accumulates with a numba kernel; games with a fused kernel (the ridge and mean refit shortcuts of
        :class:`~shap_instances.games.ResidualGame`) override it and never hold more than one unit's block.

        Returns
        -------
        count : int
            Units accumulated after this batch.
        empty, full : ndarray (n_outputs,)
            v(empty) and v(all players) along the first permutation of the batch.
        """
        permutations = np.ascontiguousarray(permutations, dtype=np.intp)
        prefixes = np.ascontiguousarray(self.prefix_values(permutations), dtype=np.float64)
        count = accumulate_prefix_units(prefixes, permutations, per_unit, unit, mean, m2, count)
        return count, prefixes[0, 0].copy(), prefixes[0, -1].copy()

    @property
    def empty_value(self) -> np.ndarray:
        """v(empty set), shape (n_outputs,)."""
        return self(np.zeros((1, self.n_players), dtype=bool))[0]

    @property
    def full_value(self) -> np.ndarray:
        """v(all players), shape (n_outputs,)."""
        return self(np.ones((1, self.n_players), dtype=bool))[0]

    def reset_counter(self) -> None:
        """Set the evaluation counter back to zero (the cache is kept)."""
        self.n_evaluations = 0
