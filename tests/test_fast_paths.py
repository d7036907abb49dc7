"""Exact refit shortcuts on single coalitions (the kernel and exact methods) against scikit-learn refits."""

import numpy as np
import pytest
from sklearn.linear_model import LinearRegression, Ridge

from shap_instances.datasets import load_diabetes
from shap_instances.games import ResidualGame
from shap_instances.linear._fast_ridge import RidgePath


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


@pytest.mark.parametrize("model", [Ridge(alpha=0.1), Ridge(alpha=1.0, fit_intercept=False), LinearRegression()])
def test_ridge_prefixes_on_unscaled_features(model):
    """Features on scales up to 1e2 (raw-data scales), prefixes below and above the feature count.

    Agreement is limited by conditioning on both sides (scikit-learn's solvers and ours): measured 4e-12
    relative for ridge and 2e-8 for least squares near rank deficiency here, growing with the feature scales.
    """
    X, y = load_diabetes()
    X = X.to_numpy()[:25] * np.array([1e3, 1, 1e2, 1e3, 1, 10, 1e3, 1, 10, 1])
    y = y.to_numpy(dtype=float)[:25]
    permutation = np.random.default_rng(3).permutation(25)
    # least squares just above p rows is nearly singular, and the scatter matrix squares its condition number
    tolerance = 1e-10 if isinstance(model, Ridge) else 1e-7
    path = RidgePath(model, X, y, X[:5], y[:5])
    fast = path.prefix_residuals(permutation)
    for t in range(1, 25):
        rows = permutation[:t]
        refit = model.__class__(**model.get_params()).fit(X[rows], y[rows]).predict(X[:5]) - y[:5]
        scale = max(1.0, np.abs(refit).max())
        assert np.abs(fast[t - 1] - refit).max() / scale < tolerance, t
        mask = np.zeros(25, bool)
        mask[rows] = True
        assert np.abs(path.residuals(mask) - refit).max() / scale < tolerance, t


@pytest.mark.parametrize("x_factor, y_factor", [(1e8, 1.0), (1e-150, 1.0), (1.0, 1e300), (1e300, 1.0)])
def test_ridge_path_survives_extreme_magnitudes(x_factor, y_factor):
    """Scaled units: huge features neither overflow the scatter matrices nor swamp the penalty."""
    from shap_instances import InstanceKernelExplainer

    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(9, 3)), rng.normal(size=9)
    Xs, ys = X * x_factor, y * y_factor
    if x_factor >= 1e300:  # the penalty underflows in any units: exact refits, which scikit-learn cannot do here
        from shap_instances.exceptions import UnsupportedModelError

        with pytest.raises(UnsupportedModelError, match="could not be fitted"):
            InstanceKernelExplainer(Ridge(alpha=1.0), Xs, y=ys, approximator="exact", silent=True)()
        return
    explanation = InstanceKernelExplainer(Ridge(alpha=1.0), Xs, y=ys, approximator="exact", silent=True)()
    assert np.all(np.isfinite(explanation.values))
    if x_factor < 1e300:  # scikit-learn itself overflows at 1e300: compare with its refits elsewhere
        full = Ridge(alpha=1.0).fit(Xs, ys).predict(Xs) - ys
        total = explanation.base_values + explanation.values.sum(1)
        np.testing.assert_allclose(total, full, rtol=1e-9, atol=1e-9 * np.abs(full).max())
        mask = np.zeros(9, bool)  # more rows than features: a subset with fewer is ill-conditioned at 1e8 for
        mask[[0, 2, 3, 4, 6, 7]] = True  # any solver (penalty 1 against a scatter of 1e16), scikit-learn's too
        path = RidgePath(Ridge(alpha=1.0), Xs, ys, Xs, ys)
        subset = Ridge(alpha=1.0).fit(Xs[mask], ys[mask]).predict(Xs) - ys
        np.testing.assert_allclose(path.residuals(mask), subset, rtol=1e-8, atol=1e-8 * np.abs(subset).max())
