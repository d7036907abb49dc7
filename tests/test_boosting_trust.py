"""The weighted-targets layer with signed weights, and what BoostingExplainer builds on it: leave-self-out
predictions, trust scores and the plots, each against a dense loop written here from the definitions."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
import scipy.sparse as sp  # noqa: E402
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from sklearn.datasets import load_diabetes  # noqa: E402
from sklearn.ensemble import GradientBoostingClassifier, GradientBoostingRegressor  # noqa: E402

from shap_instances import BoostingExplainer  # noqa: E402
from shap_instances.exceptions import DataValidationError, UnsupportedModelError  # noqa: E402
from shap_instances.plots import (  # noqa: E402
    gap_cumulative_weight,
    gap_predictive_distribution,
    gap_weighted_histograms,
)
from shap_instances.weighted_targets import (  # noqa: E402
    cumulative_weight,
    neighbours_for_weight,
    signed_histogram,
    trust_columns,
    weight_concentration,
    weight_parts,
    weighted_error,
    weighted_quantiles,
)

from .boosting_naive import dense_axil_weights, gb_tree_leaves  # noqa: E402


# ----------------------------------------------------------------------------- dense loops (the definitions)
def naive_quantile(row, values, q):
    """Smallest value whose cumulative positive weight, normalised, reaches q."""
    plus = np.maximum(row, 0.0)
    if plus.sum() == 0:
        return np.nan
    order = np.argsort(values, kind="stable")
    cum = 0.0
    for j in order:
        if plus[j] == 0:
            continue
        cum += plus[j] / plus.sum()
        if cum >= q - 1e-12:
            return values[j]
    return values[order][plus[order] > 0][-1]


def naive_neighbours(row, level):
    a = np.sort(np.abs(row))[::-1]
    total, cum = a.sum(), 0.0
    for count, value in enumerate(a, start=1):
        cum += value
        if cum >= level * total - 1e-12 * total:
            return count
    return 0


def naive_error(row, errors):
    numerator = denominator = 0.0
    for w, e in zip(row, errors):
        if np.isnan(e):
            continue
        numerator += abs(w) * e
        denominator += abs(w)
    return numerator / denominator if denominator > 0 else np.nan


def _signed_rows(seed, m=6, n=40):
    rng = np.random.default_rng(seed)
    W = rng.normal(size=(m, n)) * (rng.random((m, n)) < 0.5)
    W[0] = np.abs(W[0])  # a non-negative row
    W[1, :] = 0.0
    W[1, 5] = -1.0  # only negative weight
    return W, rng.normal(size=n), rng


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("sparse", [False, True])
def test_signed_weights_against_dense_loops(seed, sparse):
    W, values, rng = _signed_rows(seed)
    given_ = sp.csr_matrix(W) if sparse else W
    qs = (0.1, 0.5, 0.9, 1.0)
    got = weighted_quantiles(given_, values, qs)
    for j, row in enumerate(W):
        for a, q in enumerate(qs):
            expected = naive_quantile(row, values, q)
            assert (np.isnan(got[j, a]) and np.isnan(expected)) or got[j, a] == expected
    for level in (0.5, 0.9, 1.0):
        assert neighbours_for_weight(given_, level).tolist() == [naive_neighbours(r, level) for r in W]
    errors = np.abs(rng.normal(size=W.shape[1]))
    errors[::7] = np.nan
    np.testing.assert_allclose(weighted_error(given_, errors)[:, 0], [naive_error(r, errors) for r in W],
                               rtol=1e-12)
    spread = weight_concentration(given_)
    for j, row in enumerate(W):
        total = sum(abs(w) for w in row)
        negative = sum(-w for w in row if w < 0)
        assert spread["total_abs_weight"][j] == pytest.approx(total, rel=1e-12)
        assert spread["negative_share"][j] == pytest.approx(negative / total, rel=1e-12)
        assert spread["effective_rows"][j] == pytest.approx(total**2 / sum(w * w for w in row), rel=1e-12)
        assert spread["largest"][j] == max(abs(w) for w in row)
    plus, minus = weight_parts(given_)
    np.testing.assert_array_equal(plus.toarray() - minus.toarray(), W)
    assert plus.data.min() > 0 and minus.data.min() > 0
    curves = cumulative_weight(given_)
    for j, row in enumerate(W):
        a = np.sort(np.abs(row[row != 0]))[::-1]
        np.testing.assert_allclose(curves[j, :a.size], np.cumsum(a) / a.sum(), rtol=1e-12)
        assert np.all(curves[j, a.size:] == 1.0)


def test_non_negative_weights_give_the_probability_readings():
    """For a probability vector every reading is the plain weighted one (what RF-GAP always had)."""
    rng = np.random.default_rng(5)
    w = rng.random(30) * (rng.random(30) < 0.6)
    w /= w.sum()
    values = rng.normal(size=30)
    order = np.argsort(values)
    cdf = np.cumsum(w[order])
    median = values[order][np.flatnonzero((cdf >= 0.5 - 1e-12) & (w[order] > 0))[0]]
    assert weighted_quantiles(w, values, [0.5])[0, 0] == median
    spread = weight_concentration(w)
    assert spread["total_abs_weight"][0] == pytest.approx(1.0) and spread["negative_share"][0] == 0.0
    edges = np.linspace(values.min(), values.max(), 8)
    up, down = signed_histogram(values, w, edges)
    np.testing.assert_allclose(up, np.histogram(values, bins=edges, weights=w, density=True)[0], rtol=1e-12)
    assert not down.any()


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), n=st.integers(2, 30), bins=st.integers(1, 8))
def test_signed_histogram_integrates_to_one_and_its_mean_is_the_weighted_mean(seed, n, bins):
    rng = np.random.default_rng(seed)
    values = rng.normal(size=n)
    w = rng.normal(size=n)
    w[0] = abs(w).sum() + 1.0  # a positive sum
    edges = np.linspace(values.min() - 1e-9, values.max() + 1e-9, bins + 1)
    up, down = signed_histogram(values, w, edges)
    widths = np.diff(edges)
    assert float(((up - down) * widths).sum()) == pytest.approx(1.0, abs=1e-12)
    for b in range(bins):  # bin by bin, a loop over the rows
        inside = (values >= edges[b]) & ((values < edges[b + 1]) | (b == bins - 1))
        assert up[b] * widths[b] * w.sum() == pytest.approx(np.maximum(w[inside], 0).sum(), abs=1e-12)
        assert down[b] * widths[b] * w.sum() == pytest.approx(np.maximum(-w[inside], 0).sum(), abs=1e-12)
    with pytest.raises(DataValidationError, match="sum"):
        signed_histogram(values, -np.abs(w), edges)


def test_trust_columns_need_finite_weights_and_name_their_columns():
    W = np.array([[0.75, -0.25, 0.5]])
    y = np.array([1.0, 2.0, 3.0])
    cols = trust_columns(W, y, W @ y, np.array([1.0, np.nan, 2.0]), level=0.5, error_name="e")
    assert list(cols) == ["prediction", "e", "q10", "q50", "q90", "n_neighbours_50"]
    assert cols["e"][0] == pytest.approx((0.75 * 1 + 0.5 * 2) / 1.25)
    with pytest.raises(DataValidationError, match="finite"):
        trust_columns(np.array([[np.nan, 1.0, 0.0]]), y, [1.0], np.ones(3))
    two = np.column_stack([y, 2 * y])  # two outputs: suffixed by their names, or by their positions
    named = trust_columns(W, two, W @ two, np.ones((3, 2)), quantiles=(0.5,), output_names=["a", "b"])
    assert list(named)[:4] == ["prediction_a", "prediction_b", "weighted_error_a", "weighted_error_b"]
    assert named["q50_b"][0] == 2 * named["q50_a"][0] == 2.0
    assert list(trust_columns(W, two, W @ two, np.ones((3, 2)), quantiles=(0.5,)))[:2] == ["prediction_0",
                                                                                          "prediction_1"]
    with pytest.raises(DataValidationError, match="output_names"):
        trust_columns(W, two, W @ two, np.ones((3, 2)), output_names=["a"])


def test_stored_zeros_are_no_weight_and_the_callers_matrix_is_kept():
    dense = np.array([[0.0, 0.0, 0.0], [0.5, 0.0, 0.5]])
    stored = sp.csr_matrix((np.array([0.0, 0.0, 0.5, 0.0, 0.5]), np.array([0, 1, 0, 1, 2]), np.array([0, 2, 5])),
                           shape=(2, 3))
    assert np.array_equal(stored.toarray(), dense) and stored.nnz == 5
    assert neighbours_for_weight(stored, 0.9).tolist() == neighbours_for_weight(dense, 0.9).tolist() == [0, 2]
    assert np.array_equal(cumulative_weight(stored), cumulative_weight(dense), equal_nan=True)
    assert stored.nnz == 5  # the caller's matrix keeps its stored zeros
    with pytest.raises(DataValidationError, match="quantiles"):
        weighted_quantiles(dense, np.arange(3.0), [np.nan])


# ----------------------------------------------------------------------------- BoostingExplainer
@pytest.fixture(scope="module")
def diabetes():
    X, y = load_diabetes(return_X_y=True, as_frame=True)
    X_train, y_train, X_test, y_test = X[:150], y[:150], X[150:170], y[150:170]
    rng = np.random.default_rng(0)
    s = rng.uniform(0.5, 2.0, 150)
    model = GradientBoostingRegressor(n_estimators=30, max_depth=3, learning_rate=0.3, random_state=0)
    model.fit(X_train, y_train, sample_weight=s)
    explainer = BoostingExplainer(model, X_train, y=y_train, sample_weight=s)
    return X_train, y_train.to_numpy(), X_test, y_test.to_numpy(), s, model, explainer


def test_loo_predictions_equal_renormalised_dense_rows(diabetes):
    X_train, y, _, _, s, model, explainer = diabetes
    W = dense_axil_weights(model, X_train.to_numpy(), X_train.to_numpy(), sample_weight=s)  # n x n matrices
    loo = explainer.loo_predictions()
    for j in range(len(y)):
        others = [i for i in range(len(y)) if i != j]
        expected = sum(W[j, i] * y[i] for i in others) / (1.0 - W[j, j])
        assert loo[j] == pytest.approx(expected, rel=1e-9)
    assert explainer.loo_predictions() is not loo  # a new array each call; the cache is read-only
    assert not explainer._self_weights().flags.writeable


def test_loo_predictions_with_a_constant_initial_prediction():
    X, y = load_diabetes(return_X_y=True)
    X, y = X[:120], y[:120]
    model = GradientBoostingRegressor(n_estimators=20, max_depth=2, init="zero", random_state=0).fit(X, y)
    leaves = gb_tree_leaves(model, X)
    # the definition with F_0 = 0: f_t = f_{t-1} + eta P_t (y - f_{t-1}), f_t = M_t y, M_0 = 0, n x n matrices
    M = np.zeros((len(y), len(y)))
    for t in range(leaves.shape[1]):
        same = (leaves[:, t][:, None] == leaves[:, t][None, :]).astype(float)
        M = M + model.learning_rate * (same / same.sum(axis=1, keepdims=True)) @ (np.eye(len(y)) - M)
    W = M
    np.testing.assert_allclose(W @ y, model.predict(X), rtol=1e-10)
    # predict = c (1 - sum w) + w y with c = 0: drop row j's weight and renormalise what it multiplies
    expected = np.array([(W[j] @ y - W[j, j] * y[j]) / (1 - W[j, j]) for j in range(len(y))])
    np.testing.assert_allclose(BoostingExplainer(model, X, y=y).loo_predictions(), expected, rtol=1e-9)


def test_trust_scores_against_a_dense_loop(diabetes):
    X_train, y, X_test, _, s, model, explainer = diabetes
    W = dense_axil_weights(model, X_train.to_numpy(), X_test.to_numpy(), sample_weight=s)
    W_in = dense_axil_weights(model, X_train.to_numpy(), X_train.to_numpy(), sample_weight=s)
    fitted = model.predict(X_train)
    loo_error = np.abs(y - fitted) / np.abs(1 - np.diag(W_in))
    scores = explainer.trust_scores(X_test)
    assert list(scores.index) == [str(i) for i in X_test.index]
    np.testing.assert_allclose(scores["prediction"], model.predict(X_test), rtol=1e-12)
    own = explainer.weights(X_test)
    assert np.max(np.abs(own - W)) <= 1e-10  # the weights are the definition's; quantiles are read off them
    for j, row in enumerate(W):
        assert scores["weighted_loo_error"].iloc[j] == pytest.approx(naive_error(row, loo_error), rel=1e-8)
        for q in (0.1, 0.5, 0.9):
            assert scores[f"q{round(100 * q):02d}"].iloc[j] == naive_quantile(own[j], y, q)
        assert scores["n_neighbours_90"].iloc[j] == naive_neighbours(row, 0.9)
        assert scores["total_abs_weight"].iloc[j] == pytest.approx(np.abs(row).sum(), rel=1e-9)
        assert scores["negative_share"].iloc[j] == pytest.approx(-row[row < 0].sum() / np.abs(row).sum(), rel=1e-8)
    # boosting weights are signed here, and the trust scores read them as such
    assert (scores["negative_share"] > 0).all() and (scores["total_abs_weight"] > 1).all()
    # chunks under max_memory give the same frame
    small = BoostingExplainer(model, X_train, y=y, sample_weight=s, max_memory=8 * 150 * 64 * 3)
    np.testing.assert_allclose(small.trust_scores(X_test).to_numpy(), scores.to_numpy(), rtol=1e-12)


def test_trust_scores_and_distribution_plots_are_refused_for_gradient_contributions():
    X, y = load_diabetes(return_X_y=True)
    labels = (y[:100] > 140).astype(int)
    model = GradientBoostingClassifier(n_estimators=5, random_state=0).fit(X[:100], labels)
    explainer = BoostingExplainer(model, X[:100], y=labels)
    with pytest.raises(UnsupportedModelError, match="kind='weights'"):
        explainer.trust_scores(X[100:105])
    with pytest.raises(UnsupportedModelError, match="gradients"):
        gap_predictive_distribution(explainer, weights=np.ones(100), show=False)


def _line(ax, prefix):
    return next(line for line in ax.get_lines() if line.get_label().startswith(prefix))


def test_predictive_distribution_of_signed_weights(diabetes):
    X_train, y, X_test, y_test, _, model, explainer = diabetes
    W = explainer.weights(X_test[:1])
    assert (W < 0).any()
    ax = gap_predictive_distribution(explainer, weights=W[0], true_value=y_test[0], errors="loo", bins=20,
                                     show=False)
    assert _line(ax, "prediction").get_xdata()[0] == pytest.approx(model.predict(X_test[:1])[0], rel=1e-12)
    scores = explainer.trust_scores(X_test[:1])
    for q in ("q10", "q50", "q90"):
        assert _line(ax, q).get_xdata()[0] == pytest.approx(scores[q].iloc[0])
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert any(f"{scores['weighted_loo_error'].iloc[0]:.4g}" in t for t in labels)
    bars = ax.patches[20:]  # the weighted bars: 20 up, then 20 down
    assert len(bars) == 40
    area = sum(b.get_height() * b.get_width() for b in bars)  # down bars have negative heights
    assert area == pytest.approx(1.0)
    with pytest.raises(DataValidationError, match='errors="oob"'):
        gap_predictive_distribution(explainer, weights=W[0], errors="oob", show=False)
    plt.close("all")


def test_cumulative_weight_and_histograms_take_signed_weights(diabetes):
    X_train, _, X_test, _, _, _, explainer = diabetes
    W = explainer.weights(X_test)
    ax = gap_cumulative_weight(W, show=False)
    mean_curve = ax.get_lines()[-3].get_ydata()  # the mean, then the guide line
    assert mean_curve[-1] == pytest.approx(1.0)
    assert ax.get_ylabel() == "cumulative share of |weight|"
    fig, ax = plt.subplots()
    assert gap_weighted_histograms(X_train, weights=W[0], feature="bmi", point=X_test.iloc[0], bins=15, ax=ax,
                                   show=False) is ax
    heights = np.array([p.get_height() for p in ax.patches[15:]])
    assert (heights < 0).any() and (heights > 0).any()
    plt.close("all")
