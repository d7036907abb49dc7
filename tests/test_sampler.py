"""The one sampler (``random_permutations``, ``random_coalitions``): each option draws the stream the approximators
drew before it existed, written here with the plain numpy calls they used, and every draw is a permutation."""

import numpy as np
import pytest

from shap_instances.approximators import random_coalitions, random_permutations, stratified_permutations
from shap_instances.exceptions import InvalidParameterError


def _is_permutation_rows(rows, m):
    return bool(np.all(np.sort(rows, axis=1) == np.arange(m)))


@pytest.mark.parametrize("m", [1, 2, 7, 40])
def test_sorting_is_the_argsort_of_one_row_of_uniforms_a_permutation(m):
    expected = np.argsort(np.random.default_rng(3).random((5, m)), axis=1)
    drawn = random_permutations(np.random.default_rng(3), 5, m)
    assert np.array_equal(drawn, expected) and _is_permutation_rows(drawn, m)


@pytest.mark.parametrize("m", [1, 2, 7, 40])
def test_shuffling_is_one_generator_permutation_a_row(m):
    reference = np.random.default_rng(3)
    expected = np.stack([reference.permutation(m) for _ in range(4)])
    drawn = random_permutations(np.random.default_rng(3), 4, m, by="shuffling")
    assert np.array_equal(drawn, expected) and _is_permutation_rows(drawn, m)


def _first_places_reference(rng, k, m, hi):
    """The first places as PlaceStratifiedApproximator drew them before the one sampler."""
    if hi * hi > m:
        return np.argsort(rng.random((k, m)), axis=1)[:, :hi]
    out = rng.integers(0, m, size=(k, hi))
    while True:
        ordered = np.sort(out, axis=1)
        again = np.flatnonzero((ordered[:, 1:] == ordered[:, :-1]).any(axis=1))
        if not len(again):
            return out
        out[again] = rng.integers(0, m, size=(len(again), hi))


@pytest.mark.parametrize(("m", "first"), [(1, 1), (9, 3), (25, 5), (25, 6), (100, 4), (30, 30)])
def test_first_places_are_distinct_and_drawn_as_before(m, first):
    drawn = random_permutations(np.random.default_rng(8), 300, m, first=first)
    assert drawn.shape == (300, first)
    assert np.array_equal(drawn, _first_places_reference(np.random.default_rng(8), 300, m, first))
    assert all(len(set(row)) == first for row in drawn.tolist())  # no player twice in one order


def test_first_places_by_repeated_draws_are_uniform_over_ordered_samples():
    drawn = random_permutations(np.random.default_rng(0), 60000, 4, first=2)  # 2^2 <= 4: the integer draws
    _, counts = np.unique(drawn, axis=0, return_counts=True)
    assert len(counts) == 12  # every ordered pair of distinct players
    assert np.all(np.abs(counts / 60000 - 1 / 12) < 0.006)  # ~5 standard errors of a frequency of 1/12


def test_coalitions_are_the_uniforms_below_one_half():
    expected = np.random.default_rng(2).random((6, 5)) < 0.5
    assert np.array_equal(random_coalitions(np.random.default_rng(2), 6, 5), expected)


def test_the_020_name_is_the_one_sampler():
    assert stratified_permutations is random_permutations


@pytest.mark.parametrize("options", [dict(by="shuffling", strata=2), dict(by="shuffling", antithetic=True),
                                     dict(first=2, strata=2), dict(by="sorted")])
def test_options_that_do_not_combine_are_refused(options):
    strata = options.pop("strata", 1)
    with pytest.raises(InvalidParameterError, match="by"):
        random_permutations(np.random.default_rng(0), 2, 6, strata, **options)


@pytest.mark.parametrize("width", [1, 2, 8, 9, 13, 17])
def test_unique_rows_returns_what_numpy_unique_returns(width):
    from shap_instances.approximators.sampling import unique_rows

    rng = np.random.default_rng(width)
    for high in (2, 256):  # few distinct bytes (many repeats) and any byte
        rows = rng.integers(0, high, size=(60, width)).astype(np.uint8)
        rows = np.concatenate([rows, rows[:20], rows[:0]])
        expected = np.unique(rows, axis=0, return_inverse=True, return_counts=True)
        got = unique_rows(rows)
        assert all(np.array_equal(e.reshape(g.shape), g) for e, g in zip(expected, got))


def _kernel_design_reference(m, budget, rng):
    """The kernel design written as plainly as it was first: one coalition at a time (mask lists)."""
    import itertools
    import math

    from shap_instances.approximators import kernel_weights

    per_size, sizes = kernel_weights(m), np.arange(1, m)
    mass = (m - 1) / (sizes * (m - sizes))
    masks, weights, remaining_mass, remaining_budget, done = [], [], mass.sum(), budget, set()
    for pair in [(s, m - s) for s in range(1, m // 2 + 1)]:
        group = sorted(set(pair))
        count = sum(math.comb(m, s) for s in group)
        if count > remaining_budget or remaining_budget * sum(mass[s - 1] for s in group) / remaining_mass < count * (
                1 - 1e-8):
            break
        for s in group:
            for members in itertools.combinations(range(m), s):
                masks.append(np.isin(np.arange(m), members))
                weights.append(per_size[s])
        remaining_budget -= count
        remaining_mass -= sum(mass[s - 1] for s in group)
        done.update(group)
    n_enumerated = len(masks)
    left = np.array([s for s in sizes if s not in done])
    if len(left) and remaining_budget >= 2:
        n_draws = remaining_budget // 2
        drawn = rng.choice(left, size=n_draws, p=mass[left - 1] / mass[left - 1].sum())
        order = random_permutations(rng, n_draws, m)
        half = np.zeros((n_draws, m), dtype=bool)
        np.put_along_axis(half, order, np.arange(m)[None, :] < drawn[:, None], axis=1)
        unique, counts = np.unique(np.packbits(np.concatenate([half, ~half]), axis=1), axis=0, return_counts=True)
        masks.extend(np.unpackbits(unique, axis=1, count=m).astype(bool))
        weights.extend(remaining_mass * counts / counts.sum())
    design = np.array(masks, dtype=bool).reshape(-1, m)
    return design, np.asarray(weights, dtype=np.float64), np.arange(len(design)) >= n_enumerated


@pytest.mark.parametrize(("m", "budget"), [(1, 5), (2, 2), (4, 14), (5, 12), (6, 40), (9, 51), (10, 300), (16, 700),
                                           (40, 0), (40, 85), (100, 2246)])
def test_kernel_design_is_the_plain_one_coalition_at_a_time_design(m, budget):
    from shap_instances.approximators import KernelCoalitionSampler

    for seed in (0, 1):
        got = KernelCoalitionSampler(m).sample(budget, random_state=seed)
        expected = _kernel_design_reference(m, budget, np.random.default_rng(seed))
        assert all(e.dtype == g.dtype and np.array_equal(e, g) for e, g in zip(expected, got))
