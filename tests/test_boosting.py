"""BoostingExplainer on scikit-learn's GradientBoosting: the weights against the definition, the recursion's
structure, the gradient contributions against a leaf-by-leaf loop, refusals, and the contract."""

import tomllib
from pathlib import Path

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from sklearn.dummy import DummyRegressor
from sklearn.ensemble import GradientBoostingClassifier, GradientBoostingRegressor, RandomForestRegressor
from sklearn.linear_model import LinearRegression

import shap_instances as si
from shap_instances import BoostingExplainer
from shap_instances.boosting import read_boosted_model, target_weights
from shap_instances.boosting._kernels import reach_sets, target_weight_rows
from shap_instances.exceptions import (
    DataValidationError,
    InvalidParameterError,
    MemoryBudgetError,
    UnsupportedModelError,
)
from shap_instances.testing import check_explainer

from .boosting_naive import dense_axil_weights, gb_gradient_contributions, horner_weights

ROOT = Path(__file__).resolve().parent.parent


def _regression(n=200, p=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    y = X[:, 0] + np.sin(2 * X[:, 1]) + 0.3 * rng.normal(size=n)
    return X, y, rng


def _relative(a, b):
    return float(np.max(np.abs(a - b) / np.maximum(1.0, np.abs(b))))


# ----------------------------------------------------------------------------- weights: exactness
@pytest.mark.parametrize("weighted", [False, True])
def test_weights_equal_the_dense_definition_and_reconstruct_predict(weighted):
    X, y, rng = _regression(n=250)
    s = rng.uniform(0.2, 3.0, len(y)) if weighted else None
    model = GradientBoostingRegressor(n_estimators=40, max_depth=3, learning_rate=0.2, random_state=0)
    model.fit(X, y, sample_weight=s)
    X_test = rng.normal(size=(30, X.shape[1]))
    explainer = BoostingExplainer(model, X, y=y, sample_weight=s)
    W = explainer.weights(X_test)
    dense = dense_axil_weights(model, X, X_test, sample_weight=s)
    assert np.max(np.abs(W - dense)) <= 1e-10
    assert _relative(W @ y, model.predict(X_test)) <= 1e-9
    assert np.allclose(W.sum(axis=1), 1.0, atol=1e-12)
    e = explainer(X_test)
    assert explainer.kind_ == "weights"
    assert _relative(e.base_values + e.values.sum(axis=1), model.predict(X_test)) <= 1e-9
    assert np.allclose(e.values, W * (y - np.average(y, weights=s))[None, :], atol=1e-12)


def test_kernel_agrees_with_its_numpy_twin_and_does_not_depend_on_blocks_or_threads():
    X, y, rng = _regression(n=180)
    s = rng.uniform(0.0, 2.0, len(y))
    s[:10] = 0.0
    model = GradientBoostingRegressor(n_estimators=25, max_depth=4, learning_rate=0.3).fit(X, y, sample_weight=s)
    trees = read_boosted_model(model, X, y, s)
    query = trees.apply(rng.normal(size=(37, X.shape[1])))
    twin = horner_weights(trees.train_leaves, query, trees.row_weight, model.learning_rate)
    one = target_weights(trees, query)
    assert np.max(np.abs(one - twin)) <= 1e-13
    for block in (1, 5, 64):
        out = np.empty_like(one)
        width = int(trees.n_leaves.max())
        scale = np.zeros((trees.n_trees, width))
        for t in range(trees.n_trees):
            total = np.bincount(trees.train_leaves[t], weights=trees.row_weight, minlength=trees.n_leaves[t])
            scale[t, : total.size] = np.where(total > 0, model.learning_rate / np.where(total > 0, total, 1), 0)
        target_weight_rows(query, trees.train_leaves, trees.n_leaves, trees.row_weight, scale,
                           trees.row_weight / trees.row_weight.sum(), (1 - model.learning_rate) ** trees.n_trees,
                           True, out, block)
        assert np.array_equal(out, one)
    assert np.array_equal(target_weights(trees, query, n_jobs=2), one)
    assert np.all(one[:, :10] == 0.0)  # rows of weight 0 carry no weight


def test_init_zero_and_constant_give_a_constant_base_and_weights_not_summing_to_one():
    X, y, rng = _regression(n=150)
    X_test = rng.normal(size=(8, X.shape[1]))
    for init in ("zero", DummyRegressor(strategy="constant", constant=1.5)):
        model = GradientBoostingRegressor(n_estimators=20, max_depth=2, init=init, random_state=0).fit(X, y)
        explainer = BoostingExplainer(model, X, y=y)
        e = explainer(X_test)
        c = 0.0 if init == "zero" else 1.5
        W = explainer.weights(X_test)
        assert _relative(c * (1 - W.sum(1)) + W @ y, model.predict(X_test)) <= 1e-9
        assert np.allclose(e.base_values, c) and explainer.expected_value == c
        assert np.allclose(W.sum(1), 1 - (1 - model.learning_rate) ** 20, atol=1e-12)


def test_training_rows_are_explained_in_sample_and_early_stopping_rows_get_nothing():
    X, y, rng = _regression(n=300)
    model = GradientBoostingRegressor(n_estimators=200, n_iter_no_change=3, validation_fraction=0.2,
                                      random_state=4).fit(X, y)
    assert model.n_estimators_ < 200
    explainer = BoostingExplainer(model, X, y=y)
    e = explainer()
    assert e.values.shape == (300, 300)
    assert _relative(e.base_values + e.values.sum(1), model.predict(X)) <= 1e-9
    left_out = ~explainer.trees_.used
    assert left_out.sum() == 60 and np.all(e.values[:, left_out] == 0.0)
    assert e.row_names == explainer.train_names_


# ----------------------------------------------------------------------------- weights: hypothesis
@settings(max_examples=25, deadline=None)
@given(
    seed=st.integers(0, 2**16),
    n=st.integers(20, 90),
    depth=st.integers(1, 4),
    n_estimators=st.integers(1, 15),
    learning_rate=st.sampled_from([0.05, 0.3, 0.7, 1.0]),
    weights=st.sampled_from(["none", "positive", "with_zeros"]),
)
# late trees of learning rate 1 fit round-off: their leaf values have no scale of their own to be checked against
@example(seed=15055, n=40, depth=4, n_estimators=11, learning_rate=1.0, weights="with_zeros")
def test_weights_hypothesis(seed, n, depth, n_estimators, learning_rate, weights):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    y = rng.normal(size=n) + 2 * (X[:, 0] > 0)
    s = None if weights == "none" else rng.uniform(0.1, 3.0, n)
    if weights == "with_zeros":
        s[rng.random(n) < 0.3] = 0.0
        s[0] = 1.0
    model = GradientBoostingRegressor(n_estimators=n_estimators, max_depth=depth, learning_rate=learning_rate,
                                      random_state=seed).fit(X, y, sample_weight=s)
    X_test = rng.normal(size=(6, 3))
    trees = read_boosted_model(model, X, y, s)
    query = trees.apply(X_test)
    W = target_weights(trees, query)
    # rows sum to one (the initial prediction is the weighted mean) and reproduce predict
    assert np.allclose(W.sum(axis=1), 1.0, atol=1e-12)
    assert _relative(W @ y, model.predict(X_test)) <= 1e-9
    # the structure of the backward recursion: a row outside the reach set of x keeps exactly its share of the
    # initial prediction, (1 - eta)^T s_j / S (exactly 0 when eta = 1 or s_j = 0)
    reached = reach_sets(query, trees.train_leaves, trees.n_leaves, trees.row_weight)
    share = trees.row_weight / trees.row_weight.sum() * (1 - learning_rate) ** trees.n_trees
    outside = ~reached
    assert np.array_equal(W[outside], np.broadcast_to(share, W.shape)[outside])
    if learning_rate == 1.0:
        assert np.all(W[outside] == 0.0)
    assert np.all(W[:, trees.row_weight == 0] == 0.0)
    if n_estimators == 1:  # one tree: the reach set is the leaf of x (its rows of positive weight)
        assert np.array_equal(reached, (trees.train_leaves[0][None, :] == query[:, :1]) & (trees.row_weight > 0))


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 2**16),
    n=st.integers(5, 60),
    n_trees=st.integers(1, 12),
    n_leaves=st.integers(1, 6),
    eta=st.sampled_from([0.1, 0.5, 1.0]),
    l2=st.sampled_from([0.0, 0.3, 5.0]),
    zeros=st.booleans(),
)
def test_kernel_hypothesis_with_l2_penalties(seed, n, n_trees, n_leaves, eta, l2, zeros):
    """The kernel on random leaf structures (no model): its NumPy twin, rows summing to one for every L2 penalty,
    and rows outside the reach set keeping exactly a common multiple of their initial share."""
    rng = np.random.default_rng(seed)
    train = rng.integers(0, n_leaves, size=(n_trees, n)).astype(np.int32)
    query = rng.integers(0, n_leaves, size=(7, n_trees)).astype(np.int32)
    weight = rng.uniform(0.2, 2.0, n)
    if zeros:
        weight[rng.random(n) < 0.3] = 0.0
        weight[0] = 1.0
    counts = np.full(n_trees, n_leaves, dtype=np.int64)
    scale = np.zeros((n_trees, n_leaves))
    for t in range(n_trees):
        total = np.bincount(train[t], weights=weight, minlength=n_leaves) + l2
        scale[t] = np.where(total > 0, eta / np.where(total > 0, total, 1.0), 0.0)
    a0 = weight / weight.sum()
    out = np.empty((7, n))
    target_weight_rows(query, train, counts, weight, scale, a0, (1 - eta) ** n_trees, l2 == 0.0, out, 3)
    twin = horner_weights(train, query, weight, eta, l2=l2)
    assert np.max(np.abs(out - twin)) <= 1e-12
    assert np.allclose(out.sum(axis=1), 1.0, atol=1e-12)
    reached = reach_sets(query, train, counts, weight)
    for r in range(7):
        outside = ~reached[r] & (weight > 0)
        if outside.any():
            ratio = out[r, outside] / a0[outside]
            assert np.allclose(ratio, ratio[0], rtol=1e-12)
            if l2 == 0.0 and np.all(scale[np.arange(n_trees), query[r]] > 0):  # every leaf of x holds weight
                assert np.all(out[r, outside] == a0[outside] * (1 - eta) ** n_trees)


