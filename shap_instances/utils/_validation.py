"""Input validation shared by every public entry point (the boundary of the package).

Games, estimators and kernels trust their inputs; everything a user passes goes through here first.
"""

from __future__ import annotations

import contextlib
import contextvars
import inspect
import numbers
import os
import weakref
from collections import Counter
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp
from sklearn.exceptions import NotFittedError as SklearnNotFittedError
from sklearn.utils.validation import check_array, check_is_fitted

from .._deprecated import warn_moved
from ..exceptions import DataValidationError, MemoryBudgetError, NonFiniteResultError, NotFittedError
from ._memory import available_memory_bytes, default_memory_budget

# scikit-learn 1.6 renamed check_array's force_all_finite to ensure_all_finite (the old name left in 1.8).
_FINITE = (
    "ensure_all_finite" if "ensure_all_finite" in inspect.signature(check_array).parameters else "force_all_finite"
)

__all__ = [
    "categorical_columns",
    "check_data",
    "check_pairs",
    "validating_once",
    "check_finite_result",
    "check_labels",
    "class_codes",
    "check_model_rows",
    "check_target",
    "check_unique_columns",
    "check_fitted",
    "instance_names",
    "row_names",
    "fitted_columns",
    "training_names",
    "column_names",
    "check_memory",
    "check_disk",
    "string_columns",
    "scan_text_file",
    "in_column_order",
    "available_memory_bytes",
]


#: Within :func:`validating_once`: what :func:`check_data` returned, by (the object's id, the options), beside a weak
#: reference to the object (an entry leaves when its object is freed, so that a stream of partitions is not kept).
_VALIDATED: contextvars.ContextVar[dict | None] = contextvars.ContextVar("shap_instances_validated", default=None)


@contextlib.contextmanager
def validating_once() -> Iterator[None]:
    """Within this block, :func:`check_data` validates an object once per set of options: a second call on the same
    object (not a copy of it) returns the first call's array, unchecked.

    For one call of a whole analysis (``run_report``, a command of the command line) that hands the same training
    rows to several explainers and does not change them in between. Only objects that take weak references
    (arrays, DataFrames, sparse matrices) are remembered, while they live. Blocks nest (the outer one's record is
    kept); threads started inside do not share it (they validate as usual).

    Examples
    --------
    >>> import numpy as np
    >>> from shap_instances.utils import check_data, validating_once
    >>> rows = np.array([[1, 2], [3, 4]])
    >>> with validating_once():
    ...     check_data(rows) is check_data(rows)
    True
    >>> check_data(rows) is check_data(rows)
    False
    """
    if _VALIDATED.get() is not None:
        yield
        return
    token = _VALIDATED.set({})
    try:
        yield
    finally:
        _VALIDATED.reset(token)


def check_data(X: Any, *, name: str = "X", allow_sparse: bool = False, allow_nan: bool = False,
               n_features: int | None = None, dtype: Any = np.float64, feature_names: Sequence[str] | None = None,
               min_rows: int = 1) -> Any:
    """Validate a 2-D data matrix and return it as a float array (or CSR matrix).

    The user's object is never modified: a converted copy is returned when conversion is needed. With
    ``feature_names`` (the columns the model was fitted on), a DataFrame's columns are put in that order, and
    a DataFrame with other columns is refused, so columns are never matched by position by mistake. Within
    :func:`validating_once`, an object already validated with the same options is not validated again.

    Examples
    --------
    >>> from shap_instances.utils import check_data
    >>> check_data([[1, 2], [3, 4]]).dtype
    dtype('float64')
    """
    validated = _VALIDATED.get()
    if validated is None:
        return _checked_data(X, name, allow_sparse, allow_nan, n_features, dtype, feature_names, min_rows)
    key = _validation_key(X, dtype, feature_names, min_rows)
    known = validated.get(key)
    if (known is not None and known[0]() is X and (allow_nan or known[2])  # checked for NaN when that is asked
            and (allow_sparse or not sp.issparse(known[1]))):
        _check_width(known[1], n_features, name)
        return known[1]
    array = _checked_data(X, name, allow_sparse, allow_nan, n_features, dtype, feature_names, min_rows)
    with contextlib.suppress(TypeError):  # a list or a tuple takes no weak reference: not remembered
        validated[key] = (weakref.ref(X, lambda _: validated.pop(key, None)), array, not allow_nan)
    return array


