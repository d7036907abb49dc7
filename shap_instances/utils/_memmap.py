"""Folders of memory-mapped ``.npy`` arrays: the result of ``explain_partitions(out=)`` and ``explain --out
NAME.npy``, written so that nothing of the user's is lost and nothing half-written is ever read as a result.

* the folder is refused when it is not empty (unless ``overwrite=True``), when it is a file or a link to nothing,
  and when the rows being explained are memory-mapped from a file in it;
* one run writes into a folder at a time: the writer holds an exclusive lock on the folder (``fcntl.flock``,
  released by the system when the process dies), and a second run is refused with the reason;
* the arrays are written into a staging folder inside the folder and renamed into place when every row is
  written, so an array a caller still has memory-mapped is never changed (its file is replaced, not rewritten);
* a completion marker, :data:`MARKER` (format, a token, each array's dtype, shape and size, the player and
  output names), is written last; :func:`memmap_explanation` refuses a folder without a valid one, an array
  whose file does not match it (truncated, another dtype or shape) and names that do not fit the shapes.
"""

from __future__ import annotations

import contextlib
import json
import numbers
import os
import shutil
import tempfile
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..exceptions import DataValidationError, InvalidParameterError, OutputConflictError
from ._outputs import write_atomically
from ._params import Interval, validate_params

try:
    import fcntl
except ImportError:  # pragma: no cover - not on POSIX: no lock (documented)
    fcntl = None  # type: ignore[assignment]

__all__ = ["FIELDS", "FolderLock", "MARKER", "MemmapWriter", "check_output_folder", "memmap_explanation",
           "write_memmap_rows"]

#: The arrays of an Explanation that a folder may hold, each as ``{name}.npy`` (``values`` always).
FIELDS = ("values", "base_values", "data", "error_std")
#: The completion marker, written last: a folder without a valid one is never read as a result.
MARKER = "explanation.json"
MARKER_FORMAT = "shap-instances memory-mapped explanation 1"
_STAGING = ".shap-instances-partial-"


def check_output_folder(out: Any, name: str = "out", owner: str = "explain_partitions") -> Path:
    """``out`` as a folder the package may write into: a path (not ``""``), a folder or nothing yet (not a file,
    not a link to nothing).

    Raises
    ------
    InvalidParameterError
        ``out`` is not a path, or is the empty string (which would mean the current folder).
    OutputConflictError
        Something other than a folder is at ``out``.

    Examples
    --------
    >>> from shap_instances.utils import check_output_folder
    >>> try:
    ...     check_output_folder("")
    ... except ValueError as error:
    ...     print(error)
    out='' is an empty path (it would be the current folder); pass the folder to write into, e.g. out='values'.
    """
    folder = _folder_path(out, name, owner)
    text = str(folder)
    if folder.is_symlink() and not folder.exists():
        raise OutputConflictError(f"{name}={text!r} is a link to nothing ({os.readlink(folder)}); it is not "
                                  "replaced: remove the link or choose another folder.")
    if os.path.lexists(folder) and not folder.is_dir():
        raise OutputConflictError(f"{name}={text!r} is a file, not a folder; it is not replaced: choose a folder.")
    return folder


def _folder_path(value: Any, name: str, owner: str) -> Path:
    """``value`` as the path of a folder: a str or path-like, not ``""`` (the current folder), no NUL byte, a path
    the system can look up (not a name longer than the file system allows, not through a folder it may not read)."""
    validate_params(owner, {name: ["path"]}, {name: value})
    text = os.fspath(value)
    if not isinstance(text, str) or not text.strip() or "\0" in text:
        what = "an empty path (it would be the current folder)" if not str(text).strip() else "not a valid path"
        raise InvalidParameterError(f"{name}={text!r} is {what}; pass the folder to write into, e.g. "
                                    f"{name}='values'.")
    try:
        os.lstat(text)
    except (FileNotFoundError, NotADirectoryError):
        pass  # nothing there yet, or a file on the way: each caller says what that means for it
    except OSError as error:  # a name too long, a loop of links above it, a folder without permission
        raise InvalidParameterError(f"{name}={text!r} cannot be used as a folder ({error.strerror}); pass the path "
                                    "of a folder you may read and write (each name at most 255 bytes, no loop of "
                                    "links).") from None
    return Path(text)