# ----------------------------------------------------------------------------- gradients
@pytest.mark.parametrize("case", ["regression", "binary", "multiclass", "exponential"])
def test_gradient_contributions_equal_a_leaf_by_leaf_loop(case):
    X, y, rng = _regression(n=160)
    s = rng.uniform(0.5, 2.0, len(y))
    if case == "regression":
        model, target = GradientBoostingRegressor(n_estimators=15, max_depth=3), y
    else:
        target = (y > 0).astype(int) if case != "multiclass" else np.digitize(y, [-0.5, 0.7])
        loss = "exponential" if case == "exponential" else "log_loss"
        model = GradientBoostingClassifier(n_estimators=15, max_depth=3, loss=loss)
    model.fit(X, target, sample_weight=s)
    X_test = rng.normal(size=(9, X.shape[1]))
    explainer = BoostingExplainer(model, X, y=target, sample_weight=s, kind="gradients")
    e = explainer(X_test)
    naive = gb_gradient_contributions(model, X, target.astype(np.float64), X_test, sample_weight=s)
    values = e.values if e.values.ndim == 3 else e.values[:, :, None]
    assert np.max(np.abs(values - naive)) <= 1e-10
    margin = model.decision_function(X_test) if case != "regression" else model.predict(X_test)
    assert _relative(e.base_values + e.values.sum(axis=1), margin) <= 1e-9
    if case == "multiclass":
        assert e.values.shape == (9, 160, 3) and e.output_names == ["0", "1", "2"]
    if case == "binary":
        assert e.values.shape == (9, 160)


