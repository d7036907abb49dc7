"""Numba kernels of the fixed-structure forest game: prefix values along permutations and per-leaf Shapley values.

The caller (:mod:`shap_instances.forest._fast_forest`, whose docstring derives the maths) validated everything;
these functions only compute, on C-contiguous arrays.

Layout. The nodes of all ``T`` trees are numbered globally (tree ``t``'s node ``k`` is ``offset_t + k``).
``leaf[i, t]`` is the global leaf of training row ``i`` in tree ``t`` and ``mass[i, t]`` its in-bag
multiplicity there (0: out of bag, the row does not enter that tree). The explained rows in global leaf ``g``
are ``eval_rows[eval_ptr[g]:eval_ptr[g + 1]]``; the in-bag training rows of leaf ``g`` are
``members[member_ptr[g]:member_ptr[g + 1]]``. ``fallback[j]`` is the prediction a tree gives explained row
``j`` when its leaf holds no row of the coalition (the empty coalition's prediction).
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from ..utils import INLINED, JIT_OPTIONS

__all__ = ["forest_leaf_shapley", "forest_prefix_values", "forest_units", "leaf_mean_shapley"]


@njit(**INLINED)
def _join(leaf_mass, leaf_sum, g, c, target):
    """Add a row of multiplicity ``c`` and target ``target`` to leaf ``g``: ``(was_empty, old mean, new mean)``."""
    was_empty = leaf_mass[g] == 0.0
    old = 0.0 if was_empty else leaf_sum[g] / leaf_mass[g]
    leaf_mass[g] += c
    leaf_sum[g] += c * target
    return was_empty, old, leaf_sum[g] / leaf_mass[g]


@njit(**JIT_OPTIONS)
def _walk(leaf, mass, y, eval_ptr, eval_rows, fallback, y_eval, weights, aggregate, perm, leaf_mass, leaf_sum,
          pred, current, out, row):
    """Prefix values of one permutation into ``out[row]``: adding a row moves one leaf mean in each tree."""
    n, n_trees = leaf.shape
    d = out.shape[2]
    leaf_mass[:] = 0.0
    leaf_sum[:] = 0.0
    _start_values(fallback, y_eval, weights, aggregate, pred, current)
    for k in range(d):
        out[row, 0, k] = current[k]
    share = 1.0 / n_trees
    for step in range(n):
        _add_player(leaf, mass, y, eval_ptr, eval_rows, fallback, weights, aggregate, perm[step], leaf_mass, leaf_sum,
                    pred, current, share)
        if aggregate:
            for k in range(d):
                out[row, step + 1, k] = current[k]
        else:
            for j in range(pred.shape[0]):
                out[row, step + 1, j] = pred[j] - y_eval[j]


@njit(**INLINED)
def _start_values(fallback, y_eval, weights, aggregate, pred, current):
    """The empty prefix: every prediction the fallback, ``current`` its residuals (or their weighted sums)."""
    m = pred.shape[0]
    d = current.shape[0]
    for j in range(m):
        pred[j] = fallback[j]
    for k in range(d):
        current[k] = 0.0
    if aggregate:
        for j in range(m):
            for k in range(d):
                current[k] += weights[j, k] * (fallback[j] - y_eval[j])
    else:
        for j in range(m):
            current[j] = fallback[j] - y_eval[j]


@njit(**INLINED)
def _add_player(leaf, mass, y, eval_ptr, eval_rows, fallback, weights, aggregate, i, leaf_mass, leaf_sum, pred,
                current, share):
    """Training row ``i`` joins the prefix: in each tree that holds it in bag, its leaf's mean moves, and so do the
    predictions of the explained rows in that leaf (and ``current``, when ``aggregate``)."""
    d = current.shape[0]
    for t in range(leaf.shape[1]):
        c = mass[i, t]
        if c == 0.0:
            continue
        g = leaf[i, t]
        was_empty, old, new = _join(leaf_mass, leaf_sum, g, c, y[i])
        for p in range(eval_ptr[g], eval_ptr[g + 1]):
            j = eval_rows[p]
            delta = (new - (fallback[j] if was_empty else old)) * share
            pred[j] += delta
            if aggregate:
                for k in range(d):
                    current[k] += weights[j, k] * delta


@njit(parallel=True, **JIT_OPTIONS)
def forest_prefix_values(leaf: np.ndarray, mass: np.ndarray, y: np.ndarray, eval_ptr: np.ndarray,
                         eval_rows: np.ndarray, fallback: np.ndarray, y_eval: np.ndarray, weights: np.ndarray,
                         aggregate: bool, n_nodes: int, permutations: np.ndarray, out: np.ndarray) -> None:
    """Values of every prefix of each permutation (threads over permutations; each walk is independent).

    Parameters
    ----------
    leaf : int64 (n, T)
    mass : float64 (n, T)
    y : float64 (n,)
    eval_ptr, eval_rows : int64 (n_nodes + 1,), int64
    fallback, y_eval : float64 (m,)
    weights : float64 (m, K)
        Used when ``aggregate``: the outputs are ``weights^T residuals``.
    aggregate : bool
    n_nodes : int
        Global nodes of the forest.
    permutations : intp (k, n)
    out : float64 (k, n + 1, d)
        ``out[r, t]``: the value of the first ``t`` rows of permutation ``r`` (d = m, or K when aggregated).
    """
    k = permutations.shape[0]
    m = y_eval.shape[0]
    d = out.shape[2]
    for r in prange(k):
        leaf_mass = np.zeros(n_nodes)
        leaf_sum = np.zeros(n_nodes)
        pred = np.empty(m)
        current = np.empty(d)
        _walk(leaf, mass, y, eval_ptr, eval_rows, fallback, y_eval, weights, aggregate, permutations[r],
              leaf_mass, leaf_sum, pred, current, out, r)


@njit(**JIT_OPTIONS)
def leaf_mean_shapley(c: np.ndarray, y: np.ndarray, out: np.ndarray) -> None:
    """Shapley values of the weighted-mean game ``u(A) = sum_A c y / sum_A c`` (``u(empty) = 0``) into ``out``.

    ``c`` holds positive integer multiplicities. For each player ``i`` a dynamic programme over the other players
    counts the coalitions ``A`` of each size ``s`` and mass ``C`` (``N[s, C]``) and sums their ``sum_A c y``
    (``Y[s, C]``); then ``phi_i = y_i / m + sum_{s >= 1, C} w_s c_i (N y_i - Y / C) / (C + c_i)``, with
    ``w_s = s! (m - 1 - s)! / m!``. O(m^4 C) for ``m`` players of mean multiplicity ``C`` (for each member, the
    others' sizes and masses: measured growth m^3.9 per leaf, docs/benchmarks.md); equal multiplicities
    take the O(m) closed form of :class:`~shap_instances.linear.MeanPath` instead.
    """
    m = c.shape[0]
    if m == 1:
        out[0] = y[0]
        return
    if _all_equal(c):
        _equal_mass_shapley(y, out)
        return
    weight = np.empty(m)  # w_s = 1 / (m * binom(m - 1, s))
    weight[0] = 1.0 / m
    for s in range(1, m):
        weight[s] = weight[s - 1] * s / (m - s)
    mass_total = int(c.sum())
    counts = np.empty((m, mass_total + 1))
    sums = np.empty((m, mass_total + 1))
    for i in range(m):
        _count_coalitions(c, y, i, counts, sums)
        out[i] = _member_value(c, y, i, weight, counts, sums)


@njit(**INLINED)
def _all_equal(c):
    """Whether every multiplicity equals the first."""
    equal = True
    for i in range(1, c.shape[0]):
        if c[i] != c[0]:
            equal = False
    return equal


@njit(**INLINED)
def _equal_mass_shapley(y, out):
    """The closed form of the plain-mean game (equal multiplicities), ``m >= 2`` players."""
    m = y.shape[0]
    harmonic = 0.0
    for s in range(1, m + 1):
        harmonic += 1.0 / s
    total = y.sum()
    for i in range(m):
        others = (total - y[i]) / (m - 1)
        out[i] = (y[i] + (harmonic - 1.0) * (y[i] - others)) / m


@njit(**INLINED)
def _count_coalitions(c, y, i, counts, sums):
    """``counts[s, C]``: coalitions of the players other than ``i`` of size ``s`` and mass ``C``; ``sums[s, C]``:
    the sum of their ``sum_A c y`` (a knapsack programme over the others)."""
    m = c.shape[0]
    mass_total = counts.shape[1] - 1
    counts[:, :] = 0.0
    sums[:, :] = 0.0
    counts[0, 0] = 1.0
    size = 0
    for other in range(m):
        if other == i:
            continue
        cl = int(c[other])
        for s in range(size, -1, -1):
            for C in range(mass_total - cl, -1, -1):
                nc = counts[s, C]
                if nc != 0.0:
                    counts[s + 1, C + cl] += nc
                    sums[s + 1, C + cl] += sums[s, C] + c[other] * y[other] * nc
        size += 1


@njit(**INLINED)
def _member_value(c, y, i, weight, counts, sums):
    """``phi_i`` from the coalition counts and sums of the other players (:func:`_count_coalitions`)."""
    phi = weight[0] * y[i]
    for s in range(1, c.shape[0]):
        for C in range(1, counts.shape[1]):
            if counts[s, C] != 0.0:
                phi += weight[s] * c[i] * (counts[s, C] * y[i] - sums[s, C] / C) / (C + c[i])
    return phi


@njit(**JIT_OPTIONS)
def forest_leaf_shapley(member_ptr: np.ndarray, members: np.ndarray, member_mass: np.ndarray, y: np.ndarray,
                        eval_ptr: np.ndarray, eval_rows: np.ndarray, fallback: np.ndarray, weights: np.ndarray,
                        aggregate: bool, n_trees: int, out: np.ndarray) -> None:
    """Exact Shapley values of the fixed-structure forest game, summed leaf by leaf into ``out`` (d, n), zeroed.

    Each leaf ``g`` with ``M`` in-bag members contributes, for each explained row ``j`` in it and member ``i``,
    ``(phi_i(u_g) - fallback[j] / M) / T`` (see :mod:`shap_instances.forest._fast_forest`); an aggregated game
    adds ``weights[j, k]`` times that to output ``k``.
    """
    n_nodes = member_ptr.shape[0] - 1
    d = out.shape[0]
    for g in range(n_nodes):
        start, stop = member_ptr[g], member_ptr[g + 1]
        size = stop - start
        if size == 0 or eval_ptr[g] == eval_ptr[g + 1]:
            continue
        rows = members[start:stop]
        phi = np.empty(size)
        leaf_mean_shapley(member_mass[start:stop], y[rows], phi)
        for p in range(eval_ptr[g], eval_ptr[g + 1]):
            j = eval_rows[p]
            for q in range(size):
                value = (phi[q] - fallback[j] / size) / n_trees
                if aggregate:
                    for k in range(d):
                        out[k, rows[q]] += weights[j, k] * value
                else:
                    out[j, rows[q]] += value


@njit(**INLINED)
def _merge_batch(total, square, units, mean, m2, count):
    """Chan's merge of a batch's sums (``total``, ``square`` of ``units`` units) into Welford's ``mean``, ``m2``."""
    new = count + units
    if units == 0:
        return count
    for i in range(mean.shape[0]):
        for j in range(mean.shape[1]):
            batch_mean = total[i, j] / units
            delta = batch_mean - mean[i, j]
            mean[i, j] += delta * units / new
            spread = max(square[i, j] - total[i, j] * batch_mean, 0.0)  # >= 0 but for rounding
            m2[i, j] += spread + delta * delta * count * units / new
    return new


@njit(**JIT_OPTIONS)
def forest_units(leaf_t: np.ndarray, mass_t: np.ndarray, y: np.ndarray, eval_ptr: np.ndarray, eval_rows: np.ndarray,
                 fallback: np.ndarray, n_nodes: int, permutations: np.ndarray, per_unit: int, unit: np.ndarray,
                 mean: np.ndarray, m2: np.ndarray, count: int, touched: np.ndarray) -> int:
    """Marginal contributions along a batch of permutations, accumulated sparsely, then merged into ``mean``, ``m2``.

    ``leaf_t``, ``mass_t`` are ``leaf``, ``mass`` transposed (T, n). A row joining a prefix moves only the explained
    rows in its leaves, and the moves of different trees add up, so the kernel walks each permutation tree by tree
    (one tree's leaf sums stay in cache) and scatters each move into the unit block ``unit`` (n, m), recording the
    touched pairs in ``touched`` (2, capacity; a pair may repeat); after each unit it adds the touched entries to the
    batch's sum and sum of squares and zeroes them again. The batch's mean and sum of squared deviations are merged
    into the running ones once per batch (Chan, Golub and LeVeque's pairwise rule), not once per unit:
    O(touches) per permutation plus O(n m) per batch. Returns the new count of units.
    """
    n_trees, n = leaf_t.shape
    leaf_mass = np.zeros(n_nodes)
    leaf_sum = np.zeros(n_nodes)
    total = np.zeros(unit.shape)
    square = np.zeros(unit.shape)
    share = 1.0 / n_trees
    units = permutations.shape[0] // per_unit
    unit[:, :] = 0.0  # the work block arrives overwritten; kept at zero between units from here on
    for u in range(units):
        used = 0
        for r in range(u * per_unit, (u + 1) * per_unit):
            leaf_mass[:] = 0.0
            leaf_sum[:] = 0.0
            for t in range(n_trees):
                for step in range(n):
                    i = permutations[r, step]
                    c = mass_t[t, i]
                    if c == 0.0:
                        continue
                    g = leaf_t[t, i]
                    was_empty, old, new = _join(leaf_mass, leaf_sum, g, c, y[i])
                    for p in range(eval_ptr[g], eval_ptr[g + 1]):
                        j = eval_rows[p]
                        unit[i, j] += (new - (fallback[j] if was_empty else old)) * share / per_unit
                        touched[0, used] = i
                        touched[1, used] = j
                        used += 1
        for q in range(used):
            i, j = touched[0, q], touched[1, q]
            value = unit[i, j]
            total[i, j] += value
            square[i, j] += value * value
            unit[i, j] = 0.0
    return _merge_batch(total, square, units, mean, m2, count)
