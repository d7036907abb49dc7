"""Tests of the shap-instances-knn plugin.

Run standalone (``python -m pytest plugins/shap-instances-knn/tests``) and collected by the main test run
through ``tests/test_plugin_knn.py``. Discovery is tested through the REAL installed entry point: the
plugin must be pip-installed (``pip install -e plugins/shap-instances-knn``), nothing is monkeypatched.

Independent references: full enumeration of all 2^n coalitions (:func:`enumerate_shapley`), the model's
own ``predict`` / ``predict_proba``, and a plain-NumPy twin of each numba kernel (:func:`numpy_twin`).
"""

from __future__ import annotations

import doctest
import math
import warnings
from importlib.metadata import entry_points

import numpy as np
import pandas as pd
import pytest
import shap
import shap_instances_knn
from hypothesis import given, settings
from hypothesis import strategies as st
from shap_instances_knn import KNNShapleyExplainer, _kernels, knn_shapley_values, knn_utility
from sklearn.datasets import load_diabetes, load_iris, load_wine
from sklearn.metrics import pairwise_distances
from sklearn.neighbors import KNeighborsClassifier, KNeighborsRegressor
from sklearn.tree import DecisionTreeRegressor

import shap_instances
from shap_instances.exceptions import DataValidationError, NotFittedError, UnsupportedModelError

# Several tests build deliberate distance ties; the tie warning itself is asserted in
# test_ties_at_the_kth_neighbour_are_reported below.
pytestmark = pytest.mark.filterwarnings("ignore:.*at the same distance as the K-th nearest")

# ----------------------------------------------------------------------------------------------------
# Independent references
# ----------------------------------------------------------------------------------------------------


def reference_order(distances_row, y_train, utility):
    """The documented order: by distance, then by label (first-appearance code for accuracy), then by index."""
    if utility == "accuracy":
        first = {}
        key = [first.setdefault(label, len(first)) for label in np.asarray(y_train).tolist()]
    else:
        key = list(np.asarray(y_train, dtype=float))
    return np.array(sorted(range(len(y_train)), key=lambda i: (distances_row[i], key[i], i)))


def subset_utilities(distances_row, y_train, y_explained, k, utility):
    """v(S) for all 2^n coalitions S (bit i of the index = training point i), straight from the definition."""
    n = len(y_train)
    order = reference_order(distances_row, y_train, utility)
    masks = ((np.arange(2**n)[:, None] >> np.arange(n)[None, :]) & 1).astype(bool)
    in_order = masks[:, order]
    nearest = in_order & (np.cumsum(in_order, axis=1) <= k)
    if utility == "accuracy":
        z = (np.asarray(y_train) == y_explained).astype(float)[order]
    else:
        z = np.asarray(y_train, dtype=float)[order]
    a = (nearest * z).sum(axis=1) / k
    return -((a - y_explained) ** 2) if utility == "neg_squared_error" else a


def enumerate_shapley(distances, y_train, y_explained, k, utility):
    """Shapley values by the definition: weighted marginal contributions over all 2^(n-1) coalitions."""
    n = len(y_train)
    out = np.zeros((distances.shape[0], n))
    sizes = np.array([bin(s).count("1") for s in range(2**n)])
    weights = np.array([math.factorial(s) * math.factorial(n - s - 1) / math.factorial(n) for s in range(n)])
    for j in range(distances.shape[0]):
        yj = None if y_explained is None else y_explained[j]
        v = subset_utilities(distances[j], y_train, yj, k, utility)
        for i in range(n):
            without = np.array([s for s in range(2**n) if not s >> i & 1])
            out[j, i] = np.sum(weights[sizes[without]] * (v[without | (1 << i)] - v[without]))
    return out


