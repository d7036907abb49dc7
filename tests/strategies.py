"""Hypothesis strategies of the fuzz suite: perturbed explainer problems and CSV tables for the CLI.

:func:`fuzz_cases` starts from a registered explainer class's own
:meth:`~shap_instances.InstanceExplainer.conformance_problem` (so plugins are covered without knowing them) and
perturbs it: the training side (masker values, targets, then a refit of a fitted model on them), the explained
rows (values, then their layout: reordered, renamed, dropped or extra columns, arrays, sparse, float32) and the
explained rows' targets. Every case remembers what was done to it (``steps``), which oracles still apply (the
problem's explained quantity, the unperturbed layout the values must equal) and which rows are copies of each
other. :func:`csv_tables` draws small CSV tables, good and bad, for ``shap_instances.cli.main``.

All sizes stay small (the conformance problems have at most 60 training rows), so a case runs in well under a
second; magnitudes span 1e-300 to 1e300 and int64's extremes.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field, replace
from functools import cache
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp
from hypothesis import strategies as st
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.utils.validation import check_is_fitted

import shap_instances as si
from shap_instances.report import MODELS

__all__ = ["Case", "Table", "csv_tables", "fuzz_cases", "base_problem", "MAGNITUDES", "CELL_VALUES"]

INT64_MAX = np.iinfo(np.int64).max
#: Scales applied to a whole table or target.
MAGNITUDES = (1e-300, 1e-150, 1e-8, 1e8, 1e150, 1e300)
#: Values written into one cell.
CELL_VALUES = (np.nan, np.inf, -np.inf, 1e300, -1e300, 1e-300, 0.0, float(INT64_MAX))
#: Edits of a table's numbers (its column layout kept); then at most one layout edit.
VALUE_EDITS = ("rows", "duplicate_rows", "cell", "int64_cell", "scale", "constant_column")
LAYOUT_EDITS = ("reorder", "rename", "drop_column", "extra_column", "array", "sparse", "float32")
#: Layout edits after which the explainer sees the same numbers as the canonical DataFrame.
SAME_NUMBERS = ("none", "reorder", "array", "sparse", "float32")
TARGET_EDITS = ("constant", "scale", "nan", "inf", "int64", "strings")
CALL_TARGET_EDITS = ("constant", "scale", "nan", "inf", "wrong_length", "strings", "missing")


@dataclass
class Table:
    """A table as the explainer gets it, and the same numbers as a DataFrame in the problem's column layout.

    Attributes
    ----------
    value : DataFrame, ndarray or scipy.sparse matrix
        What the explainer is given.
    canonical : DataFrame or None
        The same numbers in the original columns (None when the layout was broken: renamed, dropped or extra
        columns); the oracles evaluate the problem's explained quantity on it.
    rows : ndarray of int
        For each row, the row of the original table it comes from (targets follow it).
    steps : list of str
        The edits, in order.
    layout : str
        The layout edit ("none" when the columns are as in the problem).
    """

    value: Any
    canonical: pd.DataFrame | None
    rows: np.ndarray
    steps: list = field(default_factory=list)
    layout: str = "none"

    def __repr__(self) -> str:
        return f"Table({'; '.join(self.steps) or 'unperturbed'})"

    def _repr_pretty_(self, printer, cycle):
        printer.text(repr(self))


@dataclass
class Case:
    """One fuzz case: an explainer class, its constructor inputs, the call's inputs and the oracles that apply.

    Attributes
    ----------
    name, cls : str, type
        The registered name and class.
    model, masker, y, options
        Constructor inputs (``y`` only when the class takes training targets).
    X : Table
        The explained rows.
    y_explained : array-like or None
        The explained rows' targets, for classes whose call takes them.
    explained : ndarray or None
        The problem's explained quantity on ``X``, where the perturbations leave it valid.
    atol : float
        Its tolerance (relative to ``max(1, |explained|)``).
    must_refuse : bool
        True when ``X`` has other columns than a DataFrame-described model or masker: it must be refused.
    steps : list of str
        Every perturbation, for the failure message and the summary.
    """

    name: str
    cls: type
    model: Any
    masker: Any
    y: Any
    options: dict
    X: Table
    y_explained: Any
    explained: np.ndarray | None
    atol: float
    must_refuse: bool
    steps: list

    def describe(self) -> str:
        return f"{self.name}: " + "; ".join(self.steps or ["unperturbed"])

    __repr__ = describe

    def _repr_pretty_(self, printer, cycle):  # hypothesis prints falsifying examples with this
        printer.text(self.describe())


# ---------------------------------------------------------------------------------------------- the problem
@cache
def base_problem(name: str):
    """The registered class ``name`` and its conformance problem (cached; never modified by the strategies)."""
    cls = si.get_explainer(name)
    return cls, cls.conformance_problem()


def _accepts(cls, option: str) -> bool:
    import inspect

    return option in inspect.signature(cls.__init__).parameters


def _is_fitted(model) -> bool:
    try:
        check_is_fitted(model)
    except (NotFittedError, TypeError):
        return False
    return True


# ---------------------------------------------------------------------------------------------- tables
def _as_float_frame(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.astype(np.float64)


@st.composite
def value_edit(draw, table: Table, *, min_rows: int = 0) -> Table:
    """One edit of the numbers of ``table.canonical``: rows, a cell, a scale, a constant column, int64."""
    frame = _as_float_frame(table.canonical)
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
        j = draw(st.integers(0, p - 1))
        i = draw(st.integers(0, n - 1))
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
def layout_edit(draw, table: Table, *, allow: tuple = LAYOUT_EDITS) -> Table:
    """At most one change of how the numbers are handed over: column order or names, arrays, sparse, float32."""
    kind = draw(st.sampled_from(("none",) + allow))
    frame = table.canonical
    canonical, value, label = frame, frame, None
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
def edited_table(draw, frame: pd.DataFrame, *, max_value_edits: int = 2, allow: tuple = LAYOUT_EDITS,
                 min_rows: int = 0) -> Table:
    """``frame`` after 0 to ``max_value_edits`` value edits and at most one layout edit."""
    table = Table(frame, frame, np.arange(len(frame)))
    for _ in range(draw(st.integers(0, max_value_edits))):
        table = draw(value_edit(table, min_rows=min_rows))
    return draw(layout_edit(table, allow=allow))


@st.composite
def edited_target(draw, y, edits=TARGET_EDITS):
    """A target vector after one edit (or none): constant, scaled, NaN, inf, int64 extremes, strings."""
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


def _refit(model, X: pd.DataFrame, y):
    """A clone of ``model`` fitted on ``(X, y)``, or None when scikit-learn refuses them."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return clone(model).fit(X, y)
    except Exception:  # noqa: BLE001 - any refusal: the case goes on with the original model
        return None