class FolderLock:
    """An exclusive lock on a folder while a run writes into it: ``flock`` of the folder itself (no lock file;
    released when the process dies, so a killed run never leaves the folder locked). A second lock on the folder,
    from this process or another, is refused while the first is held. Where ``fcntl`` is missing (Windows) or the
    file system has no locks, nothing is locked. A context manager; :meth:`held_elsewhere` tells a reader whether
    a run is writing into a folder now.

    Parameters
    ----------
    folder : pathlib.Path
        An existing folder.

    Raises
    ------
    OutputConflictError
        Another run holds the folder's lock.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> from shap_instances.utils import FolderLock
    >>> folder = Path(tempfile.mkdtemp())
    >>> with FolderLock(folder):
    ...     FolderLock.held_elsewhere(folder)
    True
    """

    def __init__(self, folder: Path) -> None:
        self.fd: int | None = os.open(folder, os.O_RDONLY)
        if fcntl is None:  # pragma: no cover
            return
        try:
            fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            self.release()
            raise OutputConflictError(f"{str(folder)!r} is being written by another run now (it holds the folder's "
                                      "lock); wait for it to finish, or choose another folder.") from None
        except OSError:  # a file system without locks (some network ones): written unlocked, as without fcntl
            pass

    def __enter__(self) -> FolderLock:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.release()

    def release(self) -> None:
        """Release the lock (closing the descriptor releases it)."""
        if self.fd is not None:
            os.close(self.fd)  # closing the descriptor releases the lock
            self.fd = None

    @staticmethod
    def held_elsewhere(folder: Path) -> bool:
        """Whether another lock on ``folder`` is held now (False where nothing can be locked)."""
        if fcntl is None:  # pragma: no cover
            return False
        with contextlib.suppress(OSError):
            fd = os.open(folder, os.O_RDONLY)
            try:
                fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
                return False
            except BlockingIOError:
                return True
            finally:
                os.close(fd)
        return False


def refuse_input_in(folder: Path, *inputs: Any) -> None:
    """Refuse to write into ``folder`` when an input (an ndarray, or a view of one) is memory-mapped from a file in
    it: the run would replace what it reads.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> import numpy as np
    >>> from shap_instances.utils._memmap import refuse_input_in
    >>> refuse_input_in(Path(tempfile.mkdtemp()), np.zeros(3))
    """
    here = os.path.realpath(folder)
    for array in inputs:
        while isinstance(array, np.ndarray):
            name = getattr(array, "filename", None)
            if name is not None and os.path.dirname(os.path.realpath(name)) == here:
                raise OutputConflictError(
                    f"out={str(folder)!r} holds {os.path.basename(name)}, which the rows being explained are "
                    "memory-mapped from; writing there would replace the input: choose another folder.")
            array = array.base