def numpy_twin(order, y_train, y_explained, k, utility):
    """Plain-NumPy (vectorised with cumulative sums) twin of the numba kernels, same recursions."""
    n_explained, n = order.shape
    i = np.arange(1, n + 1, dtype=float)  # 1-based positions
    m = np.minimum(k, i)
    out = np.empty(order.shape)
    for j in range(n_explained):
        if utility == "accuracy":
            z = (np.asarray(y_train)[order[j]] == y_explained[j]).astype(float)
        else:
            z = np.asarray(y_train, dtype=float)[order[j]]
        if utility in ("accuracy", "prediction"):
            diffs = (z[:-1] - z[1:]) / k * m[:-1] / i[:-1]  # s_i - s_{i+1}
            last = min(k, n) / n * z[-1] / k
        else:
            t = y_explained[j]
            prefix = np.concatenate([[0.0], np.cumsum(z)])[:-1]  # P_{i-1}
            q = np.minimum(k - 1, i - 2)
            with np.errstate(divide="ignore", invalid="ignore"):
                w = np.where(i >= 3, q * (q + 1) / (2 * (i - 1) * (i - 2)), 0.0)  # w(l), l = i
                pair = np.where(i > 1, m * (m - 1) / (2 * i * (i - 1)), 0.0)
            suffix = np.concatenate([np.cumsum((w * z)[::-1])[::-1], [0.0, 0.0]])  # R_l = sum_{l' >= l}
            r = suffix[2:n + 1]  # R_{i+2} for i = 1..n-1 (0-based index i+1)
            d = z[1:] - z[:-1]
            diffs = d / k * (m[:-1] / i[:-1] * ((z[:-1] + z[1:]) / k - 2 * t)
                             + 2 / k * (pair[:-1] * prefix[:-1] + r))
            last = -z[-1] / k * (m[-1] / n * (z[-1] / k - 2 * t) + 2 / k * pair[-1] * prefix[-1])
        sorted_values = last + np.concatenate([np.cumsum(diffs[::-1])[::-1], [0.0]])
        out[j, order[j]] = sorted_values
    return out


def small_problem(seed, n=8, n_explained=3, ties=False):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 3, size=(n, 2)).astype(float) if ties else rng.normal(size=(n, 2))
    Xe = rng.normal(size=(n_explained, 2))
    return X, Xe, rng


# ----------------------------------------------------------------------------------------------------
# Discovery through the installed entry point (no monkeypatching)
# ----------------------------------------------------------------------------------------------------


def test_entry_point_is_installed():
    eps = [ep for ep in entry_points(group="shap_instances.explainers") if ep.name == "knn_shapley"]
    assert len(eps) == 1, "install the plugin: pip install -e plugins/shap-instances-knn"
    assert eps[0].value == "shap_instances_knn.explainer:KNNShapleyExplainer"
    assert eps[0].dist.name.replace("_", "-") == "shap-instances-knn"


def test_list_explainers_finds_the_plugin():
    assert shap_instances.list_explainers()["knn_shapley"] is KNNShapleyExplainer
    assert shap_instances.get_explainer("knn_shapley") is KNNShapleyExplainer
    assert issubclass(KNNShapleyExplainer, shap_instances.InstanceExplainer)
    assert issubclass(KNNShapleyExplainer, shap.Explainer)


@pytest.mark.parametrize("model_class", [KNeighborsClassifier, KNeighborsRegressor])
def test_auto_dispatch_chooses_the_plugin(model_class):
    X, y = load_iris(return_X_y=True)
    model = model_class(n_neighbors=3).fit(X, y)
    explainer = shap_instances.Explainer(model, X, y=y)
    assert type(explainer) is KNNShapleyExplainer
    by_name = shap_instances.Explainer(model, X, algorithm="knn_shapley", y=y, silent=True)
    assert type(by_name) is KNNShapleyExplainer
    assert KNNShapleyExplainer.auto_priority == 50


def test_supports_model():
    assert KNNShapleyExplainer.supports_model(KNeighborsClassifier())
    assert KNNShapleyExplainer.supports_model(KNeighborsRegressor(n_neighbors=2))
    assert not KNNShapleyExplainer.supports_model(KNeighborsClassifier(weights="distance"))
    assert not KNNShapleyExplainer.supports_model(KNeighborsRegressor(weights=lambda d: 1 / d))
    assert not KNNShapleyExplainer.supports_model(DecisionTreeRegressor())
    multi = KNeighborsRegressor(n_neighbors=2).fit(np.eye(4), np.eye(4)[:, :2])
    assert not KNNShapleyExplainer.supports_model(multi)


# ----------------------------------------------------------------------------------------------------
# Exactness against full enumeration
# ----------------------------------------------------------------------------------------------------

UTILITY_CASES = [
    (KNeighborsClassifier, "accuracy"),
    (KNeighborsRegressor, "neg_squared_error"),
    (KNeighborsRegressor, "prediction"),
]


