"""Regression tests of the defects the fuzz suite (tests/test_fuzz.py) found, one per defect.

Each names the input, what it did before, and what it does now. The KNN plugin's own defects are tested with
the plugin (``plugins/shap-instances-knn/tests/test_knn_shapley.py``).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import load_iris
from sklearn.ensemble import RandomForestRegressor
from sklearn.linear_model import LinearRegression, Ridge
from sklearn.naive_bayes import GaussianNB

from shap_instances import GapExplainer, IsotonicShapleyExplainer, NaiveBayesExplainer, RepresenterExplainer
from shap_instances._explanation import build_explanation, check_efficiency
from shap_instances.datasets import load_diabetes
from shap_instances.exceptions import DataValidationError, EfficiencyError, ReconstructionWarning

INT64_MAX = np.iinfo(np.int64).max


@pytest.fixture(scope="module")
def iris():
    X, y = load_iris(return_X_y=True, as_frame=True)
    return X, y


@pytest.fixture(scope="module")
def diabetes():
    X, y = load_diabetes()
    return X, y.to_numpy()


# ---------------------------------------------------------------------------------------------- efficiency
def test_cancellation_is_refused_as_such_and_a_real_gap_is_still_a_bug():
    """Values far larger than their sum: float64 rounding explains the gap, so it is the input's fault
    (DataValidationError naming the magnitudes), not a bug; a gap rounding cannot explain is still a bug."""
    values = np.array([[1e18, -1e18 + 512.0, 3.0]])
    with pytest.raises(DataValidationError, match="cancel"):
        check_efficiency(values, 0.0, [3.0])
    with pytest.raises(EfficiencyError, match="bug"):
        check_efficiency(np.array([[1.0, 2.0]]), 0.0, [3.5])
    with pytest.raises(EfficiencyError):  # NaN is never rounding
        check_efficiency(np.array([[np.nan, 2.0]]), 0.0, [3.0])
    with pytest.warns(ReconstructionWarning):
        build_explanation(values, 0.0, feature_names=list("abc"), explained=[3.0], on_violation="warn")
    assert check_efficiency(np.array([[1.0, 2.0]]), 0.5, [3.5]) == 0.0


# ---------------------------------------------------------------------------------------------- naive Bayes
def test_naive_bayes_outlier_in_training_is_refused_not_called_a_bug(iris):
    """A training column holding int64's maximum (GaussianNB refitted on it): the background expectation makes
    the values reach 1e9 while the log-odds are O(1). Before: EfficiencyError "this is a bug" (gap 7.7e-9)."""
    X, y = iris
    X = X.iloc[::5].astype(float).copy()
    column = np.round(X.iloc[:, 0].to_numpy() * 100).astype(np.int64)
    column[0] = INT64_MAX
    X[X.columns[0]] = column
    labels = y.iloc[::5]
    model = GaussianNB().fit(X, labels)
    with pytest.raises(DataValidationError, match="cancel"):
        NaiveBayesExplainer(model, X)(load_iris(as_frame=True).data.iloc[1::25])


def test_naive_bayes_constant_training_column_gives_exact_zero(iris):
    """A column constant (0) in training, explained at another value: every class has the same (tiny) variance
    there, so the feature is a null player. Before: EfficiencyError (gap 1.9e-8, "bug") and a value of order
    1e-7 instead of 0; now exactly 0 and the explanation is returned."""
    X, y = iris
    train = X.copy()
    train[X.columns[0]] = 0.0
    model = GaussianNB().fit(train, y)
    e = NaiveBayesExplainer(model, train.iloc[::5])(X.iloc[1::25])
    assert np.all(e.values[:, 0, :] == 0.0)


def test_gaussian_terms_keep_their_precision_when_the_mean_dwarfs_the_variance(iris):
    """A column constant at its mean (6.02) in training: its smoothed variance is 3e-9 and its class means differ
    by rounding (9e-16), so theta^2 / var is 1e10. Expanded around 0 the quadratic lost 1.4e-6 to cancellation
    (EfficiencyError, "bug"); expanded around a class mean it matches a long-double evaluation to 1e-10."""
    X, y = iris
    background = X.iloc[::5].copy()
    labels = GaussianNB().fit(X, y).predict(background)
    background[X.columns[0]] = background[X.columns[0]].mean()
    model = GaussianNB().fit(background, labels)
    rows = X.iloc[1::25]
    e = NaiveBayesExplainer(model, background)(rows)
    x = np.asarray(rows, dtype=np.longdouble)
    theta, var = model.theta_.astype(np.longdouble), model.var_.astype(np.longdouble)
    jll = (np.log(model.class_prior_.astype(np.longdouble)) - 0.5 * np.log(2 * np.pi * var).sum(axis=1)
           - 0.5 * ((x[:, None, :] - theta[None]) ** 2 / var[None]).sum(axis=2))
    exact = np.asarray(jll - jll.mean(axis=1, keepdims=True), dtype=np.float64)
    np.testing.assert_allclose(e.base_values + e.values.sum(axis=1), exact, rtol=0, atol=1e-10)


def test_naive_bayes_rows_that_overflow_the_model_are_refused(iris):
    """Same model, explained at 1e300 in that column: the explanation's term cancels exactly, but the model's
    own log-likelihoods are -inf there. Before: EfficiencyError (gap NaN, "bug"); now the overflow refusal."""
    X, y = iris
    train = X.copy()
    train[X.columns[0]] = 0.0
    model = GaussianNB().fit(train, y)
    rows = X.iloc[1::25].copy()
    rows[X.columns[0]] = 1e300
    with pytest.raises(DataValidationError, match="overflow"):
        NaiveBayesExplainer(model, train.iloc[::5])(rows)


# ---------------------------------------------------------------------------------------------- representer
def test_representer_refuses_training_data_that_overflows(diabetes):
    """A training row holding 1e300 (not the data the model was fitted on). Before: NaN / inf values returned
    with a ReconstructionWarning blaming the solver; now refused at construction."""
    X, y = diabetes
    model = Ridge(alpha=1.0).fit(X.iloc[:60], y[:60])
    data = X.iloc[:60].copy()
    data.iloc[0, 0] = 1e300
    with pytest.raises(DataValidationError, match="overflow"):
        RepresenterExplainer(model, data, y=y[:60])


def test_representer_refuses_explained_rows_that_overflow(diabetes):
    """Training data with a 1e150 entry and explained rows scaled by 1e150: the kernel overflows. Before:
    inf values returned (with a warning); now refused, naming the rows."""
    X, y = diabetes
    model = Ridge(alpha=1.0).fit(X.iloc[:60], y[:60])
    data = X.iloc[:60].copy()
    data.iloc[0, 0] = 1e150
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ReconstructionWarning)
        explainer = RepresenterExplainer(model, data, y=y[:60])
    with pytest.raises(DataValidationError, match=r"rows \[0, 1"):
        explainer(X.iloc[60:63] * 1e150)


def test_representer_refuses_string_targets_of_a_regressor(diabetes):
    """Before: numpy's "could not convert string to float" from inside the objective; now y is checked."""
    X, y = diabetes
    model = Ridge(alpha=1.0).fit(X.iloc[:60], y[:60])
    with pytest.raises(DataValidationError, match="y must be numeric"):
        RepresenterExplainer(model, X.iloc[:60], y=np.array([f"label{v}" for v in y[:60]], dtype=object))


