"""Tests of the shap-instances-loo plugin: conformance, values against explicit refits, the closed form against
refits, refusals, and that the user's model and data are left alone.

Every reference here is computed by refitting scikit-learn models in a plain loop, independently of the plugin.
"""

import doctest
import importlib
import time
import warnings
from importlib.metadata import entry_points

import numpy as np
import pandas as pd
import pytest
from shap_instances_loo import LeaveOneOutExplainer, linear_loo_values
from sklearn.base import BaseEstimator, RegressorMixin, clone
from sklearn.linear_model import LinearRegression, LogisticRegression, Ridge
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC
from sklearn.tree import DecisionTreeRegressor

import shap_instances as si
from shap_instances.datasets import load_breast_cancer, load_diabetes
from shap_instances.exceptions import (
    BudgetError,
    DataValidationError,
    InvalidParameterError,
    MemoryBudgetError,
    UnsupportedModelError,
)
from shap_instances.testing import parametrize_with_checks


@parametrize_with_checks([LeaveOneOutExplainer])
def test_conformance(explainer_class, check):
    check(explainer_class)


def _refit_values(model, X_train, y_train, X, output):
    """values[j, i] = output(full fit)(X[j]) - output(fit without row i)(X[j]), by explicit refits."""
    full = output(clone(model).fit(X_train, y_train), X)
    columns = []
    for i in range(len(X_train)):
        keep = np.arange(len(X_train)) != i
        columns.append(full - output(clone(model).fit(X_train[keep], y_train[keep]), X))
    return np.column_stack(columns), full


def _predict(fitted, X):
    return fitted.predict(X)


def _positive_probability(fitted, X):
    return fitted.predict_proba(X)[:, 1]


@pytest.fixture(scope="module")
def diabetes():
    X, y = load_diabetes()
    return X.iloc[:, :6], y


def test_regressor_values_equal_explicit_refits(diabetes):
    X, y = diabetes
    model = DecisionTreeRegressor(max_depth=4, random_state=0)
    X_train, y_train, X_eval = X.iloc[:50], y.iloc[:50], X.iloc[100:106]
    e = LeaveOneOutExplainer(model, X_train, y=y_train, silent=True)(X_eval)
    reference, full = _refit_values(model, X_train.to_numpy(), y_train.to_numpy(), X_eval.to_numpy(), _predict)
    assert np.abs(reference).max() > 1.0  # the rows matter: the comparison below is not between zeros
    np.testing.assert_allclose(e.values, reference, rtol=0, atol=1e-9)
    np.testing.assert_allclose(e.base_values, full - reference.sum(axis=1), rtol=0, atol=1e-9)  # the remainder
    np.testing.assert_allclose(e.base_values + e.values.sum(axis=1), full, rtol=0, atol=1e-9)
    assert e.feature_names == [str(i) for i in X_train.index] and e.row_names == [str(i) for i in X_eval.index]
    # coloured by the training target minus the prediction, labelled by the target (docs/pictures.md)
    np.testing.assert_allclose(e.data, y_train.to_numpy()[None] - full[:, None], rtol=0, atol=1e-3)
    assert e.display_data[1, 4] == f"{y_train.iloc[4]:.4g}"


def test_binary_classifier_values_equal_explicit_refits():
    X, y = load_breast_cancer()
    X = (X.iloc[:, :4] - X.iloc[:, :4].mean()) / X.iloc[:, :4].std()  # standardised: lbfgs converges in a few steps
    labels = np.where(y == 1, "benign", "malignant")  # string labels: "malignant", the second, is the positive class
    model = LogisticRegression(C=0.5, solver="newton-cholesky")  # lbfgs costs ~80 ms a fit here, this 3 ms
    e = LeaveOneOutExplainer(model, X.iloc[:40], y=labels[:40], silent=True)(X.iloc[200:205])
    reference, full = _refit_values(model, X.iloc[:40].to_numpy(), labels[:40], X.iloc[200:205].to_numpy(),
                                    _positive_probability)
    assert np.abs(reference).max() > 1e-4
    np.testing.assert_allclose(e.values, reference, rtol=0, atol=1e-7)
    np.testing.assert_allclose(e.base_values + e.values.sum(axis=1), full, rtol=0, atol=1e-7)
    predicted = np.where(full >= 0.5, "malignant", "benign")  # full is P(malignant)
    np.testing.assert_array_equal(e.data, labels[:40][None] == predicted[:, None])
    assert set(e.display_data[0]) == {"benign", "malignant"}


