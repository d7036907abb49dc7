"""Files that load without running code: skops' format for models, plain arrays and text for everything else.

An explainer is saved as the arguments that build it (model, training data, options), written with
:func:`skops.io.dumps`, whose loader rebuilds objects from a list of types instead of unpickling. Before
loading, every node of the file's schema is read (plain JSON: nothing is imported or built): each names a
class and the loader that builds it, and the pair must be on the explicit list of
:mod:`shap_instances.utils._trusted_types` (fitted estimators, arrays, named helper types; never "any class of
library X"). Anything else is refused unless the caller passes ``trusted=True``. Once built, trees and other
types that carry indices into native buffers are checked (:mod:`~shap_instances.utils._model_state`) before
anything can use them. pandas objects are stored as their columns (NumPy arrays of numbers, booleans or
text) and rebuilt, since skops has no safe format for them.

Every damaged file raises :class:`~shap_instances.exceptions.DataValidationError` naming the file and what is
wrong; nothing here unpickles.
"""

from __future__ import annotations

import io
import json
import os
import zipfile
from typing import Any

import numpy as np
import pandas as pd

from ..exceptions import DataValidationError
from ._memory import available_memory_bytes
from ._model_state import check_model_state
from ._native_probe import probe_native_models
from ._trusted_types import trusted_types

__all__ = ["dump_safely", "file_name", "load_model", "load_safely", "read_file", "save_model", "untrusted_types"]

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
    """``bundle`` in skops' format, pandas objects as columns; a TypeError names what loading would refuse.

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
    refused = untrusted_types(data)
    if refused:  # a lambda, a class of another package, a type off the list: loading would refuse the file
        raise TypeError(f"it holds objects of types outside the trusted types: {refused[:10]}")
    return data


def untrusted_types(data: bytes) -> list[str]:
    """The classes in a skops file that are not on the list of :func:`trusted_types` for the loader that builds
    them, each as ``'module.Class (Loader)'``; reads the file's schema only (nothing is imported or built).

    Raises ``KeyError``, ``ValueError`` or ``zipfile.BadZipFile`` on a damaged file.

    Examples
    --------
    >>> import skops.io as sio
    >>> from sklearn.linear_model import Ridge
    >>> from shap_instances.utils import untrusted_types
    >>> untrusted_types(sio.dumps({"model": Ridge()}))
    []
    >>> from collections import Counter
    >>> untrusted_types(sio.dumps({"model": Counter("ab")}))
    ['collections.Counter (DictNode)']
    """
    allowed = trusted_types()
    refused = {f"{dotted} ({loader})" for loader, dotted in _schema_nodes(data)
               if loader not in ("JsonNode", "CachedNode") and dotted not in allowed.get(loader, ())}
    return sorted(refused)


def _schema_nodes(data: bytes) -> set[tuple[str, str]]:
    """Every (loader, ``module.Class``) pair of the file's schema: each JSON object that names a loader."""
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        unpacked = sum(member.file_size for member in archive.infolist())
        if unpacked > available_memory_bytes() // 2:
            raise ValueError(f"it unpacks to {unpacked / 2**20:,.0f} MiB, more than half the memory left")
        stack: list[Any] = [json.loads(archive.read("schema.json"))]
    nodes = set()
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            if isinstance(item.get("__loader__"), str):
                nodes.add((item["__loader__"], f"{item.get('__module__')}.{item.get('__class__')}"))
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return nodes


def load_safely(data: bytes, name: str, *, trusted: bool = False) -> dict[str, Any]:
    """The bundle :func:`dump_safely` wrote, refusing types off the trusted list (:func:`untrusted_types`) unless
    ``trusted``; trees and other index-carrying objects are checked before they are returned.

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
        refused, types = untrusted_types(data), sorted(dotted for _, dotted in _schema_nodes(data))
        if trusted:
            types += sio.get_untrusted_types(data=data)
    except Exception as exc:  # noqa: BLE001 - a damaged zip fails in many ways (encrypted flags, methods); no code runs
        raise DataValidationError(f"{name} is damaged or truncated ({type(exc).__name__}: {exc}); save the "
                                  "explainer again.") from None
    if refused and not trusted:
        raise DataValidationError(
            f"{name} holds objects of types outside the trusted types: {refused[:10]}. Loading builds only the "
            "fitted estimators, arrays and helper types on shap_instances' list (docs/reliability.md, 'Saved "
            "explainers'), since building others could run code, touch files or crash the process: load it with "
            "trusted=True only if you trust the file and the packages it names.")
    if not trusted:
        probe_native_models(data, types, name)
    try:
        bundle = sio.loads(data, trusted=types)
    except Exception as exc:  # noqa: BLE001 - skops rebuilds from a damaged tree by many paths; none runs code
        raise DataValidationError(f"{name} is damaged ({type(exc).__name__}: {exc}); save the explainer "
                                  "again.") from None
    if not isinstance(bundle, dict):
        raise DataValidationError(f"{name} holds a {type(bundle).__name__}, not a saved explainer.")
    check_model_state(bundle, name)
    return _decode(bundle, name)


def save_model(model: Any, out_file: Any) -> None:
    """Write a fitted model to an open binary file in the safe format (``shap-instances explain --model-file``).

    Only the types on the trusted list (:func:`untrusted_types`) may be inside (a pipeline's steps included); a
    TypeError names anything else (a function, a class of another package) and nothing is written.

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

    Types off the trusted list (:func:`untrusted_types`) are refused unless ``trusted``, and so are trees whose
    indices leave their buffers and models whose parameters name files; a damaged file, or one that holds
    something else (a saved explainer), raises :class:`~shap_instances.exceptions.DataValidationError` naming it.
    """
    data, name = read_file(in_file)
    bundle = load_safely(data, name, trusted=trusted)
    if set(bundle) != {_MODEL}:
        raise DataValidationError(f"{name} is not a model file written by shap_instances.utils.save_model (it "
                                  f"holds {sorted(map(str, bundle))[:5]}).")
    return bundle[_MODEL]


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
