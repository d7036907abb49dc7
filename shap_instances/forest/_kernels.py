"""Numba kernel of the sparse RF-GAP proximities (leaf co-membership, one CSR block of rows at a time).

The caller (:mod:`shap_instances.forest`) validated everything; this module only computes.

Layout of the leaf index (the leaves of all trees concatenated, internal nodes left out):

* ``leaf_offsets[t]`` is the global number of tree ``t``'s first leaf, so the ``r``-th leaf (in node order)
  of tree ``t`` is ``leaf_offsets[t] + r``;
* the in-bag training points of global leaf ``g`` are ``members[leaf_ptr[g]:leaf_ptr[g + 1]]``, sorted by
  row, and their in-bag weights ``c_i(t)`` (multiplicity times sample and class weights) are
  ``mass[leaf_ptr[g]:leaf_ptr[g + 1]]``. ``mass`` is a small unsigned integer type when the weights are
  multiplicities, float64 otherwise; the kernel normalises by the leaf total ``sum_l c_l(t)`` itself, in
  float64, so the weights are the same floats whatever the storage type. ``members`` is uint16 when the
  training set has at most 65,536 rows, int32 otherwise.

A query row ``j`` lies in leaf ``query_leaves[j, t]`` (leaf rank within tree ``t``), or ``-1`` when tree
``t`` must be skipped for that row (the training point is in-bag there: out-of-bag proximities). The row of
proximities is the average over the used trees of the leaf's normalised weight vector.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..utils import JIT_OPTIONS

__all__ = ["gap_row_counts", "gap_fill_rows"]


@njit(**JIT_OPTIONS)
def gap_row_counts(query_leaves: np.ndarray, leaf_offsets: np.ndarray, leaf_ptr: np.ndarray, members: np.ndarray,
                   n_train: int) -> np.ndarray:
    """Number of distinct training neighbours (non-zeros) of each query row.

    Parameters
    ----------
    query_leaves : int32 array (m, T), C-contiguous
        Leaf rank (within its tree) of each query row in each tree; -1 skips the tree.
    leaf_offsets : int64 array (T,)
    leaf_ptr : int32 or int64 array (n_leaves_total + 1,)
    members : uint16 or int32 array (n_entries,)
    n_train : int

    Returns
    -------
    int64 array (m,)
    """
    m, n_trees = query_leaves.shape
    marker = np.full(n_train, -1, dtype=np.int64)
    counts = np.zeros(m, dtype=np.int64)
    for j in range(m):
        count = 0
        for t in range(n_trees):
            leaf = query_leaves[j, t]
            if leaf < 0:
                continue
            g = leaf_offsets[t] + leaf
            for p in range(leaf_ptr[g], leaf_ptr[g + 1]):
                i = members[p]
                if marker[i] != j:
                    marker[i] = j
                    count += 1
        counts[j] = count
    return counts


@njit(**JIT_OPTIONS)
def gap_fill_rows(query_leaves: np.ndarray, leaf_offsets: np.ndarray, leaf_ptr: np.ndarray, members: np.ndarray,
                  mass: np.ndarray, n_train: int, indptr: np.ndarray, indices: np.ndarray, data: np.ndarray) -> None:
    """Write the CSR rows of ``query_leaves`` into ``indices`` / ``data`` at the offsets ``indptr``.

    ``indptr`` (m + 1,) comes from :func:`gap_row_counts` (``indptr[0]`` may be non-zero: a block of a larger
    matrix). Each row is sorted by training index and is the average over its used trees of
    ``mass / (leaf total of mass)``.
    """
    m, n_trees = query_leaves.shape
    marker = np.full(n_train, -1, dtype=np.int64)
    acc = np.zeros(n_train, dtype=np.float64)
    for j in range(m):
        start = indptr[j]
        fill = start
        used = 0
        for t in range(n_trees):
            leaf = query_leaves[j, t]
            if leaf < 0:
                continue
            used += 1
            g = leaf_offsets[t] + leaf
            total = 0.0
            for p in range(leaf_ptr[g], leaf_ptr[g + 1]):
                total += np.float64(mass[p])
            for p in range(leaf_ptr[g], leaf_ptr[g + 1]):
                i = members[p]
                if marker[i] != j:
                    marker[i] = j
                    indices[fill] = i
                    fill += 1
                acc[i] += np.float64(mass[p]) / total
        stop = indptr[j + 1]
        indices[start:stop].sort()  # in place: a slice assignment would compile a shape check (utils.kernels)
        scale = 1.0 / used if used > 0 else 0.0
        for p in range(start, stop):
            i = indices[p]
            data[p] = acc[i] * scale
            acc[i] = 0.0
