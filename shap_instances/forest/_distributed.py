"""The out-of-bag proximity matrix of a forest's training rows on a dask cluster, by blocks of rows.

What travels is the leaf index alone (:data:`OOB_ARRAYS`: the leaves' members and weights, the bit-packed in-bag
matrix, the out-of-bag rows' leaves), never the forest, the training data or the explainer. On a cluster whose
workers read this machine's files (a ``LocalCluster``), the arrays are ``.npy`` files in a temporary folder that
every worker maps (:func:`~shap_instances.utils.shared_arrays`), and the workers write the matrix's non-zeros
into two files there themselves; elsewhere the arrays are scattered once and the blocks' non-zeros come back.

Two passes, as in the serial :meth:`GapIndex.rows`: the non-zeros of every row (blocks of equal rows), then the
rows written at their final offsets (blocks of equal non-zeros: the work of a block is its non-zeros, known from
the first pass). Every row is computed by the serial kernels, so the matrix is bitwise the serial one.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp

from ..utils import SharedFolder, load_shared, shared_arrays
from ._proximities import GapIndex, csr_of

__all__ = ["OOB_ARRAYS", "oob_proximities_on"]

#: The leaf index arrays an out-of-bag row needs (what a worker receives).
OOB_ARRAYS = ("leaf_offsets", "leaf_ptr", "members", "mass", "inbag_bits", "oob_leaves", "oob_ptr")


def oob_proximities_on(client: Any, index: GapIndex, *, blocks_per_worker: int = 4, dir: Any = None
                       ) -> sp.csr_matrix:
    """The out-of-bag proximities of all training rows (``index.oob_rows()``), computed on ``client``'s workers.

    Parameters
    ----------
    client : distributed.Client
    index : GapIndex
        A bootstrap forest's index, not changed (its arrays are read, saved or scattered).
    blocks_per_worker : int, default=4
        Blocks of rows per worker in each pass (the scheduler hands a free worker the next block).
    dir : str or path-like, optional
        Where the temporary folder of shared files goes (:func:`~shap_instances.utils.shared_arrays`).

    Returns
    -------
    scipy.sparse.csr_matrix of shape (n_train, n_train)
        Bitwise ``index.oob_rows()``. With shared files its ``indices`` and ``data`` are the workers' files,
        mapped copy-on-write and already unlinked (memory under ``/dev/shm``, freed with the matrix).

    Examples
    --------
    >>> import numpy as np
    >>> from distributed import Client, LocalCluster
    >>> from sklearn.datasets import load_diabetes
    >>> from sklearn.ensemble import RandomForestRegressor
    >>> from shap_instances.forest import build_gap_index, oob_proximities_on
    >>> X, y = load_diabetes(return_X_y=True)
    >>> index = build_gap_index(RandomForestRegressor(10, random_state=0).fit(X, y), X, y)
    >>> with LocalCluster(n_workers=2, processes=False, dashboard_address=None) as cluster, Client(cluster) as c:
    ...     P = oob_proximities_on(c, index)
    >>> (P != index.oob_rows()).nnz
    0
    """
    if index.oob_leaves is None:  # an index pickled before the out-of-bag leaves were recorded
        return index.oob_rows()
    n = index.n_train
    n_blocks = max(1, min(n, blocks_per_worker * max(1, len(client.scheduler_info()["workers"]))))
    shape = (n, index.n_trees)
    with shared_arrays(client, {name: getattr(index, name) for name in OOB_ARRAYS}, dir=dir) as state:
        starts = np.linspace(0, n, n_blocks + 1).astype(np.int64)
        counts = _run_blocks(client, _block_counts, state, shape, index, starts)
        indptr = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(np.concatenate(counts), out=indptr[1:])
        nnz = int(indptr[-1])
        # the second pass's blocks hold equal non-zeros (its work), the first pass's equal rows
        starts = np.unique(np.concatenate([[0], np.searchsorted(indptr, np.linspace(0, nnz, n_blocks + 1)), [n]]))
        if not isinstance(state, SharedFolder):
            parts = _run_blocks(client, _block_fill, state, shape, index, starts, indptr)
            return csr_of(indptr, np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts]), n)
        for name, dtype in (("indices", np.int32), ("data", np.float64)):
            np.lib.format.open_memmap(state.path(name), mode="w+", dtype=dtype, shape=(nnz,))
        _run_blocks(client, _block_fill, state, shape, index, starts, indptr)
        # mapped, not read: the pages the workers wrote, kept (once unlinked) while the matrix lives
        written = {name: np.asarray(np.load(state.path(name), mmap_mode="c")) for name in ("indices", "data")}
    return csr_of(indptr, written["indices"], written["data"], n)


def _run_blocks(client: Any, function: Any, state: Any, shape: tuple[int, int], index: GapIndex,
                starts: np.ndarray, indptr: np.ndarray | None = None) -> list[Any]:
    """``function(state, shape, start, stop, before[, indptr block])`` of every block ``starts[k]:starts[k+1]``,
    on the workers, in order."""
    before = index.oob_before(starts[:-1])
    futures = [client.submit(function, state, shape, int(a), int(b), before[k],
                             *(() if indptr is None else (indptr[a:b + 1],)), pure=False)
               for k, (a, b) in enumerate(zip(starts[:-1], starts[1:]))]
    return list(client.gather(futures))


def _slim_index(state: Any, shape: tuple[int, int]) -> GapIndex:
    """On a worker, the index of the shared arrays (no forest, no training data: out-of-bag rows only)."""
    return GapIndex(**load_shared(state), n_train=shape[0], n_trees=shape[1], semantics="", bootstrap=True,
                    model=None, train_X=None)


def _block_counts(state: Any, shape: tuple[int, int], start: int, stop: int, before: np.ndarray) -> np.ndarray:
    """The non-zeros of the out-of-bag rows ``start:stop`` (the first pass, on a worker)."""
    index = _slim_index(state, shape)
    return index.row_counts(index.oob_block_ranks(start, stop, before))


def _block_fill(state: Any, shape: tuple[int, int], start: int, stop: int, before: np.ndarray,
                indptr: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """The out-of-bag rows ``start:stop`` (``indptr``: their offsets in the matrix), written into the shared
    files (None returned), or returned as ``(indices, data)`` when the arrays were scattered."""
    index = _slim_index(state, shape)
    ranks = index.oob_block_ranks(start, stop, before)
    if isinstance(state, SharedFolder):
        indices, data = (np.load(state.path(name), mmap_mode="r+") for name in ("indices", "data"))
        index.fill_rows(ranks, indptr, np.asarray(indices), np.asarray(data))
        indices.flush()  # written back where the folder is not local memory (a shared file system)
        data.flush()
        return None
    own = indptr - indptr[0]
    indices, data = np.empty(int(own[-1]), dtype=np.int32), np.empty(int(own[-1]), dtype=np.float64)
    index.fill_rows(ranks, own, indices, data)
    return indices, data