@pytest.mark.parametrize("model", [Ridge(alpha=0.3), Ridge(alpha=2.0, fit_intercept=False, solver="svd"),
                                   LinearRegression()], ids=["ridge", "ridge-no-intercept-svd", "ols"])
def test_closed_form_equals_refits(diabetes, model):
    X, y = diabetes
    X_train, y_train, X_eval = X.iloc[:60].to_numpy(), y.iloc[:60].to_numpy(), X.iloc[300:310].to_numpy()
    reference, full = _refit_values(model, X_train, y_train, X_eval, _predict)
    closed = LeaveOneOutExplainer(model, X_train, y=y_train, method="closed_form", max_evals=1, silent=True)(X_eval)
    np.testing.assert_allclose(closed.values, reference, rtol=0, atol=1e-8 * np.abs(reference).max())
    np.testing.assert_allclose(closed.base_values + closed.values.sum(axis=1), full, rtol=0, atol=1e-8)
    values, prediction = linear_loo_values(X_train, y_train, X_eval, alpha=float(getattr(model, "alpha", 0.0)),
                                           fit_intercept=model.fit_intercept)
    np.testing.assert_allclose(values, reference, rtol=0, atol=1e-8 * np.abs(reference).max())
    np.testing.assert_allclose(prediction, full, rtol=1e-10)


def test_auto_uses_refits_where_the_closed_form_does_not_apply(diabetes):
    X, y = diabetes
    X_train, y_train, X_eval = X.iloc[:6].to_numpy(), y.iloc[:6].to_numpy(), X.iloc[50:52].to_numpy()
    # 6 rows, 7 coefficients: X'X is singular, the closed form does not apply (scikit-learn's least squares do)
    model = LinearRegression()
    e = LeaveOneOutExplainer(model, X_train, y=y_train, silent=True)(X_eval)
    reference, _ = _refit_values(model, X_train, y_train, X_eval, _predict)
    np.testing.assert_allclose(e.values, reference, rtol=1e-6, atol=1e-6)
    with pytest.raises(InvalidParameterError, match="needs 7 refits .*closed form does not apply"):  # auto refits
        LeaveOneOutExplainer(model, X_train, y=y_train, max_evals=1, silent=True)(X_eval)
    with pytest.raises(DataValidationError, match="method='refit'"):  # closed_form refuses
        LeaveOneOutExplainer(model, X_train, y=y_train, method="closed_form", silent=True)(X_eval)
    with pytest.raises(DataValidationError, match="leverage 1"):
        linear_loo_values(X_train, y_train, X_eval)


@pytest.mark.slow  # starting joblib's worker processes takes seconds
def test_parallel_refits_equal_serial(diabetes):
    X, y = diabetes
    model = DecisionTreeRegressor(max_depth=3, random_state=0)
    serial = LeaveOneOutExplainer(model, X.iloc[:30], y=y.iloc[:30], silent=True)(X.iloc[40:43])
    parallel = LeaveOneOutExplainer(model, X.iloc[:30], y=y.iloc[:30], n_jobs=2, silent=True)(X.iloc[40:43])
    np.testing.assert_array_equal(parallel.values, serial.values)


