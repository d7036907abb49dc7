"""The one sampler of the package: random permutations and coalitions of players, and the Shapley-kernel
coalition design shared by :class:`KernelApproximator` and ``IsotonicShapleyExplainer``.

Every approximator and valuation estimator draws its permutations with :func:`random_permutations` and its
uniform coalitions with :func:`random_coalitions`; the ways of drawing that differ (sorting uniforms or
shuffling, stratified units, antithetic pairs, only the first places) are named options of the one function.
"""

from __future__ import annotations

import itertools
import math
import numbers
from typing import NamedTuple

import numpy as np

from ..exceptions import InvalidParameterError
from ..utils import Options, RandomStateLike, check_memory, check_random_state, validate_params
from ._weights import kernel_weights

__all__ = ["PERMUTATION_DRAWS", "CoalitionDesign", "KernelCoalitionSampler", "random_coalitions",
           "random_permutations"]

#: How :func:`random_permutations` turns the generator's output into permutations.
PERMUTATION_DRAWS = ("sorting", "shuffling")


def random_permutations(rng: np.random.Generator, n_units: int, m: int, strata: int = 1, antithetic: bool = False,
                        *, by: str = "sorting", first: int | None = None) -> np.ndarray:
    """Random permutations of ``m`` players: plain, stratified by place, antithetic, or only their first places.

    ``by="sorting"`` (default) draws one row of ``m`` uniforms a unit and sorts it (``argsort``); stratified units
    draw one more uniform a row, the offset of their shifts. Each unit starts from a uniformly random permutation
    ``pi`` and takes ``strata`` cyclic shifts of it, by ``floor(u + s m / strata)`` places (``s = 0, ...,
    strata - 1``, ``u`` uniform on ``[0, m / strata)``): a player at place ``p`` of ``pi`` stands at place
    ``(p - shift) mod m`` of each, so its ``strata`` places in the unit are about ``m / strata`` apart, one in each
    of ``strata`` blocks of consecutive places (systematic sampling of the place it joins at). Every permutation of
    a unit is uniformly distributed on its own (a fixed shift of a uniform permutation is uniform), so the unit's
    mean contributions are unbiased; units are independent, so the standard error over units is honest whatever
    the dependence within a unit. With ``antithetic`` each permutation is followed by its reverse.

    ``by="shuffling"`` shuffles each row of ``0..m-1`` in place (``Generator.permuted``: the same stream as one
    ``Generator.permutation(m)`` a row). ``first=k`` returns only the first ``k`` places of each permutation, shape
    ``(n_units, k)``: the first ``k`` columns of sorted uniforms when ``k^2 > m``, else i.i.d. integer draws with
    the rows holding a repeat drawn again (uniform over ordered samples without replacement: cheaper while
    repeats are rare). The units drawn do not depend on how they are split into calls.

    Parameters
    ----------
    rng : numpy.random.Generator
    n_units : int
        Sampling units to draw (one permutation each when ``strata=1`` without ``antithetic``).
    m : int
        Players.
    strata : int, default=1
        Cyclic shifts per unit, from 1 to ``m`` (``by="sorting"`` only).
    antithetic : bool, default=False
        Follow each permutation by its reverse (``by="sorting"`` only).
    by : {"sorting", "shuffling"}, default="sorting"
        How the generator's output becomes permutations (the two give different, equally uniform, streams).
    first : int, optional
        Return only the first ``first`` places (plain sorted permutations only).

    Returns
    -------
    ndarray of shape (n_units * strata * (2 if antithetic else 1), m), or (n_units, first) with ``first``
        The permutations, unit after unit.

    Examples
    --------
    >>> import numpy as np
    >>> from shap_instances.approximators import random_permutations
    >>> units = random_permutations(np.random.default_rng(0), 1, 8, strata=4)
    >>> places = np.argsort(units, axis=1)      # the place of each player in each of the 4 permutations
    >>> bool(np.all(np.sort(places // 2, axis=0) == np.arange(4)[:, None]))   # one place in each quarter
    True
    >>> shuffled = random_permutations(np.random.default_rng(0), 3, 5, by="shuffling")
    >>> bool((shuffled[0] == np.random.default_rng(0).permutation(5)).all())
    True
    >>> random_permutations(np.random.default_rng(0), 4, 100, first=3).shape
    (4, 3)
    """
    validate_params("random_permutations", {"by": [Options(*PERMUTATION_DRAWS)]}, {"by": by})
    if (by == "shuffling" or first is not None) and (strata != 1 or antithetic):
        raise InvalidParameterError(f"random_permutations: by={by!r}, first={first!r} draw plain permutations; "
                                    f"got strata={strata!r}, antithetic={antithetic!r}. Use by='sorting' without "
                                    "first= for stratified or antithetic units.")
    if by == "shuffling":
        return rng.permuted(np.tile(np.arange(m), (n_units, 1)), axis=1)
    if first is not None and first * first <= m:
        return _distinct_draws(rng, n_units, m, first)
    # one row of uniforms a unit (and its offset in the last column when stratified): the units drawn do not
    # depend on how they are split into calls; unstratified runs keep the stream they always had
    uniforms = rng.random((n_units, m + (strata > 1)))
    base = np.argsort(uniforms[:, :m], axis=1)
    if first is not None:
        return base[:, :first]
    if strata == 1:
        return np.stack([base, base[:, ::-1]], axis=1).reshape(-1, m) if antithetic else base
    offsets = uniforms[:, m:] * (m / strata)
    shifts = np.floor(offsets + np.arange(strata)[None, :] * (m / strata)).astype(np.intp) % m  # (units, strata)
    places = (np.arange(m)[None, None, :] + shifts[:, :, None]) % m
    out = np.take_along_axis(base[:, None, :], places, axis=2)  # (units, strata, m)
    if antithetic:
        out = np.stack([out, out[:, :, ::-1]], axis=2)
    return out.reshape(-1, m)


