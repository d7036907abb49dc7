"""Numba kernels of the boosted-tree decompositions (:mod:`shap_instances.boosting` validated everything).

Layout shared by the kernels (trees in training order, ``t = 0 .. T-1``):

* ``query_leaves[r, t]``: the leaf (its rank within tree ``t``, ``0 .. n_leaves[t]-1``) of explained row ``r``;
* ``train_leaves[t, j]``: the leaf of training row ``j`` in tree ``t`` (any valid rank for rows that took no
  part in training: their ``row_weight`` is 0).

**Target weights** (squared error): with ``s_j`` the row weights, ``leaf_scale[t, l] = eta / (S_tl + lambda)``
(``S_tl`` the total row weight of leaf ``l``), the backward (Horner) recursion of ``docs/explainers/boosting.md``

    u <- u + s * E[leaf_t(.)],   E_l = leaf_scale[t, l] * ([l = leaf_t(x)] - sum_{i in l} u_i),

from the last tree to the first, then ``w = a0 * f + u`` with ``f = (1 - eta)^T`` (``exact_factor``) or
``f = 1 - sum(u)``. It costs O(n) per tree per explained row and never forms an n x n matrix. Rows are
processed in blocks of ``block`` so each tree's leaf array is read once per block, and the block's vectors
are stored row-major by training row (``u[j, b]``) so the innermost loop runs over the block.

**Gradient contributions**: the leaf of tree ``t`` holding a training row is stored as a CSR slice
``members[leaf_ptr[g]:leaf_ptr[g + 1]]`` with per-entry coefficients ``coef`` (the row's share of that leaf
value), ``g = leaf_offsets[t] + leaf``; an explained row adds the slices of its leaves.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..utils import JIT_OPTIONS

__all__ = ["target_weight_rows", "gradient_contribution_rows", "pruned_top_k_rows", "reach_sets"]


@njit(**JIT_OPTIONS)
def target_weight_rows(query_leaves: np.ndarray, train_leaves: np.ndarray, n_leaves: np.ndarray, row_weight: np.ndarray,
                       leaf_scale: np.ndarray, init_share: np.ndarray, factor: float, exact_factor: bool,
                       out: np.ndarray, block: int) -> None:
    """Write the target weights of the rows of ``query_leaves`` into ``out`` (m, n).

    One pass over the training rows per tree: it applies tree ``t``'s update to ``u`` and, in the same pass,
    adds the updated ``u`` into the leaf sums of tree ``t - 1`` (the next step's ``sum_{i in l} u_i``).

    Parameters
    ----------
    query_leaves : int32 array (m, T)
    train_leaves : int32 array (T, n)
    n_leaves : int64 array (T,)
    row_weight : float64 array (n,)
    leaf_scale : float64 array (T, L) with ``L >= n_leaves.max()``
    init_share : float64 array (n,)
        ``a0``: the training rows' shares of the initial prediction (zeros for a constant initial prediction).
    factor : float
        ``(1 - eta)^T``, used when ``exact_factor``.
    exact_factor : bool
        Use ``factor`` (every tree's rows of weights sum to one: no L2 penalty) instead of ``1 - sum(u)``, for
        the explained rows whose leaves all hold training weight (``leaf_scale > 0``).
    out : float64 array (m, n), C-contiguous
    block : int
        Explained rows processed together.
    """
    m, n_trees = query_leaves.shape
    n = row_weight.shape[0]
    width = leaf_scale.shape[1]
    u = np.zeros((n, block))
    sums = np.zeros((width, block))  # leaf sums of u for the current tree, turned into its update E in place
    following = np.zeros((width, block))  # leaf sums of the updated u for the tree before it
    closed = np.zeros(block, dtype=np.bool_)  # the closed form (1 - eta)^T holds for this row
    for start in range(0, m, block):
        size = min(block, m - start)
        u[:, :] = 0.0
        sums[:, :] = 0.0  # u = 0 before the last tree
        closed[:] = exact_factor
        for t in range(n_trees - 1, -1, -1):
            leaves = train_leaves[t]
            for leaf in range(n_leaves[t]):
                scale = leaf_scale[t, leaf]
                for b in range(size):
                    sums[leaf, b] = -scale * sums[leaf, b]
            for b in range(size):
                own = query_leaves[start + b, t]
                sums[own, b] += leaf_scale[t, own]
                if leaf_scale[t, own] == 0.0:
                    closed[b] = False  # a leaf without training weight: p_t(x) does not sum to one
            if t > 0:
                previous = train_leaves[t - 1]
                for leaf in range(n_leaves[t - 1]):
                    for b in range(size):
                        following[leaf, b] = 0.0
                for j in range(n):
                    s = row_weight[j]
                    if s == 0.0:
                        continue  # u_j stays 0 and adds nothing to the sums
                    leaf = leaves[j]
                    before = previous[j]
                    for b in range(size):
                        value = u[j, b] + s * sums[leaf, b]
                        u[j, b] = value
                        following[before, b] += value
                sums, following = following, sums
            else:
                for j in range(n):
                    s = row_weight[j]
                    if s == 0.0:
                        continue
                    leaf = leaves[j]
                    for b in range(size):
                        u[j, b] += s * sums[leaf, b]
        for b in range(size):
            f = factor
            if not closed[b]:
                total = 0.0
                for j in range(n):
                    total += u[j, b]
                f = 1.0 - total
            row = out[start + b]
            for j in range(n):
                row[j] = init_share[j] * f + u[j, b]


@njit(**JIT_OPTIONS)
def gradient_contribution_rows(query_leaves: np.ndarray, tree_output: np.ndarray, leaf_offsets: np.ndarray,
                               leaf_ptr: np.ndarray, members: np.ndarray, coef: np.ndarray, out: np.ndarray) -> None:
    """Add, for each explained row, the coefficients of its leaves into ``out`` (m, n, K), zeroed first.

    Parameters
    ----------
    query_leaves : int32 array (m, T)
    tree_output : int64 array (T,)
        The margin (class) each tree adds to.
    leaf_offsets : int64 array (T,)
    leaf_ptr : int64 array (n_leaves_total + 1,)
    members : int32 array (n_entries,)
    coef : float64 array (n_entries,)
    out : float64 array (m, n, K), C-contiguous
    """
    m, n_trees = query_leaves.shape
    for r in range(m):
        row = out[r]
        row[:, :] = 0.0
        for t in range(n_trees):
            g = leaf_offsets[t] + query_leaves[r, t]
            k = tree_output[t]
            for p in range(leaf_ptr[g], leaf_ptr[g + 1]):
                row[members[p], k] += coef[p]


@njit(**JIT_OPTIONS)
def pruned_top_k_rows(query_leaves: np.ndarray, trees: np.ndarray, leaf_offsets: np.ndarray, leaf_ptr: np.ndarray,
                      members: np.ndarray, coef: np.ndarray, big: np.ndarray, leaf_bound: np.ndarray,
                      leaf_rows: np.ndarray, coef_rows: np.ndarray, out_index: np.ndarray,
                      out_value: np.ndarray) -> int:
    """The ``k`` largest contributions (in absolute value) to one margin of each explained row, pruned and exact.

    For explained row ``x``: ``partial`` scatters the leaves of ``x`` that are not ``big``, and ``B`` sums the
    ``leaf_bound`` (largest ``|coef|``) of its big leaves, so ``|c_j - partial_j| <= B`` for every training row.
    With ``a`` the ``k``-th largest ``|partial|``, a row with ``|partial_j| < a - 2B`` has ``|c_j| < a - B``,
    below ``k`` rows' ``|c| >= a - B``: it is not in the top ``k``. The other rows (candidates) get their exact
    value from their row of ``leaf_rows`` / ``coef_rows``, summed in tree order as the dense kernel sums it
    (so the values are bit-identical). Where ``a <= 3B`` or more than ``n / 8`` rows are candidates, the big
    leaves of largest bound are scattered until ``B`` halves, and the test repeats (with every leaf scattered it
    always passes). Returns the number of rows that needed such a step.

    Parameters
    ----------
    query_leaves : int32 array (m, T)
    trees : int64 array (T_k,)
        The trees of the ranked margin, in training order; column ``c`` of ``leaf_rows`` is tree ``trees[c]``.
    leaf_offsets, leaf_ptr, members, coef : arrays
        The CSR leaves of :func:`gradient_contribution_rows`.
    big : bool array (n_leaves_total,)
        Leaves left out of the scatter.
    leaf_bound : float64 array (n_leaves_total,)
        ``max |coef|`` over each leaf's members (0 for an empty leaf).
    leaf_rows : int32 array (n, T_k)
        ``train_leaves[trees].T``: each training row's leaves, one contiguous row per training row.
    coef_rows : float64 array (n, T_k)
        Each training row's share of its leaf in each tree (0 for rows left out of training).
    out_index : int64 array (m, k)
        The chosen training rows, ascending.
    out_value : float64 array (m, k)
    """
    m = query_leaves.shape[0]
    n, n_k = leaf_rows.shape
    k = out_index.shape[1]
    partial = np.zeros(n)
    size = np.zeros(n)
    held = np.empty(n_k, dtype=np.int64)  # the big leaves of the row (global leaf ids), not scattered yet
    held_bound = np.empty(n_k)
    fallbacks = 0
    for r in range(m):
        partial[:] = 0.0
        n_big = 0
        for c in range(n_k):
            t = trees[c]
            g = leaf_offsets[t] + query_leaves[r, t]
            if big[g]:
                held[n_big] = g
                held_bound[n_big] = leaf_bound[g]
                n_big += 1
            else:
                for p in range(leaf_ptr[g], leaf_ptr[g + 1]):
                    partial[members[p]] += coef[p]
        exact = n_big == 0  # every leaf scattered, in tree order: partial is the dense row
        order = np.argsort(-held_bound[:n_big])
        position = 0  # held leaves scattered so far, largest bound first
        fell_back = False
        while True:
            bound = 0.0
            for i in range(position, n_big):
                bound += held_bound[order[i]]
            for j in range(n):
                size[j] = abs(partial[j])
            kth = np.partition(size, n - k)[n - k]
            threshold = kth - 2.0 * bound - 1e-9 * (kth + bound)  # a margin over rounding in partial
            count = 0
            for j in range(n):
                if size[j] >= threshold:
                    count += 1
            if position == n_big or (kth > 3.0 * bound and count <= n // 8):
                break
            fell_back = True  # scatter the held leaves of largest bound until the bound halves
            target = bound / 2.0
            first = position
            while position < n_big and (bound > target or position == first):  # at least one leaf
                g = held[order[position]]
                bound -= held_bound[order[position]]
                for p in range(leaf_ptr[g], leaf_ptr[g + 1]):
                    partial[members[p]] += coef[p]
                position += 1
        if fell_back:
            fallbacks += 1
        _exact_top_k(size, threshold, count, partial if exact else None, query_leaves[r], trees, leaf_rows, coef_rows,
                     out_index[r], out_value[r])
    return fallbacks


@njit(**JIT_OPTIONS)
def _exact_top_k(size: np.ndarray, threshold: float, count: int, dense: np.ndarray | None, query: np.ndarray,
                 trees: np.ndarray, leaf_rows: np.ndarray, coef_rows: np.ndarray, out_index: np.ndarray,
                 out_value: np.ndarray) -> None:
    """The exact top ``k`` of one explained row among its ``count`` candidates (``size[j] >= threshold``).

    A candidate's value is its row's ``dense`` entry when every leaf was scattered (``dense`` is then the exact
    row), else the sum, in tree order, of its shares in the trees where it shares the explained row's leaf (as
    the dense kernel sums it: bit-identical). ``out_index`` gets the chosen training rows ascending, ``out_value``
    their values.
    """
    n, n_k = leaf_rows.shape
    k = out_index.shape[0]
    candidates = np.empty(count, dtype=np.int64)
    values = np.empty(count)
    i = 0
    for j in range(n):
        if size[j] >= threshold:
            candidates[i] = j
            i += 1
    for i in range(count):
        j = candidates[i]
        if dense is not None:
            values[i] = dense[j]
            continue
        value = 0.0
        own, shares = leaf_rows[j], coef_rows[j]
        for c in range(n_k):
            if own[c] == query[trees[c]]:
                value += shares[c]
        values[i] = value
    order = np.argsort(-np.abs(values), kind="mergesort")[:k]
    chosen = np.sort(candidates[order])
    for i in range(k):
        out_index[i] = chosen[i]
    position = 0
    for i in range(count):  # the values of the chosen rows, in ascending row order
        if position < k and candidates[i] == chosen[position]:
            out_value[position] = values[i]
            position += 1


@njit(**JIT_OPTIONS)
def reach_sets(query_leaves: np.ndarray, train_leaves: np.ndarray, n_leaves: np.ndarray,
               row_weight: np.ndarray) -> np.ndarray:
    """Training rows the backward recursion can reach from each explained row (bool (m, n)).

    ``R_T = {}``, then from the last tree to the first ``R_t = R_{t+1} + leaf_t(x) + every row sharing a
    tree-``t`` leaf with a row of ``R_{t+1}`` of positive weight`` (rows of weight 0 never carry weight). A row
    outside ``R_1`` gets ``u_j = 0`` exactly, so its target weight is ``a0_j * f``: see the docs.
    """
    m, n_trees = query_leaves.shape
    n = row_weight.shape[0]
    out = np.zeros((m, n), dtype=np.bool_)
    width = 1
    for t in range(n_trees):
        width = max(width, n_leaves[t])
    hit = np.zeros(width, dtype=np.bool_)
    for r in range(m):
        reached = out[r]
        for t in range(n_trees - 1, -1, -1):
            leaves = train_leaves[t]
            hit[:] = False
            hit[query_leaves[r, t]] = True
            for j in range(n):
                if reached[j] and row_weight[j] != 0.0:
                    hit[leaves[j]] = True
            for j in range(n):
                if hit[leaves[j]] and row_weight[j] != 0.0:
                    reached[j] = True
    return out
