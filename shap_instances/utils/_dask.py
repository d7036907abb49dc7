"""Row-parallel explanations on dask: the one helper every row-wise explainer (and plugin) uses.

An explainer that treats explained rows independently is explained partition by partition:

* the explainer, with its training-side state (leaf index, weights, fitted model), is built once in the calling
  process and scattered to the workers once (``broadcast=True``);
* the rows to explain are split into partitions: a dask DataFrame's or dask array's own partitions (read by the
  workers, never gathered here), or slices of an in-memory array;
* each partition is explained by the scattered copy's own serial ``__call__``, so its values are bitwise the
  serial run's; the parts come back in order, at most a few in flight, and are joined into one Explanation,
  or handed one by one to a ``sink`` (written to disk) so that nothing of the size of the whole result is held.

Without a scheduler, a dask collection is explained here, one partition computed and explained at a time.
"""

from __future__ import annotations

import contextlib
import copy
import json
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp

from ..exceptions import DataValidationError, MemoryBudgetError
from ._memory import default_memory_budget

__all__ = ["MemmapWriter", "SharedFolder", "available_cores", "concat_explanations", "dask_client",
           "explain_partitions", "is_dask_collection", "load_shared", "memmap_explanation", "row_partitions",
           "shared_arrays", "write_memmap_rows"]

#: Bytes of values one in-memory partition produces at most (its rows x players x outputs x 8).
PARTITION_BYTES = 64 * 2**20


def is_dask_collection(X: Any) -> bool:
    """Whether ``X`` is a dask array or dask DataFrame (without importing dask when it is not loaded).

    Examples
    --------
    >>> import numpy as np
    >>> from shap_instances.utils import is_dask_collection
    >>> is_dask_collection(np.zeros((2, 2)))
    False
    """
    return type(X).__module__.split(".")[0] in ("dask", "dask_expr") and hasattr(X, "to_delayed")


def available_cores() -> int:
    """The CPU cores this process may run on (its affinity mask; ``os.cpu_count()`` elsewhere).

    Examples
    --------
    >>> from shap_instances.utils import available_cores
    >>> available_cores() >= 1
    True
    """
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not on Linux
        return max(1, os.cpu_count() or 1)


@contextlib.contextmanager
def dask_client(scheduler: Any) -> Iterator[Any]:
    """A ``distributed.Client`` for ``scheduler`` (``None``: yield None), closed on exit when made here.

    Parameters
    ----------
    scheduler : str, distributed.Client or None
        A scheduler address (``"tcp://10.0.0.5:8786"``), a running ``Client`` (used as is, left open), or
        ``"local"`` for a ``LocalCluster`` on this machine (one single-threaded worker process per core).

    Examples
    --------
    >>> from shap_instances.utils import dask_client
    >>> with dask_client(None) as client:
    ...     client is None
    True
    """
    if scheduler is None:
        yield None
        return
    from distributed import Client, LocalCluster  # optional dependency: shap-instances[dask]

    with contextlib.ExitStack() as stack:
        if isinstance(scheduler, Client):
            client = scheduler
        elif scheduler == "local":
            cluster = stack.enter_context(LocalCluster(n_workers=available_cores(), threads_per_worker=1,
                                                       processes=True, dashboard_address=None))
            client = stack.enter_context(Client(cluster))
        else:
            client = stack.enter_context(Client(scheduler))
        yield client


class SharedFolder:
    """Arrays saved as ``.npy`` files in a folder that every worker of a cluster reads (:func:`shared_arrays`).

    Small and picklable: a task carries the folder's path, and the worker maps the files (:meth:`load`), so
    the arrays are neither pickled nor copied; on one machine the workers share their pages.

    Parameters
    ----------
    folder : pathlib.Path
        The folder (it also takes what the workers write back, :meth:`path`).
    names : sequence of str
        The arrays, saved as ``{name}.npy``.
    """

    def __init__(self, folder: Path, names: Sequence[str]) -> None:
        self.folder, self.names = folder, tuple(names)

    def path(self, name: str) -> Path:
        """The path of ``{name}.npy`` in the folder."""
        return self.folder / f"{name}.npy"

    def load(self) -> dict[str, np.ndarray]:
        """The arrays, memory-mapped copy-on-write (a write stays in the writing process)."""
        return {name: np.asarray(np.load(self.path(name), mmap_mode="c")) for name in self.names}


