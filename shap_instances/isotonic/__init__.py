"""Sparse Isotonic Shapley Regression (SISR): ``sisr`` on a full coalition table, ``sisr_from_samples`` beyond.

:func:`check_sparsity` and :func:`check_options` validate SISR's arguments before any payoff is evaluated;
:func:`coalition_payoffs`, :func:`coalitions_per_batch`, :func:`check_payoff_memory` and :func:`fit_payoffs` build
the coalition table of a payoff and fit it, :func:`plan_coalitions` sizes it to a time budget (what
``IsotonicShapleyExplainer`` delegates to).
"""

from ._payoffs import check_payoff_memory, coalition_payoffs, coalitions_per_batch, fit_payoffs, plan_coalitions
from ._sisr import (
    MonotoneTransform,
    SISRResult,
    check_options,
    check_sparsity,
    gram_eigenvalue,
    sisr,
    sisr_from_samples,
)
from ._transform_plot import isotonic_transform

__all__ = ["sisr", "sisr_from_samples", "SISRResult", "MonotoneTransform", "gram_eigenvalue", "check_options",
           "check_sparsity", "isotonic_transform", "check_payoff_memory", "coalition_payoffs", "coalitions_per_batch",
           "fit_payoffs", "plan_coalitions"]
