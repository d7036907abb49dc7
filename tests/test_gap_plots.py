"""GAP plots draw on the given Axes, return it with show=False, and refuse bad input clearly."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from sklearn.datasets import load_breast_cancer, load_diabetes  # noqa: E402
from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor  # noqa: E402

from shap_instances import GapExplainer  # noqa: E402
from shap_instances.exceptions import DataValidationError  # noqa: E402
from shap_instances.plots import (  # noqa: E402
    gap_cumulative_weight,
    gap_weighted_histograms,
    gap_weighted_scatter,
    trust_deciles,
)


@pytest.fixture(scope="module")
def fitted():
    X, y = load_diabetes(return_X_y=True, as_frame=True)
    model = RandomForestRegressor(20, min_samples_leaf=2, random_state=0).fit(X[:350], y[:350])
    ex = GapExplainer(model, X[:350], y=y[:350])
    return X, y, ex, ex.proximities(X[350:])


def test_cumulative_weight_curves_reach_one(fitted):
    X, _, ex, P = fitted
    fig, ax = plt.subplots()
    assert gap_cumulative_weight(P, ax=ax, show=False, max_rows=10) is ax
    curves = [line.get_ydata() for line in ax.get_lines()[:10]]
    assert len(curves) == 10 and all(abs(c[-1] - 1) < 1e-12 and np.all(np.diff(c) >= -1e-15) for c in curves)
    # from an Explanation: cumulative share of |attribution|
    ax2 = gap_cumulative_weight(ex(X[350:355]), show=False)
    assert ax2 is not ax and len(ax2.get_lines()) == 5 + 2
    plt.close("all")


def test_scatter_and_histograms_draw_on_ax(fitted):
    X, _, _, P = fitted
    fig, (a, b) = plt.subplots(1, 2)
    assert gap_weighted_scatter(X[:350], weights=P[0], features=("bmi", "s5"), point=X.iloc[350], ax=a,
                                show=False) is a
    assert len(a.collections) == 3  # background, neighbours, point
    neighbours = a.collections[1]
    assert len(neighbours.get_offsets()) == P[0].nnz
    assert gap_weighted_histograms(X[:350], weights=P[0].toarray().ravel(), feature=2, point=X.iloc[350].to_numpy(),
                                   ax=b, show=False) is b
    heights = [p.get_height() for p in b.patches]
    assert len(heights) == 60 and min(heights) >= 0
    plt.close("all")


def test_scatter_with_labels():
    X, y = load_breast_cancer(return_X_y=True)
    model = RandomForestClassifier(20, random_state=0).fit(X[:400], y[:400])
    P = GapExplainer(model, X[:400], y=y[:400]).proximities(X[400:401])
    ax = gap_weighted_scatter(X[:400], weights=P, features=(7, 22), labels=y[:400], point=X[400], show=False)
    assert ax.get_xlabel() == "x7"
    assert len(ax.collections) == 4  # two classes, neighbours, point
    predicted = model.predict(X[400:401])[0]
    ax = gap_weighted_histograms(X[:400], weights=P, feature=7, mask=y[:400] == predicted, show=False)
    assert len(ax.patches) == 60  # unweighted and weighted bars of the predicted class
    plt.close("all")


def test_trust_deciles_bars_match_table():
    rng = np.random.default_rng(0)
    score = rng.uniform(size=300)
    error = score + rng.normal(0, 0.05, 300)
    ax = trust_deciles(score, error, show=False)
    heights = np.array([p.get_height() for p in ax.patches])
    assert heights.size == 10 and np.all(np.diff(heights) > 0)
    plt.close("all")


def test_plot_errors(fitted):
    X, _, _, P = fitted
    with pytest.raises(DataValidationError, match="one row"):
        gap_weighted_scatter(X[:350], weights=P[:2], show=False)
    with pytest.raises(DataValidationError, match="entries"):
        gap_weighted_histograms(X[:300], weights=P[0], show=False)
    with pytest.raises(DataValidationError, match="not a column"):
        gap_weighted_histograms(X[:350], weights=P[0], feature="nope", show=False)
    with pytest.raises(DataValidationError, match="two columns"):
        gap_weighted_scatter(X[:350], weights=P[0], features=("bmi",), show=False)
    with pytest.raises(DataValidationError, match="non-negative"):  # signed rows were silently drawn as w+ only
        gap_weighted_scatter(X[:350], weights=-P[0].toarray(), show=False)
    with pytest.raises(DataValidationError, match="finite"):
        gap_cumulative_weight(np.where(P.toarray() > 0, np.inf, 0.0), show=False)
    ax = gap_cumulative_weight(-P.toarray(), show=False)  # signed weights (boosting's) are read through |w|
    assert ax.get_ylabel() == "cumulative share of |weight|"
    with pytest.raises(DataValidationError, match="error is required"):
        trust_deciles(np.arange(20.0), show=False)
    with pytest.raises(DataValidationError, match="selects no"):
        gap_weighted_histograms(X[:350], weights=P[0], mask=np.zeros(350, bool), show=False)
    plt.close("all")
