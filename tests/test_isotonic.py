"""Sparse Isotonic Shapley Regression: kernels vs NumPy twins, closed forms, recovery, the explainer."""

import warnings

import numpy as np
import pytest
import shap
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import isotonic_regression
from sklearn.linear_model import LinearRegression

from shap_instances import IsotonicShapleyExplainer
from shap_instances.approximators import ExactApproximator
from shap_instances.approximators._weights import kernel_weights, shapley_weights
from shap_instances.exceptions import DataValidationError, UnsupportedModelError
from shap_instances.games import FunctionGame
from shap_instances.isotonic import gram_eigenvalue, sisr, sisr_from_samples
from shap_instances.isotonic._kernels import (
    coalition_sums,
    gradient_and_loss,
    shapley_from_codes,
    transposed_sums,
    weighted_pava,
)
from shap_instances.isotonic._sisr import _gram_matrix, _IsotonicStep, _niht_block, _sphere_minimum


def incidence(p):
    return ((np.arange(2**p)[:, None] >> np.arange(p)) & 1).astype(float)


@pytest.mark.parametrize("p", [2, 3, 4, 7, 9])
def test_gram_closed_form_matches_brute_force(p):
    z = incidence(p)
    weights = kernel_weights(p)[z.sum(1).astype(int)]
    gram = z.T @ (weights[:, None] * z)
    harmonic = lambda n: sum(1 / k for k in range(1, n + 1))  # noqa: E731
    assert np.allclose(np.diag(gram), (p - 1) * harmonic(p - 1) / p)
    if p > 2:
        assert np.allclose(gram[0, 1], ((p - 1) * harmonic(p - 2) - (p - 2)) / p)
    assert np.isclose(np.linalg.eigvalsh(gram)[-1], gram_eigenvalue(p))
    gram_full = gram + 0.3 * np.ones((p, p))
    assert np.isclose(np.linalg.eigvalsh(gram_full)[-1], gram_eigenvalue(p, full_weight=0.3))
    np.testing.assert_allclose(_gram_matrix(p, 0.3), gram_full, atol=1e-12)


@settings(max_examples=40)
@given(st.lists(st.tuples(st.floats(-5, 5), st.floats(0.01, 3)), min_size=1, max_size=60))
def test_pava_matches_scipy(pairs):
    y, w = (np.array(a) for a in zip(*pairs))
    np.testing.assert_allclose(weighted_pava(y, w), isotonic_regression(y, weights=w).x, atol=1e-10)


@pytest.mark.parametrize("p", [6, 13, 21, 34])  # one chunk of bits; two of 7; three of 7; four of 9
def test_bit_kernels_match_dense_incidence_matrix(p):
    rng = np.random.default_rng(p)
    codes = np.arange(2**p, dtype=np.int64) if p <= 13 else rng.integers(0, 2**p, size=3000, dtype=np.int64)
    z = ((codes[:, None] >> np.arange(p)) & 1).astype(float)
    gamma = np.where(rng.random(p) < 0.5, rng.normal(size=p), 0.0)
    weights, t = rng.random(codes.size), rng.normal(size=codes.size)
    np.testing.assert_allclose(coalition_sums(codes, gamma), z @ gamma, atol=1e-12)
    np.testing.assert_allclose(transposed_sums(codes, weights, t, p), z.T @ (weights * t), atol=1e-10)
    gradient, loss = gradient_and_loss(codes, weights, t, gamma, p)
    np.testing.assert_allclose(gradient, z.T @ (weights * (z @ gamma - t)), atol=1e-10)
    assert np.isclose(loss, np.sum(weights * (t - z @ gamma) ** 2))


def test_shapley_from_codes_matches_exact_enumeration():
    p = 6
    values = np.random.default_rng(0).normal(size=2**p)
    game = FunctionGame(lambda m: values[m.astype(np.int64) @ (1 << np.arange(p))], p)
    np.testing.assert_allclose(shapley_from_codes(values, p, *shapley_weights(p)),
                               ExactApproximator().estimate(game).values[:, 0], atol=1e-12)


def test_additive_sparse_game_gives_normalised_shapley_and_linear_transform():
    beta = np.array([2.0, 0.0, -1.0, 0.0, 0.5, 0.0])
    v = incidence(6) @ beta
    result = sisr(v, sparsity=3)
    np.testing.assert_allclose(result.gamma, beta / np.linalg.norm(beta), atol=1e-8)
    np.testing.assert_allclose(result.transform_values, v / np.linalg.norm(beta), atol=1e-8)  # linear T


TRANSFORMS = {  # name: (T, T^{-1}); payoffs are v = T^{-1}(sum_A gamma + noise), SISR must learn T
    "5th root": (lambda x: np.sign(x) * np.abs(x) ** 0.2, lambda y: np.sign(y) * np.abs(y) ** 5),
    "sqrt": (np.sqrt, np.square),
    "cube": (lambda x: x**3, np.cbrt),
    "exp": (np.exp, lambda y: np.log(y + 1.0)),
    "log": (np.log1p, np.expm1),
}


