"""Leave-one-out values ``v(N) - v(N - i)`` of a vector-valued game."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ._result import ShapleyResult

if TYPE_CHECKING:
    from ..games import Game

__all__ = ["LeaveOneOutApproximator"]


class LeaveOneOutApproximator:
    """Leave-one-out values ``v(N) - v(N - i)``: exact, ``n + 2`` evaluations (with v(empty)).

    Examples
    --------
    >>> import numpy as np
    >>> from shap_instances.games import FunctionGame
    >>> from shap_instances.approximators import LeaveOneOutApproximator
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
        return result.of_semivalue("loo", "loo", False)
