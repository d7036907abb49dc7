"""The command line's parser: its options, and the argparse types that read and refuse their values in one place
(:func:`shap_instances.utils.parse_number` against an interval)."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any, NoReturn

from ..exceptions import ShapInstancesError


class _ModelChoices(Sequence):
    """The ``--model`` choices, :data:`shap_instances.report.MODELS`, imported when argparse checks or lists them.

    argparse reads the choices of an option without a ``metavar`` when the parser is built, so ``--model`` has one.
    """

    def __getitem__(self, index):
        from ..report import MODELS

        return MODELS[index]

    def __len__(self) -> int:
        from ..report import MODELS

        return len(MODELS)


class _UsageError(Exception):
    """A command line argparse cannot read (an unknown option, a bad number...): one line, exit code 2."""


class _Parser(argparse.ArgumentParser):
    """argparse's parser whose usage errors are one line (``shap-instances: error: ...``, exit 2), as the commands'
    errors are, instead of the usage text and a ``SystemExit``."""

    def error(self, message: str) -> NoReturn:
        raise _UsageError(f"{message} ({self.prog} --help lists the options)")


class _Number:
    """The argparse type of every numeric option: :func:`shap_instances.utils.parse_number` against the option's
    entry of :data:`shap_instances.utils.RUN_OPTIONS` (finite, within a sane range; the ranges ``run_report``
    checks too), so every number of the command line is read and refused in one place."""

    def __init__(self, option: str) -> None:
        self.option = option
        self.__name__ = "number"  # argparse names the type in some of its messages

    def __call__(self, text: str) -> float | int:
        from ..utils import RUN_OPTIONS, parse_number

        number = RUN_OPTIONS[self.option]
        try:
            return parse_number(text, "the value", number.command_line(), number.means)
        except ShapInstancesError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None


#: The numeric options' types, one per entry of RUN_OPTIONS.
_SECONDS, _GIB, _EVALS = _Number("time_budget"), _Number("max_memory"), _Number("max_evals")
_ROWS, _BYTES, _SEED = _Number("rows"), _Number("block_size"), _Number("seed")


def _joined_negatives(argv: list[str]) -> list[str]:
    """``--time-budget -inf`` as ``--time-budget=-inf``: argparse takes a value that starts with '-' (and is not
    a plain negative number) for an option and says only "expected one argument"; joined, the value reaches the
    option's type, which says what is wrong with it."""
    joined: list[str] = []
    for token in argv:
        if joined and joined[-1] in _NUMERIC_OPTIONS and token.startswith("-") and token not in _NUMERIC_OPTIONS:
            joined[-1] = f"{joined[-1]}={token}"
        else:
            joined.append(token)
    return joined


#: The options read by a :class:`_Number` (:func:`_number_option` adds them).
_NUMERIC_OPTIONS: set[str] = set()


def _number_option(parser: argparse.ArgumentParser, option: str, number: _Number, **options: Any) -> None:
    """``parser.add_argument(option, type=number, ...)``, the option noted in :data:`_NUMERIC_OPTIONS`."""
    _NUMERIC_OPTIONS.add(option)
    parser.add_argument(option, type=number, **options)


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="shap-instances",
        description="Explain models in terms of their training instances.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    sub = parser.add_subparsers(dest="command", required=True)

    report = sub.add_parser("report", help="analyse a dataset's instances end to end (HTML + PNG figures)")
    _add_data_arguments(report)
    report.add_argument("--out", default="shap-instances-report", help="output folder (default: %(default)s)")
    _number_option(report, "--seed", _SEED, default=0, help="random seed (default: %(default)s)")
    report.add_argument("--silent", action="store_true", help="no progress output")
    _number_option(report, "--time-budget", _SECONDS, default=180.0, metavar="SECONDS",
                        help="plan every section to finish within about this many seconds, from measured costs, "
                             "and spend it on precision: the residual decomposition runs until its errors are "
                             "small or the time is spent; parts still too imprecise are listed as 'not enough "
                             "precision' with the budget they need (default: %(default)s)")
    _number_option(report, "--max-evals", _EVALS, default=None, metavar="N",
                        help="most evaluations (refits on subsets of the training rows; n + 1 per permutation of "
                             "n rows) of the residual decomposition; refused before any work when too few "
                             "(default: the time budget alone)")
    _number_option(report, "--max-memory", _GIB, default=None, metavar="GIB",
                        help="memory budget in GiB for the report's large arrays: the sampled residual decomposition "
                             "is sized to it, and a budget too small for the data is refused before any work "
                             "(default: half the memory available)")
    report.add_argument("--model-file", default=None, metavar="PATH",
                        help="a fitted model saved with shap_instances.utils.save_model (loaded without running "
                             "code), instead of --model: sections refit clones of it on the training rows, the "
                             "forest section only for a random forest (docs: report.md)")
    report.add_argument("--force", action="store_true", help="write into --out even if it is a folder that holds "
                        "something other than an earlier report: only the report's files are written (listed in "
                        "the folder's .shap-instances-report.json); nothing else in the folder is touched, and a "
                        "file of the same name as one of the report's is refused, not replaced")

    sub.add_parser("list", help="list the registered explainers, plugins included")

    explain = sub.add_parser("explain", help="run one explainer and write its values to CSV or Parquet")
    _add_explain_arguments(explain)
    return parser


