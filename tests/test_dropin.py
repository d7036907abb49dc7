"""si.Explainer in place of shap.Explainer: working shap code runs unchanged and gets shap's own results."""

import matplotlib.pyplot as plt
import numpy as np
import pytest
import shap
from sklearn.datasets import load_diabetes
from sklearn.ensemble import GradientBoostingRegressor, RandomForestRegressor
from sklearn.linear_model import LinearRegression, Ridge

import shap_instances as si
from shap_instances.exceptions import InvalidParameterError


@pytest.fixture(scope="module")
def data():
    X, y = load_diabetes(return_X_y=True, as_frame=True)
    return X.iloc[:200], y.iloc[:200]


def _same(ours, theirs):
    assert type(ours) is type(theirs)
    np.testing.assert_array_equal(ours.values, theirs.values)
    np.testing.assert_array_equal(ours.base_values, theirs.base_values)


def test_a_tree_model_gets_shaps_tree_explainer(data):
    X, y = data
    model = GradientBoostingRegressor(n_estimators=20, random_state=0).fit(X, y)
    theirs = shap.Explainer(model)(X[:10])
    ours = si.Explainer(model)(X[:10])
    _same(ours, theirs)
    forest = RandomForestRegressor(10, random_state=0).fit(X, y)  # a forest without y= stays shap's
    assert type(si.Explainer(forest, X)).__name__ == type(shap.Explainer(forest, X)).__name__


def test_a_linear_model_gets_shaps_linear_explainer(data):
    X, y = data
    model = LinearRegression().fit(X, y)
    _same(si.Explainer(model, X)(X[:10]), shap.Explainer(model, X)(X[:10]))
    ridge = Ridge().fit(X, y)  # the representer and residual explainers claim it only with y=
    assert type(si.Explainer(ridge, X)).__name__ == "LinearExplainer"
    assert type(si.Explainer(ridge, X, y=y)).__name__ == "RepresenterExplainer"


@pytest.mark.slow
def test_a_plain_function_with_a_masker_gets_shaps_choice(data):
    X, _ = data

    def f(Z):
        Z = np.asarray(Z)
        return Z[:, 0] * Z[:, 1] + np.sin(Z[:, 2])

    masker = shap.maskers.Independent(X.to_numpy()[:50])
    theirs = shap.Explainer(f, masker, seed=0)(X.to_numpy()[:5])
    ours = si.Explainer(f, masker, seed=0)(X.to_numpy()[:5])
    _same(ours, theirs)


@pytest.mark.parametrize("algorithm", [pytest.param("exact", marks=pytest.mark.slow), "permutation"])  # 3 s
def test_shaps_algorithm_names_go_to_shap(data, algorithm):
    X, y = data
    model = Ridge().fit(X.iloc[:, :5], y)
    theirs = shap.Explainer(model.predict, X.iloc[:30, :5], algorithm=algorithm, seed=1)(X.iloc[:3, :5])
    ours = si.Explainer(model.predict, X.iloc[:30, :5], algorithm=algorithm, seed=1)(X.iloc[:3, :5])
    _same(ours, theirs)


def test_shaps_options_reach_ours_or_are_refused(data):
    X, y = data
    forest = RandomForestRegressor(10, random_state=0).fit(X, y)
    explainer = si.Explainer(forest, X, y=y, feature_names=[f"row{i}" for i in range(len(X))])
    assert explainer(X[:2]).feature_names[0] == "row0"
    with pytest.raises(InvalidParameterError, match="link"):
        si.Explainer(forest, X, y=y, link=shap.links.logit)
    residual = si.Explainer(Ridge(), X[:20], algorithm="instance_kernel", y=y[:20], seed=3, silent=True)
    assert residual.random_state == 3


@pytest.mark.filterwarnings("ignore:The NumPy global RNG:FutureWarning")  # shap.summary_plot seeds it
def test_legacy_shap_code_runs_on_our_explainers(data):
    X, y = data
    forest = RandomForestRegressor(10, random_state=0).fit(X, y)
    explainer = si.Explainer(forest, X, y=y)
    shap_values = explainer.shap_values(X[:20])
    assert shap_values.shape == (20, len(X))
    shap.force_plot(explainer.expected_value, shap_values[0], matplotlib=True, show=False)
    plt.close("all")
    shap.summary_plot(shap_values, show=False)
    plt.close("all")
    shap.decision_plot(explainer.expected_value, shap_values[:5], show=False)
    plt.close("all")