def load_shared(state: Any) -> dict[str, np.ndarray]:
    """On a worker, the arrays of :func:`shared_arrays`' ``state``: mapped from its folder, or the scattered dict."""
    return state.load() if isinstance(state, SharedFolder) else state


def _shared_memory_dir() -> str | None:
    """Where the temporary folder of :func:`shared_arrays` goes: ``/dev/shm`` (memory, no disk) where it exists."""
    return "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None


def _read_text(path: str) -> str | None:
    """The text of ``path`` on a worker, None where it cannot be read (another machine)."""
    try:
        return Path(path).read_text()
    except OSError:
        return None


@contextlib.contextmanager
def shared_arrays(client: Any, arrays: dict[str, np.ndarray], *, dir: str | os.PathLike[str] | None = None
                  ) -> Iterator[Any]:
    """Give every worker of ``client`` the same read-only ``arrays``, once: mapped files where it can.

    A temporary folder is made in ``dir`` (default ``/dev/shm`` where it exists, else the system's temporary
    folder). When every worker reads a token written there (a ``LocalCluster``, or workers sharing the file
    system), the arrays are saved in it as ``.npy`` files and a :class:`SharedFolder` is yielded: tasks carry its
    path and :func:`load_shared` maps the files, nothing pickled. Otherwise the dict is scattered to every worker
    once (a future is yielded). The folder, and whatever the workers wrote into it, is removed on exit, also
    when the work failed.

    Parameters
    ----------
    client : distributed.Client
    arrays : dict of str to ndarray
    dir : str or path-like, optional
        Where the temporary folder goes.

    Yields
    ------
    SharedFolder or distributed.Future
        What a task passes to :func:`load_shared`.

    Examples
    --------
    >>> import numpy as np
    >>> from distributed import Client, LocalCluster
    >>> from shap_instances.utils import load_shared, shared_arrays
    >>> with LocalCluster(n_workers=1, processes=False, dashboard_address=None) as cluster, Client(cluster) as client:
    ...     with shared_arrays(client, {"a": np.arange(3)}) as state:
    ...         client.submit(lambda s: int(load_shared(s)["a"].sum()), state).result()
    3
    """
    folder = Path(tempfile.mkdtemp(prefix="shap-instances-", dir=dir if dir is not None else _shared_memory_dir()))
    try:
        token = folder / "token"
        token.write_text(folder.name)
        if all(text == folder.name for text in client.run(_read_text, str(token)).values()):
            for name, array in arrays.items():
                np.save(folder / f"{name}.npy", array)
            yield SharedFolder(folder, list(arrays))
        else:  # workers on other machines: the arrays travel, once
            yield client.scatter([arrays], broadcast=True, hash=False)[0]
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def row_partitions(X: Any, rows_per_part: int) -> tuple[list[Any], list[int] | None]:
    """The partitions of ``X`` along its rows, and their lengths when known without computing.

    A dask DataFrame gives its partitions (lengths unknown: None), a dask array its row blocks (its columns
    joined into one block), anything else slices of ``rows_per_part`` rows (a DataFrame stays a DataFrame).

    Examples
    --------
    >>> import numpy as np
    >>> from shap_instances.utils import row_partitions
    >>> parts, lengths = row_partitions(np.zeros((5, 2)), 2)
    >>> lengths
    [2, 2, 1]
    """
    if is_dask_collection(X):
        if getattr(X, "ndim", 2) == 2 and hasattr(X, "rechunk"):  # a dask array: whole rows per block
            X = X.rechunk({1: X.shape[1]})
            return list(X.to_delayed()[:, 0]), [int(c) for c in X.chunks[0]]
        return list(X.to_delayed()), None
    n = X.shape[0] if hasattr(X, "shape") else len(X)
    starts = range(0, max(n, 1), max(rows_per_part, 1))
    take = (lambda a, b: X.iloc[a:b]) if isinstance(X, pd.DataFrame | pd.Series) else (lambda a, b: X[a:b])
    return [take(s, min(s + rows_per_part, n)) for s in starts], [min(s + rows_per_part, n) - s for s in starts]


def _explain_part(worker: Any, call: Callable[..., Any], part: Any, y: Any, index: int | None) -> Any:
    """``call(worker, part[, y][, index=i])`` on a worker (or here); a dask partition arriving as Delayed is
    computed first."""
    if hasattr(part, "compute"):
        part = part.compute()
    numbered = {} if index is None else {"index": index}
    return call(worker, part, **numbered) if y is None else call(worker, part, y, **numbered)


