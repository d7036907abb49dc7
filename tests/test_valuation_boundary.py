"""The valuation surface on the one boundary (issue 39): columns by name, labels against the classes, model kinds,
scorers, options and budgets, finite results. Every refusal names the problem and what to pass instead; every
accepted reordering gives the values of the ordered input, checked against independent refits."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.cluster import KMeans
from sklearn.compose import make_column_transformer
from sklearn.datasets import load_breast_cancer, load_diabetes
from sklearn.ensemble import (
    BaggingClassifier,
    BaggingRegressor,
    GradientBoostingClassifier,
    IsolationForest,
    RandomForestClassifier,
    RandomForestRegressor,
)
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.metrics import get_scorer, r2_score
from sklearn.model_selection import KFold, ShuffleSplit
from sklearn.naive_bayes import GaussianNB
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

from shap_instances import BoostingExplainer, InstanceKernelExplainer, RepresenterExplainer
from shap_instances.exceptions import (
    BudgetError,
    DataValidationError,
    GameTooLargeError,
    InvalidParameterError,
    MemoryBudgetError,
    NonFiniteResultError,
    UnsupportedModelError,
)
from shap_instances.metrics import data_shapley, removal_curve
from shap_instances.utils import check_labels, check_model_kind, check_scoring
from shap_instances.valuation import Semivalue, classwise_shapley, data_oob, data_values, label_issues, utility_game


@pytest.fixture(scope="module")
def diabetes():
    X, y = load_diabetes(return_X_y=True, as_frame=True)
    return X[:20], y[:20], X[20:60], y[20:60]


@pytest.fixture(scope="module")
def cancer():
    X, y = load_breast_cancer(return_X_y=True, as_frame=True)
    train = np.r_[np.flatnonzero(y == 0)[:8], np.flatnonzero(y == 1)[:8]]  # 8 rows of each class
    return X.iloc[train].reset_index(drop=True), y.iloc[train].reset_index(drop=True), X[300:360], y[300:360]


# ----------------------------------------------------------------------------------------- columns by name
def test_reordered_validation_columns_give_the_ordered_values(diabetes):
    X, y, Xv, yv = diabetes
    ordered = data_values(Ridge(), X, y, Xv, yv, semivalue="loo").values
    reordered = data_values(Ridge(), X, y, Xv[Xv.columns[::-1]], yv, semivalue="loo").values
    np.testing.assert_allclose(reordered, ordered, rtol=0, atol=1e-9)
    shuffled_train = data_values(Ridge(), X[X.columns[::-1]], y, Xv, yv, semivalue="loo").values
    np.testing.assert_allclose(shuffled_train, ordered, rtol=0, atol=1e-9)


def test_reordered_columns_in_classwise_shapley(cancer):
    X, y, Xv, yv = cancer
    X, y = X.iloc[[0, 1, 2, 8, 9, 10]], y.iloc[[0, 1, 2, 8, 9, 10]]  # three rows of each class
    options = {"n_contexts": 2, "n_permutations": 2, "random_state": 0}
    ordered = classwise_shapley(GaussianNB(), X, y, Xv, yv, **options).values
    reordered = classwise_shapley(GaussianNB(), X, y, Xv[Xv.columns[::-1]], yv, **options).values
    np.testing.assert_allclose(reordered, ordered, rtol=0, atol=1e-12)


def test_other_columns_are_refused_with_their_names(diabetes):
    X, y, Xv, yv = diabetes
    with pytest.raises(DataValidationError, match=r"missing \['s6'\], unexpected \['other'\]"):
        data_values(Ridge(), X, y, Xv.rename(columns={"s6": "other"}), yv, semivalue="loo")
    with pytest.raises(DataValidationError, match="X_val has 5 columns, but the model was fitted on 10"):
        data_values(Ridge(), X.to_numpy(), y, Xv.to_numpy()[:, :5], yv, semivalue="loo")


def test_data_oob_matches_columns_by_name(diabetes):
    X, y, _, _ = diabetes
    forest = RandomForestRegressor(10, random_state=0).fit(X, y)
    ordered = data_oob(forest, X, y).values
    np.testing.assert_array_equal(data_oob(forest, X[X.columns[::-1]], y).values, ordered)
    with pytest.raises(DataValidationError, match=r"unexpected \['other'\]"):
        data_oob(forest, X.rename(columns={"age": "other"}), y)


def test_a_pipeline_takes_the_raw_dataframe_and_its_refits_are_those_of_scikit_learn(diabetes):
    X, y, Xv, yv = diabetes
    X, y = X[:8], y[:8]
    X = X.assign(group=np.where(X["sex"] > 0, "one", "other"))
    Xv = Xv.assign(group=np.where(Xv["sex"] > 0, "one", "other"))
    model = make_pipeline(make_column_transformer((OneHotEncoder(), ["group"]), remainder=StandardScaler()),
                          Ridge(alpha=0.3))
    values = data_values(model, X, y, Xv[Xv.columns[::-1]], yv, semivalue="loo", scoring="r2").values
    scorer, full = get_scorer("r2"), clone(model).fit(X, y)
    by_hand = [scorer(full, Xv, yv) - scorer(clone(model).fit(X.drop(index=i), y.drop(index=i)), Xv, yv)
               for i in X.index]
    np.testing.assert_allclose(values.to_numpy(), by_hand, rtol=0, atol=1e-10)
    with pytest.raises(DataValidationError, match=r"not numbers, \['group'\].*pass a pipeline"):
        data_values(Ridge(), X, y, Xv, yv, semivalue="loo")


# --------------------------------------------------------------------------------------------- labels
def test_labels_of_another_type_unknown_or_mixed_are_refused(cancer):
    X, y, Xv, yv = cancer
    with pytest.raises(DataValidationError, match=r"y_val holds labels of type str.*astype\(int\)"):
        data_values(LogisticRegression(), X, y, Xv, yv.astype(str), semivalue="loo")
    with pytest.raises(DataValidationError, match=r"not among the classes of y_train \[0, 1\]: \[7\]"):
        data_values(LogisticRegression(), X, y, Xv, np.where(np.arange(len(yv)) == 3, 7, yv), semivalue="loo")
    mixed = np.array([0, "a"] * (len(y) // 2), dtype=object)
    with pytest.raises(DataValidationError, match=r"mixes labels of types \['number', 'str'\]"):
        data_values(LogisticRegression(), X, mixed, Xv, yv, semivalue="loo")
    with pytest.raises(DataValidationError, match="y_train holds one class"):
        classwise_shapley(GaussianNB(), X, np.zeros(len(y), int), Xv, yv)


def test_check_labels():
    assert check_labels(np.array([1, 0, 1]), 3, classes=[0, 1]).tolist() == [1, 0, 1]
    with pytest.raises(DataValidationError, match="missing labels"):
        check_labels([0.0, np.nan], 2)
    with pytest.raises(DataValidationError, match="labels of type number, but"):
        check_labels([0, 1], 2, classes=["0", "1"])


def test_data_oob_refuses_labels_rows_and_targets_the_forest_was_not_fitted_on(cancer, diabetes):
    X, y, Xv, yv = cancer
    X, y = pd.concat([X, Xv]), pd.concat([y, yv])
    forest = RandomForestClassifier(10, random_state=0).fit(X, y)
    assert data_oob(forest, X, y).values.notna().any()
    with pytest.raises(DataValidationError, match="y_train holds labels of type str"):
        data_oob(forest, X, y.astype(str))
    with pytest.raises(DataValidationError, match="X_train has 86 rows, but the RandomForestClassifier was fitted "
                                                  "on 76"):
        data_oob(forest, pd.concat([X, X[:10]]), pd.concat([y, y[:10]]))
    with pytest.raises(DataValidationError, match="not the target RandomForestClassifier was fitted on"):
        data_oob(forest, X, 1 - y)
    Xr, yr, _, _ = diabetes
    regressor = RandomForestRegressor(10, random_state=0).fit(Xr, yr)
    with pytest.raises(DataValidationError, match="not the target RandomForestRegressor was fitted on"):
        data_oob(regressor, Xr, yr[::-1].to_numpy())


@pytest.mark.parametrize("task", ["classification", "regression"])
def test_data_oob_of_a_bagging_ensemble_of_trees_refuses_a_foreign_y_and_reordered_rows(task, cancer, diabetes):
    """A ``BaggingClassifier`` / ``BaggingRegressor`` of trees (each on a feature subset) gets the forest's check:
    its values are the out-of-bag scores of its members' own ``predict``, and a shuffled ``y`` or rows reordered
    with their targets are refused."""
    X, y, Xv, yv = cancer if task == "classification" else diabetes
    X, y = pd.concat([X, Xv], ignore_index=True), pd.concat([y, yv], ignore_index=True)
    bagging = (BaggingClassifier if task == "classification" else BaggingRegressor)(
        n_estimators=15, max_features=0.5, random_state=0).fit(X, y)
    rows, scores, bags = X.to_numpy(), np.zeros(len(X)), np.zeros(len(X))
    for member, drawn, cols in zip(bagging.estimators_, bagging.estimators_samples_, bagging.estimators_features_):
        out = np.setdiff1d(np.arange(len(X)), drawn)
        predicted = member.predict(rows[np.ix_(out, cols)])
        if task == "classification":
            scores[out] += bagging.classes_[predicted.astype(int)] == y.to_numpy()[out]
        else:
            scores[out] -= (predicted - y.to_numpy()[out]) ** 2
        bags[out] += 1
    expected = np.where(bags > 0, scores / np.maximum(bags, 1), 0.0)
    np.testing.assert_allclose(data_oob(bagging, X, y).values.to_numpy()[bags > 0], expected[bags > 0], rtol=1e-12)
    name = type(bagging).__name__
    with pytest.raises(DataValidationError, match=f"not the target {name} was fitted on"):
        data_oob(bagging, X, y.sample(frac=1.0, random_state=1).set_axis(y.index))
    with pytest.raises(DataValidationError, match=f"not the target {name} was fitted on"):
        data_oob(bagging, X.iloc[::-1], y.iloc[::-1])


@pytest.mark.parametrize("call", ["data_values y_train", "data_values y_val", "classwise_shapley", "data_oob",
                                  "label_issues"])
def test_a_target_whose_index_is_the_rows_in_another_order_is_refused(call, cancer):
    """Rows and targets are paired by position; a pandas y holding X's row labels shuffled (pandas would pair them
    by label) gave each row another row's target without a word. A y with other labels (a reset index) is still
    paired by position."""
    X, y, Xv, yv = cancer
    shuffled = y.sample(frac=1.0, random_state=3)
    reset = y.reset_index(drop=True).set_axis(range(1000, 1000 + len(y)))
    runs = {
        "data_values y_train": lambda t: data_values(LogisticRegression(), X, t, Xv, yv, semivalue="loo"),
        "data_values y_val": lambda t: data_values(LogisticRegression(), X, y, Xv, t, semivalue="loo"),
        "classwise_shapley": lambda t: classwise_shapley(LogisticRegression(), X, t, Xv, yv, n_contexts=2,
                                                         n_permutations=2, random_state=0),
        "data_oob": lambda t: data_oob(RandomForestClassifier(10, random_state=0).fit(X, y), X, t),
        "label_issues": lambda t: label_issues(X, t, cv=3, evidence=("knn",)),
    }
    if call == "data_values y_val":
        shuffled, reset = yv.sample(frac=1.0, random_state=3), yv.set_axis(range(1000, 1000 + len(yv)))
    name = "y_val" if call == "data_values y_val" else "y" if call == "label_issues" else "y_train"
    with pytest.raises(DataValidationError, match=f"{name} holds the row labels of X.* in another order"):
        runs[call](shuffled)
    runs[call](reset)


def test_the_residual_explainer_refuses_mixed_labels_through_the_same_check(cancer):
    X, y, _, _ = cancer
    mixed = np.array([0, "1"] * (len(y) // 2), dtype=object)
    with pytest.raises(DataValidationError, match="mixes labels of types"):
        InstanceKernelExplainer(LogisticRegression(), X, y=mixed, silent=True)


# ---------------------------------------------------------------------------------------- model kinds
@pytest.mark.parametrize("model,kind", [(KMeans(2, n_init=1), "clusterer"), (IsolationForest(), "outlier detector"),
                                        (StandardScaler(), "transformer")], ids=["kmeans", "isolation", "scaler"])
def test_models_without_a_score_are_refused(diabetes, model, kind):
    X, y, Xv, yv = diabetes
    with pytest.raises(UnsupportedModelError, match=f"needs a classifier or regressor, but .* is an? {kind}"):
        data_values(model, X, y, Xv, yv, semivalue="loo")
    assert check_model_kind(make_pipeline(StandardScaler(), Ridge()), "x") == "regressor"


# -------------------------------------------------------------------------------------------- scorers
def test_scorers_that_do_not_fit_are_refused_before_any_refit(diabetes, cancer):
    X, y, Xv, yv = diabetes
    with pytest.raises(InvalidParameterError, match=r"make_scorer\(r2_score\).*scorer name 'r2'"):
        data_values(Ridge(), X, y, Xv, yv, semivalue="loo", scoring=r2_score)
    with pytest.raises(InvalidParameterError, match="'roc_auc' is a classification score, but Ridge is a regressor"):
        data_values(Ridge(), X, y, Xv, yv, semivalue="loo", scoring="roc_auc")
    Xc, yc, Xcv, ycv = cancer
    with pytest.raises(InvalidParameterError, match="'r2' is a regression score, but LogisticRegression is a clas"):
        data_values(LogisticRegression(), Xc, yc, Xcv, ycv, semivalue="loo", scoring="r2")
    with pytest.raises(InvalidParameterError, match="failed on the validation rows .*ZeroDivisionError"):
        data_values(Ridge(), X, y, Xv, yv, semivalue="loo", scoring=lambda estimator, X, y: 1 / 0)
    assert check_scoring(None, Ridge())[1] == "neg_mean_squared_error"


def test_non_finite_scores_and_values_are_refused(diabetes, cancer):
    X, y, Xv, yv = diabetes
    with pytest.raises(NonFiniteResultError, match="not finite"):
        data_values(Ridge(), X, y, Xv, yv, semivalue="loo", scoring=lambda estimator, X, y: float("nan"))
    refits_inf = lambda estimator, X_, y_: float("inf") if hasattr(estimator, "tree_") else 0.0  # noqa: E731
    with pytest.raises(NonFiniteResultError, match="refitted models"):  # the prior scores 0, the refits inf
        data_values(DecisionTreeRegressor(random_state=0), X, y, Xv, yv, semivalue="loo", scoring=refits_inf)
    with pytest.raises(NonFiniteResultError, match="overflows"):
        data_values(Ridge(), X, y * 1e300, Xv, yv * 1e300, semivalue="loo")
    all_rows = lambda estimator, X_, y_: 1e308 if getattr(estimator, "tree_", None) is not None and \
        estimator.tree_.n_node_samples[0] == len(X) else -1e308  # noqa: E731 - finite scores, overflowing values
    with pytest.raises(NonFiniteResultError, match="the loo values are not finite"):
        data_values(DecisionTreeRegressor(random_state=0), X, y, Xv, yv, semivalue="loo", scoring=all_rows)
    Xc, yc, Xcv, _ = cancer
    with pytest.raises(NonFiniteResultError, match="roc_auc or another ranking score on a y_val of one class"):
        data_values(LogisticRegression(), Xc, yc, Xcv, np.ones(len(Xcv), int), semivalue="loo", scoring="roc_auc")
    for bad in (float("nan"), float("inf")):
        with pytest.raises(InvalidParameterError, match="default_score must be None or a finite number"):
            utility_game(Ridge(), X, y, Xv, yv, default_score=bad)


def test_beta_weights_are_exact_for_large_parameters_and_refused_where_they_overflow(diabetes):
    n = 20
    binomial = np.array([math.comb(n - 1, s) for s in range(n)]) * 0.5 ** (n - 1) * n  # alpha = beta -> inf
    np.testing.assert_allclose(Semivalue("beta", 1e15, 1e15).size_weights(n), binomial, rtol=1e-9)
    np.testing.assert_allclose(Semivalue("beta", 1e300, 1e300).size_weights(n), binomial, rtol=1e-9)
    X, y, Xv, yv = diabetes
    with pytest.raises(NonFiniteResultError, match="Beta Shapley's weights overflow"):
        data_values(Ridge(), X, y, Xv, yv, semivalue="beta", alpha=1e308, beta=1e308, max_evals=500)


# ------------------------------------------------------------------------------------- options, budgets
def test_a_budget_below_one_sample_is_refused_with_the_number_that_works(diabetes):
    X, y, Xv, yv = diabetes
    with pytest.raises(InvalidParameterError, match="max_evals=1 is too small.*pass max_evals >= 21"):
        data_values(Ridge(), X, y, Xv, yv, max_evals=1)
    with pytest.raises(InvalidParameterError, match="pass max_evals >= 44"):
        data_values(Ridge(), X, y, Xv, yv, semivalue="banzhaf", approximator="regression", max_evals=43)
    spent = data_values(Ridge(), X, y, Xv, yv, max_evals=21, random_state=0).n_evaluations
    assert spent <= 21
    small = data_values(Ridge(), X[:8], y[:8], Xv, yv, max_evals=30, random_state=0)  # 2^8 > 30: not enumerated
    assert small.n_evaluations <= 30 and small.method == "shapley/permutation"
    with pytest.raises(InvalidParameterError, match="max_evals must be None or an int"):
        data_values(Ridge(), X, y, Xv, yv, max_evals="21")
    with pytest.raises(GameTooLargeError, match="2\\^20 = 1,048,576 evaluations"):  # not "pass max_evals >= 2^20"
        data_values(Ridge(), X, y, Xv, yv, approximator="exact", max_evals=100)


@pytest.mark.parametrize("options,match", [({"n_contexts": "2"}, "n_contexts must be an int"),
                                           ({"exact": "yes"}, "exact must be a bool"),
                                           ({"n_permutations": 0}, "n_permutations must be None or an int")])
def test_classwise_options(cancer, options, match):
    X, y, Xv, yv = cancer
    with pytest.raises(InvalidParameterError, match=match):
        classwise_shapley(GaussianNB(), X, y, Xv, yv, **options)


def test_label_issues_options_labels_and_memory():
    X, y = load_breast_cancer(return_X_y=True)
    X, y = X[:120], y[:120]
    for cv in ("5", 1, 2.5):
        with pytest.raises(InvalidParameterError, match="cv must be an int in"):
            label_issues(X, y, cv=cv)
    with pytest.raises(InvalidParameterError, match="exactly one test fold"):
        label_issues(X, y, cv=ShuffleSplit(3, random_state=0))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        found = label_issues(X, y, cv=KFold(3, shuffle=True, random_state=0), evidence=("knn",), random_state=0)
    assert len(found) == 120
    with pytest.raises(DataValidationError, match="mixes labels"):
        label_issues(X, np.array([0, "1"] * 60, dtype=object))
    many = np.repeat(np.arange(1000), 5)  # 1,000 classes of 5 rows: 50 trees' leaves alone hold ~1.2 GiB
    with pytest.raises(MemoryBudgetError, match=r"5000 rows and 1000 classes would need 1\.6\d GiB, more than the "
                                                r"memory budget of 1\.00 GiB"):
        label_issues(np.zeros((5000, 3)), many, max_memory=2**30)
    with pytest.raises(MemoryBudgetError, match=r"would need 5\.\d+ GiB"):  # 200 trees: ~4.7 GiB of leaves
        label_issues(np.zeros((5000, 3)), many, max_memory=2**30, n_trees=200)
    for n_trees in (0, 2.5, "50"):
        with pytest.raises(InvalidParameterError, match="n_trees must be an int"):
            label_issues(X, y, n_trees=n_trees)


def test_budgets_that_cannot_be_met_are_refused_with_the_estimate(diabetes, cancer):
    X, y, Xv, yv = diabetes
    with pytest.raises(BudgetError, match=r"remaining sampled coalitions are estimated to need about .* days"):
        data_values(Ridge(), X, y, Xv, yv, semivalue="banzhaf", max_evals=10**15, random_state=0)
    with pytest.raises(BudgetError, match="remaining permutations are estimated"):
        data_values(Ridge(), X, y, Xv, yv, semivalue="beta", max_evals=10**15, random_state=0)
    with pytest.raises(MemoryBudgetError, match="least-squares Banzhaf design of 999,999,999,999,998 coalitions"):
        data_values(Ridge(), X, y, Xv, yv, semivalue="banzhaf", approximator="regression", max_evals=10**15)
    Xc, yc, Xcv, ycv = cancer
    with pytest.raises(MemoryBudgetError, match="1000000000 contexts of class-wise Shapley values would need"):
        classwise_shapley(GaussianNB(), Xc, yc, Xcv, ycv, n_contexts=10**9)


def test_other_hostile_inputs_get_named_errors(diabetes):
    X, y, Xv, yv = diabetes
    with pytest.raises(UnsupportedModelError, match=r"got the class Ridge; pass an instance, Ridge\(\)"):
        data_values(Ridge, X, y, Xv, yv)
    with pytest.raises(UnsupportedModelError, match="NoneType is not an estimator"):
        data_values(None, X, y, Xv, yv)
    with pytest.raises(DataValidationError, match=r"one target per row \(1-D\)"):
        data_values(Ridge(), X, np.c_[y, y], Xv, np.c_[yv, yv], semivalue="loo")
    forest = RandomForestRegressor(5, random_state=0).fit(X, y)
    with pytest.raises(DataValidationError, match=r"one target per row \(1-D\)"):
        data_oob(forest, X, np.c_[y, y])
    with pytest.raises(DataValidationError, match="X: Expected 2D array"):
        label_issues(None, y)
    for garbage in (None, 3, np.int64(3), Ridge()):  # named by the validation, not a TypeError of len()
        with pytest.raises(DataValidationError, match="X_train"):
            data_values(Ridge(), garbage, y, Xv, yv, semivalue="loo")
        with pytest.raises(DataValidationError, match="X_train"):
            data_oob(forest, garbage, y)
    with pytest.raises(DataValidationError, match=r"X has repeated column names \['a'\]"):
        label_issues(X.set_axis(["a"] * X.shape[1], axis=1), y)
    with pytest.raises(DataValidationError, match="y_train has missing labels"):
        check_labels(pd.Series(["a", None, "b"], dtype="string"), 3, name="y_train")  # pd.NA


def test_a_model_that_cannot_score_on_all_rows_is_refused_not_valued_at_the_default(cancer):
    X, y, Xv, yv = cancer
    X, Xv = X.assign(group="a"), Xv.assign(group="unseen")
    model = make_pipeline(make_column_transformer((OneHotEncoder(), ["group"]), remainder="passthrough"),
                          DecisionTreeClassifier(random_state=0))
    with pytest.raises(UnsupportedModelError, match=r"could not be fitted on all 16 training rows and scored .*"
                                                    r"unknown categories \['unseen'\]"):
        data_values(model, X, y, Xv, yv, semivalue="loo")


@pytest.mark.parametrize("family", ["boosting", "representer"])
def test_the_families_check_labels_against_classes_through_the_same_helper(cancer, family):
    X, y, _, _ = cancer
    if family == "boosting":
        model = GradientBoostingClassifier(n_estimators=3, random_state=0).fit(X, y)
        build = lambda labels: BoostingExplainer(model, X, y=labels)  # noqa: E731
    else:
        model = LogisticRegression(max_iter=2000).fit(X, y)
        build = lambda labels: RepresenterExplainer(model, X, y=labels)  # noqa: E731
    build(y)
    with pytest.raises(DataValidationError, match="y holds labels of type str, but the classes the"):
        build(y.astype(str))
    with pytest.raises(DataValidationError, match=r"not among the classes the .* \[0, 1\]: \[2\]"):
        build(np.where(np.arange(len(y)) == 0, 2, y))


def test_the_metrics_of_valuation_take_the_same_boundary(diabetes):
    X, y, Xv, yv = diabetes
    scores = np.arange(len(y), dtype=float)
    ordered = removal_curve(Ridge(), X, y, Xv, yv, scores, fractions=(0.0, 0.25))
    reordered = removal_curve(Ridge(), X, y, Xv[Xv.columns[::-1]], yv, scores, fractions=(0.0, 0.25))
    pd.testing.assert_series_equal(reordered, ordered)
    with pytest.raises(DataValidationError, match=r"scores must have 20 rows"):
        removal_curve(Ridge(), X, y, Xv, yv, scores[:-1])
    with pytest.raises(InvalidParameterError, match=r"fraction must be a finite number in \[0, 1\)"):
        removal_curve(Ridge(), X, y, Xv, yv, scores, fractions=(1.0,))
    with pytest.raises(DataValidationError, match="y_train mixes labels"):
        data_shapley(LogisticRegression(), X, np.array([0, "a"] * 10, dtype=object), Xv, np.zeros(len(yv)))