# ---------------------------------------------------------------------------------------------- cases
@st.composite
def fuzz_cases(draw, name: str) -> Case:
    """A perturbed version of the conformance problem of the explainer registered as ``name``."""
    cls, problem = base_problem(name)
    options = dict(problem.options)
    for option, value in (("random_state", 0), ("silent", True)):
        if _accepts(cls, option):
            options.setdefault(option, value)
    steps: list[str] = []
    model = problem.model
    fitted = _is_fitted(model)

    # the training side: the masker's numbers, its targets, a refit on both, then the masker's layout
    train = Table(problem.masker, problem.masker, np.arange(len(problem.masker)))
    if draw(st.booleans()):
        train = draw(edited_table(problem.masker, allow=()))
    y_given = problem.y is not None
    y_source = problem.y if y_given else (model.predict(problem.masker) if fitted else None)
    y_train = None if y_source is None else np.asarray(y_source)[train.rows]
    y_step = None
    if y_train is not None and draw(st.booleans()):
        y_train, y_step = draw(edited_target(y_train, TARGET_EDITS if y_given else ("constant",)))
    steps += [f"train: {s}" for s in train.steps] + ([f"train: {y_step}"] if y_step else [])
    training_changed = bool(train.steps or y_step)
    if fitted and training_changed:
        refitted = _refit(model, train.canonical, y_train)
        steps.append("model refitted" if refitted is not None else "refit refused by scikit-learn: original model")
        model = model if refitted is None else refitted
    train = draw(layout_edit(train, allow=("reorder", "array", "sparse", "float32")))
    if train.layout != "none":
        steps.append(f"train: {train.steps[-1]}")
    training_changed = training_changed or train.layout == "float32"  # rounded: not the numbers fitted on

    # the explained rows, and their targets (which follow the rows)
    X = draw(edited_table(problem.X))
    steps += [f"X: {s}" for s in X.steps]
    y_explained = None
    if problem.y_explained is not None:
        y_explained = np.asarray(problem.y_explained)[X.rows]
        edited, y_call_step = (draw(edited_target(y_explained, CALL_TARGET_EDITS)) if draw(st.booleans())
                               else (y_explained, None))
        if y_call_step:
            steps.append(f"y (call): {y_call_step}")
            y_explained = edited
    else:
        y_call_step = None

    # which oracles still hold: without column names (an array masker, an unfitted model) columns are matched
    # by position, as scikit-learn does, so a reordered DataFrame is other numbers
    names_known = isinstance(train.value, pd.DataFrame) or getattr(model, "feature_names_in_", None) is not None
    if X.layout == "reorder" and not names_known:
        X.canonical, X.layout = None, "reorder (by position)"
    # arrays and CSR matrices are matched by the position of the model's fitted columns, else the masker's
    reference = getattr(model, "feature_names_in_", None)
    if reference is None and isinstance(train.value, pd.DataFrame):
        reference = train.value.columns
    if (X.layout in ("array", "sparse") and reference is not None
            and [str(c) for c in reference] != [str(c) for c in problem.X.columns]):
        X.canonical, X.layout = None, f"{X.layout} (by position, in another column order)"
    explained = None
    rows_kept = len(X.rows) == len(problem.X) and np.array_equal(X.rows, np.arange(len(problem.X)))
    if (problem.explained is not None and not training_changed and y_call_step is None and X.canonical is not None
            and (problem.y_explained is None or rows_kept)):
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            try:
                explained = np.asarray(problem.explained(X.canonical), dtype=np.float64)
            except Exception:  # noqa: BLE001 - the model itself refuses these rows: no reference
                explained = None
    must_refuse = X.layout in ("rename", "drop_column", "extra_column") and names_known
    return Case(name, cls, model, train.value, y_train if y_given else None, options, X, y_explained, explained,
                problem.atol, must_refuse, steps)


