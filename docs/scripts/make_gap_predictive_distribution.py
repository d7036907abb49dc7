"""Predictive-distribution figure of docs/explainers/gap.md (Rosaler et al., figures 3 and 6).

``python docs/scripts/make_gap_predictive_distribution.py`` writes ``docs/figures/gap_predictive_distribution.png``
and prints the numbers quoted on the page and in docs/reproductions.md: for the worst and the best predicted
test point of the diabetes forest of the worked example, the prediction, the realised target, the 10-90% range
of the weighted distribution, and the proximity-weighted training error beside the training error of all
points, out of bag (ours) and in sample (the paper's "training error", for comparison). Under ``run_all.py`` it
records the claims ``fig3_6.*`` of ``_reproductions.py`` (one split): whether the worst prediction's weighted
training error lies above the training MAE and the best one's below it (in sample, as the paper; out of bag
recorded beside), and whether the worst one's predictive distribution (q10-q90) is wider.
"""

from __future__ import annotations

import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from sklearn.datasets import load_diabetes  # noqa: E402
from sklearn.ensemble import RandomForestRegressor  # noqa: E402
from sklearn.model_selection import train_test_split  # noqa: E402

from shap_instances import GapExplainer  # noqa: E402
from shap_instances.plots import gap_predictive_distribution  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from _common import record  # noqa: E402

OUT = Path(__file__).resolve().parents[1] / "figures"


def main():
    X, y = load_diabetes(return_X_y=True, as_frame=True)
    X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.25, random_state=0)
    forest = RandomForestRegressor(300, min_samples_leaf=5, oob_score=True, random_state=0).fit(X_tr, y_tr)
    ex = GapExplainer(forest, X_tr, y=y_tr)
    P = ex.proximities(X_te)
    prediction = forest.predict(X_te)
    print("max |P y - predict| =", np.abs(P @ y_tr.to_numpy() - prediction).max(),
          "; max |row sum - 1| =", np.abs(np.asarray(P.sum(axis=1)).ravel() - 1).max())
    oob_errors = np.abs(y_tr.to_numpy() - ex.oob_predictions()[:, 0])
    in_sample = np.abs(y_tr.to_numpy() - forest.predict(X_tr))
    print(f"training MAE: out of bag {oob_errors.mean():.2f}, in sample {in_sample.mean():.2f}")
    scores = ex.trust_scores(X_te)
    test_error = np.abs(y_te.to_numpy() - prediction)
    weighted_in_sample = np.asarray(P @ in_sample).ravel()
    rank = scores["weighted_oob_error"].rank(pct=True).to_numpy()
    worst, best = int(np.argmax(test_error)), int(np.argmin(test_error))
    fig, axes = plt.subplots(1, 2, figsize=(11, 4), sharey=True)
    for ax, (tag, j) in zip(axes, (("worst prediction", worst), ("best prediction", best))):
        gap_predictive_distribution(ex, weights=P[j], true_value=y_te.iloc[j], errors="oob", ax=ax, show=False)
        ax.set_title(f"diabetes, {tag} (test row {j})", fontsize=10)
        ax.set_xlabel("disease progression")
        s = scores.iloc[j]
        print(f"{tag}: test row {j}, predicted {prediction[j]:.1f}, true {y_te.iloc[j]:.0f}, |error| "
              f"{test_error[j]:.1f}; q10-q90 {s['q10']:.0f}-{s['q90']:.0f}; weighted training error: out of bag "
              f"{s['weighted_oob_error']:.2f} (percentile {100 * rank[j]:.0f} among test points), in sample "
              f"{weighted_in_sample[j]:.2f}")
    fig.tight_layout()
    OUT.mkdir(parents=True, exist_ok=True)
    fig.savefig(OUT / "gap_predictive_distribution.png", dpi=90)
    plt.close(fig)
    print("wrote docs/figures/gap_predictive_distribution.png")
    record(**{"fig3_6.worst_above_training": [bool(weighted_in_sample[worst] > in_sample.mean())],
              "fig3_6.best_below_training": [bool(weighted_in_sample[best] < in_sample.mean())],
              "fig3_6.worst_wider": [bool(scores["q90"].iloc[worst] - scores["q10"].iloc[worst]
                                          > scores["q90"].iloc[best] - scores["q10"].iloc[best])],
              "weighted_in_sample": {"worst": float(weighted_in_sample[worst]), "best": float(weighted_in_sample[best]),
                                     "training_mae": float(in_sample.mean())},
              "weighted_oob": {"worst": float(scores["weighted_oob_error"].iloc[worst]),
                               "best": float(scores["weighted_oob_error"].iloc[best]),
                               "training_mae": float(oob_errors.mean())}})
    errors = pd.Series(test_error, index=scores.index)
    spread = scores["q90"] - scores["q10"]
    weighted = scores["weighted_oob_error"]
    print(f"Spearman with |test error| over the {len(errors)} test points: q90 - q10 "
          f"{spread.corr(errors, 'spearman'):.2f}, weighted OOB error {weighted.corr(errors, 'spearman'):.2f}")


if __name__ == "__main__":
    main()