def _validation_key(X: Any, dtype: Any, feature_names: Sequence[str] | None, min_rows: int) -> tuple:
    """What :func:`check_data`'s array depends on: the object, the dtype, the fewest rows and (a DataFrame's) the
    order of its columns; the options that only refuse (NaN, sparse, the width) are checked on the array."""
    order = None
    if isinstance(X, pd.DataFrame):
        order = tuple(str(f) for f in (X.columns if feature_names is None else feature_names))
    return id(X), np.dtype(dtype).str, min_rows, order


def _check_width(array: Any, n_features: int | None, name: str) -> None:
    """Refuse ``array`` unless it has ``n_features`` columns (None: any)."""
    if n_features is not None and array.shape[1] != n_features:
        raise DataValidationError(
            f"{name} has {array.shape[1]} columns, but the model was fitted on {n_features}; "
            "pass data with the same columns as the training data."
        )


def _checked_data(X: Any, name: str, allow_sparse: bool, allow_nan: bool, n_features: int | None, dtype: Any,
                  feature_names: Sequence[str] | None, min_rows: int) -> Any:
    """:func:`check_data`'s validation itself."""
    if isinstance(X, pd.DataFrame):
        check_unique_columns(X.columns, name)
    if feature_names is not None and isinstance(X, pd.DataFrame):
        X = in_column_order(X, [str(f) for f in feature_names], name)
    try:
        array = check_array(
            X,
            accept_sparse=["csr", "csc"] if allow_sparse else False,
            dtype=dtype,
            ensure_2d=True,
            **{_FINITE: "allow-nan" if allow_nan else True},
            input_name=name,
            ensure_min_samples=min_rows,
        )
    except TypeError as exc:  # sparse input where dense is required, and similar
        raise DataValidationError(f"{name}: {exc}") from exc
    except ValueError as exc:
        raise DataValidationError(f"{name}: {exc}{_string_columns_hint(X)}") from exc
    if sp.issparse(array):
        array = sp.csr_matrix(array)
    _check_width(array, n_features, name)
    return array


def in_column_order(X: pd.DataFrame, expected: list[str], name: str = "X") -> pd.DataFrame:
    """``X`` with its columns in the order ``expected``; a DataFrame with other columns is refused.

    Examples
    --------
    >>> import pandas as pd
    >>> from shap_instances.utils import in_column_order
    >>> list(in_column_order(pd.DataFrame({"b": [1], "a": [2]}), ["a", "b"]).columns)
    ['a', 'b']
    """
    columns = check_unique_columns(X.columns, name)
    check_unique_columns(expected, "the fitted columns")
    if columns == expected:
        return X
    if sorted(columns) != sorted(expected):
        missing = [c for c in expected if c not in columns]
        unexpected = [c for c in columns if c not in expected]
        raise DataValidationError(
            f"{name} has other columns than the model was fitted on: missing {_listed(missing)}, unexpected "
            f"{_listed(unexpected)}; pass a DataFrame with the training columns {_listed(expected)}."
        )
    return X.iloc[:, [columns.index(c) for c in expected]]


