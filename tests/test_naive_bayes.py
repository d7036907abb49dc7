"""NaiveBayesExplainer against shap's Exact explainer, the model's own likelihoods, and closed forms."""

import inspect
import warnings

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
import shap
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.compose import ColumnTransformer
from sklearn.datasets import load_breast_cancer, load_iris
from sklearn.decomposition import PCA
from sklearn.linear_model import LogisticRegression
from sklearn.naive_bayes import BernoulliNB, CategoricalNB, ComplementNB, GaussianNB, MultinomialNB
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import (
    FunctionTransformer,
    KBinsDiscretizer,
    OneHotEncoder,
    OrdinalEncoder,
    StandardScaler,
)

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
    discretise = _kbins(n_bins=4)
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


def _kbins(kind=KBinsDiscretizer, **kwargs):
    """An ordinal quantile discretiser; ``quantile_method`` (scikit-learn >= 1.7, where leaving it out warns)
    only where ``kind`` accepts it."""
    kwargs.setdefault("encode", "ordinal")
    if kwargs.get("strategy", "quantile") == "quantile" and "quantile_method" in inspect.signature(kind).parameters:
        kwargs.setdefault("quantile_method", "averaged_inverted_cdf")
    return kind(**kwargs)


def _bins():
    """A fresh three-bin quantile discretiser."""
    return _kbins(n_bins=3)


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


def _lengths(Z):
    """The length of each string (a column-wise transform that refuses numbers)."""
    return np.vectorize(len, otypes=[float])(np.asarray(Z, dtype=object))


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
    with_data = NaiveBayesExplainer(model, categorical[:60], expectation="training")(categorical[:3])
    # no data: the encoder's fitted categories are the probe values
    without = NaiveBayesExplainer(model, expectation="training")(categorical[:3])
    np.testing.assert_allclose(without.values, with_data.values, atol=1e-12, rtol=0)
    # a transformer without fitted state that refuses numbers needs example rows
    lengths = make_pipeline(FunctionTransformer(_lengths), CategoricalNB()).fit(categorical, y)
    with pytest.raises(DataValidationError, match="pass data="):
        NaiveBayesExplainer(lengths, expectation="training")
    NaiveBayesExplainer(lengths, categorical[:60], expectation="training")(categorical[:3])
    with pytest.raises(DataValidationError, match=r"missing \['size'\]"):
        NaiveBayesExplainer(model, categorical[:60])(categorical[["colour"]])
    with pytest.raises(DataValidationError, match="has 1 columns"):
        NaiveBayesExplainer(model, categorical[:60])(categorical[["colour"]].to_numpy())
    missing = categorical[:3].copy()
    missing.iloc[0, 0] = None
    with pytest.raises(DataValidationError, match="preprocessing refused it"):
        NaiveBayesExplainer(model, categorical[:60])(missing)


def test_column_transformer_that_reorders_string_and_numeric_columns():
    frame, y = _strings()
    bins = _kbins(n_bins=4)
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


class _KBinsBefore17(KBinsDiscretizer):
    """KBinsDiscretizer as scikit-learn < 1.7 has it: no quantile_method parameter."""

    def __init__(self, n_bins=5, *, encode="onehot", strategy="quantile", dtype=None, subsample=200_000,
                 random_state=None):
        super().__init__(n_bins=n_bins, encode=encode, strategy=strategy, dtype=dtype, subsample=subsample,
                         random_state=random_state)


