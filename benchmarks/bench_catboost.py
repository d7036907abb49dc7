"""Benchmark: BoostingExplainer on CatBoost with its defaults, beside LightGBM on the same data in the same run.

Two tasks on n_train = 20,000 rows, 1,000 held-out rows explained, 100 trees each:

* **regression** (Friedman #1, 10 features): ``CatBoostRegressor`` (RMSE: one leaf-estimation step) against
  LightGBM's 100 trees of 63 leaves, ``kind="weights"``;
* **classification** (``make_classification``, 30 features): ``CatBoostClassifier`` against ``LGBMClassifier``,
  ``kind="gradients"``. CatBoost picks its Logloss ``leaf_estimation_iterations`` from the data (catboost 1.2.10:
  10 Newton steps per tree, with backtracking, on tables of 20 or more features, 1 on 15 or fewer, in our trials):
  here 10 steps, each replayed (the ``steps`` column prints it).

CatBoost keeps its defaults (depth 6, ``bootstrap_type`` MVS with ``subsample=0.8``, Plain boosting); only
``iterations=100``, ``thread_count=2`` and the seed are set. Timed (wall clock; the numba kernels compiled first):

* **build**: ``BoostingExplainer(model, X, y=y)``: the leaves of the training rows and the replay of the training
  (every leaf value recomputed from the gradients and checked);
* **explain**: ``explainer(X_test)``, values (1,000, 20,000);
* **total**: both, the issue's target (<= 5 s on 2 cores).

The load average is printed beside the timings: on a shared machine they compare only within one run.

Under ``run_all.py figures catboost`` the table is recorded as part ``table`` of
``benchmarks/results/fig-catboost.json``, with CatBoost's largest total (``catboost_total_max``, seconds), which
docs/models.md renders.

Usage: ``python benchmarks/bench_catboost.py [--n-train 20000] [--n-test 1000] [--trees 100]``
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np
from _common import markdown_table, record
from sklearn.datasets import make_classification, make_friedman1

import shap_instances as si


def _models(task: str, trees: int) -> dict:
    import catboost
    import lightgbm

    common = {"iterations": trees, "verbose": 0, "thread_count": 2, "random_seed": 0, "allow_writing_files": False}
    if task == "regression":
        return {"catboost": catboost.CatBoostRegressor(**common),
                "lightgbm": lightgbm.LGBMRegressor(n_estimators=trees, num_leaves=63, verbose=-1, n_jobs=2)}
    return {"catboost": catboost.CatBoostClassifier(**common),
            "lightgbm": lightgbm.LGBMClassifier(n_estimators=trees, num_leaves=63, verbose=-1, n_jobs=2)}


def _time(model, X, y, X_test) -> tuple[float, float, float]:
    start = time.perf_counter()
    explainer = si.BoostingExplainer(model, X, y=y)
    built = time.perf_counter()
    e = explainer(X_test)
    done = time.perf_counter()
    margin = explainer.trees_.margin(X_test)[:, 0]
    error = float(np.max(np.abs(e.base_values + e.values.sum(1) - margin)) / max(1.0, np.abs(margin).max()))
    return built - start, done - built, error


def _data(task: str, n: int) -> tuple[np.ndarray, np.ndarray]:
    if task == "regression":
        return make_friedman1(n, noise=1.0, random_state=0)
    return make_classification(n, 30, n_informative=10, flip_y=0.05, random_state=0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-train", type=int, default=20_000)
    parser.add_argument("--n-test", type=int, default=1_000)
    parser.add_argument("--trees", type=int, default=100)
    args = parser.parse_args()
    X, y = _data("regression", 600)
    small = _models("regression", 3)["lightgbm"].fit(X[:500], y[:500])
    si.BoostingExplainer(small, X[:500], y=y[:500])(X[500:])  # compile the kernels first
    print(f"n_train={args.n_train}, n_test={args.n_test}, trees={args.trees}; load average at start "
          f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print(f"{'task':<16}{'library':<12}{'steps':>6}{'build s':>10}{'explain s':>12}{'total s':>10}{'ratio':>8}"
          f"{'rel. error':>12}")
    table = []
    for task in ("regression", "classification"):
        X, y = _data(task, args.n_train + args.n_test)
        X_train, y_train, X_test = X[: args.n_train], y[: args.n_train], X[args.n_train:]
        rows = {}
        for name, model in _models(task, args.trees).items():
            model.fit(X_train, y_train)
            steps = model.get_all_params()["leaf_estimation_iterations"] if name.startswith("catboost") else 1
            rows[name] = (steps, *_time(model, X_train, y_train, X_test))
        for name, (steps, build, explain, error) in rows.items():
            ratio = (build + explain) / sum(rows["lightgbm"][1:3])
            print(f"{task:<16}{name:<12}{steps:>6}{build:>10.2f}{explain:>12.2f}{build + explain:>10.2f}"
                  f"{ratio:>8.2f}{error:>12.1e}")
            table.append([task, name, steps, f"{build:.2f}", f"{explain:.2f}", f"{build + explain:.2f}",
                          f"{ratio:.2f}", f"{error:.1e}"])
    print(f"load average at end {os.getloadavg()[0]:.1f}")
    record(**{"part:table": markdown_table(["task", "library", "leaf steps", "build s", "explain s", "total s",
                                            "vs LightGBM", "rel. error"], table, "llrrrrrr"),
              "catboost_total_max": round(max(float(row[5]) for row in table if row[1] == "catboost"), 2)})


if __name__ == "__main__":
    main()
