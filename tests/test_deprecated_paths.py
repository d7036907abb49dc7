"""The 0.1 import paths keep working until 0.3, each with a ShapInstancesDeprecationWarning naming the new place."""

import importlib
import pickle
import subprocess
import sys

import numpy as np
import pytest

import shap_instances
from shap_instances._deprecated import FAST_PATH_HOMES, MOVED_MODULES
from shap_instances.exceptions import ShapInstancesDeprecationWarning

#: (old module, a name read from it, the module that now holds the name)
OLD_NAMES = [
    ("shap_instances.estimators", "PermutationApproximator", "shap_instances.approximators"),
    ("shap_instances.estimators.exact", "all_coalitions", "shap_instances.approximators.exact"),
    ("shap_instances.estimators.kernel", "KernelApproximator", "shap_instances.approximators.kernel"),
    ("shap_instances.estimators.permutation", "PermutationApproximator", "shap_instances.approximators.permutation"),
    ("shap_instances.estimators.sampling", "KernelCoalitionSampler", "shap_instances.approximators.sampling"),
    ("shap_instances.estimators.influence", "RidgeInfluenceApproximator", "shap_instances.approximators.influence"),
    ("shap_instances.estimators.closed_form", "ClosedFormApproximator", "shap_instances.approximators.closed_form"),
    ("shap_instances.proximities", "build_gap_index", "shap_instances.forest"),
    ("shap_instances.nb_terms", "terms_for", "shap_instances.naive_bayes"),
    ("shap_instances.nb_columns", "columnwise_order", "shap_instances.naive_bayes"),
    ("shap_instances.linear_objective", "linear_objective", "shap_instances.linear"),
    ("shap_instances.models", "fit_model", "shap_instances.report"),
    ("shap_instances.models", "WeightedNaiveBayes", "shap_instances.naive_bayes"),
    ("shap_instances.metrics.trust", "gap_trust_scores", "shap_instances.forest"),
    ("shap_instances.metrics.trust", "weighted_quantiles", "shap_instances.weighted_targets"),
    ("shap_instances.plots.gap_weighted_scatter", "gap_weighted_scatter", "shap_instances.plots"),
    ("shap_instances.plots.gap_cumulative_weight", "gap_cumulative_weight", "shap_instances.plots"),
    ("shap_instances.plots.gap_predictive_distribution", "gap_predictive_distribution", "shap_instances.plots"),
    ("shap_instances.plots.gap_weighted_histograms", "gap_weighted_histograms", "shap_instances.plots"),
    ("shap_instances.plots.isotonic_transform", "isotonic_transform", "shap_instances.plots"),
    ("shap_instances.plots.trust_deciles", "trust_deciles", "shap_instances.plots"),
    ("shap_instances.utils", "check_explainer", "shap_instances.testing"),
    ("shap_instances.utils", "ConformanceProblem", "shap_instances.testing"),
    # the refit shortcuts that left games/ for their families (issue 41): the public names and the old modules
    *[("shap_instances.games", name, f"shap_instances.{home}") for name, home in [
        ("RidgePath", "linear"), ("MeanPath", "linear"), ("LogisticPath", "linear"), ("KernelRidgePath", "linear"),
        ("KNNPath", "neighbors"), ("NaiveBayesPath", "naive_bayes"), ("DiscriminantPath", "discriminant"),
        ("QuadraticDiscriminantPath", "discriminant"), ("qda_convention", "discriminant"),
        ("FixedForestPath", "forest")]],
    *[(f"shap_instances.games.{old}", name, home) for old, home in FAST_PATH_HOMES.items()
      for name in (importlib.import_module(home).__all__) if name.endswith("Path")
      and importlib.import_module(home).__dict__[name].__module__.endswith(old)],
    ("shap_instances.valuation._estimators", "semivalue_approximator", "shap_instances.valuation"),
    ("shap_instances.valuation._estimators", "MSRBanzhafApproximator", "shap_instances.approximators"),
]


