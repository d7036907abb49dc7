"""Plots over instances; every function takes ``ax=None, show=True`` and returns the Axes when ``show=False``."""

__all__: list[str] = []