def transformed_game(p, s, transform, noise, seed):
    rng = np.random.default_rng(seed)
    gamma = np.zeros(p)
    support = rng.choice(p, s, replace=False)
    gamma[support] = rng.uniform(0.3, 1.0, s)
    gamma /= np.linalg.norm(gamma)
    transformed = incidence(p) @ gamma + noise * rng.normal(size=2**p)
    transformed[0] = 0.0
    return TRANSFORMS[transform][1](np.maximum(transformed, 0.0)), gamma


@settings(max_examples=30)
@given(transform=st.sampled_from(sorted(TRANSFORMS)), p=st.integers(6, 10), s=st.integers(1, 3),
       noise=st.sampled_from([0.0, 1e-3, 5e-3]), seed=st.integers(0, 1000))
def test_recovers_monotone_transformed_sparse_games(transform, p, s, noise, seed):
    v, truth = transformed_game(p, s, transform, noise, seed)
    result = sisr(v, sparsity=s)
    assert np.count_nonzero(result.gamma) <= s
    assert np.isclose(np.linalg.norm(result.gamma), 1.0)
    assert set(result.support) == set(np.flatnonzero(truth))
    assert np.all(np.sign(result.gamma[result.support]) == np.sign(truth[result.support]))
    support = np.flatnonzero(truth)
    assert np.array_equal(np.argsort(truth[support]), np.argsort(result.gamma[support]))  # ranks preserved
    if s >= 3:
        # with s <= 2 there are at most four distinct subset sums, and every gamma ordering them like the
        # payoffs fits exactly: gamma is not identified, so only support, signs and ranks are asserted
        assert result.gamma @ truth > 0.98
    history = np.array(result.objective_history)
    assert np.all(np.diff(history) <= 1e-9 * max(1.0, history[0]))  # the convergence theorem


def test_max_game_support_and_ranks():
    # No cosine here: the max is not identifiable. It is the d -> infinity limit of the l_d-ball payoff
    # ||beta_A||_d = T^{-1}(sum_A beta_j^d) (T(x) = x^d), whose gamma* = beta^d / ||beta^d|| tends to e_1, the
    # winner alone; and no finite gamma is exact for the max itself: {2} and {2, 4} have the same payoff, so
    # any T forces gamma_4 = 0, yet {} and {4} differ, so gamma_4 > 0 for a strictly increasing T. With no
    # truth to take a cosine with, support and ranks are what the max determines; the identifiable
    # neighbour (finite d) gets the cosine check below.
    beta = np.array([3.0, 0.0, 2.0, 0.0, 1.0, 0.0, 0.0])
    z = incidence(7).astype(bool)
    v = np.where(z, beta, 0.0).max(axis=1)  # Fryer's winner-takes-all payoff
    result = sisr(v, sparsity=3)
    assert set(result.support) == {0, 2, 4}
    assert np.argsort(-result.gamma)[:3].tolist() == [0, 2, 4]  # ranks preserved


def test_lp_ball_payoff_towards_the_max_has_cosine():
    beta = np.array([3.0, 0.0, 2.5, 0.0, 2.0, 0.0, 0.0])
    d = 4.0  # v_A = ||beta_A||_d: the max is d -> infinity; gamma* = beta^d, normalised
    v = (incidence(7) @ beta**d) ** (1 / d)
    truth = beta**d / np.linalg.norm(beta**d)
    result = sisr(v, sparsity=3)
    assert set(result.support) == {0, 2, 4}
    assert result.gamma @ truth > 0.98 > truth[0]  # better than the winner alone


def test_tied_players_get_support_and_ranks_not_unique_values():
    beta = np.array([1.0, 1.0, 0.0, 0.5, 0.0])
    v = np.cbrt(incidence(5) @ beta)
    result = sisr(v, sparsity=3)
    assert set(result.support) == {0, 1, 3}
    assert min(result.gamma[0], result.gamma[1]) > result.gamma[3] > 0


def test_shapley_start_avoids_degenerate_solutions_of_the_zero_start():
    v, truth = transformed_game(10, 3, "5th root", 0.0, seed=3)
    from_shapley = sisr(v, sparsity=3)
    from_zero = sisr(v, sparsity=3, init="zero")
    assert from_shapley.gamma @ truth > from_zero.gamma @ truth


def test_ric_and_sampled_variant():
    v, truth = transformed_game(8, 2, "sqrt", 5e-3, seed=4)
    result = sisr(v, sparsity="ric")
    assert set(result.criterion) == set(range(1, 9))
    assert set(np.flatnonzero(truth)) <= set(result.support)
    rng = np.random.default_rng(0)
    masks = rng.random((3000, 24)) < 0.5
    gamma = np.zeros(24)
    gamma[[3, 17]] = [0.8, 0.6]
    payoffs = (masks @ gamma) ** 3
    sampled = sisr_from_samples(masks, payoffs, np.ones(len(masks)), sparsity=2)
    assert set(sampled.support) == {3, 17} and sampled.gamma @ gamma > 0.98


def corrupted_cube_game():
    """The cube game of the Huber tests with five payoffs multiplied by 50 (three of them non-zero)."""
    v, truth = transformed_game(8, 2, "cube", 0.0, seed=5)
    corrupted = v.copy()
    corrupted[np.random.default_rng(1).choice(np.arange(1, 255), 5, replace=False)] *= 50
    return corrupted, truth


