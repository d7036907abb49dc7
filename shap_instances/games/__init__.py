"""Cooperative games whose players are training instances (or features).

:class:`ResidualGame` picks the first of its exact refit shortcuts (:class:`RidgePath`, :class:`MeanPath`,
:class:`KNNPath`, :class:`LogisticPath`, :class:`NaiveBayesPath`, :class:`KernelRidgePath`,
:class:`DiscriminantPath`, :class:`QuadraticDiscriminantPath`, in ``residual.FAST_PATHS``) that supports the model.
:class:`AggregateGame` (or :meth:`ResidualGame.aggregate`) turns a vector game into weighted sums of its
outputs, whose Shapley values are the same weighted sums (linearity).
"""

from ._base import CoalitionMatrix, Game, GameValues
from ._fast_discriminant import DiscriminantPath
from ._fast_forest import FixedForestPath
from ._fast_kernel_ridge import KernelRidgePath
from ._fast_knn import KNNPath
from ._fast_logistic import LogisticPath
from ._fast_mean import MeanPath
from ._fast_naive_bayes import NaiveBayesPath
from ._fast_qda import QuadraticDiscriminantPath, qda_convention
from ._fast_ridge import RidgePath, RidgeProblem
from ._prefix_kernels import accumulate_prefix_units
from .aggregate import AGGREGATE_WEIGHTS, AggregateGame, aggregate_weights
from .function import FunctionGame
from .loss import LossGame
from .residual import REFITS, ResidualGame

__all__ = [
    "AGGREGATE_WEIGHTS",
    "AggregateGame",
    "REFITS",
    "CoalitionMatrix",
    "DiscriminantPath",
    "FixedForestPath",
    "FunctionGame",
    "Game",
    "GameValues",
    "KNNPath",
    "KernelRidgePath",
    "LogisticPath",
    "LossGame",
    "MeanPath",
    "NaiveBayesPath",
    "QuadraticDiscriminantPath",
    "ResidualGame",
    "RidgePath",
    "RidgeProblem",
    "accumulate_prefix_units",
    "aggregate_weights",
    "qda_convention",
]
