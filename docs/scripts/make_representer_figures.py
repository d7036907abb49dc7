"""Figures of docs/explainers/representer.md: run ``python docs/scripts/make_representer_figures.py``."""

from __future__ import annotations

import warnings
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from sklearn.datasets import load_digits  # noqa: E402
from sklearn.linear_model import LogisticRegression  # noqa: E402

from shap_instances.explainers.representer import RepresenterExplainer  # noqa: E402
from shap_instances.metrics import (  # noqa: E402
    InfluenceFunction,
    deletion_diagnostics,
    l2_representer_scores,
    random_scores,
)

OUT = Path(__file__).resolve().parents[1] / "figures"


def digits_49():
    X, y = load_digits(return_X_y=True)
    keep = (y == 4) | (y == 9)
    X, y = X[keep] / 16.0, (y[keep] == 9).astype(int)
    rng = np.random.default_rng(0)
    test = rng.choice(len(y), 20, replace=False)
    train = np.setdiff1d(np.arange(len(y)), test)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = LogisticRegression(l1_ratio=1.0, solver="liblinear", C=0.1, tol=1e-10, max_iter=10_000)
        model.fit(X[train], y[train])
    return model, X[train], y[train], X[test], y[test]


def figure_top_instances(model, Xtr, ytr, Xte):
    ex = RepresenterExplainer(model, Xtr, y=ytr, silent=True)
    j = 0
    top = ex.top_k(Xte[j:j + 1], k=4)
    fig, axes = plt.subplots(2, 5, figsize=(8, 3.6))
    for row, (idx, val, label) in enumerate(((top.positive_indices[0], top.positive_values[0], "supports"),
                                             (top.negative_indices[0], top.negative_values[0], "opposes"))):
        axes[row, 0].imshow(Xte[j].reshape(8, 8), cmap="gray_r")
        axes[row, 0].set_title(f"explained\nf = {model.decision_function(Xte[j:j + 1])[0]:+.2f}", fontsize=8)
        for c, (i, v) in enumerate(zip(idx, val, strict=True), start=1):
            axes[row, c].imshow(Xtr[i].reshape(8, 8), cmap="gray_r")
            axes[row, c].set_title(f"{label}: {'9' if ytr[i] else '4'}\n{v:+.3f}", fontsize=8)
    for ax in axes.ravel():
        ax.set_xticks([])
        ax.set_yticks([])
    fig.suptitle("l1 logistic, digits 4 vs 9: strongest training instances (high-dimensional representer)",
                 fontsize=9)
    fig.tight_layout()
    fig.savefig(OUT / "representer_top_instances.png", dpi=90)
    plt.close(fig)


def figure_deletion(model, Xtr, ytr, Xte):
    fractions = (0.01, 0.02, 0.03, 0.04, 0.05)
    methods = {
        "High-dim Rep.": RepresenterExplainer(model, Xtr, y=ytr, silent=True)(Xte).values,
        "l2 Rep.": l2_representer_scores(model, Xtr, ytr, Xte),
        "IF": InfluenceFunction(model, Xtr, ytr).scores(Xte),
        "Random": random_scores(len(Xte), len(Xtr), random_state=0),
    }
    fig, axes = plt.subplots(1, 2, figsize=(8, 3.2), sharex=True)
    for name, scores in methods.items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = deletion_diagnostics(model, Xtr, ytr, Xte, scores, fractions=fractions, n_jobs=2)
        axes[0].plot(100 * np.array(fractions), res.del_plus.mean(0), marker="o", label=name)
        axes[1].plot(100 * np.array(fractions), res.del_minus.mean(0), marker="o", label=name)
    axes[0].set(title="DEL+ (remove most positive; lower is better)", xlabel="% removed", ylabel="change of f")
    axes[1].set(title="DEL- (remove most negative; higher is better)", xlabel="% removed")
    axes[1].legend(fontsize=8)
    for ax in axes:
        ax.title.set_fontsize(9)
        ax.axhline(0, color="grey", lw=0.5)
    fig.tight_layout()
    fig.savefig(OUT / "representer_deletion.png", dpi=90)
    plt.close(fig)


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    model, Xtr, ytr, Xte, _ = digits_49()
    figure_top_instances(model, Xtr, ytr, Xte)
    figure_deletion(model, Xtr, ytr, Xte)


if __name__ == "__main__":
    main()
