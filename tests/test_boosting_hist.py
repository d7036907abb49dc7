"""BoostingExplainer on scikit-learn's HistGradientBoosting: gradient contributions against a leaf-by-leaf loop
over the binned data, L2 penalty, sample and class weights, the early-stopping split, missing values and
categorical splits reproduced, float32 bound of the target weights, refusals."""

import numpy as np
import pandas as pd
import pytest
from sklearn.ensemble import HistGradientBoostingClassifier, HistGradientBoostingRegressor
from threadpoolctl import threadpool_limits

from shap_instances import BoostingExplainer
from shap_instances.exceptions import DataValidationError, UnsupportedModelError

from .boosting_naive import hgb_gradient_contributions


@pytest.fixture(autouse=True)
def _one_openmp_thread():
    """HistGradientBoosting's OpenMP threads only slow these small fits down (and a shared machine more so)."""
    with threadpool_limits(1, user_api="openmp"):
        yield


def _data(n=300, p=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    y = X[:, 0] + np.sin(2 * X[:, 1]) + 0.3 * rng.normal(size=n)
    return X, y, rng


def _relative(a, b):
    return float(np.max(np.abs(a - b) / np.maximum(1.0, np.abs(b))))


@pytest.mark.parametrize("case", ["squared_error", "poisson", "gamma", "binary", "multiclass"])
@pytest.mark.parametrize("weighted", [False, True])
def test_gradient_contributions_equal_a_leaf_by_leaf_loop(case, weighted):
    X, y, rng = _data()
    s = rng.uniform(0.5, 2.0, len(y)) if weighted else None
    if case in ("binary", "multiclass"):
        target = (y > 0).astype(int) if case == "binary" else np.digitize(y, [-0.5, 0.7])
        model = HistGradientBoostingClassifier(max_iter=12, max_leaf_nodes=8, l2_regularization=0.7)
    else:
        target = {"squared_error": y, "poisson": np.round(np.exp(y)), "gamma": np.exp(y)}[case]
        model = HistGradientBoostingRegressor(max_iter=12, loss=case, max_leaf_nodes=8, l2_regularization=0.7)
    model.fit(X, target, sample_weight=s)
    X_test = rng.normal(size=(7, X.shape[1]))
    explainer = BoostingExplainer(model, X, y=target, sample_weight=s, kind="gradients")
    e = explainer(X_test)
    naive = hgb_gradient_contributions(model, X, target.astype(np.float64), X_test, sample_weight=s)
    values = e.values if e.values.ndim == 3 else e.values[:, :, None]
    # the closed-form gradients are rounded to float32 like the library's, but may differ from its own
    # expression by one float32 step
    assert np.max(np.abs(values - naive)) <= 1e-6 * max(1.0, np.abs(naive).max())
    if case in ("binary", "multiclass"):
        margin = model.decision_function(X_test)
    else:
        margin = model.predict(X_test) if case == "squared_error" else np.log(model.predict(X_test))
    assert _relative(e.base_values + e.values.sum(axis=1), margin) <= 1e-9
    assert explainer.trees_.max_leaf_error <= 1e-9


def test_early_stopping_split_is_reproduced_and_its_rows_get_nothing():
    X, y, rng = _data(n=400)
    model = HistGradientBoostingRegressor(max_iter=200, early_stopping=True, validation_fraction=0.25,
                                          n_iter_no_change=3, random_state=3).fit(X, y)
    assert model.n_iter_ < 200
    explainer = BoostingExplainer(model, X, y=y, kind="gradients")
    used = explainer.trees_.used
    assert used.sum() == 300
    e = explainer(X[:20])
    assert np.all(e.values[:, ~used] == 0.0)
    assert _relative(e.base_values + e.values.sum(1), model.predict(X[:20])) <= 1e-9
    # the default (random_state=None) split is reproduced too: its seed is stored
    clf = HistGradientBoostingClassifier(max_iter=50, early_stopping=True, validation_fraction=0.2).fit(X, y > 0)
    e = BoostingExplainer(clf, X, y=y > 0)(X[:10])
    assert _relative(e.base_values + e.values.sum(1), clf.decision_function(X[:10])) <= 1e-9


def test_missing_values_and_categorical_splits_are_reproduced():
    X, y, rng = _data(n=400)
    X[rng.random(X.shape) < 0.15] = np.nan
    X[:, 3] = rng.integers(0, 6, len(y))
    y = y + (X[:, 3] % 2) * 2
    model = HistGradientBoostingRegressor(max_iter=20, categorical_features=[3]).fit(X, y)
    assert any(p.nodes["is_categorical"].any() for it in model._predictors for p in it)
    X_test = X[:30].copy()
    X_test[0, :3] = np.nan
    explainer = BoostingExplainer(model, X, y=y, kind="gradients")
    e = explainer(X_test)
    assert _relative(e.base_values + e.values.sum(1), model.predict(X_test)) <= 1e-9
    naive = hgb_gradient_contributions(model, X, y, X_test)
    assert np.max(np.abs(e.values - naive[:, :, 0])) <= 1e-6 * np.abs(naive).max()


def test_class_weight_enters_the_row_weights():
    X, y, rng = _data()
    target = np.digitize(y, [-0.5, 0.7])
    model = HistGradientBoostingClassifier(max_iter=8, class_weight="balanced").fit(X, target)
    e = BoostingExplainer(model, X, y=target)(X[:5])
    assert _relative(e.base_values + e.values.sum(1), model.decision_function(X[:5])) <= 1e-9


def test_target_weights_hold_to_float32_rounding_of_the_gradients():
    X, y, rng = _data()
    model = HistGradientBoostingRegressor(max_iter=30, l2_regularization=1.0).fit(X, y)
    explainer = BoostingExplainer(model, X, y=y)
    assert explainer.kind_ == "weights"
    W = explainer.weights(X[:25])
    assert np.allclose(W.sum(1), 1.0, atol=1e-12)  # the mean initial prediction absorbs the L2 shrinkage
    assert _relative(W @ y, model.predict(X[:25])) <= 1e-7


def test_data_frames_are_matched_by_column_name():
    X, y, rng = _data()
    frame = pd.DataFrame(X, columns=list("abcd"))
    model = HistGradientBoostingRegressor(max_iter=5).fit(frame, y)
    explainer = BoostingExplainer(model, frame, y=y)
    e1 = explainer(frame.iloc[:5])
    e2 = explainer(frame.iloc[:5, ::-1])
    assert np.array_equal(e1.values, e2.values)
    with pytest.raises(DataValidationError, match="columns"):
        explainer(frame.iloc[:5].rename(columns={"a": "z"}))


@pytest.mark.parametrize("model, match", [
    (HistGradientBoostingRegressor(loss="absolute_error"), "loss='absolute_error'"),
    (HistGradientBoostingRegressor(loss="quantile", quantile=0.3), "loss='quantile'"),
    (HistGradientBoostingRegressor(monotonic_cst=[1, 0, 0, 0]), "monotonic_cst"),
])
def test_unsupported_settings_are_refused(model, match):
    X, y, _ = _data(n=100)
    model.set_params(max_iter=3).fit(X, y)
    with pytest.raises(UnsupportedModelError, match=match):
        BoostingExplainer(model, X, y=y)


def test_other_rows_are_refused():
    X, y, _ = _data(n=200)
    model = HistGradientBoostingRegressor(max_iter=3).fit(X, y)
    with pytest.raises(DataValidationError, match="given to fit"):
        BoostingExplainer(model, X[:150], y=y[:150])
    with pytest.raises(DataValidationError, match="given to fit"):
        BoostingExplainer(model, X[::-1], y=y)
