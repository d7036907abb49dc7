"""NaiveBayesExplainer against shap's Exact explainer, the model's own likelihoods, and closed forms."""

import warnings

import numpy as np
import pandas as pd
import pytest
import shap
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.compose import ColumnTransformer
from sklearn.datasets import load_breast_cancer, load_iris
from sklearn.decomposition import PCA
from sklearn.linear_model import LogisticRegression
from sklearn.naive_bayes import BernoulliNB, CategoricalNB, ComplementNB, GaussianNB, MultinomialNB
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import KBinsDiscretizer, OneHotEncoder, OrdinalEncoder, StandardScaler

import shap_instances as si
from shap_instances import NaiveBayesExplainer
from shap_instances.exceptions import DataValidationError, NotFittedError, UnsupportedModelError


def _exact(model_fn, background, X):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        masker = shap.maskers.Independent(background, max_samples=len(background))
        return shap.explainers.Exact(model_fn, masker)(X)


def _cases():
    X, y = load_breast_cancer(return_X_y=True)
    X = X[:, :7]
    rng = np.random.default_rng(0)
    counts = rng.integers(0, 5, size=(250, 6)).astype(float)
    labels2, labels3 = rng.integers(0, 2, 250), rng.integers(0, 3, 250)
    scaled = X / X.max(axis=0)
    discretise = KBinsDiscretizer(n_bins=4, encode="ordinal", quantile_method="averaged_inverted_cdf")
    iris_X, iris_y = load_iris(return_X_y=True)
    # numeric columns 0, 2 binned and integer columns 3, 1 coded: the preprocessing reorders the columns
    mixed = np.column_stack([X[:, 0], rng.integers(0, 4, len(X)), X[:, 1], rng.integers(0, 3, len(X))])
    reorder = ColumnTransformer([("bins", _bins(), [2, 0]), ("codes", OrdinalEncoder(), [3, 1])])
    return {
        "gaussian": (GaussianNB().fit(X, y), X),
        "bernoulli": (BernoulliNB(binarize=0.4).fit(scaled, y), scaled),
        "multinomial": (MultinomialNB(alpha=0.5).fit(counts, labels2), counts),
        "complement": (ComplementNB().fit(counts, labels2), counts),
        "categorical": (CategoricalNB().fit(counts, labels2), counts),
        "gaussian-3": (GaussianNB().fit(*load_iris(return_X_y=True)), load_iris(return_X_y=True)[0]),
        "multinomial-3": (MultinomialNB().fit(counts, labels3), counts),
        "categorical-3": (CategoricalNB().fit(counts, labels3), counts),
        "bernoulli-3": (BernoulliNB(binarize=0.5).fit(iris_X / iris_X.max(0), iris_y), iris_X / iris_X.max(0)),
        "pipeline": (make_pipeline(discretise, CategoricalNB()).fit(X, y), X),
        "pipeline-reordered": (make_pipeline(reorder, CategoricalNB()).fit(mixed, y), mixed),
    }


def _bins():
    """A fresh three-bin quantile discretiser."""
    return KBinsDiscretizer(n_bins=3, encode="ordinal", quantile_method="averaged_inverted_cdf")


@pytest.mark.parametrize("name", sorted(_cases()))
def test_equals_shap_exact(name):
    model, X = _cases()[name]
    background, rows = X[:40], X[40:46]
    explainer = NaiveBayesExplainer(model, background)
    explanation = explainer(rows)
    nb = model.steps[-1][1] if hasattr(model, "steps") else model

    def quantity(Z):
        Z = model[:-1].transform(Z) if hasattr(model, "steps") else Z
        return nb.predict_joint_log_proba(Z) @ explainer.contraction_

    reference = _exact(quantity, background, rows)
    np.testing.assert_allclose(explanation.values, np.asarray(reference.values).reshape(explanation.values.shape),
                               atol=1e-10, rtol=0)
    np.testing.assert_allclose(explanation.base_values,
                               np.asarray(reference.base_values).reshape(np.shape(explanation.base_values)),
                               atol=1e-10, rtol=0)
    if len(nb.classes_) == 2:  # the explained quantity is the model's log-odds
        log_odds = np.diff(model.predict_log_proba(rows), axis=1)[:, 0]
        np.testing.assert_allclose(explanation.base_values + explanation.values.sum(1), log_odds, atol=1e-10, rtol=0)
    else:  # softmax of the centred log-probabilities is predict_proba
        total = explanation.base_values + explanation.values.sum(1)
        softmax = np.exp(total) / np.exp(total).sum(1, keepdims=True)
        np.testing.assert_allclose(softmax, model.predict_proba(rows), atol=1e-10, rtol=0)
        assert list(explanation.output_names) == [str(c) for c in nb.classes_]


@settings(max_examples=30)
@given(n_categories=st.integers(2, 5), p=st.integers(1, 6), alpha=st.floats(0.01, 5.0),
       imbalance=st.floats(0.05, 0.5), seed=st.integers(0, 10_000))