def _explain(explainer: Any, X: Any, y: Any = None) -> Any:
    """The default per-partition call: the explainer's own serial ``__call__``."""
    return explainer(X) if y is None else explainer(X, y)


def explain_partitions(explainer: Any, X: Any, y: Any = None, *, scheduler: Any = None,
                       call: Callable[..., Any] | None = None, sink: Callable[[int, Any], object] | None = None,
                       rows_per_part: int | None = None, max_in_flight: int | None = None,
                       numbered: bool = False, sparse: bool = False, out: str | os.PathLike[str] | None = None,
                       max_memory: float | None = None) -> Any:
    """Explain the rows of ``X`` partition by partition, on a dask cluster when ``scheduler`` is given.

    Parameters
    ----------
    explainer : InstanceExplainer
        A built explainer whose explained rows are independent; a copy with ``scheduler=None`` is scattered
        once to every worker.
    X : array-like, DataFrame, dask array or dask DataFrame
        The rows to explain (or, with ``call``, whatever ``call`` takes: training row numbers, say).
    y : array-like, optional
        Targets of the explained rows, for explainers whose call takes them; split like ``X`` (a dask DataFrame
        ``X`` needs its partition lengths computed first).
    scheduler : str, distributed.Client or None
        As in :func:`dask_client`; None explains here, one partition at a time.
    call : callable, optional
        ``call(explainer, part) -> Explanation`` (or a sparse matrix, or a table for a ``sink``), and
        ``call(explainer, part, y_part)`` when ``y`` is given; default ``explainer(part)`` (``explainer(part,
        y_part)``).
    sink : callable, optional
        ``sink(i, explanation)`` receives the parts in order instead of their being joined; the function then
        returns the number of parts.
    rows_per_part : int, optional
        Rows of an in-memory partition (default: at most :data:`PARTITION_BYTES` of values, and at least one
        partition per worker).
    max_in_flight : int, optional
        Partitions computed ahead of the one being collected (default twice the workers).
    numbered : bool, default=False
        Pass each partition's number to ``call`` as ``index=i`` (a call that writes its part itself names it so).
    sparse : bool, default=False
        ``call`` returns a few values per row (sparse rows, ``top_k``): in-memory ``X`` is split into four
        partitions per worker, not by the memory of dense values.
    out : str or path-like, optional
        A folder: the values (and base values, data, standard errors) of each part are written, in order, into
        ``.npy`` files of the whole result's shape there (``values.npy``, ...), and the Explanation returned holds
        them memory-mapped, read-only: a result larger than memory (:func:`memmap_explanation`). Existing files
        of those names are overwritten.
    max_memory : float, optional
        Bytes the joined values may take in memory (default the explainer's ``max_memory``, else half the memory
        available): without ``out``, a result estimated larger (rows x players x outputs x 8 bytes) is refused
        before any work, naming ``out=``.

    Returns
    -------
    shap.Explanation, scipy.sparse.csr_matrix or int
        The parts joined by :func:`concat_explanations` (row names ``x[i]`` numbered over the whole of ``X``
        when it has no index), or stacked when ``call`` returns sparse matrices (``top_k``), or the number of
        parts when a ``sink`` took them; with ``out``, the memory-mapped Explanation (no row names).

    Raises
    ------
    MemoryBudgetError
        Without ``out`` or a ``sink``, when the values of all rows would exceed ``max_memory``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.naive_bayes import GaussianNB
    >>> import shap_instances as si
    >>> from shap_instances.utils import explain_partitions
    >>> X, y = load_iris(return_X_y=True)
    >>> explainer = si.NaiveBayesExplainer(GaussianNB().fit(X, y), X)
    >>> parts = explain_partitions(explainer, X, rows_per_part=40)
    >>> bool(np.array_equal(parts.values, explainer(X).values))
    True
    """
    worker = copy.copy(explainer)
    worker.scheduler = None  # the copy explains serially (and a Client does not travel)
    call = call or _explain
    with dask_client(scheduler) as client:
        n_workers = len(client.scheduler_info()["workers"]) if client is not None else 1
        size = rows_per_part or (1 if is_dask_collection(X) else _rows_per_part(explainer, X, n_workers, sparse))
        parts, lengths = row_partitions(X, size)
        if out is not None:
            lengths = lengths if lengths is not None else [int(n) for n in X.map_partitions(len).compute()]
            sink = MemmapWriter(Path(out), sum(lengths))
        elif sink is None and call is _explain and not sparse:
            _check_result_memory(explainer, X, lengths, max_memory)
        y_parts = _split_targets(y, X, parts, lengths)
        results = _run(worker, call, parts, y_parts, client, max_in_flight or 2 * max(n_workers, 1), numbered)
        if sink is not None:
            n_parts = 0
            for i, part in enumerate(results):
                sink(i, part)
                n_parts += 1
            return sink.explanation() if isinstance(sink, MemmapWriter) else n_parts
        done = list(results)
    if sp.issparse(done[0]) if done else False:
        return sp.vstack(done, format="csr")
    joined = concat_explanations(done)
    if call is _explain and not hasattr(X, "index"):  # arrays: rows numbered over the whole of X
        joined.row_names = [f"x[{i}]" for i in range(joined.values.shape[0])]
    return joined


