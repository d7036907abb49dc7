"""Cooperative games whose players are training instances (or features).

:class:`ResidualGame` values coalitions by refits of a model, or by the first registered exact refit shortcut that
supports it (:func:`fast_path_for`): the model families own their shortcuts (``linear.RidgePath``,
``neighbors.KNNPath``, ``naive_bayes.NaiveBayesPath``, ``discriminant.DiscriminantPath``, ...) and register them
(:func:`register_fast_path`, the :class:`FastPath` protocol). :class:`AggregateGame` (or
:meth:`ResidualGame.aggregate`) turns a vector game into weighted sums of its outputs, whose Shapley values are
the same weighted sums (linearity).
"""

from typing import Any

from .._deprecated import moved_name
from ._base import CoalitionMatrix, Game, GameValues
from ._fast_path import (
    FAST_PATH_FAMILIES,
    FastPath,
    RidgeProblem,
    exact_fast_paths,
    fast_path_for,
    named_refits,
    register_fast_path,
)
from ._prefix_kernels import accumulate_prefix_units, welford_blocks, welford_update
from .aggregate import AGGREGATE_WEIGHTS, AggregateGame, aggregate_weights
from .function import FunctionGame
from .loss import LossGame
from .residual import REFITS, ResidualGame

__all__ = [
    "AGGREGATE_WEIGHTS",
    "FAST_PATH_FAMILIES",
    "AggregateGame",
    "REFITS",
    "CoalitionMatrix",
    "FastPath",
    "FunctionGame",
    "Game",
    "GameValues",
    "LossGame",
    "ResidualGame",
    "RidgeProblem",
    "accumulate_prefix_units",
    "aggregate_weights",
    "exact_fast_paths",
    "fast_path_for",
    "named_refits",
    "register_fast_path",
    "welford_blocks",
    "welford_update",
]


def __getattr__(name: str) -> Any:
    """The refit shortcuts that moved to their families (``RidgePath``: ``shap_instances.linear``), with a warning."""
    return moved_name(__name__, name)
