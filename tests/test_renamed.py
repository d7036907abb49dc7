"""The names renamed in 0.2 (one name per concept) still work until 0.3, each with a deprecation warning."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import load_diabetes, load_iris
from sklearn.ensemble import GradientBoostingRegressor, RandomForestRegressor
from sklearn.linear_model import Ridge
from sklearn.naive_bayes import GaussianNB

import shap_instances as si
from shap_instances.boosting import read_boosted_model, row_major_contributions, top_gradient_contributions
from shap_instances.exceptions import InvalidParameterError, ShapInstancesDeprecationWarning
from shap_instances.utils import row_names

DIABETES_X, DIABETES_Y = load_diabetes(return_X_y=True)


def test_isotonic_shapley_from_the_package():
    with pytest.warns(ShapInstancesDeprecationWarning, match="IsotonicShapleyExplainer"):
        old = si.IsotonicShapley
    assert old is si.IsotonicShapleyExplainer


def test_isotonic_shapley_from_its_module():
    import shap_instances.explainers.isotonic as module

    with pytest.warns(ShapInstancesDeprecationWarning, match="IsotonicShapleyExplainer"):
        from shap_instances.explainers.isotonic import IsotonicShapley
    assert IsotonicShapley is module.IsotonicShapleyExplainer


def test_registry_name_residual():
    with pytest.warns(ShapInstancesDeprecationWarning, match="'instance_kernel'"):
        cls = si.get_explainer("residual")
    assert cls is si.InstanceKernelExplainer is si.get_explainer("instance_kernel")
    assert "instance_kernel" in si.list_explainers() and "residual" not in si.list_explainers()
    with pytest.warns(ShapInstancesDeprecationWarning, match="'instance_kernel'"):
        explainer = si.Explainer(Ridge(), DIABETES_X[:10], algorithm="residual", y=DIABETES_Y[:10], silent=True)
    assert type(explainer) is si.InstanceKernelExplainer


def test_cli_explainer_residual(tmp_path, capsys):
    from shap_instances.cli import main

    out = tmp_path / "values.csv"
    assert main(["explain", "--explainer", "residual", "--rows", "2", "--out", str(out)]) == 0
    captured = capsys.readouterr()
    assert "--explainer residual is deprecated" in captured.err and "use --explainer instance_kernel" in captured.err
    assert captured.out.startswith("InstanceKernelExplainer: 2 rows") and out.exists()
    with pytest.warns(ShapInstancesDeprecationWarning, match="'instance_kernel'"):  # outside the CLI, a warning
        assert si.registry.canonical_name("residual") == "instance_kernel"


def test_instance_kernel_estimator_keyword():
    X, y = DIABETES_X[:8], DIABETES_Y[:8]
    new = si.InstanceKernelExplainer(Ridge(), X, y=y, approximator="exact", silent=True)
    with pytest.warns(ShapInstancesDeprecationWarning, match="approximator="):
        old = si.InstanceKernelExplainer(Ridge(), X, y=y, estimator="exact", silent=True)
    assert old.approximator == "exact"
    np.testing.assert_array_equal(old().values, new().values)
    with pytest.warns(ShapInstancesDeprecationWarning, match="approximator"):
        assert old.estimator == "exact"
    with pytest.raises(InvalidParameterError, match="both approximator= and its deprecated name estimator="):
        si.InstanceKernelExplainer(Ridge(), X, y=y, estimator="exact", approximator="permutation")


def test_naive_bayes_fitted_names():
    X, y = load_iris(return_X_y=True, as_frame=True)
    explainer = si.NaiveBayesExplainer(GaussianNB().fit(X, y), X)
    with pytest.warns(ShapInstancesDeprecationWarning, match="columns_"):
        assert explainer.fitted_names_ == explainer.columns_ == list(X.columns)


def test_naive_bayes_keeps_the_users_arguments():
    X, y = load_iris(return_X_y=True)
    weights = [1.0, 1.0, 0.5, 0.5]
    explainer = si.NaiveBayesExplainer(GaussianNB().fit(X, y), X, weights=weights)
    assert explainer.weights is weights and explainer.feature_names is None
    assert explainer.weights_.tolist() == weights and explainer.feature_names_ == ["x0", "x1", "x2", "x3"]


def test_gap_targets_and_y_codes():
    forest = RandomForestRegressor(5, random_state=0).fit(DIABETES_X[:60], DIABETES_Y[:60])
    explainer = si.GapExplainer(forest, DIABETES_X[:60], y=DIABETES_Y[:60])
    with pytest.warns(ShapInstancesDeprecationWarning, match="target_columns_"):
        assert explainer.targets_ is explainer.target_columns_
    with pytest.warns(ShapInstancesDeprecationWarning, match="y_train_"):
        assert explainer.y_codes_ is explainer.y_train_


def test_boosting_targets():
    model = GradientBoostingRegressor(n_estimators=5, random_state=0).fit(DIABETES_X[:60], DIABETES_Y[:60])
    explainer = si.BoostingExplainer(model, DIABETES_X[:60], y=DIABETES_Y[:60])
    with pytest.warns(ShapInstancesDeprecationWarning, match="y_train_"):
        assert explainer.targets_ is explainer.y_train_


def test_instance_names():
    from shap_instances.utils import instance_names

    with pytest.warns(ShapInstancesDeprecationWarning, match="row_names"):
        names = instance_names(np.zeros((2, 1)))
    assert names == row_names(np.zeros((2, 1)), prefix="train") == ["train[0]", "train[1]"]


def test_top_gradient_contributions_output_argument():
    model = GradientBoostingRegressor(n_estimators=5, random_state=0).fit(DIABETES_X[:60], DIABETES_Y[:60])
    trees = read_boosted_model(model, DIABETES_X[:60], DIABETES_Y[:60])
    query, index = trees.apply(DIABETES_X[:3]), row_major_contributions(trees, 0)
    new = top_gradient_contributions(trees, query, 4, 10, index)
    with pytest.warns(ShapInstancesDeprecationWarning, match="output"):
        old = top_gradient_contributions(trees, query, 0, 4, 10, index)
    for a, b in zip(old, new):
        np.testing.assert_array_equal(a, b)
