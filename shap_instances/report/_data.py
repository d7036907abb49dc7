"""Loading a user's CSV for the command line: every problem becomes one clear sentence."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from ..exceptions import DataValidationError

__all__ = ["load_table", "infer_task"]


def load_table(path, target: str, *, dropna: bool = False) -> tuple[pd.DataFrame, pd.Series]:
    """Read ``path`` (CSV) and split off the ``target`` column, refusing what the explainers cannot use.

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
    >>> _ = f.write_text("a,b,y\\n1,2,3\\n4,5,6\\n")
    >>> X, y = load_table(f, "y")
    >>> list(X.columns), y.tolist()
    (['a', 'b'], [3, 6])
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no such data file: {path}")
    try:
        frame = pd.read_csv(path)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        raise DataValidationError(f"could not read {path} as CSV: {exc}") from exc
    if target not in frame.columns:
        raise DataValidationError(
            f"target column {target!r} is not in {path.name}; its columns are: {', '.join(map(str, frame.columns))}"
        )
    if dropna:
        frame = frame.dropna()
    missing = frame.columns[frame.isna().any()].tolist()
    if missing:
        raise DataValidationError(
            f"missing values in column(s) {', '.join(map(str, missing))}; impute them first or pass --dropna"
        )
    X = frame.drop(columns=target)
    non_numeric = [str(c) for c in X.columns if not pd.api.types.is_numeric_dtype(X[c])]
    if non_numeric:
        raise DataValidationError(
            f"non-numeric column(s) {', '.join(non_numeric)}; encode them as numbers first (for example "
            "one-hot with pandas.get_dummies) or drop them"
        )
    if X.shape[1] == 0 or len(X) < 2:
        raise DataValidationError(f"{path.name} needs at least one feature column and two rows, got {X.shape}")
    return X.astype(np.float64), frame[target]


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
    integral = np.all(np.equal(np.mod(values, 1), 0))
    return "classification" if integral and y.nunique() <= 10 else "regression"
