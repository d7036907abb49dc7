"""``LossGame``: the scalar Data Shapley game, mean squared residual of a residual game's refits."""

from __future__ import annotations

import numpy as np

from ._base import CoalitionMatrix, Game, GameValues
from .residual import ResidualGame

__all__ = ["LossGame"]


class LossGame(Game):
    """``v(S) = mean_j (f_S(x_j) - y_j)^2`` over the evaluation rows: Data Shapley's mean-squared-error game.

    It reuses a :class:`ResidualGame`, so ridge and mean models keep their exact refit shortcuts. Give the
    residual game an ``empty_prediction`` (e.g. the training mean) so that ``v(empty)`` is a real loss.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import Ridge
    >>> from shap_instances.games import LossGame, ResidualGame
    >>> X, y = np.arange(10.0).reshape(5, 2), np.array([1.0, 2.0, 2.0, 5.0, 4.0])
    >>> game = LossGame(ResidualGame(Ridge(), X, y, empty_prediction=y.mean()))
    >>> bool(game.empty_value[0] == np.mean((y.mean() - y) ** 2))
    True
    """

    def __init__(self, residual_game: ResidualGame) -> None:
        super().__init__(residual_game.n_players, 1, player_names=residual_game.player_names,
                         output_names=["mse"])
        self.residual_game = residual_game

    @property
    def cheap(self) -> bool:  # type: ignore[override]  # a property here, a plain attribute on Game
        """As the residual game's: True when its refits take an exact shortcut."""
        return bool(getattr(self.residual_game, "cheap", False))

    @property
    def cuts_walks(self) -> bool:  # type: ignore[override]  # a property here, a plain attribute on Game
        """As the residual game's (``Game.cuts_walks``)."""
        return bool(getattr(self.residual_game, "cuts_walks", False))

    @property
    def starts_walks(self) -> bool:  # type: ignore[override]  # a property here, a plain attribute on Game
        """As the residual game's (``Game.starts_walks``)."""
        return bool(getattr(self.residual_game, "starts_walks", False))

    def fingerprint(self) -> str | None:
        inner = self.residual_game.fingerprint()
        return None if inner is None else f"mse:{inner}"

    def value_function(self, coalitions: CoalitionMatrix) -> GameValues:
        return np.mean(self.residual_game.value_function(coalitions) ** 2, axis=1, keepdims=True)

    def prefix_values(self, permutations: np.ndarray, first: int = 0) -> np.ndarray:
        residuals = self.residual_game.prefix_values(permutations, first)
        self.n_evaluations = self.residual_game.n_evaluations
        return np.mean(residuals**2, axis=2, keepdims=True)
