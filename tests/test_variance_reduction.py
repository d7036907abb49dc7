"""Variance reduction in permutation sampling: stratified units, the first-order control variate, and the
coverage of their 95% intervals against exact enumeration."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.linear_model import LinearRegression, LogisticRegression, Ridge

from shap_instances.approximators import (
    ControlVariateApproximator,
    ExactApproximator,
    FirstOrderGame,
    LabelShareGame,
    PermutationApproximator,
    PlaceStratifiedApproximator,
    first_order_game,
    label_share_game,
    stratified_permutations,
)
from shap_instances.exceptions import UnsupportedModelError
from shap_instances.games import FunctionGame, ResidualGame
from shap_instances.linear import LogisticPath


@settings(max_examples=30, deadline=None)
@given(m=st.integers(1, 12), strata=st.integers(1, 12), antithetic=st.booleans(), seed=st.integers(0, 2**32 - 1))
def test_stratified_units_are_permutations_with_one_place_per_block(m, strata, antithetic, seed):
    strata = min(strata, m)
    out = stratified_permutations(np.random.default_rng(seed), 3, m, strata, antithetic)
    assert out.shape == (3 * strata * (2 if antithetic else 1), m)
    assert np.array_equal(np.sort(out, axis=1), np.broadcast_to(np.arange(m), out.shape))
    places = np.argsort(out, axis=1).reshape(3, strata, 2 if antithetic else 1, m)[:, :, 0]  # (units, strata, m)
    gaps = np.diff(np.sort(places, axis=1), axis=1)  # a player's places in a unit: about m / strata apart
    if strata > 1:
        assert gaps.min() >= np.floor(m / strata) and gaps.max() <= np.ceil(m / strata)


def test_unstratified_draws_keep_the_generator_stream():
    """strata=1 draws what the permutation approximator always drew (plain and antithetic runs are unchanged)."""
    plain = np.argsort(np.random.default_rng(3).random((4, 6)), axis=1)
    assert np.array_equal(stratified_permutations(np.random.default_rng(3), 4, 6), plain)
    pairs = stratified_permutations(np.random.default_rng(3), 4, 6, antithetic=True)
    assert np.array_equal(pairs[::2], plain) and np.array_equal(pairs[1::2], plain[:, ::-1])


def test_strata_is_checked_and_rounds_the_budget():
    game = FunctionGame(lambda m: m.sum(1, keepdims=True) ** 2.0, 5)
    r = PermutationApproximator(n_permutations=7, strata=2, antithetic=True, random_state=0, silent=True).estimate(game)
    assert r.info["n_permutations"] == 8 and r.info["strata"] == 2
    assert np.isclose(r.values.sum(), 25.0)
    for bad in (0, 6, 1.5, True):
        with pytest.raises(ValueError, match="strata"):
            PermutationApproximator(n_permutations=8, strata=bad, silent=True).estimate(game)


def test_first_order_game_closed_form_equals_enumeration():
    rng = np.random.default_rng(0)
    for m in (1, 2, 7):
        game = FirstOrderGame(rng.normal(size=(m, 3)), rng.normal(size=3), rng.normal(size=3))
        exact = ExactApproximator().estimate(game).values
        assert np.allclose(game.closed_form_values(), exact, atol=1e-12)
        permutations = stratified_permutations(rng, 4, m)
        ranks = np.argsort(permutations, axis=1)
        masks = ranks[:, None, :] < np.arange(m + 1)[None, :, None]
        assert np.allclose(game.prefix_values(permutations), game(masks.reshape(-1, m)).reshape(4, m + 1, 3))


@pytest.mark.parametrize("model", [Ridge(alpha=2.0), LinearRegression(), LogisticRegression(C=0.5)])
def test_first_order_game_matches_the_game_at_all_rows_and_to_first_order(model):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(60, 3))
    y = X @ [1.0, -2.0, 0.5] + rng.normal(size=60)
    y = (y > 0).astype(float) if isinstance(model, LogisticRegression) else y
    game = ResidualGame(model, X, y, X[:5], y[:5])
    control = first_order_game(game)
    assert control is not None and ControlVariateApproximator.supports(game)
    assert np.allclose(control.full_value, game.full_value) and np.allclose(control.empty_value, game.empty_value)
    drop = ~np.eye(60, dtype=bool)  # leave one row out: the first-order step predicts the change
    exact, first = game(drop) - game.full_value, control(drop) - control.full_value
    assert np.corrcoef(exact.ravel(), first.ravel())[0, 1] > 0.95


def test_control_variate_refuses_a_game_without_one():
    game = FunctionGame(lambda m: m.sum(1, keepdims=True) ** 2.0, 4)
    assert not ControlVariateApproximator.supports(game)
    with pytest.raises(UnsupportedModelError, match="first-order"):
        ControlVariateApproximator(8).estimate(game)
    with pytest.raises(ValueError, match="coefficient"):
        ControlVariateApproximator(8, coefficient="each").estimate(ResidualGame(Ridge(), np.eye(4), np.arange(4.0)))


def test_pooled_coefficient_keeps_efficiency():
    game = _small_game()
    r = ControlVariateApproximator(40, coefficient="pooled", random_state=0).estimate(game)
    assert r.info["efficiency_gap"] < 1e-10
    assert np.allclose(r.values.sum(axis=0), game.full_value - game.empty_value)


def _small_game():
    rng = np.random.default_rng(7)
    X = rng.normal(size=(8, 2))
    y = X @ [1.0, 1.0] + rng.normal(size=8)
    return ResidualGame(Ridge(alpha=0.5), X, y, X[:2], y[:2])


def _correlated_game():
    """A game whose control (a first-order game) explains most of its variance, with that control: a control
    variate's standard error that ignored the correction would cover far more than 95% here."""
    rng = np.random.default_rng(3)
    control = FirstOrderGame(rng.normal(size=(8, 2)), empty=[0.0, 0.0], full=[1.0, -1.0])
    weights = rng.normal(size=(8, 2))
    game = FunctionGame(lambda masks: control.value_function(masks) + 0.3 * np.sin(masks @ weights), 8, 2)
    return game, control


