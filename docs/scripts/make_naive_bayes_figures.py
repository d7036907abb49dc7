"""Figures of docs/explainers/naive_bayes.md: breast cancer, discretise-then-naive-Bayes.

Run from the repository root: ``python docs/scripts/make_naive_bayes_figures.py``. Under
``python benchmarks/run_all.py figures naive_bayes`` it records the held-out accuracy the page quotes
(``benchmarks/results/fig-naive_bayes.json``).
"""

import inspect
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import shap  # noqa: E402
from sklearn.model_selection import train_test_split  # noqa: E402
from sklearn.naive_bayes import CategoricalNB  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.preprocessing import KBinsDiscretizer  # noqa: E402

from shap_instances import NaiveBayesExplainer  # noqa: E402
from shap_instances.datasets import load_breast_cancer  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from _common import record  # noqa: E402

OUT = Path(__file__).resolve().parents[1] / "figures"

X, y = load_breast_cancer()
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.3, random_state=0, stratify=y)
# quantile_method exists from scikit-learn 1.7 (the package supports 1.4 on)
extra = {}
if "quantile_method" in inspect.signature(KBinsDiscretizer).parameters:
    extra["quantile_method"] = "averaged_inverted_cdf"
binner = KBinsDiscretizer(n_bins=5, encode="ordinal", **extra)
model = make_pipeline(binner, CategoricalNB()).fit(X_train, y_train)
explanation = NaiveBayesExplainer(model, X_train)(X_test)
accuracy = model.score(X_test, y_test)
print("held-out accuracy", accuracy)
record(held_out_accuracy=round(accuracy, 3))

shap.plots.beeswarm(explanation, max_display=12, show=False)
plt.gcf().set_size_inches(8, 5.5)
plt.savefig(OUT / "naive_bayes_beeswarm.png", dpi=90, bbox_inches="tight")
plt.close("all")
shap.plots.waterfall(explanation[0], max_display=10, show=False)
plt.gcf().set_size_inches(8, 5)
plt.savefig(OUT / "naive_bayes_waterfall.png", dpi=90, bbox_inches="tight")
plt.close("all")
