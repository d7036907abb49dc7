"""Exact Shapley values from a game's own closed form (mean and KNN residual games)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..exceptions import UnsupportedModelError
from ._result import ShapleyResult

if TYPE_CHECKING:
    from ..games import Game

__all__ = ["ClosedFormApproximator"]


class ClosedFormApproximator:
    """Exact Shapley values of a game that has them in closed form, for two evaluations.

    A game with a closed form names it in ``game.closed_form`` and returns the values from
    ``game.closed_form_values()`` (see :class:`~shap_instances.games.Game`); the estimator adds v(empty) and
    v(full), the only two coalitions it evaluates. :meth:`supports` says whether a game has one: today the
    residual games of ``DummyRegressor(strategy="mean")`` and of uniform-weight ``KNeighborsRegressor``
    (:class:`~shap_instances.linear.MeanPath`, :class:`~shap_instances.neighbors.KNNPath`). The result is exact, so
    it has no standard errors, and the estimator has no budget and no random state.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.dummy import DummyRegressor
    >>> from sklearn.tree import DecisionTreeRegressor
    >>> from shap_instances.approximators import ClosedFormApproximator, ExactApproximator
    >>> from shap_instances.games import ResidualGame
    >>> X, y = np.arange(10.0).reshape(5, 2), np.array([1.0, 2.0, 2.0, 5.0, 4.0])
    >>> game = ResidualGame(DummyRegressor(), X, y)
    >>> tree_game = ResidualGame(DecisionTreeRegressor(), X, y)
    >>> ClosedFormApproximator.supports(game), ClosedFormApproximator.supports(tree_game)
    (True, False)
    >>> result = ClosedFormApproximator().estimate(game)
    >>> result.approximator, result.n_evaluations
    ('closed form (Mean)', 2)
    >>> bool(np.allclose(result.values, ExactApproximator().estimate(game).values))
    True
    """

    @staticmethod
    def supports(game: Game) -> bool:
        """Whether ``game`` has its Shapley values in closed form (``game.closed_form`` is not None)."""
        return getattr(game, "closed_form", None) is not None

    def estimate(self, game: Game) -> ShapleyResult:
        """Exact Shapley values of ``game``; refused (UnsupportedModelError) when :meth:`supports` is False."""
        if not self.supports(game):
            raise UnsupportedModelError(
                f"{type(game).__name__} has no closed form of its Shapley values "
                "(ClosedFormApproximator.supports(game) is False); use ExactApproximator, PermutationApproximator or "
                "KernelApproximator."
            )
        m = game.n_players
        start = game.n_evaluations
        ends = game(np.array([np.zeros(m, bool), np.ones(m, bool)]))
        values = np.asarray(game.closed_form_values(), dtype=np.float64)
        return ShapleyResult(values, ends[0], ends[1], n_evaluations=game.n_evaluations - start,
                             approximator=f"closed form ({game.closed_form})")

    def __repr__(self) -> str:
        return "ClosedFormApproximator()"
