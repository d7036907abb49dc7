"""``FunctionGame``: a game from any batched function of coalition masks."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ._base import CoalitionMatrix, Game, GameValues

__all__ = ["FunctionGame"]


class FunctionGame(Game):
    """Wrap ``fn(masks: bool (m, M)) -> (m, D)`` (or ``(m,)``) as a :class:`Game`.

    ``fn`` must be picklable (a module-level function) to run under process-based joblib backends.

    Examples
    --------
    >>> import numpy as np
    >>> from shap_instances.games import FunctionGame
    >>> weights = np.array([1.0, 2.0, 3.0])
    >>> game = FunctionGame(lambda masks: masks @ weights, n_players=3)
    >>> game(np.array([[True, True, False]])).tolist()
    [[3.0]]
    """

    def __init__(self, fn: Callable[[np.ndarray], np.ndarray], n_players: int, n_outputs: int = 1,
                 **kwargs: Any) -> None:
        super().__init__(n_players, n_outputs, **kwargs)
        self.fn = fn

    def value_function(self, coalitions: CoalitionMatrix) -> GameValues:
        return self.fn(coalitions)
