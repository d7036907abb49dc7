"""``Approximator``: the one call through which explainers and metrics use an estimator of Shapley values."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, runtime_checkable

import numpy as np

if TYPE_CHECKING:
    from ..games import Game
    from ._result import ShapleyResult

__all__ = ["Approximator", "SemivalueWeights"]


@runtime_checkable
class Approximator(Protocol):
    """What every estimator of this package is: an object with ``estimate(game) -> ShapleyResult``.

    The budget, ``random_state``, ``n_jobs`` and the stopping rules are given to the constructor, so the one
    call takes the game alone and a new estimator is a small class. A game maps a bool coalition matrix
    ``(m, n_players)`` to float64 values ``(m, n_outputs)``; the result holds values ``(n_players,
    n_outputs)``, v(empty), v(full), standard errors where the estimator samples and the evaluations spent.
    :class:`ExactApproximator`, :class:`PermutationApproximator`, :class:`KernelApproximator`,
    :class:`ClosedFormApproximator` and :class:`RidgeInfluenceApproximator` satisfy it, and so does any object a
    caller passes as ``InstanceKernelExplainer(approximator=...)``.

    The protocol is ``runtime_checkable``: ``isinstance(obj, Approximator)`` checks that ``obj`` has an
    ``estimate`` method (not its signature).

    Examples
    --------
    >>> import numpy as np
    >>> from shap_instances.approximators import Approximator, ExactApproximator, ShapleyResult
    >>> from shap_instances.games import FunctionGame
    >>> isinstance(ExactApproximator(), Approximator)
    True
    >>> class Equal:  # every player gets an equal share of v(full) - v(empty)
    ...     def estimate(self, game):
    ...         empty, full = game.empty_value, game.full_value
    ...         values = np.tile((full - empty) / game.n_players, (game.n_players, 1))
    ...         return ShapleyResult(values, empty, full, n_evaluations=2, approximator="equal")
    >>> isinstance(Equal(), Approximator), isinstance(object(), Approximator)
    (True, False)
    >>> Equal().estimate(FunctionGame(lambda m: m.sum(1, keepdims=True) * 1.0, 4)).values.ravel()
    array([1., 1., 1., 1.])
    """

    def estimate(self, game: Game) -> ShapleyResult:
        """Shapley values of ``game`` (its players' shares of ``v(full) - v(empty)``, per output)."""
        ...


class SemivalueWeights(Protocol):
    """What :class:`WeightedPermutationApproximator` reads of a semivalue (``shap_instances.valuation.Semivalue``).

    ``label`` names it in the result, ``efficient`` says whether its values add up to ``v(all) - v(empty)`` (then
    the plain permutation estimator serves it) and ``size_weights(n)`` is the weight ``n C(n-1, s) p(s)`` of a
    contribution at each position ``s = 0, ..., n - 1`` of a random permutation.
    """

    @property
    def label(self) -> str: ...

    @property
    def efficient(self) -> bool: ...

    def size_weights(self, n_players: int) -> np.ndarray: ...