def test_huber_variant_resists_outlying_payoffs():
    corrupted, truth = corrupted_cube_game()
    squared = sisr(corrupted, sparsity=2)
    robust = sisr(corrupted, sparsity=2, loss="huber")
    support = np.flatnonzero(truth)
    assert set(robust.support) == set(support)
    assert np.array_equal(np.sign(robust.gamma[support]), np.sign(truth[support]))  # was -0.13: a flipped sign
    assert robust.gamma @ truth > 0.95
    assert robust.gamma @ truth >= squared.gamma @ truth - 0.01  # measured: 0.990 against 0.976
    history = np.array(robust.objective_history)  # the Huber objective: majorise-minimise, never increases
    assert np.all(np.diff(history) <= 1e-12 * history[0])


def test_huber_keeps_the_signs_where_outliers_bend_the_squared_fit():
    # Four coalitions of a sqrt game (p = 6, s = 3) replaced by +-10 times the largest payoff: the squared
    # loss drops to cosine 0.74, the Huber variant keeps every sign and 0.93.
    v, truth = transformed_game(6, 3, "sqrt", 0.0, seed=0)
    rng = np.random.default_rng(100)
    outliers = rng.choice(np.arange(1, 63), 4, replace=False)
    corrupted = v.copy()
    corrupted[outliers] = np.where(rng.random(4) < 0.5, 10.0, -10.0) * np.abs(v).max()
    squared, robust = sisr(corrupted, sparsity=3), sisr(corrupted, sparsity=3, loss="huber")
    support = np.flatnonzero(truth)
    assert np.array_equal(np.sign(robust.gamma[support]), np.sign(truth[support]))
    assert robust.gamma @ truth > 0.9 and robust.gamma @ truth > squared.gamma @ truth + 0.1


@pytest.mark.parametrize("transform, p, s, seed", [("cube", 8, 3, 0), ("sqrt", 9, 3, 3), ("5th root", 7, 2, 1),
                                                   ("exp", 10, 3, 4)])
def test_huber_matches_squared_loss_on_clean_games(transform, p, s, seed):
    v, truth = transformed_game(p, s, transform, 5e-3, seed)
    squared, robust = sisr(v, sparsity=s), sisr(v, sparsity=s, loss="huber")
    assert robust.gamma @ truth >= squared.gamma @ truth - 1e-3
    assert np.isclose(np.linalg.norm(robust.gamma), 1.0) and np.count_nonzero(robust.gamma) <= s


@pytest.mark.parametrize(
    "values, sparsity, match",
    [(np.zeros(6), 1, "length 2"), (np.array([0.0, np.nan]), 1, "NaN"), (np.zeros(8), 4, "sparsity must be"),
     (np.arange(8.0), 0, "sparsity must be"), (np.arange(8.0), 2.5, "sparsity must be"),
     (np.arange(8.0), 2.0, "sparsity must be"), (np.arange(8.0), True, "sparsity must be"),
     (np.arange(8.0), None, "sparsity must be"), (np.arange(8.0), "bad", "sparsity must be"),
     (np.arange(8.0), -1, "sparsity must be")],
)
def test_bad_input(values, sparsity, match):
    with pytest.raises(DataValidationError if "sparsity" in match else ValueError, match=match):
        sisr(values, sparsity=sparsity)


def test_sparsity_accepts_ints_and_ric_in_any_case():
    v = incidence(3) @ np.array([1.0, 0.5, 0.0])
    assert sisr(v, np.int64(2)).sparsity == 2
    assert sisr(v, "RIC").criterion and sisr(v, "Ric").sparsity in (1, 2, 3)


@pytest.mark.parametrize("options, match", [
    (dict(init="foo"), "init must be"), (dict(full_weight=-0.5), "full_weight"),
    (dict(full_weight="1"), "full_weight"), (dict(loss="l1"), "loss must be"),
    (dict(loss="huber", huber_delta=0.0), "huber_delta"), (dict(min_slope=-1.0), "min_slope"),
    (dict(n_restarts=1.5), "n_restarts"), (dict(gamma_step="iht"), "gamma_step must be"),
    (dict(ric_n=10), "ric_n must be"),
])
def test_bad_options_raise_clear_errors(options, match):
    with pytest.raises(DataValidationError, match=match):
        sisr(np.arange(8.0), 2, **options)


def test_zero_full_weight_is_kept():
    v = np.sqrt(incidence(4) @ np.array([2.0, 1.0, 0.0, 0.0]))
    assert sisr(v, 2, full_weight=0.0).weights[-1] == 0.0  # was silently turned into 1.0
    assert sisr(v, 2, full_weight=1.0).weights[-1] == 1.0
    assert sisr(v, 2).weights[-1] == kernel_weights(4)[1]


def test_sampled_variant_checks_lengths():
    masks = np.random.default_rng(0).random((10, 4)) < 0.5
    with pytest.raises(DataValidationError, match="payoffs must be 1-D with one entry per row of masks"):
        sisr_from_samples(masks, np.ones(9), np.ones(10), 2)
    with pytest.raises(DataValidationError, match="weights must be 1-D"):
        sisr_from_samples(masks, np.ones(10), np.ones(11), 2)
    with pytest.raises(DataValidationError, match="non-negative"):
        sisr_from_samples(masks, np.ones(10), -np.ones(10), 2)
    with pytest.raises(DataValidationError, match="masks must be a 2-D"):
        sisr_from_samples(masks[0], np.ones(4), np.ones(4), 2)