def test_discretiser_helper_works_without_quantile_method():
    old = _kbins(_KBinsBefore17, n_bins=3)  # scikit-learn 1.4 - 1.6: the argument must not be passed
    assert "quantile_method" not in old.get_params()
    X, y = load_breast_cancer(return_X_y=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scikit-learn >= 1.7 warns about the quantile method
        model = make_pipeline(old, CategoricalNB()).fit(X[:, :4], y)
    explanation = NaiveBayesExplainer(model, X[:50, :4])(X[:5, :4])
    log_odds = np.diff(model.predict_log_proba(X[:5, :4]), axis=1)[:, 0]
    np.testing.assert_allclose(explanation.base_values + explanation.values.sum(1), log_odds, atol=1e-10, rtol=0)


def _large_scale():
    """Columns around 1e6 and 5e6 (beyond any synthetic probe) and one around 0, binned by a
    ColumnTransformer that reorders them: input 0 -> output 1, input 1 -> output 0, input 2 -> output 2."""
    rng = np.random.default_rng(0)
    n = 300
    X = np.column_stack([1e6 + rng.normal(0, 1e5, n), 5e6 + rng.normal(0, 5e5, n), rng.normal(0, 1, n)])
    y = (X[:, 0] + 5 * X[:, 1] / 25 + 2e5 * X[:, 2] > 2e6).astype(int)

    def kb():
        return KBinsDiscretizer(n_bins=3, encode="ordinal", strategy="uniform")

    preprocessing = ColumnTransformer([("b", kb(), [1]), ("c", kb(), [0]), ("d", kb(), [2])])
    return make_pipeline(preprocessing, CategoricalNB()).fit(X, y), X


def test_column_mapping_without_data_reads_the_fitted_ranges():
    model, X = _large_scale()
    without = NaiveBayesExplainer(model, expectation="training")
    with_data = NaiveBayesExplainer(model, X, expectation="training")
    assert with_data.order_.tolist() == [1, 0, 2]
    assert without.order_.tolist() == [1, 0, 2]  # was [0, 1, 2]: columns out of the probes' range looked constant
    np.testing.assert_allclose(without(X[:8]).values, with_data(X[:8]).values, atol=1e-12, rtol=0)
    codes = model[0].transform(X)
    reference = NaiveBayesExplainer(model[-1], expectation="training")(codes[:8])
    np.testing.assert_allclose(without(X[:8]).values, reference.values[:, [1, 0, 2]], atol=1e-12, rtol=0)


def test_constant_columns_are_paired_by_the_column_transformer():
    rng = np.random.default_rng(1)
    X = np.column_stack([np.full(200, 3.0), np.full(200, 7.0), rng.normal(size=200)])
    y = (X[:, 2] > 0).astype(int)
    preprocessing = ColumnTransformer([("x", _bins(), [1]), ("y", _bins(), [0]), ("z", _bins(), [2])])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # constant features
        model = make_pipeline(preprocessing, CategoricalNB()).fit(X, y)
    explainer = NaiveBayesExplainer(model, expectation="training", weights=[0.5, 2.0, 1.0])
    assert explainer.order_.tolist() == [1, 0, 2]  # was [0, 1, 2]: constant columns were paired in order
    # with weights the base value depends on the pairing: input 0 (weight 0.5) feeds model column 1
    nb = model[-1]
    terms = np.array([np.diff(table[:, 0]) for table in nb.feature_log_prob_])[:, 0]  # constant columns: code 0
    expected = np.diff(nb.class_log_prior_)[0] + 0.5 * terms[1] + 2.0 * terms[0]
    expected += NaiveBayesExplainer(nb, expectation="training").expected_terms_[2] @ [-1.0, 1.0]
    np.testing.assert_allclose(explainer(X[:3]).base_values, expected, atol=1e-12, rtol=0)


def test_ambiguous_column_mapping_is_refused():
    rng = np.random.default_rng(2)
    X = rng.choice([0.0, 2e9], size=(200, 2))
    y = (X[:, 0] > 0).astype(int)
    y[:2] = [0, 1]
    # an unknown transform that swaps the columns and changes only beyond 1e9
    swap = FunctionTransformer(lambda Z: (np.asarray(Z, dtype=float) > 1e9).astype(float)[:, ::-1])
    model = make_pipeline(swap, CategoricalNB()).fit(X, y)
    with pytest.raises(UnsupportedModelError, match="cannot tell which"):
        NaiveBayesExplainer(model, expectation="training")
    assert NaiveBayesExplainer(model, X, expectation="training").order_.tolist() == [1, 0]  # data settles it


def test_dataframe_columns_in_another_order():
    X, y = load_breast_cancer(return_X_y=True, as_frame=True)
    X = X.iloc[:, :6]
    model = GaussianNB().fit(X, y)
    expected = NaiveBayesExplainer(model, X[:50])(X[50:56])
    reversed_ = NaiveBayesExplainer(model, X.iloc[:50, ::-1])(X.iloc[50:56, ::-1])
    np.testing.assert_allclose(reversed_.values, expected.values, atol=1e-12, rtol=0)
    np.testing.assert_allclose(reversed_.base_values, expected.base_values, atol=1e-12, rtol=0)
    assert reversed_.feature_names == list(X.columns)  # the model's order
    np.testing.assert_array_equal(reversed_.data, X.iloc[50:56].to_numpy())
    other = X.iloc[:5].rename(columns={X.columns[0]: "something else"})
    with pytest.raises(DataValidationError, match="other columns"):
        NaiveBayesExplainer(model, X[:50])(other)
    # a pipeline taking strings does not go through check_data: reordered there too
    frame, labels = _strings()
    preprocessing = ColumnTransformer([("bins", _kbins(n_bins=4), ["amount"]),
                                       ("codes", OrdinalEncoder(), ["colour", "size"])])
    pipeline = make_pipeline(preprocessing, CategoricalNB()).fit(frame, labels)
    expected = NaiveBayesExplainer(pipeline, frame[:80])(frame[80:90])
    reversed_ = NaiveBayesExplainer(pipeline, frame.iloc[:80, ::-1])(frame.iloc[80:90, ::-1])
    np.testing.assert_allclose(reversed_.values, expected.values, atol=1e-12, rtol=0)
    assert reversed_.feature_names == list(frame.columns)
    with pytest.raises(DataValidationError, match="other columns"):
        NaiveBayesExplainer(pipeline, frame[:80])(frame.rename(columns={"size": "width"})[:3])


def test_feature_names_as_an_array_and_one_class_models():
    model, X = _cases()["gaussian"]
    names = np.array([f"f{i}" for i in range(X.shape[1])])
    explanation = NaiveBayesExplainer(model, X[:20], feature_names=names)(X[:2])
    assert explanation.feature_names == names.tolist()
    with pytest.raises(DataValidationError, match="feature_names has 2 names"):
        NaiveBayesExplainer(model, X[:20], feature_names=np.array(["a", "b"]))
    counts = np.random.default_rng(0).integers(0, 4, size=(50, 3)).astype(float)
    for one_class in (GaussianNB(), MultinomialNB(), CategoricalNB(), BernoulliNB()):
        one_class.fit(counts, np.zeros(50, dtype=int))
        with pytest.raises(DataValidationError, match="single class"):
            NaiveBayesExplainer(one_class, counts)


@pytest.mark.parametrize("kind", [MultinomialNB, ComplementNB, BernoulliNB])
def test_sparse_input_for_models_linear_in_x(kind, monkeypatch):
    rng = np.random.default_rng(4)
    dense = rng.poisson(0.3, size=(300, 40)).astype(float)
    y = rng.integers(0, 3, 300)
    model = kind().fit(sp.csr_matrix(dense), y)
    expected = NaiveBayesExplainer(model, dense[:100])(dense[100:160])
    # 7 rows a chunk: densified chunk by chunk
    monkeypatch.setattr("shap_instances.naive_bayes._model.CHUNK_ENTRIES", 7 * 40 * 3)
    densified = []
    original = sp.csr_matrix.toarray

    def toarray(self, *args, **kwargs):
        densified.append(self.shape[0])
        return original(self, *args, **kwargs)

    monkeypatch.setattr(sp.csr_matrix, "toarray", toarray)
    explanation = NaiveBayesExplainer(model, sp.csr_matrix(dense[:100]))(sp.csr_matrix(dense[100:160]))
    assert densified and max(densified) <= 7
    np.testing.assert_allclose(explanation.values, expected.values, atol=1e-12, rtol=0)
    np.testing.assert_allclose(explanation.base_values, expected.base_values, atol=1e-12, rtol=0)
    np.testing.assert_array_equal(explanation.data, dense[100:160])
    with pytest.raises(DataValidationError):  # Gaussian and categorical models still take dense input
        NaiveBayesExplainer(GaussianNB().fit(dense, y), sp.csr_matrix(dense[:10]))


@pytest.mark.parametrize("name", ["pipeline-reordered", "gaussian-3", "categorical", "bernoulli"])
def test_chunks_and_column_order_do_not_change_the_values(name, monkeypatch):
    model, X = _cases()[name]
    weights = np.linspace(0.5, 1.5, X.shape[1])
    for woe in (False, True):
        whole = NaiveBayesExplainer(model, X[:40], weights=weights, woe=woe)(X[40:90])
        monkeypatch.setattr("shap_instances.naive_bayes._model.CHUNK_ENTRIES", 3)  # one row a chunk
        rows = NaiveBayesExplainer(model, X[:40], weights=weights, woe=woe)(X[40:90])
        monkeypatch.undo()
        np.testing.assert_array_equal(rows.values, whole.values)
        plain = NaiveBayesExplainer(model, X[:40], woe=woe)(X[40:90])  # weights scale each input column's value
        np.testing.assert_allclose(whole.values, plain.values * weights[None, :, None][..., :plain.values.ndim - 1]
                                   if plain.values.ndim == 3 else plain.values * weights, atol=1e-10, rtol=0)


def test_overflowing_rows_are_refused_not_returned_as_inf():
    from sklearn.datasets import load_iris

    from shap_instances.exceptions import DataValidationError

    X, y = load_iris(return_X_y=True)
    model = GaussianNB().fit(X, y > 0)
    explainer = NaiveBayesExplainer(model, X)
    with pytest.raises(DataValidationError, match=r"rows \[1\] .* overflow"):
        explainer(X[:3] * np.array([[1.0], [1e200], [1.0]]))
    tiny = explainer(X[:2] * 1e-300)  # tiny values are far from the data but finite: a valid explanation
    assert np.all(np.isfinite(tiny.values))
    constant = X.copy()
    constant[:, 2] = 1.0  # a feature constant in training
    e = NaiveBayesExplainer(GaussianNB().fit(constant, y > 0), constant)(constant[:5])
    np.testing.assert_allclose(e.values[:, 2], 0.0, atol=1e-12)  # a null player


def test_imputer_then_encoder_on_string_columns():
    """SimpleImputer -> OrdinalEncoder on strings: the column mapping's numeric inverse does not apply (it
    used to fail with "could not convert string to float"); the attributions still add up to the log-odds."""
    from sklearn.impute import SimpleImputer
    from sklearn.preprocessing import OrdinalEncoder

    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.choice(["x", "y", None], 200), "b": rng.choice(["u", "v", "w"], 200)})
    y = rng.integers(0, 2, 200)
    model = make_pipeline(SimpleImputer(strategy="most_frequent"), OrdinalEncoder(), CategoricalNB()).fit(X, y)
    e = NaiveBayesExplainer(model, X[:50])(X[:5])
    np.testing.assert_allclose(e.base_values + e.values.sum(1), np.diff(model.predict_log_proba(X[:5]), axis=1)[:, 0],
                               atol=1e-10)
