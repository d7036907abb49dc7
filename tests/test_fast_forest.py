"""The fixed-structure forest game against an independent numpy implementation, enumeration and its own kernels."""

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.base import clone
from sklearn.ensemble import (
    BaggingRegressor,
    ExtraTreesClassifier,
    ExtraTreesRegressor,
    RandomForestClassifier,
    RandomForestRegressor,
)
from sklearn.linear_model import Ridge
from sklearn.tree import DecisionTreeRegressor

from shap_instances.approximators import ExactApproximator
from shap_instances.exceptions import InvalidParameterError, UnsupportedModelError
from shap_instances.forest import FixedForestPath
from shap_instances.forest._forest_kernels import leaf_mean_shapley
from shap_instances.games import ResidualGame, accumulate_prefix_units

MODELS = {  # min_samples_leaf > 1: leaves of several rows, so the leaf games are not additive
    "rf": RandomForestRegressor(n_estimators=6, min_samples_leaf=3, random_state=0),
    "rf-grown": RandomForestRegressor(n_estimators=4, random_state=1),
    "et": ExtraTreesRegressor(n_estimators=5, min_samples_leaf=2, random_state=0),
    "et-bootstrap": ExtraTreesRegressor(n_estimators=5, min_samples_leaf=2, bootstrap=True, random_state=0),
    "bagging": BaggingRegressor(DecisionTreeRegressor(min_samples_leaf=2), n_estimators=4, random_state=0),
    "rf-classifier": RandomForestClassifier(n_estimators=5, min_samples_leaf=2, random_state=0),
    "et-classifier": ExtraTreesClassifier(n_estimators=5, min_samples_leaf=3, random_state=0),
}


def _data(n=10, seed=0, classifier=False):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    y = X[:, 0] + rng.normal(size=n)
    return X, ((y > 0).astype(float) if classifier else y)


def _brute_force(model, X, y, X_eval, y_eval, fallback, mask):
    """v(S) recomputed from the trees in plain numpy: each leaf's weighted mean over the coalition's in-bag rows."""
    forest = clone(model).fit(X, y)
    total = np.zeros(len(X_eval))
    for tree, drawn in zip(forest.estimators_, forest.estimators_samples_, strict=True):
        counts = np.bincount(drawn, minlength=len(X)) * mask
        train_leaf, eval_leaf = tree.apply(X.astype(np.float32)), tree.apply(X_eval.astype(np.float32))
        for j, leaf in enumerate(eval_leaf):
            weight = counts * (train_leaf == leaf)
            total[j] += (weight @ y) / weight.sum() if weight.sum() > 0 else fallback[j]
    return total / len(forest.estimators_) - y_eval


@pytest.mark.parametrize("name", list(MODELS))
def test_values_equal_brute_force_and_enumeration(name):
    X, y = _data(8, classifier="classifier" in name)
    model = MODELS[name]
    game = ResidualGame(model, X, y, X[:4], y[:4], empty_prediction=0.3, refit="fixed_structure")
    fallback = np.full(4, 0.3)
    rng = np.random.default_rng(1)
    masks = rng.random((12, len(y))) < 0.4
    masks[0], masks[1] = True, False
    expected = np.array([_brute_force(model, X, y, X[:4], y[:4], fallback, mask) if mask.any() else game.empty
                         for mask in masks])
    np.testing.assert_allclose(game(masks), expected, atol=1e-12)
    exact = ExactApproximator().estimate(game).values  # enumeration of all 2^10 coalitions
    np.testing.assert_allclose(game.closed_form_values(), exact, atol=1e-12)
    assert game.closed_form == "FixedForest"


def test_full_coalition_is_the_fitted_forest_and_the_model_is_not_touched():
    X, y = _data(40)
    model = RandomForestRegressor(n_estimators=7, max_samples=0.7, random_state=3)
    game = ResidualGame(model, X, y, refit="fixed_structure")
    forest = clone(model).fit(X, y)
    np.testing.assert_allclose(game.full_value, forest.predict(X) - y, atol=1e-12)
    assert not hasattr(model, "estimators_")


def test_refits_are_opt_in_and_bad_requests_are_refused():
    X, y = _data(20)
    assert ResidualGame(RandomForestRegressor(n_estimators=3), X, y).fast_path is None  # exact refits by default
    with pytest.raises(InvalidParameterError, match="refit must be one of"):
        ResidualGame(RandomForestRegressor(n_estimators=3), X, y, refit="fixed")
    with pytest.raises(UnsupportedModelError, match="fixed_structure"):
        ResidualGame(Ridge(), X, y, refit="fixed_structure")
    with pytest.raises(UnsupportedModelError, match="fixed_structure"):
        ResidualGame(RandomForestRegressor(n_estimators=3, criterion="absolute_error"), X, y, refit="fixed_structure")


def _shapley_brute_force(c, y):
    """Shapley values of the weighted-mean game by enumeration of every coalition."""
    m = len(y)
    phi = np.zeros(m)
    for i in range(m):
        others = [k for k in range(m) if k != i]
        for size in range(m):
            weight = math.factorial(size) * math.factorial(m - 1 - size) / math.factorial(m)
            for subset in itertools.combinations(others, size):
                s = list(subset)
                before = (c[s] @ y[s]) / c[s].sum() if s else 0.0
                after = (c[s + [i]] @ y[s + [i]]) / c[s + [i]].sum()
                phi[i] += weight * (after - before)
    return phi


@pytest.mark.parametrize("c", [[1, 1, 1, 1, 1], [2, 1, 3, 1, 1, 4], [5], [1, 2]])
def test_leaf_game_closed_form_equals_enumeration(c):
    c = np.array(c, dtype=np.float64)
    y = np.random.default_rng(len(c)).normal(size=len(c))
    out = np.empty(len(c))
    leaf_mean_shapley(c, y, out)
    np.testing.assert_allclose(out, _shapley_brute_force(c, y), atol=1e-13)


