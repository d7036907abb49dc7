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
import os
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp

from ..exceptions import DataValidationError

__all__ = ["available_cores", "concat_explanations", "dask_client", "explain_partitions", "is_dask_collection",
           "row_partitions"]

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
                       numbered: bool = False, sparse: bool = False) -> Any:
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

    Returns
    -------
    shap.Explanation, scipy.sparse.csr_matrix or int
        The parts joined by :func:`concat_explanations` (row names ``x[i]`` numbered over the whole of ``X``
        when it has no index), or stacked when ``call`` returns sparse matrices (``top_k``), or the number of
        parts when a ``sink`` took them.

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
        y_parts = _split_targets(y, X, parts, lengths)
        results = _run(worker, call, parts, y_parts, client, max_in_flight or 2 * max(n_workers, 1), numbered)
        if sink is not None:
            n_parts = 0
            for i, part in enumerate(results):
                sink(i, part)
                n_parts += 1
            return n_parts
        done = list(results)
    if sp.issparse(done[0]) if done else False:
        return sp.vstack(done, format="csr")
    joined = concat_explanations(done)
    if call is _explain and not hasattr(X, "index"):  # arrays: rows numbered over the whole of X
        joined.row_names = [f"x[{i}]" for i in range(joined.values.shape[0])]
    return joined


def _rows_per_part(explainer: Any, X: Any, n_workers: int, sparse: bool) -> int:
    """Rows of an in-memory partition: values of at most PARTITION_BYTES, and one partition per worker at least;
    ``sparse``: four partitions per worker."""
    n = X.shape[0] if hasattr(X, "shape") else len(X)
    if sparse:
        return max(1, -(-n // (4 * max(n_workers, 1))))
    players = len(getattr(explainer, "train_names_", None) or getattr(explainer, "feature_names_", None) or [0])
    by_memory = max(1, PARTITION_BYTES // (8 * max(players, 1)))
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