def _players(explainer: Any) -> int:
    """The number of players of an explainer's values (its training rows, else its features; 1 if unknown)."""
    return len(getattr(explainer, "train_names_", None) or getattr(explainer, "feature_names_", None) or [0])


def _check_result_memory(explainer: Any, X: Any, lengths: list[int] | None, max_memory: float | None) -> None:
    """Refuse, before any work, values of all rows (rows x players x outputs x 8 bytes) above ``max_memory`` (by
    default the explainer's own ``max_memory``, else half the memory available)."""
    n = sum(lengths) if lengths is not None else len(X) if not is_dask_collection(X) else None
    max_memory = max_memory if max_memory is not None else getattr(explainer, "max_memory", None)
    budget = default_memory_budget() if max_memory is None else float(max_memory)
    outputs = max(1, len(getattr(explainer, "output_names_", None) or []))
    needed = 8.0 * (n or 0) * _players(explainer) * outputs
    if needed > budget:
        raise MemoryBudgetError(
            f"the values of {n:,} rows x {_players(explainer):,} players x {outputs} output(s) would take "
            f"{needed / 2**30:,.1f} GiB, more "
            f"than max_memory ({budget / 2**30:,.1f} GiB"
            f"{'' if max_memory is not None else ', half the memory available'}): "
            "pass out=FOLDER to write them to memory-mapped .npy files, a sink, or a larger max_memory.")


class MemmapWriter:
    """A sink writing the parts of an Explanation, in order, into ``.npy`` files of the whole result's shape.

    What :func:`explain_partitions` uses with ``out=``, and ``explain --out NAME.npy``.

    Parameters
    ----------
    folder : pathlib.Path
        Where the files go (created if missing); files of the same names are overwritten.
    n_rows : int
        Rows of the whole result.
    fields : sequence of str, default=FIELDS
        The Explanation's arrays written (``values`` first), each to ``{name}.npy``; the player and output names
        go to ``names.json``. A part given as an int is rows written into the files elsewhere (by a worker,
        :func:`write_memmap_rows`).

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> import numpy as np
    >>> import shap
    >>> from shap_instances.utils import MemmapWriter
    >>> writer = MemmapWriter(Path(tempfile.mkdtemp()), 4, fields=("values",))
    >>> for i in range(2):
    ...     writer(i, shap.Explanation(np.full((2, 3), float(i))))
    >>> writer.explanation().values.tolist()
    [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0], [1.0, 1.0, 1.0], [1.0, 1.0, 1.0]]
    """

    FIELDS = ("values", "base_values", "data", "error_std")

    def __init__(self, folder: Path, n_rows: int, fields: Sequence[str] = FIELDS) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self.folder, self.n_rows, self.fields, self.start = folder, n_rows, tuple(fields), 0
        self.first: Any = None

    def allocate(self, like: Any) -> None:
        """Create the files, of ``n_rows`` rows, from a part of the result (its dtypes and trailing shapes)."""
        self.first = like
        for name in self.fields:
            array = getattr(like, name, None)
            if array is not None and np.ndim(array) >= 1 and not _one_row_repeated([np.asarray(array)]):
                array = np.asarray(array)
                shape = (self.n_rows, *array.shape[1:])
                # the header, and the file at its final size (sparse: the rows take disk as they are written)
                np.lib.format.open_memmap(self.folder / f"{name}.npy", mode="w+", dtype=array.dtype, shape=shape)
        players = like.feature_names if like.feature_names is not None else range(np.shape(like.values)[1])
        names = {"feature_names": [str(f) for f in players],
                 "output_names": None if like.output_names is None else [str(o) for o in like.output_names]}
        (self.folder / "names.json").write_text(json.dumps(names))

    def __call__(self, i: int, part: Any) -> None:
        if isinstance(part, int | np.integer):  # rows a worker wrote into the files itself
            self.start += int(part)
            return
        if self.first is None:
            self.allocate(part)
        self.start += write_memmap_rows(self.folder, self.start, part)

    def explanation(self) -> Any:
        """The Explanation of the whole result, its arrays memory-mapped read-only."""
        if self.first is None:
            raise DataValidationError("there are no rows to explain (X has no rows).")
        return memmap_explanation(self.folder, like=self.first)