@pytest.mark.parametrize("ties", [False, True])
@pytest.mark.parametrize("k", [1, 3, 10, 12])
@pytest.mark.parametrize(("model_class", "utility"), UTILITY_CASES)
def test_explainer_matches_full_enumeration(model_class, utility, k, ties):
    n = 10
    X, Xe, rng = small_problem(k, n=n, ties=ties)
    if model_class is KNeighborsClassifier:
        y, ye = rng.integers(0, 3, size=n), rng.integers(0, 3, size=len(Xe))
    else:
        y, ye = rng.normal(size=n) * 3, rng.normal(size=len(Xe))
    model = model_class(n_neighbors=min(k, n)).fit(X, y)
    model.n_neighbors = k  # K > n_train is allowed by the utility (the sum is divided by K)
    e = KNNShapleyExplainer(model, X, y=y, utility=utility, silent=True)(Xe, None if utility == "prediction" else ye)
    expected = enumerate_shapley(pairwise_distances(Xe, X), y, ye, k, utility)
    np.testing.assert_allclose(e.values, expected, rtol=0, atol=1e-12)
    empty = -(ye**2) if utility == "neg_squared_error" else np.zeros(len(Xe))
    np.testing.assert_allclose(e.base_values, empty, atol=0)


@pytest.mark.parametrize(
    ("model_kwargs", "metric", "params"),
    [
        ({"metric": "manhattan"}, "manhattan", {}),
        ({"metric": "minkowski", "p": 3}, "minkowski", {"p": 3}),
        ({"metric": "chebyshev"}, "chebyshev", {}),
        ({"metric": "cosine"}, "cosine", {}),
        ({"metric": "minkowski", "p": 1, "metric_params": {"w": np.array([1.0, 3.0])}},
         "minkowski", {"p": 1, "w": np.array([1.0, 3.0])}),
    ],
)
def test_respects_the_model_metric(model_kwargs, metric, params):
    X, Xe, rng = small_problem(7, n=9)
    y, ye = rng.integers(0, 2, size=9), rng.integers(0, 2, size=3)
    model = KNeighborsClassifier(n_neighbors=3, algorithm="brute", **model_kwargs).fit(X, y)
    e = KNNShapleyExplainer(model, X, y=y, silent=True)(Xe, ye)
    distances = pairwise_distances(Xe, X, metric=metric, **params)
    np.testing.assert_allclose(e.values, enumerate_shapley(distances, y, ye, 3, "accuracy"), atol=1e-12)
    # the sorted neighbours are the model's own
    _, model_nearest = model.kneighbors(Xe, n_neighbors=3)
    np.testing.assert_array_equal(np.sort(np.argsort(distances, axis=1, kind="stable")[:, :3]), np.sort(model_nearest))


def test_precomputed_metric_equals_euclidean():
    X, Xe, rng = small_problem(3, n=10)
    y, ye = rng.normal(size=10), rng.normal(size=3)
    euclid = KNNShapleyExplainer(KNeighborsRegressor(n_neighbors=4).fit(X, y), X, y=y, silent=True)(Xe, ye)
    D_train, D_explained = pairwise_distances(X, X), pairwise_distances(Xe, X)
    model = KNeighborsRegressor(n_neighbors=4, metric="precomputed").fit(D_train, y)
    pre = KNNShapleyExplainer(model, D_train, y=y, silent=True)(D_explained, ye)
    np.testing.assert_allclose(pre.values, euclid.values, atol=1e-12)


def test_public_function_matches_enumeration_and_utility():
    rng = np.random.default_rng(11)
    distances = rng.integers(0, 4, size=(4, 7)).astype(float)  # many ties
    y, ye = rng.choice(["a", "b"], size=7), rng.choice(["a", "b", "c"], size=4)  # "c": never seen
    values = knn_shapley_values(distances, y, ye, n_neighbors=2)
    np.testing.assert_allclose(values, enumerate_shapley(distances, y, ye, 2, "accuracy"), atol=1e-12)
    full = knn_utility(distances, y, ye, n_neighbors=2)
    np.testing.assert_allclose(values.sum(axis=1), full, atol=1e-12)
    unseen = ye == "c"
    assert unseen.any() and np.all(values[unseen] == 0)


# ----------------------------------------------------------------------------------------------------
# Axioms and identities with the model's own predictions
# ----------------------------------------------------------------------------------------------------


def test_efficiency_equals_predict_proba_of_the_true_class():
    X, y = load_wine(return_X_y=True)
    model = KNeighborsClassifier(n_neighbors=7).fit(X[::2], y[::2])
    e = KNNShapleyExplainer(model, X[::2], y=y[::2], silent=True)(X[1::2], y[1::2])
    proba = model.predict_proba(X[1::2])[np.arange(len(X[1::2])), np.searchsorted(model.classes_, y[1::2])]
    np.testing.assert_allclose(e.base_values + e.values.sum(axis=1), proba, atol=1e-12)


