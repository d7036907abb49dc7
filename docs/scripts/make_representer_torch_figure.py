"""The PyTorch figure and numbers of docs/explainers/representer.md.

Run ``python docs/scripts/make_representer_torch_figure.py``; under ``benchmarks/run_all.py figures representer_torch``
the numbers the page quotes are recorded (``benchmarks/results/fig-representer_torch.json``), rounded as shown.

Breast cancer (scikit-learn's offline copy): a 30-16-8-1 MLP trained by Adam on 400 standardised rows, explained on
held-out rows. Left: one held-out row's waterfall over training rows. Right: representer values against TracInCP
(last layer, the 20 epoch checkpoints) for that row, each point a training row.
"""

from __future__ import annotations

import copy
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import torch  # noqa: E402
from sklearn.datasets import load_breast_cancer  # noqa: E402

import shap_instances as si  # noqa: E402
from shap_instances.neural import tracin_cp  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from _common import record  # noqa: E402

OUT = Path(__file__).resolve().parents[1] / "figures"


def main():
    X, y = load_breast_cancer(return_X_y=True)
    X = ((X - X[:400].mean(0)) / X[:400].std(0)).astype(np.float32)
    X_train, y_train, X_new = X[:400], y[:400], X[400:]
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(30, 16), torch.nn.ReLU(), torch.nn.Linear(16, 8), torch.nn.ReLU(),
                              torch.nn.Linear(8, 1))
    optimiser = torch.optim.Adam(net.parameters(), lr=1e-2)
    xt, yt = torch.as_tensor(X_train), torch.as_tensor(y_train, dtype=torch.float32).reshape(-1, 1)
    checkpoints = []
    for _ in range(20):
        for batch in torch.randperm(400).split(50):
            optimiser.zero_grad()
            torch.nn.functional.binary_cross_entropy_with_logits(net(xt[batch]), yt[batch]).backward()
            optimiser.step()
        checkpoints.append(copy.deepcopy(net))

    explainer = si.Explainer(net, X_train, y=y_train, lam=1e-3)
    e = explainer(X_new)
    with torch.no_grad():
        logits = net(torch.as_tensor(X_new)).numpy().ravel()
    accuracy = np.mean((logits > 0) == y[400:])
    print(f"{type(explainer).__name__}: held-out accuracy {accuracy:.3f}; identity gap "
          f"{explainer.reconstruction_gap_:.1e}; optimality violation {explainer.optimality_violation_:.1e}; "
          "fine-tuning moved the logit by "
          f"{explainer.fine_tuning_fidelity_:.1%} of its largest value")
    tracin = tracin_cp(checkpoints, X_train, y_train, X_new, learning_rates=1e-2)
    corr = [np.corrcoef(e.values[j], tracin[j])[0, 1] for j in range(len(X_new))]
    print(f"Pearson correlation representer vs TracInCP per held-out row: median {np.median(corr):.2f}, "
          f"[{np.min(corr):.2f}, {np.max(corr):.2f}]")
    row = 0
    record(held_out=len(X_new), accuracy=round(float(accuracy), 3),
           identity_gap=float(f"{explainer.reconstruction_gap_:.1e}"),
           optimality_violation=float(f"{explainer.optimality_violation_:.1e}"),
           fidelity_percent=round(100 * float(explainer.fine_tuning_fidelity_)),
           row_output=round(float(e.base_values[row] + e.values[row].sum()), 1),
           row_pearson=round(float(corr[row]), 2), pearson_median=round(float(np.median(corr)), 2),
           pearson_min=round(float(np.min(corr)), 2), pearson_max=round(float(np.max(corr)), 2))
    fig = plt.figure(figsize=(12, 4.5))
    ax = fig.add_subplot(1, 2, 2)
    ax.scatter(tracin[row], e.values[row], s=10, c=np.where(y_train == 1, "tab:blue", "tab:red"))
    ax.set_xlabel("TracInCP (last layer, 20 checkpoints)")
    ax.set_ylabel("representer value")
    ax.set_title(f"row {400 + row}: Pearson {corr[row]:.2f}\nblue: benign, red: malignant", fontsize=10)
    plt.sca(fig.add_subplot(1, 2, 1))
    si.plots.waterfall(e[row], max_display=8, show=False)
    fig.set_size_inches(13, 4.8)
    fig.tight_layout()
    OUT.mkdir(exist_ok=True)
    fig.savefig(OUT / "representer_torch.png", dpi=110)
    print(f"wrote {OUT / 'representer_torch.png'}")


if __name__ == "__main__":
    main()
