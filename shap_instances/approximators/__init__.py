"""Shapley-value estimators for vector-valued games.

Every estimator has ``estimate(game) -> ShapleyResult`` (the :class:`Approximator` protocol) and takes its
budget and ``random_state`` in its constructor, so a new estimator is a small class. ``random_state`` is read by
:func:`shap_instances.utils.check_random_state` at every ``estimate``: an int gives the same result on every
call and for every ``n_jobs``, a ``numpy.random.Generator`` advances from call to call.
:func:`random_permutations` and :func:`random_coalitions` are the one sampler of every approximator and
valuation estimator; :class:`KernelCoalitionSampler` is the coalition design of :class:`KernelApproximator`,
usable on its own;
:func:`shapley_weights` and :func:`kernel_weights` are the weights by coalition size.
:class:`WeightedPermutationApproximator` (any semivalue), :class:`MSRBanzhafApproximator`,
:class:`RegressionBanzhafApproximator` and :class:`LeaveOneOutApproximator` estimate the semivalues of data
valuation (``shap_instances.valuation.semivalue_approximator`` chooses one by name).
:func:`dask_scheduler` sends the parallel work of the estimators inside a ``with`` block to a dask cluster.
:func:`format_seconds` writes a duration as the budget messages do.
"""

from ._budget import (
    DEFAULT_TIME_LIMIT,
    RunClock,
    StagePace,
    Throughput,
    bounded_probe,
    check_time_left,
    format_seconds,
)
from ._parallel import dask_scheduler
from ._protocol import Approximator, SemivalueWeights
from ._result import ShapleyResult
from ._weights import kernel_weights, shapley_weights
from .banzhaf import MSRBanzhafApproximator, RegressionBanzhafApproximator
from .closed_form import ClosedFormApproximator
from .control_variate import (
    ControlVariateApproximator,
    FirstOrderGame,
    LabelShareGame,
    control_game,
    first_order_game,
    label_share_game,
)
from .exact import ExactApproximator
from .influence import RidgeInfluenceApproximator
from .kernel import KernelApproximator
from .leave_one_out import LeaveOneOutApproximator
from .permutation import PermutationApproximator, stratified_permutations
from .sampling import PERMUTATION_DRAWS, CoalitionDesign, KernelCoalitionSampler, random_coalitions, random_permutations
from .stratified import PlaceStratifiedApproximator, cuts_walks
from .weighted_permutation import WeightedPermutationApproximator

__all__ = [
    "Approximator",
    "ClosedFormApproximator",
    "CoalitionDesign",
    "ControlVariateApproximator",
    "ExactApproximator",
    "FirstOrderGame",
    "KernelCoalitionSampler",
    "KernelApproximator",
    "LeaveOneOutApproximator",
    "MSRBanzhafApproximator",
    "RegressionBanzhafApproximator",
    "SemivalueWeights",
    "WeightedPermutationApproximator",
    "check_time_left",
    "LabelShareGame",
    "PermutationApproximator",
    "PlaceStratifiedApproximator",
    "RidgeInfluenceApproximator",
    "ShapleyResult",
    "dask_scheduler",
    "format_seconds",
    "DEFAULT_TIME_LIMIT",
    "RunClock",
    "StagePace",
    "Throughput",
    "bounded_probe",
    "first_order_game",
    "control_game",
    "label_share_game",
    "kernel_weights",
    "shapley_weights",
    "stratified_permutations",
    "random_permutations",
    "random_coalitions",
    "PERMUTATION_DRAWS",
    "cuts_walks",
]
