"""The models users ship: fitted pipelines on raw tables, search objects and other meta-estimators, bagging.

Every explanation is checked two independent ways: it reconstructs the pipeline's own ``predict`` /
``predict_proba`` / ``decision_function`` on the raw rows, and it equals the explanation of the bare last step on
the rows the pipeline's fitted steps produce (so the pipeline adds nothing but the preprocessing). The default run
uses one table (AER CreditCard); the other two (openintro yrbss, modeldata hotel_rates) run with ``-m slow``.
"""

from __future__ import annotations

import pickle

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.ensemble import (
    BaggingClassifier,
    BaggingRegressor,
    GradientBoostingClassifier,
    GradientBoostingRegressor,
    HistGradientBoostingClassifier,
    HistGradientBoostingRegressor,
    RandomForestClassifier,
    RandomForestRegressor,
)
from sklearn.linear_model import Lasso, LogisticRegression, Ridge
from sklearn.pipeline import make_pipeline
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

import shap_instances as si
from shap_instances.exceptions import DataValidationError, NotFittedError, UnsupportedModelError
from shap_instances.utils import unwrap_model

from ._model_tables import TABLES, load_table, preprocessing, rng_columns, split

SLOW_TABLES = [pytest.param(name, marks=pytest.mark.slow) if name != "creditcard" else name for name in TABLES]

#: name -> (factory for regression, factory for classification, explained output, tolerance)
KINDS = {
    "forest": (lambda: RandomForestRegressor(10, min_samples_leaf=3, random_state=0),
               lambda: RandomForestClassifier(10, min_samples_leaf=3, random_state=0), "predict", 1e-9),
    "bagging": (lambda: BaggingRegressor(DecisionTreeRegressor(min_samples_leaf=3), n_estimators=10, random_state=0),
                lambda: BaggingClassifier(DecisionTreeClassifier(min_samples_leaf=3), n_estimators=10, random_state=0),
                "predict", 1e-9),
    "gradient_boosting": (lambda: GradientBoostingRegressor(n_estimators=10, random_state=0),
                          lambda: GradientBoostingClassifier(n_estimators=10, random_state=0), "decision", 1e-9),
    "hist_gradient_boosting": (lambda: HistGradientBoostingRegressor(max_iter=10, random_state=0),
                               lambda: HistGradientBoostingClassifier(max_iter=10, random_state=0), "decision",
                               1e-6),  # regression: trees fitted on float32 gradients (the documented bound)
    "linear": (lambda: Ridge(alpha=1.0), lambda: LogisticRegression(max_iter=10_000, tol=1e-12), "decision", None),
}


def _explained(model, X, task, output):
    """What the explanation must add up to, from the fitted pipeline's own methods on raw rows."""
    if task == "regression":
        return model.predict(X)
    return model.predict_proba(X) if output == "predict" else model.decision_function(X)


def _fit(kind, task, table, n=120):
    X, y = load_table(table, task, n=n)
    X_train, y_train, X_explained = split(X, y)
    estimator = KINDS[kind][0 if task == "regression" else 1]()
    model = make_pipeline(preprocessing(X_train), estimator).fit(X_train, y_train)
    return model, X_train, y_train, X_explained


@pytest.mark.parametrize("table", SLOW_TABLES)
@pytest.mark.parametrize("task", ["regression", "classification"])
# HistGradientBoosting runs by default in test_native_categorical_splits
@pytest.mark.parametrize("kind", [pytest.param(kind, marks=pytest.mark.slow) if kind.startswith("hist") else kind
                                  for kind in KINDS])
def test_pipeline_explained_by_its_last_step(kind, task, table):
    model, X_train, y_train, X_explained = _fit(kind, task, table)
    before = pickle.dumps(model)
    explainer = si.Explainer(model, X_train, y=y_train)  # algorithm="auto" dispatches on the last step
    assert explainer.players == "instances"
    e = explainer(rng_columns(X_explained))  # columns matched by name before the pipeline
    assert pickle.dumps(model) == before  # the user's pipeline is untouched
    assert list(e.feature_names) == [str(i) for i in X_train.index]  # training rows named by the raw index
    explained = _explained(model, X_explained, task, KINDS[kind][2])
    total = e.base_values + e.values.sum(axis=1)
    tolerance = KINDS[kind][3]
    if tolerance is None:  # the representer is exact at the optimum: as close as the bare model's own
        tolerance = 10 * explainer.reconstruction_gap_ + 1e-12
    np.testing.assert_allclose(total, explained, rtol=0, atol=tolerance * max(1.0, np.abs(explained).max()))
    bare = type(explainer)(model[-1], model[:-1].transform(X_train), y=y_train)
    np.testing.assert_allclose(e.values, bare(model[:-1].transform(X_explained)).values, rtol=1e-12, atol=1e-12)


