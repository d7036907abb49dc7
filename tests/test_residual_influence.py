"""Influence approximations of the residual game (ridge): the formula against refits, the values against exact."""

import numpy as np
import pytest
from sklearn.linear_model import LinearRegression, Ridge

from shap_instances import InstanceKernelExplainer
from shap_instances.approximators.influence import ridge_influence
from shap_instances.datasets import load_diabetes
from shap_instances.exceptions import UnsupportedModelError


def diabetes(n, start=0):
    X, y = load_diabetes()
    return X.iloc[start:start + n].to_numpy(), y.iloc[start:start + n].to_numpy(dtype=float)


@pytest.mark.parametrize("model", [Ridge(alpha=0.05), Ridge(alpha=1.0, fit_intercept=False), LinearRegression()])
def test_influence_is_the_derivative_in_the_sample_weight(model):
    """z_j H^-1 z_i e_i is d f(x_j) / d(weight of row i) at weight 1: a central difference of sklearn refits."""
    X, y = diabetes(30)
    X_eval, _ = diabetes(5, start=200)
    change, _ = ridge_influence(X, y, X_eval, getattr(model, "alpha", 0.0), model.fit_intercept)
    h = 1e-4
    for i in (0, 7, 29):
        weights = np.ones(30)
        weights[i] = 1 + h
        up = model.__class__(**model.get_params()).fit(X, y, sample_weight=weights).predict(X_eval)
        weights[i] = 1 - h
        down = model.__class__(**model.get_params()).fit(X, y, sample_weight=weights).predict(X_eval)
        np.testing.assert_allclose(change[:, i], (up - down) / (2 * h), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("model", [Ridge(alpha=0.05), Ridge(alpha=1.0, fit_intercept=False)])
def test_influence_over_one_minus_leverage_is_the_exact_leave_one_out_change(model):
    """Sign and scale: f_S(x_j) - f_{S-i}(x_j) == influence / (1 - h_ii) exactly (Sherman-Morrison)."""
    X, y = diabetes(15)
    X_eval, _ = diabetes(5, start=200)
    change, leverage = ridge_influence(X, y, X_eval, model.alpha, model.fit_intercept)
    full = model.fit(X, y).predict(X_eval)
    for i in range(15):
        keep = np.arange(15) != i
        without = model.__class__(**model.get_params()).fit(X[keep], y[keep]).predict(X_eval)
        np.testing.assert_allclose(change[:, i] / (1 - leverage[i]), full - without, atol=1e-8)
        assert np.all(np.sign(change[:, i]) == np.sign(full - without))  # same sign as the true marginal


@pytest.mark.parametrize("variant,min_corr,min_sign", [("all", 0.9, 0.9), ("largest", 0.6, 0.75)])
def test_influence_tracks_exact_values(variant, min_corr, min_sign):
    X, y = diabetes(10)
    X_eval, y_eval = diabetes(6, start=100)
    exact = InstanceKernelExplainer(Ridge(alpha=0.1), X, y=y, approximator="exact", silent=True)(X_eval, y_eval).values
    approx = InstanceKernelExplainer(Ridge(alpha=0.1), X, y=y, approximator="influence", influence=variant, n_rounds=10,
                                     random_state=0, silent=True)(X_eval, y_eval).values
    assert np.corrcoef(exact.ravel(), approx.ravel())[0, 1] > min_corr
    big = np.abs(exact) > np.quantile(np.abs(exact), 0.5)  # the larger half: signs must agree
    assert np.mean(np.sign(exact[big]) == np.sign(approx[big])) > min_sign


def test_all_s_with_exact_marginals_converges_to_exact(monkeypatch):
    """The all-S stratification itself is unbiased: with the exact leave-one-out change in place of the
    influence step, more rounds approach the exact Shapley values."""
    from shap_instances.approximators import influence

    X, y = diabetes(7)
    exact = InstanceKernelExplainer(Ridge(alpha=0.1), X, y=y, approximator="exact", silent=True)().values
    original = influence.ridge_influence

    def exact_change(*args, **kwargs):
        change, leverage = original(*args, **kwargs)
        return change / (1 - leverage)[None, :], leverage

    monkeypatch.setattr(influence, "ridge_influence", exact_change)
    errors = [np.abs(InstanceKernelExplainer(Ridge(alpha=0.1), X, y=y, approximator="influence", n_rounds=rounds,
                                             efficiency="none", random_state=0, silent=True)().values - exact).max()
              for rounds in (1, 400)]
    assert errors[1] < errors[0] / 5 and errors[1] < 0.02 * np.abs(exact).max()


@pytest.mark.parametrize("variant", ["all", "largest"])
def test_efficiency_completed_or_not_claimed(variant):
    X, y = diabetes(25)
    residual = Ridge(alpha=0.2).fit(X, y).predict(X) - y
    kwargs = dict(approximator="influence", influence=variant, random_state=0, silent=True)
    explainer = InstanceKernelExplainer(Ridge(alpha=0.2), X, y=y, **kwargs)
    completed = explainer()
    np.testing.assert_allclose(completed.base_values + completed.values.sum(1), residual, atol=1e-10)
    gap = explainer.result_.info["raw_efficiency_gap"]
    assert gap > 1e-3  # the raw approximation does not sum to the residual
    raw = InstanceKernelExplainer(Ridge(alpha=0.2), X, y=y, efficiency="none", **kwargs)()
    raw_gap = residual - raw.base_values - raw.values.sum(1)
    np.testing.assert_allclose(np.abs(raw_gap).max(), gap, rtol=1e-10)
    np.testing.assert_allclose(completed.values - raw.values, np.broadcast_to(raw_gap[:, None] / 25, (25, 25)),
                               atol=1e-10)  # completion shares the gap equally


def test_largest_s_is_the_influence_on_the_full_set_and_seeds_reproduce():
    X, y = diabetes(20)
    raw = InstanceKernelExplainer(Ridge(alpha=0.3), X, y=y, approximator="influence", influence="largest",
                                  efficiency="none",
                                  silent=True)().values
    np.testing.assert_allclose(raw, ridge_influence(X, y, X, 0.3)[0], atol=1e-12)
    runs = [InstanceKernelExplainer(Ridge(), X, y=y, approximator="influence", random_state=s, silent=True)().values
            for s in (3, 3, 4)]
    np.testing.assert_array_equal(runs[0], runs[1])
    assert not np.array_equal(runs[0], runs[2])


def test_influence_refuses_other_models_and_bad_options():
    from sklearn.tree import DecisionTreeRegressor

    X, y = diabetes(10)
    with pytest.raises(UnsupportedModelError, match="influence"):
        InstanceKernelExplainer(DecisionTreeRegressor(), X, y=y, approximator="influence")
    with pytest.raises(ValueError, match="influence must be one of"):
        InstanceKernelExplainer(Ridge(), X, y=y, approximator="influence", influence="some")
    with pytest.raises(ValueError, match="efficiency must be one of"):
        InstanceKernelExplainer(Ridge(), X, y=y, approximator="influence", efficiency="rescale")


def test_instance_force_renders_named_training_instances():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from shap_instances.plots import instance_force

    X, y = diabetes(15)
    explanation = InstanceKernelExplainer(Ridge(alpha=0.1), X, y=y, approximator="influence", random_state=0,
                                          silent=True)()
    ax = instance_force(explanation, 3, max_display=4, show=False)  # shap.plots.force(matplotlib=True)
    texts = " ".join(t.get_text() for t in ax.figure.findobj(matplotlib.text.Text))
    top = np.argsort(-np.abs(explanation.values[3]))[0]
    assert explanation.feature_names[top] in texts and "11 other instances" in texts
    plt.close(ax.figure)
    figure, given = plt.subplots()
    assert instance_force(explanation, explanation.row_names[3], ax=given, show=False) is given
    bars = [p for p in given.patches]
    assert len(bars) == 11  # 10 named + the others
    np.testing.assert_allclose(sum(p.get_width() for p in bars), explanation.values[3].sum(), atol=1e-9)
    plt.close(figure)