ESTIMATORS = {
    "plain": lambda seed, units, control: PermutationApproximator(units, antithetic=False, random_state=seed,
                                                                  silent=True),
    "antithetic": lambda seed, units, control: PermutationApproximator(2 * units, random_state=seed, silent=True),
    "stratified": lambda seed, units, control: PermutationApproximator(4 * units, antithetic=False, strata=4,
                                                                       random_state=seed, silent=True),
    "control variate": lambda seed, units, control: ControlVariateApproximator(
        2 * units, coefficient="player", control=control, random_state=seed),
    "control variate, pooled": lambda seed, units, control: ControlVariateApproximator(
        2 * units, coefficient="pooled", control=control, random_state=seed),
    "place strata": lambda seed, units, control: PlaceStratifiedApproximator(2 * units, control=None,
                                                                             random_state=seed),
    "place strata, control variate": lambda seed, units, control: PlaceStratifiedApproximator(
        2 * units, control=control or "auto", random_state=seed),
}
CONTROLLED = ["control variate", "control variate, pooled", "place strata, control variate"]


def _coverage(name: str, seeds: int, units: int = 40, correlated: bool = False) -> float:
    """Share of the nominal 95% intervals (1.96 standard errors) that hold the exact value, over seeds."""
    game, control = _correlated_game() if correlated else (_small_game(), None)
    exact = ExactApproximator().estimate(game).values
    covered = []
    for seed in range(seeds):
        r = ESTIMATORS[name](seed, units, control).estimate(game)
        covered.append(np.abs(r.values - exact) <= 1.96 * r.standard_errors)
    return float(np.mean(covered))


@pytest.mark.parametrize(("name", "correlated"), [("stratified", False), ("place strata", False),
                                                  ("control variate", True), ("place strata, control variate", True)])
def test_nominal_95_intervals_cover_quick(name, correlated):
    """A quick sweep of the new estimators (30 seeds x 16 intervals): a broken standard error (the shifts of a
    stratified unit taken as independent draws, the control variate's raw variance) lands outside the band."""
    assert 0.88 <= _coverage(name, 30, correlated=correlated) <= 0.99


def _coverage_cases() -> list:
    return [(name, False) for name in ESTIMATORS] + [(name, True) for name in CONTROLLED]


@pytest.mark.slow
@pytest.mark.parametrize(("name", "correlated"), _coverage_cases())
def test_nominal_95_intervals_cover_93_to_97_percent(name, correlated):
    """600 seeds x 16 intervals of 100 units each, on the ridge game (its own first-order control) and on the
    correlated game (its given control)."""
    assert 0.93 <= _coverage(name, 600, units=100, correlated=correlated) <= 0.97


