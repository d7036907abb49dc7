"""Definition 1's union, Corollary 3 on general matrix inputs, matrix factorisation, FIA, the paper's IF variant."""

import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.linear_model import LogisticRegression

from shap_instances.exceptions import DataValidationError, InvalidParameterError
from shap_instances.lowrank import (
    MatrixFactorization,
    MatrixFactorizationRepresenter,
    SoftImpute,
    TraceNormRegression,
    TraceNormRepresenter,
    fia_scores,
)
from shap_instances.metrics import InfluenceFunction, deletion_diagnostics
from tests.test_representer_lowrank import _problem


def _ratings(seed=0, n_users=25, n_items=18, rank=2, frac=0.5, noise=0.2):
    return _problem(seed, n_users, n_items, rank, frac, noise)


@pytest.fixture(scope="module")
def soft():
    pairs, ratings = _ratings()
    model = SoftImpute(lam=1.5, tol=1e-13, max_iter=20_000).fit(pairs, ratings)
    return model, pairs, ratings, MatrixFactorizationRepresenter.from_soft_impute(model, pairs, ratings)


# ---- Definition 1: the union -------------------------------------------------------------------------------

def test_union_is_definition1_by_brute_force(soft):
    model, pairs, ratings, rep = soft
    Ut, Vt = rep.user_embeddings_, rep.item_embeddings_
    alpha = (ratings - model.predict(pairs)) / model.lam
    observed = {tuple(p) for p in pairs}
    unobserved = next(tuple(q) for q in np.argwhere(np.ones(model.shape_)) if tuple(q) not in observed)
    for u, i in [unobserved, tuple(pairs[7])]:  # an unobserved pair and a training pair
        expected = np.zeros(len(pairs))
        for d, (v, j) in enumerate(pairs):  # the cases of Eq. 15, in the paper's order
            if j == i:
                expected[d] = alpha[d] * (Ut[v] @ Ut[u])
            elif v == u:
                expected[d] = alpha[d] * (Vt[j] @ Vt[i])
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # no efficiency check for the union: nothing may warn
            values = rep([[u, i]], mode="union").values[0]
        assert np.allclose(values, expected, atol=1e-12)
        idx, scores = rep.attributions(u, i, mode="union")
        shares = np.flatnonzero((pairs[:, 0] == u) | (pairs[:, 1] == i))
        assert sorted(idx.tolist()) == shares.tolist()
        dense = np.zeros(len(pairs))
        dense[idx] = scores
        assert np.allclose(dense, expected, atol=1e-12)


def test_union_ranks_like_both_and_sums_to_twice_the_prediction(soft):
    model, pairs, ratings, rep = soft
    observed = {tuple(p) for p in pairs}
    query = np.array([q for q in np.argwhere(np.ones(model.shape_)) if tuple(q) not in observed][:4])
    assert len(query) == 4
    union, both = rep(query, mode="union").values, rep(query, mode="both").values
    assert np.allclose(union, 2 * both)  # off the explained pair the union is the mean times two
    centred = model.predict(query) - model.mean_
    assert np.allclose(union.sum(1), 2 * centred, atol=1e-6)


# ---- Corollary 3 on general matrix inputs -----------------------------------------------------------------

@pytest.fixture(scope="module")
def trace_norm():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(120, 5, 4))
    theta = np.outer([1.0, -1, 0.5, 0, 2], [1.0, 0, -1, 0.5]) + 0.5 * np.outer([0, 1.0, 0, 1, 0], [0, 1.0, 1, 0])
    y = 0.7 + np.einsum("nij,ij->n", X, theta) + 0.3 * rng.normal(size=120)
    model = TraceNormRegression(lam=0.3, tol=1e-14, max_iter=50_000).fit(X, y)
    return model, X, y


def test_trace_norm_model_is_low_rank_and_optimal(trace_norm):
    model, X, y = trace_norm
    k = model.singular_values_.size
    assert 1 <= k < 4  # the penalty truncated the rank
    # subgradient condition: G = 1/n sum_i r_i X_i = lam (U V^T + W), U^T W = 0, W V = 0, ||W||_2 <= 1
    r = y - model.predict(X)
    G = np.einsum("n,nij->ij", r, X) / len(y)
    U, V = model.left_vectors_, model.right_vectors_
    assert np.allclose(U.T @ G, model.lam * V.T, atol=1e-8)
    W = G / model.lam - U @ V.T
    assert np.linalg.norm(W, 2) <= 1 + 1e-8
    assert abs(r.mean()) < 1e-8  # the unpenalised intercept


@pytest.mark.parametrize("mode", ["column", "row", "both"])
def test_corollary3_reconstructs_predictions(trace_norm, mode):
    model, X, y = trace_norm
    rep = TraceNormRepresenter(model, X, y)
    rng = np.random.default_rng(2)
    X_new = rng.normal(size=(6, 5, 4))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        e = rep(X_new, mode=mode)
    assert e.values.shape == (6, len(y))
    assert np.allclose(e.base_values + e.values.sum(1), model.predict(X_new), atol=1e-8)
    assert rep.optimality_violation_ < 1e-8


