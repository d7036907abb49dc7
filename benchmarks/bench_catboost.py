"""Benchmark: BoostingExplainer on CatBoost, beside LightGBM on the same data in the same run.

A regressor of 100 oblivious trees of depth 6 (CatBoost: ``boosting_type="Plain"``, ``bootstrap_type="No"``, the
settings it needs) is fitted on n_train = 20,000 rows of Friedman #1 (10 features) and 1,000 held-out rows are
explained; LightGBM's 100 trees of 63 leaves on the same rows are the baseline. Timed (wall clock; the numba
kernels compiled first):

* **build**: ``BoostingExplainer(model, X, y=y)``: the leaves of the training rows and the replay of the training
  (every leaf value recomputed from the gradients and checked);
* **explain**: ``explainer(X_test)``, values (1,000, 20,000), with ``kind="weights"`` (squared error);
* **total**: both, the issue's target (<= 5 s on 2 cores).

The load average is printed beside the timings: on a shared machine they compare only within one run.

Usage: ``python benchmarks/bench_catboost.py [--n-train 20000] [--n-test 1000] [--trees 100]``
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np
from sklearn.datasets import make_friedman1

import shap_instances as si


def _models(trees: int) -> dict:
    import catboost
    import lightgbm

    return {
        "catboost": catboost.CatBoostRegressor(iterations=trees, depth=6, boosting_type="Plain", bootstrap_type="No",
                                               verbose=0, thread_count=2, random_seed=0,
                                               allow_writing_files=False),
        "lightgbm": lightgbm.LGBMRegressor(n_estimators=trees, num_leaves=63, verbose=-1, n_jobs=2),
    }


def _time(model, X, y, X_test) -> tuple[float, float, float]:
    start = time.perf_counter()
    explainer = si.BoostingExplainer(model, X, y=y, kind="weights")
    built = time.perf_counter()
    e = explainer(X_test)
    done = time.perf_counter()
    margin = explainer.trees_.margin(X_test)[:, 0]
    error = float(np.max(np.abs(e.base_values + e.values.sum(1) - margin)) / max(1.0, np.abs(margin).max()))
    return built - start, done - built, error


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-train", type=int, default=20_000)
    parser.add_argument("--n-test", type=int, default=1_000)
    parser.add_argument("--trees", type=int, default=100)
    args = parser.parse_args()
    X, y = make_friedman1(args.n_train + args.n_test, noise=1.0, random_state=0)
    X_train, y_train, X_test = X[: args.n_train], y[: args.n_train], X[args.n_train:]
    small = _models(3)["lightgbm"].fit(X_train[:500], y_train[:500])
    si.BoostingExplainer(small, X_train[:500], y=y_train[:500])(X_test[:5])  # compile the kernels first
    print(f"n_train={args.n_train}, n_test={args.n_test}, trees={args.trees}; load average at start "
          f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print(f"{'library':<10}{'build s':>10}{'explain s':>12}{'total s':>10}{'ratio':>8}{'rel. error':>12}")
    rows = {}
    for name, model in _models(args.trees).items():
        model.fit(X_train, y_train)
        rows[name] = _time(model, X_train, y_train, X_test)
    for name, (build, explain, error) in rows.items():
        ratio = (build + explain) / sum(rows["lightgbm"][:2])
        print(f"{name:<10}{build:>10.2f}{explain:>12.2f}{build + explain:>10.2f}{ratio:>8.2f}{error:>12.1e}")
    print(f"load average at end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