@pytest.mark.parametrize("antithetic", [False, True])
def test_stratified_standard_errors_are_over_whole_units(antithetic):
    """Values and standard errors equal the mean and standard error of the unit means computed by hand from the
    same draws: the shifts (and reverses) of a unit are one draw, not several."""
    game, _ = _correlated_game()
    m, strata, units = 8, 4, 6
    r = PermutationApproximator(units * strata * (2 if antithetic else 1), antithetic=antithetic, strata=strata,
                                random_state=5, silent=True).estimate(game)
    orders = stratified_permutations(np.random.default_rng(5), units, m, strata, antithetic)
    ranks = np.argsort(orders, axis=1)
    masks = ranks[:, None, :] < np.arange(m + 1)[None, :, None]
    prefixes = game(masks.reshape(-1, m)).reshape(len(orders), m + 1, 2)
    contributions = np.empty((len(orders), m, 2))
    np.put_along_axis(contributions, orders[:, :, None], np.diff(prefixes, axis=1), axis=1)
    means = contributions.reshape(units, -1, m, 2).mean(axis=1)
    assert np.allclose(r.values, means.mean(axis=0))
    assert np.allclose(r.standard_errors, means.std(axis=0, ddof=1) / np.sqrt(units))


def test_stratified_draws_do_not_depend_on_how_they_are_split():
    rng_one, rng_two = np.random.default_rng(2), np.random.default_rng(2)
    whole = stratified_permutations(rng_one, 5, 9, strata=3, antithetic=True)
    parts = [stratified_permutations(rng_two, k, 9, strata=3, antithetic=True) for k in (1, 4)]
    assert np.array_equal(whole, np.vstack(parts))


def test_place_strata_refuse_bad_arguments_and_report_their_draws():
    game = _small_game()
    bad = [({"boundaries": [0, 4, 2, 8]}, "boundaries"), ({"boundaries": [1, 8]}, "boundaries"),
           ({"pilot": 1}, "pilot"), ({"n_permutations": 1}, "budget"), ({"control": "first"}, "control")]
    for kwargs, match in bad:
        with pytest.raises(ValueError, match=match):
            PlaceStratifiedApproximator(**{"n_permutations": 40, **kwargs}).estimate(game)
    r = PlaceStratifiedApproximator(40, boundaries=[0, 2, 8], random_state=0).estimate(game)
    assert r.info["strata"] == [[0, 2], [2, 8]] and min(r.info["draws"]) >= 8 and r.info["control"] == "FirstOrderGame"
    assert r.n_evaluations <= 40 * 9 + 2  # the budget, and v(empty), v(all) once


def test_explainer_place_strata_aggregate_against_enumeration():
    """``approximator="place-stratified"`` on the aggregate game of 13 rows: every value within 4 standard errors of
    exact enumeration, efficiency exact, and the estimator named on the result."""
    from sklearn.datasets import load_diabetes

    from shap_instances import InstanceKernelExplainer

    X, y = load_diabetes(return_X_y=True)
    X, y = X[:13], y[:13]
    kwargs = {"random_state": 0, "silent": True}
    exact = InstanceKernelExplainer(Ridge(), X, y=y, approximator="exact", **kwargs).aggregate(weights=["sign", "mean"])
    explainer = InstanceKernelExplainer(Ridge(), X, y=y, approximator="place-stratified", n_permutations=300, **kwargs)
    sampled = explainer.aggregate(weights=["sign", "mean"])
    assert explainer.result_.approximator == "place-stratified" and explainer.result_.info["control"]
    z = np.abs(sampled.values - exact.values) / sampled.error_std
    assert z.max() < 4 and 0.3 < np.sqrt(np.mean(z**2)) < 1.5  # errors the size of the standard errors
    np.testing.assert_allclose(sampled.values.sum(axis=1), exact.values.sum(axis=1), atol=1e-10)


def test_place_strata_draws_cut_the_walk_and_keep_the_budget():
    """A ridge game's draws walk only their stratum's prefixes (cuts_walks), the first places are uniform without
    repeats, and max_time stops the allocation while the pilot completes."""
    from shap_instances.approximators import cuts_walks, random_permutations

    assert cuts_walks(Ridge()) and cuts_walks(LogisticRegression())
    places = random_permutations(np.random.default_rng(0), 20000, 50, first=3)
    assert all(len(set(row)) == 3 for row in places[:500])
    counts = np.bincount(places[:, 0], minlength=50)  # each player first with probability 1/50
    assert abs(counts - 400).max() < 5 * np.sqrt(400)
    rng = np.random.default_rng(1)
    X = rng.normal(size=(300, 3))
    game = ResidualGame(Ridge(), X, X @ [1.0, 2.0, 0.0] + rng.normal(size=300)).aggregate(np.full(300, 1 / 300))
    r = PlaceStratifiedApproximator(40, random_state=0).estimate(game)
    assert r.n_evaluations <= 40 * 301 + 2 and r.converged and r.info["stopped_by"] is None
    cut = PlaceStratifiedApproximator(4000, random_state=0, max_time=0.0).estimate(game)
    assert cut.info["stopped_by"] == "max_time" and not cut.converged and cut.info["draws"] == [8] * 10


