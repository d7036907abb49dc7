"""Truncated Monte Carlo (Ghorbani & Zou) in the permutation estimator, and the CC plot's sign convention."""

import numpy as np
import pytest
from sklearn.linear_model import Ridge
from sklearn.tree import DecisionTreeRegressor

from shap_instances import InstanceKernelExplainer
from shap_instances.approximators import PermutationApproximator
from shap_instances.datasets import load_diabetes
from shap_instances.exceptions import InvalidParameterError
from shap_instances.games import FunctionGame, ResidualGame
from shap_instances.metrics import cc_means, cc_summary


def table_game(m, d=1, seed=0, monotone=False):
    """A game with an arbitrary (seeded) value for every coalition: no structure the estimator could exploit."""
    rng = np.random.default_rng(seed)
    table = rng.normal(size=(2**m, d))
    if monotone:  # v(S) = sum of positive weights of the members, then a concave, increasing transform
        weights = rng.random((m, d)) + 0.1
        table = np.sqrt(np.array([[(weights[[i for i in range(m) if s >> i & 1], o]).sum() for o in range(d)]
                                  for s in range(2**m)]))
    powers = 1 << np.arange(m)
    return FunctionGame(lambda masks: table[masks.astype(np.int64) @ powers], m, n_outputs=d), table, powers


def truncated_by_hand(table, powers, permutations, tolerance):
    """The truncated marginal contributions of each permutation, by a plain loop (independent of the package)."""
    k, m = permutations.shape
    full, empty = table[powers.sum()], table[0]
    threshold = tolerance * np.abs(full - empty)
    total = np.zeros((m, table.shape[1]))
    for permutation in permutations:
        for o in range(table.shape[1]):
            key, previous, truncated = 0, empty[o], False
            for player in permutation:
                if not truncated and abs(full[o] - previous) < threshold[o]:
                    truncated = True  # this and every later player of the permutation get 0
                if truncated:
                    continue
                key |= powers[player]
                value = table[key, o]
                total[player, o] += value - previous
                previous = value
    return total / k


@pytest.mark.parametrize("antithetic", [False, True])
def test_tolerance_zero_is_plain_permutation_sampling_bitwise(antithetic):
    game, _, _ = table_game(7, d=3)
    options = dict(n_permutations=40, antithetic=antithetic, batch_size=8, random_state=5, silent=True)
    plain = PermutationApproximator(**options).estimate(game)
    zero = PermutationApproximator(truncation_tolerance=0.0, **options).estimate(game)
    assert np.array_equal(plain.values, zero.values)
    assert np.array_equal(plain.standard_errors, zero.standard_errors)
    assert zero.info["truncated_fraction"] == 0 and zero.info["efficiency_gap"] < 1e-12


def test_tolerance_zero_on_a_refit_game_is_plain_sampling_bitwise():
    X, y = load_diabetes()
    X, y = X.iloc[:9].to_numpy(), y.iloc[:9].to_numpy(dtype=float)
    game = ResidualGame(DecisionTreeRegressor(max_depth=2, random_state=0), X, y, model_seed=0)
    assert not game.cheap  # a refit for every coalition: the sequential truncation path
    plain = PermutationApproximator(n_permutations=6, random_state=1, silent=True).estimate(game)
    zero = PermutationApproximator(n_permutations=6, truncation_tolerance=0, random_state=1, silent=True).estimate(game)
    assert np.array_equal(plain.values, zero.values)


@pytest.mark.parametrize("tolerance", [0.05, 0.3, 0.8])
def test_truncated_estimate_equals_the_truncated_contributions_by_hand(tolerance):
    m, k, seed = 6, 30, 11
    game, table, powers = table_game(m, d=2, seed=3)
    result = PermutationApproximator(n_permutations=k, antithetic=False, batch_size=k, random_state=seed,
                                  truncation_tolerance=tolerance, silent=True).estimate(game)
    permutations = np.argsort(np.random.default_rng(seed).random((k, m)), axis=1)  # the estimator's draws
    np.testing.assert_allclose(result.values, truncated_by_hand(table, powers, permutations, tolerance), atol=1e-12)
    plain = PermutationApproximator(n_permutations=k, antithetic=False, batch_size=k, random_state=seed,
                                 silent=True).estimate(game)
    np.testing.assert_allclose(plain.values, truncated_by_hand(table, powers, permutations, 0.0), atol=1e-12)


