"""The ``shap-instances`` command: ``report`` (the main job), ``list`` and ``explain``.

Bad input (a missing file, a missing target column, NaNs, an unknown explainer, an explainer that cannot
explain the chosen model) ends with one line on stderr and exit code 2, never a traceback; Ctrl-C ends with
one line and exit code 130. Outputs never destroy data: ``--out`` may not be the input file, an existing file
is overwritten only with ``--force``, and a report is written into a temporary folder renamed into place, so an
interrupted run leaves no half report.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import inspect
import math
import os
import shutil
import sys
import tempfile
import time
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NoReturn, cast

from ._deprecated import REMOVED_IN
from .exceptions import BudgetError, DataValidationError, ShapInstancesError, UnsupportedModelError
from .registry import RENAMED_EXPLAINERS, SHAP_ALGORITHMS, canonical_name

__all__ = ["main"]

_STARTED = time.perf_counter()  # the report's --time-budget counts from here, loading the CSV included

# Start-up: at module level this file imports the standard library, ``exceptions`` and ``registry`` only (no
# shap, scikit-learn or pandas), so ``--version`` and ``--help`` answer at once; a command imports what it uses.


class _ModelChoices(Sequence):
    """The ``--model`` choices, :data:`shap_instances.report.MODELS`, imported when argparse checks or lists them.

    argparse reads the choices of an option without a ``metavar`` when the parser is built, so ``--model`` has one.
    """

    def __getitem__(self, index):
        from .report import MODELS

        return MODELS[index]

    def __len__(self) -> int:
        from .report import MODELS

        return len(MODELS)


class _UsageError(Exception):
    """A command line argparse cannot read (an unknown option, a bad number...): one line, exit code 2."""


class _Parser(argparse.ArgumentParser):
    """argparse's parser whose usage errors are one line (``shap-instances: error: ...``, exit 2), as the commands'
    errors are, instead of the usage text and a ``SystemExit``."""

    def error(self, message: str) -> NoReturn:
        raise _UsageError(f"{message} ({self.prog} --help lists the options)")


class _Number:
    """The argparse type of every numeric option: :func:`shap_instances.utils.parse_number` against an interval
    (finite, within a sane range), so every number of the command line is read and refused in one place."""

    def __init__(self, integral: bool, low: float, high: float, means: str) -> None:
        self.integral, self.low, self.high, self.means = integral, low, high, means
        self.__name__ = "number"  # argparse names the type in some of its messages

    def __call__(self, text: str) -> float | int:
        import numbers

        from .utils import Interval, parse_number

        allowed = Interval(numbers.Integral if self.integral else numbers.Real, self.low, self.high)
        try:
            return parse_number(text, "the value", allowed, self.means)
        except ShapInstancesError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None


#: The numeric options' types: a time budget from 1 s to 30 days, memory from 1 MiB to 1 PiB, counts from 1.
_SECONDS = _Number(False, 1, 30 * 86400, "seconds, from 1 s to 30 days")
_GIB = _Number(False, 1e-6, 2**20, "GiB, from 1e-6 (1 KiB) to 1 PiB")
_EVALS = _Number(True, 1, 10**15, "a number of evaluations")
_ROWS = _Number(True, 1, 10**12, "a number of rows")
_BYTES = _Number(True, 1, 2**40, "bytes, from 1 to 1 TiB")
_SEED = _Number(True, 0, 2**32 - 1, "a random seed, a whole number from 0 to 2**32 - 1")


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


def _load(args):
    from .report import check_task, infer_task, load_table

    if args.data is None:
        if args.target is not None:
            raise ValueError(f"--target {args.target} needs --data, the CSV file it is a column of (without --data "
                             "the embedded diabetes data is used)")
        from .datasets import load_diabetes

        X, y = load_diabetes()
        return X, y, args.task or "regression"
    if args.target is None:
        raise ValueError("--data needs --target, the name of the target column")
    X, y = load_table(args.data, args.target, dropna=args.dropna)
    task = args.task or infer_task(y)
    check_task(y, task, args.target)
    return X, y, task


def _check_output(out: Path, args, *, folder: bool) -> None:
    """Refuse an output that would destroy data: the input file itself (by path, symbolic or hard link), a folder
    holding it, or something else there already (a folder is taken for an earlier report only by its manifest)."""
    data = getattr(args, "data", None)
    if data is not None and (out.resolve() == Path(data).resolve() or _same_file(out, Path(data))):
        raise ValueError(f"--out {out} is the input file --data (or a link to it); choose another path")
    if data is not None and folder and Path(data).resolve().is_relative_to(out.resolve()):
        raise ValueError(f"--out {out} contains the input file --data; choose another folder")
    if not folder and not (getattr(args, "explain", None) and out.suffix in (".parquet", ".npy")):
        if not out.parent.is_dir():
            raise ValueError(f"--out {out}: its folder {out.parent} does not exist (or is not a folder); create it "
                             "first or choose another path")
        if out.is_dir():
            raise ValueError(f"--out {out} is a folder; it is not replaced: choose a file path")
    if not os.path.lexists(out):
        return
    if not folder:
        if not args.force:
            raise ValueError(f"--out {out} exists; choose another path or pass --force to overwrite it")
        return
    from .report import report_files

    if not out.is_dir():
        raise ValueError(f"--out {out} is a file or a link to nothing, not a folder; it is not replaced: choose "
                         "another path")
    earlier = report_files(out)
    if earlier or not any(out.iterdir()):
        return
    if not args.force:
        raise ValueError(f"--out {out} is a folder that holds something other than a shap-instances report (it has "
                         "no report manifest); choose another folder, or pass --force to add the report's files to "
                         "it (the folder's other files are kept)")
    if os.path.lexists(out / "index.html"):
        raise ValueError(f"--out {out} holds an index.html that no shap-instances report wrote (the folder has no "
                         "report manifest); it is not replaced: choose another folder")


def _same_file(a: Path, b: Path) -> bool:
    """Whether two paths are one file (same device and inode: hard links, symbolic links)."""
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def _cmd_list(args) -> int:
    import shap_instances as si

    rows = []
    for name, cls in si.list_explainers().items():
        module = cls.__module__.split(".")[0]
        origin = "built-in" if module == "shap_instances" else f"plugin ({module})"
        doc = (inspect.getdoc(cls) or "").splitlines()[0] if inspect.getdoc(cls) else ""
        rows.append((name, cls.__name__, origin, doc))
    widths = [max(len(row[column]) for row in rows) for column in range(3)] if rows else [0, 0, 0]
    for name, class_name, origin, doc in rows:  # columns as wide as their longest entry (plugin names vary)
        print(f"{name:<{widths[0]}}  {class_name:<{widths[1]}}  {origin:<{widths[2]}}  {doc}")
    return 0


def _call_explainer(explainer, X, y):
    """Call an explainer, passing the labels where its contract uses them (``call_y``: residual, KNN-Shapley)."""
    return explainer(X) if getattr(explainer, "call_y", "none") == "none" else explainer(X, y)


def _cmd_explain(args) -> int:
    import shap_instances as si

    from .report import auto_model, encode, final_estimator, fit_model
    from .utils import precision_summary, spreadsheet_safe, write_atomically

    out = Path(args.out)
    if out.suffix not in (".csv", ".parquet", ".npy"):
        raise ValueError(f"--out must end in .csv or .parquet (or .npy with --explain), got {out.name}")
    if out.suffix == ".npy" and args.explain is None:
        raise ValueError("--out NAME.npy writes the values of --explain FILE in place, partition by partition; "
                         "for --rows choose a .csv or .parquet file")
    if out.suffix == ".parquet" and importlib.util.find_spec("pyarrow") is None:
        raise ValueError("writing Parquet needs pyarrow (pip install 'shap-instances[parquet]'); or use a .csv file")
    if args.explain is not None:
        _check_stream_options(args, out)
    _check_output(out, args, folder=False)
    X, y, task = _load(args)
    if args.explain is not None:
        _check_explain_columns(Path(args.explain), [str(c) for c in X.columns])
    if args.explainer in RENAMED_EXPLAINERS:  # the command line shows no FutureWarning: say it on stderr
        print(f"shap-instances: --explainer {args.explainer} is deprecated and will be removed in shap-instances "
              f"{REMOVED_IN}; use --explainer {RENAMED_EXPLAINERS[args.explainer]}", file=sys.stderr)
    name = canonical_name(args.explainer)
    cls = None if name in ("auto", *SHAP_ALGORITHMS) else si.get_explainer(name)  # an unknown name fails here
    if args.model_file is not None:
        model_name, (model, X) = None, _load_model_file(args, X)
    else:
        model_name = auto_model(task, name) if args.model == "auto" else args.model
        _check_fit_time(args, model_name, task, X, y, name)
        model = fit_model(model_name, task, X, y, args.seed, explainer=name)
    if name == "auto":
        cls = _choose_explainer(model, X)
    if cls is None or _takes_pipeline(cls, model, X):  # shap's own and per-feature explainers: raw columns
        fitted, data = model, X
    if cls is None and not callable(fitted):  # shap's own algorithms call the model: give them its prediction
        fitted = fitted.predict_proba if task == "classification" else fitted.predict
    else:  # training rows as players: the bare estimator on the matrix it was fitted on (encoded names)
        fitted, data = final_estimator(model), encode(model, X)
    takes_y = cls is not None and getattr(cls, "requires_y", False)
    players = len(data) if cls is not None and getattr(cls, "players", "instances") == "instances" else data.shape[1]
    _check_output_size(args, out, min(args.rows, len(data)), players)  # before the work: at least one output
    budget = _budget_options(args, cls, name)
    try:
        explainer = si.Explainer(fitted, data, algorithm=name if cls is None else _registered_name(cls),
                                 **({"y": y} if takes_y else {}), **budget)
    except UnsupportedModelError as exc:
        if model_name is None:
            raise ValueError(f"--explainer {name} cannot explain the {type(final_estimator(model)).__name__} of "
                             f"--model-file {args.model_file}: {exc}") from exc
        raise ValueError(_model_hint(name, args.model, model_name, model, task, exc)) from exc
    with _command_line_remedies(args):
        if args.explain is not None:
            return _explain_file(args, explainer, model if data is not X else None, X.iloc[:1].assign(**{
                str(y.name): y.iloc[:1].to_numpy()}), list(X.columns), str(y.name))
        rows = data.iloc[: args.rows]
        timed = args.time_budget is not None and "max_time" not in budget  # shap's own algorithms too
        explanation = (_explain_in_time(args, explainer, rows, y.iloc[: args.rows], name) if timed else
                       _call_explainer(explainer, rows, y.iloc[: args.rows]))
    _check_output_size(args, out, len(rows), explanation.values[0].size)  # before writing: the exact width
    names = rows.index.astype(str)
    if args.format == "long" or args.top_k is not None:  # the rows named as the wide table names them
        table = _long_table(explanation, args.top_k)
        table = table.set_index(names[table["row"].to_numpy()].rename("row")).drop(columns="row")
    else:
        table = _wide_table(explanation, names)
    write_atomically(out, lambda path: table.to_parquet(path) if out.suffix == ".parquet" else
                     spreadsheet_safe(table).to_csv(path))
    lines = f" ({table.shape[0]:,} lines, long)" if table.shape[0] != len(rows) else ""
    print(f"{type(explainer).__name__}: {len(rows)} rows x {len(explanation.feature_names)} players -> {out}{lines}"
          f"; {precision_summary(explanation.values, getattr(explanation, 'error_std', None))}")
    return 0


#: The widest table ``explain`` writes (spreadsheets open 16,384 columns; pandas slows to a crawl beyond this).
_MAX_WIDE_COLUMNS = 100_000
#: Bytes of one value in a written table: a float64 in full in a CSV cell (25), a long line with its row and
#: player (40), or in Parquet (8, 16 long).
_BYTES_PER_VALUE = {(".csv", False): 25, (".csv", True): 40, (".parquet", False): 8, (".parquet", True): 16}


def _check_output_size(args, out: Path, n_rows: int, n_values: int) -> None:
    """Refuse an ``explain`` output that would be absurdly wide or large, before the work (``n_values`` a lower
    bound: the players) or before writing (exact): a wide table above :data:`_MAX_WIDE_COLUMNS` columns, a table
    larger than the free disk or than the memory budget (``--max-memory``) that builds it; the message names the
    options that make it small."""
    from .exceptions import InvalidParameterError
    from .utils import check_disk, check_memory

    long = args.format == "long" or args.top_k is not None
    smaller = ("--top-k K (each row's K largest values, one line each), fewer --rows, or --explain FILE with "
               "--out NAME.npy (memory-mapped arrays)")
    if not long and n_values + 1 > _MAX_WIDE_COLUMNS:
        raise InvalidParameterError(
            f"--out {out.name}: a wide table of {n_values + 1:,} columns (a base value and {n_values:,} values a row) "
            f"is refused: above {_MAX_WIDE_COLUMNS:,} columns spreadsheets and most readers cannot use it; "
            f"pass {smaller}, or --format long (one line per value)")
    kept = n_values if args.top_k is None else min(args.top_k, n_values)
    if out.suffix not in (".csv", ".parquet"):
        return
    what = f"--out {out.name}: {n_rows:,} rows x {kept:,} values"
    check_disk(n_rows * kept * _BYTES_PER_VALUE[out.suffix, long], out.parent, what, instead=f"Pass {smaller}.")
    budget = None if args.max_memory is None else args.max_memory * 2**30
    check_memory(3 * 8.0 * n_rows * kept, what + " (the table and its copies while it is built and written)",
                 max_memory=budget, instead=f"Pass {smaller}, or a larger --max-memory.")


def _explain_in_time(args, explainer, rows, y_rows, name: str):
    """The rows explained by an explainer without a time control, against ``--time-budget``: two rows first,
    timed (the second gives the cost of a row, set-up done), then the rest only if it fits in what is left, else
    refused (:class:`BudgetError` naming the budget that would work) before that work."""
    from .approximators import format_seconds
    from .utils import concat_explanations

    if len(rows) <= 2 or getattr(explainer, "stochastic", False):  # a sampling explainer: one call, one sample
        return _call_explainer(explainer, rows, y_rows)
    parts = []
    for i in (0, 1):
        started = time.perf_counter()
        parts.append(_call_explainer(explainer, rows.iloc[i:i + 1], y_rows.iloc[i:i + 1]))
    per_row = time.perf_counter() - started
    left = args.time_budget - _elapsed(args)
    estimate = per_row * (len(rows) - 2)
    if estimate > _EXPLAINER_SHARE * left:
        needed = math.ceil(_elapsed(args) + estimate / _EXPLAINER_SHARE) + 1
        raise BudgetError(f"refused before the rest of the work: --explainer {name} takes about {per_row:.3g} s a row "
                          f"(measured on the second row), so the {len(rows) - 2:,} rows left need about "
                          f"{format_seconds(estimate)}, more than the {max(left, 0):.0f} s left of --time-budget "
                          f"{args.time_budget:g}; pass --time-budget {needed} or more, or fewer --rows.", needed=needed)
    return concat_explanations([*parts, _call_explainer(explainer, rows.iloc[2:], y_rows.iloc[2:])])


def _check_fit_time(args, model_name: str, task: str, X, y, explainer: str) -> None:
    """Refuse at once a ``--model`` whose fit alone would outlast ``--time-budget``: on a table of at least four
    times the larger probe sample, the fit's time is estimated from two timed fits on samples and printed."""
    from .approximators import format_seconds
    from .report import PROBE_ROWS, estimate_fit_seconds

    if args.time_budget is None or len(X) < 4 * PROBE_ROWS[-1]:
        return
    seconds, how = estimate_fit_seconds(model_name, task, X, y, args.seed, explainer=explainer,
                                        max_seconds=args.time_budget - _elapsed(args))
    left = args.time_budget - _elapsed(args)
    if seconds > left:
        fast = ("ridge", "knn") if task == "regression" else ("logistic", "naive_bayes", "knn")
        faster = [name for name in fast if name != model_name]
        raise BudgetError(f"refused before the work: fitting --model {model_name} on {len(X):,} rows would take about "
                          f"{format_seconds(seconds)} ({how}), more than the {max(left, 0):.0f} s left of "
                          f"--time-budget {args.time_budget:g}; raise --time-budget, or choose a model that fits "
                          f"faster (--model {' or '.join(faster)}), or "
                          "explain a sample of the table")
    print(f"shap-instances: plan: fitting --model {model_name} on {len(X):,} rows, about {format_seconds(seconds)} "
          f"({how}); {left:.0f} s of --time-budget left", file=sys.stderr)