def write_memmap_rows(folder: str | os.PathLike[str], start: int, part: Any) -> int:
    """Write ``part`` (an Explanation of consecutive rows) at row ``start`` of the ``.npy`` files in ``folder``.

    The files were allocated at the whole result's shape (by :func:`explain_partitions` with ``out=``, or
    ``explain --out NAME.npy``); each of ``part``'s fields with a file there is written, in place, so that
    workers of a cluster sharing the folder can each write their own rows. Returns the rows written.

    Examples
    --------
    >>> import tempfile
    >>> import numpy as np
    >>> import shap
    >>> from shap_instances.utils import memmap_explanation, write_memmap_rows
    >>> folder = tempfile.mkdtemp()
    >>> _ = np.lib.format.open_memmap(f"{folder}/values.npy", mode="w+", shape=(4, 2))
    >>> write_memmap_rows(folder, 2, shap.Explanation(np.ones((2, 2))))
    2
    >>> memmap_explanation(folder).values.tolist()
    [[0.0, 0.0], [0.0, 0.0], [1.0, 1.0], [1.0, 1.0]]
    """
    folder = Path(folder)
    for name in MemmapWriter.FIELDS:
        path = folder / f"{name}.npy"
        if getattr(part, name, None) is None or not path.exists():
            continue
        target = np.load(path, mmap_mode="r")  # its header read: dtype, shape and where the rows start
        rows = np.ascontiguousarray(np.broadcast_to(getattr(part, name), (len(part.values), *target.shape[1:])),
                                    dtype=target.dtype)
        # written by the file, not through the map: no page faults, and the GIL is released while it copies
        with path.open("r+b") as handle:
            _write_all(handle.fileno(), rows.reshape(-1).view(np.uint8).data, target.offset + start * rows[:1].nbytes)
    return int(np.shape(part.values)[0])


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
        A part of the same result, whose feature and output names and labels are copied (default: the names
        saved in the folder's ``names.json``, else players named by their position).

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
    folder = Path(folder)
    # ndarray views of the memory maps (shap's slicer slices ndarrays, not their subclass memmap); still file-backed
    arrays = {name: np.load(folder / f"{name}.npy", mmap_mode="r").view(np.ndarray) for name in MemmapWriter.FIELDS
              if (folder / f"{name}.npy").exists()}
    if "values" not in arrays:
        raise DataValidationError(f"{folder} holds no values.npy; pass the out= folder of explain_partitions.")
    values = arrays["values"]
    data = arrays.get("data")
    if data is None and like is not None and getattr(like, "data", None) is not None:  # one row broadcast
        data = np.broadcast_to(np.asarray(like.data)[0], (values.shape[0], *np.shape(like.data)[1:]))
    names = _saved_names(folder, values) if like is None else {"feature_names": like.feature_names,
                                                               "output_names": like.output_names}
    joined = (type(like) if like is not None else _shap_explanation())(
        values=values, base_values=arrays.get("base_values"), data=data, error_std=arrays.get("error_std"), **names)
    joined.row_names = None
    for label in ("players", "efficient", "explained_quantity"):
        if like is not None and hasattr(like, label):
            setattr(joined, label, getattr(like, label))
    return joined


def _saved_names(folder: Path, values: np.ndarray) -> dict[str, Any]:
    """The player and output names of ``names.json`` in ``folder`` (players numbered by position without it)."""
    path = folder / "names.json"
    if path.exists():
        return dict(json.loads(path.read_text()))
    return {"feature_names": [str(j) for j in range(values.shape[1])], "output_names": None}


def _shap_explanation() -> type:
    import shap

    return shap.Explanation


def _rows_per_part(explainer: Any, X: Any, n_workers: int, sparse: bool) -> int:
    """Rows of an in-memory partition: values of at most PARTITION_BYTES, and one partition per worker at least;
    ``sparse``: four partitions per worker."""
    n = X.shape[0] if hasattr(X, "shape") else len(X)
    if sparse:
        return max(1, -(-n // (4 * max(n_workers, 1))))
    by_memory = max(1, PARTITION_BYTES // (8 * max(_players(explainer), 1)))
    return max(1, min(by_memory, -(-n // max(n_workers, 1))))


def _split_targets(y: Any, X: Any, parts: list[Any], lengths: list[int] | None) -> list[Any]:
    """``y`` split like the partitions of ``X`` (None parts when ``y`` is None)."""
    if y is None:
        return [None] * len(parts)
    if lengths is None:
        lengths = [int(n) for n in X.map_partitions(len).compute()]
    y = np.asarray(y)
    if len(y) != sum(lengths):
        raise DataValidationError(f"y has {len(y)} rows but X has {sum(lengths)}; pass one target per row.")
    bounds = np.cumsum([0, *lengths])
    return [y[a:b] for a, b in zip(bounds[:-1], bounds[1:])]


def _run(worker: Any, call: Callable[..., Any], parts: list[Any], y_parts: list[Any], client: Any,
         max_in_flight: int, numbered: bool) -> Iterator[Any]:
    """The explanations of the parts, in order: here one by one, or on the cluster a window at a time."""
    if client is None:
        for i, (part, y_part) in enumerate(zip(parts, y_parts)):
            yield _explain_part(worker, call, part, y_part, i if numbered else None)
        return
    state = client.scatter(worker, broadcast=True, hash=False)  # the training-side state travels once
    pending: list[Any] = []

    def submit(i: int) -> None:
        part = parts[i]
        part = client.compute(part) if hasattr(part, "dask") else client.scatter(part, hash=False)
        pending.append(client.submit(_explain_part, state, call, part, y_parts[i], i if numbered else None,
                                     pure=False))

    for i in range(min(max_in_flight, len(parts))):
        submit(i)
    for i in range(len(parts)):
        future = pending.pop(0)
        if i + max_in_flight < len(parts):
            submit(i + max_in_flight)
        yield future.result()
        del future  # released: the cluster forgets the part


def concat_explanations(parts: Sequence[Any]) -> Any:
    """Join Explanations of consecutive row blocks (same players and outputs) into one, in order.

    Values, base values, data, display data, standard errors and row names are stacked; the labels an
    explainer set (``players``, ``efficient``, ``explained_quantity``) are kept from the first part.

    Examples
    --------
    >>> import numpy as np
    >>> import shap
    >>> from shap_instances.utils import concat_explanations
    >>> part = shap.Explanation(np.ones((2, 3)), base_values=np.zeros(2), data=np.zeros((2, 3)))
    >>> concat_explanations([part, part]).values.shape
    (4, 3)
    """
    if not parts:
        raise DataValidationError("there are no rows to explain (X has no rows).")
    first = parts[0]

    def stacked(name: str) -> Any:
        found = [getattr(part, name, None) for part in parts]
        if any(a is None for a in found):
            return None
        arrays = [np.asarray(a) for a in found]
        if name == "data" and _one_row_repeated(arrays):  # kept a broadcast view, as the serial run does
            return np.broadcast_to(arrays[0][0], (sum(len(a) for a in arrays), *arrays[0].shape[1:]))
        return np.concatenate(arrays)

    joined = type(first)(
        values=stacked("values"), base_values=stacked("base_values"), data=stacked("data"),
        display_data=stacked("display_data"), feature_names=first.feature_names, output_names=first.output_names,
        error_std=stacked("error_std"),
        compute_time=sum(part.compute_time or 0.0 for part in parts) if first.compute_time is not None else None,
    )
    names: list[Any] = [getattr(part, "row_names", None) for part in parts]
    joined.row_names = None if any(n is None for n in names) else [name for n in names for name in n]
    for label in ("players", "efficient", "explained_quantity"):
        if hasattr(first, label):
            setattr(joined, label, getattr(first, label))
    return joined


def _one_row_repeated(arrays: list[np.ndarray]) -> bool:
    """Whether every array is one row broadcast over its rows (stride 0), the same row in all."""
    return all(a.ndim > 1 and a.strides[0] == 0 and len(a) > 0 for a in arrays) and all(
        np.array_equal(a[0], arrays[0][0]) for a in arrays)
