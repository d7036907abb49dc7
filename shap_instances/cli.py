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
import os
import sys
import tempfile
import time
import warnings
from collections.abc import Sequence
from pathlib import Path

from ._deprecated import REMOVED_IN
from .exceptions import ShapInstancesError, UnsupportedModelError
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


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="shap-instances",
        description="Explain models in terms of their training instances.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    sub = parser.add_subparsers(dest="command", required=True)

    report = sub.add_parser("report", help="analyse a dataset's instances end to end (HTML + PNG figures)")
    _add_data_arguments(report)
    report.add_argument("--out", default="shap-instances-report", help="output folder (default: %(default)s)")
    report.add_argument("--seed", type=int, default=0, help="random seed (default: %(default)s)")
    report.add_argument("--silent", action="store_true", help="no progress output")
    report.add_argument("--time-budget", type=float, default=180.0, metavar="SECONDS",
                        help="plan every section to finish within about this many seconds, from measured costs "
                             "(default: %(default)s)")
    report.add_argument("--max-memory", type=float, default=None, metavar="GIB",
                        help="memory budget in GiB for the report's large arrays: the sampled residual decomposition "
                             "is sized to it, and a budget too small for the data is refused before any work "
                             "(default: half the memory available)")
    report.add_argument("--force", action="store_true", help="write into --out even if it is a folder that holds "
                        "something other than an earlier report: only the report's files are written (listed in "
                        "the folder's .shap-instances-report.json); nothing else in the folder is touched, and a "
                        "file of the same name as one of the report's is refused, not replaced")

    sub.add_parser("list", help="list the registered explainers, plugins included")

    explain = sub.add_parser("explain", help="run one explainer and write its values to CSV or Parquet")
    _add_data_arguments(explain)
    explain.add_argument("--explainer", default="auto", help="registered explainer name, or auto")
    explain.add_argument("--rows", type=int, default=20,
                         help="explain the first ROWS rows, at least 1 (default: %(default)s)")
    explain.add_argument("--out", required=True, help="output file, .csv or .parquet")
    explain.add_argument("--seed", type=int, default=0)
    explain.add_argument("--force", action="store_true", help="overwrite an existing --out file")
    return parser


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
    if not os.path.lexists(out):
        return
    if not folder:
        if not args.force:
            raise ValueError(f"--out {out} exists; choose another path or pass --force to overwrite it")
        return
    from .report import report_files

    if not out.is_dir():
        raise ValueError(f"--out {out} is a file, not a folder; choose another path")
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


def _replace_file(out: Path, write) -> None:
    """``write(path)`` into a temporary file beside ``out``, then renamed onto it: a link at ``out`` is replaced,
    never written through, and an interrupted write leaves ``out`` as it was."""
    handle, temporary = tempfile.mkstemp(prefix=f".{out.name}.", suffix=out.suffix, dir=out.parent)
    os.close(handle)
    try:
        write(temporary)
        os.replace(temporary, out)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)


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
    import numpy as np
    import pandas as pd

    import shap_instances as si

    from .report import auto_model, encode, final_estimator, fit_model

    out = Path(args.out)
    if out.suffix not in (".csv", ".parquet"):
        raise ValueError(f"--out must end in .csv or .parquet, got {out.name}")
    if out.suffix == ".parquet" and importlib.util.find_spec("pyarrow") is None:
        raise ValueError("writing Parquet needs pyarrow (pip install 'shap-instances[parquet]'); or use a .csv file")
    if args.rows < 1:
        raise ValueError(f"--rows must be at least 1, got {args.rows}")
    _check_output(out, args, folder=False)
    X, y, task = _load(args)
    if args.explainer in RENAMED_EXPLAINERS:  # the command line shows no FutureWarning: say it on stderr
        print(f"shap-instances: --explainer {args.explainer} is deprecated and will be removed in shap-instances "
              f"{REMOVED_IN}; use --explainer {RENAMED_EXPLAINERS[args.explainer]}", file=sys.stderr)
    name = canonical_name(args.explainer)
    cls = None if name in ("auto", *SHAP_ALGORITHMS) else si.get_explainer(name)  # an unknown name fails here
    model_name = auto_model(task, name) if args.model == "auto" else args.model
    model = fit_model(model_name, task, X, y, args.seed, explainer=name)
    if name == "auto":
        cls = _choose_explainer(model, X)
    if cls is None or _takes_pipeline(cls, model, X):  # shap's own and per-feature explainers: raw columns
        fitted, data = model, X
    else:  # training rows as players: the bare estimator on the matrix it was fitted on (encoded names)
        fitted, data = final_estimator(model), encode(model, X)
    takes_y = cls is not None and getattr(cls, "requires_y", False)
    try:
        explainer = si.Explainer(fitted, data, algorithm=name if cls is None else _registered_name(cls),
                                 **({"y": y} if takes_y else {}))
    except UnsupportedModelError as exc:
        raise ValueError(_model_hint(name, args.model, model_name, model, task, exc)) from exc
    rows = data.iloc[: args.rows]
    explanation = _call_explainer(explainer, rows, y.iloc[: args.rows])
    values = np.asarray(explanation.values)
    columns = list(explanation.feature_names)
    base_columns = ["base_value"]
    if values.ndim == 3:  # one column per (player, output) and one base value per output
        outputs = explanation.output_names
        outputs = [str(o) for o in outputs] if outputs is not None else [str(k) for k in range(values.shape[2])]
        columns = [f"{c}|{o}" for c in columns for o in outputs]
        base_columns = [f"base_value|{o}" for o in outputs]
        values = values.reshape(values.shape[0], -1)
    table = pd.DataFrame(values, index=rows.index.astype(str), columns=columns)
    base = np.asarray(explanation.base_values, dtype=np.float64).reshape(-1, len(base_columns))
    base = pd.DataFrame(np.broadcast_to(base, (len(table), len(base_columns))), index=table.index,
                        columns=base_columns)
    table = pd.concat([base, table], axis=1)
    _replace_file(out, lambda path: table.to_parquet(path) if out.suffix == ".parquet" else table.to_csv(path))
    print(f"{type(explainer).__name__}: {table.shape[0]} rows x {len(explanation.feature_names)} players -> {out}")
    return 0


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
    if not args.time_budget > 0:
        raise ValueError(f"--time-budget must be a positive number of seconds, got {args.time_budget:g}")
    if args.max_memory is not None and not args.max_memory > 0:
        raise ValueError(f"--max-memory must be a positive number of GiB, got {args.max_memory:g}")
    _check_output(Path(args.out), args, folder=True)
    X, y, task = _load(args)
    from .report import run_report

    # run as a program, the interpreter's start, the imports and reading the CSV count against the budget; called
    # from Python with its arguments (a process that may have run for hours), the budget counts from that call
    origin = getattr(args, "called_at", None)
    spent = (max(time.perf_counter() - _STARTED, _process_age()) if origin is None
             else time.perf_counter() - origin)
    path = run_report(X, y, task=task, model=args.model, out=args.out, seed=args.seed, silent=args.silent,
                      time_budget=max(args.time_budget - spent, 1.0),
                      max_memory=None if args.max_memory is None else args.max_memory * 2**30)
    print(f"report written to {path}")
    return 0


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``shap-instances`` console script; returns the exit code.

    ``argv`` None (the console script, ``python -m shap_instances``) reads ``sys.argv``, and the report's
    ``--time-budget`` counts from the start of the process; with ``argv`` given (a call from Python), from this call.
    """
    called_at = time.perf_counter()
    args = _parser().parse_args(argv)
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