def _load_model_file(args, X):
    """(the fitted model of ``--model-file`` (safe format), the columns of ``X`` it takes); refused beside a
    ``--model``, unfitted, or fitted on columns that ``X`` (the --data table) lacks."""
    from sklearn.exceptions import NotFittedError
    from sklearn.utils.validation import check_is_fitted

    from .utils import load_model

    if args.model != "auto":
        raise ValueError(f"--model {args.model} fits a model and --model-file gives one: pass one of the two")
    with open(args.model_file, "rb") as stream:
        model = load_model(stream)
    try:
        check_is_fitted(model)
    except (NotFittedError, TypeError) as exc:
        raise ValueError(f"--model-file {args.model_file} holds a {type(model).__name__} that is not a fitted "
                         "estimator; fit it on --data and --target before saving it") from exc
    from .report import model_columns

    columns = model_columns(model, X, f"--model-file {args.model_file}")
    try:  # a file of trusted types may still hold a state no fit leaves (coefficients of text): say so here
        model.predict(columns.iloc[:2])
    except Exception as exc:  # noqa: BLE001 - whatever the model raises, the file's model is the cause
        raise DataValidationError(f"--model-file {args.model_file} holds a {type(model).__name__} that cannot "
                                  f"predict two rows of --data ({type(exc).__name__}: {exc}); save a model fitted "
                                  "on these columns with shap_instances.utils.save_model") from exc
    return model, columns