def test_gradient_kind_accepts_any_init_estimator_with_per_row_base_values():
    X, y, rng = _regression(n=120)
    model = GradientBoostingRegressor(n_estimators=10, init=LinearRegression()).fit(X, y)
    with pytest.raises(UnsupportedModelError, match="kind='gradients'"):
        BoostingExplainer(model, X, y=y, kind="weights")
    explainer = BoostingExplainer(model, X, y=y)
    assert explainer.kind_ == "gradients"
    X_test = rng.normal(size=(5, 4))
    e = explainer(X_test)
    assert _relative(e.base_values + e.values.sum(1), model.predict(X_test)) <= 1e-9
    assert np.allclose(e.base_values, LinearRegression().fit(X, y).predict(X_test))
    assert np.allclose(explainer.expected_value, e.base_values)  # per row: the last call's


def test_sign_convention_rows_above_the_fit_push_the_margin_up():
    # one tree, learning rate 1: a leaf's value is its mean residual, shared as each row's own residual / count
    X, y, rng = _regression(n=100)
    model = GradientBoostingRegressor(n_estimators=1, max_depth=1, learning_rate=1.0).fit(X, y)
    e = BoostingExplainer(model, X, y=y, kind="gradients")(X[:1])
    leaf = model.estimators_[0, 0].apply(X.astype(np.float32))
    members = leaf == leaf[0]
    assert np.allclose(e.values[0, members], (y - y.mean())[members] / members.sum())
    assert np.all(e.values[0, ~members] == 0.0)