def check_unique_columns(columns: Any, name: str = "X") -> list[str]:
    """The column names as strings; names that repeat (as strings: ``1`` and ``"1"`` too) are refused.

    Columns are matched by name, so a repeated name could not say which column is which.

    Examples
    --------
    >>> from shap_instances.utils import check_unique_columns
    >>> check_unique_columns(["a", 1])
    ['a', '1']
    >>> try:
    ...     check_unique_columns(["a", "b", "a"], "X")
    ... except ValueError as exc:
    ...     print(exc)
    X has repeated column names ['a']: columns are matched by name; rename them so that each name is used once.
    """
    names = [str(c) for c in columns]
    repeated = sorted(name for name, count in Counter(names).items() if count > 1)
    if repeated:
        raise DataValidationError(f"{name} has repeated column names {_listed(repeated)}: columns are matched by "
                                  "name; rename them so that each name is used once.")
    return names


def check_row_order(X: Any, y: Any, *, name: str = "y", rows_name: str = "X") -> None:
    """Refuse a pandas ``y`` whose index holds the row labels of the pandas ``X`` in another order.

    Rows and targets are paired by position (as in scikit-learn), while pandas pairs them by label: a ``y`` whose
    index is ``X``'s shuffled (``y.sample(frac=1)``, a sort of one but not the other) would silently give every row
    another row's target. Indexes that share no order question (equal, of other lengths, other labels such as a
    reset index) are left alone.

    Examples
    --------
    >>> import pandas as pd
    >>> from shap_instances.utils import check_row_order
    >>> X = pd.DataFrame({"a": [1.0, 2.0, 3.0]}, index=[10, 11, 12])
    >>> check_row_order(X, pd.Series([0, 1, 0], index=[10, 11, 12]))
    >>> try:
    ...     check_row_order(X, pd.Series([0, 1, 0], index=[12, 10, 11]))
    ... except ValueError as exc:
    ...     print(exc)  # doctest: +ELLIPSIS
    y holds the row labels of X in another order: rows are paired with targets by position, ...
    """
    if not isinstance(X, pd.DataFrame | pd.Series) or not isinstance(y, pd.DataFrame | pd.Series):
        return
    rows, targets = X.index, y.index
    if len(rows) != len(targets) or rows.equals(targets) or not (rows.is_unique and targets.is_unique):
        return
    if targets.isin(rows).all():
        raise DataValidationError(
            f"{name} holds the row labels of {rows_name} in another order: rows are paired with targets by "
            f"position, so each row would get another row's target; pass {name}.loc[{rows_name}.index] (or both "
            "in one order).")


def check_target(y: Any, n_samples: int, *, name: str = "y", numeric: bool = True) -> np.ndarray:
    """Validate a target vector (or (n, k) matrix) with ``n_samples`` rows.

    Examples
    --------
    >>> from shap_instances.utils import check_target
    >>> check_target([1.0, 2.0], 2).shape
    (2,)
    """
    array = np.asarray(y.to_numpy() if isinstance(y, pd.Series | pd.DataFrame) else y)
    if array.ndim == 2 and array.shape[1] == 1:
        array = array[:, 0]
    if array.ndim not in (1, 2) or array.shape[0] != n_samples:
        raise DataValidationError(
            f"{name} must have {n_samples} rows (one per row of the data), got shape {array.shape}."
        )
    if numeric:
        try:
            array = array.astype(np.float64)
        except (TypeError, ValueError) as exc:
            raise DataValidationError(f"{name} must be numeric: {exc}") from exc
        if not np.all(np.isfinite(array)):
            raise DataValidationError(f"{name} contains NaN or infinite values; drop or impute those rows.")
    return array