#: (old module, old class name, new module, new class name): the approximators were called estimators in 0.1.
RENAMED = [
    ("shap_instances.estimators", "PermutationEstimator", "shap_instances.approximators", "PermutationApproximator"),
    ("shap_instances.estimators.exact", "ExactEstimator", "shap_instances.approximators.exact", "ExactApproximator"),
    ("shap_instances.estimators.kernel", "KernelEstimator", "shap_instances.approximators.kernel",
     "KernelApproximator"),
    ("shap_instances.estimators.permutation", "PermutationEstimator", "shap_instances.approximators.permutation",
     "PermutationApproximator"),
    ("shap_instances.estimators.influence", "RidgeInfluenceEstimator", "shap_instances.approximators.influence",
     "RidgeInfluenceApproximator"),
    ("shap_instances.estimators.closed_form", "ClosedFormEstimator", "shap_instances.approximators.closed_form",
     "ClosedFormApproximator"),
]


@pytest.mark.parametrize(("old", "name", "new", "new_name"), RENAMED)
def test_old_class_name_gives_the_renamed_class_with_a_warning(old, name, new, new_name):
    with pytest.warns(ShapInstancesDeprecationWarning, match=rf"{old}\.{name} is deprecated.*use {new}\.{new_name}"):
        value = getattr(importlib.import_module(old), name)
    assert value is getattr(importlib.import_module(new), new_name)


def test_shapley_result_estimator_is_the_approximator_with_a_warning():
    from shap_instances.approximators import ExactApproximator
    from shap_instances.games import FunctionGame

    result = ExactApproximator().estimate(FunctionGame(lambda masks: masks.sum(1, keepdims=True) * 1.0, 3))
    with pytest.warns(ShapInstancesDeprecationWarning, match="ShapleyResult.approximator"):
        assert result.estimator == result.approximator == "exact"
    with pytest.warns(ShapInstancesDeprecationWarning, match=r"ShapleyResult\(approximator=...\)"):
        built = type(result)(result.values, result.empty_value, result.full_value, estimator="mine")
    assert built.approximator == "mine"


@pytest.mark.parametrize(("old", "name", "new"), OLD_NAMES)
def test_old_path_gives_the_same_object_with_a_warning(old, name, new):
    with pytest.warns(ShapInstancesDeprecationWarning, match=rf"{old}\.{name} is deprecated.*use {new}\.{name}"):
        value = getattr(importlib.import_module(old), name)
    assert value is getattr(importlib.import_module(new), name)


def test_every_alias_is_tested():
    assert set(MOVED_MODULES) <= {old for old, _, _ in OLD_NAMES} | {old for old, *_ in RENAMED}


def test_from_import_statement_and_top_level_attribute():
    with pytest.warns(ShapInstancesDeprecationWarning):
        from shap_instances.estimators import ExactEstimator  # noqa: F401  (the statement users wrote in 0.1)
    with pytest.warns(ShapInstancesDeprecationWarning, match="shap_instances.estimators.KernelApproximator"):
        kernel = shap_instances.estimators.KernelApproximator
    from shap_instances.approximators import KernelApproximator
    assert kernel is KernelApproximator


def test_reading_an_old_path_leaves_the_new_names_in_place():
    """Importing a plot's old module path must not replace the function ``si.plots.<name>`` by a module."""
    with pytest.warns(ShapInstancesDeprecationWarning):
        from shap_instances.plots.gap_weighted_scatter import gap_weighted_scatter
    assert shap_instances.plots.gap_weighted_scatter is gap_weighted_scatter
    assert callable(shap_instances.plots.gap_weighted_scatter)


def test_unknown_name_on_an_old_path_is_an_attribute_error():
    with pytest.raises(AttributeError, match="no attribute 'not_a_name'"):
        _ = importlib.import_module("shap_instances.proximities").not_a_name
    with pytest.raises(AttributeError, match="'shap_instances.games' has no attribute 'NotAPath'"):
        _ = importlib.import_module("shap_instances.games").NotAPath


def test_a_pickled_fast_path_of_0_2_loads_from_its_family():
    """A residual game pickled before the move names its shortcut by the module under games/."""
    from sklearn.linear_model import Ridge

    from shap_instances.games import ResidualGame
    from shap_instances.linear import RidgePath

    X, y = np.arange(8.0).reshape(4, 2), np.array([1.0, 2.0, 2.0, 5.0])
    payload = pickle.dumps(ResidualGame(Ridge(), X, y).fast_path, protocol=0)
    old = payload.replace(b"shap_instances.linear._fast_ridge\nRidgePath",
                          b"shap_instances.games._fast_ridge\nRidgePath")
    assert old != payload
    with pytest.warns(ShapInstancesDeprecationWarning, match="games._fast_ridge.RidgePath"):
        loaded = pickle.loads(old)
    assert type(loaded) is RidgePath


