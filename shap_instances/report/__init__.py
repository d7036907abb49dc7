"""The end-to-end instance report of the ``shap-instances report`` command."""

from ._html import Report, Section

__all__ = ["Report", "Section"]
