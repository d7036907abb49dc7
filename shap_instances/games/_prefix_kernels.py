"""Numba kernels of permutation sampling, for every game: differences of prefix values and the scatter into
Shapley accumulators.

The callers (:mod:`shap_instances.games` and :mod:`shap_instances.approximators`) validated everything; these
functions only compute, on C-contiguous float64 arrays, and never allocate more than one unit's block.

*Accumulators.* A *unit* is ``per_unit`` consecutive permutations (1, or 2 for an antithetic pair); its
contribution block ``unit`` (n_players, n_outputs) holds the average over its permutations of each player's
marginal contribution ``v(prefix + i) - v(prefix)``. Every unit updates Welford's running ``mean`` and sum of
squared deviations ``m2`` in place (``count`` units so far), exactly as
``delta = unit - mean; mean += delta / count; m2 += delta * (unit - mean)``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..utils import JIT_OPTIONS
from ..utils.kernels import on_threads

__all__ = ["accumulate_prefix_units", "welford_blocks", "welford_update"]


@njit(**JIT_OPTIONS)
def welford_update(unit: np.ndarray, mean: np.ndarray, m2: np.ndarray, count: int) -> int:
    """Add one unit (n, d) to the running ``mean`` and ``m2`` (in place); return the new count."""
    count += 1
    n, d = unit.shape
    for i in range(n):
        for j in range(d):
            delta = unit[i, j] - mean[i, j]
            mean[i, j] += delta / count
            m2[i, j] += delta * (unit[i, j] - mean[i, j])
    return count


def welford_blocks(first: np.ndarray, rest: np.ndarray, used: int, mean: np.ndarray, m2: np.ndarray,
                   count: int, threads: int) -> int:
    """Add ``used`` units in order, ``first`` then ``rest[0], rest[1], ...`` (each (n, d)), to the running ``mean``
    and ``m2``; return the new count. The rows are split into ``threads`` slices
    (:func:`~shap_instances.utils.kernels.on_threads`), each adding every unit to its rows in unit order: the same
    operations on every entry as :func:`welford_update` unit by unit, so the same bits."""
    on_threads(lambda lo, hi: _welford_rows(first, rest, used, mean, m2, count, lo, hi), first.shape[0], threads)
    return count + used


@njit(**JIT_OPTIONS)
def _welford_rows(first, rest, used, mean, m2, count, lo, hi):
    """:func:`welford_blocks` on the rows ``lo <= i < hi``."""
    seen = count
    for b in range(used):
        block = first if b == 0 else rest[b - 1]
        seen = welford_update(block[lo:hi], mean[lo:hi], m2[lo:hi], seen)


@njit(**JIT_OPTIONS)
def accumulate_prefix_units(prefixes: np.ndarray, permutations: np.ndarray, per_unit: int, unit: np.ndarray,
                            mean: np.ndarray, m2: np.ndarray, count: int) -> int:
    """Differences of the prefix values, scattered to the players and accumulated, unit by unit.

    Parameters
    ----------
    prefixes : float64 (k, n + 1, d)
        ``prefixes[r, t]``: value of the first ``t`` players of permutation ``r``.
    permutations : intp (k, n)
    per_unit : int
        Permutations per unit (k is a multiple of it).
    unit : float64 (n, d)
        Work block (overwritten).
    mean, m2 : float64 (n, d)
        Welford state, updated in place.
    count : int
        Units accumulated so far.

    Returns
    -------
    int
        The new count.
    """
    k, n = permutations.shape
    d = prefixes.shape[2]
    share = 1.0 / per_unit
    for u in range(k // per_unit):
        unit[:, :] = 0.0
        for r in range(u * per_unit, (u + 1) * per_unit):
            for t in range(n):
                i = permutations[r, t]
                for j in range(d):
                    unit[i, j] += (prefixes[r, t + 1, j] - prefixes[r, t, j]) * share
        count = welford_update(unit, mean, m2, count)
    return count
