"""The LinearDiscriminantAnalysis (lsqr) refit path against explicit scikit-learn refits of the same subsets, the
generic refit path and exact enumeration."""

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis as LDA
from sklearn.discriminant_analysis import QuadraticDiscriminantAnalysis

from shap_instances.approximators import ExactApproximator
from shap_instances.discriminant import DiscriminantPath
from shap_instances.games import ResidualGame

from .refit_reference import check_prefixes

MODELS = [LDA(solver="lsqr"), LDA(solver="lsqr", shrinkage=0.3), LDA(solver="lsqr", priors=[0.3, 0.7])]


def _data(n, p, seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p)) * np.array([1.0, 10.0, 0.1, 3.0])[:p]
    y = (X[:, 0] + rng.normal(size=n) > 0).astype(float)
    return X, y, np.vstack([X[:3], rng.normal(size=(3, p))]), np.r_[y[:3], 0.0, 1.0, 1.0]


def _check(model, X, y, X_eval, y_eval, seeds):
    path = DiscriminantPath(model, X, y, X_eval, y_eval, np.full(len(y_eval), -0.5))
    check_prefixes(path, model, X, y, X_eval, y_eval, seeds, rtol=1e-9)


@pytest.mark.parametrize("model", MODELS, ids=repr)
def test_prefix_values_equal_scikit_learn_refits(model):
    """Prefixes below full rank (fewer rows than features: scikit-learn's minimum-norm lstsq) and above."""
    _check(model, *_data(30, 4, 0), seeds=(0, 1, 2))


def test_exact_shapley_values_equal_the_generic_refit_path():
    X, y, _, _ = _data(8, 2, 1)
    fast = ResidualGame(MODELS[1], X, y, empty_prediction=0.5)
    slow = ResidualGame(MODELS[1], X, y, empty_prediction=0.5, use_fast_path=False)
    assert isinstance(fast.fast_path, DiscriminantPath) and slow.fast_path is None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = ExactApproximator().estimate(slow).values
    np.testing.assert_allclose(ExactApproximator().estimate(fast).values, expected, atol=1e-9)


@pytest.mark.parametrize("model", [LDA(), LDA(solver="eigen"), LDA(solver="lsqr", shrinkage="auto"),
                                   QuadraticDiscriminantAnalysis()], ids=repr)
def test_models_the_path_does_not_serve(model):
    """The svd and eigen solvers and Ledoit-Wolf shrinkage differ from lsqr: they keep exact refits."""
    assert not DiscriminantPath.supports(model)


@pytest.mark.slow  # random data: the fixed cases above run by default
@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(1, 12), which=st.sampled_from(range(len(MODELS))))
def test_random_data_prefixes_equal_refits(seed, n, which):
    _check(MODELS[which], *_data(n, 3, seed), seeds=(seed,))
