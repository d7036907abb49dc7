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