@pytest.mark.slow
@pytest.mark.parametrize("task", ["regression", "classification"])
def test_pipeline_with_pandas_output_and_xgboost_lightgbm(task):
    X, y = load_table("creditcard", task, n=120)
    X_train, y_train, X_explained = split(X, y)
    y_fit = y_train if task == "regression" else (y_train == "common").astype(int)
    for library, cls in (("xgboost", "XGB"), ("lightgbm", "LGBM")):
        module = pytest.importorskip(library)
        suffix = "Regressor" if task == "regression" else "Classifier"
        options = {"n_estimators": 5} | ({"verbose": -1} if library == "lightgbm" else {})
        estimator = getattr(module, cls + suffix)(**options)
        model = make_pipeline(preprocessing(X_train, pandas_out=True), estimator).fit(X_train, y_fit)
        e = si.Explainer(model, X_train, y=y_fit)(X_explained)
        margin = model.predict(X_explained, output_margin=True) if library == "xgboost" else model.predict(
            X_explained, raw_score=True)
        scale = max(1.0, np.abs(margin).max())
        np.testing.assert_allclose(e.base_values + e.values.sum(1), margin, atol=1e-5 * scale)  # float32 libraries


def test_knn_plugin_takes_a_pipeline():
    knn = pytest.importorskip("shap_instances_knn")
    from sklearn.neighbors import KNeighborsRegressor

    X, y = load_table("creditcard", "regression", n=80)
    X_train, y_train, X_explained = split(X, y)
    model = make_pipeline(preprocessing(X_train), KNeighborsRegressor(5)).fit(X_train, y_train)
    e = knn.KNNShapleyExplainer(model, X_train, y=y_train, utility="prediction", silent=True)(X_explained)
    np.testing.assert_allclose(e.base_values + e.values.sum(1), model.predict(X_explained), atol=1e-9)


@pytest.mark.parametrize("mode", ["refit", "last_step"])
def test_residual_refits_the_pipeline(mode):
    X, y = load_table("creditcard", "regression", n=9)
    X_train, y_train, X_explained = split(X, y, n_explained=3)
    y_explained = y.iloc[-3:].to_numpy()
    model = make_pipeline(preprocessing(X_train), Ridge(alpha=1.0)).fit(X_train, y_train)
    explainer = si.InstanceKernelExplainer(model, X_train, y=y_train, pipeline=mode, approximator="permutation",
                                           n_permutations=1, random_state=0, silent=True)
    e = explainer(rng_columns(X_explained), y_explained)
    np.testing.assert_allclose(e.base_values + e.values.sum(1), model.predict(X_explained) - y_explained, atol=1e-9)
    game = explainer.game(X_explained, y_explained)
    subset = np.zeros(len(X_train), dtype=bool)
    subset[:4] = True
    if mode == "refit":  # the whole pipeline refitted on the raw rows of the coalition: imputers and scalers too
        refit = clone(model).fit(X_train.iloc[:4], y_train.iloc[:4])
    else:  # the preprocessing fitted once, the last step refitted
        refit = make_pipeline(model[:-1], clone(model[-1]).fit(model[:-1].transform(X_train.iloc[:4]),
                                                                 y_train.iloc[:4]))
    np.testing.assert_allclose(game.value_function(subset[None])[0], refit.predict(X_explained) - y_explained,
                               atol=1e-9)
    sample = explainer.explain_sample(2, X_explained, y_explained)  # rows of the raw table taken by position
    rows = sample.sampled_rows
    np.testing.assert_allclose(sample.base_values + sample.values.sum(1),
                               model.predict(X_explained.iloc[rows]) - y_explained[rows], atol=1e-9)


def test_search_objects_explain_their_best_estimator():
    from sklearn.experimental import enable_halving_search_cv  # noqa: F401
    from sklearn.model_selection import GridSearchCV, HalvingGridSearchCV, RandomizedSearchCV

    X, y = load_table("creditcard", "regression", n=80)
    X_train, y_train, X_explained = split(X, y)
    pipeline = make_pipeline(preprocessing(X_train), RandomForestRegressor(5, random_state=0))
    grid = {"randomforestregressor__max_depth": [2, 4]}
    for search in (GridSearchCV(pipeline, grid, cv=2), RandomizedSearchCV(pipeline, grid, n_iter=2, cv=2,
                                                                           random_state=0),
                   HalvingGridSearchCV(pipeline, grid, cv=2, min_resources=30, random_state=0)):
        search.fit(X_train, y_train)
        e = si.Explainer(search, X_train, y=y_train)(X_explained)
        np.testing.assert_allclose(e.base_values + e.values.sum(1), search.predict(X_explained), atol=1e-9)
        assert unwrap_model(search).path == (type(search).__name__, "Pipeline")


