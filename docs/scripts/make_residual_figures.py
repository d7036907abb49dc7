"""Figures of docs/explainers/residual.md: diabetes with Ridge (symmetric), CC and CC variance plots.

Run from the repository root: ``python docs/scripts/make_residual_figures.py``.
"""

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import shap  # noqa: E402
from sklearn.linear_model import Ridge  # noqa: E402

from shap_instances import InstanceKernelExplainer  # noqa: E402
from shap_instances.datasets import load_diabetes  # noqa: E402
from shap_instances.plots import cc_plot  # noqa: E402

OUT = Path(__file__).resolve().parents[1] / "figures"
X, y = load_diabetes()
explanation = InstanceKernelExplainer(Ridge(alpha=0.1), X, y=y, random_state=0, silent=True)()
for statistic in ("mean", "var"):
    ax = cc_plot(explanation, statistic=statistic, show=False, label="disease progression")
    ax.set_title(f"diabetes, Ridge: CC {'plot' if statistic == 'mean' else 'variance plot'}")
    ax.figure.savefig(OUT / f"residual_cc_{statistic}.png", dpi=90, bbox_inches="tight")
    plt.close(ax.figure)
worst = abs(explanation.base_values + explanation.values.sum(1)).argmax()
shap.plots.waterfall(explanation[worst], max_display=12, show=False)
plt.gcf().set_size_inches(8, 5)
plt.savefig(OUT / "residual_waterfall.png", dpi=90, bbox_inches="tight")
plt.close("all")
print("largest residual: row", explanation.row_names[worst])

# Figure 8: remove the highest- / lowest-valued training rows, refit, test MSE (asymmetric case)
import numpy as np  # noqa: E402
from sklearn.model_selection import train_test_split  # noqa: E402

from shap_instances.metrics import data_shapley, instance_values, removal_curve  # noqa: E402

X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.3, random_state=0)
asymmetric = InstanceKernelExplainer(Ridge(alpha=0.1), X_train, y=y_train, random_state=0, silent=True)(X_test, y_test)
scores = {
    "residual decomposition (squared mean contribution)": instance_values(asymmetric).to_numpy(),
    "Data Shapley (test MSE)": data_shapley(Ridge(alpha=0.1), X_train, y_train, X_test, y_test,
                                            random_state=0).to_numpy(),
}
fractions = np.linspace(0, 0.5, 11)
fig, axes = plt.subplots(1, 2, figsize=(11, 4), sharey=True)
rng = np.random.default_rng(0)
for ax, highest in zip(axes, (True, False)):
    for label, score in scores.items():
        curve = removal_curve(Ridge(alpha=0.1), X_train, y_train, X_test, y_test, score, fractions=fractions,
                              highest_first=highest)
        ax.plot(curve.index, curve.to_numpy(), marker="o", ms=3, label=label)
    random_curves = [removal_curve(Ridge(alpha=0.1), X_train, y_train, X_test, y_test, rng.random(len(y_train)),
                                   fractions=fractions).to_numpy() for _ in range(10)]
    ax.plot(fractions, np.mean(random_curves, axis=0), color="#999", ls="--", label="random (10 draws)")
    ax.set_title(f"removing the {'highest' if highest else 'lowest'}-valued rows first")
    ax.set_xlabel("fraction of training rows removed")
axes[0].set_ylabel("test MSE")
axes[0].legend(frameon=False, fontsize=8)
fig.tight_layout()
fig.savefig(OUT / "residual_removal.png", dpi=90)
plt.close(fig)
