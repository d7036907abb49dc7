"""The QuadraticDiscriminantAnalysis refit path against explicit scikit-learn refits of the same subsets, the
generic refit path and exact enumeration."""

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.discriminant_analysis import QuadraticDiscriminantAnalysis as QDA

from shap_instances.approximators import ExactApproximator
from shap_instances.discriminant import QuadraticDiscriminantPath, qda_convention
from shap_instances.games import ResidualGame
from shap_instances.utils import sklearn_version

from .refit_reference import check_prefixes

MODELS = [QDA(), QDA(reg_param=0.2), QDA(priors=[0.3, 0.7]), QDA(reg_param=0.05, tol=1e-2)]


def _data(n, p, seed):
    rng = np.random.default_rng(seed)
    y = (rng.random(n) < 0.5).astype(float)
    X = rng.normal(size=(n, p)) * np.array([1.0, 10.0, 0.1, 3.0])[:p] * (1 + y[:, None]) + 5.0 + y[:, None]
    return X, y, np.vstack([X[:3], rng.normal(size=(3, p)) + 5.0]), np.r_[y[:3], 0.0, 1.0, 1.0]


def _check(model, X, y, X_eval, y_eval, seeds):
    path = QuadraticDiscriminantPath(model, X, y, X_eval, y_eval, np.full(len(y_eval), -0.5))
    return check_prefixes(path, model, X, y, X_eval, y_eval, seeds, rtol=1e-9)


@pytest.mark.parametrize("model", MODELS, ids=repr)
def test_prefix_values_equal_scikit_learn_refits(model):
    """Every prefix of three permutations: those scikit-learn refuses (one class, a class of one row, fewer rows
    than features, a covariance below ``tol``) get v(empty), the others its probabilities."""
    kinds = _check(model, *_data(40, 3, 0), seeds=(0, 1, 2))
    assert kinds == {"empty", "fitted"}


def test_the_release_convention_is_the_installed_scikit_learns():
    """scikit-learn 1.9 divides by n_c and refuses rank-deficient classes; 1.4 divides by n_c - 1 and fits them."""
    assert qda_convention() == ((0, True) if sklearn_version() >= (1, 9) else (1, False))


def test_exact_shapley_values_equal_the_generic_refit_path():
    X, y, _, _ = _data(9, 1, 1)
    fast = ResidualGame(MODELS[1], X, y, empty_prediction=0.5)
    slow = ResidualGame(MODELS[1], X, y, empty_prediction=0.5, use_fast_path=False)
    assert isinstance(fast.fast_path, QuadraticDiscriminantPath) and slow.fast_path is None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = ExactApproximator().estimate(slow).values
    np.testing.assert_allclose(ExactApproximator().estimate(fast).values, expected, atol=1e-9)


@pytest.mark.parametrize("params", [{"solver": "eigen"}, {"solver": "eigen", "shrinkage": 0.3}], ids=repr)
def test_models_the_path_does_not_serve(params):
    if sklearn_version() < (1, 8):
        pytest.skip("no solver parameter before scikit-learn 1.8")
    assert not QuadraticDiscriminantPath.supports(QDA(**params))


def test_three_classes_are_left_to_refits():
    X, y, _, _ = _data(12, 2, 2)
    y[:4] = 2.0
    assert ResidualGame(QDA(), X, y).fast_path is None


@pytest.mark.slow  # random data: the fixed cases above run by default
@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(1, 14), which=st.sampled_from(range(len(MODELS))))
def test_random_data_prefixes_equal_refits(seed, n, which):
    _check(MODELS[which], *_data(n, 2, seed), seeds=(seed,))