def _distinct_draws(rng: np.random.Generator, k: int, m: int, first: int) -> np.ndarray:
    """``k`` rows of ``first`` distinct players out of ``m``: i.i.d. integers, rows with a repeat drawn again."""
    out = rng.integers(0, m, size=(k, first))
    while True:
        ordered = np.sort(out, axis=1)
        again = np.flatnonzero((ordered[:, 1:] == ordered[:, :-1]).any(axis=1))
        if not len(again):
            return out
        out[again] = rng.integers(0, m, size=(len(again), first))


def random_coalitions(rng: np.random.Generator, k: int, m: int) -> np.ndarray:
    """``k`` uniformly random coalitions of ``m`` players (each player in with probability 1/2, independently).

    Returns
    -------
    ndarray of bool, shape (k, m)

    Examples
    --------
    >>> import numpy as np
    >>> from shap_instances.approximators import random_coalitions
    >>> random_coalitions(np.random.default_rng(0), 2, 3).shape
    (2, 3)
    """
    return rng.random((k, m)) < 0.5


class CoalitionDesign(NamedTuple):
    """Coalitions chosen by a sampler, with their regression weights.

    Attributes
    ----------
    masks : ndarray of bool, shape (n_coalitions, n_players)
        One coalition per row, True = player present. Never the empty or the full coalition.
    weights : ndarray of float64, shape (n_coalitions,)
        Shapley-kernel regression weight of each coalition.
    sampled : ndarray of bool, shape (n_coalitions,)
        True where the coalition was sampled, False where its size was enumerated completely.

    Examples
    --------
    >>> from shap_instances.approximators import KernelCoalitionSampler
    >>> design = KernelCoalitionSampler(3).sample(6, random_state=0)
    >>> design.masks.shape, bool(design.sampled.any())
    ((6, 3), False)
    """

    masks: np.ndarray
    weights: np.ndarray
    sampled: np.ndarray


