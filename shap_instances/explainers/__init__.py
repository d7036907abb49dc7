"""Explainers, one module per explainer."""
