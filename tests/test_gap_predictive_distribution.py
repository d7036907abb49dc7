"""gap_predictive_distribution: draws on the given Axes, and its weights are the forest's own prediction."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from sklearn.datasets import load_breast_cancer, load_diabetes  # noqa: E402
from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor  # noqa: E402

from shap_instances import GapExplainer  # noqa: E402
from shap_instances.exceptions import DataValidationError, UnsupportedModelError  # noqa: E402
from shap_instances.plots import gap_predictive_distribution  # noqa: E402


@pytest.fixture(scope="module")
def fitted():
    X, y = load_diabetes(return_X_y=True, as_frame=True)
    forest = RandomForestRegressor(25, min_samples_leaf=3, random_state=0).fit(X[:350], y[:350])
    return X, y, forest, GapExplainer(forest, X[:350], y=y[:350])


def _line(ax, prefix):
    return next(line for line in ax.get_lines() if line.get_label().startswith(prefix))


def test_weights_sum_to_one_and_reproduce_predict(fitted):
    X, y, forest, ex = fitted
    P = ex.proximities(X[350:360])
    np.testing.assert_allclose(np.asarray(P.sum(axis=1)).ravel(), 1.0, atol=1e-12)
    fig, axes = plt.subplots(1, 2)
    for j, ax in zip((0, 7), axes):
        assert gap_predictive_distribution(y[:350], weights=P[j], true_value=y.iloc[350 + j], ax=ax, show=False) is ax
        assert _line(ax, "prediction").get_xdata()[0] == pytest.approx(forest.predict(X[350 + j:351 + j])[0],
                                                                       abs=1e-10)
        assert _line(ax, "true value").get_xdata()[0] == y.iloc[350 + j]
        assert ax.get_xlabel() == "target"
    # the weighted bars are a density of the same training targets: bar areas add up to one
    bars = axes[0].patches[30:]
    assert len(bars) == 30 and sum(b.get_height() * b.get_width() for b in bars) == pytest.approx(1.0)
    # unnormalised weights are normalised: same prediction
    ax = gap_predictive_distribution(ex, weights=3 * P[0].toarray().ravel(), show=False)
    assert _line(ax, "prediction").get_xdata()[0] == pytest.approx(forest.predict(X[350:351])[0], abs=1e-10)
    plt.close("all")


def test_quantiles_and_weighted_training_error(fitted):
    X, y, _, ex = fitted
    P = ex.proximities(X[360:361])
    ax = gap_predictive_distribution(ex, weights=P, errors="oob", show=False)
    scores = ex.trust_scores(X[360:361])
    for q in ("q10", "q50", "q90"):
        assert _line(ax, q).get_xdata()[0] == pytest.approx(scores[q].iloc[0])
    errors = np.abs(y[:350].to_numpy() - ex.oob_predictions()[:, 0])
    valid = np.isfinite(errors)
    w = P.toarray().ravel()
    weighted = w[valid] @ errors[valid] / w[valid].sum()
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert any(f"weighted training error {weighted:.4g} (all training: {errors[valid].mean():.4g})" == t
               for t in labels)
    assert scores["weighted_oob_error"].iloc[0] == pytest.approx(weighted)
    assert gap_predictive_distribution(y[:350], weights=P, quantiles=(), show=True) is None
    plt.close("all")


def test_refusals(fitted):
    X, y, _, ex = fitted
    P = ex.proximities(X[350:352])
    with pytest.raises(DataValidationError, match="one row"):
        gap_predictive_distribution(y[:350], weights=P, show=False)
    with pytest.raises(DataValidationError, match="entries"):
        gap_predictive_distribution(y[:300], weights=P[0], show=False)
    with pytest.raises(DataValidationError, match="GapExplainer"):
        gap_predictive_distribution(y[:350], weights=P[0], errors="oob", show=False)
    with pytest.raises(DataValidationError, match="one entry per training point"):
        gap_predictive_distribution(y[:350], weights=P[0], errors=np.ones(3), show=False)
    with pytest.raises(DataValidationError, match="all zero"):
        gap_predictive_distribution(y[:350], weights=np.zeros(350), show=False)
    Xc, yc = load_breast_cancer(return_X_y=True)
    forest = RandomForestClassifier(10, random_state=0).fit(Xc[:300], yc[:300])
    classifier = GapExplainer(forest, Xc[:300], y=yc[:300])
    with pytest.raises(UnsupportedModelError, match="predict_proba"):
        gap_predictive_distribution(classifier, weights=classifier.proximities(Xc[300:301]), show=False)
    plt.close("all")