def test_transformed_target_regressor_explains_the_transformed_scale():
    from sklearn.compose import TransformedTargetRegressor

    X, y = load_table("creditcard", "regression", n=80)
    X_train, y_train, X_explained = split(X, y)
    model = TransformedTargetRegressor(make_pipeline(preprocessing(X_train), RandomForestRegressor(5, random_state=0)),
                                       func=np.log1p, inverse_func=np.expm1).fit(X_train, y_train)
    e = si.Explainer(model, X_train, y=y_train)(X_explained)
    transformed = e.base_values + e.values.sum(1)
    np.testing.assert_allclose(np.expm1(transformed), model.predict(X_explained), rtol=1e-9)
    assert "transformed" in unwrap_model(model).note


def test_calibrated_classifier_explains_the_uncalibrated_model():
    from sklearn.calibration import CalibratedClassifierCV

    X, y = load_table("creditcard", "classification", n=120)
    X_train, y_train, X_explained = split(X, y, n_explained=20)
    forest = make_pipeline(preprocessing(X_train), RandomForestClassifier(10, random_state=0))
    model = CalibratedClassifierCV(forest, ensemble=False, cv=2).fit(X_train, y_train)
    inner = model.calibrated_classifiers_[0].estimator
    e = si.Explainer(model, X_train, y=y_train)(X_explained)
    np.testing.assert_allclose(e.base_values + e.values.sum(1), inner.predict_proba(X_explained), atol=1e-9)
    calibrated = model.predict_proba(X_explained)[:, 1]
    order = np.argsort(inner.predict_proba(X_explained)[:, 1], kind="stable")
    assert np.all(np.diff(calibrated[order]) >= -1e-12)  # a monotone map of what is explained
    with pytest.raises(UnsupportedModelError, match="averages 2 calibrated"):
        unwrap_model(CalibratedClassifierCV(forest, cv=2).fit(X_train, y_train))


def test_refused_wrappers_say_why():
    from sklearn.model_selection import GridSearchCV

    X, y = load_table("creditcard", "regression", n=60)
    pipeline = make_pipeline(preprocessing(X), RandomForestRegressor(3, random_state=0))
    with pytest.raises(NotFittedError, match="not fitted"):
        si.GapExplainer(pipeline, X, y=y)
    search = GridSearchCV(pipeline, {"randomforestregressor__max_depth": [2, 3]}, cv=2, refit=False).fit(X, y)
    with pytest.raises(NotFittedError, match="best_estimator_"):
        si.GapExplainer(search, X, y=y)
    fitted = pipeline.fit(X, y)
    with pytest.raises(DataValidationError, match="missing"):
        si.GapExplainer(fitted, X, y=y)(X.drop(columns=X.columns[0]))
    with pytest.raises(UnsupportedModelError, match="subsets of the columns"):
        si.GapExplainer(BaggingRegressor(max_features=0.5, n_estimators=3).fit(np.eye(6), np.arange(6.0)),
                        np.eye(6), y=np.arange(6.0))


def test_bagging_out_of_bag_matches_sklearn():
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(150, 4)), rng.normal(size=150)
    for kw in ({}, {"max_samples": 0.6}):
        model = BaggingRegressor(DecisionTreeRegressor(min_samples_leaf=2), n_estimators=15, oob_score=True,
                                 random_state=0, **kw).fit(X, y)
        explainer = si.GapExplainer(model, X, y=y)
        e = explainer.oob_explanation()
        seen = explainer.oob_counts() > 0  # rows in-bag in every tree: no out-of-bag prediction (sklearn reports 0)
        assert seen.sum() > 140
        np.testing.assert_allclose((e.base_values + e.values.sum(1))[seen], model.oob_prediction_[seen], atol=1e-10)


