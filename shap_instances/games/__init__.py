"""Cooperative games whose players are training instances (or features).

:class:`ResidualGame` picks the first of its exact refit shortcuts (:class:`RidgePath`, :class:`MeanPath`,
:class:`KNNPath`, in ``residual.FAST_PATHS``) that supports the model.
"""

from ._base import CoalitionMatrix, Game, GameValues
from ._fast_knn import KNNPath
from ._fast_mean import MeanPath
from ._fast_ridge import RidgePath, RidgeProblem
from .function import FunctionGame
from .loss import LossGame
from .residual import ResidualGame

__all__ = [
    "CoalitionMatrix",
    "FunctionGame",
    "Game",
    "GameValues",
    "KNNPath",
    "LossGame",
    "MeanPath",
    "ResidualGame",
    "RidgePath",
    "RidgeProblem",
]
