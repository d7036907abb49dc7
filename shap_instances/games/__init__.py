"""Cooperative games whose players are training instances (or features)."""

from ._base import CoalitionMatrix, Game, GameValues
from .function import FunctionGame

__all__ = ["Game", "FunctionGame", "CoalitionMatrix", "GameValues"]