def test_model_and_data_are_not_modified(diabetes):
    X, y = diabetes
    model = Ridge(alpha=1.0, solver="lsqr").fit(X.iloc[200:260], y.iloc[200:260])  # fitted on other rows
    coef, intercept, params = model.coef_.copy(), model.intercept_, model.get_params()
    X_train, y_train, X_eval = X.iloc[:30].copy(), y.iloc[:30].copy(), X.iloc[40:44].copy()
    before = X_train.copy(), y_train.copy(), X_eval.copy()
    LeaveOneOutExplainer(model, X_train, y=y_train, silent=True)(X_eval)
    np.testing.assert_array_equal(model.coef_, coef)
    assert model.intercept_ == intercept and model.get_params() == params
    pd.testing.assert_frame_equal(X_train, before[0])
    pd.testing.assert_series_equal(y_train, before[1])
    pd.testing.assert_frame_equal(X_eval, before[2])


class _CountingRegressor(RegressorMixin, BaseEstimator):
    """Predicts the training mean; counts its fits in a class attribute (clones share it)."""

    fits = 0

    def fit(self, X, y):
        type(self).fits += 1
        self.mean_ = float(np.mean(y))
        return self

    def predict(self, X):
        return np.full(len(X), self.mean_)


def test_budget_and_memory_refused_before_any_refit(diabetes):
    X, y = diabetes
    _CountingRegressor.fits = 0
    explainer = LeaveOneOutExplainer(_CountingRegressor(), X.iloc[:20], y=y.iloc[:20], max_evals=20, silent=True)
    with pytest.raises(InvalidParameterError, match="needs 21 refits per call"):
        explainer(X.iloc[30:33])
    with pytest.raises(MemoryBudgetError, match="Explain fewer rows"):
        LeaveOneOutExplainer(_CountingRegressor(), X.iloc[:20], y=y.iloc[:20], max_memory=100.0)(X.iloc[30:33])
    assert _CountingRegressor.fits == 0
    e = LeaveOneOutExplainer(_CountingRegressor(), X.iloc[:20], y=y.iloc[:20], max_evals=21, silent=True)(X.iloc[:2])
    assert _CountingRegressor.fits == 21
    # the mean without row i moves by (mean - y_i) / (n - 1): an exact check of the refit loop
    expected = (y.iloc[:20].to_numpy() - y.iloc[:20].mean()) / 19
    np.testing.assert_allclose(e.values, np.broadcast_to(expected, (2, 20)), rtol=0, atol=1e-10)


class _SlowRegressor(RegressorMixin, BaseEstimator):
    """The mean of the targets, fitted in ``seconds``: a model whose refits are slow, without a long sleep."""

    fits = 0

    def __init__(self, seconds=0.02):
        self.seconds = seconds

    def fit(self, X, y):
        type(self).fits += 1
        time.sleep(self.seconds)
        self.mean_ = float(np.mean(y))
        self.n_features_in_ = np.shape(X)[1]
        return self

    def predict(self, X):
        return np.full(len(X), self.mean_)


def test_max_time_refuses_before_the_refits_what_cannot_fit(diabetes):
    X, y = diabetes
    _SlowRegressor.fits = 0
    explainer = LeaveOneOutExplainer(_SlowRegressor(), X.iloc[:60], y=y.iloc[:60], max_time=0.3, n_jobs=1,
                                     silent=True)
    start = time.perf_counter()
    with pytest.raises(BudgetError, match=r"needs 60 refits .* about [\d.]+ s on 1 worker.*max_time=0.3"):
        explainer(X.iloc[70:72])
    assert time.perf_counter() - start < 0.3 and _SlowRegressor.fits == 1  # the full fit only
    e = LeaveOneOutExplainer(_SlowRegressor(seconds=0.0), X.iloc[:20], y=y.iloc[:20], max_time=30.0,
                             silent=True)(X.iloc[:2])
    expected = (y.iloc[:20].to_numpy() - y.iloc[:20].mean()) / 19
    np.testing.assert_allclose(e.values, np.broadcast_to(expected, (2, 20)), rtol=0, atol=1e-10)