def check_labels(y: Any, n_samples: int, *, classes: Any = None, name: str = "y",
                 classes_of: str = "the model's classes", allow_unknown: bool = False) -> np.ndarray:
    """Validate class labels: one label per row, of one type, none missing, and (with ``classes``) known.

    Labels are compared by value, so ``"1"`` and ``1`` are different classes: labels of two types in one
    vector, or of another type than ``classes`` (strings for a model fitted on integers), would silently
    match nothing. Either is refused, as are labels outside ``classes`` (a model's ``classes_``, or the
    training labels; ``classes_of`` says which in the message), unless ``allow_unknown`` (labels of the type of
    ``classes`` that are not among them: an explained point of a class no training point has).

    Examples
    --------
    >>> from shap_instances.utils import check_labels
    >>> check_labels(["a", "b", "a"], 3, classes=["a", "b"]).tolist()
    ['a', 'b', 'a']
    >>> try:
    ...     check_labels(["0", "1"], 2, classes=[0, 1])
    ... except ValueError as exc:
    ...     print(str(exc).split(";")[0])
    y holds labels of type str, but the model's classes [0, 1] are of type number
    """
    array = check_target(y, n_samples, name=name, numeric=False)
    if array.ndim != 1:
        raise DataValidationError(f"{name} must hold one class label per row (1-D), got shape {array.shape}.")
    kinds = _label_kinds(array)
    if "missing" in kinds:
        raise DataValidationError(f"{name} has missing labels (NaN or None); drop those rows or give them a class.")
    if len(kinds) > 1:
        examples = {kind: next(v for v in array.tolist() if _label_kind(v) == kind) for kind in sorted(kinds)}
        raise DataValidationError(f"{name} mixes labels of types {sorted(kinds)} (e.g. {examples}); labels are "
                                  "compared by value, so 1 and '1' are different classes: pass labels of one type.")
    if classes is None:
        return array
    known = np.asarray(classes)
    expected = _label_kinds(known)
    if kinds and expected and kinds != expected:
        cast = "int" if expected == {"number"} else "str"
        raise DataValidationError(
            f"{name} holds labels of type {min(kinds)}, but {classes_of} {_listed(known.tolist())} are of type "
            f"{min(expected)}; labels are compared by value ('1' is not 1): pass {name} with labels of that type "
            f"(e.g. {name}.astype({cast})).")
    unknown = np.zeros(len(array), dtype=bool) if allow_unknown else ~np.isin(array, known)
    if unknown.any():
        raise DataValidationError(f"{name} holds labels that are not among {classes_of} {_listed(known.tolist())}: "
                                  f"{_listed(pd.unique(array[unknown]).tolist())}; drop those rows, or fit on rows of "
                                  "those classes.")
    return array


def class_codes(y: Any, n_samples: int, classes: Any, *, name: str = "y",
                classes_of: str = "the classes the model was fitted on") -> np.ndarray:
    """The positions (int64) of the labels ``y`` in ``classes``, once :func:`check_labels` has accepted them.

    One label per row, of the type of ``classes``, each among them; ``classes`` need not be sorted.

    Examples
    --------
    >>> from shap_instances.utils import class_codes
    >>> class_codes(["b", "a", "b"], 3, ["a", "b"]).tolist()
    [1, 0, 1]
    """
    labels = check_labels(y, n_samples, classes=classes, name=name, classes_of=classes_of)
    known = np.asarray(classes)
    order = np.argsort(known, kind="stable")
    return order[np.searchsorted(known[order], labels)].astype(np.int64)


def _label_kind(value: Any) -> str:
    """``"number"`` (bools included), ``"str"``, ``"missing"`` (None, NaN) or the type's name."""
    if value is None or value is pd.NA or value is pd.NaT or (isinstance(value, numbers.Real)
                                                             and not np.isfinite(float(value))):
        return "missing"
    if isinstance(value, numbers.Number | np.bool_):
        return "number"
    return "str" if isinstance(value, str | np.str_ | bytes) else type(value).__name__


def _label_kinds(array: np.ndarray) -> set[str]:
    """The kinds of the labels in ``array`` (one pass over an object array; by dtype otherwise)."""
    if array.dtype.kind in "US":
        return {"str"} if array.size else set()
    if array.dtype.kind in "biu":
        return {"number"} if array.size else set()
    if array.dtype.kind == "f":
        return ({"number"} if array.size else set()) | ({"missing"} if np.isnan(array).any() else set())
    return {_label_kind(v) for v in array.ravel().tolist()}


