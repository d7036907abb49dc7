"""``shap-instances explain``: one explainer's values for the first ``--rows`` rows (or, with ``--explain FILE``,
every row of a file: :mod:`._stream`) written to CSV or Parquet."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

from .._deprecated import REMOVED_IN
from ..exceptions import UnsupportedModelError
from ..registry import RENAMED_EXPLAINERS, SHAP_ALGORITHMS, canonical_name
from ._budget import _budget_options, _check_fit_time, _command_line_remedies, _explain_in_time
from ._inputs import _call_explainer, _check_output, _load, _load_model_file
from ._stream import _check_explain_columns, _check_stream_options, _explain_file
from ._tables import _check_output_size, _long_table, _wide_table


def _cmd_explain(args) -> int:
    """``explain``: check the output, read the data, fit (or load) the model, explain the rows and write them."""
    import shap_instances as si

    from .._explanation import precision_of

    out = _checked_out(args)
    X, y, task = _load(args)
    if args.explain is not None:
        _check_explain_columns(Path(args.explain), [str(c) for c in X.columns])
    name, cls = _requested_explainer(args)
    model_name, model, X = _explained_model(args, name, task, X, y)
    if name == "auto":
        cls = _choose_explainer(model, X)
    fitted, data, encoder = _explained_input(cls, model, X, task)
    takes_y = cls is not None and getattr(cls, "requires_y", False)
    players = len(data) if cls is not None and getattr(cls, "players", "instances") == "instances" else data.shape[1]
    _check_output_size(args, out, min(args.rows, len(data)), players)  # before the work: at least one output
    budget = _budget_options(args, cls, name)
    try:
        explainer = si.Explainer(fitted, data, algorithm=name if cls is None else _registered_name(cls),
                                 **({"y": y} if takes_y else {}), **budget)
    except UnsupportedModelError as exc:
        raise ValueError(_unsupported_message(args, name, model_name, model, task, exc)) from exc
    with _command_line_remedies(args):
        if args.explain is not None:
            return _explain_file(args, explainer, encoder, X.iloc[:1].assign(**{
                str(y.name): y.iloc[:1].to_numpy()}), list(X.columns), str(y.name))
        rows = data.iloc[: args.rows]
        timed = args.time_budget is not None and "max_time" not in budget  # shap's own algorithms too
        explanation = (_explain_in_time(args, explainer, rows, y.iloc[: args.rows], name) if timed else
                       _call_explainer(explainer, rows, y.iloc[: args.rows]))
    lines = _write_rows(args, out, explanation, rows)
    long = f" ({lines:,} lines, long)" if lines != len(rows) else ""
    print(f"{type(explainer).__name__}: {len(rows)} rows x {len(explanation.feature_names)} players -> {out}{long}"
          f"; {precision_of(explanation)}")
    return 0


def _checked_out(args) -> Path:
    """``--out`` as a path, refused before any work when ``explain`` cannot write it (its suffix, Parquet without
    pyarrow, the ``--explain`` options, an output that would destroy data)."""
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
    return out


def _requested_explainer(args):
    """(the canonical ``--explainer`` name, its registered class or None for ``auto`` and shap's algorithms); a
    renamed name is said on stderr (the command line shows no FutureWarning), an unknown one fails here."""
    import shap_instances as si

    if args.explainer in RENAMED_EXPLAINERS:
        print(f"shap-instances: --explainer {args.explainer} is deprecated and will be removed in shap-instances "
              f"{REMOVED_IN}; use --explainer {RENAMED_EXPLAINERS[args.explainer]}", file=sys.stderr)
    name = canonical_name(args.explainer)
    return name, None if name in ("auto", *SHAP_ALGORITHMS) else si.get_explainer(name)


def _explained_model(args, name: str, task: str, X, y):
    """(the ``--model`` name or None for ``--model-file``, the fitted model, the columns of ``X`` it takes): the
    file's model, or ``--model`` fitted once its fit is known to fit in ``--time-budget``."""
    from ..report import auto_model, fit_model

    if args.model_file is not None:
        return (None, *_load_model_file(args, X))
    model_name = auto_model(task, name) if args.model == "auto" else args.model
    _check_fit_time(args, model_name, task, X, y, name)
    return model_name, fit_model(model_name, task, X, y, args.seed, explainer=name), X


def _explained_input(cls, model, X, task: str):
    """(what the explainer is given as the model, the data it is given, the function that turns rows of the table
    into that data, None when they are the same).

    An explainer that calls the model (shap's own algorithms, explainers of features that do not take the pipeline
    itself as naive Bayes does) gets its scores (:class:`._codes.OnCodes`: a classifier's probabilities, never its
    labels, which may be words) on the table's own columns, words written as category codes, so that it masks
    whole columns. Explainers of training rows get the bare estimator on the matrix it was fitted on.
    """
    import functools

    from ..report import encode, final_estimator
    from ._codes import CategoryCodes, OnCodes

    if (cls is None and callable(model)) or _takes_pipeline(cls, model, X):
        return model, X, None
    if cls is None or getattr(cls, "players", "instances") == "features":  # model-agnostic: mask whole columns
        codes = CategoryCodes(X)
        return OnCodes(model, codes, task, every_class=cls is None), codes.transform(X), codes.transform
    return final_estimator(model), encode(model, X), functools.partial(encode, model)


def _unsupported_message(args, name: str, model_name: str | None, model, task: str, exc: Exception) -> str:
    """What to say when ``--explainer`` cannot explain the model: of ``--model-file``, or which ``--model`` works."""
    from ..report import final_estimator

    if model_name is None:
        return (f"--explainer {name} cannot explain the {type(final_estimator(model)).__name__} of --model-file "
                f"{args.model_file}: {exc}")
    return _model_hint(name, args.model, model_name, model, task, exc)


def _write_rows(args, out: Path, explanation, rows) -> int:
    """The values of the explained ``rows`` written to ``out`` (wide, or long with ``--format long`` or
    ``--top-k``), its size checked first against the exact width; the number of lines written."""
    from ..utils import spreadsheet_safe, write_atomically

    _check_output_size(args, out, len(rows), explanation.values[0].size)  # before writing: the exact width
    names = rows.index.astype(str)
    if args.format == "long" or args.top_k is not None:  # the rows named as the wide table names them
        table = _long_table(explanation, args.top_k)
        table = table.set_index(names[table["row"].to_numpy()].rename("row")).drop(columns="row")
    else:
        table = _wide_table(explanation, names)
    write_atomically(out, lambda path: table.to_parquet(path) if out.suffix == ".parquet" else
                     spreadsheet_safe(table).to_csv(path))
    return table.shape[0]


def _registered_name(cls) -> str:
    import shap_instances as si

    return next(name for name, registered in si.list_explainers().items() if registered is cls)


def _takes_pipeline(cls, model, X) -> bool:
    """Whether explainer ``cls`` gets the whole pipeline and the raw columns (so it attributes to them): an
    explainer of features that supports the model (naive Bayes). Model-agnostic explainers of features get the
    model's scores instead, and explainers of training rows the bare estimator and the encoded matrix, where their
    fast paths and checks apply."""
    return cls is not None and getattr(cls, "players", "instances") == "features" and bool(cls.supports_model(model, X))


def _choose_explainer(model, X):
    """``--explainer auto``: the registered explainers by priority, as ``shap_instances.Explainer`` asks them."""
    import shap_instances as si

    from ..report import encode, final_estimator

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
    from ..report import auto_model, final_estimator

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
