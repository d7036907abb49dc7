"""The ``shap-instances`` command: ``report`` (the main job), ``list`` and ``explain``.

Bad input (a missing file, a missing target column, NaNs, an unknown explainer, an explainer that cannot
explain the chosen model) ends with one line on stderr and exit code 2, never a traceback; Ctrl-C ends with
one line and exit code 130. Outputs never destroy data: ``--out`` may not be the input file, an existing file
is overwritten only with ``--force``, and a report is written into a temporary folder renamed into place, so an
interrupted run leaves no half report.

One module per command (:mod:`._report`, :mod:`._list`, :mod:`._explain`; ``explain --explain FILE`` streams
through :mod:`._stream`, :mod:`._parts` and :mod:`._sink`), beside the parser and its option types
(:mod:`._options`), the inputs every command checks (:mod:`._inputs`), the time budget (:mod:`._budget`) and the
tables written (:mod:`._tables`).

Start-up: at module level the command line imports the standard library, ``exceptions`` and ``registry`` only
(no shap, scikit-learn or pandas), so ``--version`` and ``--help`` answer at once; a command imports what it uses.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
import warnings
from collections.abc import Callable

from ..exceptions import ShapInstancesError, ShapInstancesWarning
from ._budget import _STARTED  # noqa: F401 - imported first: --time-budget counts from the import of the command line
from ._explain import _cmd_explain
from ._list import _cmd_list
from ._options import _joined_negatives, _parser, _UsageError
from ._report import _cmd_report

__all__ = ["main"]


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``shap-instances`` console script; returns the exit code.

    ``argv`` None (the console script, ``python -m shap_instances``) reads ``sys.argv``, and the report's
    ``--time-budget`` counts from the start of the process; with ``argv`` given (a call from Python), from this call.

    Examples
    --------
    >>> from shap_instances.cli import main
    >>> main(["list"])  # doctest: +ELLIPSIS
    boosting ...
    0
    """
    called_at = time.perf_counter()
    parser = _parser()
    try:
        args = parser.parse_args(_joined_negatives(sys.argv[1:] if argv is None else list(argv)))
    except _UsageError as exc:
        print(f"shap-instances: error: {exc}", file=sys.stderr)
        return 2
    args.called_at = None if argv is None else called_at
    commands = {"list": _cmd_list, "explain": _cmd_explain, "report": _cmd_report}
    try:
        with warnings.catch_warnings(), _validating_once(args.command):
            warnings.simplefilter("ignore", category=FutureWarning)
            warnings.showwarning = _one_line_warnings(warnings.showwarning)  # restored by catch_warnings
            return commands[args.command](args)
    except KeyboardInterrupt:
        print("shap-instances: interrupted; nothing was written", file=sys.stderr)
        return 130
    except (OSError, ValueError, KeyError, ShapInstancesError) as exc:
        message = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
        print(f"shap-instances: error: {message}", file=sys.stderr)
        return 2
    except Exception as exc:  # noqa: BLE001 - a bug: still one line, with a way to see the traceback
        if os.environ.get("SHAP_INSTANCES_DEBUG"):
            raise
        print(f"shap-instances: internal error: {type(exc).__name__}: {exc} "
              "(set SHAP_INSTANCES_DEBUG=1 for the traceback, and please report it)", file=sys.stderr)
        return 1


def _one_line_warnings(shown: Callable[..., None]) -> Callable[..., None]:
    """A ``warnings.showwarning`` that writes the package's own warnings as one line, like the command's errors
    (``shap-instances: warning: ...``), not Python's file, line number and source line; other libraries' warnings
    go to ``shown`` (as Python shows them)."""
    def show(message, category, filename, lineno, file=None, line=None) -> None:
        if issubclass(category, ShapInstancesWarning):
            print(f"shap-instances: warning: {message}", file=sys.stderr if file is None else file)
        else:
            shown(message, category, filename, lineno, file, line)

    return show


def _validating_once(command: str) -> contextlib.AbstractContextManager:
    """A command that reads data validates each object once (:func:`shap_instances.utils.validating_once`);
    ``list`` reads none, and imports no validation."""
    if command == "list":
        return contextlib.nullcontext()
    from ..utils import validating_once

    return validating_once()
