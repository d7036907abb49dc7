"""Data valuation: how much each training row is worth to a model, and which rows are likely mislabeled.

* :class:`Semivalue` (Shapley, Banzhaf, Beta Shapley, leave-one-out) and its estimators on the one game engine
  (:func:`semivalue_approximator`: exact enumeration, weighted permutations, maximum sample reuse, least-squares
  Banzhaf, leave-one-out),
  so every exact refit shortcut of :class:`~shap_instances.games.ResidualGame` serves every semivalue;
* :func:`data_values`: semivalues of training rows under any scikit-learn score (:class:`ScoreGame`,
  :func:`utility_game`), :func:`classwise_shapley` (CS-Shapley) for classifiers, :func:`data_oob` for bagging
  ensembles, all returning :class:`DataValues`;
* :func:`label_issues`: rows whose label the model and the data disagree with.
"""

from ._api import classwise_shapley, data_values, utility_game
from ._estimators import (
    ESTIMATORS,
    LeaveOneOutApproximator,
    MSRBanzhafApproximator,
    RegressionBanzhafApproximator,
    WeightedPermutationApproximator,
    semivalue_approximator,
)
from ._label_issues import EVIDENCE, label_issues
from ._oob import data_oob
from ._result import DataValues
from ._semivalues import SEMIVALUES, Semivalue, check_semivalue
from ._utility import ClasswiseScorer, RestrictedGame, ScoreGame, check_scoring

__all__ = [
    "ESTIMATORS",
    "EVIDENCE",
    "SEMIVALUES",
    "ClasswiseScorer",
    "DataValues",
    "LeaveOneOutApproximator",
    "MSRBanzhafApproximator",
    "RegressionBanzhafApproximator",
    "RestrictedGame",
    "ScoreGame",
    "Semivalue",
    "WeightedPermutationApproximator",
    "check_scoring",
    "check_semivalue",
    "classwise_shapley",
    "data_oob",
    "data_values",
    "label_issues",
    "semivalue_approximator",
    "utility_game",
]