def test_corollary3_brute_force_local_importance(trace_norm):
    model, X, y = trace_norm
    rep = TraceNormRepresenter(model, X, y)
    U, S, V = model.left_vectors_, model.singular_values_, model.right_vectors_
    x = X[:1] + 1.0
    alpha = (y - model.predict(X)) / (len(y) * model.lam)
    column = np.array([alpha[i] * np.trace(X[i].T @ U @ np.diag(S) @ U.T @ x[0]) for i in range(len(y))])
    row = np.array([alpha[i] * np.trace(X[i] @ V @ np.diag(S) @ V.T @ x[0].T) for i in range(len(y))])
    assert np.allclose(rep(x, mode="column").values[0], column)
    assert np.allclose(rep(x, mode="row").values[0], row)


def test_corollary3_one_hot_inputs_are_corollary4(soft):
    """Matrix completion written as trace-norm regression on one-hot X_i gives Definition 1's shares."""
    pairs, ratings = _ratings(seed=4, n_users=8, n_items=6, frac=0.7)
    n = len(pairs)
    X = np.zeros((n, 8, 6))
    X[np.arange(n), pairs[:, 0], pairs[:, 1]] = 1.0
    lam = 0.05
    tn = TraceNormRegression(lam=lam, fit_intercept=False, tol=1e-14, max_iter=100_000).fit(X, ratings)
    si = SoftImpute(lam=lam * n, center=False, tol=1e-14, max_iter=100_000).fit(pairs, ratings)
    assert np.allclose(tn.coef_, (si.left_vectors_ * si.singular_values_) @ si.right_vectors_.T, atol=1e-7)
    query = np.zeros((1, 8, 6))
    query[0, 2, 3] = 1.0
    column = TraceNormRepresenter(tn, X, ratings)(query, mode="column").values[0]
    user_based = MatrixFactorizationRepresenter.from_soft_impute(si, pairs, ratings)([[2, 3]], mode="user").values[0]
    assert np.allclose(column, user_based, atol=1e-6)


def test_trace_norm_bad_inputs(trace_norm):
    model, X, y = trace_norm
    with pytest.raises(DataValidationError, match=r"\(n, d1, d2\)"):
        TraceNormRegression().fit(X[:, :, 0], y)
    with pytest.raises(DataValidationError, match="lam"):
        TraceNormRegression(lam=-1).fit(X, y)
    with pytest.raises(DataValidationError, match="5 x 4"):
        TraceNormRepresenter(model, X, y)(X[:, :4])
    with pytest.raises(DataValidationError, match="mode"):
        TraceNormRepresenter(model, X, y)(X[:1], mode="diagonal")


# ---- matrix factorisation and FIA ------------------------------------------------------------------------

@pytest.fixture(scope="module")
def mf():
    pairs, ratings = _ratings(seed=6, n_users=30, n_items=20, frac=0.6)
    model = MatrixFactorization(3, alpha=0.5, tol=1e-14, max_iter=5000).fit(pairs, ratings)
    return model, pairs, ratings


def test_matrix_factorization_stationary(mf):
    model, pairs, ratings = mf
    U, V = model.user_factors_, model.item_factors_
    r = ratings - model.predict(pairs)
    gU = np.zeros_like(U)
    np.add.at(gU, pairs[:, 0], -r[:, None] * V[pairs[:, 1]])
    assert np.max(np.abs(gU + model.alpha * U)) < 1e-6  # gradient of the objective in U vanishes
    warm = clone(model).set_params(init=(U, V)).fit(pairs, ratings)
    assert np.allclose(warm.predict(pairs), model.predict(pairs), atol=1e-6)


def test_fia_equals_newton_step_on_the_block(mf):
    """FIA's change of prediction is that of one Newton step on (p_u, q_i) without the rating (finite-difference
    Hessian of the objective written out independently)."""
    model, pairs, ratings = mf
    u, i = 4, 7
    scores = fia_scores(model, pairs, ratings, [[u, i]])[0]
    P, Q, alpha, mu = model.user_factors_, model.item_factors_, model.alpha, model.mean_
    r = ratings - mu
    k = P.shape[1]

    def gradient(theta, keep):
        p, q = theta[:k], theta[k:]
        g = np.concatenate([alpha * p, alpha * q])
        for d in np.flatnonzero(keep):
            v, j = pairs[d]
            pv = p if v == u else P[v]
            qj = q if j == i else Q[j]
            if v == u or j == i:
                e = r[d] - pv @ qj
                if v == u:
                    g[:k] -= e * qj
                if j == i:
                    g[k:] -= e * pv
        return g

    theta = np.concatenate([P[u], Q[i]])
    eps = 1e-6
    H = np.array([(gradient(theta + eps * np.eye(2 * k)[c], np.ones(len(pairs), bool))
                   - gradient(theta - eps * np.eye(2 * k)[c], np.ones(len(pairs), bool))) / (2 * eps)
                  for c in range(2 * k)])
    for d in np.flatnonzero((pairs[:, 0] == u) | (pairs[:, 1] == i))[:6]:
        keep = np.ones(len(pairs), bool)
        keep[d] = False
        new = theta - np.linalg.solve(H, gradient(theta, keep))
        change = Q[i] @ (new[:k] - theta[:k]) + P[u] @ (new[k:] - theta[k:])  # first order, as any IF
        assert np.isclose(-scores[d], change, rtol=1e-4, atol=1e-9)
    assert np.all(scores[(pairs[:, 0] != u) & (pairs[:, 1] != i)] == 0)