def test_truncation_bias_bound_and_saved_evaluations():
    """Each permutation drops less than tolerance * |v(N) - v(empty)|: the efficiency gap is below it always, and
    for a game increasing along supersets every player's bias (against the same permutations untruncated) too."""
    tolerance = 0.1
    game, table, powers = table_game(8, d=2, seed=4, monotone=True)
    bound = tolerance * np.abs(table[powers.sum()] - table[0])
    options = dict(n_permutations=60, random_state=2, silent=True)
    plain = PermutationApproximator(**options).estimate(game)
    tmc = PermutationApproximator(truncation_tolerance=tolerance, **options).estimate(game)
    gap = np.abs(tmc.empty_value + tmc.values.sum(0) - tmc.full_value)
    assert np.all(gap < bound) and tmc.info["efficiency_gap"] == pytest.approx(gap.max())
    assert gap.max() > 0  # it did truncate
    assert np.all(tmc.values <= plain.values + 1e-12)  # dropped contributions are non-negative here
    assert np.all(plain.values - tmc.values < bound)
    assert tmc.n_evaluations < plain.n_evaluations and tmc.info["truncated_fraction"] > 0
    arbitrary, table, powers = table_game(7, d=1, seed=9)  # not monotone: the total still obeys the bound
    result = PermutationApproximator(truncation_tolerance=0.3, **options).estimate(arbitrary)
    assert result.info["efficiency_gap"] < 0.3 * abs(table[powers.sum(), 0] - table[0, 0])


def test_truncation_is_exact_where_nothing_changes_after_the_truncation_point():
    game = FunctionGame(lambda masks: np.minimum(masks.sum(1), 3.0), 9)  # saturates after any 3 players
    plain = PermutationApproximator(n_permutations=20, random_state=0, silent=True).estimate(game)
    tmc = PermutationApproximator(n_permutations=20, truncation_tolerance=1e-9, random_state=0,
                                  silent=True).estimate(game)
    assert np.array_equal(plain.values, tmc.values) and tmc.info["efficiency_gap"] == 0
    assert tmc.n_evaluations == 2 + 20 * 3  # v(empty), v(all), then three prefixes per permutation


def test_truncation_tolerance_refused():
    game, _, _ = table_game(4)
    for bad in (-0.1, np.inf, "0.1", True):
        with pytest.raises(ValueError, match="truncation_tolerance"):
            PermutationApproximator(n_permutations=4, truncation_tolerance=bad, silent=True).estimate(game)
    X, y = load_diabetes()
    with pytest.raises(InvalidParameterError, match="truncation_tolerance"):
        InstanceKernelExplainer(Ridge(), X[:20], y=y[:20], truncation_tolerance=0.1)  # approximator="auto"


def test_explainer_truncated_monte_carlo():
    X, y = load_diabetes()
    X, y = X.iloc[:10], y.iloc[:10]
    options = dict(approximator="permutation", n_permutations=8, random_state=0, silent=True)
    model = DecisionTreeRegressor(max_depth=2, random_state=0)
    plain = InstanceKernelExplainer(model, X, y=y, **options)()
    zero = InstanceKernelExplainer(model, X, y=y, truncation_tolerance=0.0, **options)()
    assert np.array_equal(plain.values, zero.values)
    explainer = InstanceKernelExplainer(model, X, y=y, truncation_tolerance=0.5, **options)
    tmc = explainer()  # built without the efficiency check
    residuals = plain.base_values + plain.values.sum(1)
    gap = np.abs(tmc.base_values + tmc.values.sum(1) - residuals)
    assert np.all(gap < 0.5 * np.abs(residuals) + 1e-12)
    assert explainer.result_.info["efficiency_gap"] == pytest.approx(gap.max())