@pytest.mark.parametrize("model, labels, error, match", [
    (StandardScaler(), None, UnsupportedModelError, "StandardScaler is a transformer"),
    (SVC(), None, UnsupportedModelError, "SVC is neither"),
    (Ridge(alpha=1.0, solver="sag"), None, UnsupportedModelError, "method='closed_form' needs Ridge"),
    (LogisticRegression(), np.arange(30) % 3, DataValidationError, "two classes"),
    (LogisticRegression(), np.r_[np.zeros(29), 1], DataValidationError, "each on at least two training rows"),
])
def test_unsupported_models_and_labels_refused(diabetes, model, labels, error, match):
    X, y = diabetes
    method = "closed_form" if isinstance(model, Ridge) else "auto"
    with pytest.raises(error, match=match):
        LeaveOneOutExplainer(model, X.iloc[:30], y=y.iloc[:30] if labels is None else labels, method=method)


def test_bad_input_refused(diabetes):
    X, y = diabetes
    with pytest.raises(DataValidationError, match="needs y"):
        LeaveOneOutExplainer(Ridge(), X.iloc[:30])
    with pytest.raises(DataValidationError, match="NaN"):
        LeaveOneOutExplainer(Ridge(), X.iloc[:30], y=np.r_[np.nan, y.iloc[1:30]])
    with pytest.raises(DataValidationError, match="must have 30 rows"):
        LeaveOneOutExplainer(Ridge(), X.iloc[:30], y=y.iloc[:29])
    with pytest.raises(DataValidationError, match="1-D"):
        LeaveOneOutExplainer(Ridge(), X.iloc[:30], y=np.c_[y.iloc[:30], y.iloc[:30]])
    with pytest.raises(InvalidParameterError, match="method must be one of"):
        LeaveOneOutExplainer(Ridge(), X.iloc[:30], y=y.iloc[:30], method="hat")
    with pytest.raises(InvalidParameterError, match="max_evals must be"):
        LeaveOneOutExplainer(Ridge(), X.iloc[:30], y=y.iloc[:30], max_evals=0)
    with pytest.raises(TypeError):
        LeaveOneOutExplainer(Ridge(), X.iloc[:30], y=y.iloc[:30], random_state=0)  # nothing is random here
    explainer = LeaveOneOutExplainer(Ridge(), X.iloc[:30], y=y.iloc[:30], silent=True)
    with pytest.raises(InvalidParameterError, match="takes no y"):
        explainer(X.iloc[:2], y.iloc[:2])
    with pytest.raises(DataValidationError, match="has 5 columns"):
        explainer(X.iloc[:2, :5].to_numpy())
    with pytest.raises(DataValidationError, match="missing"):
        explainer(X.iloc[:2].rename(columns={"age": "Age"}))


def test_estimator_failure_is_reported_as_validation_error(diabetes):
    X, y = diabetes
    huge = X.iloc[:20].copy()
    huge.iloc[0, 0] = 1e300  # float64 accepts it; the tree converts to float32 and refuses
    with pytest.raises(DataValidationError, match="refitting DecisionTreeRegressor on the training rows failed"), \
            warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # numpy's "overflow encountered in cast", on the way
        LeaveOneOutExplainer(DecisionTreeRegressor(), huge, y=y.iloc[:20], silent=True)(X.iloc[30:31])


def test_progress_bar_follows_silent(diabetes, capsys):
    X, y = diabetes
    model = DecisionTreeRegressor(max_depth=2, random_state=0)
    LeaveOneOutExplainer(model, X.iloc[:15], y=y.iloc[:15], silent=True)(X.iloc[20:21])
    assert "leave-one-out refits" not in capsys.readouterr().err
    LeaveOneOutExplainer(model, X.iloc[:15], y=y.iloc[:15])(X.iloc[20:21])
    assert "leave-one-out refits" in capsys.readouterr().err


