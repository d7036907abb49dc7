"""Sparse Isotonic Shapley Regression (SISR): ``sisr`` on a full coalition table, ``sisr_from_samples`` beyond.

:func:`check_sparsity` and :func:`check_options` validate SISR's arguments before any payoff is evaluated.
"""

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
           "check_sparsity", "isotonic_transform"]
