"""The gallery: every (plot, explainer) pair drawn (Agg) and checked from the drawn figure (docs/pictures.md).

Read back from the figure, not from the explanation: no label ``<number> = <number>``, no "feature" in any text of a
picture over training rows, training rows named ``train[i] (y = <target>)`` with class labels (not codes), no colour
column constant down the explained rows (beeswarm), and a scatter x-axis that varies.
"""

import re

import matplotlib.pyplot as plt
import numpy as np
import pytest
from matplotlib.collections import PathCollection
from sklearn.datasets import load_breast_cancer, load_diabetes
from sklearn.ensemble import GradientBoostingClassifier, RandomForestClassifier, RandomForestRegressor
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.naive_bayes import GaussianNB
from sklearn.neighbors import KNeighborsClassifier

import shap_instances as si

NUMBER_EQUALS_NUMBER = re.compile(r"^\s*[-+−]?[\d.]+(e[-+]?\d+)? = [-+−]?[\d.]+(e[-+]?\d+)?\s*$")
ROW_LABEL = re.compile(r"^train\[\d+\] \(y = [^)]+\)$")
N_TRAIN, N_EXPLAINED = 30, 8


def _cases():
    X, y = load_diabetes(return_X_y=True)
    Xc, yc = load_breast_cancer(return_X_y=True)
    Xc = Xc[:, :6] / Xc[:, :6].std(0)
    labels = np.array(["malignant", "benign"])[yc]
    rows = np.r_[0:15, 19:34]  # both classes among the training rows
    explained = np.r_[100:104, 19:23]  # both predicted classes among the explained rows
    fit = (Xc[rows], labels[rows])
    return {
        "gap_regression": lambda: si.GapExplainer(
            RandomForestRegressor(10, random_state=0).fit(X[:N_TRAIN], y[:N_TRAIN]), X[:N_TRAIN], y=y[:N_TRAIN])(
            X[50:50 + N_EXPLAINED]),
        "gap_classification": lambda: si.GapExplainer(RandomForestClassifier(10, random_state=0).fit(*fit), fit[0],
                                                      y=fit[1])(Xc[explained])[..., 1],
        "boosting_classification": lambda: si.BoostingExplainer(
            GradientBoostingClassifier(n_estimators=10, random_state=0).fit(*fit), fit[0], y=fit[1])(Xc[explained]),
        "representer_ridge": lambda: si.RepresenterExplainer(Ridge(1.0).fit(X[:N_TRAIN], y[:N_TRAIN]), X[:N_TRAIN],
                                                             y=y[:N_TRAIN])(X[50:50 + N_EXPLAINED]),
        "representer_logistic": lambda: si.RepresenterExplainer(LogisticRegression().fit(*fit), fit[0],
                                                                y=fit[1])(Xc[explained]),
        "naive_bayes": lambda: si.NaiveBayesExplainer(GaussianNB().fit(*fit), fit[0])(Xc[explained]),
        "instance_kernel_regression": lambda: si.InstanceKernelExplainer(
            Ridge(1.0), X[:N_TRAIN], y=y[:N_TRAIN], silent=True)(X[50:50 + N_EXPLAINED], y[50:50 + N_EXPLAINED]),
        "knn_classification": lambda: _plugin("shap_instances_knn").KNNShapleyExplainer(
            KNeighborsClassifier(5).fit(*fit), fit[0], y=fit[1], silent=True)(Xc[explained], labels[explained]),
        "loo_regression": lambda: _plugin("shap_instances_loo").LeaveOneOutExplainer(
            Ridge(1.0).fit(X[:N_TRAIN], y[:N_TRAIN]), X[:N_TRAIN], y=y[:N_TRAIN], silent=True)(X[50:50 + N_EXPLAINED]),
    }


def _plugin(name):
    """The example plugin ``name`` (plugins/), skipped where it is not installed."""
    return pytest.importorskip(name)


PLOTS = {
    "waterfall": lambda e: si.plots.waterfall(e[0], show=False),
    "bar": lambda e: si.plots.bar(e, show=False),
    "beeswarm": lambda e: si.plots.beeswarm(e, show=False),
    "heatmap": lambda e: si.plots.heatmap(e, show=False),
    "scatter": lambda e: si.plots.scatter(e[:, int(np.abs(e.values).sum(0).argmax())], show=False),
    "force": lambda e: si.plots.force(e[0], show=False),
    "decision": lambda e: si.plots.decision(e, show=False),
    "violin": lambda e: si.plots.violin(e, max_display=4, show=False),
}
_CACHE: dict = {}


def _explanation(name):
    if name not in _CACHE:
        _CACHE[name] = _cases()[name]()
    return _CACHE[name]


