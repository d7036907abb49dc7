"""Hypothesis strategies for fuzzing an explainer: small tables, targets, edits of both, and bad input.

Plugin authors reuse them in property tests of their own explainers (shap-instances' fuzz suite,
``tests/strategies.py``, builds its perturbed conformance problems from them):

* :func:`tables` draws small float DataFrames; :func:`targets` regression or class targets for them;
* :func:`edited_table` applies value edits (rows dropped or doubled, one extreme cell, a scale over 600 orders of
  magnitude, a constant column, an int64 column) and at most one layout edit (columns reordered, renamed, dropped
  or added; an array, a CSR matrix, float32) to a table, and remembers what it did (:class:`Table`);
* :func:`edited_target` edits a target (constant, scaled, NaN, inf, int64 extremes, strings, wrong length);
* :func:`bad_inputs` draws an input an explainer must refuse with the package's errors (or explain into finite
  values): NaN, inf, words, a string, a dict, a 1-D array, a wrong width.

hypothesis is a test dependency, not a runtime one: this module needs it (``pip install hypothesis``); the rest of
:mod:`shap_instances.testing` does not.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp

try:
    from hypothesis import strategies as st
except ImportError as exc:  # pragma: no cover - hypothesis is installed with the test extra
    raise ImportError("shap_instances.testing.strategies needs hypothesis, a test dependency: pip install hypothesis "
                      "(or pip install 'shap-instances[test]').") from exc

__all__ = ["CALL_TARGET_EDITS", "CELL_VALUES", "LAYOUT_EDITS", "MAGNITUDES", "SAME_NUMBERS", "TARGET_EDITS",
           "VALUE_EDITS", "Table", "bad_inputs", "edited_table", "edited_target", "layout_edit", "tables", "targets",
           "value_edit"]

INT64_MAX = np.iinfo(np.int64).max
#: Scales applied to a whole table or target.
MAGNITUDES = (1e-300, 1e-150, 1e-8, 1e8, 1e150, 1e300)
#: Values written into one cell.
CELL_VALUES = (np.nan, np.inf, -np.inf, 1e300, -1e300, 1e-300, 0.0, float(INT64_MAX))
#: Edits of a table's numbers (its column layout kept); then at most one layout edit.
VALUE_EDITS = ("rows", "duplicate_rows", "cell", "int64_cell", "scale", "constant_column")
LAYOUT_EDITS = ("reorder", "rename", "drop_column", "extra_column", "array", "sparse", "float32")
#: Layout edits after which an explainer sees the same numbers as the canonical DataFrame.
SAME_NUMBERS = ("none", "reorder", "array", "sparse", "float32")
#: Edits of training targets, and of the explained rows' targets.
TARGET_EDITS = ("constant", "scale", "nan", "inf", "int64", "strings")
CALL_TARGET_EDITS = ("constant", "scale", "nan", "inf", "wrong_length", "strings", "missing")


@dataclass
class Table:
    """A table as the explainer gets it, and the same numbers as a DataFrame in the original column layout.

    Attributes
    ----------
    value : DataFrame, ndarray or scipy.sparse matrix
        What the explainer is given.
    canonical : DataFrame or None
        The same numbers in the original columns (None when the layout was broken: renamed, dropped or extra
        columns); oracles evaluate the explained quantity on it.
    rows : ndarray of int
        For each row, the row of the original table it comes from (targets follow it).
    steps : list of str
        The edits, in order.
    layout : str
        The layout edit ("none" when the columns are as in the original).

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from shap_instances.testing.strategies import Table
    >>> frame = pd.DataFrame({"a": [1.0, 2.0]})
    >>> Table(frame, frame, np.arange(2))
    Table(unperturbed)
    """

    value: Any
    canonical: pd.DataFrame | None
    rows: np.ndarray
    steps: list = field(default_factory=list)
    layout: str = "none"

    def __repr__(self) -> str:
        return f"Table({'; '.join(self.steps) or 'unperturbed'})"

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(repr(self))


@st.composite
def tables(draw: st.DrawFn, *, min_rows: int = 2, max_rows: int = 12, min_columns: int = 1,
           max_columns: int = 4) -> pd.DataFrame:
    """A small DataFrame of finite floats with named columns (``x0``, ``x1``, ...) and rows (``r0``, ...).

    Examples
    --------
    >>> from hypothesis import find
    >>> from shap_instances.testing.strategies import tables
    >>> find(tables(min_rows=3), lambda frame: True).shape
    (3, 1)
    """
    n = draw(st.integers(min_rows, max_rows))
    p = draw(st.integers(min_columns, max_columns))
    cells = st.floats(-1e3, 1e3, allow_nan=False, allow_infinity=False)
    values = np.array(draw(st.lists(cells, min_size=n * p, max_size=n * p)), dtype=np.float64).reshape(n, p)
    return pd.DataFrame(values, columns=[f"x{j}" for j in range(p)], index=[f"r{i}" for i in range(n)])


@st.composite
def targets(draw: st.DrawFn, n: int, *, kind: str = "regression", n_classes: int = 2) -> np.ndarray:
    """``n`` targets: finite floats (``kind="regression"``) or labels ``0 .. n_classes - 1``, each present once
    at least when ``n >= n_classes`` (``kind="classification"``).

    Examples
    --------
    >>> from hypothesis import find
    >>> from shap_instances.testing.strategies import targets
    >>> find(targets(4, kind="classification"), lambda y: True).tolist()
    [0, 1, 0, 0]
    """
    if kind == "regression":
        return np.array(draw(st.lists(st.floats(-1e3, 1e3, allow_nan=False), min_size=n, max_size=n)))
    if kind != "classification":
        raise ValueError(f"kind must be 'regression' or 'classification', got {kind!r}.")
    labels = np.array(draw(st.lists(st.integers(0, n_classes - 1), min_size=n, max_size=n)), dtype=np.int64)
    if n >= n_classes:
        labels[:n_classes] = np.arange(n_classes)
    return labels


@st.composite
def value_edit(draw: st.DrawFn, table: Table, *, min_rows: int = 0) -> Table:
    """One edit of the numbers of ``table.canonical``: rows, a cell, a scale, a constant column, int64.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from hypothesis import find
    >>> from shap_instances.testing.strategies import Table, value_edit
    >>> frame = pd.DataFrame({"a": [1.0, 2.0]})
    >>> find(value_edit(Table(frame, frame, np.arange(2))), lambda t: "twice" in repr(t))
    Table(every row twice)
    """
    frame = table.canonical.astype(np.float64)  # type: ignore[union-attr]
    n, p = frame.shape
    kind = draw(st.sampled_from(VALUE_EDITS))
    rows = table.rows
    if kind == "rows":
        k = draw(st.integers(min_rows, min(2, n)))
        frame, rows, label = frame.iloc[:k], rows[:k], f"first {k} rows"
    elif kind == "duplicate_rows":
        frame, rows, label = pd.concat([frame, frame]), np.concatenate([rows, rows]), "every row twice"
    elif kind in ("cell", "int64_cell") and n == 0:
        label = f"{kind} skipped (no rows)"
    elif kind == "cell":
        i, j = draw(st.integers(0, n - 1)), draw(st.integers(0, p - 1))
        v = draw(st.sampled_from(CELL_VALUES))
        frame = frame.copy()
        frame.iloc[i, j] = v
        label = f"cell [{i}, {frame.columns[j]!r}] = {v!r}"
    elif kind == "int64_cell":
        j, i = draw(st.integers(0, p - 1)), draw(st.integers(0, n - 1))
        extreme = draw(st.sampled_from([INT64_MAX, np.iinfo(np.int64).min]))
        with np.errstate(invalid="ignore", over="ignore"):  # NaN or inf from an earlier edit: any int64 will do
            column = np.round(frame.iloc[:, j].to_numpy() * 100).astype(np.int64)
        column[i] = extreme
        frame = frame.copy()
        frame[frame.columns[j]] = column
        label = f"column {frame.columns[j]!r} as int64 (x100), cell {i} = {extreme}"
    elif kind == "scale":
        s = draw(st.sampled_from(MAGNITUDES)) * draw(st.sampled_from([1.0, -1.0]))
        with np.errstate(over="ignore", under="ignore"):
            frame = frame * s
        label = f"every value x {s:g}"
    else:  # constant column
        j = draw(st.integers(0, p - 1))
        c = draw(st.sampled_from([0.0, 1.0, 1e300, -1e-300, float(frame.iloc[:, j].mean()) if n else 0.0]))
        frame = frame.copy()
        frame[frame.columns[j]] = c
        label = f"column {frame.columns[j]!r} constant {c!r}"
    return Table(frame, frame, rows, table.steps + [label])


@st.composite
def layout_edit(draw: st.DrawFn, table: Table, *, allow: tuple = LAYOUT_EDITS) -> Table:
    """At most one change of how the numbers are handed over: column order or names, arrays, sparse, float32.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from hypothesis import find
    >>> from shap_instances.testing.strategies import Table, layout_edit
    >>> frame = pd.DataFrame({"a": [1.0, 2.0], "b": [3.0, 4.0]})
    >>> find(layout_edit(Table(frame, frame, np.arange(2)), allow=("array",)), lambda t: t.layout == "array")
    Table(as a NumPy array)
    """
    kind = draw(st.sampled_from(("none",) + tuple(allow)))
    frame = table.canonical
    assert frame is not None, "layout_edit needs a table with its canonical DataFrame"
    canonical: pd.DataFrame | None = frame
    value: Any = frame
    label = None
    p = frame.shape[1]
    if kind == "reorder":
        order = draw(st.permutations(range(p)))
        value, label = frame.iloc[:, list(order)], f"columns reordered {list(order)}"
    elif kind == "rename":
        j = draw(st.integers(0, p - 1))
        value, canonical = frame.rename(columns={frame.columns[j]: f"{frame.columns[j]}_renamed"}), None
        label = f"column {frame.columns[j]!r} renamed"
    elif kind == "drop_column":
        j = draw(st.integers(0, p - 1))
        value, canonical, label = frame.drop(columns=frame.columns[j]), None, f"column {frame.columns[j]!r} dropped"
    elif kind == "extra_column":
        value, canonical, label = frame.assign(extra_column=1.0), None, "an extra column"
    elif kind == "array":
        value, label = frame.to_numpy(), "as a NumPy array"
    elif kind == "sparse":
        value, label = sp.csr_matrix(frame.to_numpy(dtype=np.float64)), "as a CSR matrix"
    elif kind == "float32":
        with np.errstate(over="ignore"):
            value = frame.astype(np.float32)
        canonical, label = value.astype(np.float64), "as float32"
    steps = table.steps + ([label] if label else [])
    return Table(value, canonical, table.rows, steps, kind)


@st.composite
def edited_table(draw: st.DrawFn, frame: pd.DataFrame, *, max_value_edits: int = 2, allow: tuple = LAYOUT_EDITS,
                 min_rows: int = 0) -> Table:
    """``frame`` after 0 to ``max_value_edits`` value edits and at most one layout edit.

    Examples
    --------
    >>> import pandas as pd
    >>> from hypothesis import find
    >>> from shap_instances.testing.strategies import edited_table
    >>> find(edited_table(pd.DataFrame({"a": [1.0, 2.0]})), lambda t: True)
    Table(unperturbed)
    """
    table = Table(frame, frame, np.arange(len(frame)))
    for _ in range(draw(st.integers(0, max_value_edits))):
        table = draw(value_edit(table, min_rows=min_rows))
    return draw(layout_edit(table, allow=allow))


@st.composite
def edited_target(draw: st.DrawFn, y: Any, edits: tuple = TARGET_EDITS) -> tuple[Any, str | None]:
    """``(target, description)`` after one edit of ``y`` (or none: description None).

    Edits: constant, scaled, one NaN or inf, int64 extremes, strings, one row short, missing (None).

    Examples
    --------
    >>> import numpy as np
    >>> from hypothesis import find
    >>> from shap_instances.testing.strategies import edited_target
    >>> find(edited_target(np.array([1.0, 2.0]), edits=("nan",)), lambda edit: edit[1] is not None)[1]
    'target cell 0 = nan'
    """
    y = np.asarray(y.to_numpy() if isinstance(y, pd.Series) else y)
    kind = draw(st.sampled_from(("none",) + tuple(edits)))
    if kind == "none" or len(y) == 0 and kind not in ("missing", "wrong_length"):
        return y, None
    numeric = y.astype(np.float64) if y.dtype.kind in "biuf" else None
    if kind == "constant":
        return np.full_like(y, y[0]), "target constant"
    if kind == "strings":
        return np.array([f"label{v}" for v in y], dtype=object), "target as strings"
    if kind == "missing":
        return None, "target missing"
    if kind == "wrong_length":
        return y[:-1], "target one row short"
    if numeric is None:
        return y, None
    i = draw(st.integers(0, len(y) - 1))
    if kind == "scale":
        s = draw(st.sampled_from(MAGNITUDES))
        return numeric * s, f"target x {s:g}"
    if kind == "int64":
        out = np.round(numeric).astype(np.int64)
        out[i] = INT64_MAX
        return out, f"target int64, cell {i} = int64 max"
    out = numeric.copy()
    out[i] = np.nan if kind == "nan" else np.inf
    return out, f"target cell {i} = {out[i]}"


@st.composite
def bad_inputs(draw: st.DrawFn, X: pd.DataFrame) -> tuple[str, Any]:
    """``(description, bad X)`` from valid rows ``X``: what an explainer must refuse with the package's errors
    (``ShapInstancesError`` subclasses), or explain into finite values.

    Examples
    --------
    >>> import pandas as pd
    >>> from hypothesis import find
    >>> from shap_instances.testing.strategies import bad_inputs
    >>> find(bad_inputs(pd.DataFrame({"a": [1.0, 2.0]})), lambda case: case[0] == "a 1-D array")[1]
    array([1.])
    """
    kind = draw(st.sampled_from(("nan", "inf", "words", "string", "dict", "1-D", "wide", "narrow")))
    if kind in ("nan", "inf", "words"):
        bad = X.astype(object if kind == "words" else np.float64)
        i, j = draw(st.integers(0, len(X) - 1)), draw(st.integers(0, X.shape[1] - 1))
        bad.iloc[i, j] = {"nan": np.nan, "inf": draw(st.sampled_from([np.inf, -np.inf])), "words": "a word"}[kind]
        return {"nan": "a NaN cell", "inf": "an infinite cell", "words": "a cell of words"}[kind], bad
    if kind == "string":
        return "a string instead of a table", draw(st.text(max_size=8))
    if kind == "dict":
        return "a dict", {str(c): 1.0 for c in X.columns}
    if kind == "1-D":
        return "a 1-D array", X.iloc[0].to_numpy()
    if kind == "wide":
        return "an array one column too wide", np.column_stack([X.to_numpy(), X.to_numpy()[:, :1]])
    return "an array one column short", X.to_numpy()[:, :-1]