def test_cc_means_training_sign_equals_cc_summary():
    X, y = load_diabetes()
    explainer = InstanceKernelExplainer(Ridge(alpha=0.5), X[:30], y=y[:30], n_permutations=12, random_state=0,
                                        silent=True)
    full = cc_summary(explainer(), sign_by="training")
    fast = cc_means(explainer, sign_by="training")
    np.testing.assert_allclose(fast["contribution_mean"], full["contribution_mean"], atol=1e-10)
    with pytest.raises(ValueError, match="sign_by"):
        cc_means(explainer, sign_by="own")


@pytest.mark.slow
def test_cc_plot_default_puts_boston_capped_rows_where_the_paper_does():
    """Liu & Barnard, figure 3: the Boston rows with MEDV = 50 "tend to have a high contribution value". Under the
    CC plot's default all 16 lie in the top decile of contribution; under eq. 5 read literally, the bottom one."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from sklearn.preprocessing import StandardScaler

    from shap_instances.datasets import load_boston
    from shap_instances.plots import cc_plot

    X, y = load_boston()
    X = X.astype(float)
    X.loc[:, :] = StandardScaler().fit_transform(X)
    explanation = InstanceKernelExplainer(Ridge(alpha=1.0), X, y=y, random_state=0, silent=True)()
    capped = y.to_numpy() == 50
    assert capped.sum() == 16
    for sign_by, top in ((None, True), ("explained", False)):
        ax = cc_plot(explanation, show=False) if sign_by is None else cc_plot(explanation, sign_by=sign_by, show=False)
        contribution = np.asarray(ax.collections[0].get_offsets())[:, 1]  # what the plot drew
        plt.close(ax.figure)
        low, high = np.quantile(contribution, [0.1, 0.9])
        assert np.all(contribution[capped] >= high) if top else np.all(contribution[capped] <= low)


def test_cheap_and_sequential_truncation_agree():
    """A ridge game's fused prefix path (every prefix, truncated afterwards) and scikit-learn refits one prefix at
    a time (stopping early) give the same truncated values and the same truncated share."""
    X, y = load_diabetes()
    X, y = X.iloc[:12].to_numpy(), y.iloc[:12].to_numpy(dtype=float)
    options = dict(n_permutations=10, truncation_tolerance=0.2, random_state=4, silent=True)
    fast = ResidualGame(Ridge(alpha=0.5), X, y, model_seed=0)
    slow = ResidualGame(Ridge(alpha=0.5), X, y, model_seed=0, use_fast_path=False)
    assert fast.cheap and not slow.cheap
    a = PermutationApproximator(**options).estimate(fast)
    b = PermutationApproximator(**options).estimate(slow)
    np.testing.assert_allclose(a.values, b.values, atol=1e-8)
    assert a.info["truncated_fraction"] == b.info["truncated_fraction"] > 0
    assert b.n_evaluations < a.n_evaluations


@pytest.mark.parametrize("classification", [False, True])
def test_cc_plot_colours_by_the_training_targets(classification):
    """The default colour is each training row's target (class codes for labels), not ``data``'s target minus an
    explained row's prediction, which shifted every colour by that prediction (a negative compressive strength)."""
    import matplotlib.pyplot as plt
    from sklearn.linear_model import LogisticRegression, Ridge

    from shap_instances import InstanceKernelExplainer
    from shap_instances.plots import cc_plot

    rng = np.random.default_rng(0)
    X = rng.normal(size=(10, 2))
    y = X[:, 0] + 50.0 + rng.normal(size=10)
    if classification:
        y = np.where(y > np.median(y), "high", "low")
    model = LogisticRegression() if classification else Ridge()
    explanation = InstanceKernelExplainer(model, X, y=y, silent=True)()
    ax = cc_plot(explanation, show=False)
    colours = ax.collections[0].get_array()
    expected = (y == "low").astype(float) if classification else y
    np.testing.assert_allclose(np.asarray(colours), expected, rtol=1e-3)
    plt.close(ax.figure)