class MemmapWriter:
    """A sink writing the parts of an Explanation, in order, into ``.npy`` files of the whole result's shape.

    What :func:`explain_partitions` uses with ``out=``, and ``explain --out NAME.npy``. Made, it has checked and
    locked ``folder`` (see the module's notes); :meth:`explanation` puts the files in place and writes the
    completion marker, :meth:`close` (after an error) removes what it wrote and leaves the folder as it was.
    Also a context manager that closes it.

    Parameters
    ----------
    folder : str or path-like
        Where the files go (created if missing): an empty folder, or any folder with ``overwrite=True``.
    n_rows : int
        Rows of the whole result.
    fields : sequence of str, default=FIELDS
        The Explanation's arrays written (``values`` among them), each to ``{name}.npy``. A part given as an int
        is rows written into the :attr:`staging` files elsewhere (by a worker, :func:`write_memmap_rows`).
    overwrite : bool, default=False
        Replace the files of an earlier result in a non-empty folder (other files there are kept).

    Examples
    --------
    >>> import tempfile
    >>> import numpy as np
    >>> import shap
    >>> from shap_instances.utils import MemmapWriter
    >>> with MemmapWriter(tempfile.mkdtemp(), 4, fields=("values",)) as writer:
    ...     for i in range(2):
    ...         writer(i, shap.Explanation(np.full((2, 3), float(i))))
    ...     result = writer.explanation()
    >>> result.values.tolist()
    [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0], [1.0, 1.0, 1.0], [1.0, 1.0, 1.0]]
    """

    FIELDS = FIELDS
    MARKER = MARKER
    STAGING = _STAGING

    def __init__(self, folder: str | os.PathLike[str], n_rows: int, fields: Sequence[str] = FIELDS, *,
                 overwrite: bool = False) -> None:
        validate_params("MemmapWriter", {"n_rows": [Interval(numbers.Integral, 0, None)], "overwrite": ["boolean"]},
                        {"n_rows": n_rows, "overwrite": overwrite})
        if isinstance(fields, str) or not isinstance(fields, Sequence) or "values" not in fields or not set(
                fields) <= set(FIELDS):
            raise InvalidParameterError(f"MemmapWriter: fields must be a sequence of names among {FIELDS}, values "
                                        f"included; got {fields!r}.")
        self.folder = check_output_folder(folder)
        self.created = not self.folder.exists()
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise OutputConflictError(f"out={str(self.folder)!r} cannot be made a folder ({error.strerror}); choose "
                                      "a folder you can write into.") from None
        self.lock: FolderLock | None = FolderLock(self.folder)
        try:
            _remove_staging(self.folder)  # left by a killed run: the lock is ours, so no live run writes there
            _refuse_non_empty(self.folder, overwrite)
            self.staging = _make_staging(self.folder)
        except BaseException:
            self.close()
            raise
        self.n_rows, self.fields, self.start = int(n_rows), tuple(fields), 0
        self.first: Any = None
        self.result: Any = None

    def __enter__(self) -> MemmapWriter:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def allocate(self, like: Any) -> None:
        """Create the staging files, of ``n_rows`` rows, from a part of the result (its dtypes, trailing shapes)."""
        from ._dask import _one_row_repeated

        self.first = like
        for name in self.fields:
            array = getattr(like, name, None)
            if array is not None and np.ndim(array) >= 1 and not _one_row_repeated([np.asarray(array)]):
                array = np.asarray(array)
                shape = (self.n_rows, *array.shape[1:])
                # the header, and the file at its final size (sparse: the rows take disk as they are written)
                np.lib.format.open_memmap(self.staging / f"{name}.npy", mode="w+", dtype=array.dtype, shape=shape)

    def __call__(self, i: int, part: Any) -> None:
        if isinstance(part, int | np.integer):  # rows a worker wrote into the staging files itself
            self.start += int(part)
            return
        _check_part(part, "MemmapWriter")
        if self.first is None:
            self.allocate(part)
        self.start += write_memmap_rows(self.staging, self.start, part)

    def explanation(self) -> Any:
        """Put the files in place, write the completion marker, unlock the folder; the Explanation of the whole
        result, its arrays memory-mapped read-only."""
        if self.result is not None:
            return self.result
        if self.first is None:
            raise DataValidationError("there are no rows to explain (X has no rows).")
        if self.start != self.n_rows:
            raise DataValidationError(f"{self.start:,} of the {self.n_rows:,} rows were written into "
                                      f"{self.folder}; the result is incomplete and was not kept.")
        _commit(self.staging, self.folder, _marker(self.staging, self.first))
        self.close()
        self.result = memmap_explanation(self.folder, like=self.first)
        return self.result

    def close(self) -> None:
        """Remove the staging files (when not put in place) and release the lock; a folder this writer made and
        left empty is removed."""
        staging = getattr(self, "staging", None)
        if staging is not None:
            shutil.rmtree(staging, ignore_errors=True)
            self.staging = None  # type: ignore[assignment]
        if self.lock is not None:
            self.lock.release()
            self.lock = None
        if self.created and self.folder.is_dir() and not any(self.folder.iterdir()):
            self.folder.rmdir()