def test_efficiency_equals_predict_and_squared_error():
    X, y = load_diabetes(return_X_y=True)
    model = KNeighborsRegressor(n_neighbors=10).fit(X[:300], y[:300])
    Xe, ye = X[300:340], y[300:340]
    pred = KNNShapleyExplainer(model, X[:300], y=y[:300], utility="prediction", silent=True)(Xe)
    np.testing.assert_allclose(pred.base_values + pred.values.sum(axis=1), model.predict(Xe), rtol=1e-12)
    err = KNNShapleyExplainer(model, X[:300], y=y[:300], silent=True)(Xe, ye)
    np.testing.assert_allclose(err.base_values + err.values.sum(axis=1), -((model.predict(Xe) - ye) ** 2), rtol=1e-9)
    np.testing.assert_allclose(err.base_values, -(ye**2))


@pytest.mark.parametrize(("model_class", "utility"), UTILITY_CASES)
def test_duplicate_rows_get_equal_values(model_class, utility):
    X, y = load_iris(return_X_y=True)
    X, y = X[::5].copy(), y[::5].copy()
    X[7], y[7] = X[3], y[3]  # training points 3 and 7 are interchangeable players
    X[12], y[12] = X[3], y[3]
    model = model_class(n_neighbors=4).fit(X, y)
    Xe, ye = load_iris(return_X_y=True)[0][1::7], load_iris(return_X_y=True)[1][1::7].astype(float)
    e = KNNShapleyExplainer(model, X, y=y, utility=utility, silent=True)(Xe, None if utility == "prediction" else ye)
    np.testing.assert_array_equal(e.values[:, 3], e.values[:, 7])
    np.testing.assert_array_equal(e.values[:, 3], e.values[:, 12])
    assert np.abs(e.values[:, 3]).max() > 0


@pytest.mark.parametrize("utility", ["accuracy", "neg_squared_error"])
def test_copies_are_symmetric_even_with_an_equidistant_point_between_them(utility):
    # training points 0 and 2 are copies; point 1 is at the same distance with another label
    X = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 0.0], [3.0, 3.0], [-2.0, 0.5]])
    y = np.array([1, 0, 1, 1, 0]) if utility == "accuracy" else np.array([2.0, 5.0, 2.0, 1.0, -1.0])
    model_class = KNeighborsClassifier if utility == "accuracy" else KNeighborsRegressor
    model = model_class(n_neighbors=1).fit(X, y)
    Xe, ye = np.zeros((1, 2)), y[[0]] * 0 + (1 if utility == "accuracy" else 0.5)
    e = KNNShapleyExplainer(model, X, y=y, silent=True)(Xe, ye)
    assert e.values[0, 0] == e.values[0, 2] != e.values[0, 1]
    expected = enumerate_shapley(pairwise_distances(Xe, X), y, ye, 1, utility)
    np.testing.assert_allclose(e.values, expected, atol=1e-12)


def test_far_points_beyond_k_share_the_tail_value():
    # A training point that is never among the K nearest of any coalition containing K closer points still
    # gets a value: with equal labels the recursion gives equal values to all points sharing a label run.
    distances = np.arange(6, dtype=float)[None]
    values = knn_shapley_values(distances, [1, 1, 1, 1, 1, 1], [1], n_neighbors=2)
    np.testing.assert_allclose(values, np.full((1, 6), 2 / 2 / 6))  # v(full) = 1 split equally (symmetry)


# ----------------------------------------------------------------------------------------------------
# Kernels agree with their NumPy twin
# ----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("utility", ["accuracy", "prediction", "neg_squared_error"])
@pytest.mark.parametrize(("n", "k"), [(1, 1), (1, 3), (2, 1), (5, 5), (50, 7), (500, 1), (500, 40)])
def test_numba_kernels_agree_with_numpy_twin(utility, n, k):
    rng = np.random.default_rng(n * 100 + k)
    distances = rng.random(size=(4, n))
    if utility == "accuracy":
        y, ye = rng.integers(0, 3, size=n), rng.integers(0, 3, size=4)
    else:
        y, ye = rng.normal(size=n) * 10, rng.normal(size=4)
    if n > 1:
        distances[:, 1] = distances[:, 0]  # one tie
    got = knn_shapley_values(distances, y, ye, n_neighbors=k, utility=utility)
    order = np.array([reference_order(row, y, utility) for row in distances])
    np.testing.assert_allclose(got, numpy_twin(order, y, ye, k, utility), rtol=1e-10, atol=1e-10)
    assert _kernels.JIT_OPTIONS["cache"]