def _budget_options(args, cls, name: str) -> dict:
    """``max_time`` (what is left of ``--time-budget``, less a margin for writing) and ``max_evals`` for an
    explainer that takes them; a note on stderr when ``--time-budget`` cannot reach the explainer, and an error
    when ``--max-evals`` cannot."""
    takes = set() if cls is None else set(inspect.signature(cls).parameters)
    options: dict = {}
    if args.max_evals is not None:
        if "max_evals" not in takes:
            raise ValueError(f"--max-evals applies to the explainers that sample (residual, isotonic), not to "
                             f"{name}: its cost does not depend on a budget; leave --max-evals out")
        options["max_evals"] = args.max_evals
        if "max_exact_features" in takes:  # isotonic: enumerate 2^p coalitions only while they fit in --max-evals
            options["max_exact_features"] = max(1, min(20, int(math.log2(args.max_evals))))
    if args.time_budget is not None:
        left = args.time_budget - _elapsed(args)
        if left <= 0:
            raise BudgetError(f"--time-budget {args.time_budget:g} s was spent before the explainer started (loading "
                              f"the data and fitting the model took {_elapsed(args):.0f} s); raise it")
        if "max_time" in takes:
            options["max_time"] = max(_EXPLAINER_SHARE * left, 0.001)  # the rest: writing the table
            args.explainer_from = _elapsed(args)  # a refusal's max_time is then said as a --time-budget
        else:
            print(f"shap-instances: plan: {name} has no time control of its own (its cost is fixed by the data): "
                  f"its first two rows are timed, and the rest run only if they fit in the {left:.0f} s of "
                  "--time-budget left", file=sys.stderr)
    return options


