"""Checkpoint files of a permutation run: ``.npz`` arrays and a JSON header, written atomically, one run at a time.

The format, its guarantees and its errors are described in docs/reliability.md ("Checkpoint format"). Nothing
here unpickles: the archive is read with ``numpy.load(..., allow_pickle=False)``, the header is JSON, and the
random generator's state is rebuilt from numbers after its kind has been checked against a fixed list.
"""

from __future__ import annotations

import contextlib
import errno
import io
import json
import numbers
import os
import socket
import struct
import tempfile
import time
import uuid
import zipfile
import zlib
from pathlib import Path
from typing import Any, NoReturn

import numpy as np

from ..exceptions import CheckpointError

__all__ = ["CheckpointFile", "FORMAT", "VERSION"]

#: Format name written in every header; a file with another name is refused.
FORMAT = "shap_instances.permutation_checkpoint"
#: Format version written; a file with another version is refused (there is no older data format to read).
VERSION = 1

_BIT_GENERATORS = ("PCG64", "PCG64DXSM", "MT19937", "Philox", "SFC64")
_SAFE_INT = 2**53  # JSON numbers beyond this lose digits in many readers: larger ints are written as strings
_ZIP_MAGIC = b"PK\x03\x04"
_NUMPY_MAGIC = b"\x93NUMPY"
_STALE_UNREADABLE_LOCK_S = 10.0  # a lock file without a readable holder, older than this, was left by a crash