def test_prefix_kernels_equal_coalition_values_and_aggregates():
    X, y = _data(25)
    game = ResidualGame(MODELS["rf"], X, y, X[:6], y[:6], refit="fixed_structure")
    rng = np.random.default_rng(2)
    permutations = np.array([rng.permutation(25) for _ in range(4)])
    ranks = np.argsort(permutations, axis=1)
    masks = ranks[:, None, :] < np.arange(26)[None, :, None]
    expected = game(masks.reshape(-1, 25)).reshape(4, 26, 6)
    np.testing.assert_allclose(game.prefix_values(permutations), expected, atol=1e-12)
    weights = rng.normal(size=(6, 2))
    aggregate = game.aggregate(weights)
    np.testing.assert_allclose(aggregate.prefix_values(permutations), expected @ weights, atol=1e-12)
    np.testing.assert_allclose(aggregate.closed_form_values(), game.closed_form_values() @ weights, atol=1e-12)


@pytest.mark.parametrize("per_unit", [1, 2])
def test_sparse_accumulation_equals_the_dense_kernel(per_unit):
    X, y = _data(30)
    path = FixedForestPath(MODELS["rf"], X, y, X, y, np.zeros(30))
    rng = np.random.default_rng(3)
    permutations = np.array([rng.permutation(30) for _ in range(8)])
    dense = [np.zeros((30, 30)) for _ in range(3)]
    sparse = [np.full((30, 30), np.nan), np.zeros((30, 30)), np.zeros((30, 30))]  # a unit block of garbage
    count = 0
    for half in (permutations[:4], permutations[4:]):
        count = accumulate_prefix_units(path.prefix_values_batch(half), half, per_unit, *dense, count)
    count_sparse, full = path.accumulate(permutations[:4], per_unit, *sparse, 0)
    count_sparse, full = path.accumulate(permutations[4:], per_unit, *sparse, count_sparse)
    assert count_sparse == count == 8 // per_unit
    np.testing.assert_allclose(sparse[1], dense[1], atol=1e-14)
    np.testing.assert_allclose(sparse[2], dense[2], atol=1e-14)
    np.testing.assert_allclose(full, path.residuals(np.ones(30, dtype=bool)), atol=1e-12)


def test_explainer_offers_the_approximation_by_name_and_labels_it():
    from shap_instances.explainers.residual import InstanceKernelExplainer

    X, y = _data(30)
    model = RandomForestRegressor(n_estimators=5, min_samples_leaf=2, random_state=0)
    explanation = InstanceKernelExplainer(model, X, y=y, refit="fixed_structure", empty_prediction=float(y.mean()),
                                          silent=True)(X[:3], y[:3])
    game = ResidualGame(model, X, y, X[:3], y[:3], empty_prediction=float(y.mean()), refit="fixed_structure")
    np.testing.assert_allclose(explanation.values, game.closed_form_values().T, atol=1e-12)
    assert explanation.refit == "fixed_structure"
    fitted = clone(model).fit(X, y)
    np.testing.assert_allclose(explanation.base_values + explanation.values.sum(1), fitted.predict(X[:3]) - y[:3])
    assert InstanceKernelExplainer(Ridge(), X, y=y, silent=True)(X[:2], y[:2]).refit == "exact"
    with pytest.raises(UnsupportedModelError, match="fixed_structure"):
        InstanceKernelExplainer(Ridge(), X, y=y, refit="fixed_structure")


@settings(max_examples=8, deadline=None)
@given(seed=st.integers(0, 2**16), n=st.integers(2, 7), leaf=st.integers(1, 3), bootstrap=st.booleans(),
       classifier=st.booleans())
def test_closed_form_is_efficient_and_equals_enumeration_hypothesis(seed, n, leaf, bootstrap, classifier):
    X, y = _data(n, seed=seed, classifier=classifier)
    kind = ExtraTreesClassifier if classifier else ExtraTreesRegressor
    model = kind(n_estimators=3, min_samples_leaf=leaf, bootstrap=bootstrap, random_state=seed)
    game = ResidualGame(model, X, y, empty_prediction=0.5, refit="fixed_structure")
    values = game.closed_form_values()
    np.testing.assert_allclose(values, ExactApproximator().estimate(game).values, atol=1e-12)
    np.testing.assert_allclose(values.sum(axis=0), game.full_value - game.empty_value, atol=1e-12)


def test_permutation_memory_check_counts_the_batch_sums():
    from shap_instances.exceptions import MemoryBudgetError
    from shap_instances.explainers.residual import InstanceKernelExplainer

    X, y = _data(30)
    model = RandomForestRegressor(n_estimators=3, random_state=0)
    options = dict(y=y, refit="fixed_structure", approximator="permutation", n_permutations=2, silent=True)
    five_blocks = 8.0 * 5 * 30 * 30
    InstanceKernelExplainer(model, X, max_memory=five_blocks, **options)(X, y)
    with pytest.raises(MemoryBudgetError):
        InstanceKernelExplainer(model, X, max_memory=five_blocks - 8, **options)(X, y)


def test_fingerprint_tells_the_approximation_from_refits():
    X, y = _data(12)
    model = RandomForestRegressor(n_estimators=2, random_state=0)
    exact, fixed = ResidualGame(model, X, y), ResidualGame(model, X, y, refit="fixed_structure")
    assert exact.fingerprint() != fixed.fingerprint()
    assert exact.fingerprint() == ResidualGame(model, X, y).fingerprint()