@pytest.mark.parametrize("values, s", [([0.0, 1.0, 1.0, 0.0], 1), ([0.0, 1.0, 1.0, 0.0], 2),
                                       ([0.0, 1.0, 1.0, -1.0, 1.0, -1.0, -1.0, 0.0], 2)])
def test_games_with_zero_shapley_values_still_get_a_unit_gamma(values, s):
    result = sisr(values, s)
    assert np.allclose(result.shapley_values, 0.0)  # plain Shapley sees nothing
    assert np.isclose(np.linalg.norm(result.gamma), 1.0) and np.count_nonzero(result.gamma) <= s  # was gamma = 0
    history = np.array(result.objective_history)
    assert np.all(np.diff(history) <= 1e-12 * max(1.0, history[0]))
    assert not sisr(np.zeros(8), 2).gamma.any()  # all payoffs zero: nothing to attribute (documented)


def test_explainer_uses_shap_payoffs_and_independent_enumeration():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(100, 4))
    model = LinearRegression().fit(X, np.exp(X[:, 0] + 0.5 * X[:, 2]))
    background = X[:20]
    explainer = IsotonicShapleyExplainer(model, background, sparsity=2)
    explanation = explainer(X[:2])
    assert isinstance(explanation, shap.Explanation) and explanation.values.shape == (2, 4)
    x = X[1]
    codes = np.arange(16)
    table = np.array([model.predict(np.where((c >> np.arange(4)) & 1, x, background)).mean() for c in codes])
    np.testing.assert_allclose(explainer.results_[1].payoffs, table - table[0], atol=1e-12)
    np.testing.assert_allclose(explanation.values[1], sisr(table, sparsity=2).gamma, atol=1e-12)
    np.testing.assert_allclose(explanation.base_values + explanation.values.sum(1), explanation.values.sum(1))


def test_from_game():
    game = FunctionGame(lambda m: np.sqrt(m @ np.array([4.0, 1.0, 0.0, 0.0, 0.0])), 5)
    explanation = IsotonicShapleyExplainer.from_game(game, sparsity=2)()
    assert np.flatnonzero(explanation.values[0]).tolist() == [0, 1]


@settings(max_examples=10)
@given(st.integers(1, 5), st.integers(0, 1000))
def test_sphere_minimum_against_dense_search(k, seed):
    rng = np.random.default_rng(seed)
    a = rng.normal(size=(k, k))
    gram, linear = a @ a.T + 0.1 * np.eye(k), rng.normal(size=k)
    best = _sphere_minimum(gram, linear)
    assert np.isclose(np.linalg.norm(best), 1.0)
    candidates = rng.normal(size=(20000, k))
    candidates /= np.linalg.norm(candidates, axis=1, keepdims=True)
    objective = lambda g: g @ gram @ g - 2 * linear @ g  # noqa: E731
    assert objective(best) <= min(objective(c) for c in candidates) + 1e-9


def test_explainer_payoffs_and_shapley_values_match_shap_exact():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(40, 5))

    def model(data):  # non-additive: shap's Exact and our enumeration must agree coalition by coalition
        return np.exp(0.7 * data[:, 0] - 0.4 * data[:, 3]) + np.tanh(data[:, 1] * data[:, 2]) + 0.3 * data[:, 4]

    background = X[:12]
    masker = shap.maskers.Independent(background, max_samples=len(background))
    explainer = IsotonicShapleyExplainer(model, masker, sparsity=3)
    explained = X[20:23]
    explanation = explainer(explained)
    reference = shap.explainers.Exact(model, masker)(explained)
    codes = np.arange(2**5)
    for i, x in enumerate(explained):
        result = explainer.results_[i]
        table = np.array([model(np.where((c >> np.arange(5)) & 1, x, background)).mean() for c in codes])
        np.testing.assert_allclose(result.payoffs, table - table[0], rtol=0, atol=1e-10)
        np.testing.assert_allclose(result.shapley_values, reference.values[i], rtol=0, atol=1e-10)
        np.testing.assert_allclose(table[0], reference.base_values[i], rtol=0, atol=1e-10)
        independent = sisr(table, sparsity=3)  # gamma from payoffs computed without the explainer
        np.testing.assert_allclose(explanation.values[i], independent.gamma, rtol=0, atol=1e-10)
        np.testing.assert_allclose(explainer.transform(i)(table - table[0]), independent.transform_values,
                                   rtol=0, atol=1e-10)


def test_explainer_transform_is_the_fitted_monotone_interpolant():
    game = FunctionGame(lambda m: np.sqrt(m @ np.array([4.0, 1.0, 0.0, 2.0, 0.0])), 5)
    explainer = IsotonicShapleyExplainer.from_game(game, sparsity=3)
    with pytest.raises(RuntimeError, match="call the explainer first"):
        explainer.transform(0)
    explainer()
    result = explainer.results_[0]
    transform = explainer.transform(0)
    np.testing.assert_allclose(transform(result.payoffs), result.transform_values, atol=1e-12)
    np.testing.assert_allclose(transform(result.payoffs), result.transform(result.payoffs), atol=0)
    grid = np.linspace(result.payoffs.min(), result.payoffs.max(), 50)
    assert np.all(np.diff(transform(grid)) > 0)  # strictly increasing (min_slope)
    np.testing.assert_allclose(transform.inverse(transform(grid)), grid, atol=1e-10)
    np.testing.assert_allclose(transform.inverse(transform(grid)), result.inverse_transform(transform(grid)))
    import matplotlib

    matplotlib.use("Agg")
    ax = explainer.plot_transform(0, show=False)
    assert ax.get_xlabel() == "coalition payoff $v_A$"


