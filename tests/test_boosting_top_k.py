"""The pruned top_k of kind="gradients" (MaxScore, bounded big leaves; exact candidates) against the dense values."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.datasets import make_classification, make_friedman1
from sklearn.ensemble import (
    GradientBoostingClassifier,
    GradientBoostingRegressor,
    HistGradientBoostingClassifier,
    HistGradientBoostingRegressor,
)
from threadpoolctl import threadpool_limits

from shap_instances import BoostingExplainer
from shap_instances.boosting import gradient_contributions, row_major_contributions, top_gradient_contributions


@pytest.fixture
def prune_always(monkeypatch):
    """Prune whatever the number of training rows (the default starts at 20,000)."""
    monkeypatch.setattr("shap_instances.boosting._analyses.PRUNE_MIN_ROWS", 1)
    return monkeypatch


def _check(dense: np.ndarray, indices: np.ndarray, values: np.ndarray, k: int) -> None:
    """Same k largest |values| as the dense rows, and the chosen rows' values are the dense ones, bit for bit."""
    assert np.all(np.diff(indices, axis=1) > 0)  # distinct, ascending
    np.testing.assert_array_equal(np.take_along_axis(dense, indices, 1), values)
    np.testing.assert_array_equal(np.sort(np.abs(values), 1), np.sort(np.abs(dense), 1)[:, -k:])


