"""Seed 004's Figs. 4, 5, 7 and 8: SHAP and proximity views of one bad and one good prediction, and the claim measured.

Rosaler et al. pick the two features with the largest |SHAP| at a test point and show (Figs. 4 and 7) the
training rows in that plane, those with the largest RF-GAP proximity to the test point highlighted, and
(Figs. 5 and 8) each feature's proximity-weighted against unweighted training distribution. Their claim: for a
bad prediction the proximity-weighted training points "lie in a region of feature space where data is
relatively sparse" (the tails); for a good one "squarely within the bulk".

Here, on the GAP page's diabetes forest (300 trees, ``min_samples_leaf=5``, 75/25 split; the paper's bond
trades are proprietary): SHAP values by ``shap.TreeExplainer``, proximities by ``GapExplainer``. The claim is
measured by the *tail score* of a test point: the proximity-weighted mean of |z| of the training rows on its
top-|SHAP| feature (z the feature standardised over the training set), minus the unweighted mean |z| (about
0.8): positive when the weight sits in the tails. Per seed (split and forest seeded with s, s = 0-4): the tail
score of the worst and the best test prediction, and the Spearman correlation between the tail score and the
absolute test error over all test points. Under ``run_all.py`` it records, per seed, the claims ``fig4_8.*`` of
``_reproductions.py``: the worst prediction's tail score above 0, the best one's at or below 0, the worst one's
above the best one's, and the correlation with the error above 0. Figures (seed 0): ``docs/figures/gap_shap_views.png``.

Usage: ``python docs/scripts/make_gap_shap_views.py [--quick] [--seeds 5]`` (``--quick``: 2 seeds, 50 trees,
figure to a temporary folder).
"""

import argparse
import os
import sys
import tempfile
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import shap  # noqa: E402
from scipy.stats import spearmanr  # noqa: E402
from sklearn.datasets import load_diabetes  # noqa: E402
from sklearn.ensemble import RandomForestRegressor  # noqa: E402
from sklearn.model_selection import train_test_split  # noqa: E402

from shap_instances import GapExplainer  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from _common import record  # noqa: E402

FIGURES = Path(__file__).resolve().parents[1] / "figures"


def fit(seed, trees):
    X, y = load_diabetes(return_X_y=True, as_frame=True)
    X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.25, random_state=seed)
    forest = RandomForestRegressor(trees, min_samples_leaf=5, random_state=seed).fit(X_tr, y_tr)
    P = GapExplainer(forest, X_tr, y=y_tr).proximities(X_te, dense=True)
    phi = shap.TreeExplainer(forest).shap_values(X_te)
    error = np.abs(y_te.to_numpy() - forest.predict(X_te))
    return dict(X_tr=X_tr, X_te=X_te, P=np.asarray(P), phi=phi, error=error)


def tail_scores(run):
    """Per test point: proximity-weighted mean |z| on its top-|SHAP| feature minus the unweighted mean."""
    z = np.abs((run["X_tr"] - run["X_tr"].mean()) / run["X_tr"].std()).to_numpy()
    top = np.abs(run["phi"]).argmax(axis=1)
    weighted = np.einsum("ij,ji->i", run["P"], z[:, top])
    return weighted - z.mean(axis=0)[top]


def figure(run, out):
    worst, best = int(run["error"].argmax()), int(run["error"].argmin())
    fig, axes = plt.subplots(2, 3, figsize=(15, 8))
    for row, (tag, j) in enumerate((("worst prediction (Figs. 4, 5)", worst), ("best prediction (Figs. 7, 8)", best))):
        a, b = run["X_tr"].columns[np.argsort(-np.abs(run["phi"][j]))[:2]]
        weights = run["P"][j]
        near = np.argsort(-weights)[:20]
        ax = axes[row, 0]
        ax.scatter(run["X_tr"][a], run["X_tr"][b], s=8, c="0.8", label="training rows")
        ax.scatter(run["X_tr"][a].iloc[near], run["X_tr"][b].iloc[near], s=25, c="tab:orange",
                   alpha=np.clip(weights[near] / weights[near].max(), 0.2, 1), label="20 largest proximities")
        ax.scatter(run["X_te"][a].iloc[j], run["X_te"][b].iloc[j], s=80, c="red", marker="*", label="test point")
        ax.set(xlabel=a, ylabel=b, title=f"{tag}: |error| {run['error'][j]:.1f}")
        ax.legend(fontsize=7)
        for ax, feature in zip(axes[row, 1:], (a, b)):
            bins = np.histogram_bin_edges(run["X_tr"][feature], 20)
            ax.hist(run["X_tr"][feature], bins=bins, density=True, color="tab:blue", alpha=0.3, label="unweighted")
            ax.hist(run["X_tr"][feature], bins=bins, weights=weights, density=True, color="tab:blue", alpha=0.9,
                    histtype="step", lw=2, label="proximity-weighted")
            ax.axvline(run["X_te"][feature].iloc[j], color="red", label="test point")
            ax.set(xlabel=feature, title=f"training distribution of {feature}")
            ax.legend(fontsize=7)
    fig.suptitle("Diabetes forest, seed 0: top two |SHAP| features of the worst and the best test prediction")
    fig.tight_layout()
    fig.savefig(out / "gap_shap_views.png", dpi=80)
    plt.close(fig)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="2 seeds, 50 trees, figure to a temporary folder")
    parser.add_argument("--seeds", type=int, default=5)
    args = parser.parse_args()
    seeds = list(range(2 if args.quick else args.seeds))
    print(f"load average at start: {' / '.join(f'{x:.2f}' for x in os.getloadavg())}\n")
    print("| seed | tail score, worst prediction | tail score, best prediction | Spearman(tail score, abs. test error) "
          "| its p-value |")
    print("|---|---|---|---|---|")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for seed in seeds:
            run = fit(seed, 50 if args.quick else 300)
            score = tail_scores(run)
            rho, p_value = spearmanr(score, run["error"])
            rows.append((score[run["error"].argmax()], score[run["error"].argmin()], rho))
            print(f"| {seed} | {rows[-1][0]:+.3f} | {rows[-1][1]:+.3f} | {rho:+.3f} | {p_value:.3f} |", flush=True)
            if seed == 0:
                figure(run, Path(tmp) if args.quick else FIGURES)
    print(f"\nload average at end: {' / '.join(f'{x:.2f}' for x in os.getloadavg())}")
    worst, best, rho = (np.array(column, dtype=float) for column in zip(*rows))
    record(**{"fig4_8.worst_in_tails": (worst > 0).tolist(), "fig4_8.best_in_bulk": (best <= 0).tolist(),
              "fig4_8.worst_above_best": (worst > best).tolist(), "fig4_8.tails_predict_error": (rho > 0).tolist(),
              "tail_score": {"worst": worst.tolist(), "best": best.tolist(), "spearman": rho.tolist()}})


if __name__ == "__main__":
    main()
