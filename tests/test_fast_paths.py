"""Exact refit shortcuts on single coalitions (the kernel and exact methods) against scikit-learn refits."""

import numpy as np
import pytest
from sklearn.linear_model import LinearRegression, Ridge

from shap_instances.datasets import load_diabetes
from shap_instances.games import ResidualGame
from shap_instances.games._fast_ridge import RidgePath


@pytest.mark.parametrize("model", [Ridge(alpha=0.5), Ridge(alpha=2.0, fit_intercept=False), LinearRegression()])
def test_ridge_path_equals_refits_on_random_coalitions(model):
    X, y = load_diabetes()
    X, y = X.to_numpy()[:30], y.to_numpy(dtype=float)[:30]
    X_eval, y_eval = X[:6] + 0.01, y[:6]
    path = RidgePath(model, X, y, X_eval, y_eval)
    rng = np.random.default_rng(0)
    tolerance = 1e-10 if isinstance(model, Ridge) else 1e-8  # least squares below rank: min-norm via pinv
    for size in (1, 3, 9, 10, 11, 20, 30):  # fewer rows than the 10 features, as many, and more
        mask = np.zeros(30, bool)
        mask[rng.choice(30, size, replace=False)] = True
        refit = model.__class__(**model.get_params()).fit(X[mask], y[mask])
        np.testing.assert_allclose(path.residuals(mask), refit.predict(X_eval) - y_eval, atol=tolerance)


def test_residual_game_values_equal_with_and_without_fast_path():
    X, y = load_diabetes()
    X, y = X.to_numpy()[:15], y.to_numpy(dtype=float)[:15]
    masks = np.random.default_rng(1).random((40, 15)) < 0.5
    fast = ResidualGame(Ridge(alpha=0.3), X, y)(masks)
    slow = ResidualGame(Ridge(alpha=0.3), X, y, use_fast_path=False)(masks)
    np.testing.assert_allclose(fast, slow, atol=1e-10)
