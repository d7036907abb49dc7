"""Figures of the KNN-Shapley plugin page (docs/plugins.md): writes docs/figures/knn_shapley_*.png.

Run from the repository root: ``python docs/scripts/make_knn_shapley_figures.py``. Under
``python benchmarks/run_all.py figures knn_shapley`` it records the removal curves' test accuracies that the page
quotes (``benchmarks/results/fig-knn_shapley.json``): with every training row (``accuracy_all``), the best after
removing the least valuable rows first (``least_first_best``), and after removing the most valuable half
(``most_first_half``).
"""

from __future__ import annotations

import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import shap  # noqa: E402
from sklearn.datasets import load_breast_cancer  # noqa: E402
from sklearn.model_selection import train_test_split  # noqa: E402
from sklearn.neighbors import KNeighborsClassifier  # noqa: E402

import shap_instances as si  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))
from _common import record  # noqa: E402

OUT = ROOT / "docs" / "figures"


def data():
    X, y = load_breast_cancer(return_X_y=True, as_frame=True)
    X_train, X_rest, y_train, y_rest = train_test_split(X, y, test_size=200, random_state=0, stratify=y)
    X_valid, X_test, y_valid, y_test = train_test_split(X_rest, y_rest, test_size=100, random_state=0, stratify=y_rest)
    return X_train, y_train, X_valid, y_valid, X_test, y_test


def removal_curve(X_train, y_train, X_test, y_test, ranking, fractions, k):
    """Test accuracy of the KNN refit after removing the first ``fraction`` of ``ranking``."""
    accuracies = []
    for fraction in fractions:
        keep = np.sort(ranking[int(round(fraction * len(ranking))):])
        model = KNeighborsClassifier(n_neighbors=k).fit(X_train.iloc[keep].to_numpy(), y_train.iloc[keep].to_numpy())
        accuracies.append(model.score(X_test.to_numpy(), y_test.to_numpy()))
    return np.array(accuracies)


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    X_train, y_train, X_valid, y_valid, X_test, y_test = data()
    k = 5
    model = KNeighborsClassifier(n_neighbors=k).fit(X_train.to_numpy(), y_train.to_numpy())
    explainer = si.Explainer(model, X_train, y=y_train, silent=True)
    explanation = explainer(X_valid, y_valid)  # values computed on the validation split only
    value = explanation.values.sum(axis=0)

    fractions = np.linspace(0, 0.5, 11)
    rng = np.random.default_rng(0)
    curves = {
        "most valuable first": removal_curve(X_train, y_train, X_test, y_test, np.argsort(-value), fractions, k),
        "least valuable first": removal_curve(X_train, y_train, X_test, y_test, np.argsort(value), fractions, k),
    }
    random_runs = [removal_curve(X_train, y_train, X_test, y_test, rng.permutation(len(value)), fractions, k)
                   for _ in range(10)]
    curves["random order (mean of 10)"] = np.mean(random_runs, axis=0)
    record(accuracy_all=round(float(curves["most valuable first"][0]), 3),
           least_first_best=round(float(curves["least valuable first"].max()), 3),
           most_first_half=round(float(curves["most valuable first"][-1]), 3))

    fig, ax = plt.subplots(figsize=(6, 4))
    for (label, curve), style in zip(curves.items(), ["o-", "s-", "^--"]):
        ax.plot(100 * fractions, curve, style, label=label)
    ax.set_xlabel("training instances removed (%)")
    ax.set_ylabel("test accuracy of the refitted 5-NN")
    ax.set_title("Removing training instances by KNN-Shapley value")
    ax.legend()
    fig.tight_layout()
    fig.savefig(OUT / "knn_shapley_removal.png", dpi=100)
    plt.close(fig)

    j = int(np.argmin(explanation.base_values + explanation.values.sum(axis=1)))  # the worst-served point
    shap.plots.waterfall(explanation[j], max_display=10, show=False)
    fig = plt.gcf()
    fig.set_size_inches(7, 4.5)
    fig.tight_layout()
    fig.savefig(OUT / "knn_shapley_waterfall.png", dpi=100)
    plt.close(fig)
    for path in sorted(OUT.glob("knn_shapley_*.png")):
        print(path, path.stat().st_size // 1024, "KB")
    return curves


if __name__ == "__main__":
    for name, curve in main().items():
        print(name, np.round(curve, 3))
