"""WeightedNaiveBayes against per-feature likelihoods built from scikit-learn's own single-feature models,
the optimality conditions of its objective, and NaiveBayesExplainer against an enumeration of its log-odds game."""

import copy
import itertools
import math
import warnings

import numpy as np
import pytest
from scipy.special import logsumexp
from sklearn.base import clone
from sklearn.compose import ColumnTransformer
from sklearn.datasets import load_breast_cancer, load_iris
from sklearn.linear_model import LogisticRegression
from sklearn.naive_bayes import CategoricalNB, GaussianNB
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import KBinsDiscretizer, OrdinalEncoder

import shap_instances as si
from shap_instances import NaiveBayesExplainer
from shap_instances.exceptions import (
    DataValidationError,
    InvalidParameterError,
    NotFittedError,
    UnsupportedModelError,
)
from shap_instances.naive_bayes import WeightedNaiveBayes


def _single_feature_terms(nb, X):
    """log P(x_m | c) for every row, feature and class, from scikit-learn's own predict_joint_log_proba of a
    one-feature copy of ``nb`` (minus its class prior): independent of shap_instances' term adapters."""
    n, p = X.shape
    out = np.empty((n, p, len(nb.classes_)))
    for m in range(p):
        one = copy.deepcopy(nb)
        if isinstance(nb, GaussianNB):
            one.theta_, one.var_ = nb.theta_[:, [m]], nb.var_[:, [m]]
            prior = np.log(nb.class_prior_)
        else:
            one.feature_log_prob_ = [nb.feature_log_prob_[m]]
            one.category_count_ = [nb.category_count_[m]]
            one.n_categories_ = nb.n_categories_[[m]]
            prior = nb.class_log_prior_
        one.n_features_in_ = 1
        out[:, m] = one.predict_joint_log_proba(X[:, [m]]) - prior
    return out, prior


def _enumerated_shapley(f, background, rows):
    """Shapley values of v(S) = mean_b f(x_S, b_-S) by enumerating every coalition (shap's Independent masker)."""
    p = background.shape[1]
    coalitions = np.array(list(itertools.product([False, True], repeat=p)))
    out = np.zeros((len(rows), p))
    for r, x in enumerate(rows):
        value = {}
        for S in coalitions:
            Z = background.copy()
            Z[:, S] = x[S]
            value[S.tobytes()] = f(Z).mean()
        for S in coalitions:
            size = S.sum()
            for i in np.flatnonzero(~S):
                with_i = S.copy()
                with_i[i] = True
                weight = math.factorial(size) * math.factorial(p - size - 1) / math.factorial(p)
                out[r, i] += weight * (value[with_i.tobytes()] - value[S.tobytes()])
    return out


def _cll(terms, prior, codes, w):
    jll = prior + np.einsum("npk,p->nk", terms, w)
    return float((jll[np.arange(len(codes)), codes] - logsumexp(jll, axis=1)).sum())


@pytest.fixture(scope="module")
def noisy():
    """Three informative features, two exact duplicates of the first, four pure-noise features."""
    rng = np.random.default_rng(0)
    n = 600
    y = rng.integers(0, 2, n)
    informative = rng.normal(size=(n, 3)) + np.array([1.0, 0.7, 0.5]) * y[:, None]
    noise = rng.normal(size=(n, 4))
    X = np.column_stack([informative, informative[:, [0, 0]], noise])
    return X, y


def test_weighted_likelihood_matches_sklearn_single_feature_models(noisy):
    X, y = noisy
    model = WeightedNaiveBayes().fit(X, y)
    terms, prior = _single_feature_terms(model.estimator_, X)
    expected = prior + np.einsum("npk,p->nk", terms, model.weights_)
    np.testing.assert_allclose(model.predict_joint_log_proba(X), expected, rtol=1e-12, atol=1e-10)
    np.testing.assert_allclose(model.predict_proba(X), np.exp(expected - logsumexp(expected, 1, keepdims=True)),
                               atol=1e-12)
    np.testing.assert_array_equal(model.predict(X), model.classes_[expected.argmax(1)])
    assert model.log_likelihood_ == pytest.approx(_cll(terms, prior, y, model.weights_), rel=1e-10)


def test_weights_solve_the_penalised_problem(noisy):
    """KKT conditions of max cll(w) - lambda sum(w) on [0, 1]^p, by central differences of an independent cll."""
    X, y = noisy
    model = WeightedNaiveBayes().fit(X, y)
    w, lam = model.weights_, model.penalty_
    assert lam == pytest.approx(0.5 * np.log(len(y)))
    terms, prior = _single_feature_terms(model.estimator_, X)
    h = 1e-5
    for m in range(len(w)):
        step = np.zeros_like(w)
        step[m] = h
        gradient = (_cll(terms, prior, y, w + step) - _cll(terms, prior, y, w - step)) / (2 * h) - lam
        if w[m] == 0.0:
            assert gradient <= 1e-3, (m, gradient)
        elif w[m] == 1.0:
            assert gradient >= -1e-3, (m, gradient)
        else:
            assert abs(gradient) <= 1e-3, (m, gradient)
    # the penalised objective beats the plain naive Bayes (w = 1) and the empty model (w = 0)
    objective = model.log_likelihood_ - lam * w.sum()
    assert objective >= _cll(terms, prior, y, np.ones_like(w)) - lam * len(w)
    assert objective >= _cll(terms, prior, y, np.zeros_like(w))