def _remove_staging(folder: Path) -> None:
    """Remove the staging folders of runs that died (only called while holding the folder's lock)."""
    for entry in folder.iterdir():
        if entry.name.startswith(_STAGING) and entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry, ignore_errors=True)


def _make_staging(folder: Path) -> Path:
    """A new staging folder inside ``folder``; refused when the folder cannot be written into."""
    try:
        return Path(tempfile.mkdtemp(prefix=_STAGING, dir=folder))
    except OSError as error:
        raise OutputConflictError(f"out={str(folder)!r} cannot be written into ({error.strerror}); choose a folder "
                                  "you can write into.") from None


def _refuse_non_empty(folder: Path, overwrite: bool) -> None:
    """Refuse a folder that holds anything, unless ``overwrite`` (then only the result's own files are replaced)."""
    entries = sorted(entry.name for entry in folder.iterdir())
    if entries and not overwrite:
        raise OutputConflictError(
            f"out={str(folder)!r} is not empty (it holds {entries[:5]}{' ...' if len(entries) > 5 else ''}); "
            "nothing was written: choose an empty or new folder, or pass overwrite=True (explain --force) to replace "
            f"an earlier result's files ({', '.join(f'{f}.npy' for f in FIELDS)}, {MARKER}; other files are kept).")


def _marker(staging: Path, like: Any) -> dict[str, Any]:
    """The completion marker of the arrays in ``staging``: format, token, each array's dtype, shape and bytes,
    and the player and output names of ``like``."""
    arrays = {}
    for path in sorted(staging.glob("*.npy")):
        array = np.load(path, mmap_mode="r")
        arrays[path.stem] = {"dtype": array.dtype.str, "shape": list(array.shape), "bytes": path.stat().st_size}
    players = like.feature_names if like.feature_names is not None else range(np.shape(like.values)[1])
    outputs = like.output_names
    outputs = None if outputs is None else [str(outputs)] if isinstance(outputs, str) else [str(o) for o in outputs]
    return {"format": MARKER_FORMAT, "token": uuid.uuid4().hex, "arrays": arrays,
            "feature_names": [str(f) for f in players], "output_names": outputs}


def _commit(staging: Path, folder: Path, marker: dict[str, Any]) -> None:
    """Put the staged arrays in place (each renamed: a file still memory-mapped keeps its old content) and write
    the marker last; the earlier marker is removed first, so that no reader pairs it with the new arrays."""
    earlier = _read_marker(folder) or {}
    for path in staging.glob("*.npy"):
        with open(path, "rb+") as handle:
            os.fsync(handle.fileno())
    with contextlib.suppress(FileNotFoundError):
        os.unlink(folder / MARKER)
    for name in marker["arrays"]:
        os.replace(staging / f"{name}.npy", folder / f"{name}.npy")
    for name, entry in earlier.get("arrays", {}).items():  # an earlier result's array this one has not
        path = folder / f"{name}.npy"
        if name in FIELDS and name not in marker["arrays"] and _size(path) == entry.get("bytes"):
            path.unlink()
    text = json.dumps(marker)
    write_atomically(folder / MARKER, lambda temporary: Path(temporary).write_text(text, encoding="utf-8"))


def _size(path: Path) -> int | None:
    """The size of a regular file (None for a link, a folder or nothing)."""
    return path.lstat().st_size if path.is_file() and not path.is_symlink() else None


