"""Shapley-value estimators for vector-valued games.

Every estimator has ``estimate(game) -> ShapleyResult`` (the :class:`Approximator` protocol) and takes its
budget and ``random_state`` in its constructor, so a new estimator is a small class. ``random_state`` is read by
:func:`shap_instances.utils.check_random_state` at every ``estimate``: an int gives the same result on every
call and for every ``n_jobs``, a ``numpy.random.Generator`` advances from call to call.
:class:`KernelCoalitionSampler` is the coalition design of :class:`KernelEstimator`, usable on its own;
:func:`shapley_weights` and :func:`kernel_weights` are the weights by coalition size.
:func:`dask_scheduler` sends the parallel work of the estimators inside a ``with`` block to a dask cluster.
"""

from ._parallel import dask_scheduler
from ._protocol import Approximator
from ._result import ShapleyResult
from ._weights import kernel_weights, shapley_weights
from .closed_form import ClosedFormEstimator
from .exact import ExactEstimator
from .influence import RidgeInfluenceEstimator
from .kernel import KernelEstimator
from .permutation import PermutationEstimator
from .sampling import CoalitionDesign, KernelCoalitionSampler

__all__ = [
    "Approximator",
    "ClosedFormEstimator",
    "CoalitionDesign",
    "ExactEstimator",
    "KernelCoalitionSampler",
    "KernelEstimator",
    "PermutationEstimator",
    "RidgeInfluenceEstimator",
    "ShapleyResult",
    "dask_scheduler",
    "kernel_weights",
    "shapley_weights",
]
