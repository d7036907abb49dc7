"""Regularised linear models (l1, l2, group penalties) as sums of training-point contributions.

* :func:`linear_objective` / :class:`LinearObjective`: a fitted model's regularised objective (loss, its
  derivatives, the penalty), the one map from scikit-learn's linear models to the representer and influence
  maths; :func:`check_supported` / :func:`is_supported` say which models it reads;
* :func:`l2_representer_scores`: representer values of an l2-regularised model (Yeh et al., 2018);
* :class:`LinearRepresenter`, :class:`TopK`, :func:`representer_kernel_weights`: the high-dimensional representer
  of l1, elastic-net and l2 models (Tsai et al., 2023), what ``RepresenterExplainer`` delegates to;
* :func:`influence_scores` / :class:`InfluenceFunction`: influence functions (Koh and Liang, 2017).
* :class:`RidgePath`, :class:`MeanPath`, :class:`LogisticPath`, :class:`KernelRidgePath`: exact refits of ridge,
  least squares, the mean, l2 logistic regression and kernel ridge / GP regression on coalitions and permutation
  prefixes, registered with the residual game (:func:`~shap_instances.games.register_fast_path`).
"""

from ._fast_kernel_ridge import KernelRidgePath
from ._fast_logistic import LogisticPath
from ._fast_mean import MeanPath
from ._fast_ridge import RidgePath
from ._influence import InfluenceFunction, influence_scores
from ._l2_representer import l2_representer_scores, select_output
from ._objective import (
    GROUP_PENALTY_MODELS,
    SUPPORTED_MODELS,
    LinearObjective,
    check_supported,
    is_supported,
    linear_objective,
)
from ._representer import LinearRepresenter, TopK, largest_magnitude, representer_kernel_weights

__all__ = [
    "KernelRidgePath",
    "LogisticPath",
    "MeanPath",
    "RidgePath",
    "GROUP_PENALTY_MODELS",
    "SUPPORTED_MODELS",
    "InfluenceFunction",
    "LinearObjective",
    "LinearRepresenter",
    "TopK",
    "check_supported",
    "influence_scores",
    "is_supported",
    "largest_magnitude",
    "l2_representer_scores",
    "linear_objective",
    "representer_kernel_weights",
    "select_output",
]
