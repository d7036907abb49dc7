"""What every command reads and refuses first: the data (``--data``, ``--target``), a ``--model-file``, and an
``--out`` that would destroy data."""

from __future__ import annotations

import os
from pathlib import Path

from ..exceptions import DataValidationError


def _load(args):
    from ..report import check_task, infer_task, load_table

    if args.data is None:
        if args.target is not None:
            raise ValueError(f"--target {args.target} needs --data, the CSV file it is a column of (without --data "
                             "the embedded diabetes data is used)")
        from ..datasets import load_diabetes

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
    if folder:
        _check_report_folder(out, args)
    else:
        _check_output_file(out, args)


def _check_output_file(out: Path, args) -> None:
    """Refuse an ``explain`` output file in no folder, on a folder, or that exists (without ``--force``); the
    folders of ``--explain`` (Parquet parts, ``.npy`` arrays) are checked by the stream."""
    if not (getattr(args, "explain", None) and out.suffix in (".parquet", ".npy")):
        if not out.parent.is_dir():
            raise ValueError(f"--out {out}: its folder {out.parent} does not exist (or is not a folder); create it "
                             "first or choose another path")
        if out.is_dir():
            raise ValueError(f"--out {out} is a folder; it is not replaced: choose a file path")
    if os.path.lexists(out) and not args.force:
        raise ValueError(f"--out {out} exists; choose another path or pass --force to overwrite it")


def _check_report_folder(out: Path, args) -> None:
    """Refuse a report's ``--out`` that is not a folder, or a folder that holds something other than an earlier
    report (without ``--force``, or with an ``index.html`` no report wrote)."""
    if not os.path.lexists(out):
        return
    from ..report import report_files

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


def _load_model_file(args, X):
    """(the fitted model of ``--model-file`` (safe format), the columns of ``X`` it takes); refused beside a
    ``--model``, unfitted, or fitted on columns that ``X`` (the --data table) lacks."""
    from sklearn.exceptions import NotFittedError
    from sklearn.utils.validation import check_is_fitted

    from ..utils import load_model

    if args.model != "auto":
        raise ValueError(f"--model {args.model} fits a model and --model-file gives one: pass one of the two")
    with open(args.model_file, "rb") as stream:
        model = load_model(stream)
    try:
        check_is_fitted(model)
    except (NotFittedError, TypeError) as exc:
        raise ValueError(f"--model-file {args.model_file} holds a {type(model).__name__} that is not a fitted "
                         "estimator; fit it on --data and --target before saving it") from exc
    from ..report import model_columns

    columns = model_columns(model, X, f"--model-file {args.model_file}")
    try:  # a file of trusted types may still hold a state no fit leaves (coefficients of text): say so here
        model.predict(columns.iloc[:2])
    except Exception as exc:  # noqa: BLE001 - whatever the model raises, the file's model is the cause
        raise DataValidationError(f"--model-file {args.model_file} holds a {type(model).__name__} that cannot "
                                  f"predict two rows of --data ({type(exc).__name__}: {exc}); save a model fitted "
                                  "on these columns with shap_instances.utils.save_model") from exc
    return model, columns


def _call_explainer(explainer, X, y):
    """Call an explainer, passing the labels where its contract uses them (``call_y``: residual, KNN-Shapley)."""
    return explainer(X) if getattr(explainer, "call_y", "none") == "none" else explainer(X, y)