def _texts(figure):
    texts = []
    for ax in figure.axes:
        texts += [t.get_text() for t in ax.get_yticklabels() + ax.get_xticklabels() + ax.texts]
        texts += [ax.get_xlabel(), ax.get_ylabel(), ax.get_title()]
    return [t for t in texts if t]


#: Pairs drawn in the default run (about 10 s); every other pair runs with the slow tests.
DEFAULT_CASES = {"gap_regression", "boosting_classification"}
DEFAULT_PLOTS = {"waterfall", "bar", "beeswarm", "scatter", "force"}
DEFAULT_PAIRS = {(case, plot) for case in DEFAULT_CASES for plot in DEFAULT_PLOTS} | {
    ("instance_kernel_regression", "beeswarm"), ("knn_classification", "waterfall"), ("loo_regression", "scatter")}
PAIRS = [(case, plot) if (case, plot) in DEFAULT_PAIRS else
         pytest.param(case, plot, marks=pytest.mark.slow) for case in sorted(_cases()) for plot in PLOTS]


@pytest.mark.parametrize(("case", "plot"), PAIRS)
def test_every_picture_tells_the_truth(case, plot):
    e = _explanation(case)
    instances = case != "naive_bayes"
    drawn = PLOTS[plot](e)
    figure = drawn if hasattr(drawn, "axes") and not hasattr(drawn, "figure") else plt.gcf()
    try:
        texts = _texts(figure)
        assert texts, f"{plot} of {case}: no text drawn"
        assert not [t for t in texts if NUMBER_EQUALS_NUMBER.match(t)], texts
        if instances:
            assert not [t for t in texts if "feature" in t.lower()], texts
            named = [t for t in texts if not _is_axis_text(t)]
            if plot != "scatter" and named:  # shap's force plot names only the larger forces
                rows = [t for t in texts if ROW_LABEL.match(t)]
                assert rows, f"{plot} of {case}: no training row named train[i] (y = ...): {texts[:12]}"
                if "classification" in case or "logistic" in case:
                    assert {r.split("(y = ")[1][:-1] for r in rows} <= {"malignant", "benign"}, rows
            _check_colours_and_axes(figure, plot, case)
    finally:
        plt.close("all")


def _is_axis_text(text):
    """A number on a value axis, or the force plot's own words."""
    return bool(re.match(r"^[-+−]?[\d.]+$", text.strip())) or text in (
        "higher", "lower", "base value", "f(x)", "$f(x)$", "$\\leftarrow$", "$\\rightarrow$")


def _check_colours_and_axes(figure, plot, case):
    dots = [c for ax in figure.axes for c in ax.collections
            if isinstance(c, PathCollection) and len(c.get_offsets()) > 1]
    if plot == "beeswarm":
        colours = [np.asarray(c.get_array()) for c in dots if c.get_array() is not None]
        assert colours, f"beeswarm of {case}: no coloured dots"
        constant = [i for i, c in enumerate(colours) if np.ptp(c) == 0]
        assert not constant, f"beeswarm of {case}: colour constant down rows {constant}"
    if plot == "scatter":
        x = np.concatenate([np.asarray(c.get_offsets())[:, 0] for c in dots])
        assert np.ptp(x) > 0, f"scatter of {case}: the x-axis is one value"
        ax = figure.axes[0]
        ticks = [t.get_text() for t in ax.get_xticklabels() if t.get_text()]
        assert len(ticks) > 1, f"scatter of {case}: one tick on the x-axis {ticks} (a text drawn as a category)"
        assert "SHAP value for" not in ax.get_ylabel(), f"scatter of {case}: y-axis {ax.get_ylabel()!r}"


def test_the_checks_fail_on_shaps_own_labels():
    """The gallery's checks catch what shap draws unaided (a test that cannot fail is a defect)."""
    import shap

    e = _explanation("gap_regression")
    shap.plots.waterfall(e[0], show=False)
    texts = _texts(plt.gcf())
    plt.close("all")
    assert [t for t in texts if "feature" in t] and not [t for t in texts if ROW_LABEL.match(t)]
    shap.plots.scatter(e[:, 0], show=False)  # x from display_data: the row's one target text, a lone tick
    with pytest.raises(AssertionError, match="one tick"):
        _check_colours_and_axes(plt.gcf(), "scatter", "gap_regression")
    plt.close("all")
    e.data = np.broadcast_to(np.arange(e.shape[1], dtype=np.float32), e.shape)  # the old data: y, constant down
    shap.plots.beeswarm(e, show=False)
    with pytest.raises(AssertionError, match="constant"):
        _check_colours_and_axes(plt.gcf(), "beeswarm", "gap_regression")
    plt.close("all")