def write_memmap_rows(folder: str | os.PathLike[str], start: int, part: Any) -> int:
    """Write ``part`` (an Explanation of consecutive rows) at row ``start`` of the ``.npy`` files in ``folder``.

    The files were allocated at the whole result's shape (the :attr:`MemmapWriter.staging` folder of
    :func:`explain_partitions` with ``out=``, or of ``explain --out NAME.npy``); each of ``part``'s fields with a
    file there is written, in place, so that workers of a cluster sharing the folder can each write their own rows.
    A finished result (a folder with a completion marker) is never written in place. Returns the rows written.

    Examples
    --------
    >>> import tempfile
    >>> import numpy as np
    >>> import shap
    >>> from shap_instances.utils import write_memmap_rows
    >>> folder = tempfile.mkdtemp()
    >>> _ = np.lib.format.open_memmap(f"{folder}/values.npy", mode="w+", shape=(4, 2))
    >>> write_memmap_rows(folder, 2, shap.Explanation(np.ones((2, 2))))
    2
    >>> np.load(f"{folder}/values.npy").tolist()
    [[0.0, 0.0], [0.0, 0.0], [1.0, 1.0], [1.0, 1.0]]
    """
    folder = _folder_path(folder, "folder", "write_memmap_rows")
    validate_params("write_memmap_rows", {"start": [Interval(numbers.Integral, 0, None)]}, {"start": start})
    _check_part(part, "write_memmap_rows")
    if (folder / MARKER).exists():
        raise OutputConflictError(f"{folder} holds a finished result ({MARKER}); it is never written in place: "
                                  "write a new result with explain_partitions(..., out=FOLDER).")
    n = int(np.shape(part.values)[0])
    for name in FIELDS:
        path = folder / f"{name}.npy"
        if getattr(part, name, None) is None or not path.exists():
            continue
        target = np.load(path, mmap_mode="r")  # its header read: dtype, shape and where the rows start
        if not 0 <= start <= target.shape[0] - n:
            raise DataValidationError(f"rows {start}..{start + n - 1} do not fit the {target.shape[0]} rows of "
                                      f"{path}; write each part at its own first row.")
        try:
            rows = np.ascontiguousarray(np.broadcast_to(getattr(part, name), (n, *target.shape[1:])),
                                        dtype=target.dtype)
        except ValueError as error:
            raise DataValidationError(f"the {name} of the rows written have shape {np.shape(getattr(part, name))}, "
                                      f"which does not fit {path} of shape {target.shape}.") from error
        # written by the file, not through the map: no page faults, and the GIL is released while it copies
        with path.open("r+b") as handle:
            _write_all(handle.fileno(), rows.reshape(-1).view(np.uint8).data, target.offset + start * rows[:1].nbytes)
    return n


def _check_part(part: Any, owner: str) -> None:
    """Refuse a part that is not an Explanation of at least one dimension (a table, a sparse matrix: what a
    ``call`` returns for a ``sink`` other than ``out=``)."""
    if not isinstance(part, _shap_explanation()) or np.ndim(part.values) < 1:
        raise InvalidParameterError(f"{owner}: each part must be a shap.Explanation of consecutive rows (with out=, "
                                    f"call must return one); got a {type(part).__name__}.")


def _write_all(fd: int, data: memoryview, offset: int) -> None:
    """``os.pwrite`` of all of ``data`` at ``offset`` (one call writes at most about 2 GiB)."""
    while data:
        written = os.pwrite(fd, data, offset)
        data, offset = data[written:], offset + written