class CheckpointFile:
    """The file in which :class:`~shap_instances.approximators.PermutationApproximator` saves its state after each
    batch.

    Used as a context manager around one run: entering checks that the directory exists and is writable and
    takes the lock ``<path>.lock`` (created with ``O_CREAT | O_EXCL``, holding this process's id, so a
    second run on the same path is refused while the first is alive; a lock whose process has died is
    taken over); leaving releases it. :meth:`load` reads a saved state and :meth:`save` replaces it
    atomically (a unique temporary file in the same directory, fsync, ``os.replace``, fsync of the
    directory), so after a crash or a ``SIGKILL`` the file holds the last completed batch, never a partial
    one. Every problem raises :class:`~shap_instances.exceptions.CheckpointError` (a ``ValueError``) naming
    the file and what is wrong.

    Parameters
    ----------
    path : str or os.PathLike
        The checkpoint file (``.npz`` by convention; any name works).

    Examples
    --------
    >>> import tempfile, numpy as np
    >>> from pathlib import Path
    >>> from shap_instances.approximators._checkpoint import CheckpointFile
    >>> path = Path(tempfile.mkdtemp()) / "run.npz"
    >>> state = {"rng": np.random.default_rng(0).bit_generator.state, "done": 16, "units": 8, "evals": 96,
    ...          "mean": np.zeros((5, 2)), "m2": np.ones((5, 2)), "empty": np.zeros(2), "full": np.ones(2),
    ...          "fingerprint": {"players": 5, "seed": 0}, "counters": {"n_evaluations": 96}}
    >>> with CheckpointFile(path) as checkpoint:
    ...     checkpoint.save(state)
    ...     loaded = checkpoint.load({"players": 5, "seed": 0})
    >>> loaded["done"], loaded["rng"] == state["rng"], bool((loaded["m2"] == 1.0).all())
    (16, True, True)
    >>> try:
    ...     CheckpointFile(path).load({"players": 5, "seed": 1})
    ... except ValueError as error:
    ...     print(type(error).__name__, "another run (seed 0 in the file, 1 now)" in str(error))
    CheckpointError True
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(os.fspath(path))
        self.lock_path = self.path.with_name(self.path.name + ".lock")
        self._token: str | None = None

    # --- one run at a time -------------------------------------------------------------------------------------

    def __enter__(self) -> CheckpointFile:
        self.acquire()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.release()

    def acquire(self) -> None:
        """Check the directory and take the lock; refuse if another live run holds it."""
        self._check_directory()
        for _ in range(3):
            try:
                fd = os.open(self.lock_path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
            except FileExistsError:
                holder = self._read_lock()
                self._refuse_unless_stale(holder)
                self._break_stale_lock(holder)
                continue
            except OSError as error:
                raise self._error(f"cannot be locked: its lock file '{self.lock_path}' cannot be created ({error}); "
                                  f"check that the directory '{self.path.parent}' is writable") from error
            token = uuid.uuid4().hex
            with os.fdopen(fd, "w") as handle:
                json.dump({"pid": os.getpid(), "host": socket.gethostname(), "token": token,
                           "created": time.strftime("%Y-%m-%d %H:%M:%S")}, handle)
                handle.flush()
                os.fsync(handle.fileno())
            self._token = token
            self._remove_leftover_temporaries()
            return
        raise self._error(f"cannot be locked: its lock file '{self.lock_path}' keeps being replaced by other runs; "
                          "use another file")

    def release(self) -> None:
        """Remove the lock if it is still this run's."""
        if self._token is not None and (self._read_lock() or {}).get("token") == self._token:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.lock_path)
        self._token = None

    # --- reading ----------------------------------------------------------------------------------------------

    def load(self, fingerprint: dict | None) -> dict | None:
        """The saved state, or None when the file does not exist.

        Parameters
        ----------
        fingerprint : dict or None
            What defines the run (players, outputs, permutations, batch, antithetic, seed, game digest); a
            file saved with another fingerprint is refused. None skips that check (to inspect a file).

        Returns
        -------
        dict or None
            ``rng`` (bit-generator state), ``done``, ``units``, ``evals``, ``counters``, ``fingerprint`` and
            the arrays ``mean``, ``m2``, ``empty``, ``full`` (the last two None before the first batch).
        """
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            return None
        except IsADirectoryError:
            raise self._error("is a directory; pass a file path such as "
                              f"'{self.path / 'run.npz'}'") from None
        except OSError as error:
            raise self._error(f"cannot be read ({error})") from error
        self._check_magic(data)
        header, arrays = self._read_archive(data)
        if header.get("format") != FORMAT:
            raise self._error(f"is a '{header.get('format')}' file, not a '{FORMAT}' one; use another path")
        if header.get("version") != VERSION:
            raise self._error(f"has format version {header.get('version')!r}; this shap_instances reads version "
                              f"{VERSION} only. Finish the run with the shap_instances that wrote it, or delete the "
                              "file to start afresh")
        state = header.get("state")
        if not isinstance(state, dict):
            raise self._error("is damaged: its header has no 'state' object; delete it to start afresh")
        if fingerprint is not None:
            self._check_fingerprint(state.get("fingerprint"), fingerprint)
        for name, array in arrays.items():
            state[name] = array
        self._check_state(state)
        return state

    def _check_magic(self, data: bytes) -> None:
        if not data:
            raise self._error("is empty (0 bytes), not a checkpoint; delete it to start afresh")
        if data[:1] == b"\x80" and data[1:2] in (b"\x02", b"\x03", b"\x04", b"\x05"):
            raise self._error("is a pickle (the checkpoint format of shap_instances 0.1); it is not read, since "
                              "loading a pickle can run arbitrary code. A run cannot resume from it: delete it to "
                              "start afresh")
        if data.startswith(_NUMPY_MAGIC):
            raise self._error("is a single .npy array, not a checkpoint (.npz archive); use another path")
        if not data.startswith(_ZIP_MAGIC):
            raise self._error(f"is not a shap_instances checkpoint (not an .npz archive: it begins with "
                              f"{data[:8]!r}); use another path, or delete it if it is a damaged checkpoint")

    def _read_archive(self, data: bytes) -> tuple[dict, dict]:
        raw, arrays = self._archive_members(data)
        header = self._parsed_header(raw)
        self._check_listed(header.get("arrays"), arrays)
        try:
            header["state"] = _decode(header.get("state"))
        except (TypeError, ValueError, OverflowError) as error:
            raise self._error(f"is damaged: {error}; delete it to start afresh") from None
        return header, arrays

    def _archive_members(self, data: bytes) -> tuple[np.ndarray, dict]:
        """The header bytes and the other arrays of the .npz archive ``data``, never unpickling anything."""
        try:
            with np.load(io.BytesIO(data), allow_pickle=False) as archive:
                return self._members_of(archive)
        except CheckpointError:
            raise
        except ValueError as error:
            if "allow_pickle" in str(error) or "Object arrays" in str(error):
                raise self._error("contains a pickled (object) array; it is not read, since unpickling can run "
                                  "arbitrary code; delete it to start afresh") from None
            raise self._error(f"is damaged or truncated ({error}); delete it to start afresh") from None
        except (zipfile.BadZipFile, zlib.error, EOFError, OSError, KeyError, NotImplementedError, RuntimeError,
                struct.error) as error:  # a damaged zip directory can name any compression method or flag
            raise self._error(f"is damaged or truncated ({type(error).__name__}: {error}); delete it to start "
                              "afresh") from None

    def _members_of(self, archive: Any) -> tuple[np.ndarray, dict]:
        names = set(archive.files)
        if "header" not in names:
            raise self._error(f"is an .npz archive but not a shap_instances checkpoint (no 'header' member; "
                              f"members: {sorted(names)}); use another path")
        raw = archive["header"]
        if not isinstance(raw, np.ndarray) or raw.dtype != np.uint8 or raw.ndim != 1:
            raise self._error("is damaged: its header is not an array of JSON bytes; delete it to start afresh")
        arrays = {}
        for name in sorted(names - {"header"}):
            arrays[name] = archive[name]
            if not isinstance(arrays[name], np.ndarray):
                raise self._error(f"is damaged: its member '{name}' is not an array; delete it to start afresh")
        return raw, arrays

    def _parsed_header(self, raw: np.ndarray) -> dict:
        try:
            header = json.loads(raw.tobytes().decode("utf-8"), parse_constant=_refuse_constant)
        except (UnicodeDecodeError, ValueError) as error:
            raise self._error(f"is damaged: its header is not JSON ({error}); delete it to start afresh") from None
        if not isinstance(header, dict):
            raise self._error("is damaged: its header is not a JSON object; delete it to start afresh")
        return header

    def _check_listed(self, listed: Any, arrays: dict) -> None:
        """The arrays the header lists are those of the archive, with their dtypes and shapes."""
        if not isinstance(listed, dict) or set(listed) != set(arrays):
            listed_names = sorted(listed) if isinstance(listed, dict) else listed
            raise self._error(f"is damaged: the header lists arrays {listed_names} but the archive holds "
                              f"{sorted(arrays)}; delete it to start afresh")
        for name, array in arrays.items():
            if listed[name] != {"dtype": array.dtype.str, "shape": list(array.shape)}:
                raise self._error(f"is damaged: array '{name}' is {array.dtype.str} {list(array.shape)}, the header "
                                  f"says {listed[name]}; delete it to start afresh")

    def _check_fingerprint(self, saved: Any, current: dict) -> None:
        current = _decode(_encode(current))  # as it would read back: tuples as lists, numpy scalars as Python's
        if saved == current:
            return
        if not isinstance(saved, dict):
            raise self._error(f"belongs to another run (its fingerprint is {saved!r}, this run's {current}); delete "
                              "it or use another file")
        differences = [f"{key} {saved.get(key)!r} in the file, {current.get(key)!r} now"
                       for key in list(current) + [k for k in saved if k not in current]
                       if saved.get(key) != current.get(key)]
        raise self._error(f"belongs to another run ({'; '.join(differences)}); delete it or use another file")

    def _check_state(self, state: dict) -> None:
        self._check_counts(state)
        self._check_moments(state)
        for key in ("empty", "full"):
            state.setdefault(key, None)
            if state[key] is not None and (state[key].dtype != np.float64
                                           or state[key].shape != state["mean"].shape[1:]):
                raise self._error(f"is damaged: array '{key}' is not a float64 vector of the outputs' length")
        state["rng"] = self._checked_rng_state(state.get("rng"))

    def _check_counts(self, state: dict) -> None:
        """``done``, ``units`` and ``evals`` are non-negative ints, ``counters`` a dict of numbers and text."""
        for key in ("done", "units", "evals"):
            value = state.get(key)
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise self._error(f"is damaged: '{key}' is {value!r}, not a non-negative int; delete it to start "
                                  "afresh")
        counters = state.get("counters")
        if not isinstance(counters, dict) or not all(
                isinstance(v, str | int | float | None) for v in counters.values()):
            raise self._error(f"is damaged: 'counters' is {counters!r}, not a dict of numbers and text")

    def _check_moments(self, state: dict) -> None:
        """``mean`` and ``m2`` are float64 matrices of one shape, the fingerprint's (players, outputs)."""
        for key in ("mean", "m2"):
            if key not in state or state[key].dtype != np.float64 or state[key].ndim != 2:
                raise self._error(f"is damaged: array '{key}' is missing or not a float64 matrix; delete it to "
                                  "start afresh")
        if state["mean"].shape != state["m2"].shape:
            raise self._error("is damaged: arrays 'mean' and 'm2' differ in shape; delete it to start afresh")
        fingerprint = state.get("fingerprint") or {}
        expected = (fingerprint.get("players"), fingerprint.get("outputs"))
        if None not in expected and state["mean"].shape != expected:
            raise self._error(f"is damaged: its arrays have shape {state['mean'].shape}, its fingerprint says "
                              f"{expected}; delete it to start afresh")

    def _checked_rng_state(self, saved: Any) -> dict:
        name = saved.get("bit_generator") if isinstance(saved, dict) else None
        if name not in _BIT_GENERATORS:
            raise self._error(f"has an unknown random generator {name!r} (known: {', '.join(_BIT_GENERATORS)}); "
                              "delete it to start afresh")
        try:
            probe = getattr(np.random, name)()
            probe.state = saved
        except (TypeError, ValueError, KeyError, OverflowError) as error:
            raise self._error(f"has an invalid {name} generator state ({error}); delete it to start afresh") from None
        return saved

    # --- writing ----------------------------------------------------------------------------------------------

    def save(self, state: dict) -> None:
        """Replace the file with ``state`` (the dict :meth:`load` returns) atomically and durably."""
        self._check_still_locked()
        arrays: dict[str, np.ndarray] = {key: np.ascontiguousarray(value) for key, value in state.items()
                                         if isinstance(value, np.ndarray)}
        header = {"format": FORMAT, "version": VERSION,
                  "arrays": {key: {"dtype": a.dtype.str, "shape": list(a.shape)} for key, a in arrays.items()},
                  "state": _encode({key: value for key, value in state.items() if key not in arrays})}
        raw = np.frombuffer(json.dumps(header, allow_nan=False).encode("utf-8"), dtype=np.uint8)
        fd, temporary = tempfile.mkstemp(prefix=self._temporary_prefix(), suffix=".tmp", dir=self.path.parent)
        try:
            with os.fdopen(fd, "wb") as handle:
                np.savez(handle, header=raw, **arrays)  # type: ignore[arg-type]  # (numpy's stub: allow_pickle)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(temporary, self.path)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(temporary)
            raise
        _fsync_directory(self.path.parent)

    # --- helpers ----------------------------------------------------------------------------------------------

    def damaged(self, what: str) -> CheckpointError:
        """The error for a file whose content its reader found inconsistent (``what``), naming the file."""
        return self._error(f"is damaged: {what}; delete it to start afresh")

    def _error(self, what: str) -> CheckpointError:
        return CheckpointError(f"checkpoint '{self.path}' {what}.")

    def _check_directory(self) -> None:
        directory = self.path.parent
        if not directory.exists():
            raise self._error(f"cannot be written: its directory '{directory}' does not exist; create it first")
        if not directory.is_dir():
            raise self._error(f"cannot be written: '{directory}' is not a directory")
        if self.path.is_dir():
            raise self._error(f"is a directory; pass a file path such as '{self.path / 'run.npz'}'")
        if not os.access(directory, os.W_OK | os.X_OK):
            raise self._error(f"cannot be written: its directory '{directory}' is not writable")

    def _read_lock(self) -> dict | None:
        return _read_json(self.lock_path)

    def _refuse_unless_stale(self, holder: dict | None) -> None:
        if holder is None:  # released in the meantime: try again
            return
        if not holder:
            try:
                age = time.time() - self.lock_path.stat().st_mtime
            except FileNotFoundError:
                return
            if age > _STALE_UNREADABLE_LOCK_S:
                return
            raise self._error(f"is being opened by another run (its lock file '{self.lock_path}' is being written); "
                              "wait for it or use another file")
        pid, host = holder.get("pid"), holder.get("host")
        since = f", since {holder['created']}" if holder.get("created") else ""
        if host != socket.gethostname():
            raise self._error(f"is in use by a run on host {host!r} (process {pid}{since}), whose state cannot be "
                              f"checked from here; wait for it, use another file, or delete '{self.lock_path}' if "
                              "that run has ended")
        if not isinstance(pid, int) or _process_alive(pid):
            who = "this process" if pid == os.getpid() else f"process {pid}"
            raise self._error(f"is in use by another run ({who}{since}); wait for it to finish or use another file. "
                              f"If no such run exists, delete '{self.lock_path}'")

    def _break_stale_lock(self, observed: dict | None) -> None:
        """Remove the lock of a dead process, unless another run replaced it since it was read."""
        if observed is None:
            return
        aside = self.lock_path.with_name(f"{self.lock_path.name}.{os.getpid()}.{uuid.uuid4().hex[:8]}.stale")
        try:
            os.rename(self.lock_path, aside)
        except FileNotFoundError:
            return
        if _read_json(aside) != observed:  # a live run's fresh lock, written since: put it back where it was
            with contextlib.suppress(FileExistsError):
                os.link(aside, self.lock_path)
        os.unlink(aside)

    def _check_still_locked(self) -> None:
        if self._token is None:
            raise self._error("is not locked by this run; use CheckpointFile as a context manager around the run")
        if (self._read_lock() or {}).get("token") != self._token:
            raise self._error(f"lost its lock file '{self.lock_path}' (removed or replaced by another run); not "
                              "writing, so the other run's state is kept")

    def _temporary_prefix(self) -> str:
        return f".{self.path.name}.partial-"

    def _remove_leftover_temporaries(self) -> None:
        """Temporary files of writes that a crash interrupted (only the lock holder writes, so none is live)."""
        prefix = self._temporary_prefix()
        with contextlib.suppress(OSError):
            for entry in os.scandir(self.path.parent):
                if entry.name.startswith(prefix) and entry.name.endswith(".tmp"):
                    with contextlib.suppress(OSError):
                        os.unlink(entry.path)