# ----------------------------------------------------------------------------- top_k
def test_top_k_equals_the_largest_dense_values_in_chunks():
    X, y, rng = _regression(n=300)
    model = GradientBoostingRegressor(n_estimators=20, max_depth=3, random_state=0).fit(X, y)
    X_test = rng.normal(size=(23, X.shape[1]))
    dense = BoostingExplainer(model, X, y=y)(X_test).values
    # a budget of 5 rows of values: the 23 rows are explained in 5 chunks
    small = BoostingExplainer(model, X, y=y, max_memory=5 * 300 * 8 + 23 * 7 * 12.0)
    top = small.top_k(X_test, k=7)
    assert top.shape == (23, 300) and np.all(np.diff(top.indptr) == 7)
    expected = np.argsort(-np.abs(dense), axis=1, kind="stable")[:, :7]
    for i in range(23):
        assert set(top.indices[top.indptr[i]:top.indptr[i + 1]]) == set(expected[i])
    assert np.array_equal(top.toarray()[top.toarray() != 0], dense[top.toarray() != 0])
    assert BoostingExplainer(model, X, y=y).top_k(k=3).shape == (300, 300)  # the training rows
    with pytest.raises(InvalidParameterError, match="k must be"):
        small.top_k(X_test, k=0)


def test_top_k_of_a_multiclass_margin():
    X, y, rng = _regression(n=150)
    target = np.digitize(y, [-0.5, 0.7])
    model = GradientBoostingClassifier(n_estimators=5, max_depth=2).fit(X, target)
    explainer = BoostingExplainer(model, X, y=target)
    dense = explainer(X[:4]).values
    top = explainer.top_k(X[:4], k=4, output=2)
    assert np.allclose(np.sort(np.abs(top.toarray()), 1)[:, -4:], np.sort(np.abs(dense[:, :, 2]), 1)[:, -4:])
    with pytest.raises(InvalidParameterError, match="pass output="):
        explainer.top_k(X[:4], k=4)