def memmap_explanation(folder: str | os.PathLike[str], like: Any = None) -> Any:
    """The Explanation whose arrays are the ``.npy`` files :func:`explain_partitions` wrote with ``out=folder``.

    ``values`` (and ``base_values``, ``data``, ``error_std`` where written) are read-only memory maps (ndarray
    views of :class:`numpy.memmap` objects, ``values.base``, since shap slices plain ndarrays only): slicing
    (``explanation[:1000]``, ``explanation[:, "name"]``) reads only those rows; an operation over all rows
    (``.abs.mean(0)``, a bar plot) reads the whole file once, and ``.abs`` alone makes an in-memory copy.

    Parameters
    ----------
    folder : str or path-like
        The ``out`` folder of :func:`explain_partitions`.
    like : shap.Explanation, optional
        A part of the same result, whose labels (and type) are copied; the names are those of the marker.

    Raises
    ------
    DataValidationError
        The folder has no valid completion marker (:data:`MARKER`: a run that was interrupted, is still running,
        or another program's folder), an array's file does not match it (truncated, another dtype or shape, not
        a ``.npy``), or names and shapes disagree. The message names the file.

    Examples
    --------
    >>> import tempfile
    >>> from numpy import memmap
    >>> from sklearn.datasets import load_wine
    >>> from sklearn.naive_bayes import GaussianNB
    >>> from shap_instances import NaiveBayesExplainer
    >>> from shap_instances.utils import explain_partitions, memmap_explanation
    >>> rows, labels = load_wine(return_X_y=True)
    >>> folder = tempfile.mkdtemp()
    >>> _ = explain_partitions(NaiveBayesExplainer(GaussianNB().fit(rows, labels), rows), rows, out=folder)
    >>> reopened = memmap_explanation(folder)  # from the files alone
    >>> isinstance(reopened.values.base, memmap), reopened.values.shape
    (True, (178, 13, 3))
    """
    folder = _folder_path(folder, "folder", "memmap_explanation")
    if like is not None and not isinstance(like, _shap_explanation()):
        raise InvalidParameterError(f"memmap_explanation: like must be None or a shap.Explanation (a part of the same "
                                    f"result); got a {type(like).__name__}.")
    marker = _required_marker(folder)
    # ndarray views of the memory maps (shap's slicer slices ndarrays, not their subclass memmap); still file-backed
    arrays = {name: _open_array(folder / f"{name}.npy", entry) for name, entry in marker["arrays"].items()}
    if _read_marker(folder) != marker:  # replaced while the arrays were opened
        raise DataValidationError(f"{folder / MARKER} changed while the arrays were opened (another run finished "
                                  "into the folder); open it again.")
    _check_shapes(folder, arrays, marker)
    values = arrays["values"]
    data = arrays.get("data")
    if data is None and like is not None and getattr(like, "data", None) is not None:  # one row broadcast
        data = np.broadcast_to(np.asarray(like.data)[0], (values.shape[0], *np.shape(like.data)[1:]))
    joined = (type(like) if like is not None else _shap_explanation())(
        values=values, base_values=arrays.get("base_values"), data=data, error_std=arrays.get("error_std"),
        feature_names=marker["feature_names"], output_names=marker["output_names"])
    joined.row_names = None
    for label in ("players", "efficient", "explained_quantity"):
        if like is not None and hasattr(like, label):
            setattr(joined, label, getattr(like, label))
    return joined


def _read_marker(folder: Path) -> dict[str, Any] | None:
    """The completion marker of ``folder``; None when it is missing or not valid."""
    try:
        marker = json.loads((folder / MARKER).read_text(encoding="utf-8"))
    except (OSError, ValueError):  # a UnicodeDecodeError is a ValueError
        return None
    return marker if _valid_marker(marker) else None


def _required_marker(folder: Path) -> dict[str, Any]:
    """The completion marker of ``folder``, refused with the likely reason when it is missing or not valid."""
    marker = _read_marker(folder)
    if marker is not None:
        return marker
    if not folder.is_dir():
        raise DataValidationError(f"{folder} is not a folder (nothing is there, or a file); pass the out= folder of "
                                  "explain_partitions.")
    why = ("a run is writing into it now" if FolderLock.held_elsewhere(folder) else
           "a run into it was interrupted" if any(p.name.startswith(_STAGING) for p in folder.iterdir()) else
           "a run was interrupted or is still running, or another program wrote the folder")
    state = "has no" if not (folder / MARKER).exists() else "has an unreadable or incomplete"
    raise DataValidationError(f"{folder} {state} completion marker {MARKER} ({why}); its arrays are not read as "
                              "a result: rerun explain_partitions(..., out=FOLDER, overwrite=True).")