# ----------------------------------------------------------------------------------------------------
# Property tests
# ----------------------------------------------------------------------------------------------------


@settings(max_examples=40)
@given(
    n=st.integers(1, 8),
    k=st.integers(1, 9),
    seed=st.integers(0, 2**31 - 1),
    utility=st.sampled_from(["accuracy", "prediction", "neg_squared_error"]),
    tie_levels=st.integers(1, 6),
)
def test_property_exact_shapley_values(n, k, seed, utility, tie_levels):
    """Any distances (ties included), labels and K: the recursion equals enumeration, and efficiency holds."""
    rng = np.random.default_rng(seed)
    distances = rng.integers(0, tie_levels, size=(2, n)).astype(float)
    if utility == "accuracy":
        y, ye = rng.integers(0, 2, size=n), rng.integers(0, 2, size=2)
    else:
        y, ye = np.round(rng.normal(size=n) * 5, 2), np.round(rng.normal(size=2), 2)
    values = knn_shapley_values(distances, y, ye, n_neighbors=k, utility=utility)
    np.testing.assert_allclose(values, enumerate_shapley(distances, y, ye, k, utility), atol=1e-10)
    empty = -(ye.astype(float) ** 2) if utility == "neg_squared_error" else 0.0
    full = knn_utility(distances, y, ye, n_neighbors=k, utility=utility)
    np.testing.assert_allclose(empty + values.sum(axis=1), full, atol=1e-10)


@settings(max_examples=30)
@given(n=st.integers(2, 300), k=st.integers(1, 20), seed=st.integers(0, 2**31 - 1))
def test_property_efficiency_and_symmetry_large(n, k, seed):
    """Large n (no enumeration): efficiency, and two copies of one training point get the same value."""
    rng = np.random.default_rng(seed)
    X, Xe = rng.normal(size=(n, 3)), rng.normal(size=(3, 3))
    y, ye = rng.normal(size=n), rng.normal(size=3)
    X[-1], y[-1] = X[0], y[0]
    model = KNeighborsRegressor(n_neighbors=k).fit(X, y)
    e = KNNShapleyExplainer(model, X, y=y, silent=True)(Xe, ye)
    np.testing.assert_array_equal(e.values[:, 0], e.values[:, -1])
    d = pairwise_distances(Xe, X)
    full = knn_utility(d, y, ye, n_neighbors=k, utility="neg_squared_error")
    np.testing.assert_allclose(e.base_values + e.values.sum(axis=1), full, rtol=1e-9, atol=1e-9)


# ----------------------------------------------------------------------------------------------------
# Output contract, determinism, parallel chunks
# ----------------------------------------------------------------------------------------------------


def test_output_contract_and_names():
    X, y = load_iris(return_X_y=True, as_frame=True)
    X_train, y_train = X.iloc[::3], y.iloc[::3]
    model = KNeighborsClassifier(n_neighbors=3).fit(X_train.to_numpy(), y_train.to_numpy())
    Xe = X.iloc[1::30]
    e = KNNShapleyExplainer(model, X_train, y=y_train, silent=True)(Xe, y.iloc[1::30])
    assert isinstance(e, shap.Explanation)
    assert e.values.shape == (len(Xe), len(X_train)) and e.base_values.shape == (len(Xe),)
    assert list(e.feature_names) == [str(i) for i in X_train.index]
    assert list(e.row_names) == [str(i) for i in Xe.index]
    # data: 1 where the training label is the model's own predicted label (docs/pictures.md); text the labels
    predicted = model.predict(Xe.to_numpy())
    np.testing.assert_array_equal(e.data, (y_train.to_numpy()[None] == predicted[:, None]) * 1.0)
    assert e.data.dtype == np.float32 and list(e.display_data[0]) == [str(v) for v in y_train]