# ---------------------------------------------------------------------------------------------- GAP
def test_gap_refuses_sparse_input_with_nan(diabetes):
    """Dense NaN is routed by the trees; sparse NaN made scikit-learn's forest raise its own ValueError."""
    X, y = diabetes
    forest = RandomForestRegressor(5, max_depth=3, random_state=0).fit(X.iloc[:60], y[:60])
    explainer = GapExplainer(forest, X.iloc[:60], y=y[:60])
    rows = X.iloc[60:63].to_numpy().copy()
    rows[0, 0] = np.nan
    assert explainer(rows).values.shape == (3, 60)
    with pytest.raises(DataValidationError, match="sparse matrix with NaN"):
        explainer(sp.csr_matrix(rows))
    data = X.iloc[:60].to_numpy().copy()
    data[0, 0] = np.nan
    with pytest.raises(DataValidationError, match="sparse matrix with NaN"):
        GapExplainer(forest, sp.csr_matrix(data), y=y[:60])


# ---------------------------------------------------------------------------------------------- SISR
def test_isotonic_refuses_non_finite_payoffs(diabetes):
    """Explained rows at 1e307 overflow a linear model. Before: ValueError "coalition_values contains NaN or
    infinite payoffs" (a name the caller never used); now the rows are named."""
    X, y = diabetes
    X = X.iloc[:, :4]
    model = LinearRegression().fit(X, y)
    explainer = IsotonicShapleyExplainer(model, X.iloc[:12], sparsity=2, silent=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        with pytest.raises(DataValidationError, match=r"explained rows \['40', '41'"):
            explainer(X.iloc[40:43] * 1e307)


# ---------------------------------------------------------------------------------------------- ridge fast path
def test_residual_ridge_fast_path_keeps_huge_explained_rows(diabetes):
    """InstanceKernelExplainer(Ridge(alpha=0.5), X[:10, :4], y) explaining rows whose first column is 1e300: the
    fast path returns the residuals of x = 0 (relative error 1), refits without it agree with scikit-learn."""
    from shap_instances import InstanceKernelExplainer

    X, y = diabetes
    X = X.iloc[:, :4]
    rows = X.iloc[20:24].copy()
    rows[X.columns[0]] = 1e300
    e = InstanceKernelExplainer(Ridge(alpha=0.5), X.iloc[:10], y=y[:10], silent=True)(rows, y[20:24])
    residual = Ridge(alpha=0.5).fit(X.iloc[:10], y[:10]).predict(rows) - y[20:24]
    np.testing.assert_allclose(e.base_values + e.values.sum(axis=1), residual, rtol=1e-8)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # scikit-learn's own, on the degenerate fit
def test_residual_refits_that_predict_nan_are_failed_fits():
    """GaussianNB on three rows of one constant column predicts NaN: the residuals are undefined, which is now a
    clear refusal (the fit on all rows) instead of an EfficiencyError calling it a bug (found by the CLI fuzz)."""
    from sklearn.naive_bayes import GaussianNB

    from shap_instances import InstanceKernelExplainer
    from shap_instances.exceptions import UnsupportedModelError

    X, y = np.full((3, 1), 0.5), np.array(["a", "b", "a"])
    with pytest.raises((UnsupportedModelError, DataValidationError), match="NaN"):
        InstanceKernelExplainer(GaussianNB(), X, y=y, silent=True)(X[:1], y[:1])


# ---------------------------------------------------------------------------------------------- issue 14's list
# Each bullet of issue 14's "Why" list that no other test reproduces as the issue states it: the input, and what it
# must give now (a documented refusal naming the problem, or a correct result checked against an independent
# computation). The checkpoint and command-line bullets are tests of tests/test_checkpoint.py and tests/test_cli.py,
# the memory bullets of tests/test_memory.py, the budget and worker bullets of tests/test_scale.py.
def _why_ridge_1e8(X, y):
    """Before: LinAlgError "Singular matrix" on the exact ridge path, where scikit-learn's refits succeed."""
    from shap_instances import InstanceKernelExplainer

    X = X.iloc[:40] * 1e8
    e = InstanceKernelExplainer(Ridge(alpha=1.0), X, y=y[:40], random_state=0, silent=True)()
    residual = Ridge(alpha=1.0).fit(X, y[:40]).predict(X) - y[:40]
    np.testing.assert_allclose(e.base_values + e.values.sum(axis=1), residual, rtol=1e-7, atol=1e-6)


def _why_residual_1e300(X, y):
    """Before: EfficiencyError "... by nan ... bug"."""
    from shap_instances import InstanceKernelExplainer
    from shap_instances.exceptions import UnsupportedModelError

    X = X.iloc[:30] * 1e300
    try:
        e = InstanceKernelExplainer(Ridge(alpha=1.0), X, y=y[:30], random_state=0, silent=True)()
    except (DataValidationError, UnsupportedModelError) as error:  # scikit-learn's Ridge overflows: said so
        assert "bug" not in str(error) and "could not be fitted" in str(error)
        return
    assert np.isfinite(e.values).all() and np.isfinite(e.base_values).all()


def _why_knn_target_1e300(X, y):
    """Before: EfficiencyError "... by nan ... bug" (KNN refits of targets at 1e300; the closed form)."""
    from sklearn.neighbors import KNeighborsRegressor

    from shap_instances import InstanceKernelExplainer

    targets = y[:30] * 1e300
    try:
        e = InstanceKernelExplainer(KNeighborsRegressor(3), X.iloc[:30], y=targets, random_state=0, silent=True)()
    except DataValidationError as error:
        assert "bug" not in str(error)
        return
    residual = KNeighborsRegressor(3).fit(X.iloc[:30], targets).predict(X.iloc[:30]) - targets
    assert np.isfinite(e.values).all()
    np.testing.assert_allclose(e.base_values + e.values.sum(axis=1), residual, rtol=1e-9)


def _why_naive_bayes_1e200(X, y):
    """Before: NaiveBayesExplainer(g, X)(X[:1] * 1e200) returned [inf, -inf, inf] without an error."""
    model = GaussianNB().fit(X, y)
    with pytest.raises(DataValidationError, match="overflow"):
        NaiveBayesExplainer(model, X)(X.iloc[:1] * 1e200)


def _why_naive_bayes_1e_300(X, y):
    """Before: NaN values for rows scaled by 1e-300 (explained rows, and a model fitted on such data)."""
    model = GaussianNB().fit(X, y)
    e = NaiveBayesExplainer(model, X)(X.iloc[:3] * 1e-300)
    log_proba = model.predict_log_proba(X.iloc[:3] * 1e-300)  # binary: the log-odds are explained
    np.testing.assert_allclose(e.base_values + e.values.sum(axis=1), log_proba[:, 1] - log_proba[:, 0], atol=1e-9)
    tiny = X * 1e-300
    small_model = GaussianNB().fit(tiny, y)
    try:
        e = NaiveBayesExplainer(small_model, tiny)(tiny.iloc[:3])
    except DataValidationError:
        return
    log_proba = small_model.predict_log_proba(tiny.iloc[:3])
    assert np.isfinite(e.values).all()
    np.testing.assert_allclose(e.base_values + e.values.sum(axis=1), log_proba[:, 1] - log_proba[:, 0], atol=1e-9)


def _why_residual_int64_max(X, y):
    """Before: int64's maximum in the data crashed the residual explainer."""
    from shap_instances import InstanceKernelExplainer

    data = X.iloc[:20].copy()
    data[data.columns[0]] = np.arange(20, dtype=np.int64)
    data.iloc[3, 0] = INT64_MAX
    try:
        e = InstanceKernelExplainer(Ridge(alpha=1.0), data, y=y[:20], random_state=0, silent=True)()
    except DataValidationError:
        return
    residual = Ridge(alpha=1.0).fit(data.astype(float), y[:20]).predict(data.astype(float)) - y[:20]
    np.testing.assert_allclose(e.base_values + e.values.sum(axis=1), residual, rtol=1e-6)


def _why_isotonic_max_evals(X, y):
    """Before: IsotonicShapleyExplainer(max_evals=3) (or 0, -10) failed with numpy's "zero-size array"."""
    from shap_instances.exceptions import InvalidParameterError

    model = LinearRegression().fit(X, y)
    for budget in (3, 0, -10):
        with pytest.raises(InvalidParameterError, match="max_evals"):
            IsotonicShapleyExplainer(model.predict, X.iloc[:20], max_exact_features=5, max_evals=budget,
                                     silent=True)(X.iloc[:1])


def _why_isotonic_sparse_background(X, y):
    """Before: "'csr_matrix' object is not callable"."""
    model = LinearRegression().fit(X, y)
    with pytest.raises(DataValidationError, match="dense"):
        IsotonicShapleyExplainer(model.predict, sp.csr_matrix(X.iloc[:20].to_numpy()), silent=True)(X.iloc[:1])


def _why_top_k_chunk_size_0(X, y):
    """Before: top_k(chunk_size=0) raised a range() error."""
    explainer = RepresenterExplainer(Ridge(alpha=1.0).fit(X, y), X, y=y)
    with pytest.raises(ValueError, match="chunk_size must be a positive integer"):
        explainer.top_k(X.iloc[:3], k=2, chunk_size=0)


def _why_forest_nan_message(X, y):
    """Before: a NaN the forest was not fitted with was blamed on the scikit-learn version (>= 1.9 with 1.9.1)."""
    forest = RandomForestRegressor(10, random_state=0).fit(X.iloc[:100], y[:100])
    rows = X.iloc[100:103].copy()
    rows.iloc[0, 0] = np.nan
    try:
        e = GapExplainer(forest, X.iloc[:100], y=y[:100])(rows)
    except DataValidationError as error:
        assert "version" not in str(error) and "1.9" not in str(error)
        return
    np.testing.assert_allclose(e.base_values + e.values.sum(axis=1), forest.predict(rows), rtol=1e-9)


WHY = {name.removeprefix("_why_"): function for name, function in list(globals().items())
       if name.startswith("_why_")}


@pytest.mark.parametrize("case", sorted(WHY))
@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # scikit-learn's own overflow warnings on these inputs
def test_issue_14_why_list(case, diabetes):
    X, y = diabetes
    if case.startswith("naive_bayes"):  # a binary target for the classifier
        y = (y > np.median(y)).astype(int)
    WHY[case](X, y)