def test_selection_drops_noise_and_shares_duplicates(noisy):
    X, y = noisy
    model = WeightedNaiveBayes().fit(X, y)
    assert np.all((model.weights_ >= 0) & (model.weights_ <= 1))
    # the noise features are dropped (an L1 penalty can leave a tiny weight where the sample has a chance signal)
    assert np.sum(model.weights_[5:] == 0.0) >= 3 and model.weights_[5:].max() < 0.05
    assert np.all(model.weights_[:3] > 0)
    # naive Bayes counts a duplicated feature three times: the weights of the three copies add up to about one
    assert model.weights_[[0, 3, 4]].sum() <= 1.05
    # no penalty: maximum likelihood, at least as likely as any other weights
    free = WeightedNaiveBayes(penalty=0.0).fit(X, y)
    assert free.penalty_ == 0.0 and free.log_likelihood_ >= model.log_likelihood_ - 1e-9


def test_prefit_keeps_the_given_model_and_clone_works():
    X, y = load_breast_cancer(return_X_y=True)
    nb = GaussianNB().fit(X, y)
    model = WeightedNaiveBayes(nb, prefit=True, penalty="aic").fit(X, y)
    assert model.estimator_ is nb and model.penalty_ == 1.0
    again = clone(model)
    assert again.get_params()["penalty"] == "aic" and not hasattr(again, "weights_")
    with pytest.raises(NotFittedError):
        WeightedNaiveBayes(GaussianNB(), prefit=True).fit(X, y)


def test_explainer_is_exact_on_a_pipeline_that_reorders_columns():
    rng = np.random.default_rng(1)
    X, y = load_breast_cancer(return_X_y=True)
    X = np.column_stack([X[:, 0], rng.integers(0, 4, len(X)), X[:, 1], X[:, 7], rng.integers(0, 3, len(X))])
    bins = KBinsDiscretizer(n_bins=4, encode="ordinal", strategy="quantile")
    pipeline = make_pipeline(ColumnTransformer([("bins", bins, [3, 2, 0]), ("codes", OrdinalEncoder(), [4, 1])]),
                             CategoricalNB())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = WeightedNaiveBayes(pipeline).fit(X, y)
    # weights_ are per input column: the model column fed by input column j carries weights_[j]
    order = np.array([2, 3, 1, 0, 4])  # input column j -> ColumnTransformer output column
    np.testing.assert_array_equal(model.weights_, model.nb_weights_[order])
    explainer = NaiveBayesExplainer(model, X[:80])
    e = explainer(X[100:140])
    log_odds = np.diff(model.predict_joint_log_proba(X[100:140]), axis=1)[:, 0]
    np.testing.assert_allclose(e.base_values + e.values.sum(1), log_odds, atol=1e-10)
    np.testing.assert_array_equal(e.values[:, model.weights_ == 0], 0.0)
    # the exact Shapley values of the weighted log-odds, by enumerating the interventional game
    np.testing.assert_allclose(e.values[:5], _enumerated_shapley(
        lambda Z: np.diff(model.predict_joint_log_proba(Z), axis=1)[:, 0], X[:80], X[100:105]), atol=1e-10)


def test_explainer_multiclass_and_dispatch():
    X, y = load_iris(return_X_y=True)
    model = WeightedNaiveBayes(penalty=0.0).fit(X, y)
    e = NaiveBayesExplainer(model, X[::3])(X[:10])
    log_proba = model.predict_log_proba(X[:10])
    np.testing.assert_allclose(e.base_values + e.values.sum(1), log_proba - log_proba.mean(1, keepdims=True),
                               atol=1e-10)
    assert NaiveBayesExplainer.supports_model(model)
    assert isinstance(si.Explainer(model, X[::3]), NaiveBayesExplainer)
    with pytest.raises(InvalidParameterError, match="carries its weights"):
        NaiveBayesExplainer(model, X[::3], weights=np.ones(4))


def test_errors_name_the_problem():
    X, y = load_breast_cancer(return_X_y=True)
    with pytest.raises(UnsupportedModelError, match="LogisticRegression"):
        WeightedNaiveBayes(LogisticRegression()).fit(X, y)
    with pytest.raises(InvalidParameterError, match="penalty"):
        WeightedNaiveBayes(penalty=-1.0).fit(X, y)
    with pytest.raises(InvalidParameterError, match="penalty"):
        WeightedNaiveBayes(penalty="mdl").fit(X, y)
    with pytest.raises(DataValidationError, match="single class"):
        WeightedNaiveBayes().fit(X, np.zeros(len(y)))
    with pytest.raises(DataValidationError, match=r"not among the classes the model was fitted on \[0, 1\]: \[7\]"):
        WeightedNaiveBayes(GaussianNB().fit(X, y), prefit=True).fit(X, np.where(y == 1, 7, 0))
    with pytest.raises(DataValidationError, match="rows"):
        WeightedNaiveBayes(GaussianNB().fit(X, y), prefit=True).fit(X, y[:-1])
    with pytest.raises(NotFittedError):
        WeightedNaiveBayes().predict(X)


@pytest.mark.slow  # shap's Exact explainer compiles numba code on first use (tens of seconds on a loaded machine)
def test_explainer_equals_shaps_exact_explainer_on_the_weighted_log_odds(noisy):
    import shap

    X, y = noisy
    model = WeightedNaiveBayes().fit(X[:, :6], y)
    background, rows = X[:60, :6], X[100:110, :6]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        masker = shap.maskers.Independent(background, max_samples=len(background))
        exact = shap.explainers.Exact(lambda Z: np.diff(model.predict_joint_log_proba(Z), axis=1)[:, 0], masker)(rows)
    ours = NaiveBayesExplainer(model, background)(rows)
    np.testing.assert_allclose(ours.values, exact.values, atol=1e-10)
    np.testing.assert_allclose(ours.base_values, exact.base_values, atol=1e-10)
