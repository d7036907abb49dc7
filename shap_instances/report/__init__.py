"""The end-to-end instance report of the ``shap-instances report`` command."""

from ._html import Report, Section
from ._report import run_report

__all__ = ["Report", "Section", "run_report"]