def _add_explain_arguments(explain: argparse.ArgumentParser) -> None:
    """The options of ``explain``."""
    _add_data_arguments(explain)
    explain.add_argument("--explainer", default="auto", help="registered explainer name, or auto")
    _number_option(explain, "--rows", _ROWS, default=20,
                         help="explain the first ROWS rows, at least 1 (default: %(default)s)")
    explain.add_argument("--out", required=True, help="output file, .csv or .parquet; with --explain also NAME.npy, a "
                         "folder of memory-mapped arrays (values.npy, base_values.npy; utils.memmap_explanation)")
    _number_option(explain, "--seed", _SEED, default=0, help="random seed (default: %(default)s)")
    explain.add_argument("--force", action="store_true", help="overwrite an existing --out file")
    explain.add_argument("--explain", metavar="FILE",
                         help="explain every row of FILE (.parquet or .csv, the columns of --data; its target column, "
                              "if any, goes to explainers that take labels), read partition by partition (Parquet: "
                              "one per row group; CSV: --block-size bytes) and written partition by partition into "
                              "--out: a folder of Parquet parts, or one CSV file; --rows is then ignored")
    explain.add_argument("--model-file", default=None, metavar="PATH",
                         help="explain this fitted model (a pipeline or an estimator, fitted on --data and --target) "
                              "instead of fitting --model: a file written by shap_instances.utils.save_model, read "
                              "without running code from it (classes of scikit-learn, NumPy, SciPy, XGBoost, LightGBM "
                              "only)")
    explain.add_argument("--format", choices=("wide", "long"), default="wide",
                         help="wide: one column per player (and output); long: one (row, player[, output], value) "
                              "line per value (default: %(default)s)")
    _number_option(explain, "--top-k", _ROWS, default=None, metavar="K",
                         help="keep each row's K values of largest absolute value (long format); with --explain by "
                              "default 10 when the instance values of all rows would exceed --max-memory")
    _number_option(explain, "--max-memory", _GIB, default=None, metavar="GIB",
                         help="memory for the table written (refused above it, with the options that make it "
                              "smaller); with --explain, for the values of all rows before --top-k 10 is chosen "
                              "(default: half the available memory)")
    _number_option(explain, "--block-size", _BYTES, default=64 * 2**20, metavar="BYTES",
                         help="with --explain and a CSV file: bytes of CSV per partition (default: %(default)s)")
    _number_option(explain, "--time-budget", _SECONDS, default=None, metavar="SECONDS",
                         help="seconds for the whole command, from its start: on 8,000 rows or more, --model's fit is "
                              "estimated from fits on 1,000 and 2,000 rows first, refused at once if it cannot fit; "
                              "an explainer that samples (residual) is planned from one timed refit and stops in "
                              "time, or is refused at once when even one permutation pair cannot fit; loo likewise "
                              "from its full fit; isotonic samples the coalitions that fit (a probe of 8) or is "
                              "refused; other explainers are timed on two rows, the rest refused when it cannot "
                              "fit (default: no limit; a run estimated above 24 hours is refused)")
    _number_option(explain, "--max-evals", _EVALS, default=None, metavar="N",
                         help="budget in evaluations (refits) for the explainers that take one (residual, isotonic)")
    explain.add_argument("--scheduler", default=None, metavar="ADDRESS",
                         help="with --explain: explain the partitions on a dask cluster (a scheduler address, or "
                              "'local' for one worker process per core); default: here, one partition at a time")


def _add_data_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--data", help="CSV file (default: scikit-learn's diabetes data)")
    parser.add_argument("--target", help="target column of --data")
    parser.add_argument("--task", choices=("regression", "classification"), help="default: inferred")
    parser.add_argument("--model", choices=_ModelChoices(), default="auto", metavar="MODEL",  # metavar: no import
                        help="model to fit, one of %(choices)s, in a pipeline that standardises numeric columns and "
                             "one-hot encodes string columns (default: %(default)s: one the explainer supports)")
    parser.add_argument("--dropna", action="store_true", help="drop rows with missing values")


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("shap-instances")
    except PackageNotFoundError:  # pragma: no cover - running from a source tree
        return "unknown"
