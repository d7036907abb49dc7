"""Figures and tables of docs/explainers/gap.md: ``python docs/scripts/make_gap_figures.py``.

Writes ``docs/figures/gap_*.png`` and prints the decile tables (markdown) quoted on the page, with the paper's
outlier ratio (Fig. 11) beside our outlier margin. Under ``run_all.py`` it records the claims ``fig1.*``,
``fig2.*``, ``fig9.*``, ``fig10.*``, ``fig11.*`` and ``fig12_15.*`` of ``_reproductions.py`` (one split and
forest): the share of the training set carrying nine tenths of a prediction's weight, whether each decile curve
rises (Spearman of the bin's rank with its mean above 0) and is monotone, and the wrong and the right
classification's probability and outlier ratio.
"""

from __future__ import annotations

import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import shap  # noqa: E402
from scipy.stats import spearmanr  # noqa: E402
from sklearn.datasets import load_breast_cancer, load_diabetes  # noqa: E402
from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor  # noqa: E402
from sklearn.model_selection import KFold, StratifiedKFold, train_test_split  # noqa: E402

from shap_instances import GapExplainer  # noqa: E402
from shap_instances.plots import (  # noqa: E402
    gap_cumulative_weight,
    gap_weighted_histograms,
    gap_weighted_scatter,
    trust_deciles,
)
from shap_instances.weighted_targets import trust_decile_table  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from _common import record  # noqa: E402

OUT = Path(__file__).resolve().parents[1] / "figures"


def save(fig, name):
    OUT.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(OUT / f"gap_{name}.png", dpi=90)
    plt.close(fig)
    print(f"wrote docs/figures/gap_{name}.png ({(OUT / f'gap_{name}.png').stat().st_size / 1024:.0f} KB)")


def markdown(table: pd.DataFrame, score: str, error: str) -> str:
    lines = [f"| {score} bin | n | mean {score} | {error} | s.e. |", "|---|---|---|---|---|"]
    for row in table.itertuples():
        lines.append(f"| {row.bin} | {row.n} | {row.score_mean:.3g} | {row.error_mean:.3g} | {row.error_sem:.2g} |")
    return "\n".join(lines)


