"""The end-to-end instance report of the ``shap-instances report`` command, the loading of a user's CSV, and the
models the command line fits itself (:func:`fit_model`, the ``--model`` choices :data:`MODELS`)."""

from ._data import check_task, infer_task, load_table
from ._html import Report, Section
from ._models import (
    EXPLAINER_MODELS,
    MODELS,
    auto_model,
    categorical_columns,
    describe_preprocessing,
    encode,
    final_estimator,
    fit_model,
    make_model,
)
from ._report import run_report

__all__ = [
    "EXPLAINER_MODELS", "MODELS", "Report", "Section", "auto_model", "categorical_columns", "check_task",
    "describe_preprocessing", "encode", "final_estimator", "fit_model", "infer_task", "load_table", "make_model",
    "run_report",
]
