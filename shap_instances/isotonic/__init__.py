"""Sparse Isotonic Shapley Regression (SISR): ``sisr`` on a full coalition table, ``sisr_from_samples`` beyond."""

from ._sisr import MonotoneTransform, SISRResult, gram_eigenvalue, sisr, sisr_from_samples

__all__ = ["sisr", "sisr_from_samples", "SISRResult", "MonotoneTransform", "gram_eigenvalue"]
