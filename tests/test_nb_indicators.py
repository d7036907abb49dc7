"""nb_indicators against direct computations: scikit-learn's own posteriors of a copy of the model without
variable j, and the modality probabilities read from the fitted parameters."""

import copy

import numpy as np
import pytest
from scipy.special import logsumexp
from scipy.stats import norm
from sklearn.datasets import load_breast_cancer, load_wine
from sklearn.naive_bayes import CategoricalNB, GaussianNB

from shap_instances import NaiveBayesExplainer
from shap_instances.exceptions import InvalidParameterError
from shap_instances.metrics import NB_INDICATORS, nb_indicators
from shap_instances.naive_bayes import WeightedNaiveBayes


def _without(nb, j):
    """A copy of the fitted ``nb`` without feature j: scikit-learn then marginalises it out exactly."""
    reduced = copy.deepcopy(nb)
    keep = np.delete(np.arange(nb.n_features_in_), j)
    if isinstance(nb, GaussianNB):
        reduced.theta_, reduced.var_ = nb.theta_[:, keep], nb.var_[:, keep]
    else:
        reduced.feature_log_prob_ = [nb.feature_log_prob_[m] for m in keep]
        reduced.category_count_ = [nb.category_count_[m] for m in keep]
        reduced.n_categories_ = nb.n_categories_[keep]
    reduced.n_features_in_ = len(keep)
    return reduced, keep


def _modality(nb, X):
    """P(V_m = x_m | c), (n, p, k), from the fitted parameters."""
    if isinstance(nb, GaussianNB):
        return norm.pdf(X[:, :, None], nb.theta_.T[None], np.sqrt(nb.var_.T)[None])
    return np.stack([np.exp(nb.feature_log_prob_[m][:, X[:, m].astype(int)]).T for m in range(X.shape[1])], axis=1)


def _log_posterior(model, X, z):
    """(log P(z | x), log(1 - P(z | x))) from scikit-learn's predict_log_proba."""
    log_proba = model.predict_log_proba(X)
    rows = np.arange(len(X))
    others = log_proba.copy()
    others[rows, z] = -np.inf
    return log_proba[rows, z], logsumexp(others, axis=1)


def _direct(nb, X, z):
    """Every indicator computed from its definition with scikit-learn's posteriors."""
    rows = np.arange(len(X))
    lp, lq = _log_posterior(nb, X, z)
    pairs = [_log_posterior(_without(nb, j)[0], X[:, _without(nb, j)[1]], z) for j in range(X.shape[1])]
    lpw, lqw = np.column_stack([a for a, _ in pairs]), np.column_stack([b for _, b in pairs])
    p, without = np.exp(lp), np.exp(lpw)
    mop = _modality(nb, X)
    others = mop.copy()
    others[rows, :, z] = -np.inf
    return {
        "IDI": lp[:, None] - lpw,
        "WOE": (lp - lq)[:, None] - (lpw - lqw),
        "DOP": p[:, None] - without,
        "KLD": p[:, None] * (lp[:, None] - lpw),
        "MOP": mop[rows, :, z],
        "LMOP": np.log(mop[rows, :, z]),
        "VPD": mop[rows, :, z] - others.max(axis=2),
    }


def _categorical_case():
    rng = np.random.default_rng(0)
    X = rng.integers(0, 4, size=(300, 5)).astype(float)
    y = (X[:, 0] + X[:, 1] + rng.integers(0, 3, 300) > 4).astype(int)
    return CategoricalNB().fit(X, y), X


@pytest.mark.parametrize("case", ["gaussian", "categorical", "gaussian-3"])
def test_indicators_match_their_definitions(case):
    if case == "gaussian":
        X, y = load_breast_cancer(return_X_y=True)
        X = X[:, :6]
        nb = GaussianNB().fit(X, y)
    elif case == "gaussian-3":
        X, y = load_wine(return_X_y=True)
        X = X[:, :5]
        nb = GaussianNB().fit(X, y)
    else:
        nb, X = _categorical_case()
    rows = X[:25]
    predicted = nb.predict(rows)
    z = np.searchsorted(nb.classes_, predicted)
    result = nb_indicators(nb, rows)
    assert tuple(result) == NB_INDICATORS
    expected = _direct(nb, rows, z)
    for name in NB_INDICATORS:
        e = result[name]
        assert e.values.shape == rows.shape and e.base_values.shape == (len(rows),)
        np.testing.assert_allclose(e.values, expected[name], rtol=1e-7, atol=1e-9, err_msg=name)
        np.testing.assert_array_equal(e.target_class, predicted)
    np.testing.assert_allclose(result["DOP"].base_values, nb.predict_proba(rows).max(1), atol=1e-12)


def test_target_class_and_weight_of_evidence_equals_the_woe_explainer():
    nb, X = _categorical_case()
    result = nb_indicators(nb, X[:30], target=1, indicators=["woe", "IDI"])
    assert set(result) == {"WOE", "IDI"}
    np.testing.assert_array_equal(result["WOE"].target_class, 1)
    expected = _direct(nb, X[:30], np.ones(30, dtype=int))
    np.testing.assert_allclose(result["IDI"].values, expected["IDI"], atol=1e-9)
    # for two classes, removing V_j changes the log-odds of class 1 by its weight of evidence
    woe = NaiveBayesExplainer(nb, woe=True, expectation="training")(X[:30])
    np.testing.assert_allclose(result["WOE"].values, woe.values, atol=1e-9)


def test_weighted_model_unselected_variables_carry_nothing():
    X, y = load_breast_cancer(return_X_y=True)
    model = WeightedNaiveBayes().fit(X, y)
    dropped = model.weights_ == 0
    assert dropped.any()
    result = nb_indicators(model, X[:20])
    for name in ("IDI", "WOE", "DOP", "KLD", "LMOP", "VPD"):
        np.testing.assert_allclose(result[name].values[:, dropped], 0.0, atol=1e-12, err_msg=name)
    np.testing.assert_allclose(result["MOP"].values[:, dropped], 1.0)
    # the reference of IDI is the weighted model's own log-posterior of the predicted class
    np.testing.assert_allclose(result["IDI"].base_values, model.predict_log_proba(X[:20]).max(1), atol=1e-10)


def test_errors():
    nb, X = _categorical_case()
    with pytest.raises(InvalidParameterError, match="indicators"):
        nb_indicators(nb, X[:3], indicators=["SHAP"])
    with pytest.raises(InvalidParameterError, match="target"):
        nb_indicators(nb, X[:3], target="yes")
