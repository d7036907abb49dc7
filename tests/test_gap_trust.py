"""Trust scores of GapExplainer: helpers against naive twins, and trust rising with out-of-sample error."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from scipy.stats import spearmanr
from sklearn.datasets import load_breast_cancer, load_diabetes, load_iris
from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor
from sklearn.model_selection import KFold, StratifiedKFold

from shap_instances import GapExplainer
from shap_instances.exceptions import DataValidationError, UnsupportedModelError
from shap_instances.forest import gap_trust_scores
from shap_instances.weighted_targets import (
    class_outlier_scores,
    neighbours_for_weight,
    trust_decile_table,
    weighted_quantiles,
)


def _random_rows(seed, m=30, n=40):
    rng = np.random.default_rng(seed)
    dense = rng.uniform(size=(m, n)) * (rng.uniform(size=(m, n)) < 0.3)
    dense[0] = 0.0  # an empty row
    dense[1] = 0.0
    dense[1, 3] = 1.0  # a single neighbour
    sums = dense.sum(1, keepdims=True)
    return np.where(sums > 0, dense / np.where(sums > 0, sums, 1), 0.0), rng.normal(size=n)


@pytest.mark.parametrize("seed", range(4))
def test_weighted_quantiles_against_naive(seed):
    dense, values = _random_rows(seed)
    qs = [0.05, 0.1, 0.5, 0.9, 1.0]
    got = weighted_quantiles(sp.csr_matrix(dense), values, qs)
    for j, row in enumerate(dense):
        if row.sum() == 0:
            assert np.all(np.isnan(got[j]))
            continue
        order = np.argsort(values)
        cum = np.cumsum(row[order])
        for a, q in enumerate(qs):
            # smallest value whose cumulative weight reaches q (ignoring zero-weight values)
            pos = np.flatnonzero((cum >= q - 1e-12) & (row[order] > 0))[0]
            assert got[j, a] == values[order][pos]


@pytest.mark.parametrize("seed", range(4))
def test_neighbours_for_weight_against_naive(seed):
    dense, _ = _random_rows(seed)
    for level in (0.5, 0.9, 1.0):
        got = neighbours_for_weight(sp.csr_matrix(dense), level)
        for j, row in enumerate(dense):
            cum = np.cumsum(np.sort(row)[::-1])
            expected = 0 if row.sum() == 0 else int(np.flatnonzero(cum >= level - 1e-12)[0]) + 1
            assert got[j] == expected


@pytest.mark.parametrize("scale", ["raw", "log"])
def test_class_outlier_scores_against_naive(scale):
    """Median/MAD z-scores of n_J / sum_j Prox^2 (eq. 6-7 of Rosaler et al.), or of its log; the reference
    keeps infinite raw scores (rows with no proximity to their class), as order statistics allow."""
    rng = np.random.default_rng(0)
    ref, _ = _random_rows(1, m=40, n=40)  # reference row 0 is empty: an infinite raw score, kept
    test, _ = _random_rows(2, m=10, n=40)
    classes = rng.integers(0, 3, 40)
    got = class_outlier_scores(sp.csr_matrix(test), sp.csr_matrix(ref), classes, 3, scale=scale)
    for c in range(3):
        n_c = (classes == c).sum()
        with np.errstate(divide="ignore"):
            raw_ref = (n_c / (ref[:, classes == c] ** 2).sum(1))[classes == c]
            raw = n_c / (test[:, classes == c] ** 2).sum(1)
        if scale == "log":
            raw_ref, raw = np.log(raw_ref), np.log(raw)
        med = np.median(raw_ref)
        mad = np.median(np.abs(raw_ref - med))
        np.testing.assert_allclose(got[:, c], (raw - med) / mad, rtol=1e-12)
    assert np.all(np.isinf(got[0]))  # the empty row shares no leaf with any class
    with pytest.raises(DataValidationError, match="scale"):
        class_outlier_scores(sp.csr_matrix(test), sp.csr_matrix(ref), classes, 3, scale="log10")


def test_class_outlier_scores_raw_is_the_paper_definition_and_log_is_monotone():
    """The default is the raw scale; within a class the log-scale score is a monotone transform of it."""
    ref, _ = _random_rows(3, m=40, n=40)
    test, _ = _random_rows(4, m=12, n=40)
    classes = np.random.default_rng(1).integers(0, 2, 40)
    default = class_outlier_scores(sp.csr_matrix(test), sp.csr_matrix(ref), classes, 2)
    raw = class_outlier_scores(sp.csr_matrix(test), sp.csr_matrix(ref), classes, 2, scale="raw")
    log = class_outlier_scores(sp.csr_matrix(test), sp.csr_matrix(ref), classes, 2, scale="log")
    np.testing.assert_array_equal(default, raw)
    for c in range(2):
        finite = np.isfinite(raw[:, c])
        order = np.argsort(raw[finite, c])
        assert np.all(np.diff(log[finite, c][order]) >= -1e-12)


def test_decile_table_and_errors():
    table = trust_decile_table(np.arange(50.0), np.arange(50.0) ** 2, n_bins=5)
    assert list(table.columns) == ["bin", "n", "score_mean", "error_mean", "error_sem"]
    assert table["n"].sum() == 50 and table["error_mean"].is_monotonic_increasing
    with pytest.raises(DataValidationError, match="n_bins"):
        trust_decile_table(np.arange(5.0), np.arange(5.0), n_bins=1)
    with pytest.raises(DataValidationError, match="rows"):
        trust_decile_table(np.arange(5.0), np.arange(4.0))
    with pytest.raises(DataValidationError, match="NaN"):
        trust_decile_table(np.array([1.0, np.nan]), np.arange(2.0))
    # infinite scores and ties are kept, in bins of equal size
    table = trust_decile_table(np.r_[np.zeros(10), np.full(10, np.inf)], np.arange(20.0), n_bins=4)
    assert table["n"].tolist() == [5, 5, 5, 5] and table["bin"].iloc[-1] == "[inf, inf]"
    with pytest.raises(DataValidationError, match="quantiles"):
        weighted_quantiles(sp.eye(3, format="csr"), np.arange(3.0), [0.0])
    with pytest.raises(DataValidationError, match="level"):
        neighbours_for_weight(sp.eye(3, format="csr"), 1.5)


def test_regression_trust_columns_and_consistency():
    X, y = load_diabetes(return_X_y=True)
    model = RandomForestRegressor(30, min_samples_leaf=3, random_state=0).fit(X[:350], y[:350])
    ex = GapExplainer(model, X[:350], y=y[:350])
    s = ex.trust_scores(X[350:])
    assert list(s.columns) == ["prediction", "weighted_oob_error", "q10", "q50", "q90", "n_neighbours_90"]
    assert s.index[0] == "x[0]"
    np.testing.assert_allclose(s["prediction"], model.predict(X[350:]))
    assert np.all((s["q10"] <= s["q50"]) & (s["q50"] <= s["q90"]))
    # independent recomputation of the weighted OOB error from sklearn's own OOB predictions
    oob_model = RandomForestRegressor(30, min_samples_leaf=3, random_state=0, oob_score=True).fit(X[:350], y[:350])
    err = np.abs(y[:350] - oob_model.oob_prediction_)
    P = ex.proximities(X[350:]).toarray()
    np.testing.assert_allclose(s["weighted_oob_error"], P @ err, rtol=1e-10)
    assert np.all((s["n_neighbours_90"] >= 1) & (s["n_neighbours_90"] <= (P > 0).sum(1)))


def test_trust_rises_with_out_of_sample_error_diabetes():
    """Five-fold cross-fitting on diabetes: the proximity-weighted OOB error of the neighbours ranks the
    realised absolute test error (fixed seeds, measured Spearman 0.20, p = 2e-5)."""
    X, y = load_diabetes(return_X_y=True)
    score, error = np.zeros(len(y)), np.zeros(len(y))
    for train, test in KFold(5, shuffle=True, random_state=0).split(X):
        model = RandomForestRegressor(100, min_samples_leaf=5, random_state=0).fit(X[train], y[train])
        score[test] = GapExplainer(model, X[train], y=y[train]).trust_scores(X[test])["weighted_oob_error"]
        error[test] = np.abs(y[test] - model.predict(X[test]))
    rho, p = spearmanr(score, error)
    assert rho > 0.1 and p < 1e-3
    order = np.argsort(score)
    half = len(y) // 2
    assert error[order[half:]].mean() > 1.15 * error[order[:half]].mean()


@pytest.mark.slow
def test_trust_rises_with_out_of_sample_error_breast_cancer():
    X, y = load_breast_cancer(return_X_y=True)
    prob, margin, correct = np.zeros(len(y)), np.zeros(len(y)), np.zeros(len(y))
    for train, test in StratifiedKFold(5, shuffle=True, random_state=0).split(X, y):
        model = RandomForestClassifier(100, random_state=0).fit(X[train], y[train])
        s = GapExplainer(model, X[train], y=y[train]).trust_scores(X[test])
        prob[test], margin[test] = s["class_probability"], s["outlier_margin"]
        correct[test] = model.predict(X[test]) == y[test]
    for score in (prob, margin):
        order = np.argsort(score)
        low, high = order[: len(y) // 5], order[-len(y) // 5:]
        assert correct[low].mean() < correct[high].mean() - 0.05
        assert spearmanr(score, correct)[0] > 0.2


def test_classification_trust_columns():
    X, y = load_iris(return_X_y=True)
    model = RandomForestClassifier(30, random_state=0).fit(X[::2], y[::2])
    s = GapExplainer(model, X[::2], y=y[::2]).trust_scores(X[1::2])
    assert list(s.columns) == ["predicted_class", "class_probability", "weighted_oob_accuracy", "outlier_0",
                               "outlier_1", "outlier_2", "runner_up_class", "outlier_margin", "outlier_ratio",
                               "n_neighbours_90"]
    np.testing.assert_array_equal(s["predicted_class"], model.predict(X[1::2]))
    np.testing.assert_allclose(s["class_probability"], model.predict_proba(X[1::2]).max(1))
    assert s["weighted_oob_accuracy"].between(0, 1).all()
    z = s[["outlier_0", "outlier_1", "outlier_2"]].to_numpy()
    assert not np.isnan(z).any() and np.isfinite(z[np.arange(len(z)), s["predicted_class"]]).all()
    assert not any(q.startswith("q") for q in s.columns)  # no target quantiles for class labels


def test_outlier_columns_follow_the_paper_definition():
    """outlier_<class> is the raw-scale median/MAD z-score recomputed from the proximities (dense, naive);
    margin and ratio combine the runner-up and predicted columns."""
    X, y = load_iris(return_X_y=True)
    model = RandomForestClassifier(40, random_state=1).fit(X[::2], y[::2])
    ex = GapExplainer(model, X[::2], y=y[::2])
    s = ex.trust_scores(X[1::2])
    P, R = ex.proximities(X[1::2]).toarray(), ex.proximities().toarray()
    codes = y[::2]
    for c in range(3):
        n_c = (codes == c).sum()
        with np.errstate(divide="ignore"):
            ref = (n_c / (R[:, codes == c] ** 2).sum(1))[codes == c]
            raw = n_c / (P[:, codes == c] ** 2).sum(1)
        med = np.median(ref)
        np.testing.assert_allclose(s[f"outlier_{c}"], (raw - med) / np.median(np.abs(ref - med)), rtol=1e-10)
    z = s[["outlier_0", "outlier_1", "outlier_2"]].to_numpy()
    rows, pred, other = np.arange(len(s)), s["predicted_class"].to_numpy(), s["runner_up_class"].to_numpy()
    np.testing.assert_allclose(s["outlier_margin"], z[rows, other] - z[rows, pred])
    np.testing.assert_allclose(s["outlier_ratio"], z[rows, other] / z[rows, pred])


def test_runner_up_rules_for_three_classes():
    """'outlier' (default): the other class with the smallest outlier score, so the margin is the smallest
    over all other classes; 'probability': the second-largest class probability."""
    X, y = load_iris(return_X_y=True)
    model = RandomForestClassifier(30, random_state=0).fit(X[::2], y[::2])
    ex = GapExplainer(model, X[::2], y=y[::2])
    by_outlier = ex.trust_scores(X[1::2])
    by_probability = ex.trust_scores(X[1::2], runner_up="probability")
    rows = np.arange(len(by_outlier))
    pred = by_outlier["predicted_class"].to_numpy()
    z = by_outlier[["outlier_0", "outlier_1", "outlier_2"]].to_numpy()
    others = np.where(np.arange(3)[None, :] == pred[:, None], np.inf, z)
    np.testing.assert_allclose(by_outlier["outlier_margin"], others.min(1) - z[rows, pred])
    proba = model.predict_proba(X[1::2])
    np.testing.assert_array_equal(by_probability["runner_up_class"], np.argsort(-proba, 1, kind="stable")[:, 1])
    assert np.all(by_outlier["outlier_margin"] <= by_probability["outlier_margin"] + 1e-12)
    with pytest.raises(DataValidationError, match="runner_up"):
        ex.trust_scores(X[:2], runner_up="median")
    with pytest.raises(DataValidationError, match="outlier_scale"):
        ex.trust_scores(X[:2], outlier_scale="sqrt")


def test_log_outlier_scale_option():
    X, y = load_iris(return_X_y=True)
    model = RandomForestClassifier(30, random_state=0).fit(X[::2], y[::2])
    ex = GapExplainer(model, X[::2], y=y[::2])
    raw, log = ex.trust_scores(X[1::2]), ex.trust_scores(X[1::2], outlier_scale="log")
    assert not np.allclose(raw["outlier_0"], log["outlier_0"])
    np.testing.assert_array_equal(raw["class_probability"], log["class_probability"])
    # within a class, the two scales order the points alike
    finite = np.isfinite(raw["outlier_0"])
    order = np.argsort(raw["outlier_0"][finite].to_numpy())
    assert np.all(np.diff(log["outlier_0"][finite].to_numpy()[order]) >= -1e-12)


def test_multi_output_regression_trust_columns():
    """One weighted OOB error per output, each in that output's units (checked against sklearn's OOB)."""
    X, y = load_diabetes(return_X_y=True)
    Y = np.c_[y, np.log(y)]
    model = RandomForestRegressor(20, random_state=0, oob_score=True).fit(X[:300], Y[:300])
    ex = GapExplainer(model, X[:300], y=Y[:300])
    s = ex.trust_scores(X[300:310], quantiles=(0.5,))
    assert list(s.columns) == ["prediction_y0", "prediction_y1", "weighted_oob_error_y0", "weighted_oob_error_y1",
                               "q50_y0", "q50_y1", "n_neighbours_90"]
    np.testing.assert_allclose(s[["prediction_y0", "prediction_y1"]], model.predict(X[300:310]))
    P = ex.proximities(X[300:310]).toarray()
    valid = ex.oob_counts() > 0
    err = np.where(valid[:, None], np.abs(Y[:300] - model.oob_prediction_), 0.0)
    expected = (P @ err) / (P @ valid)[:, None]
    np.testing.assert_allclose(s[["weighted_oob_error_y0", "weighted_oob_error_y1"]], expected, rtol=1e-10)
    assert s["weighted_oob_error_y0"].mean() > 20 * s["weighted_oob_error_y1"].mean()  # the scales differ


def test_multi_output_classifier_trust_scores_refused():
    X, y = load_iris(return_X_y=True)
    Y = np.c_[y, y > 0]
    model = RandomForestClassifier(10, random_state=0).fit(X, Y)
    ex = GapExplainer(model, X, y=Y)
    with pytest.raises(UnsupportedModelError, match="single-output classifiers"):
        ex.trust_scores(X[:3])


def test_trust_scores_match_dataframe_columns_by_name():
    X, y = load_iris(return_X_y=True, as_frame=True)
    model = RandomForestClassifier(20, random_state=0).fit(X.iloc[::2], y.iloc[::2])
    ex = GapExplainer(model, X.iloc[::2], y=y.iloc[::2])
    expected = ex.trust_scores(X.iloc[1::2])
    pd.testing.assert_frame_equal(ex.trust_scores(X.iloc[1::2, ::-1]), expected)
    pd.testing.assert_frame_equal(gap_trust_scores(ex, X.iloc[1::2, ::-1]).set_axis(expected.index), expected)
