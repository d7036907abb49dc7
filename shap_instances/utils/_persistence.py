"""Files that load without running code: skops' format for models, plain arrays and text for everything else.

An explainer is saved as the arguments that build it (model, training data, options), written with
:func:`skops.io.dumps`, whose loader rebuilds objects from a list of types instead of unpickling. Before
loading, the file's types are read: those of the trusted libraries (classes of scikit-learn, NumPy, SciPy,
XGBoost, LightGBM and shap_instances) are accepted, anything else (a function, a class of another package) is
refused unless the caller passes ``trusted=True``. pandas objects are stored as their columns (NumPy arrays of
numbers, booleans or text) and rebuilt, since skops has no safe format for them.

Every damaged file raises :class:`~shap_instances.exceptions.DataValidationError` naming the file and what is
wrong; nothing here unpickles.
"""

from __future__ import annotations

import importlib
import os
from typing import Any

import numpy as np
import pandas as pd

from ..exceptions import DataValidationError

__all__ = ["TRUSTED_LIBRARIES", "dump_safely", "file_name", "load_model", "load_safely", "read_file", "save_model"]

#: Libraries whose classes a file may hold without ``trusted=True`` (classes only: never a function).
TRUSTED_LIBRARIES = ("sklearn", "numpy", "scipy", "xgboost", "lightgbm", "shap_instances")
#: Classes of those libraries that touch files or run what they are given when built.
#: Containers of the standard library a model's state may hold (LightGBM's parameters).
_TRUSTED_STANDARD = {"collections.OrderedDict"}
_NEVER_TRUSTED = {"numpy.memmap", "numpy.core.memmap.memmap", "numpy._core.memmap.memmap"}
_PANDAS = "__pandas__"
#: The key that marks a file written by :func:`save_model`.
_MODEL = "shap_instances_model"


def file_name(stream: Any) -> str:
    """How messages name a stream: its file name, else its type."""
    name = getattr(stream, "name", None)
    return repr(str(name)) if isinstance(name, str | bytes | os.PathLike) else f"the {type(stream).__name__} stream"


def read_file(in_file: Any) -> tuple[bytes, str]:
    """The bytes of a binary stream and its name; a path, a text stream or an unreadable stream is refused.

    Examples
    --------
    >>> import io
    >>> from shap_instances.utils import read_file
    >>> read_file(io.BytesIO(b"abc"))
    (b'abc', 'the BytesIO stream')
    """
    if isinstance(in_file, str | bytes | os.PathLike):
        raise DataValidationError(f"load and save take an open binary file, not the path {os.fsdecode(in_file)!r}: "
                                  f"pass open({os.fsdecode(in_file)!r}, 'rb') (or 'wb' to save).")
    name = file_name(in_file)
    try:
        data = in_file.read()
    except (OSError, ValueError, AttributeError) as exc:
        raise DataValidationError(f"{name} cannot be read ({type(exc).__name__}: {exc}); pass a binary file "
                                  "opened with 'rb'.") from exc
    if not isinstance(data, bytes):
        raise DataValidationError(f"{name} is a text stream; open the file in binary mode ('rb').")
    return data, name


def dump_safely(bundle: dict[str, Any]) -> bytes:
    """``bundle`` in skops' format, pandas objects as columns; a TypeError names what skops cannot store.

    Examples
    --------
    >>> import pandas as pd
    >>> from shap_instances.utils import dump_safely, load_safely
    >>> data = dump_safely({"frame": pd.DataFrame({"a": [1.0, 2.0]}), "option": 3})
    >>> back = load_safely(data, "example")
    >>> back["frame"]["a"].tolist(), back["option"]
    ([1.0, 2.0], 3)
    """
    import skops.io as sio

    data = sio.dumps(_encode(bundle))
    unknown = [t for t in sio.get_untrusted_types(data=data) if not _trusted_class(t)]
    if unknown:  # stored by reference (a lambda, a class of another package): loading would build them
        raise TypeError(f"it holds objects of types outside the trusted libraries: {unknown[:10]}")
    return data


def load_safely(data: bytes, name: str, *, trusted: bool = False) -> dict[str, Any]:
    """The bundle :func:`dump_safely` wrote, refusing types outside :data:`TRUSTED_LIBRARIES` unless ``trusted``.

    Examples
    --------
    >>> from shap_instances.utils import load_safely
    >>> try:
    ...     load_safely(b"PK garbage", "'x.bin'")
    ... except ValueError as exc:
    ...     print(str(exc)[:33])
    'x.bin' is damaged or truncated (
    """
    import skops.io as sio

    try:
        types = sio.get_untrusted_types(data=data)
    except Exception as exc:  # noqa: BLE001 - a damaged zip fails in many ways (encrypted flags, methods); no code runs
        raise DataValidationError(f"{name} is damaged or truncated ({type(exc).__name__}: {exc}); save the "
                                  "explainer again.") from None
    unknown = [t for t in types if not _trusted_class(t)]
    if unknown and not trusted:
        raise DataValidationError(
            f"{name} holds objects of types outside the trusted libraries ({', '.join(TRUSTED_LIBRARIES)}): "
            f"{unknown[:10]}. Building them could run their code: load it with trusted=True only if you trust "
            "the file and the packages it names.")
    try:
        bundle = sio.loads(data, trusted=list(types))
    except Exception as exc:  # noqa: BLE001 - skops rebuilds from a damaged tree by many paths; none runs code
        raise DataValidationError(f"{name} is damaged ({type(exc).__name__}: {exc}); save the explainer "
                                  "again.") from None
    if not isinstance(bundle, dict):
        raise DataValidationError(f"{name} holds a {type(bundle).__name__}, not a saved explainer.")
    return _decode(bundle, name)