#: Share of what is left of ``--time-budget`` given to an explainer's ``max_time`` (the rest: writing the output).
_EXPLAINER_SHARE = 0.9


@contextlib.contextmanager
def _command_line_remedies(args):
    """A :class:`BudgetError` from Python, with the options of the command line that shorten the run; the budget
    that would work, when the error names one (``needed``, a ``max_time``), as the ``--time-budget`` it takes."""
    try:
        yield
    except BudgetError as exc:
        works = ""
        if exc.needed is not None and getattr(args, "explainer_from", None) is not None:
            works = (f" That is --time-budget {math.ceil(args.explainer_from + exc.needed / _EXPLAINER_SHARE) + 1} "
                     f"or more here ({args.explainer_from:.0f} s went on start-up, loading and fitting).")
        raise BudgetError(f"{exc}{works} On the command line: a larger --time-budget SECONDS, --max-evals N, fewer "
                          f"--rows, or --model ridge, logistic or knn (fast refit paths)", needed=exc.needed) from exc


def _elapsed(args) -> float:
    """Seconds the command has run: since the process started as a program, since ``main`` from Python."""
    origin = getattr(args, "called_at", None)
    return max(time.perf_counter() - _STARTED, _process_age()) if origin is None else time.perf_counter() - origin


def _wide_table(explanation, index):
    """An Explanation as a table: base value column(s), then one column per player (per player and output)."""
    import numpy as np
    import pandas as pd

    values = np.asarray(explanation.values)
    columns = list(explanation.feature_names)
    base_columns = ["base_value"]
    if values.ndim == 3:  # one column per (player, output) and one base value per output
        outputs = explanation.output_names
        outputs = [str(o) for o in outputs] if outputs is not None else [str(k) for k in range(values.shape[2])]
        columns = [f"{c}|{o}" for c in columns for o in outputs]
        base_columns = [f"base_value|{o}" for o in outputs]
        values = values.reshape(values.shape[0], -1)
    base = np.asarray(explanation.base_values, dtype=np.float64).reshape(-1, len(base_columns))
    base = np.broadcast_to(base, (len(values), len(base_columns)))
    # one block (base values, then values) in column order: no concatenation of frames, one copy
    return pd.DataFrame(np.asfortranarray(np.hstack([base, values])), index=index, columns=base_columns + columns)


def _check_stream_options(args, out: Path) -> None:
    """Refuse ``--explain`` options that cannot work, before any model is fitted."""
    source = Path(args.explain)
    if source.suffix not in (".parquet", ".csv"):
        raise ValueError(f"--explain must be a .parquet or .csv file, got {source.name}")
    if not source.exists():
        raise ValueError(f"--explain {source}: no such file")
    if importlib.util.find_spec("dask") is None:
        raise ValueError("--explain reads its file partition by partition with dask: "
                         "pip install 'shap-instances[dask]'")
    if source.resolve() == out.resolve() or _same_file(source, out):
        raise ValueError(f"--out {out} is the --explain file (or a link to it); choose another path")
    if out.suffix == ".npy" and (args.format == "long" or args.top_k is not None):
        raise ValueError("--out NAME.npy holds the values array of every row (wide); --format long and --top-k "
                         "write .parquet or .csv")
    if os.path.lexists(out) and (out.is_dir() != (out.suffix != ".csv") or not out.exists()):
        kind = "a file" if out.suffix == ".csv" else "a folder"
        raise ValueError(f"--out {out} is not {kind} (a {out.suffix} output of --explain is {kind}; a broken link is "
                         "neither); it is not replaced: choose another path")
    if out.is_dir() and args.force and any(not _earlier_output(out, p) for p in out.iterdir()):
        raise ValueError(f"--out {out} is a folder that holds files other than those of an earlier --explain "
                         "run; choose another folder")


def _check_explain_columns(path: Path, columns: list[str]) -> None:
    """Refuse, before a model is fitted and before anything is written, an ``--explain`` file whose header cannot
    be read (not CSV, not Parquet, damaged) or that lacks columns of ``--data``."""
    try:
        if path.suffix == ".parquet":
            import pyarrow.parquet as pq

            names = [str(name) for name in pq.ParquetFile(path).schema_arrow.names]
        else:
            import pandas as pd

            names = [str(name) for name in pd.read_csv(path, nrows=0).columns]
    except (OSError, ValueError) as error:  # pandas' ParserError and pyarrow's ArrowInvalid are ValueErrors
        raise ValueError(f"--explain {path} cannot be read as {path.suffix[1:]} ({type(error).__name__}: "
                         f"{str(error)[:200]}); nothing was written: pass a {path.suffix[1:]} file with the columns "
                         "of --data") from None
    missing = [column for column in columns if column not in names]
    if missing:
        raise ValueError(f"--explain {path} lacks the columns {missing[:10]} of --data; nothing was written: add "
                         "them, or explain a file with the columns of --data")


#: The arrays of an ``--out NAME.npy`` folder (``utils.memmap_explanation`` reopens it).
_NPY_FIELDS = ("values", "base_values")


def _earlier_output(out: Path, path: Path) -> bool:
    """Whether ``path``, in the folder ``out``, is a file an ``--explain`` run writes there (replaced by --force)."""
    from .utils import MemmapWriter

    if path.name.startswith((MemmapWriter.STAGING, _staging_prefix(out))):  # left by a killed run
        return True
    if out.suffix == ".npy":  # names.json: written by versions before the completion marker
        return path.name in {MemmapWriter.MARKER, "names.json", *(f"{name}.npy" for name in _NPY_FIELDS)}
    return path.name.startswith("part-")


def _staging_prefix(out: Path) -> str:
    """The name's start of the staging file or folder of an ``--explain`` output ``out`` (a hidden name)."""
    return f".{out.name}.partial-"