def test_explainer_sampled_coalitions_beyond_exact_enumeration():
    # p = 22 > max_exact_features: IsotonicShapleyExplainer samples coalitions (Shapley-kernel design). The model is
    # additive then monotone, f(x) = exp(a . x); with the independent masker
    # v_A = exp(sum_{j in A} c_j) * const, c_j = a_j x_j - log mean(exp(a_j * background_j)): a monotone
    # transform of a sparse additive game with gamma* proportional to c (zero off the active features).
    p, rng = 22, np.random.default_rng(5)
    a = np.zeros(p)
    a[[2, 9, 15]] = [0.9, -0.6, 0.5]
    background = rng.normal(size=(8, p))
    x = np.zeros(p)
    x[[2, 9, 15]] = [1.5, 1.2, -1.4]  # signs of c: +, -, -

    def model(data):
        return np.exp(data @ a)

    c = a * x - np.log(np.exp(a * background).mean(axis=0))
    truth = c / np.linalg.norm(c)
    explainer = IsotonicShapleyExplainer(model, background, sparsity=3, max_evals=3000, random_state=0, silent=True)
    explanation = explainer(x[None, :])
    gamma = explanation.values[0]
    assert explainer.results_[0].payoffs.size <= 3000  # sampled (distinct coalitions), not 2^22
    assert set(np.flatnonzero(gamma)) == {2, 9, 15}
    assert np.array_equal(np.sign(gamma[[2, 9, 15]]), np.sign(truth[[2, 9, 15]]))
    assert gamma @ truth > 0.98


class CountingModel:
    """A linear model that records how many rows it was asked to predict."""

    def __init__(self, n_outputs=1):
        self.rows, self.n_outputs = 0, n_outputs

    def __call__(self, data):
        self.rows += len(data)
        out = data @ np.arange(1.0, data.shape[1] + 1)
        return out if self.n_outputs == 1 else np.column_stack([out] * self.n_outputs)


@pytest.mark.parametrize("sparsity", [2.5, True, None, "bad", 0, 5])
def test_explainer_checks_sparsity_before_evaluating_payoffs(sparsity):
    background = np.random.default_rng(0).normal(size=(10, 4))
    model = CountingModel()
    with pytest.raises(DataValidationError, match="sparsity must be"):
        IsotonicShapleyExplainer(model, background, sparsity=sparsity)
    masker = shap.maskers.Independent(background, max_samples=10)  # a masker: p known only at call time
    if sparsity == 5:
        explainer = IsotonicShapleyExplainer(model, masker, sparsity=5)
        with pytest.raises(DataValidationError, match=r"\[1, 4\]"):
            explainer(background[:2])
    else:
        with pytest.raises(DataValidationError, match="sparsity must be"):
            IsotonicShapleyExplainer(model, masker, sparsity=sparsity)
    with pytest.raises(DataValidationError, match="sparsity must be"):
        IsotonicShapleyExplainer.from_game(FunctionGame(lambda m: m @ np.ones(4), 4), sparsity=sparsity)
    assert model.rows == 0


def test_explainer_checks_sisr_options_up_front():
    background = np.zeros((5, 3))
    with pytest.raises(DataValidationError, match="init must be"):
        IsotonicShapleyExplainer(CountingModel(), background, sparsity=2, init="foo")
    with pytest.raises(TypeError, match="unexpected keyword"):
        IsotonicShapleyExplainer(CountingModel(), background, sparsity=2, sparsty=2)


def test_explainer_refuses_multi_output_models_before_the_coalitions():
    background = np.random.default_rng(0).normal(size=(10, 4))
    model = CountingModel(n_outputs=3)
    explainer = IsotonicShapleyExplainer(model, background, sparsity=2)
    with pytest.raises(UnsupportedModelError, match="one model output per row"):
        explainer(background[:2])
    assert model.rows == 1  # one row checked, not 2^4 coalitions x 10 background rows
    # (n, 1) is fine
    single = IsotonicShapleyExplainer(lambda data: CountingModel(3)(data)[:, :1], background, sparsity=2)
    assert single(background[:1]).values.shape == (1, 4)


def test_explainer_takes_no_y_and_no_positional_options():
    import shap_instances as si

    X = np.random.default_rng(0).normal(size=(30, 3))
    y = X @ np.array([1.0, 0.0, 2.0])
    model = LinearRegression().fit(X, y)
    with pytest.raises(TypeError):
        IsotonicShapleyExplainer(model, X[:10], 2)  # options are keyword only
    with pytest.raises(TypeError, match="y"):
        si.Explainer(model, X[:10], algorithm="isotonic", y=y, sparsity=2)  # SISR explains a payoff: no targets
    explanation = si.Explainer(model, X[:10], algorithm="isotonic", sparsity=2)(X[:1])
    assert set(np.flatnonzero(explanation.values[0])) == {0, 2}