def with_X(case: Case, X: Table) -> Case:
    """The same case with other explained rows (and no explained-quantity reference)."""
    return replace(case, X=X, explained=None, steps=case.steps + ["(canonical layout)"])


# ---------------------------------------------------------------------------------------------- CSV tables
#: Column and target kinds, the usable ones repeated so that about half the tables can be explained.
_COLUMN_KINDS = ("normal",) * 6 + ("integers", "bools", "constant", "nan", "inf", "huge", "tiny", "strings",
                                   "int64_max")
_TARGET_KINDS = ("normal",) * 3 + ("labels",) * 3 + ("constant_float", "constant_int", "strings", "nan", "inf",
                                                     "huge")


def _column(kind: str, n: int, rng: np.random.Generator):
    if kind == "normal":
        return rng.normal(size=n)
    if kind == "integers":
        return rng.integers(0, 5, size=n)
    if kind == "constant":
        return np.full(n, 3.5)
    if kind == "strings":
        return np.array([f"s{i % 3}" for i in range(n)], dtype=object)
    if kind == "bools":
        return rng.integers(0, 2, size=n).astype(bool)
    if kind == "int64_max":
        column = rng.integers(0, 5, size=n).astype(np.int64)
        column[:1] = INT64_MAX
        return column
    column = rng.normal(size=n) * {"huge": 1e300, "tiny": 1e-300}.get(kind, 1.0)
    if kind in ("nan", "inf") and n:
        column[rng.integers(0, n)] = np.nan if kind == "nan" else np.inf
    return column


def _target(kind: str, n: int, rng: np.random.Generator):
    if kind == "labels":
        return rng.integers(0, 2, size=n) if n < 4 else np.resize([0, 1, 2], n)
    if kind == "constant_float":
        return np.full(n, 1.5)
    if kind == "constant_int":
        return np.ones(n, dtype=np.int64)
    if kind == "strings":
        return np.array(["yes" if i % 2 else "no" for i in range(n)], dtype=object)
    return _column({"normal": "normal", "nan": "nan", "inf": "inf", "huge": "huge"}[kind], n, rng)


@st.composite
def csv_tables(draw):
    """(DataFrame to write as CSV, target column name, extra command-line arguments, description)."""
    # the usable choices come first: hypothesis draws (and shrinks towards) the first elements more often
    model = draw(st.sampled_from(MODELS))
    explainer = draw(st.sampled_from(["auto"] * 4 + [*sorted(si.list_explainers()), "no_such_explainer"]))
    if explainer == "instance_kernel" and model == "forest":  # 2^n forest refits: a budget question, not a fuzz one
        explainer = "auto"
    # the residual explainer refits the model 2^n times: at most 6 rows keep that under a second
    n = draw(st.sampled_from([6, 6, 6, 3, 2, 1, 0] if explainer == "instance_kernel" else [12, 12, 12, 6, 3, 2, 1, 0]))
    p = draw(st.sampled_from([2, 2, 3, 3, 1, 0]))
    seed = draw(st.integers(0, 2**16))
    rng = np.random.default_rng(seed)
    kinds = [draw(st.sampled_from(_COLUMN_KINDS)) for _ in range(p)]
    target_kind = draw(st.sampled_from(_TARGET_KINDS))
    names = [draw(st.sampled_from(["a", "b", "c", "x y", "ü", "0", ""])) for _ in range(p)]
    target = draw(st.sampled_from(["y", "target"]))
    frame = pd.DataFrame({f"{name}{i}" if name else f"c{i}": _column(kind, n, rng)
                          for i, (name, kind) in enumerate(zip(names, kinds))})
    frame[target] = _target(target_kind, n, rng)
    if draw(st.booleans()):  # the target first, or anywhere
        order = draw(st.permutations(list(frame.columns)))
        frame = frame[list(order)]
    args = ["--model", model, "--explainer", explainer, "--rows", str(draw(st.sampled_from([1, 2, 5])))]
    task = draw(st.sampled_from([None, "regression", "classification"]))
    if task:
        args += ["--task", task]
    if draw(st.booleans()):
        args.append("--dropna")
    asked_target = draw(st.sampled_from([target] * 9 + ["not_a_column"]))
    description = (f"{n} rows, features {kinds} named {list(frame.columns)}, target {target_kind!r} "
                   f"(--target {asked_target}), args {args}, seed {seed}")
    return frame, asked_target, args, description