def test_additivity_on_random_categorical_data(n_categories, p, alpha, imbalance, seed):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, n_categories, size=(120, p)).astype(float)
    y = (rng.random(120) < imbalance).astype(int)
    y[:2] = [0, 1]
    model = CategoricalNB(alpha=alpha, min_categories=n_categories + 1).fit(X, y)
    unseen = X[:5].copy()
    unseen[:, 0] = n_categories  # a category never seen at fit time, allowed by min_categories
    explanation = NaiveBayesExplainer(model, X[:30])(np.vstack([X[:10], unseen]))
    log_odds = np.diff(model.predict_joint_log_proba(np.vstack([X[:10], unseen])), axis=1)[:, 0]
    np.testing.assert_allclose(explanation.base_values + explanation.values.sum(1), log_odds, atol=1e-10, rtol=0)


def test_training_expectation_equals_background_of_the_training_data():
    rng = np.random.default_rng(1)
    X = rng.integers(0, 4, size=(200, 5)).astype(float)
    y = rng.integers(0, 2, 200)
    for model in (CategoricalNB().fit(X, y), MultinomialNB().fit(X, y), BernoulliNB(binarize=1.5).fit(X, y)):
        a = NaiveBayesExplainer(model, X)(X[:5])
        b = NaiveBayesExplainer(model, expectation="training")(X[:5])
        np.testing.assert_allclose(a.values, b.values, atol=1e-10, rtol=0)
    # Gaussian: the mixture expectation, checked by Monte Carlo on draws from the fitted mixture
    Xg, yg = load_iris(return_X_y=True)
    model = GaussianNB().fit(Xg, yg)
    draws = np.concatenate([rng.normal(model.theta_[c], np.sqrt(model.var_[c]), size=(int(2e5 * w), 4))
                            for c, w in enumerate(model.class_count_ / model.class_count_.sum())])
    mc = NaiveBayesExplainer(model, draws, output="joint").expected_terms_
    closed = NaiveBayesExplainer(model, expectation="training", output="joint").expected_terms_
    np.testing.assert_allclose(mc, closed, rtol=0.02, atol=0.02)


def test_weights_and_weight_of_evidence():
    model, X = _cases()["gaussian"]
    w = np.linspace(0.2, 1.0, X.shape[1])
    weighted = NaiveBayesExplainer(model, X[:50], weights=w)(X[:5])
    plain = NaiveBayesExplainer(model, X[:50])(X[:5])
    np.testing.assert_allclose(weighted.values, plain.values * w, atol=1e-12, rtol=0)
    woe = NaiveBayesExplainer(model, X[:50], woe=True)(X[:5])
    prior_log_odds = np.diff(np.log(model.class_prior_))[0]
    np.testing.assert_allclose(woe.base_values, prior_log_odds)
    np.testing.assert_allclose(woe.base_values + woe.values.sum(1), plain.base_values + plain.values.sum(1),
                               atol=1e-10, rtol=0)


def test_auto_dispatch():
    model, X = _cases()["gaussian"]
    assert isinstance(si.Explainer(model, X[:20]), NaiveBayesExplainer)
    assert NaiveBayesExplainer.supports_model(_cases()["pipeline"][0])


def test_bad_input():
    model, X = _cases()["categorical"]
    with pytest.raises(NotFittedError):
        NaiveBayesExplainer(GaussianNB(), X)
    with pytest.raises(UnsupportedModelError, match="not a LogisticRegression"):
        NaiveBayesExplainer(LogisticRegression().fit(X, model.predict(X)), X)
    explainer = NaiveBayesExplainer(model, X[:20])
    with pytest.raises(DataValidationError, match="columns"):
        explainer(X[:, :3])
    with pytest.raises(DataValidationError, match="outside the fitted range"):
        explainer(X[:2] + 10)
    with pytest.raises(DataValidationError, match="integer category codes"):
        explainer(X[:2] + 0.5)
    with pytest.raises(DataValidationError, match="non-negative"):
        NaiveBayesExplainer(_cases()["multinomial"][0], X[:20])(-X[:2])
    with pytest.raises(DataValidationError, match="needs background data"):
        NaiveBayesExplainer(model)
    Xg, yg = load_breast_cancer(return_X_y=True)
    with pytest.raises(UnsupportedModelError, match="mixes columns"):
        NaiveBayesExplainer(make_pipeline(PCA(5), GaussianNB()).fit(Xg[:, :5], yg), Xg[:50, :5])


def test_non_columnwise_preprocessing_is_refused_without_data():
    Xg, yg = load_breast_cancer(return_X_y=True)
    pca = make_pipeline(PCA(5), GaussianNB()).fit(Xg[:, :5], yg)
    with pytest.raises(UnsupportedModelError, match="mixes columns"):
        NaiveBayesExplainer(pca, expectation="training")
    one_hot = make_pipeline(OneHotEncoder(sparse_output=False), CategoricalNB()).fit(_strings()[0], _strings()[1])
    with pytest.raises(UnsupportedModelError, match="maps 3 columns to"):
        NaiveBayesExplainer(one_hot, _strings()[0])