def _sweep(explainer: BoostingExplainer, X: np.ndarray, k: int, column: int = 0) -> tuple[int, int]:
    """Check the pruned top k at several big-leaf sizes; return (rows pruned, rows that fell back) over them."""
    trees = explainer.trees_
    query = trees.apply(explainer._check_X(X))
    dense = gradient_contributions(trees, query)[:, :, column]
    index = row_major_contributions(trees, column)
    pruned = fell_back = 0
    n = trees.n_train
    sizes = np.diff(trees.leaf_ptr)
    indices, values, _ = top_gradient_contributions(trees, query, k, None, index, n_jobs=2)  # MaxScore
    _check(dense, indices, values, k)
    for leaf_size in sorted({1, n // 50, n // 10, n // 5, n // 2, n}):
        indices, values, fallbacks = top_gradient_contributions(trees, query, k, leaf_size, index, n_jobs=2)
        _check(dense, indices, values, k)
        some_big = np.any(sizes[trees.leaf_offsets[trees.tree_output == column][None, :]
                                + query[:, trees.tree_output == column]] > leaf_size, axis=1)
        pruned += int(some_big.sum()) - fallbacks
        fell_back += fallbacks
    return pruned, fell_back


def _regression(n: int = 800, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    return make_friedman1(n, n_features=6, noise=1.0, random_state=seed)


@pytest.mark.parametrize("make", [
    pytest.param(lambda: GradientBoostingRegressor(n_estimators=40, max_depth=3, random_state=0), id="gb",
                 marks=pytest.mark.slow),
    pytest.param(lambda: HistGradientBoostingRegressor(max_iter=25, max_depth=4, early_stopping=False,
                                                       random_state=0), id="hgb"),
])
def test_pruned_top_k_equals_the_dense_top_k_sklearn(make):
    X, y = _regression(500)
    with threadpool_limits(1):  # HistGradientBoosting's OpenMP threads on a loaded machine
        model = make().fit(X, y)
    explainer = BoostingExplainer(model, X, y=y, kind="gradients")
    pruned, fell_back = _sweep(explainer, X[:40], k=7)
    assert pruned > 0 and fell_back > 0  # both branches ran


def test_pruned_top_k_equals_the_dense_top_k_lightgbm_xgboost():
    lightgbm = pytest.importorskip("lightgbm")
    xgboost = pytest.importorskip("xgboost")
    X, y = _regression()
    # one thread each: their OpenMP teams on a loaded machine took 168 s (LightGBM) and 35 s (XGBoost) for these fits
    for model in (lightgbm.LGBMRegressor(n_estimators=40, num_leaves=16, min_child_samples=5, verbose=-1, n_jobs=1),
                  xgboost.XGBRegressor(n_estimators=40, max_depth=4, learning_rate=0.2, n_jobs=1)):
        explainer = BoostingExplainer(model.fit(X, y), X, y=y, kind="gradients")
        pruned, fell_back = _sweep(explainer, X[:60], k=5)
        assert pruned > 0 and fell_back > 0


@pytest.mark.parametrize("make", [
    lambda: GradientBoostingClassifier(n_estimators=15, max_depth=3, random_state=0),
    lambda: HistGradientBoostingClassifier(max_iter=15, max_depth=4, early_stopping=False, random_state=0),
], ids=["gb", "hgb"])
def test_pruned_top_k_of_each_class_margin(make, prune_always):
    X, y = make_classification(600, n_features=6, n_informative=4, n_classes=3, random_state=0)
    with threadpool_limits(1):
        model = make().fit(X, y)
    explainer = BoostingExplainer(model, X, y=y)
    dense = explainer(X[:30]).values
    for output in range(3):
        top = explainer.top_k(X[:30], k=6, output=output)
        _check(dense[:, :, output], top.indices.reshape(30, 6), top.data.reshape(30, 6), 6)
        _sweep(explainer, X[:30], k=6, column=output)


def test_top_k_training_rows_through_the_explainer(prune_always):
    X, y = make_classification(500, n_features=5, random_state=1)
    explainer = BoostingExplainer(GradientBoostingClassifier(n_estimators=30, random_state=0).fit(X, y), X, y=y)
    top = explainer.top_k(None, k=4)
    dense = explainer().values
    _check(dense, top.indices.reshape(500, 4), top.data.reshape(500, 4), 4)


def test_top_k_keeps_the_dense_path_without_memory(prune_always):
    X, y = _regression(300)
    model = GradientBoostingRegressor(n_estimators=20, random_state=0).fit(X, y)
    small = BoostingExplainer(model, X, y=y, kind="gradients", max_memory=12.0 * 300 * 20 - 1)
    top = small.top_k(X[:5], k=3)  # the row-major index does not fit: the chunked dense path
    _check(small(X[:5]).values, top.indices.reshape(5, 3), top.data.reshape(5, 3), 3)
    assert small.__dict__.get("_row_major_cache", {}) == {}


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), depth=st.integers(1, 5), n=st.integers(30, 300), k=st.integers(1, 12),
       fraction=st.floats(0.0, 1.0))
def test_pruned_top_k_random_models(seed, depth, n, k, fraction):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    X[:, 2] = np.round(X[:, 2])  # ties in the splits and in the values
    y = X[:, 0] + rng.normal(size=n) * rng.uniform(0, 2)
    model = GradientBoostingRegressor(n_estimators=12, max_depth=depth, learning_rate=0.3, random_state=0).fit(X, y)
    explainer = BoostingExplainer(model, X, y=y, kind="gradients")
    trees = explainer.trees_
    query = trees.apply(X[:10])
    dense = gradient_contributions(trees, query)[:, :, 0]
    index = row_major_contributions(trees, 0)
    for leaf_size in (None, int(fraction * n)):  # MaxScore, then the bounded big leaves
        indices, values, _ = top_gradient_contributions(trees, query, min(k, n), leaf_size, index)
        _check(dense, indices, values, min(k, n))


def test_the_row_major_index_is_not_pickled(prune_always):
    import pickle

    X, y = _regression(300)
    explainer = BoostingExplainer(GradientBoostingRegressor(n_estimators=10, random_state=0).fit(X, y), X, y=y,
                                  kind="gradients")
    first = explainer.top_k(X[:4], k=3)
    assert 0 in explainer._row_major_cache
    copy = pickle.loads(pickle.dumps(explainer))
    assert "_row_major_cache" not in copy.__dict__
    assert (copy.top_k(X[:4], k=3) != first).nnz == 0


@pytest.mark.parametrize("early_stopping", [False, True])
def test_the_maxscore_lists_are_each_leaf_by_decreasing_row_bound(early_stopping):
    """The bucket pass (``place_by_bound``, two threads) against a sort: each leaf's rows by decreasing ``A_j``,
    ties by row, renumbered; shares and bounds rounded to float32, the bounds never below ``A_j``. With early
    stopping, the validation rows take no part in training: they are in no list."""
    from shap_instances.boosting._ensemble import _LOCALITY_TREES, _maxscore_lists

    X, y = _regression(350)
    X, y = np.vstack([X, X[:50]]), np.concatenate([y, y[:50]])  # rows with equal A_j: the ties' order is checked
    with threadpool_limits(1):
        model = HistGradientBoostingRegressor(max_iter=15, early_stopping=early_stopping, n_iter_no_change=100,
                                              random_state=0).fit(X, y)
    trees = BoostingExplainer(model, X, y=y, kind="gradients").trees_
    assert trees.members.size == 15 * (360 if early_stopping else 400)  # 10% held out for validation
    _, leaves, shares, _ = row_major_contributions(trees, 0)
    members, coef, entry_bound, row_bound, original = _maxscore_lists(trees, leaves, shares, n_jobs=2)
    A = np.abs(shares).sum(1)
    leaf = np.repeat(np.arange(trees.leaf_ptr.size - 1), np.diff(trees.leaf_ptr))
    order = np.lexsort((trees.members, -A[trees.members], leaf))
    renumber = np.argsort(np.lexsort(leaves[:, :_LOCALITY_TREES].T[::-1]))
    np.testing.assert_array_equal(original[renumber], np.arange(400))
    np.testing.assert_array_equal(members, renumber[trees.members[order]])
    np.testing.assert_array_equal(coef, trees.coef[order].astype(np.float32))
    bounds = A[trees.members[order]]
    assert np.all(entry_bound >= bounds) and np.all(entry_bound <= bounds * (1 + 1e-6))
    np.testing.assert_array_equal(row_bound, A[original])