def _explain_file(args, explainer, encoder, first, columns: list[str], target: str) -> int:
    """``explain --explain FILE``: every row of FILE, explained and written partition by partition (``first``:
    the first row of --data with its target, whose values give the shape of a ``.npy`` output)."""
    frame, offsets = _read_partitions(Path(args.explain), args.block_size)
    n_rows = offsets[-1] if isinstance(offsets, list) else offsets
    takes_y = getattr(explainer, "call_y", "none") != "none" and target in frame.columns
    frame = frame[[*columns, target] if takes_y else columns]
    options: dict[str, Any] = {"encoder": encoder, "columns": columns, "target": target if takes_y else None}
    npy = Path(args.out).suffix == ".npy"
    top_k = None if npy else _chosen_top_k(args, explainer, n_rows)
    sink = _PartWriter(Path(args.out), args.force)
    try:
        _explain_into(args, explainer, sink, frame, offsets, first, options, top_k)
        sink.finish()
    except BaseException:  # no half-written output that reads as a result (a .npy's unwritten rows are zeros)
        sink.discard()
        raise
    shape = "npy" if npy else "top " + str(top_k) if top_k else args.format
    print(f"{type(explainer).__name__}: {n_rows} rows -> {args.out} ({shape}, {sink.lines} lines)")
    return 0


def _explain_into(args, explainer, sink, frame, offsets, first, options: dict[str, Any], top_k: int | None) -> None:
    """The partitions of ``frame`` explained and written to ``sink`` (:func:`_explain_file`)."""
    import functools

    import numpy as np

    from .utils import explain_partitions

    n_rows = offsets[-1] if isinstance(offsets, list) else offsets
    npy = Path(args.out).suffix == ".npy"
    if npy:  # the files at their final size, from the values of a row of --data (no partition of FILE read for it)
        sink.allocate(_part_values(explainer, first[frame.columns], **options), n_rows)
    # Parquet row groups into Parquet parts or the .npy files: each worker writes its own (first rows known)
    here = not (isinstance(offsets, list) and len(offsets) == frame.npartitions + 1 and sink.folder)
    written: dict[str, Any] = {"out": None if here else str(sink.target.resolve()),
                               "offsets": None if here else offsets}
    call: Callable[..., Any] = (functools.partial(_part_values, **options, **written) if npy else
            functools.partial(_part_table, **options, long=args.format == "long", top_k=top_k, **written))
    if not here:  # each worker reads its own row groups (the next slice read while one is explained)
        read = list(frame.columns)
        frame = np.array([_RowGroup(str(Path(args.explain).resolve()), i, read) for i in range(len(offsets) - 1)],
                         dtype=object)
    if args.time_budget is not None:  # each partition gets its share; none starts that cannot end in time
        n_parts = frame.npartitions if here else len(frame)
        call = _PartitionBudget(call, args, explainer, n_parts)
    explain_partitions(explainer, frame, scheduler=args.scheduler, call=call, sink=sink, numbered=not here,
                       rows_per_part=1 if not here else None)


class _PartitionBudget:
    """``call`` of one ``--explain`` partition under ``--time-budget``: an explainer with ``max_time`` gets an equal
    share of what is left per partition, and a partition is refused (:class:`BudgetError`, the output discarded)
    when the time left cannot hold it at the pace measured on the partitions done so far (here, or on the worker).
    Picklable: the deadline is wall-clock time."""

    def __init__(self, call, args, explainer, n_parts: int) -> None:
        left = args.time_budget - _elapsed(args)
        self.call, self.budget, self.n_parts = call, args.time_budget, max(n_parts, 1)
        self.deadline = time.time() + _EXPLAINER_SHARE * left
        self.started, self.done = time.time(), 0
        if getattr(explainer, "max_time", None) is not None:
            explainer.max_time = max(_EXPLAINER_SHARE * left / self.n_parts, 0.001)

    def __call__(self, explainer, part, *args, **kwargs):
        now = time.time()
        pace = (now - self.started) / self.done if self.done else 0.0
        if now + pace > self.deadline:
            left = self.n_parts - self.done
            needed = math.ceil(self.budget + left * max(pace, 1.0) / _EXPLAINER_SHARE)
            raise BudgetError(f"refused before the rest of the work: {self.done} partition(s) took "
                              f"{pace:.3g} s each, and the {left} left cannot end within --time-budget "
                              f"{self.budget:g}; pass --time-budget {needed} or more, or explain a smaller file "
                              "(nothing was written)")
        result = self.call(explainer, part, *args, **kwargs)
        self.done += 1
        return result


def _read_partitions(path: Path, block_size: int):
    """(dask DataFrame of ``path``, the first row of each row group and the number of rows (Parquet), or the
    number of rows (CSV)): a partition per Parquet row group, or per CSV block."""
    import dask.dataframe as dd
    import numpy as np

    if path.suffix == ".parquet":
        import pyarrow.parquet as pq
        from dask import delayed

        parquet = pq.ParquetFile(path)
        sizes = [parquet.metadata.row_group(i).num_rows for i in range(parquet.metadata.num_row_groups)]
        # each row group read by pyarrow itself: dask's read_parquet took three times as long for the same rows
        parts = [delayed(_read_row_group)(str(path), i) for i in range(len(sizes))]
        meta = parquet.schema_arrow.empty_table().to_pandas()
        return dd.from_delayed(parts, meta=meta, verify_meta=False), np.cumsum([0, *sizes]).tolist()
    from .utils import scan_text_file

    n_lines, ends_with_newline = scan_text_file(path, "--explain")  # less the header; a last line without one too
    return dd.read_csv(path, blocksize=block_size), n_lines - 1 + (not ends_with_newline)


def _read_row_group(path: str, i: int):
    """Row group ``i`` of the Parquet file ``path``, as a pandas DataFrame (one partition of ``--explain``)."""
    import pyarrow.parquet as pq

    return pq.ParquetFile(path).read_row_group(i).to_pandas()


