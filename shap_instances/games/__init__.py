"""Cooperative games whose players are training instances (or features)."""

from ._base import CoalitionMatrix, Game, GameValues

__all__ = ["Game", "CoalitionMatrix", "GameValues"]
