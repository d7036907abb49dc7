"""Cooperative games whose players are training instances (or features)."""

from ._base import CoalitionMatrix, Game, GameValues
from .function import FunctionGame
from .loss import LossGame
from .residual import ResidualGame

__all__ = ["Game", "FunctionGame", "ResidualGame", "LossGame", "CoalitionMatrix", "GameValues"]
