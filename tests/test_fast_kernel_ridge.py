"""The kernel ridge / Gaussian-process refit path against explicit scikit-learn refits of the same subsets, the
generic refit path and exact enumeration."""


import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.gaussian_process import GaussianProcessRegressor
from sklearn.gaussian_process.kernels import RBF, DotProduct, Matern, WhiteKernel
from sklearn.kernel_ridge import KernelRidge

from shap_instances.approximators import ExactApproximator
from shap_instances.games import ResidualGame
from shap_instances.linear import KernelRidgePath

from .refit_reference import check_prefixes


def _quadratic(x, z, scale=1.0):
    """A callable kernel (with a kernel parameter) as KernelRidge takes it."""
    return (1.0 + scale * float(x @ z)) ** 2


MODELS = [
    KernelRidge(alpha=0.5), KernelRidge(alpha=0.1, kernel="rbf", gamma=0.3),
    KernelRidge(alpha=1.0, kernel="polynomial", degree=2), KernelRidge(alpha=0.3, kernel="laplacian"),
    KernelRidge(alpha=0.5, kernel=_quadratic, kernel_params={"scale": 0.5}),
    GaussianProcessRegressor(optimizer=None),
    GaussianProcessRegressor(kernel=RBF(1.5) + WhiteKernel(0.1), optimizer=None, normalize_y=True),
    GaussianProcessRegressor(kernel=Matern(nu=1.5), alpha=1e-2, optimizer=None),
    GaussianProcessRegressor(kernel=DotProduct(), alpha=0.1, optimizer=None, normalize_y=True),
]


def _data(n, seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    y = X @ np.array([1.0, 2.0, -1.0]) + np.sin(3 * X[:, 0]) + 0.1 * rng.normal(size=n) + 3.0
    X_eval = np.vstack([X[:3], rng.normal(size=(3, 3))])
    return X, y, X_eval, np.r_[y[:3], 0.0, 1.0, 2.0]


def _compare(model, X, y, X_eval, y_eval, seeds):
    """Every prefix of the seeded permutations and the same subsets as coalitions, against explicit refits
    (relative error); returns the kinds of values met ("empty": prefixes scikit-learn could not fit)."""
    path = KernelRidgePath(model, X, y, X_eval, y_eval, np.full(len(y_eval), -0.5))
    return check_prefixes(path, model, X, y, X_eval, y_eval, seeds)


@pytest.mark.parametrize("model", MODELS, ids=repr)
def test_prefix_values_equal_scikit_learn_refits(model):
    X, y, X_eval, y_eval = _data(20, 0)
    assert _compare(model, X, y, X_eval, y_eval, seeds=(0, 1)) == {"fitted"}


def test_factor_failures_are_finished_as_scikit_learn_does():
    """Duplicated rows and no jitter: the Gaussian process's Cholesky fails from the duplicate on (v(empty)); an
    indefinite sigmoid kernel ridge is finished by scikit-learn's own solves."""
    X, y, X_eval, y_eval = _data(12, 1)
    X[6:] = X[:6]
    model = GaussianProcessRegressor(kernel=DotProduct(sigma_0=0.0), alpha=0.0, optimizer=None)
    # rank 3: singular from the fourth row on, where a factorisation fails or succeeds on rounding noise; on this
    # order both fail (in other orders the two can differ: such prefixes have no reproducible value)
    assert _compare(model, X, y, X_eval, y_eval, seeds=[np.arange(12)]) == {"empty", "fitted"}
    model = KernelRidge(alpha=1e-3, kernel="sigmoid", gamma=2.0)
    path = KernelRidgePath(model, X, y, X_eval, y_eval, np.zeros(6))
    assert np.linalg.eigvalsh(path.A).min() < 0  # not positive definite: the bordered factor fails on every order
    _compare(model, X, y, X_eval, y_eval, seeds=(0, 1))


def test_exact_shapley_values_equal_the_generic_refit_path():
    X, y, _, _ = _data(7, 2)
    for model in MODELS[::3]:
        fast = ResidualGame(model, X, y, empty_prediction=y.mean())
        slow = ResidualGame(model, X, y, empty_prediction=y.mean(), use_fast_path=False)
        assert isinstance(fast.fast_path, KernelRidgePath) and slow.fast_path is None
        np.testing.assert_allclose(ExactApproximator().estimate(fast).values, ExactApproximator().estimate(slow).values,
                                   atol=1e-9)


def test_aggregate_is_the_weighted_sum_of_residuals():
    X, y, X_eval, y_eval = _data(15, 3)
    game = ResidualGame(MODELS[6], X, y, X_eval, y_eval)
    weights = np.random.default_rng(0).random((6, 2))
    permutations = np.array([np.random.default_rng(s).permutation(15) for s in range(3)])
    np.testing.assert_allclose(game.aggregate(weights).prefix_values(permutations),
                               game.prefix_values(permutations) @ weights, atol=1e-10)


@pytest.mark.parametrize("model", [GaussianProcessRegressor(), KernelRidge(alpha=0.0),
                                   KernelRidge(kernel="precomputed"), GaussianProcessRegressor(optimizer=None,
                                                                                               alpha=np.ones(5))])
def test_models_the_path_does_not_serve(model):
    """An optimizer re-optimises every refit's kernel: no fixed-kernel shortcut claims to be a refit."""
    assert not KernelRidgePath.supports(model)


@pytest.mark.slow  # random data: the fixed cases above run by default
@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(1, 10), which=st.sampled_from([0, 1, 2, 3, 4, 6, 7, 8]))
def test_random_data_prefixes_equal_refits(seed, n, which):
    """Random data (not the default jitter alpha=1e-10 of MODELS[5], whose conditioning random rows can ruin)."""
    X, y, X_eval, y_eval = _data(n, seed)
    _compare(MODELS[which], X, y, X_eval, y_eval, seeds=(seed,))