def _read_json(path: Path) -> dict | None:
    """A lock file's content: None when there is no file, {} when it cannot be read as a JSON object."""
    try:
        content = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError):
        return {}
    return content if isinstance(content, dict) else {}


def _process_alive(pid: int) -> bool:
    """Whether process ``pid`` runs on this host (True when it cannot be told, so a lock is never taken wrongly)."""
    if pid == os.getpid():
        return True
    if os.name == "nt":  # os.kill(pid, 0) would send CTRL_C_EVENT there
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # a killed child that its parent has not waited for yet is a zombie: dead for our purpose
        with open(f"/proc/{pid}/stat", encoding="ascii") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return True


def _fsync_directory(directory: Path) -> None:
    """Make the rename durable; skipped where directories cannot be opened (Windows) or synced (some filesystems)."""
    if os.name == "nt":
        return
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    except OSError as error:
        if error.errno not in (errno.EINVAL, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EBADF):
            raise
    finally:
        os.close(fd)


def _refuse_constant(name: str) -> NoReturn:
    raise ValueError(f"{name} is not a valid number here")


def _encode(value: Any) -> Any:
    """JSON-ready ``value``: ints beyond 2**53 and integer arrays (a generator's state) as decimal strings."""
    if isinstance(value, dict):
        if any(not isinstance(key, str) or key.startswith("__") for key in value):
            raise TypeError(f"checkpoint keys must be strings not starting with '__', got {list(value)}")
        return {key: _encode(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_encode(item) for item in value]
    if isinstance(value, np.ndarray) and value.dtype.kind in "iu":
        return {"__array__": value.dtype.str, "shape": list(value.shape), "values": [str(v) for v in value.ravel()]}
    return _encode_scalar(value)


def _encode_scalar(value: Any) -> Any:
    """A bool, number, None or string, JSON-ready (ints beyond 2**53 as decimal strings)."""
    if isinstance(value, bool | np.bool_):
        return bool(value)
    if isinstance(value, numbers.Integral):
        value = int(value)
        return value if -_SAFE_INT < value < _SAFE_INT else {"__int__": str(value)}
    if isinstance(value, numbers.Real):
        return float(value)
    if value is None or isinstance(value, str):
        return value
    raise TypeError(f"cannot write {type(value).__name__} to a checkpoint")


def _decode(value: Any) -> Any:
    """Inverse of :func:`_encode`; raises ValueError or TypeError on anything it would not have written."""
    if isinstance(value, list):
        return [_decode(item) for item in value]
    if not isinstance(value, dict):
        return value
    if "__int__" in value:
        if set(value) != {"__int__"} or not isinstance(value["__int__"], str):
            raise ValueError(f"malformed integer {value!r}")
        return int(value["__int__"])
    if "__array__" in value:
        return _decode_array(value)
    return {key: _decode(item) for key, item in value.items()}


def _decode_array(value: dict) -> np.ndarray:
    """The integer array :func:`_encode` wrote as ``{"__array__": dtype, "shape": ..., "values": [...]}``."""
    dtype = np.dtype(value["__array__"]) if isinstance(value["__array__"], str) else None
    if dtype is None or dtype.kind not in "iu" or set(value) != {"__array__", "shape", "values"}:
        raise ValueError(f"malformed integer array (dtype {value.get('__array__')!r})")
    shape = tuple(int(n) for n in value["shape"])
    numbers_ = [int(v) for v in value["values"]]
    info = np.iinfo(dtype)
    if any(v < info.min or v > info.max for v in numbers_):
        raise ValueError(f"integer array values out of the range of {dtype}")
    return np.array(numbers_, dtype=dtype).reshape(shape)
