"""benchmarks/run_shap_plot_tests.py and its pytest plugin: the classification of shap's test outcomes can say
"convention", and the stand-in builds this package's explainer where it applies and shap's elsewhere."""

import importlib.util
import sys
from pathlib import Path

import numpy as np
import shap
from sklearn.ensemble import RandomForestRegressor
from sklearn.tree import DecisionTreeRegressor

import shap_instances as si

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


def _module(name):
    spec = importlib.util.spec_from_file_location(name, BENCHMARKS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def test_classify_names_environment_by_design_and_convention():
    classify = _module("run_shap_plot_tests").classify
    passed, failed = {"outcome": "passed", "error": ""}, {"outcome": "failed", "error": "URLError: no network"}
    assert classify(passed, passed)[0] == "same"
    assert classify(failed, {**failed, "stood_in": True})[0] == "same"
    assert classify(failed, {"outcome": "skipped", "error": "", "stood_in": True})[0] == "environment"
    missing = {"outcome": "failed", "error": "AttributeError: 'GapExplainer' object has no attribute 'data'",
               "stood_in": True}
    assert classify(passed, missing) == ("convention", missing["error"])
    shape = {"outcome": "failed", "stood_in": True,
             "error": "AssertionError: ... does not match the shape of the provided data matrix."}
    assert classify(passed, shape)[0] == "by design"
    assert classify(passed, {**shape, "stood_in": False})[0] == "convention"  # only where ours stood in
    names = {"outcome": "failed", "stood_in": True,
             "error": "ValueError: The feature_names arg must include all features represented in shap_values."}
    assert classify(passed, names)[0] == "by design"  # shap.decision_plot(..., features=X)


def test_the_stand_in_builds_ours_where_it_applies_and_shaps_elsewhere():
    dropin = _module("_shap_dropin")
    X = np.random.default_rng(0).normal(size=(20, 3))
    make = dropin._stand_in(shap.TreeExplainer)
    tree = DecisionTreeRegressor(max_depth=2, random_state=0).fit(X, X[:, 0])
    assert isinstance(make(tree, X), si.InstanceExplainer)
    forest = RandomForestRegressor(5, random_state=0).fit(X, X[:, 0])
    assert type(make(forest, X)) is shap.TreeExplainer  # GAP needs the forest's own y, which the harness lacks
    assert type(make(tree, X, feature_perturbation="interventional")) is shap.TreeExplainer  # shap's options
    deferred = make(forest)  # no background data: shap's fallback gets none either (tree_path_dependent)
    assert deferred(X[:4]).shape == (4, 3)
    assert deferred._explainer.feature_perturbation == "tree_path_dependent"


def test_adult_is_served_offline_through_shaps_own_loader(monkeypatch):
    dropin = _module("_shap_dropin")
    asked = []
    monkeypatch.setattr(shap.datasets, "cache", lambda url, file_name=None: asked.append(url) or "elsewhere")
    served = dropin._offline_datasets()
    assert shap.datasets.cache(shap.datasets.github_data_url + "imdb_train.txt") == "elsewhere"  # no offline source
    assert asked == [shap.datasets.github_data_url + "imdb_train.txt"]
    X, y = shap.datasets.adult()
    names = ["Age", "Workclass", "Education-Num", "Marital Status", "Occupation", "Relationship", "Race", "Sex",
             "Capital Gain", "Capital Loss", "Hours per week", "Country"]
    assert list(X.columns) == names and X.shape == (10, 12) and X.index.tolist() == list(range(10))
    assert X["Age"].dtype == np.float32 and X["Workclass"].dtype == np.int8  # shap's float32 and category codes
    assert X["Age"].tolist()[:3] == [39, 50, 38] and y.tolist() == [False] * 7 + [True] * 3  # UCI's first rows
    raw, _ = shap.datasets.adult(display=True)
    assert raw["Workclass"].iloc[0] == " State-gov" and served["adult.data"].endswith("adult.data")
