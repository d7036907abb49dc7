"""Numba kernels of Sparse Isotonic Shapley Regression.

Coalitions are int64 bit codes (bit j set = player j present), so the incidence matrix Z (2^p x p) is
never built: ``(Z gamma)_c`` and ``(Z^T r)_j`` are computed from the bits, a chunk of up to 10 bits at a time
(one table look-up or one bin per chunk: O(p / 10) work per coalition instead of O(p)), in whatever order
the coalitions come (SISR keeps them sorted by payoff).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..utils import JIT_OPTIONS

__all__ = ["weighted_pava", "coalition_sums", "coalition_sums_into", "transposed_sums", "gradient_and_loss",
           "support_normal_equations", "shapley_from_codes", "subset_sum_tables", "isotonic_by_groups",
           "weighted_squares", "secular_bisection"]


@njit(**JIT_OPTIONS)
def _pava_in_place(level, weight, first, lo, hi):
    """Stack-based weighted PAVA of ``level[lo:hi]`` (weights ``weight[lo:hi]``), in place.

    On return blocks ``b = lo .. lo + n - 1`` hold the pooled levels and weights, and ``first[b]`` the index of
    each block's first entry; returns n. The stack never overtakes the entry being read, so it lives in the
    input arrays and needs no memory of its own.
    """
    top = lo - 1
    for i in range(lo, hi):
        y, w = level[i], weight[i]
        top += 1
        level[top], weight[top], first[top] = y, w, i
        while top > lo and level[top - 1] >= level[top]:
            total = weight[top - 1] + weight[top]
            if total > 0:
                level[top - 1] = (weight[top - 1] * level[top - 1] + weight[top] * level[top]) / total
            else:
                level[top - 1] = 0.5 * (level[top - 1] + level[top])
            weight[top - 1] = total
            top -= 1
    return top + 1 - lo


@njit(**JIT_OPTIONS)
def weighted_pava(y: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Weighted isotonic (non-decreasing) regression of ``y`` in the given order, stack-based PAVA."""
    n = y.shape[0]
    level, weight, first = y.copy(), w.copy(), np.empty(n, dtype=np.int64)
    n_blocks = _pava_in_place(level, weight, first, 0, n)
    fit = np.empty(n)
    for b in range(n_blocks):
        end = first[b + 1] if b + 1 < n_blocks else n
        fit[first[b]:end] = level[b]
    return fit


#: Bits per chunk of a coalition code at most: a chunk's table of 2^10 subset sums (8 KiB) stays in L1 cache.
MAX_CHUNK_BITS = 10