class KernelCoalitionSampler:
    """Coalitions for Kernel SHAP: paired sizes enumerated from the outside in, then proportional sampling.

    The design follows shap's ``KernelExplainer``. Coalition sizes are taken in pairs (``s`` and
    ``M - s``) from the outside in; a pair of sizes is enumerated completely while the budget allows every
    coalition of those sizes to receive at least its share of the kernel weight. The rest of the budget
    samples coalitions, each together with its complement, from the remaining sizes in proportion to their
    total kernel weight; duplicates are merged and the remaining kernel mass is shared in proportion to how
    often each coalition was drawn. Sampling uses a generator from ``random_state``; the global numpy state
    is never read or changed.

    Parameters
    ----------
    n_players : int
        Number of players M (at least 1).

    Examples
    --------
    >>> from shap_instances.approximators import KernelCoalitionSampler
    >>> sampler = KernelCoalitionSampler(10)
    >>> design = sampler.sample(100, random_state=0)   # sizes 1 and 9 enumerated, the rest sampled
    >>> int((~design.sampled).sum()), design.masks.shape[0] <= 100
    (20, True)
    >>> again = sampler.sample(100, random_state=0)    # an int seed: the same coalitions every time
    >>> bool((again.masks == design.masks).all())
    True
    """

    def __init__(self, n_players: int) -> None:
        if not isinstance(n_players, numbers.Integral) or isinstance(n_players, bool | np.bool_) or n_players < 1:
            raise InvalidParameterError(f"KernelCoalitionSampler: n_players must be an int >= 1; got {n_players!r}.")
        self.n_players: int = int(n_players)

    def sample(self, budget: int, random_state: RandomStateLike = None) -> CoalitionDesign:
        """At most ``budget`` coalitions (besides the empty and the full one) and their kernel weights.

        Parameters
        ----------
        budget : int
            Largest number of coalitions to return (a non-negative int). Sampled coalitions come in
            complementary pairs, so an odd remainder of one coalition is left unused.
        random_state : None, int, numpy.random.Generator, numpy.random.BitGenerator or numpy.random.RandomState
            Seed of the sampled part, as :func:`shap_instances.utils.check_random_state` reads it: a Generator
            is used (and advanced) as is, an int gives the same design on every call.

        Returns
        -------
        CoalitionDesign
            ``(masks, weights, sampled)``, the enumerated coalitions first.

        Examples
        --------
        >>> from shap_instances.approximators import KernelCoalitionSampler
        >>> masks, weights, sampled = KernelCoalitionSampler(4).sample(14)   # every coalition: no sampling
        >>> masks.shape, bool(sampled.any())
        ((14, 4), False)
        """
        if not isinstance(budget, numbers.Integral) or isinstance(budget, bool | np.bool_) or budget < 0:
            raise InvalidParameterError(f"KernelCoalitionSampler.sample: budget must be an int >= 0; got {budget!r}.")
        m = self.n_players
        coalitions = min(int(budget), 2**m - 2) if m < 63 else int(budget)
        # the design is built in memory: the masks, and while sampling one random order of the players per draw
        check_memory(coalitions * m * (1 + 16 + 8), f"the kernel design of {coalitions:,} coalitions of {m} players",
                     instead="Lower the budget (max_evals), or use the permutation estimator, whose memory does not "
                             "grow with its budget.")
        return _kernel_design(self.n_players, int(budget), check_random_state(random_state))

    def __repr__(self) -> str:
        return f"KernelCoalitionSampler(n_players={self.n_players})"


