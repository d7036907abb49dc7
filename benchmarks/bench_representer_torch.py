"""Representer values and TracInCP of a PyTorch MLP: 1,000 explained rows of a 10,000-row regression.

Usage: ``python benchmarks/bench_representer_torch.py [--quick] [--rows 10000] [--explained 1000]``.

Data: the diamonds data shipped offline (``shap_instances.datasets.load_diamonds``): its six numeric columns
standardised, target log price (centred); the first ``--rows`` rows train, the next ``--explained`` are explained.
Model: ``Linear(6, 64) - ReLU - Linear(64, 32) - ReLU - Linear(32, 1)`` trained by Adam (batch 256, learning rate 1e-2)
for ``--epochs`` epochs, a checkpoint after each. Timed (median of 3, after a warm-up call):

* ``RepresenterExplainer(net, X, y=y)`` (the last layer fine-tuned, lam = 1e-3) and its call on the explained rows;
* our TracInCP on the last layer over the checkpoints (``shap_instances.neural.tracin_cp``);
* captum's ``TracInCP`` on the same layer and checkpoints (when captum is installed), with its squared-error test
  loss; its scores are checked against ours: for one checkpoint, ``captum = -4 (f(x') - y') * ours`` (captum's loss
  is ``(f - y)^2``, ours explains the output with ``L = (f - y)^2 / 2``).
"""

from __future__ import annotations

import copy
import tempfile
import time
from pathlib import Path

import numpy as np
import torch
from _common import Bench, fmt_seconds, markdown_table, repeat

from shap_instances import RepresenterExplainer
from shap_instances.datasets import load_diamonds
from shap_instances.neural import tracin_cp


def data(rows, explained):
    X, y = load_diamonds()
    X = X.select_dtypes("number").to_numpy(dtype=np.float64)[: rows + explained]
    y = np.log(y.to_numpy(dtype=np.float64)[: rows + explained])
    y = y - y[:rows].mean()
    X = (X - X[:rows].mean(0)) / X[:rows].std(0)
    return X[:rows].astype(np.float32), y[:rows], X[rows:].astype(np.float32), y[rows:]


def train(X, y, epochs, seed=0):
    torch.manual_seed(seed)
    net = torch.nn.Sequential(torch.nn.Linear(X.shape[1], 64), torch.nn.ReLU(), torch.nn.Linear(64, 32),
                              torch.nn.ReLU(), torch.nn.Linear(32, 1))
    optimiser = torch.optim.Adam(net.parameters(), lr=1e-2)
    xt, yt = torch.as_tensor(X), torch.as_tensor(y, dtype=torch.float32).reshape(-1, 1)
    checkpoints = []
    for _ in range(epochs):
        for batch in torch.randperm(len(X)).split(256):
            optimiser.zero_grad()
            torch.nn.functional.mse_loss(net(xt[batch]), yt[batch]).backward()
            optimiser.step()
        checkpoints.append(copy.deepcopy(net))
    return net, checkpoints


def captum_tracin(checkpoints, X, y, Xq, yq, folder):
    from captum.influence import TracInCP

    paths = []
    for t, net in enumerate(checkpoints):
        paths.append(str(Path(folder) / f"checkpoint{t}.pt"))
        torch.save(net.state_dict(), paths[-1])

    def load(model, path):
        model.load_state_dict(torch.load(path))
        return 1.0  # the learning rate of every checkpoint (ours: learning_rates=1.0)

    model = copy.deepcopy(checkpoints[-1])
    train_set = torch.utils.data.TensorDataset(torch.as_tensor(X),
                                               torch.as_tensor(y, dtype=torch.float32).reshape(-1, 1))
    tracin = TracInCP(model, train_set, paths, checkpoints_load_func=load, layers=["4"],
                      loss_fn=torch.nn.MSELoss(reduction="sum"), batch_size=2048, sample_wise_grads_per_batch=True)
    inputs = (torch.as_tensor(Xq), torch.as_tensor(yq, dtype=torch.float32).reshape(-1, 1))
    return lambda: tracin.influence(inputs).detach().numpy()


def main(bench):
    args = bench.args
    rows, explained = (2000, 200) if bench.quick else (args.rows, args.explained)
    torch.set_num_threads(args.threads)
    X, y, Xq, yq = data(rows, explained)
    t = time.perf_counter()
    net, checkpoints = train(X, y, args.epochs)
    train_s = time.perf_counter() - t
    results = []

    def explain():
        return RepresenterExplainer(net, X, y=y)(Xq)

    ex = RepresenterExplainer(net, X, y=y)
    ex(Xq)  # warm-up call; its identity gap is reported
    rep = repeat(explain)
    results.append(["RepresenterExplainer (fine-tune + values)", f"{explained} x {rows}", str(rep)])
    ours = repeat(lambda: tracin_cp(checkpoints, X, y, Xq))
    results.append([f"TracInCP, ours (last layer, {len(checkpoints)} checkpoints)", f"{explained} x {rows}", str(ours)])
    check = ""
    try:
        import captum  # noqa: F401
    except ImportError:
        results.append(["TracInCP, captum", "-", "captum not installed"])
    else:
        with tempfile.TemporaryDirectory() as folder:
            theirs = repeat(captum_tracin(checkpoints, X, y, Xq, yq, folder))
            results.append([f"TracInCP, captum {captum.__version__} (same layer and checkpoints)",
                            f"{explained} x {rows}", str(theirs)])
            one = captum_tracin(checkpoints[-1:], X[:500], y[:500], Xq[:50], yq[:50], folder)()
            mine = tracin_cp(checkpoints[-1:], X[:500], y[:500], Xq[:50])
            with torch.no_grad():
                f = checkpoints[-1](torch.as_tensor(Xq[:50])).numpy().ravel()
            expected = -4.0 * (f - yq[:50])[:, None] * mine
            rel = float(np.max(np.abs(one - expected)) / np.max(np.abs(expected)))
            check = (f" captum's scores on 50 x 500 rows, one checkpoint, equal -4 (f - y') x ours to {rel:.1e} "
                     "(relative).")
    bench.print("### Representer values and TracInCP of a PyTorch MLP",
                markdown_table(["method", "explained x training rows", "time (median of 3)"], results)
                + f"\n\nTraining {fmt_seconds(train_s)} ({args.epochs} epochs); identity gap of the explanation "
                f"{ex.reconstruction_gap_:.1e} "
                f"(optimality violation of the fine-tuned layer {ex.optimality_violation_:.1e}, fine-tuning moved "
                f"the output by {ex.fine_tuning_fidelity_:.1%} of its largest value).{check}",
                part="torch")


if __name__ == "__main__":
    def _arguments(parser):
        parser.add_argument("--rows", type=int, default=10_000)
        parser.add_argument("--explained", type=int, default=1_000)
        parser.add_argument("--epochs", type=int, default=5)

    Bench(__doc__, arguments=_arguments).run(main)
