"""Cooperative games whose players are training instances (or features)."""

from ._base import CoalitionMatrix, Game, GameValues
from .function import FunctionGame
from .residual import ResidualGame

__all__ = ["Game", "FunctionGame", "ResidualGame", "CoalitionMatrix", "GameValues"]