@pytest.mark.slow
def test_fia_and_representer_beat_random_on_deletion(mf):
    model, pairs, ratings = mf
    warm = clone(model).set_params(init=(model.user_factors_, model.item_factors_)).fit(pairs, ratings)
    query = np.array([[u, i] for u in range(6) for i in range(3) if not np.any((pairs == [u, i]).all(1))])[:6]
    rep = MatrixFactorizationRepresenter(model.user_factors_, model.item_factors_, pairs, ratings, offset=model.mean_)
    for scores in (fia_scores(model, pairs, ratings, query), rep(query, mode="union").values):
        res = deletion_diagnostics(warm, pairs, ratings, query, scores, sizes=[2, 4])
        assert res.auc_del_plus.mean() < 0 < res.auc_del_minus.mean()


def test_deletion_sizes_and_bad_mf_inputs(mf):
    model, pairs, ratings = mf
    with pytest.raises(ValueError, match="sizes"):
        deletion_diagnostics(model, pairs, ratings, pairs[:1], np.zeros((1, len(pairs))), sizes=[0])
    with pytest.raises(DataValidationError, match="n_components"):
        MatrixFactorization(0).fit(pairs, ratings)
    for empty_fit in (MatrixFactorization(3), SoftImpute()):  # no ratings: was numpy's "zero-size array" ValueError
        with pytest.raises(DataValidationError, match="no \\(user, item\\) pair"):
            empty_fit.fit(np.zeros((0, 2), dtype=int), [])
    with pytest.raises(DataValidationError, match="max_iter"):  # no sweep: the fit used to end in UnboundLocalError
        MatrixFactorization(3, max_iter=0).fit(pairs, ratings)
    with pytest.raises(DataValidationError, match="init"):
        MatrixFactorization(3, init=(np.ones((2, 3)), np.ones((2, 3)))).fit(pairs, ratings)
    with pytest.raises(DataValidationError, match="init"):
        SoftImpute(init=(np.ones((2, 3)), np.ones((2, 3)))).fit(pairs, ratings)


def test_soft_impute_warm_start_reaches_the_same_optimum():
    pairs, ratings = _ratings(seed=2)
    cold = SoftImpute(lam=1.5, tol=1e-12, max_iter=20_000).fit(pairs, ratings)
    warm = SoftImpute(lam=1.5, tol=1e-12, max_iter=20_000, init=(cold.user_factors_, cold.item_factors_))
    warm.fit(pairs[5:], ratings[5:])
    again = SoftImpute(lam=1.5, tol=1e-12, max_iter=20_000).fit(pairs[5:], ratings[5:])
    every = np.argwhere(np.ones(cold.shape_))
    assert np.max(np.abs(warm.predict(every) - again.predict(every))) < 1e-6
    assert warm.n_iter_ < again.n_iter_


# ---- the paper's influence function ---------------------------------------------------------------------

def test_paper_influence_function_differs_by_a_constant_per_point():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(150, 10))
    y = (X[:, 0] - X[:, 1] + 0.5 * rng.normal(size=150) > 0).astype(int)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = LogisticRegression(l1_ratio=1.0, solver="saga", C=0.2, tol=1e-12, max_iter=100_000).fit(X, y)
    paper = InfluenceFunction(model, X, y, variant="paper")
    assert paper.hessian_.shape[0] == paper.active_features_.size  # no intercept coordinate
    q = paper.active_features_
    Xs = X[:, q]
    p = 1 / (1 + np.exp(-model.decision_function(X)))
    H = (Xs * (model.C * p * (1 - p))[:, None]).T @ Xs
    g = model.C * (y - p)
    loss_part = (Xs * g[:, None]) @ np.linalg.solve(H, X[:3, q].T)  # (n_train, 3)
    constant = np.sign(model.coef_[0, q]) @ np.linalg.solve(H, X[:3, q].T)  # lambda_1 = 1 for l1 logistic
    scores = paper.scores(X[:3])
    assert np.allclose(scores, loss_part.T - constant[:, None], rtol=1e-6, atol=1e-10)
    # the lambda sign(theta) term is one constant per explained point: it cannot change a ranking
    assert np.all(np.abs(constant) > 1e-6)
    assert np.array_equal(np.argsort(scores, axis=1), np.argsort(loss_part.T, axis=1))
    with pytest.raises(InvalidParameterError, match="variant"):
        InfluenceFunction(model, X, y, variant="exact")
