"""Every registered explainer (plugins included) goes through the one boundary (issue 39, item 1).

Model kinds are checked once, by ``InstanceExplainer._setup`` (``check_model_kind``): a class, a clusterer, an
outlier detector or a transformer is refused with the same words by every constructor. Class labels are checked
by the shared ``check_labels``: labels of another type than the model's ``classes_``, unknown labels and labels
of mixed types get the same error everywhere. NaN or infinite values are refused by ``_finish``.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.cluster import KMeans
from sklearn.ensemble import GradientBoostingClassifier, IsolationForest, RandomForestClassifier
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.neighbors import KNeighborsClassifier
from sklearn.preprocessing import StandardScaler

import shap_instances as si
from shap_instances.exceptions import (
    DataValidationError,
    InvalidParameterError,
    NonFiniteResultError,
    UnsupportedModelError,
)

EXPLAINERS = si.list_explainers()
_RNG = np.random.default_rng(0)
X = pd.DataFrame(_RNG.normal(size=(40, 3)), columns=["a", "b", "c"])
Y = (X["a"] > 0).astype(int).to_numpy()


def _construct(cls, model, y=Y):
    """``cls(model, X, y=y)``, or without y for an explainer that takes none."""
    takes_y = "y" in cls._parameter_constraints or cls.requires_y
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return cls(model, X, y=y) if takes_y else cls(model, X)


def _classifiers():
    """A fitted classifier each classifier-capable explainer takes (XGBoost and LightGBM through boosting)."""
    cases = {
        "boosting": GradientBoostingClassifier(n_estimators=5, random_state=0),
        "gap": RandomForestClassifier(5, random_state=0),
        "instance_kernel": LogisticRegression(),
        "knn_shapley": KNeighborsClassifier(3),
        "loo": LogisticRegression(),
        "representer": LogisticRegression(),
    }
    xgboost = pytest.importorskip("xgboost")
    lightgbm = pytest.importorskip("lightgbm")
    cases["boosting[xgboost]"] = xgboost.XGBClassifier(n_estimators=3, max_depth=2)
    cases["boosting[lightgbm]"] = lightgbm.LGBMClassifier(n_estimators=3, num_leaves=4, min_child_samples=5,
                                                          verbose=-1)
    return cases


NOT_A_MODEL = {
    "clusterer": (lambda: KMeans(2, n_init=1, random_state=0).fit(X), "is a clusterer"),
    "outlier detector": (lambda: IsolationForest(n_estimators=5, random_state=0).fit(X), "is an outlier detector"),
    "transformer": (lambda: StandardScaler().fit(X), "is a transformer"),
}


@pytest.mark.parametrize("kind", sorted(NOT_A_MODEL))
@pytest.mark.parametrize("name", sorted(EXPLAINERS))
def test_every_explainer_refuses_a_model_of_another_kind(name, kind):
    make, says = NOT_A_MODEL[kind]
    model = make()
    with pytest.raises(UnsupportedModelError, match=f"{EXPLAINERS[name].__name__} needs a .*{says}"):
        _construct(EXPLAINERS[name], model)
    with pytest.raises(UnsupportedModelError, match=says):  # a bound method is its estimator
        _construct(EXPLAINERS[name], model.predict if hasattr(model, "predict") else model.transform)


@pytest.mark.parametrize("name", sorted(EXPLAINERS))
def test_every_explainer_refuses_a_class_instead_of_an_instance(name):
    model_class = type(EXPLAINERS[name].conformance_problem().model)
    with pytest.raises(UnsupportedModelError, match=f"got the class {model_class.__name__}; pass an instance"):
        _construct(EXPLAINERS[name], model_class)


_BAD_LABELS = {
    "wrong type": (Y.astype(str), r"y holds labels of type str, but the classes .* are of type number"),
    "unknown": (np.where(Y == 1, 7, 0), r"y holds labels that are not among the classes .*: \[7\]"),
    "mixed": (np.array([0, "1"] * 20, dtype=object), r"y\w* mixes labels of types \['number', 'str'\]"),
}


@pytest.mark.parametrize("bad", sorted(_BAD_LABELS))
@pytest.mark.parametrize("case", sorted(_classifiers()))
def test_every_classifier_explainer_checks_labels_against_classes(case, bad):
    model = _classifiers()[case].fit(X, Y)
    labels, says = _BAD_LABELS[bad]
    with pytest.raises(DataValidationError, match=says):
        _construct(EXPLAINERS[case.split("[")[0]], model, y=labels)
    _construct(EXPLAINERS[case.split("[")[0]], model, y=Y)  # the labels given to fit are taken


def test_the_classifier_table_covers_every_explainer_that_takes_labels():
    """A newly registered explainer that takes y for a classifier must join the label test."""
    without_labels = {"isotonic", "naive_bayes"}  # they take no y (the model's own output is explained)
    covered = {case.split("[")[0] for case in _classifiers()}
    assert covered | without_labels == set(EXPLAINERS)


def test_isotonic_takes_a_function_and_refuses_a_clusterers_method():
    iso = EXPLAINERS["isotonic"]
    ridge = Ridge().fit(X, X["a"])
    assert iso(lambda rows: ridge.predict(pd.DataFrame(rows, columns=X.columns)), X, sparsity=2).model is not None
    with pytest.raises(UnsupportedModelError, match="KMeans is a clusterer"):
        iso(KMeans(2, n_init=1, random_state=0).fit(X).predict, X, sparsity=2)


def test_non_finite_values_are_refused_with_the_explainer_named():
    problem = EXPLAINERS["representer"].conformance_problem()
    explainer = EXPLAINERS["representer"](problem.model, problem.masker, y=problem.y)
    explanation = explainer(problem.X)
    explanation.values[0, 0] = np.nan
    with pytest.raises(NonFiniteResultError, match=r"values computed by RepresenterExplainer are not finite "
                                                   r"\(1 of .* NaN or infinite.*rescale"):
        explainer._finish(explanation)
    explanation.values[0, 0] = 0.0
    explanation.base_values[0] = np.inf
    with pytest.raises(NonFiniteResultError, match="base values computed by RepresenterExplainer"):
        explainer._finish(explanation)
    explanation.base_values[0] = 0.0
    explanation.values[:] = 1e308  # the sum overflows, every value is finite: accepted
    assert explainer._finish(explanation) is explanation


def test_targets_that_overflow_are_refused_as_non_finite_not_as_a_bug():
    """GAP on targets of 1e305: the values overflow; before, an EfficiencyError called it a bug of the package."""
    from sklearn.ensemble import RandomForestRegressor

    from shap_instances.datasets import load_diabetes

    data, target = load_diabetes()
    rows, huge = data.iloc[:40], target.iloc[:40].to_numpy() * 1e305  # up to 3.4e307: differences overflow
    forest = RandomForestRegressor(5, random_state=0).fit(rows, huge)
    with pytest.raises(NonFiniteResultError, match=r"the values are not finite .*rescale the targets"):
        EXPLAINERS["gap"](forest, rows, y=huge)(rows.iloc[:3])


@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("output", ["centred", 7, np.array([0, 1])])
def test_naive_bayes_refuses_an_output_that_is_no_class(n_classes, output):
    from sklearn.naive_bayes import GaussianNB

    labels = np.arange(len(X)) % n_classes
    with pytest.raises(InvalidParameterError, match=r"output must be 'centered', 'joint' or a class label \['0'"):
        EXPLAINERS["naive_bayes"](GaussianNB().fit(X, labels), X, output=output)
    assert EXPLAINERS["naive_bayes"](GaussianNB().fit(X, labels), X, output="1").output == "1"  # a label, by name


class _DuckRegressor:
    """An estimator without scikit-learn's tags (no BaseEstimator): scikit-learn's is_classifier raises on it."""

    def fit(self, X, y):
        return self

    def predict(self, X):
        return np.asarray(X, dtype=float)[:, 0]


@pytest.mark.parametrize("name", sorted(set(EXPLAINERS) - {"isotonic"}))
def test_an_estimator_without_tags_is_refused_by_name_not_by_a_crash(name):
    with pytest.raises(UnsupportedModelError, match="_DuckRegressor is an estimator of unknown kind"):
        _construct(EXPLAINERS[name], _DuckRegressor())


@pytest.mark.parametrize("bad", sorted(_BAD_LABELS))
def test_weighted_naive_bayes_checks_labels_against_classes(bad):
    from sklearn.naive_bayes import GaussianNB

    from shap_instances.naive_bayes import WeightedNaiveBayes

    labels, says = _BAD_LABELS[bad]
    with pytest.raises(DataValidationError, match=says):
        WeightedNaiveBayes(GaussianNB().fit(X, Y), prefit=True).fit(X, labels)