def unique_rows(packed: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``np.unique(packed, axis=0, return_inverse=True, return_counts=True)`` of a uint8 matrix, the same arrays.

    The rows of bytes (``np.packbits`` of coalition masks) are read as big-endian 64-bit words, whose order is
    the rows' byte order, and sorted with one ``lexsort``: several times faster than ``np.unique(axis=0)``, which
    compares the rows as structured items one byte field at a time.

    Examples
    --------
    >>> import numpy as np
    >>> from shap_instances.approximators.sampling import unique_rows
    >>> rows, inverse, counts = unique_rows(np.array([[2, 1], [1, 9], [2, 1]], dtype=np.uint8))
    >>> rows.tolist(), inverse.tolist(), counts.tolist()
    ([[1, 9], [2, 1]], [1, 0, 1], [1, 2])
    """
    n, width = packed.shape
    words = np.zeros((n, -(-width // 8) * 8), dtype=np.uint8)
    words[:, :width] = packed
    keys = words.view(">u8")
    order = np.lexsort(keys.T[::-1]) if keys.shape[1] > 1 else np.argsort(keys[:, 0], kind="stable")
    ordered = keys[order]
    first = np.ones(n, dtype=bool)
    first[1:] = (ordered[1:] != ordered[:-1]).any(axis=1)
    group = np.cumsum(first) - 1
    inverse = np.empty(n, dtype=np.intp)
    inverse[order] = group
    counts = np.diff(np.append(np.flatnonzero(first), n))
    return packed[order[first]], inverse, counts


def _kernel_design(m: int, budget: int, rng: np.random.Generator) -> CoalitionDesign:
    """The unchecked design: enumerated pairs of sizes, then paired proportional sampling with ``rng``."""
    per_size = kernel_weights(m)  # weight of ONE coalition of each size
    sizes = np.arange(1, m)
    mass = (m - 1) / (sizes * (m - sizes))  # total kernel weight of each size: C(m, s) * per_size[s]
    pairs = [(s, m - s) for s in range(1, m // 2 + 1)]
    blocks, weights = [np.zeros((0, m), dtype=bool)], [np.zeros(0)]
    remaining_mass, remaining_budget = mass.sum(), budget
    done = set()
    for pair in pairs:
        group = sorted(set(pair))
        count = sum(math.comb(m, s) for s in group)
        share = sum(mass[s - 1] for s in group) / remaining_mass
        if count > remaining_budget or remaining_budget * share < count * (1 - 1e-8):
            break
        for s in group:
            blocks.append(_coalitions_of_size(m, s))
            weights.append(np.full(len(blocks[-1]), per_size[s]))
        remaining_budget -= count
        remaining_mass -= sum(mass[s - 1] for s in group)
        done.update(group)
    n_enumerated = sum(len(block) for block in blocks)
    left = [s for s in sizes if s not in done]
    if left and remaining_budget >= 2:
        left_sizes = np.array(left)
        probabilities = mass[left_sizes - 1] / mass[left_sizes - 1].sum()
        n_draws = remaining_budget // 2
        drawn_sizes = rng.choice(left_sizes, size=n_draws, p=probabilities)
        order = random_permutations(rng, n_draws, m)  # a uniformly random order of the players
        half = np.zeros((n_draws, m), dtype=bool)  # its first `size` players: a uniformly random coalition
        np.put_along_axis(half, order, np.arange(m)[None, :] < drawn_sizes[:, None], axis=1)
        both = np.concatenate([half, ~half])  # paired sampling: each coalition with its complement
        unique, _, counts = unique_rows(np.packbits(both, axis=1))
        blocks.append(np.unpackbits(unique, axis=1, count=m).astype(bool))
        weights.append(remaining_mass * counts / counts.sum())
    design = np.concatenate(blocks)
    sampled = np.arange(len(design)) >= n_enumerated
    return CoalitionDesign(design, np.concatenate(weights).astype(np.float64), sampled)


def _coalitions_of_size(m: int, size: int) -> np.ndarray:
    """Every coalition of ``size`` of ``m`` players, bool (C(m, size), m), in ``itertools.combinations`` order."""
    count = math.comb(m, size)
    members = np.fromiter(itertools.chain.from_iterable(itertools.combinations(range(m), size)), dtype=np.intp,
                          count=count * size).reshape(count, size)
    masks = np.zeros((count, m), dtype=bool)
    masks[np.arange(count)[:, None], members] = True
    return masks