def test_the_forest_control_is_the_equal_multiplicity_forest_and_its_closed_form_is_exact():
    """The fixed-structure forest's control game: every in-bag row counted once (not the game itself), exact
    Shapley values by the O(|M|) closed form, checked by enumeration of all 2^9 coalitions."""
    from sklearn.ensemble import RandomForestRegressor

    from shap_instances.approximators import control_game

    rng = np.random.default_rng(4)
    X, y = rng.normal(size=(9, 2)), rng.normal(size=9)
    game = ResidualGame(RandomForestRegressor(n_estimators=6, min_samples_leaf=3, random_state=1), X, y,
                        refit="fixed_structure")
    control = control_game(game)
    assert ControlVariateApproximator.supports(game) and set(np.unique(control.fast_path.mass)) <= {0.0, 1.0}
    np.testing.assert_allclose(control.closed_form_values(), ExactApproximator().estimate(control).values,
                               atol=1e-12)
    assert not np.allclose(control.closed_form_values(), game.closed_form_values())  # bootstrap weights differ
    np.testing.assert_array_equal(game.fast_path.mass > 0, control.fast_path.mass > 0)  # the game is untouched
    assert game.fast_path.mass.max() > 1


def test_the_forest_control_keeps_a_cache_of_its_own():
    """A caching game's control evaluates its own forest: a shallow copy would share the game's cache and return
    the game's values for the coalitions the game had evaluated."""
    from sklearn.ensemble import RandomForestRegressor

    from shap_instances.approximators import control_game

    rng = np.random.default_rng(4)
    X, y = rng.normal(size=(9, 2)), rng.normal(size=9)
    game = ResidualGame(RandomForestRegressor(n_estimators=6, min_samples_leaf=3, random_state=1), X, y,
                        refit="fixed_structure")
    game.cache = True
    full = game.full_value  # cached in the game
    control = control_game(game)
    own = control.fast_path.residuals(np.ones(9, dtype=bool))
    assert not np.allclose(own, full)
    np.testing.assert_array_equal(control.full_value, own)


def test_the_forest_control_variate_beats_antithetic_sampling_3x_with_honest_errors():
    """On diabetes (50 trees, min_samples_leaf=10, the aggregate game) the control variate's error against the
    closed form is at least 3x below antithetic sampling's with the same permutations (about 10x measured), and
    its standard errors match its errors."""
    from sklearn.datasets import load_diabetes
    from sklearn.ensemble import RandomForestRegressor

    X, y = load_diabetes(return_X_y=True)
    game = ResidualGame(RandomForestRegressor(n_estimators=50, min_samples_leaf=10, random_state=0), X, y,
                        refit="fixed_structure").aggregate(np.full(len(y), 1.0 / len(y)))
    exact = game.closed_form_values()
    plain, corrected, z = [], [], []
    for seed in (1, 2, 3):
        plain.append(PermutationApproximator(32, random_state=seed, silent=True).estimate(game).values - exact)
        result = ControlVariateApproximator(32, random_state=seed).estimate(game)
        corrected.append(result.values - exact)
        z.append(corrected[-1] / result.standard_errors)
    ratio = np.sqrt(np.mean(np.square(plain)) / np.mean(np.square(corrected)))
    assert ratio > 3, ratio
    assert 0.7 < np.sqrt(np.mean(np.square(z))) < 1.4


def test_the_explainer_takes_the_forest_closed_form_by_default_and_says_so(capsys):
    from sklearn.ensemble import RandomForestRegressor

    from shap_instances import InstanceKernelExplainer

    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(30, 2)), rng.normal(size=30)
    explainer = InstanceKernelExplainer(RandomForestRegressor(n_estimators=5, min_samples_leaf=3, random_state=0), X,
                                        y=y, refit="fixed_structure")
    explanation = explainer(X[:4], y[:4])
    assert "plan: exact Shapley values in closed form (FixedForest) for 30 training rows" in capsys.readouterr().err
    assert explainer.result_.approximator.startswith("closed form") and explanation.values.shape == (4, 30)