class _RowGroup:
    """Row group ``index`` of the Parquet file ``path`` (its ``columns``), read where it is explained: by
    :func:`_slices`, slice by slice, each slice read by a thread while the one before is explained."""

    def __init__(self, path: str, index: int, columns: list[str]) -> None:
        self.path, self.index, self.columns = path, index, columns

    def slices(self):
        """(first row, rows) of the :data:`_WRITE_SLICES` slices, as pandas tables numbered from 0."""
        import pyarrow.parquet as pq

        parquet = pq.ParquetFile(self.path)
        step = max(1, -(-parquet.metadata.row_group(self.index).num_rows // _WRITE_SLICES))
        batches = parquet.iter_batches(step, row_groups=[self.index], columns=self.columns, use_threads=False)
        start = 0
        for batch in _prefetched(batch.to_pandas() for batch in batches):
            yield start, batch
            start += len(batch)


def _prefetched(items):
    """The items of an iterator, the next one computed by a thread while the caller works on the current."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(1) as pool:
        pending = pool.submit(next, items, None)
        while (item := pending.result()) is not None:
            pending = pool.submit(next, items, None)
            yield item


def _chosen_top_k(args, explainer, n_rows: int) -> int | None:
    """``--top-k``, or 10 for an instance explainer whose values of all rows would exceed ``--max-memory``."""
    from .utils import available_memory_bytes

    if args.top_k is not None or getattr(explainer, "players", "") != "instances":
        return args.top_k
    players = len(getattr(explainer, "train_names_", None) or [])
    outputs = max(1, len(getattr(explainer, "output_names_", None) or []))
    needed = 8.0 * n_rows * players * outputs
    budget = args.max_memory * 2**30 if args.max_memory is not None else available_memory_bytes() / 2
    if needed <= budget:
        return None
    print(f"shap-instances: the values of {n_rows} rows x {players} training rows would take {needed / 2**20:,.0f} "
          f"MiB, more than --max-memory ({budget / 2**20:,.0f} MiB): writing each row's 10 largest (--top-k 10; "
          "pass --top-k K or a larger --max-memory to choose)", file=sys.stderr)
    return 10


def _part_table(explainer, part, *, encoder, columns: list[str], target: str | None, long: bool,
                top_k: int | None, out: str | None = None, offsets: list[int] | None = None, index: int = 0):
    """The table of one partition's values (run on a worker), its rows numbered from 0 within the partition; or,
    given ``out``, that table numbered from the partition's first row in the file and written to ``out`` as part
    ``index`` (the number of lines written is returned), by slices: a thread writes one slice while the next is
    explained (the rows are independent, so the values are those of one call on the whole partition)."""
    part = _one_part(part)
    options = {"encoder": encoder, "columns": columns, "target": target, "long": long, "top_k": top_k}
    if out is None or offsets is None:
        return _slice_table(explainer, part, **options)
    tables = (_numbered(_slice_table(explainer, rows, **options), offsets[index] + start)
              for start, rows in _slices(part))
    return _write_overlapped(tables, Path(out) / f"part-{index:05d}.parquet")


def _one_part(part):
    """A partition of ``explain --explain``: a table numbered from 0, or the :class:`_RowGroup` that an array of
    one holds."""
    if isinstance(part, _RowGroup):
        return part
    if not hasattr(part, "reset_index"):  # an array of one _RowGroup (a dask partition of the row groups)
        return part[0]
    return part.reset_index(drop=True)


#: Slices a worker's partition is explained and written in (the writing of one overlaps the next's explanation).
_WRITE_SLICES = 4


def _slices(part):
    """(first row, rows) of the :data:`_WRITE_SLICES` slices of the table ``part`` (or of a :class:`_RowGroup`),
    each numbered from 0."""
    if isinstance(part, _RowGroup):
        yield from part.slices()
        return
    step = max(1, -(-len(part) // _WRITE_SLICES))
    for start in range(0, max(len(part), 1), step):
        yield start, part.iloc[start:start + step].reset_index(drop=True)


def _overlapped(items, write) -> int:
    """``write(item)`` for each item of an iterator, in a thread while the iterator computes the next item; the
    sum of what ``write`` returned."""
    from concurrent.futures import ThreadPoolExecutor

    total, pending = 0, None
    with ThreadPoolExecutor(1) as pool:
        for item in items:
            if pending is not None:
                total += pending.result()
            pending = pool.submit(write, item)
        if pending is not None:
            total += pending.result()
    return total


def _slice_table(explainer, part, *, encoder, columns: list[str], target: str | None, long: bool,
                 top_k: int | None):
    """The values of the rows ``part`` as a wide or long table, rows numbered from 0."""
    explanation = _part_explanation(explainer, part, encoder=encoder, columns=columns, target=target)
    return (_long_table(explanation, top_k) if top_k is not None or long else
            _wide_table(explanation, part.index))


def _part_explanation(explainer, part, *, encoder, columns: list[str], target: str | None):
    """The Explanation of the rows ``part`` (a table of the --explain file's columns), encoded as --data was."""
    from .report import encode

    try:
        X = part[columns] if encoder is None else encode(encoder, part[columns])
        return explainer(X) if target is None else explainer(X, part[target])
    except ShapInstancesError as error:
        missing = [str(column) for column in columns if part[column].isna().any()]
        if not missing:
            raise
        raise type(error)(f"--explain: missing values in column(s) {', '.join(missing[:10])}, which the model does "
                          "not take (--dropna drops rows of --data only); impute them in the file first, or explain "
                          f"with a model that takes them (--explainer gap, say: its forest does). ({error})") from error


def _part_values(explainer, part, *, encoder, columns: list[str], target: str | None, out: str | None = None,
                 offsets: list[int] | None = None, index: int = 0):
    """``--out NAME.npy``: the values and base values of one partition (run on a worker), or, given ``out``,
    those written in place into the folder's files from the partition's first row in the file (the number of
    rows written is returned), by slices, as :func:`_part_table` writes Parquet parts."""
    from .utils import write_memmap_rows

    options = {"encoder": encoder, "columns": columns, "target": target}
    part = _one_part(part)
    if out is None or offsets is None:
        return _values_only(_part_explanation(explainer, part, **options))
    slices = ((offsets[index] + start, _values_only(_part_explanation(explainer, rows, **options)))
              for start, rows in _slices(part))
    return _overlapped(slices, lambda item: write_memmap_rows(out, *item))


def _values_only(explanation):
    """The values and base values of an Explanation (its names kept): what ``--out NAME.npy`` holds."""
    import shap

    return shap.Explanation(explanation.values, base_values=explanation.base_values,
                            feature_names=explanation.feature_names, output_names=explanation.output_names)


def _parquet_options(table) -> dict:
    """Options of pyarrow's Parquet writer for a table of values: no dictionary encoding but for the categorical
    columns (trying one on every float column, then giving it up, was most of the writing time), no compression
    (values hardly compress: 10% smaller, twice the time)."""
    categorical = [str(c) for c, dtype in table.dtypes.items() if dtype == "category"]
    return {"use_dictionary": categorical or False, "compression": "none"}


def _write_parquet(table, path: Path) -> None:
    """``table`` (pandas) written to the Parquet file ``path`` with :func:`_parquet_options`, without its index."""
    table.to_parquet(path, index=False, **_parquet_options(table))


def _write_overlapped(tables, path: Path) -> int:
    """Write the pandas tables of an iterator as row groups of one Parquet file, a thread writing each while the
    iterator computes the next; the number of lines written."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    with contextlib.ExitStack() as stack:
        writers: list = []

        def write(table) -> int:  # in the thread, one table at a time: the file opened with the first's schema
            arrow = pa.Table.from_pandas(table, preserve_index=False)
            if not writers:
                writers.append(stack.enter_context(pq.ParquetWriter(path, arrow.schema, **_parquet_options(table))))
            writers[0].write_table(arrow)
            return len(table)

        return _overlapped(tables, write)


def _numbered(table, offset: int):
    """A part's table with the column ``row`` (first) counted from ``offset``, the partition's first row in the file."""
    import numpy as np
    import pandas as pd

    if "row" in table.columns:
        return table.assign(row=table["row"] + offset)
    numbered = table.set_axis(pd.RangeIndex(len(table)))  # no copy of the values (a new block for the numbers)
    numbered.insert(0, "row", np.asarray(table.index) + offset)
    return numbered


def _long_table(explanation, top_k: int | None):
    """One line per value: row, player, (output,) value; ``top_k``: the row's largest in absolute value only;
    the base values are the lines of player ``base_value``."""
    import numpy as np
    import pandas as pd

    values = np.asarray(explanation.values)
    values = values[:, :, None] if values.ndim == 2 else values
    n, m, d = values.shape
    values = values.transpose(0, 2, 1)  # (row, output, player)
    if top_k is not None and top_k < m:
        players = np.sort(np.argpartition(-np.abs(values), top_k - 1, axis=2)[:, :, :top_k], axis=2)
    else:
        players = np.broadcast_to(np.arange(m), (n, d, m))
    kept = np.take_along_axis(values, players, axis=2)
    names = pd.Categorical(["base_value", *map(str, explanation.feature_names)])
    base = np.asarray(explanation.base_values, dtype=np.float64).reshape(n, d)
    table = pd.DataFrame({
        "row": np.repeat(np.arange(n), d * (players.shape[2] + 1)),
        "player": names.take(np.concatenate([np.full((n, d, 1), -1), players], axis=2).ravel() + 1),
        "output": np.repeat(np.tile(np.arange(d), n), players.shape[2] + 1),
        "value": np.concatenate([base[:, :, None], kept], axis=2).ravel(),
    })
    if d == 1:
        return table.drop(columns="output")
    outputs = explanation.output_names
    table["output"] = pd.Categorical.from_codes(table["output"], [str(o) for o in outputs])
    return table


class _PartWriter:
    """The sink of ``explain --explain``: the tables of the partitions, in order, each row numbered in the file;
    a ``.parquet`` output is a folder of parts ``part-00000.parquet``..., a ``.csv`` one file appended to, a
    ``.npy`` one a folder of arrays of every row (:data:`_NPY_FIELDS`, a :class:`~shap_instances.utils.MemmapWriter`).

    Everything is written into a staging file or folder (:attr:`target`) and put in place by :meth:`finish` only
    when every partition is written, so a failure (:meth:`discard`) leaves an earlier ``--out`` as it was."""

    def __init__(self, out: Path, force: bool) -> None:
        self.out, self.force, self.offset, self.lines = out, force, 0, 0
        self.arrays: Any = None
        self.staging: Path | None = None
        if out.suffix == ".parquet":  # inside an earlier output folder (its file system); hidden from readers
            out.parent.mkdir(parents=True, exist_ok=True)
            self.staging = Path(tempfile.mkdtemp(prefix=_staging_prefix(out), dir=out if out.is_dir() else
                                                 out.parent))
        elif out.suffix == ".csv":
            handle, name = tempfile.mkstemp(prefix=_staging_prefix(out), suffix=".csv", dir=out.parent)
            os.close(handle)
            self.staging = Path(name)

    @property
    def target(self) -> Path:
        """Where the parts are written: the staging file or folder (the arrays' staging folder for ``.npy``)."""
        return self.arrays.staging if self.arrays is not None else cast(Path, self.staging)

    def finish(self) -> None:
        """Put what was written in place of ``--out`` (an earlier output's parts replaced, nothing else)."""
        if self.arrays is not None:
            self.arrays.explanation()
            return
        staging = self.target
        if self.out.suffix == ".parquet" and self.out.is_dir():
            for old in self.out.glob("part-*.parquet"):
                old.unlink()
            for new in staging.iterdir():
                os.replace(new, self.out / new.name)
            staging.rmdir()
        else:
            os.replace(staging, self.out)
        self.staging = None

    def discard(self) -> None:
        """Remove what this run wrote (after a failure); an earlier ``--out`` is left as it was."""
        if self.arrays is not None:
            self.arrays.close()
        if self.staging is not None and self.staging.is_dir():
            shutil.rmtree(self.staging, ignore_errors=True)
        elif self.staging is not None:
            self.staging.unlink(missing_ok=True)

    @property
    def folder(self) -> bool:
        """Whether the output is a folder (of Parquet parts, or of ``.npy`` arrays)."""
        return self.out.suffix in (".parquet", ".npy")

    def allocate(self, like, n_rows: int) -> None:
        """``.npy``: the arrays of ``n_rows`` rows, shaped as the Explanation ``like``'s, refused before any work
        when the disk cannot hold them (a memory map written past a full disk kills the process)."""
        from .utils import MemmapWriter

        self.arrays = MemmapWriter(self.out, n_rows, fields=_NPY_FIELDS, overwrite=self.force)  # checked, locked
        row_bytes = sum(getattr(like, name)[:1].nbytes for name in _NPY_FIELDS)
        free = shutil.disk_usage(self.out).free
        if row_bytes * n_rows > free:
            raise ValueError(f"--out {self.out}: the values of {n_rows:,} rows take {row_bytes * n_rows / 2**30:,.1f} "
                             f"GiB, more than the {free / 2**30:,.1f} GiB free on its disk")
        print(f"shap-instances: plan: --out {self.out.name}: {n_rows:,} rows of {like.values[0].size:,} values, "
              f"{row_bytes * n_rows / 2**30:,.2f} GiB of the {free / 2**30:,.1f} GiB free on its disk", file=sys.stderr)
        self.arrays.allocate(like)

    def __call__(self, i: int, table) -> int:
        if isinstance(table, int):  # written by the worker
            if self.arrays is not None:  # counted: the arrays are put in place only when every row is written
                self.arrays(i, table)
            self.lines += table
            return table
        if self.arrays is not None:  # one part of the .npy arrays, written here in order
            self.arrays(i, table)
            self.lines += len(table.values)
            return len(table.values)
        rows = int(table["row"].max()) + 1 if "row" in table.columns and len(table) else len(table)
        table = _numbered(table, self.offset)
        if self.out.suffix == ".parquet":
            _write_parquet(table, self.target / f"part-{i:05d}.parquet")
        else:
            from .utils import spreadsheet_safe

            spreadsheet_safe(table).to_csv(self.target, mode="a", header=i == 0, index=False)
        self.offset += rows
        self.lines += len(table)
        return len(table)


def _registered_name(cls) -> str:
    import shap_instances as si

    return next(name for name, registered in si.list_explainers().items() if registered is cls)


def _takes_pipeline(cls, model, X) -> bool:
    """Whether explainer ``cls`` gets the whole pipeline and the raw columns (so it attributes to them).

    Explainers whose players are features take the pipeline when they support it (naive Bayes) or when every
    column is numeric (model-agnostic ones); explainers of training rows take the bare estimator and the
    encoded matrix, where their fast paths and checks apply.
    """
    from .report import categorical_columns

    if getattr(cls, "players", "instances") != "features":
        return False
    return bool(cls.supports_model(model, X)) or not categorical_columns(X)


def _choose_explainer(model, X):
    """``--explainer auto``: the registered explainers by priority, as ``shap_instances.Explainer`` asks them."""
    import shap_instances as si

    from .report import encode, final_estimator

    final, encoded = final_estimator(model), None
    candidates = sorted(si.list_explainers().items(), key=lambda kv: (getattr(kv[1], "auto_priority", 50), kv[0]))
    for _, cls in candidates:
        if not getattr(cls, "auto_dispatch", True):
            continue
        if getattr(cls, "players", "instances") == "features":
            if cls.supports_model(model, X):
                return cls
            continue
        encoded = encode(model, X) if encoded is None else encoded
        if cls.supports_model(final, encoded):
            return cls
    raise ValueError(f"no registered explainer explains a {type(final).__name__}; name one with --explainer "
                     "(shap-instances list)")


def _model_hint(name, requested, fitted_name, model, task, exc) -> str:
    """The message for an explainer that cannot explain the model: what went wrong and which --model works."""
    from .report import auto_model, final_estimator

    reason = str(exc).split("; ")[0].rstrip(".")
    what = f"--model {requested}" + (f" (a {type(final_estimator(model)).__name__})" if requested == "auto" else "")
    try:
        works = auto_model(task, name)
    except ValueError as task_problem:
        return f"--explainer {name} cannot explain {what}: {reason}. {task_problem}"
    if works == fitted_name:
        return f"--explainer {name} cannot explain {what}: {reason}"
    return (f"--explainer {name} cannot explain {what}: {reason}. Use --model {works}, or leave --model at auto, "
            f"which fits {works} for --explainer {name}")


def _process_age() -> float:
    """Seconds since this process started (from /proc on Linux; 0 where that is not available)."""
    try:
        with open("/proc/self/stat") as stat, open("/proc/uptime") as uptime:
            started = int(stat.read().rsplit(")", 1)[1].split()[19]) / os.sysconf("SC_CLK_TCK")
            return max(float(uptime.read().split()[0]) - started, 0.0)
    except (OSError, ValueError, IndexError):
        return 0.0


def _cmd_report(args) -> int:
    if not args.out.strip():
        raise ValueError("--out is an empty path (it would be the current folder); pass the report's folder")
    _check_output(Path(args.out), args, folder=True)
    _check_report_floor(args)
    X, y, task = _load(args)
    from .report import run_report

    model = None if args.model_file is None else _load_model_file(args, X)[0]

    # run as a program, the interpreter's start, the imports and reading the CSV count against the budget; called
    # from Python with its arguments (a process that may have run for hours), the budget counts from that call
    spent = _elapsed(args)
    try:
        path = run_report(X, y, task=task, model=args.model, out=args.out, seed=args.seed, silent=args.silent,
                          time_budget=max(args.time_budget - spent, 1e-3),
                          max_memory=None if args.max_memory is None else args.max_memory * 2**30,
                          fitted_model=model, max_evals=args.max_evals)
    except BudgetError as exc:
        if exc.needed is None:
            raise
        needed = math.ceil(exc.needed + spent + 1)  # and a second for the spread of the next start-up
        raise BudgetError(f"refused before the work: --time-budget {args.time_budget:g} is too small for the "
                          f"smallest report here: {spent:.1f} s went on start-up and loading the data, and the report "
                          f"itself needs about {exc.needed:.0f} s more; pass --time-budget {needed} or more",
                          needed=needed) from exc
    print(f"report written to {path}")
    return 0


def _check_report_floor(args) -> None:
    """Refuse at once, before the data are read, a ``--time-budget`` below what any report needs: the start-up so
    far and the fixed work of the least report (:func:`shap_instances.report.least_report_seconds`)."""
    from .report import least_report_seconds

    spent = _elapsed(args)
    floor = least_report_seconds(spent, forest=args.model_file is None)
    if floor > args.time_budget:
        raise BudgetError(f"refused before the work: --time-budget {args.time_budget:g} is too small for any report: "
                          f"{spent:.1f} s went on start-up, and the least report's fixed work (its figures, overview "
                          f"and writing) needs about {floor - spent:.0f} s more, before the data are read; pass "
                          f"--time-budget {math.ceil(floor) + 1} or more", needed=floor)


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``shap-instances`` console script; returns the exit code.

    ``argv`` None (the console script, ``python -m shap_instances``) reads ``sys.argv``, and the report's
    ``--time-budget`` counts from the start of the process; with ``argv`` given (a call from Python), from this call.
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
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", category=FutureWarning)
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


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
