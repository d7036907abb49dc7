"""The end-to-end instance report of the ``shap-instances report`` command, the loading of a user's CSV, and the
models the command line fits itself (:func:`fit_model`, the ``--model`` choices :data:`MODELS`)."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ._data import check_task, infer_task, load_table
from ._manifest import report_files
from ._models import (
    EXPLAINER_MODELS,
    MODELS,
    PROBE_ROWS,
    auto_model,
    categorical_columns,
    describe_preprocessing,
    encode,
    estimate_fit_seconds,
    final_estimator,
    fit_model,
    make_model,
    model_columns,
)
from ._plan import least_report_seconds

if TYPE_CHECKING:  # pragma: no cover - the lazy names below, for type checkers
    from ._html import Report as Report
    from ._html import Section as Section
    from ._report import run_report as run_report

#: Names whose modules import matplotlib, loaded on first use: the command line reads MODELS (``explain --help``)
#: without paying for them.
_LAZY = {"Report": "._html", "Section": "._html", "run_report": "._report"}

__all__ = [
    "EXPLAINER_MODELS", "MODELS", "PROBE_ROWS", "Report", "Section", "auto_model", "categorical_columns",
    "check_task", "describe_preprocessing", "encode", "estimate_fit_seconds", "final_estimator", "fit_model",
    "infer_task", "least_report_seconds", "load_table", "make_model", "model_columns", "report_files", "run_report",
]


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(_LAZY[name], __name__), name)
