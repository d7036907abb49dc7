"""Low-rank representers: Algorithm 1, SoftImpute's optimality, Corollary 4 / Definition 1, bad inputs."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shap_instances.exceptions import DataValidationError
from shap_instances.lowrank import MatrixFactorizationRepresenter, SoftImpute, normalized_embeddings


def _problem(seed=0, n_users=30, n_items=20, rank=3, frac=0.5, noise=0.3):
    rng = np.random.default_rng(seed)
    full = rng.normal(size=(n_users, rank)) @ rng.normal(size=(rank, n_items)) + noise * rng.normal(
        size=(n_users, n_items))
    pairs = np.argwhere(rng.random((n_users, n_items)) < frac)
    return pairs, full[pairs[:, 0], pairs[:, 1]]


@pytest.fixture(scope="module")
def fitted():
    pairs, ratings = _problem()
    return SoftImpute(lam=2.0, tol=1e-13, max_iter=20_000).fit(pairs, ratings), pairs, ratings


@settings(max_examples=25)
@given(seed=st.integers(0, 10_000), n_users=st.integers(3, 25), n_items=st.integers(3, 25), k=st.integers(1, 3))
def test_algorithm1_matches_direct_svd(seed, n_users, n_items, k):
    rng = np.random.default_rng(seed)
    U, V = rng.normal(size=(n_users, k)), rng.normal(size=(n_items, k))
    Ut, Vt = normalized_embeddings(U, V)
    P, S, Qt = np.linalg.svd(U @ V.T)
    # same U Sigma V^T, same singular values, same (gauge-invariant) Gram matrices U S U^T and V S V^T
    assert np.allclose(Ut @ Vt.T, U @ V.T, atol=1e-10)
    assert np.allclose(np.sort(np.sum(Ut**2, axis=0))[::-1], S[:k], atol=1e-9)
    assert np.allclose(Ut @ Ut.T, (P[:, :k] * S[:k]) @ P[:, :k].T, atol=1e-9)
    assert np.allclose(Vt @ Vt.T, (Qt[:k].T * S[:k]) @ Qt[:k], atol=1e-9)
    # orthogonal columns: U~^T U~ = V~^T V~ = diag(S)
    assert np.allclose(Ut.T @ Ut, Vt.T @ Vt, atol=1e-9)


def test_soft_impute_first_order_optimality(fitted):
    model, pairs, ratings = fitted
    R = model.residual_matrix(pairs, ratings).toarray()
    U, V, lam = model.left_vectors_, model.right_vectors_, model.lam
    # subgradient: R = lam (U V^T + W) with U^T W = 0, W V = 0, ||W||_2 <= 1
    assert np.max(np.abs(U.T @ R - lam * V.T)) < 1e-6
    assert np.max(np.abs(R @ V - lam * U)) < 1e-6
    W = R / lam - U @ V.T
    assert np.linalg.norm(W, 2) <= 1 + 1e-6
    assert model.singular_values_.size < min(model.shape_)  # the nuclear norm did truncate the rank


@pytest.mark.parametrize("mode", ["item", "user", "both"])
def test_corollary4_reconstructs_every_entry(fitted, mode):
    model, pairs, ratings = fitted
    rep = MatrixFactorizationRepresenter.from_soft_impute(model, pairs, ratings)
    every = np.argwhere(np.ones(model.shape_))
    e = rep(every, mode=mode)
    assert e.values.shape == (every.shape[0], pairs.shape[0])
    assert np.max(np.abs(e.base_values + e.values.sum(1) - model.predict(every))) < 1e-6


def test_definition1_brute_force(fitted):
    model, pairs, ratings = fitted
    rep = MatrixFactorizationRepresenter.from_soft_impute(model, pairs, ratings)
    Ut, Vt = rep.user_embeddings_, rep.item_embeddings_
    u, i = 4, 7
    alpha = (ratings - model.predict(pairs)) / model.lam
    expected_item = np.array([alpha[d] * (Vt[pairs[d, 1]] @ Vt[i]) if pairs[d, 0] == u else 0.0
                              for d in range(len(pairs))])
    expected_user = np.array([alpha[d] * (Ut[pairs[d, 0]] @ Ut[u]) if pairs[d, 1] == i else 0.0
                              for d in range(len(pairs))])
    assert np.allclose(rep([[u, i]], mode="item").values[0], expected_item)
    assert np.allclose(rep([[u, i]], mode="user").values[0], expected_user)
    idx, scores = rep.attributions(u, i, mode="item")
    assert set(idx) == set(np.flatnonzero(pairs[:, 0] == u))
    assert np.allclose(scores, expected_item[idx])


def test_generic_factor_model_and_two_tower_embeddings():
    rng = np.random.default_rng(3)
    U, V = rng.normal(size=(10, 4)), rng.normal(size=(8, 4))
    pairs = np.argwhere(rng.random((10, 8)) < 0.6)
    labels = (rng.random(len(pairs)) < 0.5).astype(float)
    rep = MatrixFactorizationRepresenter(U, V, pairs, labels, loss="logistic")
    assert np.allclose(rep.predict(pairs), np.einsum("ij,ij->i", U[pairs[:, 0]], V[pairs[:, 1]]))
    p = 1 / (1 + np.exp(-rep.predict(pairs)))
    assert np.allclose(rep.global_importance_, labels - p)
    e = rep(pairs[:3], mode="both")  # no efficiency claim for a non-nuclear-norm model: must not raise
    assert e.values.shape == (3, len(pairs))


def test_sparse_solver_agrees_with_dense():
    pairs, ratings = _problem(seed=5)
    dense = SoftImpute(lam=3.0, tol=1e-12, max_iter=20_000).fit(pairs, ratings)
    sparse = SoftImpute(lam=3.0, tol=1e-12, max_iter=20_000, solver="sparse", max_rank=10).fit(pairs, ratings)
    every = np.argwhere(np.ones(dense.shape_))
    assert np.max(np.abs(dense.predict(every) - sparse.predict(every))) < 1e-4


def test_bad_inputs(fitted):
    model, pairs, ratings = fitted
    with pytest.raises(DataValidationError, match="duplicate"):
        SoftImpute().fit(np.vstack([pairs, pairs[:1]]), np.append(ratings, 1.0))
    with pytest.raises(DataValidationError, match="negative"):
        SoftImpute().fit(np.array([[-1, 0], [0, 1]]), [1.0, 2.0])
    with pytest.raises(DataValidationError, match="lam"):
        SoftImpute(lam=0).fit(pairs, ratings)
    with pytest.raises(DataValidationError, match="max_rank"):
        SoftImpute(solver="sparse").fit(pairs, ratings)
    with pytest.raises(DataValidationError, match=r"\(n, 2\)"):
        SoftImpute().fit(pairs[:, :1], ratings)
    with pytest.raises(DataValidationError, match="same number of columns"):
        MatrixFactorizationRepresenter(np.ones((3, 2)), np.ones((3, 3)), [[0, 0]], [1.0])
    rep = MatrixFactorizationRepresenter.from_soft_impute(model, pairs, ratings)
    with pytest.raises(DataValidationError, match="mode"):
        rep([[0, 0]], mode="diagonal")
    with pytest.raises(DataValidationError, match="user index"):
        rep([[10_000, 0]])
    with pytest.raises(DataValidationError, match="ratings"):
        MatrixFactorizationRepresenter(model.user_factors_, model.item_factors_, pairs, ratings[:-1])


def _numpy_twin(users, items, train_users, train_items, alpha, Ut, Vt, use_item, use_user, weight):
    """Plain-NumPy twin of the numba kernel (Definition 1 as dense masked products)."""
    out = np.zeros((len(users), len(alpha)))
    if use_item:
        out += (train_users[None, :] == users[:, None]) * (Vt[items] @ Vt[train_items].T)
    if use_user:
        out += (train_items[None, :] == items[:, None]) * (Ut[users] @ Ut[train_users].T)
    return weight * out * alpha[None, :]


@settings(max_examples=25)
@given(seed=st.integers(0, 10_000), mode=st.sampled_from(["item", "user", "both"]))
def test_numba_kernel_matches_numpy_twin(seed, mode):
    rng = np.random.default_rng(seed)
    n_users, n_items = rng.integers(2, 12, size=2)
    U, V = rng.normal(size=(n_users, 3)), rng.normal(size=(n_items, 3))
    pairs = np.argwhere(rng.random((n_users, n_items)) < 0.5)
    if len(pairs) == 0:
        pairs = np.array([[0, 0]])
    ratings = rng.normal(size=len(pairs))
    rep = MatrixFactorizationRepresenter(U, V, pairs, ratings)
    queries = np.column_stack([rng.integers(0, n_users, 7), rng.integers(0, n_items, 7)])
    got = rep(queries, mode=mode).values
    twin = _numpy_twin(queries[:, 0], queries[:, 1], pairs[:, 0], pairs[:, 1], rep.global_importance_,
                       rep.user_embeddings_, rep.item_embeddings_, mode != "user", mode != "item",
                       0.5 if mode == "both" else 1.0)
    assert np.allclose(got, twin, atol=1e-12)
