"""Files the package writes for its user: tables safe to open in a spreadsheet, files written whole (a temporary
file renamed into place) and the digests that prove later which files the package wrote.

Every CSV the package writes (``explain``'s tables, the report's ``*.csv``) goes through
:func:`spreadsheet_safe` first: a spreadsheet runs a cell that starts with ``=``, ``+``, ``-``, ``@``, a tab or a
carriage return as a formula (CSV injection, OWASP), and column names, class labels and index labels come from
the user's data.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd

from ._params import validate_params

__all__ = ["FORMULA_STARTS", "file_digest", "spreadsheet_safe", "write_atomically"]

#: First characters that make a spreadsheet read a text cell as a formula (OWASP's list).
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


#: A plain decimal number (``-1.5``, ``+2e3``): a spreadsheet reads it as that number, not as a formula.
_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")


def _is_number(text: str) -> bool:
    """Whether ``text`` is one plain decimal number (``-inf``, ``-1_0`` and ``-1+2`` are not)."""
    return _NUMBER.fullmatch(text) is not None


def _neutralised(value: Any) -> Any:
    """``value`` with a single quote before it when it is text a spreadsheet would run as a formula."""
    if isinstance(value, tuple):  # a label of a MultiIndex
        return tuple(_neutralised(v) for v in value)
    if not isinstance(value, str) or _is_number(value):
        return value
    stripped = value.lstrip(" ")
    if value.startswith(FORMULA_STARTS) or stripped.startswith(FORMULA_STARTS):
        return "'" + value
    return value


def _is_text(column: pd.Series) -> bool:
    """Whether a column may hold text (object, string or categorical): numbers, booleans and dates never do."""
    return _is_text_dtype(column.dtype)


def _is_text_dtype(dtype: Any) -> bool:
    return isinstance(dtype, pd.CategoricalDtype) or not (
        pd.api.types.is_numeric_dtype(dtype) or pd.api.types.is_bool_dtype(dtype)
        or pd.api.types.is_datetime64_any_dtype(dtype) or pd.api.types.is_timedelta64_dtype(dtype))


def _safe_labels(index: pd.Index) -> pd.Index:
    """An index (or the columns) with every text label, and the names of its levels, neutralised."""
    names = [_neutralised(name) for name in index.names]
    if not _is_text(index.to_series()) and not isinstance(index, pd.MultiIndex):
        return index.set_names(names) if names != list(index.names) else index
    labels = [_neutralised(label) for label in index]
    if labels == list(index) and names == list(index.names):
        return index
    if isinstance(index, pd.MultiIndex):
        return pd.MultiIndex.from_tuples(labels, names=names)
    return pd.Index(labels, name=names[0], dtype=object)


def _safe_column(column: pd.Series) -> pd.Series | None:
    """A text column with its formula-like cells neutralised (categories renamed); None when none is."""
    if isinstance(column.dtype, pd.CategoricalDtype):
        categories = list(column.cat.categories)
        renamed = [_neutralised(c) for c in categories]
        if renamed == categories:
            return None
        if len(set(renamed)) == len(renamed):  # the codes kept (a long table's player column: millions of rows)
            return column.cat.rename_categories(renamed)
        column = column.astype(object)  # "=a" and "'=a" both among the categories: cell by cell
    safe = column.map(_neutralised, na_action="ignore")
    return None if safe.equals(column) else safe


def spreadsheet_safe(table: pd.DataFrame) -> pd.DataFrame:
    """``table`` with every text cell, column name and index label that a spreadsheet would run as a formula
    neutralised: a single quote is put before text starting with ``=``, ``+``, ``-``, ``@``, a tab or a carriage
    return (OWASP's advice against CSV injection), after any leading spaces.

    Numbers stay numbers: numeric columns are not touched, and a text cell that reads as one number (``-1.5``)
    is kept as it is. The table passed in is not changed; when nothing needs neutralising it is returned itself.

    Parameters
    ----------
    table : pandas.DataFrame
        What is about to be written with ``to_csv`` (its index too, when that is written).

    Returns
    -------
    pandas.DataFrame
        The table to write.

    Examples
    --------
    >>> import pandas as pd
    >>> from shap_instances.utils import spreadsheet_safe
    >>> table = pd.DataFrame({"=cmd|' /C calc'!A0": [-1.5, 2.0], "label": ["@SUM(A1)", "cat"]})
    >>> safe = spreadsheet_safe(table)
    >>> list(safe.columns), safe["label"].tolist(), safe.iloc[:, 0].tolist()
    (["'=cmd|' /C calc'!A0", 'label'], ["'@SUM(A1)", 'cat'], [-1.5, 2.0])
    """
    validate_params("spreadsheet_safe", {"table": [pd.DataFrame]}, {"table": table})
    columns, index = _safe_labels(table.columns), _safe_labels(table.index)
    text = [i for i, dtype in enumerate(table.dtypes) if _is_text_dtype(dtype)]  # dtypes once: wide tables
    changed = {i: _safe_column(table.iloc[:, i]) for i in text}
    changed = {i: column for i, column in changed.items() if column is not None}
    if columns is table.columns and index is table.index and not changed:
        return table
    safe = table.copy(deep=False)
    for i, column in changed.items():
        safe.isetitem(i, column)
    safe.columns, safe.index = columns, index
    return safe



def file_digest(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The size (bytes) and SHA-256 (hex) of a regular file: what proves later that the package wrote it.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> from shap_instances.utils import file_digest
    >>> path = Path(tempfile.mkdtemp()) / "a.txt"
    >>> _ = path.write_bytes(b"abc")
    >>> file_digest(path)["size"], file_digest(path)["sha256"][:8]
    (3, 'ba7816bf')
    """
    digest = hashlib.sha256()
    size = 0
    with open(path, "rb") as handle:
        while block := handle.read(2**20):
            digest.update(block)
            size += len(block)
    return {"size": size, "sha256": digest.hexdigest()}


def _new_file_mode() -> int:
    """The mode ``open()`` gives a new file: 0666 less the process's umask (read once, at import)."""
    umask = os.umask(0o022)
    os.umask(umask)
    return 0o666 & ~umask


_NEW_FILE_MODE = _new_file_mode()


def write_atomically(path: str | os.PathLike[str], write: Callable[[str], object]) -> None:
    """``write(temporary)`` into a new file beside ``path`` (same folder: same file system), then renamed onto
    ``path``: a reader sees the old file or the new one, never half of one; a link at ``path`` is replaced, never
    written through; on an error ``path`` is left as it was and the temporary file removed.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> from shap_instances.utils import write_atomically
    >>> path = Path(tempfile.mkdtemp()) / "a.txt"
    >>> write_atomically(path, lambda temporary: Path(temporary).write_text("done"))
    >>> path.read_text()
    'done'
    """
    path = Path(path)
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=f"{path.suffix}.partial", dir=path.parent)
    os.close(handle)
    try:
        write(temporary)
        os.chmod(temporary, _NEW_FILE_MODE)  # mkstemp's 0600 would make the output private: a new file's mode
        os.replace(temporary, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)