def check_finite_result(values: Any, what: str, *, why: str = "") -> np.ndarray:
    """``values`` as a float array, refused with :class:`~shap_instances.exceptions.NonFiniteResultError` when any
    is NaN or infinite (``why``: the likely causes and what to change).

    Every function that returns computed values passes them through here, so a NaN is never handed back as a
    result.

    Examples
    --------
    >>> from shap_instances.utils import check_finite_result
    >>> check_finite_result([1.0, 2.0], "the values").tolist()
    [1.0, 2.0]
    >>> try:
    ...     check_finite_result([1.0, float("nan")], "the values", why="the scorer returned NaN")
    ... except ValueError as exc:
    ...     print(exc)
    the values are not finite (1 of 2 NaN or infinite, e.g. nan): the scorer returned NaN.
    """
    array = np.asarray(values, dtype=np.float64)
    bad = ~np.isfinite(array)
    if bad.any():
        raise NonFiniteResultError(f"{what} are not finite ({int(bad.sum())} of {array.size} NaN or infinite, e.g. "
                                   f"{array[bad].ravel()[0]:g}){': ' + why if why else ''}.")
    return array


def check_model_rows(X: Any, *, name: str = "X", columns: Sequence[str] | None = None, raw: bool = False,
                     n_features: int | None = None) -> Any:
    """Rows as the model takes them: floats (:func:`check_data`), or a DataFrame of raw rows for a pipeline.

    ``raw`` is for a whole pipeline that is refitted on the rows: strings, categories and missing values are
    the pipeline's to handle, so the rows stay a DataFrame (a 2-D array is given the ``columns``). Either way a
    DataFrame is matched to ``columns`` by name (other columns refused with the names).

    Examples
    --------
    >>> import pandas as pd
    >>> from shap_instances.utils import check_model_rows
    >>> rows = pd.DataFrame({"b": ["x", "y"], "a": [1.0, 2.0]})
    >>> list(check_model_rows(rows, columns=["a", "b"], raw=True).columns)
    ['a', 'b']
    """
    if not raw:
        text = [c for c in X.columns if not pd.api.types.is_numeric_dtype(X[c])] if isinstance(X, pd.DataFrame) else []
        if text:
            raise DataValidationError(f"{name} has columns that are not numbers, {_listed([str(c) for c in text])}, "
                                      "but the model takes numbers: encode them first, or pass a pipeline that does "
                                      "(make_pipeline(make_column_transformer(...), model)), which gets the rows as "
                                      "they are.")
        return check_data(X, name=name, n_features=n_features, feature_names=columns)
    names = [str(c) for c in columns] if columns is not None else column_names(X)
    if not isinstance(X, pd.DataFrame) and np.ndim(X) == 2 and np.shape(X)[1] == len(names):
        X = pd.DataFrame(X, columns=names)
    if not isinstance(X, pd.DataFrame) or len(X) == 0:
        raise DataValidationError(f"{name}: a pipeline refitted on raw rows needs a non-empty DataFrame (or a "
                                  f"2-D array) with the columns {_listed(names)}.")
    return in_column_order(X, names, name)


def check_fitted(model: Any, name: str = "model") -> None:
    """Raise :class:`~shap_instances.exceptions.NotFittedError` unless ``model`` is fitted.

    Examples
    --------
    >>> from sklearn.linear_model import Ridge
    >>> from shap_instances.utils import check_fitted
    >>> try:
    ...     check_fitted(Ridge())
    ... except ValueError as exc:
    ...     print(type(exc).__name__)
    NotFittedError
    """
    try:
        check_is_fitted(model)
    except SklearnNotFittedError as exc:
        raise NotFittedError(
            f"The {name} {type(model).__name__} is not fitted; call {name}.fit(X, y) before explaining it."
        ) from exc
    except TypeError as exc:
        raise NotFittedError(f"The {name} {type(model).__name__!r} is not a scikit-learn estimator: {exc}") from exc


