"""The l2 LogisticRegression refit path against scikit-learn refits, the generic refit path and enumeration."""

import warnings

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression

from shap_instances.approximators import ExactApproximator, PermutationApproximator
from shap_instances.games import LogisticPath, ResidualGame
from shap_instances.metrics import data_shapley


class _Refitted(LogisticRegression):
    """Not ``type(model) is LogisticRegression``: the game refits clones (the reference path)."""


def _data(n=30, p=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p)) * np.array([1.0, 10.0, 0.1, 3.0])[:p]
    y = (X @ np.array([1.0, 0.1, 5.0, -0.3])[:p] + rng.normal(size=n) > 0).astype(float)
    return X, y


def _reference(C, fit_intercept=True):  # scikit-learn to its own solver tolerance, far below ours
    return _Refitted(C=C, fit_intercept=fit_intercept, tol=1e-12, max_iter=1000, solver="newton-cholesky")


@pytest.mark.parametrize("C, fit_intercept", [(1.0, True), (0.05, True), (20.0, True), (1.0, False)])
def test_prefix_values_equal_scikit_learn_refits(C, fit_intercept):
    X, y = _data()
    X_eval, y_eval = X[:7] + 0.3, y[:7]
    model = LogisticRegression(C=C, fit_intercept=fit_intercept)
    path = ResidualGame(model, X, y, X_eval, y_eval).fast_path
    assert isinstance(path, LogisticPath)
    permutation = np.random.default_rng(1).permutation(len(y))
    fast = path.prefix_residuals(permutation)
    one_class = 0
    for t in range(1, len(y) + 1):
        rows = permutation[:t]
        if len(np.unique(y[rows])) < 2:  # scikit-learn refuses one class: v(empty), the failure policy
            one_class += 1
            np.testing.assert_array_equal(fast[t - 1], 0.0)
            continue
        refit = _reference(C, fit_intercept).fit(X[rows], y[rows]).predict_proba(X_eval)[:, 1] - y_eval
        np.testing.assert_allclose(fast[t - 1], refit, atol=1e-9, err_msg=f"prefix {t}")
        mask = np.zeros(len(y), bool)
        mask[rows] = True
        np.testing.assert_allclose(path.residuals(mask), refit, atol=1e-9)
    assert one_class >= 1  # the policy was exercised


def test_fast_and_generic_paths_agree_on_estimates_and_exact_values():
    X, y = _data(n=9, p=3, seed=2)
    fast = ResidualGame(LogisticRegression(C=0.5), X, y, empty_prediction=0.5)
    slow = ResidualGame(_reference(0.5), X, y, empty_prediction=0.5)
    assert fast.fast_path is not None and slow.fast_path is None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the refit path warns about its one-class subsets
        exact_slow = ExactApproximator().estimate(slow).values
        sampled_slow = PermutationApproximator(n_permutations=6, random_state=3, silent=True).estimate(slow).values
    np.testing.assert_allclose(ExactApproximator().estimate(fast).values, exact_slow, atol=1e-9)
    sampled_fast = PermutationApproximator(n_permutations=6, random_state=3, silent=True).estimate(fast).values
    np.testing.assert_allclose(sampled_fast, sampled_slow, atol=1e-9)  # the fused kernel, many outputs
    weights = np.random.default_rng(0).normal(size=(9, 2))
    aggregate = PermutationApproximator(n_permutations=6, random_state=3, silent=True).estimate(
        fast.aggregate(weights)).values  # few outputs: prefix values in parallel, then the accumulator
    np.testing.assert_allclose(aggregate, sampled_slow @ weights, atol=1e-9)


def test_data_shapley_takes_the_path_and_matches_refits():
    X, y = _data(n=20, p=3, seed=4)
    fast = data_shapley(LogisticRegression(C=2.0), X, y, X[:8], y[:8], n_permutations=4, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        slow = data_shapley(_reference(2.0), X, y, X[:8], y[:8], n_permutations=4, random_state=0)
    np.testing.assert_allclose(fast.to_numpy(), slow.to_numpy(), atol=1e-9)


@pytest.mark.parametrize("model", [LogisticRegression(solver="liblinear"), LogisticRegression(class_weight="balanced"),
                                   LogisticRegression(l1_ratio=1.0, solver="saga"), LogisticRegression(C=np.inf),
                                   _Refitted()])
def test_models_the_path_does_not_serve(model):
    assert not LogisticPath.supports(model)


def test_targets_other_than_0_1_fall_back_to_refits():
    X, y = _data(n=12, p=2)
    assert ResidualGame(LogisticRegression(), X, 2 * y - 1).fast_path is None
    assert ResidualGame(LogisticRegression(), X, y).fast_path is not None
