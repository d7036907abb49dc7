"""Baselines (l2 representer, influence function, random) and case-deletion diagnostics."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.linear_model import Lasso, LogisticRegression, Ridge

from shap_instances.explainers.representer import RepresenterExplainer
from shap_instances.metrics import (
    InfluenceFunction,
    deletion_diagnostics,
    influence_scores,
    l2_representer_scores,
    random_scores,
)


@pytest.fixture(scope="module")
def regression():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(150, 8))
    y = X @ np.r_[rng.normal(size=4), np.zeros(4)] + rng.normal(size=150)
    return X, y


def _loo_change(model, X, y, x):
    """Exact leave-one-out: f(x) - f_{-i}(x) for every training point (an independent reference)."""
    f = model.predict(x)[0]
    return np.array([f - clone(model).fit(np.delete(X, i, 0), np.delete(y, i)).predict(x)[0]
                     for i in range(X.shape[0])])


def test_influence_ridge_is_exact_loo_after_leverage_correction(regression):
    X, y = regression
    model = Ridge(alpha=3.0).fit(X, y)
    inf = InfluenceFunction(model, X, y, damping=0.0)
    scores = inf.scores(X[:1])[0]
    loo = _loo_change(model, X, y, X[:1])
    Z = np.hstack([X, np.ones((X.shape[0], 1))])
    leverage = np.einsum("ij,ij->i", Z @ np.linalg.inv(inf.hessian_), Z)
    # Sherman-Morrison: the exact leave-one-out change is the influence divided by 1 - leverage
    assert np.allclose(scores / (1 - leverage), loo, rtol=1e-6, atol=1e-10)


def test_influence_lasso_tracks_leave_one_out(regression):
    X, y = regression
    model = Lasso(alpha=0.1, tol=1e-12, max_iter=10**5).fit(X, y)
    scores = influence_scores(model, X, y, X[:1])[0]
    loo = _loo_change(model, X, y, X[:1])
    assert np.corrcoef(scores, loo)[0, 1] > 0.99
    assert np.median(np.abs(scores - loo)) < 0.05 * np.max(np.abs(loo))  # a few points change the active set


def test_influence_active_set_for_lasso(regression):
    X, y = regression
    model = Lasso(alpha=0.2, tol=1e-12, max_iter=10**5).fit(X, y)
    inf = InfluenceFunction(model, X, y)
    assert np.array_equal(inf.active_features_, np.flatnonzero(model.coef_))
    assert inf.hessian_.shape == (len(inf.active_features_) + 1,) * 2


def test_influence_logistic_sparse_equals_dense():
    rng = np.random.default_rng(1)
    X = sp.random(120, 30, density=0.2, random_state=1, format="csr", data_rvs=rng.standard_normal)
    y = (rng.random(120) < 0.5).astype(int)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = LogisticRegression(l1_ratio=1.0, solver="liblinear", C=1.0).fit(X, y)
    a = influence_scores(model, X, y, X[:3])
    b = influence_scores(model, X.toarray(), y, X[:3].toarray())
    assert np.allclose(a, b)


def test_l2_representer_equals_ridge_representer_times_alpha(regression):
    X, y = regression
    model = Ridge(alpha=2.5).fit(X, y)
    l2 = l2_representer_scores(model, X, y, X[:4])
    ours = RepresenterExplainer(model, X, y=y)(X[:4]).values
    assert np.allclose(l2, 2.5 * ours)


def test_random_scores_reproducible():
    assert np.array_equal(random_scores(3, 7, random_state=4), random_scores(3, 7, random_state=4))
    with pytest.raises(ValueError, match="n_train"):
        random_scores(2, 0)


def test_deletion_matches_manual_refit(regression):
    X, y = regression
    model = Ridge(alpha=1.0).fit(X, y)
    scores = RepresenterExplainer(model, X, y=y)(X[:3]).values
    res = deletion_diagnostics(model, X, y, X[:3], scores, fractions=(0.02, 0.04), n_jobs=2)
    assert res.del_plus.shape == (3, 2) and list(res.sizes) == [3, 6]
    j, k = 1, 6
    top = np.argsort(-scores[j])[:k]
    refit = Ridge(alpha=1.0).fit(np.delete(X, top, 0), np.delete(y, top))
    assert np.isclose(res.del_plus[j, 1], refit.predict(X[j:j + 1])[0] - model.predict(X[j:j + 1])[0])
    bottom = np.argsort(scores[j])[:k]
    refit = Ridge(alpha=1.0).fit(np.delete(X, bottom, 0), np.delete(y, bottom))
    assert np.isclose(res.del_minus[j, 1], refit.predict(X[j:j + 1])[0] - model.predict(X[j:j + 1])[0])
    # the representer points in the right direction (the paper's sign convention)
    assert np.all(res.auc_del_plus < 0) and np.all(res.auc_del_minus > 0)


def test_deletion_bad_inputs(regression):
    X, y = regression
    model = Ridge().fit(X, y)
    with pytest.raises(ValueError, match="shape"):
        deletion_diagnostics(model, X, y, X[:2], np.zeros((2, 3)))
    with pytest.raises(ValueError, match="fractions"):
        deletion_diagnostics(model, X, y, X[:2], np.zeros((2, len(y))), fractions=(0.0,))