# ----------------------------------------------------------------------------- refusals
@pytest.mark.parametrize("model, match", [
    (GradientBoostingRegressor(subsample=0.5), "subsample=0.5"),
    (GradientBoostingRegressor(loss="absolute_error"), "loss='absolute_error'"),
    (GradientBoostingRegressor(loss="huber"), "loss='huber'"),
    (GradientBoostingRegressor(loss="quantile"), "loss='quantile'"),
    (GradientBoostingRegressor(n_iter_no_change=2), "random_state=None"),
    (RandomForestRegressor(n_estimators=3), "GapExplainer"),
])
def test_unsupported_settings_are_refused_naming_them(model, match):
    X, y, _ = _regression(n=60)
    model.fit(X, y)
    with pytest.raises(UnsupportedModelError, match=match):
        BoostingExplainer(model, X, y=y)
    assert not BoostingExplainer.supports_model(model)


def test_classifier_weights_are_refused_pointing_to_gradients():
    X, y, _ = _regression(n=80)
    model = GradientBoostingClassifier(n_estimators=5).fit(X, y > 0)
    with pytest.raises(UnsupportedModelError, match="use kind='gradients'"):
        BoostingExplainer(model, X, y=y > 0, kind="weights")
    assert BoostingExplainer(model, X, y=y > 0).kind_ == "gradients"


@pytest.mark.parametrize("change", ["y", "sample_weight", "rows"])
def test_data_other_than_the_training_data_is_refused(change):
    X, y, rng = _regression(n=100)
    s = rng.uniform(0.5, 2.0, len(y))
    model = GradientBoostingRegressor(n_estimators=5).fit(X, y, sample_weight=s)
    kwargs = dict(y=y, sample_weight=s)
    data = X
    if change == "y":
        kwargs["y"] = y + rng.normal(size=len(y))
    elif change == "sample_weight":
        kwargs["sample_weight"] = None
    else:
        data = X[::-1]
    with pytest.raises(DataValidationError, match="given to fit"):
        BoostingExplainer(model, data, **kwargs)


def test_options_are_checked():
    X, y, _ = _regression(n=50)
    model = GradientBoostingRegressor(n_estimators=3).fit(X, y)
    with pytest.raises(InvalidParameterError, match="kind must be one of"):
        BoostingExplainer(model, X, y=y, kind="leaves")
    with pytest.raises(DataValidationError, match="needs y"):
        BoostingExplainer(model, X)
    with pytest.raises(MemoryBudgetError, match="Explain fewer rows"):
        BoostingExplainer(model, X, y=y, max_memory=1000.0)(X)
    with pytest.raises(InvalidParameterError, match="takes no y"):
        BoostingExplainer(model, X, y=y)(X, y)


# ----------------------------------------------------------------------------- contract
@pytest.mark.slow
def test_conformance():
    check_explainer(BoostingExplainer)


def test_registered_as_boosting_and_exported():
    entry_points = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["entry-points"]
    assert entry_points["shap_instances.explainers"]["boosting"] == \
        "shap_instances.explainers.boosting:BoostingExplainer"
    assert si.BoostingExplainer is BoostingExplainer and "BoostingExplainer" in si.__all__
    assert BoostingExplainer.auto_priority == 25 and BoostingExplainer.requires_y


def test_automatic_dispatch_chooses_it_for_boosted_models_given_y(monkeypatch):
    from shap_instances import registry

    monkeypatch.setitem(registry._runtime, "boosting", BoostingExplainer)
    X, y, _ = _regression(n=80)
    model = GradientBoostingRegressor(n_estimators=5).fit(X, y)
    assert type(si.Explainer(model, X, y=y)).__name__ == "BoostingExplainer"
    assert type(si.Explainer(model, X[:20])).__name__ != "BoostingExplainer"  # no y: shap's own choice