def test_label_share_game_stratum_means_equal_enumeration():
    """``place_values`` of every stratum against enumeration of the places (7 players, labels of both kinds,
    two outputs), and the prefix values against the value function on the prefixes' masks."""
    from itertools import permutations as orders
    from math import factorial

    rng = np.random.default_rng(4)
    labels = np.array([1, 0, 0, 1, 1, 0, 1])
    game = LabelShareGame(labels, scale=rng.normal(size=2), shift=rng.normal(size=2), empty=rng.normal(size=2))
    by_place = np.zeros((7, 7, 2))  # place, player, output
    for order in orders(range(7)):
        values = game.prefix_values(np.array([order]))[0]
        for place, player in enumerate(order):
            by_place[place, player] += values[place + 1] - values[place]
    by_place /= factorial(7)
    for lo, hi in [(0, 1), (1, 2), (2, 4), (4, 7), (0, 7)]:
        np.testing.assert_allclose(game.place_values(lo, hi), by_place[lo:hi].sum(axis=0), atol=1e-12)
    masks = np.arange(8)[:, None] > np.argsort(np.array(list(orders(range(7)))[100]))[None, :]
    np.testing.assert_allclose(game.prefix_values(np.array([list(orders(range(7)))[100]]))[0], game(masks))


@pytest.mark.parametrize("aggregate", [False, True])
def test_label_share_game_is_the_logistic_game_when_the_penalty_holds_the_slopes_at_zero(aggregate):
    """With C tiny the l2 logistic fit is its intercept, logit(share of label 1): the residual game and its
    label-share control then agree on every coalition (the scale, shift and empty value wired right)."""
    rng = np.random.default_rng(5)
    X, y = rng.normal(size=(9, 2)), np.array([0, 1, 1, 0, 1, 0, 0, 1, 1])
    game = ResidualGame(LogisticRegression(C=1e-9), X, y)
    if aggregate:
        game = game.aggregate(rng.normal(size=(9, 2)))
    control = label_share_game(game)
    masks = rng.random((40, 9)) < 0.5
    np.testing.assert_allclose(control(masks), game(masks), atol=1e-6)
    assert label_share_game(ResidualGame(Ridge(), X, y.astype(float))) is None


def test_place_strata_take_the_label_share_control_early_and_the_first_order_one_late():
    """On a binary logistic game the few-row strata keep the label-share control, the long ones the first-order
    game (their pilot draws vary least so), and the estimate stays within 4 standard errors of a long run."""
    from sklearn.datasets import load_breast_cancer

    X, y = load_breast_cancer(return_X_y=True)
    X = (X[:120] - X[:120].mean(0)) / X[:120].std(0)
    game = ResidualGame(LogisticRegression(C=1.0), X[:, :5], y[:120]).aggregate(np.full(120, 1 / 120))
    result = PlaceStratifiedApproximator(64, random_state=0).estimate(game)
    controls = result.info["controls"]
    assert controls[2] == "LabelShareGame" and controls[-1] == "FirstOrderGame", controls
    reference = PlaceStratifiedApproximator(600, random_state=1).estimate(game)
    z = (result.values - reference.values) / np.hypot(result.standard_errors, reference.standard_errors)
    assert np.abs(z).max() < 4.5


def test_label_share_hypergeometric_law_equals_scipys_on_and_off_its_support():
    from scipy.stats import hypergeom

    from shap_instances.approximators.control_variate import _hypergeometric

    size, ones = np.arange(0, 40)[:, None], np.arange(-1, 42)[None, :]
    for population, marked in ((60, 25), (60, 0), (60, 60), (41, 40)):
        law = _hypergeometric(ones, population, marked, size)
        np.testing.assert_allclose(law, hypergeom.pmf(ones, population, marked, size), rtol=1e-12, atol=1e-300)
        np.testing.assert_allclose(law.sum(axis=1), 1.0, rtol=1e-12)


def test_place_strata_on_walks_started_at_their_stratum_equal_whole_walks(monkeypatch):
    """The logistic path's walks started at a stratum's first place (``starts_walks``) change the time, not the
    estimate: the same draws give the values and standard errors of walks from the empty prefix, within the path's
    tolerance, for fewer evaluations."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    y = (X[:, 0] + rng.normal(size=40) > 0).astype(float)
    game = ResidualGame(LogisticRegression(C=1.0), X, y, X[:6] + 0.1, y[:6]).aggregate(np.full(6, 1 / 6))
    started = PlaceStratifiedApproximator(60, random_state=5).estimate(game)
    monkeypatch.setattr(LogisticPath, "starts_walks", False)
    whole = PlaceStratifiedApproximator(60, random_state=5).estimate(game)
    assert started.info["draws"] == whole.info["draws"] and started.info["controls"] == whole.info["controls"]
    np.testing.assert_allclose(started.values, whole.values, rtol=0, atol=10 * LogisticPath.tol)
    np.testing.assert_allclose(started.standard_errors, whole.standard_errors, rtol=1e-4)
    assert started.n_evaluations < whole.n_evaluations