@njit(**JIT_OPTIONS)
def _chunk_bits(n_players):
    """Bits per chunk: the codes are cut into ceil(p / 10) chunks of equal width (the last may be narrower)."""
    n_chunks = max(1, (n_players + MAX_CHUNK_BITS - 1) // MAX_CHUNK_BITS)
    return (n_players + n_chunks - 1) // n_chunks, n_chunks


@njit(**JIT_OPTIONS)
def subset_sum_tables(gamma: np.ndarray) -> np.ndarray:
    """``tables[k, x] = sum of gamma_j`` over the bits set in ``x`` of chunk k (players ``k * bits + b``).

    Built by doubling (``table[x + 2^b] = table[x] + gamma_b``), so each entry adds its players in increasing
    order; ``(Z gamma)_c`` is then the sum of one entry per chunk of ``c``.
    """
    p = gamma.shape[0]
    bits, n_chunks = _chunk_bits(p)
    tables = np.zeros((n_chunks, 1 << bits))
    for k in range(n_chunks):
        for b in range(min(bits, p - k * bits)):
            half = 1 << b
            for x in range(half):
                tables[k, x + half] = tables[k, x] + gamma[k * bits + b]
    return tables


@njit(**JIT_OPTIONS)
def _lookup(tables, code, bits):
    total = 0.0
    mask = (1 << bits) - 1
    for k in range(tables.shape[0]):
        total += tables[k, (code >> (k * bits)) & mask]
    return total


@njit(**JIT_OPTIONS)
def _from_chunks(totals, n_players, bits):
    """``out_j = sum_x totals[k, x]`` over the chunk values x with player j's bit set: Z^T u from the chunk totals."""
    out = np.zeros(n_players)
    for k in range(totals.shape[0]):
        for x in range(totals.shape[1]):
            for b in range(min(bits, n_players - k * bits)):
                if (x >> b) & 1:
                    out[k * bits + b] += totals[k, x]
    return out


@njit(**JIT_OPTIONS)
def coalition_sums(codes: np.ndarray, gamma: np.ndarray) -> np.ndarray:
    """``delta_c = sum_{j: bit j of codes[c]} gamma_j`` (that is, Z gamma): one table look-up per 10-bit chunk."""
    return coalition_sums_into(codes, gamma, np.empty(codes.shape[0]))


@njit(**JIT_OPTIONS)
def coalition_sums_into(codes: np.ndarray, gamma: np.ndarray, out: np.ndarray) -> np.ndarray:
    """:func:`coalition_sums` written into ``out`` (reused memory: no page faults on a fresh array)."""
    tables = subset_sum_tables(gamma)
    bits = _chunk_bits(gamma.shape[0])[0]
    for c in range(codes.shape[0]):
        out[c] = _lookup(tables, codes[c], bits)
    return out


@njit(**JIT_OPTIONS)
def transposed_sums(codes: np.ndarray, weights: np.ndarray, values: np.ndarray, n_players: int) -> np.ndarray:
    """``Z^T W u``: ``w_c u_c`` summed into one bin per chunk value of the codes, then the bins into the players."""
    bits, n_chunks = _chunk_bits(n_players)
    mask = (1 << bits) - 1
    totals = np.zeros((n_chunks, 1 << bits))
    for c in range(codes.shape[0]):
        code = codes[c]
        for k in range(n_chunks):
            totals[k, (code >> (k * bits)) & mask] += weights[c] * values[c]
    return _from_chunks(totals, n_players, bits)


@njit(**JIT_OPTIONS)
def gradient_and_loss(codes: np.ndarray, weights: np.ndarray, t: np.ndarray, gamma: np.ndarray,
                      n_players: int) -> tuple[np.ndarray, float]:
    """Gradient ``Z^T W (Z gamma - t)`` and loss ``sum_c w_c (t_c - (Z gamma)_c)^2`` in one pass."""
    tables = subset_sum_tables(gamma)
    bits, n_chunks = _chunk_bits(n_players)
    mask = (1 << bits) - 1
    totals = np.zeros((n_chunks, 1 << bits))
    loss = 0.0
    for c in range(codes.shape[0]):
        code = codes[c]
        residual = _lookup(tables, code, bits) - t[c]
        r = weights[c] * residual
        loss += r * residual
        for k in range(n_chunks):
            totals[k, (code >> (k * bits)) & mask] += r
    return _from_chunks(totals, n_players, bits), loss


@njit(**JIT_OPTIONS)
def isotonic_by_groups(delta: np.ndarray, linear: np.ndarray, w: np.ndarray, starts: np.ndarray, first_zero: int,
                       first_positive: int, work: np.ndarray, first: np.ndarray, t: np.ndarray) -> np.ndarray:
    """``linear + U``, U the weighted PAVA of ``y = delta - linear`` (sorted by payoff) with ties pooled.

    ``starts`` open the groups of equal payoff; groups before ``first_zero`` (negative payoffs) are fitted
    non-decreasing and clipped at <= 0, groups from ``first_positive`` on clipped at >= 0, and the groups
    between (payoff 0) are pinned at 0; the fit is written into ``t``. ``work`` (2, n_groups) and ``first``
    (n_groups,) are scratch memory, reused from call to call (fresh memory of this size costs more in page
    faults than the fit itself).
    """
    m, n_groups = delta.shape[0], starts.shape[0]
    level, weight = work[0], work[1]
    for g in range(n_groups):
        end = starts[g + 1] if g + 1 < n_groups else m
        total, weighted = 0.0, 0.0
        for i in range(starts[g], end):
            total += w[i]
            weighted += w[i] * (delta[i] - linear[i])
        weight[g] = total
        level[g] = weighted / total if total > 0 else weighted
    end_zero = starts[first_positive] if first_positive < n_groups else m
    for i in range(starts[first_zero] if first_zero < n_groups else m, end_zero):
        t[i] = linear[i]  # payoff 0: U = 0
    for lo, hi, sign in ((0, first_zero, -1.0), (first_positive, n_groups, 1.0)):
        n_blocks = _pava_in_place(level, weight, first, lo, hi)
        for b in range(lo, lo + n_blocks):
            value = sign * max(sign * level[b], 0.0)  # clipped at 0 on the side's own sign
            last = first[b + 1] if b + 1 < lo + n_blocks else hi
            for i in range(starts[first[b]], starts[last] if last < n_groups else m):
                t[i] = value + linear[i]
    return t


@njit(**JIT_OPTIONS)
def weighted_squares(weights: np.ndarray, a: np.ndarray, b: np.ndarray) -> float:
    """``sum_c w_c (a_c - b_c)^2`` in one pass, without temporaries."""
    total = 0.0
    for c in range(weights.shape[0]):
        total += weights[c] * (a[c] - b[c]) ** 2
    return total


@njit(**JIT_OPTIONS)
def secular_bisection(c_squared: np.ndarray, eigenvalues: np.ndarray, low: float, high: float) -> float:
    """200 bisection steps on ``sum_i c_i^2 / (e_i - lam)^2 = 1`` over ``[low, high]``; returns ``low``."""
    for _ in range(200):
        middle = 0.5 * (low + high)
        if np.sum(c_squared / (eigenvalues - middle) ** 2) > 1.0:
            high = middle
        else:
            low = middle
    return low


@njit(**JIT_OPTIONS)
def support_normal_equations(codes: np.ndarray, weights: np.ndarray, t: np.ndarray,
                             support: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``Z_S^T W Z_S`` (s x s) and ``Z_S^T W t`` (s,) for the support players ``S``, from the bit codes.

    The exact Gram matrix of the support under arbitrary coalition weights (the Huber variant's reweighted
    coalitions), in one ``O(m s^2)`` pass.
    """
    k = support.shape[0]
    gram = np.zeros((k, k))
    linear = np.zeros(k)
    present = np.empty(k, dtype=np.bool_)
    for c in range(codes.shape[0]):
        code = codes[c]
        w = weights[c]
        for a in range(k):
            present[a] = (code >> support[a]) & 1
        for a in range(k):
            if present[a]:
                linear[a] += w * t[c]
                for b in range(a + 1):
                    if present[b]:
                        gram[a, b] += w
    for a in range(k):
        for b in range(a):
            gram[b, a] = gram[a, b]
    return gram, linear


@njit(**JIT_OPTIONS)
def shapley_from_codes(values: np.ndarray, n_players: int, w_in: np.ndarray, w_out: np.ndarray) -> np.ndarray:
    """Exact Shapley values from a full table ``values[code]`` of all 2^p coalitions."""
    phi = np.zeros(n_players)
    for code in range(values.shape[0]):
        size = 0
        for j in range(n_players):
            size += (code >> j) & 1
        for j in range(n_players):
            if (code >> j) & 1:
                phi[j] += w_in[size] * values[code]
            else:
                phi[j] -= w_out[size] * values[code]
    return phi
