"""The end-to-end instance report of the ``shap-instances report`` command, and the loading of a user's CSV."""

from ._data import check_task, infer_task, load_table
from ._html import Report, Section
from ._report import run_report

__all__ = ["Report", "Section", "check_task", "infer_task", "load_table", "run_report"]