#: Every model kind of issue 30: (label, fitted model builder(X, y) on the classification table).
AUTO_KINDS = {
    "pipeline_forest": lambda X, y: make_pipeline(preprocessing(X), RandomForestClassifier(5, random_state=0)),
    "pipeline_gradient_boosting": lambda X, y: make_pipeline(preprocessing(X), GradientBoostingClassifier(
        n_estimators=5)),
    "pipeline_hist_gradient_boosting": lambda X, y: make_pipeline(preprocessing(X), HistGradientBoostingClassifier(
        max_iter=5)),
    "pipeline_logistic": lambda X, y: make_pipeline(preprocessing(X), LogisticRegression(max_iter=1000)),
    "pipeline_lasso": lambda X, y: make_pipeline(preprocessing(X), Lasso(alpha=0.1)),
    "pipeline_bagging": lambda X, y: make_pipeline(preprocessing(X), BaggingClassifier(n_estimators=5,
                                                                                         random_state=0)),
    "grid_search": lambda X, y: __import__("sklearn.model_selection").model_selection.GridSearchCV(
        make_pipeline(preprocessing(X), RandomForestClassifier(5, random_state=0)),
        {"randomforestclassifier__max_depth": [2, 3]}, cv=2),
    "calibrated": lambda X, y: __import__("sklearn.calibration").calibration.CalibratedClassifierCV(
        make_pipeline(preprocessing(X), RandomForestClassifier(5, random_state=0)), ensemble=False, cv=2),
}


#: Model kinds fitted on the regression table.
AUTO_REGRESSION_KINDS = {
    "transformed_target": lambda X, y: __import__("sklearn.compose").compose.TransformedTargetRegressor(
        make_pipeline(preprocessing(X), RandomForestRegressor(5, random_state=0)), func=np.log1p,
        inverse_func=np.expm1),
    "pipeline_knn": lambda X, y: make_pipeline(preprocessing(X), __import__("sklearn.neighbors").neighbors.
                                               KNeighborsRegressor(5)),
    "bagging_regressor": lambda X, y: make_pipeline(preprocessing(X), BaggingRegressor(n_estimators=5,
                                                                                         random_state=0)),
}


@pytest.mark.parametrize("kind", [*AUTO_KINDS, *AUTO_REGRESSION_KINDS, "native_categorical"])
def test_auto_chooses_an_instance_explainer(kind):
    if kind == "pipeline_knn":
        pytest.importorskip("shap_instances_knn")
    regression = kind in AUTO_REGRESSION_KINDS
    X, y = load_table("creditcard", "regression" if regression else "classification", n=60)
    y_fit = (y == "common").astype(float) if kind == "pipeline_lasso" else y
    if kind == "native_categorical":
        X, y_fit = _categorical("creditcard", "classification", n=60)
        model = HistGradientBoostingClassifier(max_iter=5, categorical_features="from_dtype").fit(X, y_fit)
        assert type(si.Explainer(model, X, y=y_fit)).__name__ == "BoostingExplainer"
        return
    model = (AUTO_REGRESSION_KINDS if regression else AUTO_KINDS)[kind](X, y_fit).fit(X, y_fit)
    explainer = si.Explainer(model, X, y=y_fit)
    assert explainer.players == "instances", type(explainer).__name__
    assert explainer.unwrapped_.model is model


def test_unwrap_model_of_a_bare_estimator_is_itself():
    model = Ridge().fit(np.eye(3), np.arange(3.0))
    unwrapped = unwrap_model(model)
    assert unwrapped.estimator is model and not unwrapped.wrapped
    frame = pd.DataFrame(np.eye(3))
    assert unwrapped.transform(frame) is frame


def _categorical(table, task, n=300):
    """``n`` rows of ``table`` with its string columns as pandas categoricals (NaN kept), and a numeric target."""
    X, y = load_table(table, task, n=n)
    X = X.copy()
    for column in X.columns:
        if not pd.api.types.is_numeric_dtype(X[column]):
            X[column] = X[column].astype("category")
    return X, (y if task == "regression" else (y == "common").astype(int))


def _native(library, task):
    """A model of ``library`` that splits the pandas categorical columns natively."""
    regression = task == "regression"
    if library == "scikit-learn":
        cls = HistGradientBoostingRegressor if regression else HistGradientBoostingClassifier
        return cls(max_iter=10, categorical_features="from_dtype", random_state=0)
    module = pytest.importorskip(library)
    if library == "xgboost":
        cls = module.XGBRegressor if regression else module.XGBClassifier
        return cls(n_estimators=10, enable_categorical=True, tree_method="hist", max_cat_to_onehot=1)
    cls = module.LGBMRegressor if regression else module.LGBMClassifier
    return cls(n_estimators=10, verbose=-1, min_data_per_group=5, cat_smooth=1)  # many-vs-many splits, cat_l2


def _margin(model, X, task):
    if hasattr(model, "get_booster"):
        return model.predict(X, output_margin=True)
    if hasattr(model, "booster_"):
        return model.predict(X, raw_score=True)
    return model.predict(X) if task == "regression" else model.decision_function(X)