def fitted_columns(model: Any, data: Any = None) -> list[str] | None:
    """The column names inputs must have: the model's ``feature_names_in_``, else a training DataFrame's columns.

    ``None`` when neither is known (arrays everywhere): columns are then matched by position and width.
    A bound method (``model.predict``) is looked through to its model.

    Examples
    --------
    >>> import pandas as pd
    >>> from sklearn.linear_model import Ridge
    >>> from shap_instances.utils import fitted_columns
    >>> frame = pd.DataFrame({"a": [0.0, 1.0], "b": [1.0, 0.0]})
    >>> fitted_columns(Ridge().fit(frame, [0.0, 1.0])), fitted_columns(Ridge(), frame), fitted_columns(Ridge())
    (['a', 'b'], ['a', 'b'], None)
    """
    owner = getattr(model, "__self__", model)
    names = getattr(owner, "feature_names_in_", None)
    if names is None and isinstance(data, pd.DataFrame):
        names = data.columns
    return None if names is None else check_unique_columns(names, "the training data")


def training_names(data: Any, feature_names: Sequence[str] | None = None) -> list[str]:
    """Names of the training rows (the players of an instance explainer).

    ``feature_names`` when given (one per row), else the DataFrame's index, else ``"train[i]"``.

    Examples
    --------
    >>> from shap_instances.utils import training_names
    >>> training_names([[0.0], [1.0]]), training_names([[0.0]], feature_names=["first"])
    (['train[0]', 'train[1]'], ['first'])
    """
    n = data.shape[0] if hasattr(data, "shape") else len(data)
    if feature_names is None:
        return row_names(data, prefix="train")
    names = [str(f) for f in feature_names]
    if len(names) != n:
        raise DataValidationError(f"feature_names has {len(names)} names, but there are {n} training rows (the "
                                  "players of this explainer); pass one name per training row.")
    return names


def _listed(names: list[str], most: int = 10) -> str:
    """``['a', 'b']``, or the first ``most`` names and how many more."""
    shown = repr(names[:most])
    return shown if len(names) <= most else f"{shown[:-1]}, ... ({len(names) - most} more)]"


def row_names(X: Any, prefix: str = "x") -> list[str]:
    """Names of the rows of ``X``: its index for a DataFrame or Series, else ``"{prefix}[i]"``.

    Explained rows are ``"x[i]"`` and training rows ``"train[i]"`` in every explainer.

    Examples
    --------
    >>> from shap_instances.utils import row_names
    >>> row_names([[0], [1]]), row_names([[0]], prefix="train")
    (['x[0]', 'x[1]'], ['train[0]'])
    """
    if isinstance(X, pd.DataFrame | pd.Series):
        index = X.index  # a RangeIndex's numbers as a range: three times faster than iterating the index
        return list(map(str, range(index.start, index.stop, index.step) if isinstance(index, pd.RangeIndex) else index))
    shape = getattr(X, "shape", None)
    if isinstance(shape, tuple):
        n_rows = shape[0] if shape else 0
    else:  # no rows to name (a scalar, None, ...): the validation of X that follows refuses it with the reason
        n_rows = len(X) if hasattr(X, "__len__") and not isinstance(X, str | bytes) else 0
    return [f"{prefix}[{i}]" for i in range(n_rows)]


def instance_names(X: Any, prefix: str = "train") -> list[str]:
    """Deprecated alias of :func:`row_names` with ``prefix="train"`` (removed in 0.3).

    Examples
    --------
    >>> import warnings
    >>> from shap_instances.utils import instance_names
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     instance_names([[0], [1]])
    ['train[0]', 'train[1]']
    """
    warn_moved("shap_instances.utils.instance_names(X)", 'shap_instances.utils.row_names(X, prefix="train")')
    return row_names(X, prefix)