def main():
    # ---------------------------------------------------------------- worked examples (train/test splits)
    Xd, yd = load_diabetes(return_X_y=True, as_frame=True)
    Xd_tr, Xd_te, yd_tr, yd_te = train_test_split(Xd, yd, test_size=0.25, random_state=0)
    reg = RandomForestRegressor(300, min_samples_leaf=5, oob_score=True, random_state=0).fit(Xd_tr, yd_tr)
    ex_reg = GapExplainer(reg, Xd_tr, y=yd_tr)
    P_reg = ex_reg.proximities(Xd_te)
    e = ex_reg(Xd_te)
    print("diabetes: max |base + sum - predict| =",
          np.abs(e.base_values + e.values.sum(1) - reg.predict(Xd_te)).max())
    print("diabetes: max |P_oob y - oob_prediction_| =",
          np.abs(ex_reg.proximities() @ yd_tr.to_numpy() - reg.oob_prediction_).max())

    data = load_breast_cancer(as_frame=True)
    Xc, yc = data.data, data.target
    Xc_tr, Xc_te, yc_tr, yc_te = train_test_split(Xc, yc, test_size=0.3, random_state=0, stratify=yc)
    clf = RandomForestClassifier(300, random_state=0).fit(Xc_tr, yc_tr)
    ex_clf = GapExplainer(clf, Xc_tr, y=yc_tr)
    P_clf = ex_clf.proximities(Xc_te)

    fig, axes = plt.subplots(1, 2, figsize=(10, 3.8))
    gap_cumulative_weight(P_reg, ax=axes[0], show=False)
    axes[0].set_title(f"diabetes regression ({len(yd_tr)} training points)")
    gap_cumulative_weight(P_clf, ax=axes[1], show=False)
    axes[1].set_title(f"breast cancer classification ({len(yc_tr)} training points)")
    save(fig, "cumulative_weight")
    from shap_instances.weighted_targets import neighbours_for_weight

    neighbours = {"diabetes": np.median(neighbours_for_weight(P_reg)) / len(yd_tr),
                  "breast cancer": np.median(neighbours_for_weight(P_clf)) / len(yc_tr)}
    print("median neighbours for 90% of the weight: diabetes", np.median(neighbours_for_weight(P_reg)),
          "breast cancer", np.median(neighbours_for_weight(P_clf)),
          "; as shares of the training sets: " + ", ".join(f"{k} {v:.3f}" for k, v in neighbours.items()))
    record(**{"fig1.share": [float(neighbours["diabetes"])], "fig1.minority": [bool(neighbours["diabetes"] < 0.5)],
              "fig9.more_than_regression": [bool(neighbours["breast cancer"] > neighbours["diabetes"])]})

    # top-2 SHAP features of the classifier, one wrong and one confident right prediction
    shap_values = shap.TreeExplainer(clf).shap_values(Xc_te)
    sv = shap_values[..., 1] if np.ndim(shap_values) == 3 else shap_values[1]
    top = list(Xc.columns[np.argsort(-np.abs(sv).mean(0))[:2]])
    print("top SHAP features:", top)
    scores = ex_clf.trust_scores(Xc_te)
    predicted = clf.predict(Xc_te)
    wrong = np.flatnonzero(predicted != yc_te.to_numpy())
    right = np.flatnonzero(predicted == yc_te.to_numpy())
    j_bad = wrong[np.argmin(scores["class_probability"].to_numpy()[wrong])] if wrong.size else 0
    j_good = right[np.argmax(scores["class_probability"].to_numpy()[right])]
    for tag, j in (("wrong", j_bad), ("right", j_good)):
        s = scores.iloc[j]
        print(f"{tag}: test row {j}, true {yc_te.iloc[j]}, predicted {predicted[j]}, class_probability "
              f"{s['class_probability']:.3f}, outlier_margin {s['outlier_margin']:.2f}, outlier_ratio "
              f"{s['outlier_ratio']:.2f}, n_neighbours_90 {s['n_neighbours_90']}")
    record_examples(scores.iloc[j_bad], scores.iloc[j_good])
    fig, axes = plt.subplots(1, 2, figsize=(10, 4.2))
    for ax, (tag, j) in zip(axes, (("misclassified", j_bad), ("confident and right", j_good))):
        gap_weighted_scatter(Xc_tr, weights=P_clf[j], features=top, point=Xc_te.iloc[j], labels=yc_tr.to_numpy(),
                             ax=ax, show=False)
        ax.set_title(f"{tag}: p = {scores['class_probability'].iloc[j]:.2f}")
    save(fig, "weighted_scatter")
    fig, axes = plt.subplots(2, 2, figsize=(10, 6.4))
    for row, (tag, j) in enumerate((("misclassified", j_bad), ("confident and right", j_good))):
        mask = yc_tr.to_numpy() == predicted[j]
        for col, feature in enumerate(top):
            gap_weighted_histograms(Xc_tr, weights=P_clf[j], feature=feature, point=Xc_te.iloc[j], mask=mask,
                                    ax=axes[row, col], show=False)
            axes[row, col].set_title(f"{tag}: {feature}", fontsize=10)
    save(fig, "weighted_histograms")

    # ---------------------------------------------------------------- trust deciles (5-fold cross-fitting)
    score, error = np.zeros(len(yd)), np.zeros(len(yd))
    for train, test in KFold(5, shuffle=True, random_state=0).split(Xd):
        model = RandomForestRegressor(200, min_samples_leaf=5, random_state=0).fit(Xd.iloc[train], yd.iloc[train])
        s = GapExplainer(model, Xd.iloc[train], y=yd.iloc[train]).trust_scores(Xd.iloc[test])
        score[test] = s["weighted_oob_error"]
        error[test] = np.abs(yd.iloc[test] - model.predict(Xd.iloc[test]))
    table_reg = trust_decile_table(score, error)
    prob, margin, ratio, correct = np.zeros(len(yc)), np.zeros(len(yc)), np.zeros(len(yc)), np.zeros(len(yc))
    for train, test in StratifiedKFold(5, shuffle=True, random_state=0).split(Xc, yc):
        model = RandomForestClassifier(200, random_state=0).fit(Xc.iloc[train], yc.iloc[train])
        s = GapExplainer(model, Xc.iloc[train], y=yc.iloc[train]).trust_scores(Xc.iloc[test])
        prob[test], margin[test], ratio[test] = s["class_probability"], s["outlier_margin"], s["outlier_ratio"]
        correct[test] = model.predict(Xc.iloc[test]) == yc.iloc[test]
    table_prob = trust_decile_table(prob, correct, n_bins=5)
    table_margin = trust_decile_table(margin, correct)
    defined = ~np.isnan(ratio)  # 0 / 0 where both z-scores are 0
    table_ratio = trust_decile_table(ratio[defined], correct[defined])
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.2))
    trust_deciles(table_reg, ax=axes[0], show=False, xlabel="weighted OOB error of the neighbours (decile)",
                  ylabel="mean absolute test error")
    axes[0].set_title("diabetes regression")
    trust_deciles(table_prob, ax=axes[1], show=False, xlabel="proximity-weighted class probability (quintile)",
                  ylabel="test accuracy")
    axes[1].set_title("breast cancer")
    trust_deciles(table_margin, ax=axes[2], show=False, xlabel="outlier margin (decile)", ylabel="test accuracy")
    axes[2].set_title("breast cancer")
    save(fig, "trust_deciles")
    print("\n" + markdown(table_reg, "weighted OOB error", "mean abs test error"))
    print("\n" + markdown(table_prob, "class probability", "test accuracy"))
    print("\n" + markdown(table_margin, "outlier margin", "test accuracy"))
    print(f"\n{int((~defined).sum())} points with an undefined outlier ratio (0 / 0) left out:\n\n"
          + markdown(table_ratio, "outlier ratio", "test accuracy"))
    record(**trend("fig2", table_reg), **trend("fig10", table_prob), **trend("fig11", table_ratio),
           **{"fig11.undefined_ratios": int((~defined).sum())})


def trend(key, table):
    """Whether the mean error (accuracy) of a decile table rises with the bin (Spearman of the bin's rank with its
    mean above 0) and is monotone (no step down), with the means."""
    means = table["error_mean"].to_numpy()
    return {f"{key}.rising": [bool(spearmanr(np.arange(len(means)), means)[0] > 0)],
            f"{key}.monotone": [bool(np.all(np.diff(means) >= 0))], f"{key}.means": means.tolist()}


def record_examples(wrong, right):
    """Figs. 12-15: the class probability and the outlier ratio of the wrong and of the right classification."""
    record(**{"fig12_15.wrong.probability": [float(wrong["class_probability"])],
              "fig12_15.right.probability": [float(right["class_probability"])],
              "fig12_15.wrong.ratio": [float(wrong["outlier_ratio"])],
              "fig12_15.right.ratio": [float(right["outlier_ratio"])],
              "fig12_15.probability_lower": [bool(wrong["class_probability"] < right["class_probability"])],
              "fig12_15.ratio_lower": [bool(wrong["outlier_ratio"] < right["outlier_ratio"])]})


if __name__ == "__main__":
    main()
