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
explanation = InstanceKernelExplainer(Ridge(alpha=0.1), X, y, random_state=0, silent=True)()
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
print("largest residual: row", explanation.instance_names[worst])
