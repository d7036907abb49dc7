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
from ..utils.kernels import kth_smallest

__all__ = ["target_weight_rows", "gradient_contribution_rows", "pruned_top_k_rows", "maxscore_top_k_rows",
           "place_by_bound", "reach_sets"]


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
            _tree_update(sums, query_leaves[start:start + size, t], leaf_scale[t], n_leaves[t], closed)
            if t > 0:
                _step_back(u, sums, following, train_leaves[t], train_leaves[t - 1], n_leaves[t - 1], row_weight,
                           size)
                sums, following = following, sums
            else:
                for j in range(n):
                    s = row_weight[j]
                    if s == 0.0:
                        continue
                    leaf = train_leaves[0, j]
                    for b in range(size):
                        u[j, b] += s * sums[leaf, b]
        _write_target_weights(out[start:start + size], u, init_share, factor, closed)


@njit(**JIT_OPTIONS)
def _tree_update(sums: np.ndarray, own_leaves: np.ndarray, scales: np.ndarray, n_leaves: int,
                 closed: np.ndarray) -> None:
    """Turn one tree's leaf sums of ``u`` into its update ``E`` in place (one column per row of the block, whose
    leaves are ``own_leaves``); a row whose leaf holds no training weight loses the closed form."""
    size = own_leaves.shape[0]
    for leaf in range(n_leaves):
        scale = scales[leaf]
        for b in range(size):
            sums[leaf, b] = -scale * sums[leaf, b]
    for b in range(size):
        own = own_leaves[b]
        sums[own, b] += scales[own]
        if scales[own] == 0.0:
            closed[b] = False  # a leaf without training weight: p_t(x) does not sum to one


@njit(**JIT_OPTIONS)
def _step_back(u: np.ndarray, sums: np.ndarray, following: np.ndarray, leaves: np.ndarray, previous: np.ndarray,
               n_previous: int, row_weight: np.ndarray, size: int) -> None:
    """Apply one tree's update to ``u`` and add the updated ``u`` into the leaf sums of the tree before it."""
    for leaf in range(n_previous):
        for b in range(size):
            following[leaf, b] = 0.0
    for j in range(row_weight.shape[0]):
        s = row_weight[j]
        if s == 0.0:
            continue  # u_j stays 0 and adds nothing to the sums
        leaf = leaves[j]
        before = previous[j]
        for b in range(size):
            value = u[j, b] + s * sums[leaf, b]
            u[j, b] = value
            following[before, b] += value


@njit(**JIT_OPTIONS)
def _write_target_weights(out: np.ndarray, u: np.ndarray, init_share: np.ndarray, factor: float,
                          closed: np.ndarray) -> None:
    """``w = a0 * f + u`` for the rows of a block, ``f`` the closed form or ``1 - sum(u)``."""
    n = u.shape[0]
    for b in range(out.shape[0]):
        f = factor
        if not closed[b]:
            total = 0.0
            for j in range(n):
                total += u[j, b]
            f = 1.0 - total
        row = out[b]
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
                _scatter(partial, g, leaf_ptr, members, coef)
        exact = n_big == 0  # every leaf scattered, in tree order: partial is the dense row
        threshold, fell_back = _pruning_threshold(partial, size, held[:n_big], held_bound[:n_big], k, leaf_ptr,
                                                  members, coef)
        if fell_back:
            fallbacks += 1
        _exact_top_k(np.flatnonzero(size >= threshold), partial if exact else None, query_leaves[r], trees, leaf_rows,
                     coef_rows, out_index[r], out_value[r])
    return fallbacks


@njit(**JIT_OPTIONS)
def _scatter(partial: np.ndarray, g: int, leaf_ptr: np.ndarray, members: np.ndarray, coef: np.ndarray) -> None:
    """Add leaf ``g``'s coefficients into ``partial`` at its members."""
    for p in range(leaf_ptr[g], leaf_ptr[g + 1]):
        partial[members[p]] += coef[p]