def test_transform_plot_of_a_large_game_needs_no_bit_matrix():
    import tracemalloc

    import matplotlib

    matplotlib.use("Agg")
    from shap_instances.isotonic import SISRResult
    from shap_instances.plots import isotonic_transform

    p = 22  # the old plot built the 2^22 x 22 bit matrix first: 738 MB of int64
    codes = np.arange(2**p, dtype=np.int64)
    gamma = np.zeros(p)
    gamma[[1, 5, 9]] = [0.6, 0.64, 0.48]
    delta = coalition_sums(codes, gamma)
    result = SISRResult(gamma=gamma, transform_values=delta, payoffs=delta**3, codes=codes, weights=np.ones(2**p),
                        sparsity=3, n_iterations=1, objective_history=[0.0])
    tracemalloc.start()
    try:
        ax = isotonic_transform(result, show=False, max_points=2000)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 250e6  # measured 76 MB (the sort behind the T-hat curve), against > 738 MB before
    points = ax.collections[0].get_offsets()
    assert len(points) == 2000
    np.testing.assert_allclose(np.cbrt(points[:, 0]), points[:, 1], atol=1e-9)  # surrogate of the drawn coalitions


def _sklearn_pinned_isotonic(v, y, w):
    """T(0) = 0 pinned: sklearn's isotonic regression (ties in v pooled) on each side of 0, bounded by 0."""
    from sklearn.isotonic import IsotonicRegression

    fit = np.zeros_like(y)
    for side, bounds in ((v < 0, dict(y_max=0.0)), (v > 0, dict(y_min=0.0))):
        if side.any():
            fit[side] = IsotonicRegression(**bounds).fit(v[side], y[side], sample_weight=w[side]).predict(
                v[side])
    return fit


@pytest.mark.parametrize("min_slope, seed", [(0.0, 0), (0.0, 1), (0.0, 2), (0.3, 3)])
def test_isotonic_step_matches_sklearn_with_ties_and_the_pin_at_zero(min_slope, seed):
    """Plain PAVA (min_slope = 0) and the minimum-slope step against sklearn's exact isotonic regression."""
    rng = np.random.default_rng(seed)
    v = rng.integers(-6, 9, size=300).astype(float) / 2  # many ties, both signs, some zeros
    delta, w = rng.normal(size=300) + 0.2 * v, rng.uniform(0.1, 2.0, size=300)
    ours = _IsotonicStep(v, min_slope)(delta, w)
    expected = _sklearn_pinned_isotonic(v, delta - min_slope * v, w) + min_slope * v
    np.testing.assert_allclose(ours, expected, atol=1e-10)
    assert np.all(ours[v == 0] == 0)


def test_niht_iterates_match_the_direct_update():
    """The poster's gamma-step, step by step, against y = g - Z'W(Zg - t)/rho, keep the s largest |y|, normalise."""
    p, s = 5, 2
    rng = np.random.default_rng(4)
    z = incidence(p)
    w = kernel_weights(p)[z.sum(1).astype(int)]
    w[-1] = 1.0 / p
    rho = np.linalg.eigvalsh(z.T @ (w[:, None] * z))[-1]
    t = rng.normal(size=2**p) + z @ np.array([1.0, 0.0, 0.5, 0.0, 0.2])
    codes = np.arange(2**p, dtype=np.int64)
    gamma = np.zeros(p)
    for step in range(6):
        y = gamma - z.T @ (w * (z @ gamma - t)) / rho
        keep = np.argsort(-np.abs(y))[:s]
        direct = np.zeros(p)
        direct[keep] = y[keep] / np.linalg.norm(y[keep])
        ours = _niht_block(codes, w, t, gamma, p, s, rho, 1, 0.0, None, gram=_gram_matrix(p, 1.0 / p))
        np.testing.assert_allclose(ours, direct, atol=1e-12, err_msg=f"step {step}")
        gamma = direct


def test_poster_algorithm_matches_a_dense_implementation():
    """init="zero", gamma_step="niht", min_slope=0 is the poster's outline: gamma = 0, t = v, NIHT, then PAVA."""
    p, s, inner, outer = 6, 3, 15, 4
    z = incidence(p)
    v = np.sqrt(z @ np.array([3.0, 0.0, 1.0, 0.5, 0.0, 0.0])) + 0.05 * np.random.default_rng(5).random(2**p)
    v[0] = 0.0
    w = kernel_weights(p)[z.sum(1).astype(int)]
    w[-1] = 1.0 / p
    rho = np.linalg.eigvalsh(z.T @ (w[:, None] * z))[-1]
    result = sisr(v, s, init="zero", gamma_step="niht", min_slope=0.0, max_iter=outer, inner_max_iter=inner, tol=0.0)
    gamma, t = np.zeros(p), v.copy()
    history = []
    for k in range(outer + 1):
        for _ in range(inner):
            y = gamma - z.T @ (w * (z @ gamma - t)) / rho
            keep = np.argsort(-np.abs(y))[:s]
            new = np.zeros(p)
            new[keep] = y[keep] / np.linalg.norm(y[keep])
            change, gamma = np.linalg.norm(new - gamma), new
            if change == 0:
                break
        if k > 0:
            history.append(np.sum(w * (t - z @ gamma) ** 2))
        t = _sklearn_pinned_isotonic(v, z @ gamma, w)
        history.append(np.sum(w * (t - z @ gamma) ** 2))
        if k > 0 and history[-3] - history[-1] <= 0:
            break
    np.testing.assert_allclose(result.gamma, gamma, atol=1e-9)
    np.testing.assert_allclose(result.transform_values, t, atol=1e-9)
    np.testing.assert_allclose(result.objective_history, history, rtol=1e-9, atol=1e-12)
    assert history[-1] > 1e-6  # not an exact fit, so the comparison is not between zeros


