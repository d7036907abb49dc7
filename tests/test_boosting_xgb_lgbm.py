"""BoostingExplainer on XGBoost and LightGBM (skipped, with the reason, where a library is not installed).

Independent route: the training trajectory from each library's own staged raw predictions (``iteration_range``
/ ``num_iteration``), gradients from closed forms, and each leaf's value shared among its rows tree by tree."""

import warnings

import numpy as np
import pandas as pd
import pytest
from scipy.special import softmax

from shap_instances import BoostingExplainer
from shap_instances.exceptions import DataValidationError, UnsupportedModelError
from shap_instances.testing import ConformanceProblem, check_explainer

xgb = pytest.importorskip("xgboost", reason="xgboost is not installed (pip install 'shap-instances[boosting]')")
lgb = pytest.importorskip("lightgbm", reason="lightgbm is not installed (pip install 'shap-instances[boosting]')")

warnings.filterwarnings("ignore", message="X does not have valid feature names")


def _data(n=400, p=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    y = X[:, 0] + np.sin(2 * X[:, 1]) + 0.3 * rng.normal(size=n)
    return X, y, rng


def _targets(case, y):
    return {"regression": y, "binary": (y > 0).astype(int), "multiclass": np.digitize(y, [-0.5, 0.7]),
            "poisson": np.round(np.exp(y / 2))}[case]


def _relative(a, b):
    return float(np.max(np.abs(a - b) / np.maximum(1.0, np.abs(b))))


def _shared_by_leaf(train_leaves, query_leaves, g, h, eta, l2, K):
    """Contributions (m, n, K): tree t's leaf value -eta sum g / (sum h + l2) shared in proportion to -g."""
    m, n = query_leaves.shape[0], train_leaves.shape[0]
    out = np.zeros((m, n, K))
    for t in range(train_leaves.shape[1]):
        k, gt, ht = t % K, g[t], h[t]
        for leaf in np.unique(train_leaves[:, t]):
            members = train_leaves[:, t] == leaf
            share = -eta * gt[members] / (ht[members].sum() + l2)
            for r in np.flatnonzero(query_leaves[:, t] == leaf):
                out[r, members, k] += share
    return out


# ----------------------------------------------------------------------------- XGBoost
def _xgb_naive(model, X, y, X_test, s):
    booster = model.get_booster()
    K = 3 if model.objective.startswith("multi") else 1
    n_rounds = booster.num_boosted_rounds()
    train = xgb.DMatrix(X)
    y32 = np.asarray(y, np.float32)
    w = np.ones(len(y), np.float32) if s is None else s.astype(np.float32)
    g, h = [], []
    for i in range(n_rounds):
        if i == 0:
            raw = booster.predict(train, output_margin=True, iteration_range=(0, 1)).reshape(len(y), K)
            leaves = booster.predict(train, pred_leaf=True, iteration_range=(0, 1)).reshape(len(y), K).astype(int)
            values = np.stack([_leaf_values(booster, k)[leaves[:, k]] for k in range(K)], axis=1)
            raw = (raw - values).astype(np.float32)  # the base margin, up to float32 rounding
        else:
            raw = booster.predict(train, output_margin=True, iteration_range=(0, i)).reshape(len(y), K)
        if model.objective == "reg:squarederror":
            gi, hi = raw[:, 0] - y32, np.ones_like(y32)
            gi, hi = gi[:, None], hi[:, None]
        elif K == 1:
            p = (1 / (1 + np.exp(-raw[:, 0].astype(np.float64)))).astype(np.float32)
            gi, hi = (p - y32)[:, None], (p * (1 - p))[:, None]
        else:
            p = softmax(raw.astype(np.float64), axis=1).astype(np.float32)
            gi, hi = p - (y32[:, None] == np.arange(K)), 2 * p * (1 - p)
        for k in range(K):
            g.append((gi[:, k] * w).astype(np.float64))
            h.append((hi[:, k] * w).astype(np.float64))
    eta, l2 = model.get_params()["learning_rate"], model.get_params()["reg_lambda"] or 1.0
    train_leaves = booster.predict(train, pred_leaf=True).reshape(len(y), -1)
    query_leaves = booster.predict(xgb.DMatrix(X_test), pred_leaf=True).reshape(len(X_test), -1)
    return _shared_by_leaf(train_leaves, query_leaves, g, h, eta, l2, K)


def _leaf_values(booster, t):
    import json

    tree = json.loads(booster.save_raw("json"))["learner"]["gradient_booster"]["model"]["trees"][t]
    return np.asarray(tree["split_conditions"], dtype=np.float32)


@pytest.mark.parametrize("case", ["regression", "binary", "multiclass"])
def test_xgboost_contributions_equal_a_leaf_by_leaf_loop(case):
    X, y, rng = _data()
    target = _targets(case, y)
    s = rng.uniform(0.5, 2.0, len(y))
    if case == "regression":
        model = xgb.XGBRegressor(n_jobs=1, n_estimators=15, max_depth=3, learning_rate=0.3, reg_lambda=2.0)
    else:
        model = xgb.XGBClassifier(n_jobs=1, n_estimators=15, max_depth=3, learning_rate=0.3, reg_lambda=2.0)
    model.fit(X, target, sample_weight=s)
    X_test = rng.normal(size=(8, X.shape[1]))
    explainer = BoostingExplainer(model, X, y=target, sample_weight=s, kind="gradients")
    e = explainer(X_test)
    naive = _xgb_naive(model, X, target, X_test, s)
    values = e.values if e.values.ndim == 3 else e.values[:, :, None]
    assert np.max(np.abs(values - naive)) <= 1e-5 * np.abs(naive).max()
    margin = model.get_booster().predict(xgb.DMatrix(X_test), output_margin=True)
    gap = _relative(e.base_values + e.values.sum(axis=1), margin)
    assert gap <= 2e-6  # float32 margins: the bound is (T + 2) 2^-23 (|F_0| + sum_t |v_t(x)|)
    assert explainer.trees_.max_leaf_error <= 1e-6


def test_xgboost_weights_missing_values_booster_and_early_stopping():
    X, y, rng = _data()
    X[rng.random(X.shape) < 0.1] = np.nan
    model = xgb.XGBRegressor(n_jobs=1, n_estimators=40, max_depth=3, early_stopping_rounds=3)
    model.fit(X[:300], y[:300], eval_set=[(X[300:], y[300:])], verbose=False)
    assert model.best_iteration < 39
    explainer = BoostingExplainer(model, X[:300], y=y[:300])
    assert explainer.kind_ == "weights" and explainer.trees_.n_trees == model.best_iteration + 1
    W = explainer.weights(X[300:])
    assert np.allclose(W.sum(1), 1.0, atol=1e-12)
    assert _relative(W @ explainer.y_train_, model.predict(X[300:])) <= 1e-5
    booster = xgb.train({"nthread": 1, "max_depth": 2, "objective": "binary:logistic"},
                        xgb.DMatrix(X[:300], y[:300] > 0), 10)
    e = BoostingExplainer(booster, X[:300], y=(y[:300] > 0).astype(int))(X[300:])
    assert _relative(e.base_values + e.values.sum(1), booster.predict(xgb.DMatrix(X[300:]), output_margin=True)) <= 1e-5


@pytest.mark.parametrize("params, match", [
    (dict(reg_alpha=0.5), "reg_alpha"),
    (dict(subsample=0.5), "subsample"),
    (dict(booster="dart"), "booster='dart'"),
    (dict(objective="reg:absoluteerror"), "objective='reg:absoluteerror'"),
    (dict(num_parallel_tree=3), "num_parallel_tree"),
    (dict(monotone_constraints=(1, 0, 0, 0)), "monotone_constraints"),
    (dict(objective="count:poisson"), "max_delta_step=0.7 clips"),
])
def test_xgboost_settings_that_break_the_identity_are_refused(params, match):
    X, y, _ = _data(n=200)
    target = np.where(X[:, 0] > 1, 100.0, 0.0) if params.get("objective") == "count:poisson" else y
    model = xgb.XGBRegressor(n_jobs=1, n_estimators=5, max_depth=2, **params).fit(X, target)
    with pytest.raises(UnsupportedModelError, match=match):
        BoostingExplainer(model, X, y=target)


def test_xgboost_poisson_while_its_step_clipping_does_not_bind():
    X, y, _ = _data(n=200)
    target = np.round(np.exp(y / 2))
    model = xgb.XGBRegressor(n_jobs=1, n_estimators=10, max_depth=2, objective="count:poisson").fit(X, target)
    e = BoostingExplainer(model, X, y=target)(X[:10])
    margin = model.get_booster().predict(xgb.DMatrix(X[:10]), output_margin=True)
    assert _relative(e.base_values + e.values.sum(1), margin) <= 1e-5


@pytest.mark.slow  # shap's plots: about 5 s
def test_xgboost_conformance_on_data_frames():
    X, y, _ = _data(n=80)
    frame = pd.DataFrame(X, columns=["a", "b", "c", "d"])
    model = xgb.XGBRegressor(n_jobs=1, n_estimators=10, max_depth=2).fit(frame.iloc[:70], y[:70])
    problem = ConformanceProblem(model, frame.iloc[:70], frame.iloc[70:], y=y[:70], explained=model.predict, atol=1e-5)
    check_explainer(BoostingExplainer, problem)


# ----------------------------------------------------------------------------- LightGBM
def _lgb_naive(model, X, y, X_test, s):
    booster = model.booster_
    K = booster.num_model_per_iteration()
    n = len(y)
    w = np.ones(n, np.float32) if s is None else s.astype(np.float32)
    y32 = np.asarray(y, np.float32).astype(np.float64)
    w64 = w.astype(np.float64)
    regression = isinstance(model, lgb.LGBMRegressor)
    if regression:
        base = np.array([np.sum(y32 * w64) / w64.sum()])
    elif K == 1:
        p = np.sum((y32 > 0) * w64) / w64.sum()
        base = np.array([np.log(p / (1 - p))])
    else:
        base = np.log(np.bincount(y.astype(int), weights=w64, minlength=K) / w64.sum())
    g, h = [], []
    for i in range(booster.current_iteration()):
        raw = np.broadcast_to(base, (n, K)) if i == 0 else booster.predict(X, raw_score=True, num_iteration=i)
        raw = np.asarray(raw).reshape(n, K)
        if regression:
            gi = ((raw[:, 0] - y32).astype(np.float32) * w)[:, None]
            hi = np.broadcast_to(w[:, None], (n, 1))
        elif K == 1:
            p = 1 / (1 + np.exp(-raw[:, 0]))
            gi, hi = ((p - y32) * w64)[:, None], (p * (1 - p) * w64)[:, None]
        else:
            p = softmax(raw, axis=1)
            gi = (p - (y32[:, None] == np.arange(K))) * w64[:, None]
            hi = K / (K - 1) * p * (1 - p) * w64[:, None]
        for k in range(K):
            g.append(np.asarray(gi[:, k], np.float32).astype(np.float64))
            h.append(np.asarray(hi[:, k], np.float32).astype(np.float64))
    params = model.get_params()
    train_leaves = booster.predict(X, pred_leaf=True)
    query_leaves = booster.predict(X_test, pred_leaf=True)
    return _shared_by_leaf(train_leaves, query_leaves, g, h, params["learning_rate"], params["reg_lambda"], K)


@pytest.mark.parametrize("case", ["regression", "binary", "multiclass"])
def test_lightgbm_contributions_equal_a_leaf_by_leaf_loop(case):
    X, y, rng = _data()
    target = _targets(case, y)
    s = rng.uniform(0.5, 2.0, len(y))
    cls = lgb.LGBMRegressor if case == "regression" else lgb.LGBMClassifier
    model = cls(n_jobs=1, n_estimators=12, num_leaves=6, learning_rate=0.3, reg_lambda=2.0, verbose=-1)
    model.fit(X, target, sample_weight=s)
    X_test = rng.normal(size=(8, X.shape[1]))
    explainer = BoostingExplainer(model, X, y=target, sample_weight=s, kind="gradients")
    e = explainer(X_test)
    naive = _lgb_naive(model, X, target, X_test, s)
    values = e.values if e.values.ndim == 3 else e.values[:, :, None]
    # the closed-form gradients may differ from LightGBM's own expression by one float32 step
    assert np.max(np.abs(values - naive)) <= 1e-6 * np.abs(naive).max()
    margin = model.booster_.predict(X_test, raw_score=True)
    assert _relative(e.base_values + e.values.sum(axis=1), margin) <= 1e-9
    assert explainer.trees_.max_leaf_error <= 1e-9


def test_lightgbm_weights_missing_values_booster_and_poisson():
    X, y, rng = _data()
    X[rng.random(X.shape) < 0.1] = np.nan
    model = lgb.LGBMRegressor(n_jobs=1, n_estimators=30, num_leaves=8, verbose=-1).fit(X, y)
    explainer = BoostingExplainer(model, X, y=y)
    W = explainer.weights(X[:30])
    assert np.allclose(W.sum(1), 1.0, atol=1e-12)
    assert _relative(W @ y.astype(np.float32), model.predict(X[:30])) <= 1e-6  # float32 gradients
    booster = lgb.train({"num_threads": 1, "objective": "poisson", "num_leaves": 4, "verbose": -1},
                        lgb.Dataset(X, np.round(np.exp(y / 2))), 10)
    e = BoostingExplainer(booster, X, y=np.round(np.exp(y / 2)))(X[:20])
    assert _relative(e.base_values + e.values.sum(1), booster.predict(X[:20], raw_score=True)) <= 1e-9


@pytest.mark.parametrize("params, match", [
    (dict(reg_alpha=0.5), "lambda_l1"),
    (dict(subsample=0.5, subsample_freq=1), "bagging_fraction"),
    (dict(boosting_type="dart"), "boosting='dart'"),
    (dict(objective="huber"), "objective='huber'"),
    (dict(linear_tree=True), "linear_tree"),
    (dict(path_smooth=1.0), "path_smooth"),
    (dict(max_delta_step=0.1), "max_delta_step"),
    (dict(data_sample_strategy="goss"), "goss"),
])
def test_lightgbm_settings_that_break_the_identity_are_refused(params, match):
    X, y, _ = _data(n=200)
    model = lgb.LGBMRegressor(n_jobs=1, n_estimators=5, num_leaves=4, verbose=-1, **params).fit(X, y)
    with pytest.raises(UnsupportedModelError, match=match):
        BoostingExplainer(model, X, y=y)


@pytest.mark.slow  # shap's plots: about 5 s
def test_lightgbm_other_data_is_refused_and_conformance():
    X, y, _ = _data(n=120)
    model = lgb.LGBMRegressor(n_jobs=1, n_estimators=5, num_leaves=4, min_child_samples=5, verbose=-1).fit(X, y)
    with pytest.raises(DataValidationError, match="given to fit"):
        BoostingExplainer(model, X, y=y[::-1])
    frame = pd.DataFrame(X, columns=["a", "b", "c", "d"])
    model = lgb.LGBMRegressor(n_jobs=1, n_estimators=8, num_leaves=4, min_child_samples=5, verbose=-1)
    model.fit(frame.iloc[:100], y[:100])
    problem = ConformanceProblem(model, frame.iloc[:100], frame.iloc[100:106], y=y[:100], explained=model.predict,
                                 atol=1e-6)
    check_explainer(BoostingExplainer, problem)