def test_columnwise_pipeline_with_training_expectation_and_no_data():
    _, X = _cases()["pipeline-reordered"]
    y = (X[:, 0] > np.median(X[:, 0])).astype(int)
    codes = OrdinalEncoder(handle_unknown="use_encoded_value", unknown_value=-1)  # accepts numeric probe rows
    reorder = ColumnTransformer([("bins", _bins(), [2, 0]), ("codes", codes, [3, 1])])
    model = make_pipeline(reorder, CategoricalNB()).fit(X, y)
    with_background = NaiveBayesExplainer(model, X, expectation="training")(X[:5])
    without = NaiveBayesExplainer(model, expectation="training")(X[:5])
    from_training_data = NaiveBayesExplainer(model, X)(X[:5])  # the training marginal = the training rows
    np.testing.assert_allclose(without.values, with_background.values, atol=1e-12, rtol=0)
    np.testing.assert_allclose(without.values, from_training_data.values, atol=1e-10, rtol=0)


def _strings():
    rng = np.random.default_rng(3)
    n = 300
    frame = pd.DataFrame({"colour": rng.choice(["red", "green", "blue"], n), "amount": rng.gamma(2.0, 50.0, n),
                          "size": rng.choice(["S", "M", "L", "XL"], n)})
    y = ((frame["colour"] == "red") ^ (frame["amount"] > 90)).astype(int).to_numpy()
    return frame, y


def test_pipeline_on_string_columns():
    frame, y = _strings()
    categorical = frame[["colour", "size"]]
    model = make_pipeline(OrdinalEncoder(), CategoricalNB()).fit(categorical, y)
    explanation = NaiveBayesExplainer(model, categorical[:60])(categorical[60:70])
    codes = model[0].transform(categorical)
    reference = NaiveBayesExplainer(model[-1], codes[:60])(codes[60:70])
    np.testing.assert_allclose(explanation.values, reference.values, atol=1e-12, rtol=0)
    np.testing.assert_allclose(explanation.base_values, reference.base_values, atol=1e-12, rtol=0)
    assert explanation.feature_names == ["colour", "size"]
    assert explanation.display_data.tolist() == categorical[60:70].to_numpy().tolist()  # the raw strings
    np.testing.assert_array_equal(explanation.data, codes[60:70])  # numeric stand-ins for the plots
    # an object array (no column names) and the training expectation with data given work too
    as_array = NaiveBayesExplainer(model, categorical.to_numpy()[:60])(categorical.to_numpy()[60:70])
    np.testing.assert_allclose(as_array.values, explanation.values, atol=1e-12, rtol=0)
    NaiveBayesExplainer(model, categorical[:60], expectation="training")(categorical[:3])
    with pytest.raises(DataValidationError, match="pass data="):  # numbers cannot probe an encoder of strings
        NaiveBayesExplainer(model, expectation="training")
    with pytest.raises(DataValidationError, match="has 1 columns"):
        NaiveBayesExplainer(model, categorical[:60])(categorical[["colour"]])
    missing = categorical[:3].copy()
    missing.iloc[0, 0] = None
    with pytest.raises(DataValidationError, match="preprocessing refused it"):
        NaiveBayesExplainer(model, categorical[:60])(missing)


def test_column_transformer_that_reorders_string_and_numeric_columns():
    frame, y = _strings()
    bins = KBinsDiscretizer(n_bins=4, encode="ordinal", quantile_method="averaged_inverted_cdf")
    preprocessing = ColumnTransformer([("bins", bins, ["amount"]), ("codes", OrdinalEncoder(), ["colour", "size"])])
    model = make_pipeline(preprocessing, CategoricalNB()).fit(frame, y)
    explainer = NaiveBayesExplainer(model, frame[:80])
    explanation = explainer(frame[80:90])
    assert explainer.order_.tolist() == [1, 0, 2]  # colour -> output 1, amount -> output 0, size -> output 2
    codes = preprocessing.transform(frame)  # columns: amount, colour, size
    reference = NaiveBayesExplainer(model[-1], codes[:80])(codes[80:90])
    np.testing.assert_allclose(explanation.values, reference.values[:, [1, 0, 2]], atol=1e-12, rtol=0)
    assert explanation.feature_names == ["colour", "amount", "size"]
    log_odds = np.diff(model.predict_log_proba(frame[80:90]), axis=1)[:, 0]
    np.testing.assert_allclose(explanation.base_values + explanation.values.sum(1), log_odds, atol=1e-10, rtol=0)
    np.testing.assert_array_equal(explanation.data[:, 1], frame["amount"][80:90])  # raw numbers stay raw
    assert explanation.display_data[:, 0].tolist() == frame["colour"][80:90].tolist()


def test_preprocessing_that_leaves_nan_is_a_clear_error():
    X, y = load_breast_cancer(return_X_y=True)
    model = make_pipeline(StandardScaler(), GaussianNB()).fit(X[:, :4], y)
    missing = X[:3, :4].copy()
    missing[1, 2] = np.nan  # StandardScaler passes NaN through
    with pytest.raises(DataValidationError, match=r"NaN or infinite values for input columns \[2\]"):
        NaiveBayesExplainer(model, X[:60, :4])(missing)
