"""What shap's own tests do with an explainer and its Explanation, done with this package's (learned from shap
0.51's tests/plots/ conftest and plot tests, tests/explainers/test_tree.py and test_explanation.py; not copied).

shap's plot fixture is a TreeExplainer over a boosted classifier's training data, used as ``explainer(explainer.data)``
and ``explainer.data_feature_names``; here the same model gets this package's BoostingExplainer through
``shap_instances.Explainer``. Usages that need feature-level values (a clustering of features, interaction values)
are shown to fail with an error naming the reason, and their training-row counterparts to work.
"""

import copy
import pickle

import matplotlib.pyplot as plt
import numpy as np
import pytest
import shap
from sklearn.datasets import load_breast_cancer
from sklearn.ensemble import GradientBoostingClassifier

import shap_instances as si
from shap_instances.exceptions import DataValidationError


@pytest.fixture(scope="module")
def explainer():
    X, y = load_breast_cancer(return_X_y=True, as_frame=True)
    X, y = X.iloc[:60, :6], y.iloc[:60]
    model = GradientBoostingClassifier(n_estimators=10, random_state=0).fit(X, y)
    return si.Explainer(model, X, y=y)


@pytest.fixture(scope="module")
def explanation(explainer):
    return explainer(explainer.data)


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


def test_explaining_the_explainers_own_data(explainer, explanation):
    assert type(explainer) is si.BoostingExplainer and isinstance(explainer, si.Explainer)
    assert explanation.values.shape == (60, 60)
    np.testing.assert_allclose(explanation.base_values + explanation.values.sum(1),
                               explainer.model.decision_function(explainer.data), rtol=1e-10)


@pytest.mark.parametrize("plot", ["bar", "beeswarm", "heatmap", pytest.param("violin", marks=pytest.mark.slow),
                                  "scatter", "waterfall"])
def test_shaps_plots_take_the_explanation_as_shaps_tests_pass_it(explanation, plot):
    draw = {
        "bar": lambda: shap.plots.bar(explanation, show=False),
        "beeswarm": lambda: shap.plots.beeswarm(explanation, show=False),
        "heatmap": lambda: shap.plots.heatmap(explanation, show=False),
        "violin": lambda: shap.plots.violin(explanation[:, :5], show=False),
        "scatter": lambda: shap.plots.scatter(explanation[:, 0], show=False),
        "waterfall": lambda: shap.plots.waterfall(explanation[0], show=False),
    }
    draw[plot]()
    assert plt.gcf().axes


def test_group_difference_with_data_feature_names(explainer, explanation):
    groups = np.arange(explanation.shape[0]) % 2
    shap.plots.group_difference(explanation.values, groups, explainer.data_feature_names, show=False)
    labels = [t.get_text() for t in plt.gca().get_yticklabels()]
    assert set(labels) <= set(explainer.data_feature_names) and labels


def test_the_explanation_slices_copies_and_pickles_as_shaps(explanation):
    first = explanation[0]
    assert first.values.shape == (60,) and first.display_data.shape == (60,)
    name = explanation.feature_names[3]
    np.testing.assert_array_equal(explanation[:, name].values, explanation.values[:, 3])
    np.testing.assert_allclose(explanation.abs.mean(0).values, np.abs(explanation.values).mean(0))
    np.testing.assert_allclose(explanation.sum(1).values, explanation.values.sum(1))
    for clone in (copy.copy(explanation), pickle.loads(pickle.dumps(explanation))):
        np.testing.assert_array_equal(clone.values, explanation.values)
        np.testing.assert_array_equal(clone.data, explanation.data)
    cohorts = explanation.cohorts(2).abs.mean(0)
    assert len(cohorts.cohorts) == 2


def test_legacy_tree_explainer_calls(explainer, explanation):
    X, y = explainer.data, explainer.model.predict(explainer.data)
    np.testing.assert_array_equal(explainer.shap_values(X, y=y, check_additivity=True), explanation.values)
    assert np.isscalar(explainer.expected_value)


def test_usages_that_need_feature_level_values_fail_clearly(explainer, explanation):
    """A clustering of features (shap.utils.hclust(X)) does not fit training-row players; interaction values are
    between features. The training-row counterpart of the clustering works."""
    with pytest.raises(NotImplementedError, match="pairs of features"):
        explainer.shap_interaction_values(explainer.data)
    features = shap.utils.hclust(explainer.data, metric="correlation")
    assert features.shape[0] + 1 != explanation.shape[1]  # a clustering of 6 features, not of 60 training rows
    with pytest.raises(IndexError):  # shap's own bar: an index error, no reason given
        shap.plots.bar(explanation, clustering=features, show=False)
    with pytest.raises(DataValidationError, match="player_clustering"):
        si.plots.bar(explanation, clustering=features, show=False)
    si.plots.bar(explanation, clustering=si.utils.player_clustering(explainer), show=False)
    assert plt.gcf().axes