@njit(**JIT_OPTIONS)
def _pruning_threshold(partial: np.ndarray, size: np.ndarray, held: np.ndarray, held_bound: np.ndarray, k: int,
                       leaf_ptr: np.ndarray, members: np.ndarray, coef: np.ndarray) -> tuple[float, bool]:
    """The threshold on ``|partial|`` (written into ``size``) above which a training row may be in the top ``k``,
    and whether held leaves had to be scattered (largest bound first, until the bound halves) to reach it."""
    n = partial.shape[0]
    n_big = held.shape[0]
    order = np.argsort(-held_bound)
    position = 0  # held leaves scattered so far, largest bound first
    fell_back = False
    while True:
        bound = 0.0
        for i in range(position, n_big):
            bound += held_bound[order[i]]
        for j in range(n):
            size[j] = abs(partial[j])
        kth = kth_smallest(size, n - k)
        threshold = kth - 2.0 * bound - 1e-9 * (kth + bound)  # a margin over rounding in partial
        count = 0
        for j in range(n):
            if size[j] >= threshold:
                count += 1
        if position == n_big or (kth > 3.0 * bound and count <= n // 8):
            return threshold, fell_back
        fell_back = True  # scatter the held leaves of largest bound until the bound halves
        target = bound / 2.0
        first = position
        while position < n_big and (bound > target or position == first):  # at least one leaf
            bound -= held_bound[order[position]]
            _scatter(partial, held[order[position]], leaf_ptr, members, coef)
            position += 1


@njit(**JIT_OPTIONS)
def _exact_top_k(candidates: np.ndarray, dense: np.ndarray | None, query: np.ndarray, trees: np.ndarray,
                 leaf_rows: np.ndarray, coef_rows: np.ndarray, out_index: np.ndarray, out_value: np.ndarray) -> None:
    """The exact top ``k`` of one explained row among its ``candidates`` (training rows, ascending).

    A candidate's value is its row's ``dense`` entry when every leaf was scattered (``dense`` is then the exact
    row), else the sum, in tree order, of its shares in the trees where it shares the explained row's leaf (as
    the dense kernel sums it: bit-identical). ``out_index`` gets the chosen training rows ascending, ``out_value``
    their values.
    """
    k = out_index.shape[0]
    count = candidates.shape[0]
    values = np.empty(count)
    for i in range(count):
        j = candidates[i]
        values[i] = dense[j] if dense is not None else _exact_value(j, query, trees, leaf_rows, coef_rows)
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
def maxscore_top_k_rows(query_leaves: np.ndarray, trees: np.ndarray, leaf_offsets: np.ndarray, leaf_ptr: np.ndarray,
                        members: np.ndarray, coef: np.ndarray, entry_bound: np.ndarray, row_bound: np.ndarray,
                        original: np.ndarray, leaf_bound: np.ndarray, leaf_rows: np.ndarray, coef_rows: np.ndarray,
                        out_index: np.ndarray, out_value: np.ndarray) -> int:
    """The ``k`` largest contributions (in absolute value) to one margin of each explained row, by MaxScore.

    ``c_j = sum_t [leaf_t(j) = leaf_t(x)] coef_tj`` is a sparse inner product with one term per tree, and
    ``|coef_tj| <= b_t``, the ``leaf_bound`` of ``x``'s leaf in tree ``t``. The leaves of ``x`` are scattered
    into ``partial`` in decreasing order of ``b_t`` per member; ``R`` is the sum of the bounds not scattered yet,
    so a row never touched has ``|c_j| <= R`` and a touched one ``|c_j| <= |partial_j| + min(R, A_j - seen_j)``
    (``A_j``, ``row_bound``, is the row's total ``|coef|``, ``seen_j`` the part scattered). ``theta`` is a lower
    bound of the ``k``-th largest ``|c|``: the ``k``-th largest exact ``|c|`` among the previous explained row's
    top ``k`` (explained rows in a locality order share most of them) and, after leaves 1, 2, 4, 8, ..., among
    the touched rows of largest ``|partial|`` (at most :data:`_PROBE`). Each leaf's ``members`` are sorted by
    decreasing ``A_j``, so its scatter stops at the first row with ``A_j < theta``. Once ``R < theta`` no
    untouched row can reach ``theta``; the leaves left are scattered into the touched rows only, until
    ``R < theta / 2`` (:data:`_TIGHTEN`), and the touched rows whose bound still reaches ``theta`` (less a margin
    over rounding) hold the whole top ``k``, ties included. They get their exact values in tree order from
    ``leaf_rows`` / ``coef_rows`` (:func:`_exact_top_k`: bit-identical to the dense kernel). The cost per row is
    the part of its leaves scattered, not ``n``. Where ``theta`` is 0 (fewer than ``k`` rows with a non-zero
    value), every row is a candidate. Returns the number of rows that needed that O(n) step.

    ``partial`` and ``seen`` are float32, side by side (8 bytes a row, so that two threads' arrays stay in the
    cache at a million rows); the bounds allow for their rounding (:func:`_rounding_slack`). The rows are
    renumbered for locality (rows sharing leaves near each other): ``members`` holds the new numbers,
    ``original`` maps them back.

    Parameters are those of :func:`pruned_top_k_rows` without ``big``, and

    members, coef, entry_bound : int32, float32, float32 arrays (one entry per row and leaf)
        Each leaf's rows (new numbers), their share, and their ``A_j`` rounded up, by decreasing ``A_j``.
    row_bound : float64 array (n,)
        ``A_j`` by new row number.
    original : int64 array (n,)
        The training row of each new row number.
    """
    m = query_leaves.shape[0]
    n, n_k = leaf_rows.shape
    k = out_index.shape[1]
    state = np.zeros((n, 2), dtype=np.float32)  # per new row number: partial, seen (seen > 0: touched)
    touched = np.empty(n + 1, dtype=np.int64)  # + 1: the branch-free append writes one slot ahead
    leaf = np.empty(n_k, dtype=np.int64)
    bound = np.empty(n_k)
    slack = _rounding_slack(n_k)
    fallbacks = 0
    for r in range(m):
        order, total = _leaves_of(query_leaves[r], trees, leaf_offsets, leaf_ptr, leaf_bound, leaf, bound)
        margin = 1e-9 * total
        theta = _hinted_threshold(out_index[r - 1], query_leaves[r], trees, leaf_rows, coef_rows) if r else -1.0
        rest = total
        n_touched = 0
        position = 0
        while position < n_k and (theta < 0.0 or rest >= _TIGHTEN * theta):
            g = leaf[order[position]]
            end = _first_below(entry_bound, leaf_ptr[g], leaf_ptr[g + 1], theta - margin)
            if theta < 0.0 or rest >= theta - margin:  # rows not touched yet may still reach theta
                n_touched = _scatter_adding(leaf_ptr[g], end, members, coef, state, touched, n_touched)
            else:
                _scatter_touched(leaf_ptr[g], end, members, coef, state)
            rest -= bound[order[position]]
            position += 1
            if n_touched >= k and (theta < 0.0 or position & (position - 1) == 0):  # after leaves 1, 2, 4, 8, ...
                theta = max(theta, _probe_threshold(state, touched[:n_touched], original, k, query_leaves[r],
                                                    trees, leaf_rows, coef_rows))
        if theta <= margin:  # untouched rows may tie at 0 with the k-th value: every row is a candidate
            fallbacks += 1
            candidates = np.arange(n)
        else:
            candidates = _candidates(state, touched[:n_touched], row_bound, original, rest, theta - margin, slack)
        for i in range(n_touched):
            state[touched[i]] = 0.0
        _exact_top_k(candidates, None, query_leaves[r], trees, leaf_rows, coef_rows, out_index[r], out_value[r])
    return fallbacks


#: MaxScore goes on scattering into the rows already touched until the bound left is below this share of theta:
#: it tightens ``|partial_j| + min(R, unseen mass)``, leaving tens of candidates where it left thousands
_TIGHTEN = 0.5

#: how many touched rows (those of largest ``|partial|``) get exact values to set MaxScore's threshold
_PROBE = 64


@njit(**JIT_OPTIONS)
def _leaves_of(query: np.ndarray, trees: np.ndarray, leaf_offsets: np.ndarray, leaf_ptr: np.ndarray,
               leaf_bound: np.ndarray, leaf: np.ndarray, bound: np.ndarray) -> tuple[np.ndarray, float]:
    """Fill ``leaf`` / ``bound`` with the explained row's leaf and its bound ``b_t`` in each tree; return the
    scatter order (largest bound per member first: each leaf cuts the most of ``R`` for its cost) and the
    bounds' sum."""
    n_k = trees.shape[0]
    key = np.empty(n_k)
    total = 0.0
    for c in range(n_k):
        leaf[c] = leaf_offsets[trees[c]] + query[trees[c]]
        bound[c] = leaf_bound[leaf[c]]
        key[c] = -bound[c] / max(1, leaf_ptr[leaf[c] + 1] - leaf_ptr[leaf[c]])
        total += bound[c]
    return np.argsort(key), total


@njit(**JIT_OPTIONS)
def _hinted_threshold(hint: np.ndarray, query: np.ndarray, trees: np.ndarray, leaf_rows: np.ndarray,
                      coef_rows: np.ndarray) -> float:
    """The ``k``-th largest exact ``|c_j|`` of the ``k`` distinct rows ``hint`` (-1 where it is 0: no bound)."""
    k = hint.shape[0]
    exact = np.empty(k)
    for i in range(k):
        exact[i] = abs(_exact_value(hint[i], query, trees, leaf_rows, coef_rows))
    theta = np.min(exact)
    return theta if theta > 0.0 else -1.0


@njit(**JIT_OPTIONS)
def _first_below(values: np.ndarray, lo: int, hi: int, limit: float) -> int:
    """The first position in ``[lo, hi)`` of the decreasing ``values`` below ``limit`` (``hi`` if none)."""
    while lo < hi:
        middle = (lo + hi) // 2
        if values[middle] < limit:
            hi = middle
        else:
            lo = middle + 1
    return lo


@njit(**JIT_OPTIONS)
def _scatter_adding(start: int, end: int, members: np.ndarray, coef: np.ndarray, state: np.ndarray,
                    touched: np.ndarray, n_touched: int) -> int:
    """Add entries ``start:end`` to ``state``, appending rows touched for the first time; return their count.

    Branch-free: whether a row is new depends on a load, which a branch would mispredict half the time."""
    for p in range(start, end):
        j = members[p]
        share = coef[p]
        seen = state[j, 1]
        touched[n_touched] = j
        n_touched += (seen == 0.0) & (share != 0.0)
        state[j, 0] += share
        state[j, 1] = seen + abs(share)
    return n_touched


@njit(**JIT_OPTIONS)
def _scatter_touched(start: int, end: int, members: np.ndarray, coef: np.ndarray, state: np.ndarray) -> None:
    """Add entries ``start:end`` to the rows of ``state`` already touched (branch-free)."""
    for p in range(start, end):
        j = members[p]
        share = coef[p]
        seen = state[j, 1]
        keep = np.float32(seen != 0.0)
        state[j, 0] += keep * share
        state[j, 1] = seen + keep * abs(share)


@njit(**JIT_OPTIONS)
def _rounding_slack(n_k: int) -> float:
    """A bound, relative to ``A_j``, of the rounding of ``partial_j`` and of ``seen_j`` together: each is a
    float32 sum of at most ``n_k`` float32 shares, so each is within ``(n_k + 1) u A_j`` of its exact value
    (``u = 2^-24``); this doubles that."""
    return 4.0 * (n_k + 1) * 2.0 ** -24


@njit(**JIT_OPTIONS)
def _candidates(state: np.ndarray, touched: np.ndarray, row_bound: np.ndarray, original: np.ndarray, rest: float,
                limit: float, slack: float) -> np.ndarray:
    """The training rows (ascending) of the touched rows whose bound reaches ``limit``."""
    chosen = np.empty(touched.shape[0], dtype=np.int64)
    count = 0
    for j in touched:
        a = row_bound[j]
        if abs(state[j, 0]) + min(rest, a - state[j, 1]) + slack * a >= limit:
            chosen[count] = original[j]
            count += 1
    return np.sort(chosen[:count])


@njit(**JIT_OPTIONS)
def _probe_threshold(state: np.ndarray, touched: np.ndarray, original: np.ndarray, k: int, query: np.ndarray,
                     trees: np.ndarray, leaf_rows: np.ndarray, coef_rows: np.ndarray) -> float:
    """The ``k``-th largest exact ``|c_j|`` among the (at most ``_PROBE``) touched rows of largest ``|partial|``."""
    n_touched = touched.shape[0]
    size = np.empty(n_touched)
    for i in range(n_touched):
        size[i] = abs(state[touched[i], 0])
    n_probe = max(k, min(_PROBE, n_touched))
    cut = kth_smallest(size, n_touched - n_probe)  # O(n_touched), no sort
    probe = np.empty(n_probe, dtype=np.int64)
    count = 0
    for i in range(n_touched):
        if count < n_probe and size[i] >= cut:
            probe[count] = original[touched[i]]
            count += 1
    exact = np.empty(probe.shape[0])
    for i in range(probe.shape[0]):
        exact[i] = abs(_exact_value(probe[i], query, trees, leaf_rows, coef_rows))
    return np.sort(exact)[probe.shape[0] - k]


@njit(**JIT_OPTIONS)
def place_by_bound(first: int, last: int, leaf_offsets: np.ndarray, n_leaves: np.ndarray, leaf_ptr: np.ndarray,
                   members: np.ndarray, coef: np.ndarray, rank: np.ndarray, new_by_rank: np.ndarray,
                   bound_by_rank: np.ndarray, out_members: np.ndarray, out_coef: np.ndarray,
                   out_bound: np.ndarray) -> None:
    """Write the leaves of trees ``first:last`` in MaxScore's order: each leaf's rows by increasing ``rank``.

    ``rank`` orders the training rows (by decreasing ``A_j``, ties by row), ``new_by_rank`` / ``bound_by_rank``
    give the new number and the rounded-up ``A_j`` of the row of each rank. A bucket pass, no sort: each tree's
    entries are dropped at their row's rank, then read back in rank order and appended to their leaf's slice,
    so the cost is O(n) per tree, with the entries read in order.
    """
    n = rank.shape[0]
    slot_leaf = np.full(n, -1, dtype=np.int32)
    slot_coef = np.empty(n, dtype=np.float32)
    fill = np.empty(np.max(n_leaves[first:last]) if last > first else 0, dtype=np.int64)
    for t in range(first, last):
        g = leaf_offsets[t]
        for leaf in range(n_leaves[t]):
            fill[leaf] = leaf_ptr[g + leaf]
            for p in range(leaf_ptr[g + leaf], leaf_ptr[g + leaf + 1]):
                at = rank[members[p]]
                slot_leaf[at] = leaf
                slot_coef[at] = coef[p]
        for at in range(n):
            leaf = slot_leaf[at]
            if leaf < 0:  # a row left out of training
                continue
            slot_leaf[at] = -1
            q = fill[leaf]
            fill[leaf] = q + 1
            out_members[q] = new_by_rank[at]
            out_coef[q] = slot_coef[at]
            out_bound[q] = bound_by_rank[at]


@njit(**JIT_OPTIONS)
def _exact_value(j: int, query: np.ndarray, trees: np.ndarray, leaf_rows: np.ndarray, coef_rows: np.ndarray) -> float:
    """Training row ``j``'s contribution, summed in tree order as the dense kernel sums it (bit-identical)."""
    value = 0.0
    own, shares = leaf_rows[j], coef_rows[j]
    for c in range(trees.shape[0]):
        if own[c] == query[trees[c]]:
            value += shares[c]
    return value


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