def test_data_is_training_label_minus_the_knn_prediction():
    X, y = load_diabetes(return_X_y=True)
    model = KNeighborsRegressor(n_neighbors=4).fit(X[:40], y[:40])
    for utility, call_y in (("prediction", None), ("neg_squared_error", y[60:66])):
        e = KNNShapleyExplainer(model, X[:40], y=y[:40], utility=utility, silent=True)(X[60:66], call_y)
        np.testing.assert_allclose(e.data, y[:40][None] - model.predict(X[60:66])[:, None], rtol=0, atol=1e-3)
        assert e.display_data[2, 5] == f"{y[5]:.4g}"


def test_chunks_and_threads_give_identical_values(monkeypatch):
    X, y = load_diabetes(return_X_y=True)
    model = KNeighborsRegressor(n_neighbors=5).fit(X[:200], y[:200])
    one = KNNShapleyExplainer(model, X[:200], y=y[:200], silent=True)(X[200:260], y[200:260])
    from shap_instances_knn import explainer as module

    monkeypatch.setattr(module, "_CHUNK_BYTES", 16 * 200 * 7)  # 7 rows per chunk: 9 chunks
    many = KNNShapleyExplainer(model, X[:200], y=y[:200], n_jobs=2, silent=True)(X[200:260], y[200:260])
    np.testing.assert_array_equal(one.values, many.values)


def test_user_inputs_are_not_modified():
    X, Xe, rng = small_problem(5, n=10)
    y, ye = rng.integers(0, 2, size=10), rng.integers(0, 2, size=3)
    copies = [a.copy() for a in (X, Xe, y, ye)]
    model = KNeighborsClassifier(n_neighbors=3).fit(X, y)
    KNNShapleyExplainer(model, X, y=y, silent=True)(Xe, ye)
    for before, after in zip(copies, (X, Xe, y, ye)):
        np.testing.assert_array_equal(before, after)
    assert model.n_neighbors == 3 and model.weights == "uniform"


def test_empty_batch():
    X, Xe, rng = small_problem(5, n=6)
    y = rng.integers(0, 2, size=6)
    e = KNNShapleyExplainer(KNeighborsClassifier(n_neighbors=2).fit(X, y), X, y=y, silent=True)(Xe[:0], y[:0])
    assert e.values.shape == (0, 6)


# ----------------------------------------------------------------------------------------------------
# Clear errors
# ----------------------------------------------------------------------------------------------------


@pytest.fixture
def fitted():
    X, Xe, rng = small_problem(2, n=8)
    y = rng.integers(0, 2, size=8)
    return KNeighborsClassifier(n_neighbors=3).fit(X, y), X, y, Xe


def test_refuses_distance_weights(fitted):
    _, X, y, _ = fitted
    with pytest.raises(UnsupportedModelError, match="weights='uniform'"):
        KNNShapleyExplainer(KNeighborsClassifier(n_neighbors=3, weights="distance").fit(X, y), X, y=y)


def test_refuses_other_models_and_unfitted(fitted):
    _, X, y, _ = fitted
    with pytest.raises(UnsupportedModelError, match="DecisionTreeRegressor"):
        KNNShapleyExplainer(DecisionTreeRegressor().fit(X, y), X, y=y)
    with pytest.raises(NotFittedError, match="not fitted"):
        KNNShapleyExplainer(KNeighborsClassifier(), X, y=y)
    with pytest.raises(UnsupportedModelError, match="single-output"):
        KNNShapleyExplainer(KNeighborsRegressor(n_neighbors=2).fit(X, np.c_[y, y]), X, y=np.c_[y, y])


def test_bad_arguments(fitted):
    model, X, y, Xe = fitted
    with pytest.raises(DataValidationError, match="y=y_train"):
        KNNShapleyExplainer(model, X)
    with pytest.raises(DataValidationError, match=r"y_train must have shape \(8,\)"):
        KNNShapleyExplainer(model, X, y=y[:5])
    with pytest.raises(DataValidationError, match="3 columns"):
        KNNShapleyExplainer(model, np.c_[X, X[:, 0]], y=y)
    with pytest.raises(ValueError, match="utility='prediction' is not available for a KNeighborsClassifier"):
        KNNShapleyExplainer(model, X, y=y, utility="prediction")
    explainer = KNNShapleyExplainer(model, X, y=y, silent=True)
    with pytest.raises(DataValidationError, match="needs the labels of the explained points"):
        explainer(Xe)
    with pytest.raises(DataValidationError, match=r"y_explained must have shape \(3,\)"):
        explainer(Xe, [0, 1])
    with pytest.raises(DataValidationError, match="X has 1 columns, but the model was fitted on 2"):
        explainer(Xe[:, :1], [0, 1, 0])
    with pytest.raises(DataValidationError, match="NaN"):
        explainer(np.full((3, 2), np.nan), [0, 1, 0])
    with pytest.raises(DataValidationError, match="numeric"):
        KNNShapleyExplainer(KNeighborsRegressor(n_neighbors=2).fit(X, y), X, y=np.array(["a"] * 8))
    with pytest.raises(ValueError, match="n_neighbors must be an integer >= 1"):
        knn_shapley_values(np.zeros((1, 3)), [0, 1, 0], [0], n_neighbors=0)
    with pytest.raises(ValueError, match="utility must be one of"):
        knn_shapley_values(np.zeros((1, 3)), [0, 1, 0], [0], n_neighbors=1, utility="f1")
    with pytest.raises(DataValidationError, match="distances contains NaN"):
        knn_shapley_values(np.full((1, 3), np.nan), [0, 1, 0], [0], n_neighbors=1)