def save_model(model: Any, out_file: Any) -> None:
    """Write a fitted model to an open binary file in the safe format (``shap-instances explain --model-file``).

    Only classes of :data:`TRUSTED_LIBRARIES` may be inside (a pipeline's steps included); a TypeError names
    anything else (a function, a class of another package) and nothing is written.

    Examples
    --------
    >>> import io
    >>> from sklearn.datasets import load_diabetes
    >>> from sklearn.linear_model import Ridge
    >>> from shap_instances.utils import load_model, save_model
    >>> X, y = load_diabetes(return_X_y=True)
    >>> buffer = io.BytesIO()
    >>> save_model(Ridge().fit(X, y), buffer)
    >>> _ = buffer.seek(0)
    >>> type(load_model(buffer)).__name__
    'Ridge'
    """
    out_file.write(dump_safely({_MODEL: model}))


def load_model(in_file: Any, *, trusted: bool = False) -> Any:
    """The model :func:`save_model` wrote, rebuilt without running code from the file.

    Types outside :data:`TRUSTED_LIBRARIES` are refused unless ``trusted``; a damaged file, or one that holds
    something else (a saved explainer), raises :class:`~shap_instances.exceptions.DataValidationError` naming it.
    """
    data, name = read_file(in_file)
    bundle = load_safely(data, name, trusted=trusted)
    if set(bundle) != {_MODEL}:
        raise DataValidationError(f"{name} is not a model file written by shap_instances.utils.save_model (it "
                                  f"holds {sorted(map(str, bundle))[:5]}).")
    return bundle[_MODEL]


def _trusted_class(dotted: str) -> bool:
    """Whether ``dotted`` (``module.Class``) names a class of a trusted library (importing only that library)."""
    if dotted in _TRUSTED_STANDARD:
        return True
    if dotted in _NEVER_TRUSTED or dotted.split(".")[0] not in TRUSTED_LIBRARIES:
        return False
    module, _, attribute = dotted.rpartition(".")
    try:
        found = getattr(importlib.import_module(module), attribute)
    except (ImportError, AttributeError, ValueError):
        return False
    return isinstance(found, type)


def _encode(value: Any) -> Any:
    if isinstance(value, pd.DataFrame):
        return {_PANDAS: "DataFrame", "columns": _column(value.columns),
                "data": [_column(value.iloc[:, j]) for j in range(value.shape[1])], "index": _column(value.index)}
    if isinstance(value, pd.Series):
        return {_PANDAS: "Series", "name": _label(value.name), "data": _column(value), "index": _column(value.index)}
    if isinstance(value, dict):
        return {k: _encode(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(_encode(v) for v in value)
    return value


def _label(label: Any) -> Any:
    if label is None or isinstance(label, str | int | float | bool):
        return label
    if isinstance(label, np.generic):
        return label.item()
    raise TypeError(f"a column or index label {label!r} ({type(label).__name__}) is not text or a number")


def _column(values: Any) -> dict[str, Any]:
    """One column (or an index) as plain arrays: numbers and booleans as they are, text as unicode, categories as
    codes and their categories."""
    if isinstance(values.dtype, pd.CategoricalDtype):
        return {"kind": "category", "codes": np.asarray(values.cat.codes if hasattr(values, "cat") else values.codes),
                "categories": _column(pd.Index(values.cat.categories if hasattr(values, "cat") else
                                               values.categories)), "ordered": bool(values.dtype.ordered)}
    array = np.asarray(values)
    if array.dtype.kind in "biufcmM":
        return {"kind": "array", "values": array}
    if all(isinstance(v, str) for v in array):
        return {"kind": "text", "values": array.astype(str), "dtype": str(values.dtype)}
    raise TypeError(f"a column of dtype {values.dtype} holding {type(array[0]).__name__} values")


def _decode(value: Any, name: str) -> Any:
    if isinstance(value, dict) and _PANDAS in value:
        try:
            return _rebuild(value)
        except (KeyError, TypeError, ValueError, IndexError) as exc:
            raise DataValidationError(f"{name} is damaged: a saved table cannot be rebuilt ({exc}); save the "
                                      "explainer again.") from None
    if isinstance(value, dict):
        return {k: _decode(v, name) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(_decode(v, name) for v in value)
    return value


def _rebuild(value: dict[str, Any]) -> pd.DataFrame | pd.Series:
    index = pd.Index(_values(value["index"]))
    if value[_PANDAS] == "Series":
        return pd.Series(_values(value["data"]), index=index, name=value["name"])
    labels = pd.Index(_values(value["columns"]))
    if value[_PANDAS] != "DataFrame" or len(labels) != len(value["data"]):
        raise ValueError(f"unknown table {value[_PANDAS]!r} or columns that disagree with the data")
    frame = pd.DataFrame({j: _values(column) for j, column in enumerate(value["data"])}, index=index)
    frame.columns = labels
    return frame


def _values(column: dict[str, Any]) -> Any:
    if column["kind"] == "category":
        categories = _values(column["categories"])
        return pd.Categorical.from_codes(column["codes"], categories=categories, ordered=column["ordered"])
    if column["kind"] == "text":
        return pd.array(column["values"].tolist(), dtype=column["dtype"] if column["dtype"] != "object" else object)
    if column["kind"] == "array":
        return np.asarray(column["values"])
    raise ValueError(f"unknown column kind {column['kind']!r}")
