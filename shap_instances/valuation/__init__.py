"""Data valuation: how much each training row is worth to a model, and which rows are likely mislabeled.

* :class:`Semivalue` (Shapley, Banzhaf, Beta Shapley, leave-one-out) and the choice of its approximator on the one
  game engine (:func:`semivalue_approximator`: exact enumeration, weighted permutations, maximum sample reuse,
  least-squares Banzhaf, leave-one-out, all in :mod:`shap_instances.approximators`),
  so every exact refit shortcut of :class:`~shap_instances.games.ResidualGame` serves every semivalue;
* :func:`data_values`: semivalues of training rows under any scikit-learn score (:class:`ScoreGame`,
  :func:`utility_game`), :func:`classwise_shapley` (CS-Shapley) for classifiers, :func:`data_oob` for bagging
  ensembles, all returning :class:`DataValues`;
* :func:`label_issues`: rows whose label the model and the data disagree with.
"""

from typing import Any

from .._deprecated import warn_moved
from ._api import classwise_shapley, data_values, utility_game
from ._chooser import APPROXIMATORS, semivalue_approximator
from ._label_issues import EVIDENCE, label_issues
from ._oob import data_oob
from ._result import DataValues
from ._semivalues import SEMIVALUES, Semivalue, check_semivalue
from ._utility import ClasswiseScorer, RestrictedGame, ScoreGame, check_scoring

__all__ = [
    "APPROXIMATORS",
    "EVIDENCE",
    "SEMIVALUES",
    "ClasswiseScorer",
    "DataValues",
    "RestrictedGame",
    "ScoreGame",
    "Semivalue",
    "check_scoring",
    "check_semivalue",
    "classwise_shapley",
    "data_oob",
    "data_values",
    "label_issues",
    "semivalue_approximator",
    "utility_game",
]

#: Names that moved in 0.2, each read with a warning until 0.3: the approximators to ``approximators``, and
#: ``ESTIMATORS``, the approximators' names, to ``APPROXIMATORS``.
_MOVED = {**{name: ("shap_instances.approximators", name)
             for name in ("LeaveOneOutApproximator", "MSRBanzhafApproximator", "RegressionBanzhafApproximator",
                          "WeightedPermutationApproximator")},
          "ESTIMATORS": ("shap_instances.valuation", "APPROXIMATORS")}


def __getattr__(name: str) -> Any:
    if name not in _MOVED:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module, new = _MOVED[name]
    warn_moved(f"{__name__}.{name}", f"{module}.{new}")
    if module == __name__:
        return globals()[new]
    from .. import approximators

    return getattr(approximators, new)