@pytest.mark.parametrize("table", SLOW_TABLES)
@pytest.mark.parametrize("task", ["regression", "classification"])
@pytest.mark.parametrize("library", ["scikit-learn", pytest.param("xgboost", marks=pytest.mark.slow),
                                     pytest.param("lightgbm", marks=pytest.mark.slow)])
def test_native_categorical_splits(library, task, table):
    X, y = _categorical(table, task)
    X_train, y_train, X_explained = split(X, y, n_explained=20)
    from threadpoolctl import threadpool_limits

    with threadpool_limits(1):  # OpenMP threads on a loaded machine: 12 s
        model = _native(library, task).fit(X_train, y_train)
    explainer = si.Explainer(model, X_train, y=y_train)
    assert type(explainer).__name__ == "BoostingExplainer"
    e = explainer(rng_columns(X_explained))
    margin = _margin(model, X_explained, task)
    # the libraries fit regression trees on float32 gradients (xgboost also sums in float32): the documented bound
    tolerance = 1e-9 if task == "classification" and library != "xgboost" else 1e-6
    np.testing.assert_allclose(e.base_values + e.values.sum(1), margin, rtol=0,
                               atol=tolerance * max(1.0, np.abs(margin).max()))


@pytest.mark.slow
def test_lightgbm_cat_l2_is_replayed():
    """Without the per-leaf cat_l2 the leaves of many-vs-many splits are not reproduced (checked at construction)."""
    lightgbm = pytest.importorskip("lightgbm")
    X, y = _categorical("hotel_rates", "regression")
    model = lightgbm.LGBMRegressor(n_estimators=5, verbose=-1, min_data_per_group=5, cat_smooth=1).fit(X, y)
    assert any(node.get("decision_type") == "==" for node in _nodes(model.booster_.dump_model()["tree_info"]))
    e = si.BoostingExplainer(model, X, y=y)(X.iloc[:10])
    margin = model.predict(X.iloc[:10], raw_score=True)
    np.testing.assert_allclose(e.base_values + e.values.sum(1), margin, atol=1e-6 * np.abs(margin).max())


def _nodes(trees):
    stack = [tree["tree_structure"] for tree in trees]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(node[key] for key in ("left_child", "right_child") if key in node)


@pytest.mark.slow
@pytest.mark.parametrize(("model", "explainer", "players"), [("hist_gradient_boosting", "boosting", 442),
                                                             ("bagging", "gap", 442),
                                                             ("hist_gradient_boosting", "auto", 442)])
def test_command_line_models(tmp_path, model, explainer, players):
    from shap_instances.cli import main

    out = tmp_path / "values.csv"
    assert main(["explain", "--model", model, "--explainer", explainer, "--rows", "3", "--out", str(out)]) == 0
    assert pd.read_csv(out, index_col=0).shape == (3, 1 + players)


def test_pipeline_explainer_saves_and_loads():
    import io

    model, X_train, y_train, X_explained = _fit("forest", "regression", "creditcard", n=60)
    explainer = si.GapExplainer(model, X_train, y=y_train)
    buffer = io.BytesIO()
    explainer.save(buffer)
    buffer.seek(0)
    loaded = si.GapExplainer.load(buffer)
    np.testing.assert_array_equal(loaded(X_explained).values, explainer(X_explained).values)


@pytest.mark.parametrize("task", ["regression", "classification"])
def test_catboost_in_a_pipeline(task):
    catboost = pytest.importorskip("catboost")
    X, y = load_table("creditcard", task, n=150)
    X_train, y_train, X_explained = split(X, y, n_explained=10)
    options = {"iterations": 20, "depth": 4, "verbose": 0, "thread_count": 1, "random_seed": 0,
               "allow_writing_files": False}  # CatBoost's defaults otherwise: row sampling, 10 Logloss steps
    cls = catboost.CatBoostRegressor if task == "regression" else catboost.CatBoostClassifier
    model = make_pipeline(preprocessing(X_train), cls(**options)).fit(X_train, y_train)  # string labels as given
    explainer = si.Explainer(model, X_train, y=y_train)
    assert type(explainer).__name__ == "BoostingExplainer"
    e = explainer(X_explained)
    margin = model.predict(X_explained, prediction_type="RawFormulaVal")
    np.testing.assert_allclose(e.base_values + e.values.sum(1), margin, atol=1e-6 * max(1.0, np.abs(margin).max()))
    with pytest.raises(UnsupportedModelError, match="boosting_type='Plain'"):  # ordered boosting is not replayed
        encoded = model[:-1].transform(X_train)
        si.BoostingExplainer(cls(iterations=2, boosting_type="Ordered", verbose=0, allow_writing_files=False)
                             .fit(encoded, y_train), encoded, y=y_train)
