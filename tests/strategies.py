"""Hypothesis strategies of the fuzz suite: perturbed explainer problems and CSV tables for the CLI.

The table and target edits are the public ones of :mod:`shap_instances.testing.strategies`, which plugin authors
reuse; this module adds what needs the registry. :func:`fuzz_cases` starts from a registered explainer class's own
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
from dataclasses import dataclass, replace
from functools import cache
from typing import Any

import numpy as np
import pandas as pd
from hypothesis import strategies as st
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.utils.validation import check_is_fitted

import shap_instances as si
from shap_instances.report import MODELS
from shap_instances.testing.strategies import (
    CALL_TARGET_EDITS,
    CELL_VALUES,
    MAGNITUDES,
    SAME_NUMBERS,
    TARGET_EDITS,
    Table,
    edited_table,
    edited_target,
    layout_edit,
)

INT64_MAX = np.iinfo(np.int64).max

__all__ = ["Case", "Table", "csv_tables", "fuzz_cases", "base_problem", "MAGNITUDES", "CELL_VALUES", "SAME_NUMBERS"]



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