def column_names(X: Any, n_columns: int | None = None) -> list[str]:
    """Column names of ``X``: a DataFrame's columns, else ``"x{i}"``.

    Examples
    --------
    >>> from shap_instances.utils import column_names
    >>> column_names([[1, 2]])
    ['x0', 'x1']
    """
    if isinstance(X, pd.DataFrame):
        return [str(c) for c in X.columns]
    n_columns = n_columns if n_columns is not None else np.shape(X)[1]
    return [f"x{i}" for i in range(n_columns)]


def check_memory(n_bytes: float, what: str, *, max_memory: float | None = None, instead: str = "") -> None:
    """Refuse an allocation of ``n_bytes`` larger than ``max_memory`` (default: half the memory this process can
    still allocate: the least of the available memory, the cgroup's limit and ``ulimit -v``).

    Examples
    --------
    >>> from shap_instances.utils import check_memory
    >>> check_memory(1e3, "a small matrix")
    """
    budget = default_memory_budget() if max_memory is None else max_memory
    if n_bytes > budget:
        raise MemoryBudgetError(
            f"{what} would need {_size(n_bytes)}, more than the memory budget of {_size(budget)}. {instead}".strip()
        )


def _size(n_bytes: float) -> str:
    """Bytes as GiB (two decimals), or as MiB or bytes where GiB would print 0.00."""
    if n_bytes >= 2**30 / 100:
        return f"{n_bytes / 2**30:.2f} GiB"
    return f"{n_bytes / 2**20:.2f} MiB" if n_bytes >= 2**20 / 100 else f"{n_bytes:,.0f} bytes"


def _string_columns_hint(X: Any) -> str:
    """What to do about a DataFrame's string columns that a numeric check refused ('' for other input)."""
    if not isinstance(X, pd.DataFrame):
        return ""
    strings = [str(c) for c in string_columns(X)]
    if not strings:
        return ""
    return (f" (columns {strings[:10]} hold strings, which this model takes only as numbers: explain a Pipeline "
            "that encodes them, e.g. a ColumnTransformer with a OneHotEncoder, fitted on the raw table; or, for "
            "HistGradientBoosting / LightGBM / XGBoost fitted on them as categories, give them as pandas "
            "categoricals)")


def scan_text_file(path: str | os.PathLike[str], what: str) -> tuple[int, bool]:
    """Read the file ``path`` once, block by block, refusing one that is not text: ``(line ends, whether the
    last byte is one)``.

    A NUL byte (a binary file, a spreadsheet, text saved as UTF-16) raises a
    :class:`~shap_instances.exceptions.DataValidationError` naming ``what`` (the option or argument the file was
    given as), the file, the byte's position and what to do, so that no reader blames a column for it.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> from shap_instances.utils import scan_text_file
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "t.csv"
    >>> _ = path.write_bytes(b"a,y\\n1,2\\n")
    >>> scan_text_file(path, "--data")
    (2, True)
    """
    n_lines, last, offset = 0, b"\n", 0
    with open(path, "rb") as handle:
        while block := handle.read(2**24):
            if (nul := block.find(b"\x00")) >= 0:
                utf16 = " (it looks like text saved as UTF-16)" if block[:2] in (b"\xff\xfe", b"\xfe\xff") else ""
                raise DataValidationError(
                    f"{what} {os.fspath(path)}: byte {offset + nul:,} is a NUL byte, so the file is not a text CSV"
                    f"{utf16}; save it as a UTF-8 CSV file (a spreadsheet: 'Save as' CSV UTF-8)")
            n_lines, last, offset = n_lines + block.count(b"\n"), block[-1:], offset + len(block)
    return n_lines, last == b"\n"