def _valid_marker(marker: Any) -> bool:
    """Whether a marker has this format's fields, of the right types."""
    if not isinstance(marker, dict) or marker.get("format") != MARKER_FORMAT:
        return False
    arrays, names, outputs = marker.get("arrays"), marker.get("feature_names"), marker.get("output_names")
    return (isinstance(arrays, dict) and "values" in arrays and set(arrays) <= set(FIELDS)
            and all(_valid_array_entry(entry) for entry in arrays.values())
            and _strings(names) and (outputs is None or _strings(outputs)))


def _valid_array_entry(entry: Any) -> bool:
    """Whether a marker's entry of one array has its dtype (str), bytes (int) and shape (list of ints)."""
    return (isinstance(entry, dict) and isinstance(entry.get("dtype"), str) and isinstance(entry.get("bytes"), int)
            and isinstance(entry.get("shape"), list) and all(isinstance(n, int) for n in entry["shape"]))


def _strings(names: Any) -> bool:
    """Whether ``names`` is a list of strings."""
    return isinstance(names, list) and all(isinstance(name, str) for name in names)


def _open_array(path: Path, entry: dict[str, Any]) -> np.ndarray:
    """The ``.npy`` file ``path`` memory-mapped read-only, refused unless it is what the marker records."""
    try:
        size = _size(path)
        array = np.load(path, mmap_mode="r", allow_pickle=False) if size == entry["bytes"] else None
    except (OSError, ValueError, EOFError) as error:
        raise DataValidationError(f"{path} is not a readable .npy array ({error}); the result is damaged: "
                                  "rerun explain_partitions(..., out=FOLDER, overwrite=True).") from None
    if array is None or array.dtype.str != entry["dtype"] or list(array.shape) != entry["shape"]:
        raise DataValidationError(
            f"{path} is not the array the completion marker records ({entry['dtype']} of shape {entry['shape']}, "
            f"{entry['bytes']:,} bytes; found {size} bytes): truncated or replaced since it was written; rerun "
            "explain_partitions(..., out=FOLDER, overwrite=True).")
    return array.view(np.ndarray)


def _check_shapes(folder: Path, arrays: dict[str, np.ndarray], marker: dict[str, Any]) -> None:
    """Refuse arrays and names of a folder that do not fit together (rows, players, outputs)."""
    values = arrays["values"]
    if values.ndim not in (2, 3):
        raise DataValidationError(f"{folder / 'values.npy'} has {values.ndim} dimension(s), not 2 (rows, players) or "
                                  "3 (rows, players, outputs); rerun explain_partitions(..., out=FOLDER, "
                                  "overwrite=True).")
    n, outputs = values.shape[0], values.shape[2:] if values.ndim == 3 else ()
    problems = _array_shape_problems(arrays, n, outputs)
    if len(marker["feature_names"]) != values.shape[1]:
        problems.append(f"{len(marker['feature_names'])} player names for {values.shape[1]} players")
    names = marker["output_names"]
    if names is not None and len(names) != (outputs[0] if outputs else 1):
        problems.append(f"{len(names)} output names for {outputs[0] if outputs else 1} output(s)")
    if problems:
        raise DataValidationError(f"{folder} does not hold one consistent result: {'; '.join(problems)}; rerun "
                                  "explain_partitions(..., out=FOLDER, overwrite=True).")


def _array_shape_problems(arrays: dict[str, np.ndarray], n: int, outputs: tuple[int, ...]) -> list[str]:
    """What does not fit the values' ``n`` rows (and ``outputs``) among the other arrays of a folder."""
    values = arrays["values"]
    expected = {"base_values": [(n, *outputs)] + ([(n, 1)] if not outputs else []),
                "error_std": [values.shape]}
    problems = [f"{name} has shape {arrays[name].shape}, not {expected[name][0]}" for name in expected
                if name in arrays and arrays[name].shape not in expected[name]]
    if "data" in arrays and (arrays["data"].ndim == 0 or arrays["data"].shape[0] != n):
        problems.append(f"data has shape {arrays['data'].shape}, not {n} rows")
    return problems


def _shap_explanation() -> Any:
    import shap

    return shap.Explanation