def _dense_package_sisr(v, s, min_slope=1e-2, max_iter=100, inner_max_iter=20, tol=1e-4):
    """The package's default fit written densely, in the coalitions' own order: Z built, the gradient as
    Z'W(Z g - t) every step, the support by hard thresholding, the exact sphere minimum on it, sklearn's isotonic
    regression for T (slope >= min_slope / ||phi||, T(0) = 0)."""
    p = int(np.log2(v.size))
    z = incidence(p)
    w = kernel_weights(p)[z.sum(1).astype(int)]
    w[-1] = 1.0 / p
    gram = z.T @ (w[:, None] * z)
    rho = np.linalg.eigvalsh(gram)[-1]
    shapley = shapley_from_codes(v, p, *shapley_weights(p))
    slope = min_slope / np.linalg.norm(shapley) * v

    def threshold(y):
        keep = np.sort(np.argsort(-np.abs(y))[:s])
        return keep, y[keep] / np.linalg.norm(y[keep])

    gamma = np.zeros(p)
    keep, gamma[keep] = threshold(shapley)
    t = _sklearn_pinned_isotonic(v, z @ gamma - slope, w) + slope
    history = [np.sum(w * (t - z @ gamma) ** 2)]
    iterations = 0
    while iterations < max_iter:
        iterations += 1
        for _ in range(inner_max_iter):
            support = threshold(gamma - z.T @ (w * (z @ gamma - t)) / rho)[0]
            new = np.zeros(p)
            new[support] = _sphere_minimum(gram[np.ix_(support, support)], (z.T @ (w * t))[support])
            change, gamma = np.linalg.norm(new - gamma), new
            if change < tol:
                break
        history.append(np.sum(w * (t - z @ gamma) ** 2))
        t = _sklearn_pinned_isotonic(v, z @ gamma - slope, w) + slope
        history.append(np.sum(w * (t - z @ gamma) ** 2))
        if history[-3] - history[-1] <= tol * history[-3]:
            break
    return gamma, t, history, iterations


@pytest.mark.parametrize("p, noise, seed", [(4, 0.05, 0), (5, 0.1, 1), (6, 0.02, 2), (7, 0.2, 3), (8, 0.05, 4)])
def test_default_fit_matches_a_dense_natural_order_implementation(p, noise, seed):
    """The fast fit (coalitions sorted by payoff, chunked bit tables, Gram-matrix gradients, fused kernels) equals
    the plain dense alternation in the coalitions' own order, at every s, to round-off; and RIC picks the s of
    the smallest criterion computed from the dense objectives."""
    rng = np.random.default_rng(seed)
    z = incidence(p)
    truth = np.zeros(p)
    truth[rng.choice(p, 2, replace=False)] = rng.uniform(0.3, 1.0, 2)
    v = np.maximum(z @ truth + noise * rng.normal(size=2**p), 0.0) ** 2  # clipped: ties at v = 0, as in the docs
    v[0] = 0.0
    objectives = {}
    for s in range(1, p + 1):
        gamma, t, history, iterations = _dense_package_sisr(v, s)
        result = sisr(v, s)
        np.testing.assert_allclose(result.gamma, gamma, atol=1e-9, err_msg=f"s = {s}")
        np.testing.assert_allclose(result.transform_values, t, atol=1e-9, err_msg=f"s = {s}")
        np.testing.assert_allclose(result.objective_history, history, rtol=1e-8, atol=1e-13)
        assert result.n_iterations == iterations
        objectives[s] = history[-1]
    assert min(objectives.values()) > 1e-12  # noisy: no exact fit, so RIC's logarithms are not of round-off
    w = kernel_weights(p)[z.sum(1).astype(int)]
    w[-1] = 1.0 / p
    n = w.sum() ** 2 / np.sum(w**2)
    criterion = {s: n * np.log(objectives[s] / w.sum()) + 2 * s * np.log(p) for s in objectives}
    assert sisr(v, "ric").sparsity == min(criterion, key=criterion.get)


def test_ric_sample_size_options():
    """The RIC values are n log(loss_s / sum w) + 2 s log p from the fixed-s fits, with either n."""
    p = 5
    z = incidence(p)
    v = np.cbrt(z @ np.array([2.0, 1.0, 0.0, 0.6, 0.0])) + 0.02 * np.random.default_rng(6).normal(size=2**p)
    v[0] = 0.0
    w = kernel_weights(p)[z.sum(1).astype(int)]
    w[-1] = 1.0 / p
    losses = {k: sisr(v, k, max_iter=5).objective for k in range(1, p + 1)}
    for ric_n, n in (("effective", w.sum() ** 2 / np.sum(w**2)), ("coalitions", 2.0**p - 1)):
        result = sisr(v, "ric", ric_n=ric_n, max_iter=5)
        expected = {k: n * np.log(loss / w.sum()) + 2 * k * np.log(p) for k, loss in losses.items()}
        np.testing.assert_allclose([result.criterion[k] for k in expected], list(expected.values()), rtol=1e-10)
        assert result.sparsity == min(expected, key=expected.get)


