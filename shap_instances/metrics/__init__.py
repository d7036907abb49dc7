"""Evaluation metrics: deletion curves, removal experiments, trust scores, approximation errors."""

__all__: list[str] = []
