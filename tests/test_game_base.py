"""The Game base class: validation, counting, caching, and the prefix-values hook."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shap_instances.games import Game


class WeightedSum(Game):
    """v(S) = (sum of weights in S, number of players in S): a 2-output additive game."""

    def __init__(self, weights, **kwargs):
        super().__init__(len(weights), 2, **kwargs)
        self.weights = np.asarray(weights, dtype=float)

    def value_function(self, coalitions):
        return np.column_stack([coalitions @ self.weights, coalitions.sum(axis=1)])


def test_counts_and_validates():
    game = WeightedSum([1.0, 2.0, 3.0])
    np.testing.assert_array_equal(game([[1, 0, 1], [0, 0, 0]]), [[4.0, 2.0], [0.0, 0.0]])
    assert game.n_evaluations == 2
    np.testing.assert_array_equal(game.full_value, [6.0, 3.0])
    with pytest.raises(ValueError, match=r"shape \(m, 3\)"):
        game(np.ones((1, 4), dtype=bool))


def test_cache_evaluates_each_coalition_once():
    game = WeightedSum([1.0, 2.0, 3.0], cache=True)
    masks = np.array([[1, 0, 1], [1, 0, 1], [0, 1, 0]], dtype=bool)
    first = game(masks)
    second = game(masks[::-1])
    np.testing.assert_array_equal(first[::-1], second)
    assert game.n_evaluations == 2


@settings(max_examples=30)
@given(st.integers(1, 7).flatmap(lambda m: st.permutations(range(m))))
def test_prefix_values_match_direct_evaluation(permutation):
    m = len(permutation)
    game = WeightedSum(np.arange(1.0, m + 1.0))
    prefixes = game.prefix_values(np.array([permutation]))[0]
    assert prefixes.shape == (m + 1, 2)
    for t in range(m + 1):
        mask = np.zeros(m, dtype=bool)
        mask[list(permutation[:t])] = True
        np.testing.assert_array_equal(prefixes[t], game(mask)[0])