def check_disk(n_bytes: float, folder: str | os.PathLike[str], what: str, *, instead: str = "") -> None:
    """Refuse a write of ``n_bytes`` into ``folder`` larger than the space free on its disk (before writing: a
    full disk leaves a truncated file, and a memory map written past it kills the process).

    Examples
    --------
    >>> from shap_instances.utils import check_disk
    >>> check_disk(1e3, ".", "a small table")
    """
    import shutil

    free = shutil.disk_usage(os.fspath(folder) or ".").free
    if n_bytes > free:
        raise MemoryBudgetError(f"{what} would take about {n_bytes / 2**30:,.2f} GiB, more than the "
                                f"{free / 2**30:,.2f} GiB free on the disk of {os.fspath(folder)}. {instead}".strip())


def model_input(model: Any, X: Any) -> Any:
    """``X`` as the model expects it: a DataFrame with its feature names when it was fitted on one.

    Validated arrays lose column names; scikit-learn then warns that X has no valid feature names.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from sklearn.linear_model import Ridge
    >>> from shap_instances.utils import model_input
    >>> model = Ridge().fit(pd.DataFrame({"a": [0.0, 1.0]}), [0.0, 1.0])
    >>> list(model_input(model, np.zeros((1, 1))).columns)
    ['a']
    """
    names = getattr(model, "feature_names_in_", None)
    if names is None or isinstance(X, pd.DataFrame) or sp.issparse(X) or np.ndim(X) != 2:
        return X
    return pd.DataFrame(X, columns=names)


def string_columns(X: pd.DataFrame) -> list:
    """The columns of ``X`` that hold strings or other objects (not pandas categoricals, numbers or booleans).

    Examples
    --------
    >>> import pandas as pd
    >>> from shap_instances.utils import string_columns
    >>> string_columns(pd.DataFrame({"a": [1.0, 2.0], "b": ["x", "y"], "c": pd.Categorical(["x", "y"])}))
    ['b']
    """
    return [c for c, dtype in X.dtypes.items()
            if pd.api.types.is_object_dtype(dtype) or isinstance(dtype, pd.StringDtype)]


def categorical_columns(X: pd.DataFrame) -> list:
    """The columns of ``X`` that are encoded as categories: strings, objects, categoricals and booleans.

    Examples
    --------
    >>> import pandas as pd
    >>> from shap_instances.utils import categorical_columns
    >>> categorical_columns(pd.DataFrame({"a": [1.0, 2.0], "b": ["x", "y"], "c": [True, False]}))
    ['b', 'c']
    """
    return [c for c in X.columns
            if not pd.api.types.is_numeric_dtype(X[c]) or pd.api.types.is_bool_dtype(X[c])]


def check_pairs(X: Any, name: str = "X", shape: tuple[int, ...] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Validate an (n, 2) array of non-negative integer (user, item) indices.

    Examples
    --------
    >>> from shap_instances.utils import check_pairs
    >>> users, items = check_pairs([[0, 2], [1, 0]])
    >>> users.tolist(), items.tolist()
    ([0, 1], [2, 0])
    """
    arr = np.asarray(X)
    if arr.ndim != 2 or arr.shape[1] != 2:
        raise DataValidationError(f"{name} must be an (n, 2) array of (user, item) indices, got shape {arr.shape}.")
    if arr.dtype.kind == "f":
        if not np.all(np.isfinite(arr)) or np.any(arr != np.round(arr)):
            raise DataValidationError(f"{name} must hold integer user and item indices.")
    elif arr.dtype.kind not in "iu":
        raise DataValidationError(f"{name} must hold integer user and item indices, got dtype {arr.dtype}.")
    arr = arr.astype(np.int64)
    if arr.size and arr.min() < 0:
        raise DataValidationError(f"{name} holds negative indices; encode users and items as 0..n-1.")
    if shape is not None and arr.size and (arr[:, 0].max() >= shape[0] or arr[:, 1].max() >= shape[1]):
        raise DataValidationError(
            f"{name} holds a user index >= {shape[0]} or an item index >= {shape[1]} (the fitted matrix shape)."
        )
    return arr[:, 0], arr[:, 1]
