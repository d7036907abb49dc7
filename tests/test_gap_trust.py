"""Trust scores of GapExplainer: helpers against naive twins, and trust rising with out-of-sample error."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.stats import spearmanr
from sklearn.datasets import load_breast_cancer, load_diabetes, load_iris
from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor
from sklearn.model_selection import KFold, StratifiedKFold

from shap_instances import GapExplainer
from shap_instances.exceptions import DataValidationError
from shap_instances.metrics.trust import (
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


def test_class_outlier_scores_against_naive():
    rng = np.random.default_rng(0)
    ref, _ = _random_rows(1, m=40, n=40)
    test, _ = _random_rows(2, m=10, n=40)
    classes = rng.integers(0, 3, 40)
    got = class_outlier_scores(sp.csr_matrix(test), sp.csr_matrix(ref), classes, 3)
    for c in range(3):
        n_c = (classes == c).sum()
        with np.errstate(divide="ignore"):
            raw_ref = np.log(n_c / (ref[:, classes == c] ** 2).sum(1))[classes == c]
            raw = np.log(n_c / (test[:, classes == c] ** 2).sum(1))
        raw_ref = raw_ref[np.isfinite(raw_ref)]
        med = np.median(raw_ref)
        mad = np.median(np.abs(raw_ref - med))
        np.testing.assert_allclose(got[:, c], (raw - med) / mad, rtol=1e-12)
    assert np.all(np.isinf(got[0]))  # the empty row shares no leaf with any class


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
    ex = GapExplainer(model, X[:350], y[:350])
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
        score[test] = GapExplainer(model, X[train], y[train]).trust_scores(X[test])["weighted_oob_error"]
        error[test] = np.abs(y[test] - model.predict(X[test]))
    rho, p = spearmanr(score, error)
    assert rho > 0.1 and p < 1e-3
    order = np.argsort(score)
    half = len(y) // 2
    assert error[order[half:]].mean() > 1.15 * error[order[:half]].mean()


def test_trust_rises_with_out_of_sample_error_breast_cancer():
    X, y = load_breast_cancer(return_X_y=True)
    prob, margin, correct = np.zeros(len(y)), np.zeros(len(y)), np.zeros(len(y))
    for train, test in StratifiedKFold(5, shuffle=True, random_state=0).split(X, y):
        model = RandomForestClassifier(100, random_state=0).fit(X[train], y[train])
        s = GapExplainer(model, X[train], y[train]).trust_scores(X[test])
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
    s = GapExplainer(model, X[::2], y[::2]).trust_scores(X[1::2])
    assert list(s.columns) == ["predicted_class", "class_probability", "weighted_oob_accuracy", "outlier_0",
                               "outlier_1", "outlier_2", "outlier_margin", "n_neighbours_90"]
    np.testing.assert_array_equal(s["predicted_class"], model.predict(X[1::2]))
    np.testing.assert_allclose(s["class_probability"], model.predict_proba(X[1::2]).max(1))
    assert s["weighted_oob_accuracy"].between(0, 1).all()
    z = s[["outlier_0", "outlier_1", "outlier_2"]].to_numpy()
    assert not np.isnan(z).any() and np.isfinite(z[np.arange(len(z)), s["predicted_class"]]).all()


def test_multi_output_regression_trust_columns():
    X, y = load_diabetes(return_X_y=True)
    Y = np.c_[y, np.log(y)]
    model = RandomForestRegressor(20, random_state=0).fit(X[:300], Y[:300])
    s = GapExplainer(model, X[:300], Y[:300]).trust_scores(X[300:310], quantiles=(0.5,))
    assert list(s.columns) == ["prediction_y0", "prediction_y1", "weighted_oob_error", "q50_y0", "q50_y1",
                               "n_neighbours_90"]
    np.testing.assert_allclose(s[["prediction_y0", "prediction_y1"]], model.predict(X[300:310]))