def test_explainer_passes_the_poster_options_to_sisr():
    game = FunctionGame(lambda m: np.sqrt(m @ np.array([4.0, 1.0, 0.0, 0.5, 0.0])), 5)
    options = dict(init="zero", gamma_step="niht", min_slope=0.0)
    explanation = IsotonicShapleyExplainer.from_game(game, sparsity=2, **options)()
    direct = sisr(np.sqrt(incidence(5) @ np.array([4.0, 1.0, 0.0, 0.5, 0.0])), 2, **options)
    np.testing.assert_allclose(explanation.values[0], direct.gamma, atol=1e-12)
    with pytest.raises(DataValidationError, match="gamma_step"):
        IsotonicShapleyExplainer.from_game(game, sparsity=2, gamma_step="exact")


def test_bound_predict_of_a_dataframe_model_gets_its_column_names():
    """shap users pass ``model.predict``: it is fed the fitted column names (no scikit-learn warning), and the
    values equal those of passing the model itself."""
    import warnings

    from sklearn.datasets import load_diabetes
    from sklearn.linear_model import LinearRegression

    X, y = load_diabetes(return_X_y=True, as_frame=True)
    X = X.iloc[:, :5]
    model = LinearRegression().fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        bound = IsotonicShapleyExplainer(model.predict, X.iloc[:20], silent=True)(X.iloc[:2])
    whole = IsotonicShapleyExplainer(model, X.iloc[:20], silent=True)(X.iloc[:2])
    np.testing.assert_array_equal(bound.values, whole.values)


@pytest.mark.parametrize("scale", [2.0**600, 2.0**-600, 1e200, -1e-200])
def test_sisr_is_the_same_on_payoffs_whose_squares_overflow_or_underflow(scale):
    """SISR is scale-equivariant: payoffs of 1e200 (squares overflow) or 1e-200 (squares underflow) give the gamma
    of the unscaled game (was +-0.707 on every player with an 'overflow in dot' warning)."""
    p = 5
    bits = ((np.arange(2**p)[:, None] >> np.arange(p)) & 1).astype(float)
    v = np.sqrt(bits @ np.array([4.0, 0.0, 1.0, 0.5, 0.0])) + 0.01 * np.random.default_rng(0).normal(size=2**p)
    reference = sisr(v, sparsity=2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no overflow / underflow warning either
        scaled = sisr(v * abs(scale), sparsity=2)
    np.testing.assert_allclose(scaled.gamma, reference.gamma, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(scaled.payoffs, (v * abs(scale)) - v[0] * abs(scale))  # in the caller's units


@pytest.mark.slow
def test_explainer_on_a_background_value_of_minus_1e200():
    """A background cell of -1e200 on feature 1: the payoffs differ by ~1e200 exactly when feature 1 is masked, so
    feature 1 carries all of gamma (as at -1e100), not 0.707 of it."""
    from sklearn.datasets import load_diabetes

    X, y = load_diabetes(return_X_y=True)
    X = X[:, :3]
    model = LinearRegression().fit(X, y)
    background = X[:10].copy()
    background[3, 1] = -1e200
    gamma = IsotonicShapleyExplainer(model.predict, background, sparsity=1, silent=True)(X[:1]).values[0]
    np.testing.assert_allclose(np.abs(gamma), [0.0, 1.0, 0.0], atol=1e-12)


def test_sisr_refuses_payoffs_whose_differences_overflow():
    """Payoffs near float64's largest (1.7e308) are fitted; a payoff minus the empty coalition's that overflows
    (-1.7e308 against 1.7e308) is refused with the reason, not fitted on infinities."""
    p = 4
    bits = ((np.arange(2**p)[:, None] >> np.arange(p)) & 1).astype(float)
    v = bits @ np.array([3.0, 0.0, 1.0, 0.5]) / 4.5 * 1.7e308
    np.testing.assert_allclose(sisr(v, 2).gamma, sisr(v / 1.7e308, 2).gamma, atol=1e-12)
    v[0] = -1.7e308
    with pytest.raises(DataValidationError, match="span more than float64's range.*Rescale"):
        sisr(v, 2)


@pytest.mark.parametrize("values", [[], [0.0], [0.0, 1.0, 2.0], ["a", "b"], [[0.0, 1.0], [2.0]],
                                    [0.0, np.inf, 1.0, 2.0]], ids=["empty", "one", "three", "strings", "ragged", "inf"])
def test_sisr_refuses_malformed_payoffs_by_name(values):
    """Was an OverflowError (empty), numpy's ValueError (strings, ragged) or a bare ValueError."""
    with pytest.raises(DataValidationError, match="coalition_values"):
        sisr(values, 1)


def test_sisr_from_samples_refuses_payoffs_that_are_not_numbers():
    with pytest.raises(DataValidationError, match="payoffs must be numbers"):
        sisr_from_samples(np.ones((3, 2), bool), ["a", "b", "c"], np.ones(3), sparsity=1)