def test_expected_value_is_the_per_row_remainder(diabetes):
    X, y = diabetes
    explainer = LeaveOneOutExplainer(Ridge(alpha=0.5), X.iloc[:40], y=y.iloc[:40], silent=True)
    e = explainer(X.iloc[50:53])
    assert LeaveOneOutExplainer.efficient is False and si.InstanceExplainer.efficient is True
    np.testing.assert_array_equal(explainer.expected_value, e.base_values)


def test_entry_point_discovery_and_no_auto_dispatch(diabetes):
    X, y = diabetes
    (ep,) = [ep for ep in entry_points(group="shap_instances.explainers") if ep.name == "loo"]
    assert ep.value == "shap_instances_loo.explainer:LeaveOneOutExplainer"
    assert si.list_explainers()["loo"] is LeaveOneOutExplainer
    assert type(si.Explainer(Ridge(), X.iloc[:30], y=y.iloc[:30], algorithm="loo")) is LeaveOneOutExplainer
    tree = DecisionTreeRegressor(max_depth=2)  # any regressor: "auto" gives it to the residual explainer, not loo
    assert type(si.Explainer(tree, X.iloc[:30], y=y.iloc[:30])).__name__ == "InstanceKernelExplainer"


@pytest.mark.parametrize("module", ["shap_instances_loo.explainer", "shap_instances_loo.linear"])
def test_docstring_examples_run(module):
    result = doctest.testmod(importlib.import_module(module), optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0


def test_waterfall_ends_at_the_prediction(diabetes):
    import matplotlib.pyplot as plt
    import shap

    X, y = diabetes
    e = LeaveOneOutExplainer(Ridge(alpha=0.1), X.iloc[:100], y=y.iloc[:100], silent=True)(X.iloc[400:402])
    prediction = Ridge(alpha=0.1).fit(X.iloc[:100], y.iloc[:100]).predict(X.iloc[400:402])
    shap.plots.waterfall(e[0], show=False)
    ticks = {label.get_text().strip(): label.get_position()[0] for axis in plt.gcf().axes
             for label in axis.get_xticklabels()}
    plt.close("all")
    assert ticks["$f(x)$"] == pytest.approx(prediction[0], abs=1e-6)             # the end: the true prediction
    assert ticks["$E[f(X)]$"] == pytest.approx(e.base_values[0], abs=1e-6)       # the start: the remainder
    assert abs(e.base_values[0] - prediction[0]) > 1.0  # the values do not add up: start and end differ


def test_a_pipeline_on_raw_string_columns_is_refitted_on_its_raw_rows():
    """Issue 39: a ColumnTransformer on string columns crashed with "could not convert string to float"; the
    raw DataFrame goes to the pipeline's clones, as docs/models.md says for the other explainers."""
    import pandas as pd
    from sklearn.base import clone
    from sklearn.compose import ColumnTransformer
    from sklearn.linear_model import Ridge
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.normal(size=40), "c": rng.choice(["x", "y", "z"], 40)})
    y = 2 * X["a"] + (X["c"] == "x")
    pipe = make_pipeline(ColumnTransformer([("n", StandardScaler(), ["a"]), ("c", OneHotEncoder(), ["c"])]), Ridge())
    explanation = LeaveOneOutExplainer(pipe, X, y=y, silent=True)(X.iloc[:3])
    full = clone(pipe).fit(X, y).predict(X.iloc[:3])
    for i in (0, 7, 39):  # the definition, against independent refits without row i
        without = clone(pipe).fit(X.drop(index=i), y.drop(index=i)).predict(X.iloc[:3])
        np.testing.assert_allclose(explanation.values[:, i], full - without, atol=1e-12)
    np.testing.assert_allclose(explanation.base_values + explanation.values.sum(axis=1), full, atol=1e-9)
