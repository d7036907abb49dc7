"""Loading a user's CSV for the command line: every problem becomes one clear sentence."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from ..exceptions import DataValidationError
from ..utils import check_unique_columns, scan_text_file

__all__ = ["load_table", "infer_task", "check_task"]


#: Largest magnitude of a numeric feature the command line accepts: the models' standardisers square values and
#: sum them over rows, which overflows float64 (1.8e308) for values near 1e154 and beyond.
LARGEST_FEATURE = 1e100


def load_table(path: str | os.PathLike[str], target: str, *, dropna: bool = False) -> tuple[pd.DataFrame, pd.Series]:
    """Read ``path`` (CSV) and split off the ``target`` column, refusing what the explainers cannot use.

    Numeric columns become float64; string columns are kept as they are (the models of
    :mod:`shap_instances.report` one-hot encode them). Missing values are refused, naming the columns and the
    number of rows, unless ``dropna``: imputing them inside the report would make invented values look like
    training data, so the choice of an imputation is left to the user.

    Parameters
    ----------
    path : str or Path
        A CSV file with a header row.
    target : str
        Name of the target column.
    dropna : bool, default=False
        Drop rows with missing values instead of refusing them.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from shap_instances.report import load_table
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "t.csv"
    >>> _ = f.write_text("a,b,y\\n1,red,3\\n4,blue,6\\n")
    >>> X, y = load_table(f, "y")
    >>> X["a"].tolist(), X["b"].tolist(), y.tolist()
    ([1.0, 4.0], ['red', 'blue'], [3, 6])
    """
    path = Path(path)
    frame = _read_csv(path)
    if target not in frame.columns:
        raise DataValidationError(
            f"target column {target!r} is not in {path.name}; its columns are: {', '.join(map(str, frame.columns))}"
        )
    if frame.empty:
        raise DataValidationError(f"{path.name} has a header ({', '.join(map(str, frame.columns))}) but no rows")
    if dropna:
        frame = _without_missing(frame)
    problems = _value_problems(frame, target)  # every problem of the file, reported at once
    X = frame.drop(columns=target)
    if X.shape[1] == 0 or len(X) < 2:
        problems.append(f"{path.name} needs at least one feature column and two rows, got {X.shape[0]} rows and "
                        f"{X.shape[1]} feature columns")
    if problems:
        raise DataValidationError(f"{path.name}: " + "; ".join(problems))
    numeric = [c for c in X.columns if pd.api.types.is_numeric_dtype(X[c]) and not pd.api.types.is_bool_dtype(X[c])]
    return X.astype(dict.fromkeys(numeric, np.float64)), frame[target]


def _read_csv(path: Path) -> pd.DataFrame:
    """The CSV file ``path`` as read by pandas, refused when it is missing, binary, not UTF-8, not CSV, or has a
    repeated column name."""
    if not path.is_file():
        raise FileNotFoundError(f"no such data file: {path}")
    scan_text_file(path, "--data")  # a binary file is refused as such, not blamed on a column
    try:
        frame = pd.read_csv(path)
    except UnicodeDecodeError as exc:
        raise DataValidationError(f"could not read {path} as CSV: it is not UTF-8 text; save it as a UTF-8 CSV file "
                                  "(a spreadsheet: 'Save as' CSV UTF-8)") from exc
    except (pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
        raise DataValidationError(f"could not read {path} as CSV: {exc}") from exc
    # pandas renames a repeated header name ("a", "a" -> "a", "a.1"): the file's own names are checked instead
    check_unique_columns(pd.read_csv(path, header=None, nrows=1, dtype=str).iloc[0].tolist(), path.name)
    return frame


def _without_missing(frame: pd.DataFrame) -> pd.DataFrame:
    """``--dropna``: the rows of ``frame`` without missing values, the number dropped said on stderr."""
    before = len(frame)
    frame = frame.dropna()
    print(f"--dropna: dropped {before - len(frame)} of {before} rows with missing values; {len(frame)} remain",
          file=sys.stderr)
    return frame


def _value_problems(frame: pd.DataFrame, target: str) -> list[str]:
    """What is wrong with the values of ``frame``: missing, infinite, or feature values too large to standardise."""
    problems = []
    missing = frame.columns[frame.isna().any()].tolist()
    if missing:
        counts = ", ".join(f"{c} ({int(frame[c].isna().sum())} rows)" for c in missing)
        problems.append(f"missing values in column(s) {counts}; impute them first or pass --dropna")
    numeric_columns = [c for c in frame.columns if pd.api.types.is_numeric_dtype(frame[c])]
    infinite = [c for c in numeric_columns if np.isinf(frame[c].to_numpy(dtype=np.float64)).any()]
    if infinite:
        counts = ", ".join(f"{c} ({int(np.isinf(frame[c].to_numpy(dtype=np.float64)).sum())} rows)" for c in infinite)
        problems.append(f"infinite values in column(s) {counts}; replace or drop those rows")
    huge = [c for c in numeric_columns if c != target and
            np.nanmax(np.abs(frame[c].to_numpy(dtype=np.float64)), initial=0.0) > LARGEST_FEATURE]
    if huge:
        sizes = ", ".join(f"{c} (up to {np.nanmax(np.abs(frame[c].to_numpy(dtype=np.float64))):.3g})" for c in huge)
        problems.append(f"values too large in column(s) {sizes}: the models standardise every column, and the "
                        f"sums of squares of values beyond {LARGEST_FEATURE:.0e} come near float64's limit; rescale "
                        "those columns (divide them by a power of ten, or take logarithms)")
    return problems


def check_task(y: pd.Series, task: str, target: str) -> None:
    """Refuse a target that cannot serve ``task``, saying why (string labels for regression, one class).

    Examples
    --------
    >>> import pandas as pd
    >>> from shap_instances.report._data import check_task
    >>> check_task(pd.Series([1.0, 2.5]), "regression", "y")
    """
    if task == "regression" and not pd.api.types.is_numeric_dtype(y):
        examples = ", ".join(repr(v) for v in pd.unique(y)[:3])
        raise DataValidationError(f"--task regression needs a numeric target, but {target!r} holds labels such as "
                                  f"{examples}; use --task classification")
    if task == "classification" and pd.api.types.is_float_dtype(y) and not np.all(np.mod(y.to_numpy(), 1) == 0):
        raise DataValidationError(f"--task classification needs class labels, but {target!r} holds continuous values "
                                  f"such as {_shown(y.iloc[0])}; use --task regression")
    if task == "classification" and y.nunique() < 2:
        raise DataValidationError(f"the target {target!r} has a single value ({_shown(y.iloc[0])}): there is nothing "
                                  "to classify or explain")
    if task == "regression" and y.nunique() < 2:
        raise DataValidationError(f"the target {target!r} is constant ({_shown(y.iloc[0])}): every model predicts it "
                                  "exactly and there are no residuals to explain")


def _shown(value) -> str:
    """A target value as a user wrote it (``1.5``, ``'cat'``), not numpy's repr (``np.float64(1.5)``)."""
    value = value.item() if isinstance(value, np.generic) else value
    return repr(value)


def infer_task(y: pd.Series) -> str:
    """"classification" for non-numeric targets or few distinct integers, else "regression".

    Examples
    --------
    >>> import pandas as pd
    >>> from shap_instances.report import infer_task
    >>> infer_task(pd.Series([0, 1, 1, 0])), infer_task(pd.Series([0.5, 1.7, 2.2]))
    ('classification', 'regression')
    """
    if not pd.api.types.is_numeric_dtype(y):
        return "classification"
    values = y.to_numpy()
    with np.errstate(invalid="ignore"):  # an infinite target is refused by load_table before this matters
        integral = np.all(np.equal(np.mod(values, 1), 0))
    # a float column is a regression target even when it takes few (or one) values; integers are labels
    labels = pd.api.types.is_integer_dtype(y) or pd.api.types.is_bool_dtype(y)
    return "classification" if labels and integral and 2 <= y.nunique() <= 10 else "regression"
