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
import numbers
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp

from ..exceptions import DataValidationError, InvalidParameterError, MemoryBudgetError
from ._memmap import MemmapWriter, check_output_folder, memmap_explanation, refuse_input_in, write_memmap_rows
from ._memory import default_memory_budget
from ._params import COMMON_CONSTRAINTS, Interval, validate_params

__all__ = ["MemmapWriter", "SharedFolder", "available_cores", "concat_explanations", "dask_client",
           "explain_partitions", "is_dask_collection", "load_shared", "memmap_explanation", "row_partitions",
           "shared_arrays", "write_memmap_rows"]  # the memory-mapped folders' names: re-exported from _memmap

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
            client = stack.enter_context(_connect(Client, scheduler))
        yield client


def _connect(client_type: Any, address: str) -> Any:
    """A client of the scheduler at ``address``; an address that is not one, or that nothing answers at, refused
    with the reason (dask's own ``ValueError`` / ``OSError`` name neither the option nor what to pass)."""
    try:
        return client_type(address)
    except (OSError, ValueError, TypeError) as error:  # a TimeoutError is an OSError
        raise InvalidParameterError(f"scheduler={address!r} is not a dask scheduler this machine can reach "
                                    f"({type(error).__name__}: {error}); pass an address such as "
                                    "'tcp://10.0.0.5:8786', 'local' or a running distributed.Client.") from None


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
                       overwrite: bool = False, max_memory: float | None = None) -> Any:
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
        them memory-mapped, read-only: a result larger than memory (:func:`memmap_explanation`). The folder must
        be empty or new (see ``overwrite``), not a file, and not hold a file ``X`` is memory-mapped from; one run
        writes into it at a time (a second is refused while the first runs); the arrays are put in place, and
        the completion marker ``explanation.json`` written, only when every row is written (an interrupted run
        leaves the folder as it was).
    overwrite : bool, default=False
        With ``out``: replace the files of an earlier result in a folder that is not empty (renamed over: an
        earlier result still memory-mapped keeps its values); the folder's other files are kept.
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
    InvalidParameterError
        An option of the wrong type or range (``rows_per_part=0``, ``out=""``, ``out`` with a ``sink``).
    OutputConflictError
        ``out`` is a file, a link to nothing, a folder that is not empty (without ``overwrite``), a folder another
        run is writing, or the folder ``X`` is memory-mapped from.

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
    _check_partition_options({"explainer": explainer, "scheduler": scheduler, "call": call, "sink": sink,
                              "rows_per_part": rows_per_part, "max_in_flight": max_in_flight, "numbered": numbered,
                              "sparse": sparse, "out": out, "overwrite": overwrite, "max_memory": max_memory})
    folder = _output_folder(out, X, y)
    worker = copy.copy(explainer)
    worker.scheduler = None  # the copy explains serially (and a Client does not travel)
    call = call or _explain
    with dask_client(scheduler) as client:
        n_workers = len(client.scheduler_info()["workers"]) if client is not None else 1
        size = rows_per_part or (1 if is_dask_collection(X) else _rows_per_part(explainer, X, n_workers, sparse))
        parts, lengths = row_partitions(X, size)
        if folder is not None:
            lengths = lengths if lengths is not None else [int(n) for n in X.map_partitions(len).compute()]
        elif sink is None and call is _explain and not sparse:
            _check_result_memory(explainer, X, lengths, max_memory)
        y_parts = _split_targets(y, X, parts, lengths)
        if folder is not None:  # checked and locked before any work
            sink = MemmapWriter(folder, sum(lengths or []), overwrite=overwrite)
        results = _run(worker, call, parts, y_parts, client, max_in_flight or 2 * max(n_workers, 1), numbered)
        if sink is not None:
            return _drain(results, sink)
        done = list(results)
    return _joined(done, X, numbered_rows=call is _explain)


def _output_folder(out: Any, X: Any, y: Any) -> Any:
    """The checked folder ``out`` (None without one), refused when ``X`` or ``y`` is memory-mapped from it."""
    folder = None if out is None else check_output_folder(out)
    if folder is not None:
        refuse_input_in(folder, X, y)
    return folder


def _joined(done: list[Any], X: Any, *, numbered_rows: bool) -> Any:
    """The parts' results as one: sparse matrices stacked, Explanations concatenated (with ``numbered_rows``, the
    rows of an array ``X`` named ``x[i]`` over the whole of ``X``)."""
    if sp.issparse(done[0]) if done else False:
        return sp.vstack(done, format="csr")
    joined = concat_explanations(done)
    if numbered_rows and not hasattr(X, "index"):  # arrays: rows numbered over the whole of X
        joined.row_names = [f"x[{i}]" for i in range(joined.values.shape[0])]
    return joined


#: The options of :func:`explain_partitions`, checked once before any work.
_PARTITION_CONSTRAINTS: dict[str, list] = {
    "call": [None, "callable"], "sink": [None, "callable"],
    "rows_per_part": [None, Interval(numbers.Integral, 1, None)],
    "max_in_flight": [None, Interval(numbers.Integral, 1, None)], "numbered": ["boolean"], "sparse": ["boolean"],
    "out": [None, "path"], "overwrite": ["boolean"], "max_memory": COMMON_CONSTRAINTS["max_memory"],
    "scheduler": COMMON_CONSTRAINTS["scheduler"],
}


def _check_partition_options(options: dict[str, Any]) -> None:
    """Refuse an ``explainer`` that is not a built explainer, options of :func:`explain_partitions` of the wrong
    type or range, and ``out`` beside a ``sink``."""
    import shap

    if not isinstance(options["explainer"], shap.Explainer):
        raise InvalidParameterError(f"explain_partitions: explainer must be a built explainer (a shap.Explainer); got "
                                    f"a {type(options['explainer']).__name__}: build one first, e.g. "
                                    "si.Explainer(model, X_train).")
    validate_params("explain_partitions", _PARTITION_CONSTRAINTS,
                    {name: options[name] for name in _PARTITION_CONSTRAINTS})
    if options["out"] is not None and options["sink"] is not None:
        raise InvalidParameterError("explain_partitions: out= writes the parts itself; pass out= or sink=, not both.")


def _drain(results: Iterator[Any], sink: Callable[[int, Any], object]) -> Any:
    """Hand the parts to ``sink`` in order: the number of parts, or for a :class:`MemmapWriter` the memory-mapped
    Explanation (its files put in place only when every part was written; removed after an error)."""
    try:
        n_parts = 0
        for i, part in enumerate(results):
            sink(i, part)
            n_parts += 1
        return sink.explanation() if isinstance(sink, MemmapWriter) else n_parts
    finally:
        if isinstance(sink, MemmapWriter):
            sink.close()


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