def test_pandas_labels(fitted):
    model, X, y, Xe = fitted
    e = KNNShapleyExplainer(model, pd.DataFrame(X), y=pd.Series(y), silent=True)(pd.DataFrame(Xe), pd.Series([0, 1, 1]))
    ref = KNNShapleyExplainer(model, X, y=y, silent=True)(Xe, np.array([0, 1, 1]))
    np.testing.assert_array_equal(e.values, ref.values)


@pytest.mark.parametrize("module", ["shap_instances_knn.explainer", "shap_instances_knn.values"])
def test_docstring_examples_run(module):
    import importlib

    result = doctest.testmod(importlib.import_module(module), optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0
    assert shap_instances_knn.__all__


def test_sparse_input_gives_the_dense_values():
    import scipy.sparse as sp

    X, Xe, rng = small_problem(4, n=10)
    X[X < 0], Xe[Xe < 0] = 0.0, 0.0
    y, ye = rng.integers(0, 3, size=10), rng.integers(0, 3, size=3)
    model = KNeighborsClassifier(n_neighbors=3).fit(X, y)
    dense = KNNShapleyExplainer(model, X, y=y, silent=True)(Xe, ye)
    sparse = KNNShapleyExplainer(model, sp.csr_matrix(X), y=y, silent=True)(sp.csr_matrix(Xe), ye)
    np.testing.assert_allclose(sparse.values, dense.values, atol=1e-12)


# ----------------------------------------------------------------------------------------------------
# Defects found by the fuzz suite (tests/test_fuzz.py of the main package)
# ----------------------------------------------------------------------------------------------------


def test_a_model_fitted_on_string_labels_is_refused_clearly():
    """KNeighborsRegressor.fit accepts string targets; its predict then fails. Before: numpy's TypeError
    ("unsupported operand type(s) for /: 'str' and 'int'") from the multi-output probe; now the labels decide."""
    X, y = load_diabetes(return_X_y=True)
    labels = np.array([f"label{v}" for v in y[:40]], dtype=object)
    model = KNeighborsRegressor(n_neighbors=5).fit(X[:40], labels)
    with pytest.raises(DataValidationError, match="must be numeric"):
        KNNShapleyExplainer(model, X[:40], y=labels, utility="prediction", silent=True)


def test_labels_beyond_float_precision_are_refused_not_called_a_bug():
    """One label at int64's maximum among labels near 100: the exact values reach 1e17 and cancel to a
    prediction of about 150, beyond float64. Before: EfficiencyError "this is a bug"; now a refusal that says
    the values cancel."""
    X, y = load_diabetes(return_X_y=True)
    labels = np.round(y[:60]).astype(np.int64)
    labels[0] = np.iinfo(np.int64).max
    model = KNeighborsRegressor(n_neighbors=5).fit(X[:60], labels)
    explainer = KNNShapleyExplainer(model, X[:60], y=labels, utility="prediction", silent=True)
    with pytest.raises(DataValidationError, match="cancel"):
        explainer(X[60:66])


def test_ties_at_the_kth_neighbour_are_reported():
    """Rows 1e150 away from every training point are equally far from all of them (x - t == x in float64):
    the explained utility then breaks the ties its documented way, not as model.predict does. Before: silently
    a different quantity; now a ReconstructionWarning. Without ties, no warning."""
    import warnings

    X, y = load_diabetes(return_X_y=True)
    model = KNeighborsRegressor(n_neighbors=5).fit(X[:60], y[:60])
    explainer = KNNShapleyExplainer(model, X[:60], y=y[:60], utility="prediction", silent=True)
    with pytest.warns(shap_instances.exceptions.ReconstructionWarning, match="6 of 6 explained rows"):
        explainer(X[60:66] * 1e150)
    with warnings.catch_warnings():
        warnings.simplefilter("error", shap_instances.exceptions.ReconstructionWarning)
        e = explainer(X[60:66])
    np.testing.assert_allclose(e.base_values + e.values.sum(axis=1), model.predict(X[60:66]), atol=1e-9)


def test_a_squared_error_that_overflows_is_refused():
    """Labels of 1e160: their squared errors are infinite. Before: EfficiencyError "by nan ... this is a bug"
    (found through the command line); now a refusal naming the rows and the labels' size."""
    X, y = load_diabetes(return_X_y=True)
    model = KNeighborsRegressor(n_neighbors=5).fit(X[:40], y[:40] * 1e160)
    explainer = KNNShapleyExplainer(model, X[:40], y=y[:40] * 1e160, silent=True)
    with pytest.raises(DataValidationError, match=r"overflows float64 for explained rows \[0, 1, 2\]"):
        explainer(X[40:43], y[40:43] * 1e160)
    e = KNNShapleyExplainer(model, X[:40], y=y[:40] * 1e150, silent=True)(X[40:43], y[40:43] * 1e150)
    assert np.isfinite(e.values).all()


def test_the_prediction_utility_refuses_the_call_y():
    """utility="prediction" has no use for the explained labels: passing them is refused, not ignored."""
    from shap_instances.exceptions import InvalidParameterError

    X, Xe, rng = small_problem(3, n=9)
    y = rng.normal(size=9)
    explainer = KNNShapleyExplainer(KNeighborsRegressor(n_neighbors=3).fit(X, y), X, y=y, utility="prediction",
                                    silent=True)
    with pytest.raises(InvalidParameterError, match="utility='prediction' .* takes no y when called"):
        explainer(Xe, rng.normal(size=len(Xe)))
    assert explainer(Xe).values.shape == (len(Xe), 9)


# ----------------------------------------------------------------------------------------------------
# Data that is not the model's own (issue 26)
# ----------------------------------------------------------------------------------------------------

def _own_data_cases():
    X, y = load_iris(return_X_y=True)
    X, y = X[::2], y[::2]
    order = np.random.default_rng(0).permutation(len(y))
    return X, y, {"targets shuffled": (X, y[order]), "rows shuffled": (X[order], y), "targets as bool": (X, y == 1)}


@pytest.mark.parametrize("case", ["targets shuffled", "rows shuffled", "targets as bool"])
def test_data_that_is_not_the_models_own_is_warned_about(case):
    """Before: values that no longer add up to predict_proba, with no warning."""
    X, y, cases = _own_data_cases()
    model = KNeighborsClassifier(n_neighbors=5).fit(X, y)
    with pytest.warns(shap_instances.exceptions.ReconstructionWarning, match="not the data the model was fitted on"):
        KNNShapleyExplainer(model, *cases[case][:1], y=cases[case][1], silent=True)


def test_the_models_own_data_in_another_row_order_and_doubled_regression_targets():
    """The same pairs in another order are the model's training set (no warning); doubled targets are not."""
    X, y, _ = _own_data_cases()
    model = KNeighborsClassifier(n_neighbors=5).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error", shap_instances.exceptions.ReconstructionWarning)
        KNNShapleyExplainer(model, X[::-1], y=y[::-1], silent=True)
    Xd, yd = load_diabetes(return_X_y=True)
    regressor = KNeighborsRegressor(n_neighbors=5).fit(Xd[:200], yd[:200])
    with pytest.warns(shap_instances.exceptions.ReconstructionWarning, match="not the data the model was fitted on"):
        KNNShapleyExplainer(regressor, Xd[:200], y=2 * yd[:200], utility="prediction", silent=True)


def test_n_jobs_beyond_the_cores_is_capped_not_joblibs_error():
    """Before: n_jobs=10**6 raised joblib's 'Numeric literal 2000000 is too large'."""
    X, y, _ = _own_data_cases()
    model = KNeighborsClassifier(n_neighbors=5).fit(X, y)
    many = KNNShapleyExplainer(model, X, y=y, n_jobs=10**6, silent=True)(X[:4], y[:4]).values
    one = KNNShapleyExplainer(model, X, y=y, silent=True)(X[:4], y[:4]).values
    np.testing.assert_array_equal(many, one)