def test_an_old_pickle_loads_through_the_alias():
    """A 0.1 pickle names the class by its old module: it loads, with the warning, as the new class."""
    from shap_instances.approximators import PermutationApproximator

    payload = pickle.dumps(PermutationApproximator(max_evals=5), protocol=0)  # text opcodes: names can be replaced
    old = payload.replace(b"shap_instances.approximators.permutation\nPermutationApproximator",
                          b"shap_instances.estimators.permutation\nPermutationEstimator")
    assert old != payload
    with pytest.warns(ShapInstancesDeprecationWarning):
        loaded = pickle.loads(old)
    assert type(loaded) is PermutationApproximator


@pytest.mark.slow
def test_the_warning_is_shown_by_default():
    """A FutureWarning, so a user's script sees it without turning warnings on."""
    code = "from shap_instances.proximities import build_gap_index"
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "ShapInstancesDeprecationWarning" in run.stderr and "shap_instances.forest.build_gap_index" in run.stderr


MOVED_APPROXIMATORS = ["LeaveOneOutApproximator", "MSRBanzhafApproximator", "RegressionBanzhafApproximator",
                       "WeightedPermutationApproximator"]


@pytest.mark.parametrize("name", MOVED_APPROXIMATORS)
def test_valuation_approximators_moved_to_approximators_with_a_warning(name):
    import shap_instances.approximators as approximators
    import shap_instances.valuation as valuation

    moved = rf"shap_instances\.valuation\.{name} is deprecated.*use shap_instances\.approximators\.{name}"
    with pytest.warns(ShapInstancesDeprecationWarning, match=moved):
        value = getattr(valuation, name)
    assert value is getattr(approximators, name)
    assert name not in valuation.__all__ and name in approximators.__all__
    with pytest.warns(ShapInstancesDeprecationWarning, match=r"valuation\._estimators"):
        assert getattr(importlib.import_module("shap_instances.valuation._estimators"), name) is value


def test_valuation_estimators_is_approximators_with_a_warning():
    import shap_instances.valuation as valuation

    with pytest.warns(ShapInstancesDeprecationWarning, match=r"valuation\.ESTIMATORS.*valuation\.APPROXIMATORS"):
        assert valuation.ESTIMATORS is valuation.APPROXIMATORS
    with pytest.raises(AttributeError, match="no attribute 'Nothing'"):
        valuation.Nothing  # noqa: B018


def test_estimator_keyword_of_data_values_is_approximator_with_a_warning():
    from sklearn.linear_model import Ridge

    from shap_instances.exceptions import InvalidParameterError
    from shap_instances.valuation import Semivalue, data_values, semivalue_approximator

    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(16, 2)), rng.normal(size=16)
    kwargs = dict(semivalue="banzhaf", max_evals=60, random_state=0)
    new = data_values(Ridge(), X[:8], y[:8], X[8:], y[8:], approximator="msr", **kwargs)
    renamed = r"data_values\(estimator=...\).*data_values\(approximator"
    with pytest.warns(ShapInstancesDeprecationWarning, match=renamed):
        old = data_values(Ridge(), X[:8], y[:8], X[8:], y[8:], estimator="msr", **kwargs)
    assert old.method == new.method == "banzhaf/msr" and np.array_equal(old.values, new.values)
    with pytest.raises(InvalidParameterError, match="both approximator= and its deprecated name estimator="):
        data_values(Ridge(), X[:8], y[:8], X[8:], y[8:], approximator="msr", estimator="msr", **kwargs)
    with pytest.warns(ShapInstancesDeprecationWarning, match=r"semivalue_approximator\(estimator=...\)"):
        chosen = semivalue_approximator(Semivalue("banzhaf"), estimator="regression")
    assert type(chosen).__name__ == "RegressionBanzhafApproximator"
