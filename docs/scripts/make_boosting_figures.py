"""Figures and tables of docs/explainers/boosting.md: ``python docs/scripts/make_boosting_figures.py``.

``python docs/scripts/make_boosting_figures.py trust`` redoes the trust section only. Writes
``docs/figures/boosting_*.png`` and prints the tables (markdown) quoted on the page: how concentrated
the target weights of a gradient-boosted model are, next to the RF-GAP weights of a random forest fitted on
the same data, and how that depends on the number of trees and the learning rate; then the trust scores of
signed weights on the concrete data (five folds, each held-out fold scored by a model fitted on the others,
next to GapExplainer's on a forest), with the shared plots (cumulative weight, predictive distribution,
weighted histogram, trust deciles).

Under ``python benchmarks/run_all.py figures boosting`` it records the numbers the page quotes
(``benchmarks/results/fig-boosting.json``): the tables as parts (``part:concentration``, ``part:trust``,
``part:quintiles``) and the figures its prose cites, rounded as the page shows them.
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
from sklearn.ensemble import GradientBoostingClassifier, GradientBoostingRegressor, RandomForestRegressor  # noqa: E402
from sklearn.model_selection import KFold  # noqa: E402

from shap_instances import BoostingExplainer, GapExplainer  # noqa: E402
from shap_instances.boosting._kernels import reach_sets  # noqa: E402
from shap_instances.datasets import load_concrete  # noqa: E402
from shap_instances.plots import (  # noqa: E402
    gap_cumulative_weight,
    gap_predictive_distribution,
    gap_weighted_histograms,
    trust_deciles,
)
from shap_instances.weighted_targets import trust_decile_table  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from _common import record  # noqa: E402

OUT = Path(__file__).resolve().parents[1] / "figures"
#: Short names of the concentration table's statistics, for the recorded values (``NAME.n90``, ...).
SHORT = {"rows carrying 90% of the absolute weight": "n90", "effective number of rows": "effective",
         "largest absolute weight": "largest", "negative share of the absolute weight": "negative_share",
         "total absolute weight": "total"}


def significant(value: float, digits: int = 3) -> float:
    """``value`` rounded to ``digits`` significant digits, as the tables print it."""
    return float(f"{value:.{digits}g}")


def save(fig, name):
    OUT.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(OUT / f"boosting_{name}.png", dpi=90)
    plt.close(fig)
    print(f"wrote docs/figures/boosting_{name}.png ({(OUT / f'boosting_{name}.png').stat().st_size / 1024:.0f} KB)")


def concentration(W: np.ndarray, level: float = 0.9) -> dict[str, float]:
    """Per-row statistics of weight rows, averaged (medians for counts)."""
    a = np.abs(W)
    totals = a.sum(axis=1, keepdims=True)
    ordered = -np.sort(-a, axis=1)
    cumulative = np.cumsum(ordered, axis=1) / totals
    n_level = (cumulative < level - 1e-12).sum(axis=1) + 1
    effective = totals[:, 0] ** 2 / (W**2).sum(axis=1)
    return {
        "rows carrying 90% of the absolute weight": float(np.median(n_level)),
        "effective number of rows": float(np.median(effective)),
        "largest absolute weight": float(np.median(a.max(axis=1))),
        "negative share of the absolute weight": float(np.mean(np.where(W < 0, a, 0).sum(axis=1) / totals[:, 0])),
        "total absolute weight": float(np.mean(totals)),
    }


def table(rows: dict[str, dict[str, float]]) -> str:
    names = list(next(iter(rows.values())))
    lines = ["| model | " + " | ".join(names) + " |", "|---" * (len(names) + 1) + "|"]
    for model, stats in rows.items():
        lines.append(f"| {model} | " + " | ".join(f"{stats[k]:.3g}" for k in names) + " |")
    return "\n".join(lines)


def main():
    # ---------------------------------------------------------------- diabetes: boosting next to RF-GAP
    X, y = load_diabetes(return_X_y=True, as_frame=True)
    X_train, X_test, y_train, y_test = X[:400], X[400:], y[:400], y[400:]
    gbm = GradientBoostingRegressor(n_estimators=100, max_depth=3, learning_rate=0.1, random_state=0)
    gbm.fit(X_train, y_train)
    forest = RandomForestRegressor(100, min_samples_leaf=5, random_state=0).fit(X_train, y_train)
    boosting = BoostingExplainer(gbm, X_train, y=y_train)
    gap = GapExplainer(forest, X_train, y=y_train)
    W = boosting.weights(X_test)
    P = gap.proximities(X_test, dense=True)
    print("reconstruction (relative):", float(np.max(np.abs(W @ y_train - gbm.predict(X_test)) / gbm.predict(X_test))))
    gap_relative = float(np.max(np.abs(W @ y_train - gbm.predict(X_test)) / gbm.predict(X_test)))
    record(reconstruction=significant(gap_relative, 1))
    print(f"test R^2: boosting {gbm.score(X_test, y_test):.3f}, forest {forest.score(X_test, y_test):.3f}")
    rows = {"GradientBoosting, 100 trees, depth 3, lr 0.1": concentration(W), "RandomForest (RF-GAP), 100 trees":
            concentration(P)}
    for T, lr in ((10, 0.1), (100, 0.3), (300, 0.1)):
        model = GradientBoostingRegressor(n_estimators=T, max_depth=3, learning_rate=lr, random_state=0)
        model.fit(X_train, y_train)
        rows[f"GradientBoosting, {T} trees, depth 3, lr {lr}"] = concentration(
            BoostingExplainer(model, X_train, y=y_train).weights(X_test))
    print("\n### concentration of the weights (42 held-out diabetes rows; medians, negative share a mean)\n")
    print(table(rows))
    record(**{"part:concentration": table(rows)})
    for key, short in zip(rows, ("boosting", "forest", "boosting_10", "boosting_lr03", "boosting_300"), strict=True):
        record(**{f"{short}.{SHORT[name]}": significant(value) for name, value in rows[key].items()})

    trees = boosting.trees_
    query = trees.apply(boosting._check_X(X_test))
    reached = reach_sets(query, trees.train_leaves, trees.n_leaves, trees.row_weight)
    print(f"\nrows outside the reach set of a held-out row: {np.mean(~reached):.4f} (100 trees)")
    record(reach_percent_100_trees=round(100 * float(np.mean(reached)), 1))
    model = GradientBoostingRegressor(n_estimators=3, max_depth=3, random_state=0).fit(X_train, y_train)
    few = BoostingExplainer(model, X_train, y=y_train).trees_
    reached = reach_sets(few.apply(X_test.to_numpy()), few.train_leaves, few.n_leaves, few.row_weight)
    print(f"rows outside the reach set with 3 trees: {np.mean(~reached):.3f}")
    record(reach_percent_3_trees=round(100 * float(np.mean(reached))))
    self_weight = np.diag(boosting.weights())
    print(f"in-sample self-weight w_i(x_i): median {np.median(self_weight):.3f}, max {self_weight.max():.3f}")
    record(self_weight_median=round(float(np.median(self_weight)), 2),
           self_weight_max=round(float(self_weight.max()), 2))

    # cumulative |weight| against the number of training rows
    fig, ax = plt.subplots(figsize=(6, 4))
    for matrix, label, colour in ((W, "gradient boosting (target weights)", "#FF0051"),
                                  (P, "random forest (RF-GAP)", "#1E88E5")):
        a = -np.sort(-np.abs(matrix), axis=1)
        curve = np.cumsum(a, axis=1) / a.sum(axis=1, keepdims=True)
        ranks = np.arange(1, curve.shape[1] + 1)
        for row in curve[:20]:
            ax.plot(ranks, row, color=colour, alpha=0.15, linewidth=0.8)
        ax.plot(ranks, curve.mean(axis=0), color=colour, linewidth=2, label=label)
    ax.axhline(0.9, color="grey", linestyle="--", linewidth=1)
    ax.set_xscale("log")
    ax.set_xlabel("number of training rows (largest |weight| first)")
    ax.set_ylabel("cumulative share of sum |weight|")
    ax.legend(frameon=False, loc="lower right")
    save(fig, "cumulative_weight")

    # one held-out row: its weights under both models, and the boosting weights sorted
    j = 0
    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    axes[0].scatter(P[j], W[j], s=8, color="#333333")
    axes[0].axhline(0, color="grey", linewidth=0.8)
    axes[0].set_xlabel(f"RF-GAP weight of each training row for {X_test.index[j]}")
    axes[0].set_ylabel("gradient-boosting target weight")
    order = np.argsort(W[j])
    axes[1].bar(np.arange(len(order)), W[j][order], color=np.where(W[j][order] < 0, "#1E88E5", "#FF0051"), width=1.0)
    axes[1].set_xlabel("training rows, sorted by weight")
    axes[1].set_ylabel("target weight w_j(x)")
    save(fig, "one_row")

    # shap's waterfall of the explanation of that row (values w_j(x) (y_j - mean y))
    e = boosting(X_test.iloc[[j]])
    shap.plots.waterfall(e[0], max_display=12, show=False)
    fig = plt.gcf()
    fig.set_size_inches(8, 5)
    save(fig, "waterfall")

    # ---------------------------------------------------------------- breast cancer: gradient contributions
    Xc, yc = load_breast_cancer(return_X_y=True, as_frame=True)
    clf = GradientBoostingClassifier(n_estimators=100, max_depth=2, random_state=0).fit(Xc[:450], yc[:450])
    explainer = BoostingExplainer(clf, Xc[:450], y=yc[:450])
    ec = explainer(Xc[450:])
    margin = clf.decision_function(Xc[450:])
    print("\nclassifier reconstruction (relative):",
          float(np.max(np.abs(ec.base_values + ec.values.sum(1) - margin) / np.maximum(1, np.abs(margin)))))
    print("classifier concentration of |contributions|:", concentration(ec.values))
    row = int(np.argmin(np.abs(margin)))  # the least certain held-out row
    values = ec.values[row]
    top = np.argsort(-np.abs(values))[:15][::-1]
    fig, ax = plt.subplots(figsize=(7, 5))
    colours = np.where(yc[:450].to_numpy()[top] == 1, "#FF0051", "#1E88E5")
    ax.barh([str(Xc.index[i]) for i in top], values[top], color=colours)
    ax.axvline(0, color="grey", linewidth=0.8)
    ax.set_xlabel("contribution to the log-odds of class 1 (red: training row of class 1)")
    ax.set_title(f"held-out row {Xc.index[450 + row]}: margin {margin[row]:.2f}, base {ec.base_values[row]:.2f}")
    save(fig, "classifier_contributions")

    trust()


def trust():
    """Trust scores of signed weights on concrete (1,030 rows), five folds, next to GapExplainer's."""
    X, y = load_concrete()
    folds = KFold(5, shuffle=True, random_state=0).split(X)
    frames = {"boosting": [], "forest": []}
    for k, (train, test) in enumerate(folds):
        X_train, y_train, X_test, y_test = X.iloc[train], y.iloc[train], X.iloc[test], y.iloc[test]
        gbm = GradientBoostingRegressor(n_estimators=300, max_depth=3, learning_rate=0.1, random_state=0)
        gbm.fit(X_train, y_train)
        forest = RandomForestRegressor(200, min_samples_leaf=2, random_state=0).fit(X_train, y_train)
        boosting = BoostingExplainer(gbm, X_train, y=y_train)
        gap = GapExplainer(forest, X_train, y=y_train)
        for name, scores in (("boosting", boosting.trust_scores(X_test)), ("forest", gap.trust_scores(X_test))):
            scores["error"] = np.abs(y_test.to_numpy() - scores["prediction"].to_numpy())
            scores["truth"] = y_test.to_numpy()
            frames[name].append(scores)
        if k == 0:
            first = (boosting, gap, X_train, X_test, y_test)
    boosting_scores = pd.concat(frames["boosting"])
    forest_scores = pd.concat(frames["forest"])

    print("\n### trust scores on concrete (1,030 rows, 5 folds: every row scored once, out of sample)\n")
    lines = ["| model | test MAE | Spearman(weighted training error, test error) | mean weighted training error | "
             "coverage of [q10, q90] | mean width of [q10, q90] | rows for 90% of sum abs w | mean total abs weight | "
             "mean negative share |", "|---" * 9 + "|"]
    for name, scores, column in (("GradientBoosting, 300 trees, depth 3 (BoostingExplainer)", boosting_scores,
                                  "weighted_loo_error"),
                                 ("RandomForest, 200 trees (GapExplainer)", forest_scores, "weighted_oob_error")):
        rho = spearmanr(scores[column], scores["error"]).statistic
        inside = ((scores["truth"] >= scores["q10"]) & (scores["truth"] <= scores["q90"])).mean()
        total = scores.get("total_abs_weight", pd.Series(1.0, index=scores.index)).mean()
        negative = scores.get("negative_share", pd.Series(0.0, index=scores.index)).mean()
        short = "boosting" if column == "weighted_loo_error" else "forest"
        record(**{f"trust.{short}.mae": round(scores["error"].mean(), 2), f"trust.{short}.spearman": round(rho, 2),
                  f"trust.{short}.mean_error": round(scores[column].mean(), 2),
                  f"trust.{short}.coverage_percent": round(100 * inside), f"trust.{short}.total": round(total, 2),
                  f"trust.{short}.n90": int(scores["n_neighbours_90"].median()),
                  f"trust.{short}.negative_share": round(negative, 3)})
        lines.append(f"| {name} | {scores['error'].mean():.2f} | {rho:.2f} | {scores[column].mean():.2f} | "
                     f"{inside:.2f} | {(scores['q90'] - scores['q10']).mean():.1f} | "
                     f"{scores['n_neighbours_90'].median():.0f} | {total:.2f} | {negative:.3f} |")
    print("\n".join(lines))
    record(**{"part:trust": "\n".join(lines)})
    table = trust_decile_table(boosting_scores["weighted_loo_error"], boosting_scores["error"], n_bins=5)
    print("\n### boosting: test error by quintile of weighted_loo_error\n")
    quintiles = ["| quintile | n | mean weighted_loo_error | mean test error | standard error |",
                 "|---|---|---|---|---|"]
    quintiles += [f"| {row.bin} | {row.n} | {row.score_mean:.3g} | {row.error_mean:.3g} | {row.error_sem:.2g} |"
                  for row in table.itertuples()]
    print("\n".join(quintiles))
    record(**{"part:quintiles": "\n".join(quintiles), "quintile.rows": int(table["n"].iloc[0]),
              "quintile.first_error": significant(table["error_mean"].iloc[0], 2),
              "quintile.last_error": significant(table["error_mean"].iloc[-1], 2)})
    rho = spearmanr(boosting_scores["weighted_loo_error"], forest_scores["weighted_oob_error"]).statistic
    print(f"\nSpearman(boosting weighted_loo_error, forest weighted_oob_error) = {rho:.2f}")
    record(spearman_boosting_forest=round(float(rho), 2))

    fig, ax = plt.subplots(figsize=(6, 4))
    trust_deciles(table, ax=ax, show=False, xlabel="weighted_loo_error quintile (BoostingExplainer, concrete)")
    save(fig, "trust_deciles")

    boosting, gap, X_train, X_test, y_test = first
    W = boosting.weights(X_test)
    j = int(np.argmax(np.abs(W).sum(axis=1)))  # the held-out row with the most negative weight
    fig, axes = plt.subplots(1, 3, figsize=(16, 4.6))
    gap_cumulative_weight(W, ax=axes[0], show=False, max_rows=40)
    axes[0].set_title("cumulative share of |w|, 40 held-out rows")
    gap_predictive_distribution(boosting, weights=W[j], true_value=y_test.iloc[j], errors="loo", ax=axes[1],
                                show=False)
    axes[1].set_title(f"targets weighted by row {X_test.index[j]}'s weights")
    axes[1].set_ylim(top=axes[1].get_ylim()[1] * 1.9)  # room for the legend above the bars
    axes[1].legend(loc="upper left", fontsize=6, ncol=2, frameon=False)
    gap_weighted_histograms(X_train, weights=W[j], feature="age", point=X_test.iloc[j], ax=axes[2], show=False)
    axes[2].set_title("age of the training rows, weighted the same way")
    save(fig, "trust_plots")
    prediction = float(W[j] @ boosting.y_train_)
    print(f"\nplotted row {X_test.index[j]}: prediction {prediction:.2f}, true {y_test.iloc[j]:.2f}, "
          f"sum |w| {np.abs(W[j]).sum():.2f}")


if __name__ == "__main__":
    trust() if sys.argv[1:] == ["trust"] else main()  # "trust": only the concrete section
