"""The Game base class: validation, counting, caching, and the prefix-values hook."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shap_instances.games import FunctionGame, Game


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


def test_values_is_the_public_batched_value_function():
    game = WeightedSum([1.0, 2.0, 3.0], cache=True)
    masks = np.array([[1, 0, 1], [0, 1, 0], [1, 0, 1]], dtype=bool)
    np.testing.assert_array_equal(game.values(masks), [[4.0, 2.0], [2.0, 1.0], [4.0, 2.0]])
    assert game.n_evaluations == 2  # counted and cached like game(masks)
    np.testing.assert_array_equal(game.values(masks), game(masks))
    assert game.n_evaluations == 2


class Returns(Game):
    """A game whose value function returns a fixed array, whatever the coalitions."""

    def __init__(self, out, n_players=3, n_outputs=1):
        super().__init__(n_players, n_outputs)
        self.out = out

    def value_function(self, coalitions):
        return self.out(len(coalitions))


def test_wrong_value_shape_names_expected_and_returned():
    masks = np.ones((8, 3), dtype=bool)
    with pytest.raises(ValueError, match=r"returned an array of shape \(16,\) for 8 coalition\(s\); expected "
                                         r"\(8, 1\) or \(8,\)"):
        Returns(lambda m: np.zeros(2 * m)).values(masks)
    with pytest.raises(ValueError, match=r"shape \(2, 8\) for 8 coalition\(s\); expected \(8, 2\) \("):
        Returns(lambda m: np.zeros((2, m)), n_outputs=2).values(masks)  # transposed: same size, still refused
    np.testing.assert_array_equal(Returns(lambda m: np.arange(m)).values(masks[:3]), [[0.0], [1.0], [2.0]])


@pytest.mark.parametrize(("n_players", "n_outputs", "match"), [(0, 1, "at least one player"),
                                                               (-2, 1, "at least one player"),
                                                               (3, 0, "at least one output")])
def test_games_without_players_or_outputs_are_refused(n_players, n_outputs, match):
    with pytest.raises(ValueError, match=match):
        Game(n_players, n_outputs)
    with pytest.raises(ValueError, match="at least one player"):
        FunctionGame(lambda masks: masks.sum(axis=1), 0)
