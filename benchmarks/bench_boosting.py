"""Benchmark: BoostingExplainer on the four libraries, and a dense AXIL-style computation beside it.

For each installed library (scikit-learn's GradientBoostingRegressor and HistGradientBoostingRegressor,
XGBoost, LightGBM) a regressor of 100 trees of depth 6 is fitted on n_train = 20,000 rows of Friedman #1
(10 features) and 1,000 held-out rows are explained:

* **build**: ``BoostingExplainer(model, X, y=y)``: leaves of the training rows, the replay of the training
  (every leaf value recomputed from the gradients and checked);
* **weights**: ``explainer(X_test)`` with ``kind="weights"`` (the backward recursion, values (1000, 20000));
* **gradients**: the same with ``kind="gradients"``;
* **top_k**: the 100 largest target-weight values of each explained row (``explainer.top_k(X_test, k=100)``),
  with ``max_memory=32 MiB``: in chunks of 32 MiB of values, never the whole (1000, 20000) matrix.

Each is timed (wall clock, and in parentheses the CPU time of the process: the work runs in one thread, so
on a machine shared with other jobs the CPU time is close to what an idle machine's wall clock would show),
and its peak memory measured twice in a forked child doing only that computation: the
**tracemalloc peak** (numpy and Python allocations; numba's own allocations inside the kernels, O(n x 16)
floats per thread, are not traced) and the **peak resident-set growth** (sampled every 2 ms; sees everything,
allocator slack included). Peaks are given as a multiple of the output's size (the float64 values). The
reconstruction error ``max |base + sum(values) - margin| / max(1, |margin|)`` is checked after the peak.

**Dense AXIL-style**: the target weights from their definition with n x n matrices per tree
(``M_t = M_{t-1} + eta P_t (I - M_{t-1})``, ``W += eta p_t(X) (I - M_{t-1})``), the way AXIL (Geertsema and Lu,
2023, first version) computes them, on a GradientBoostingRegressor of the same shape at n_train = 1,000 and
2,000, beside BoostingExplainer on the same model; its time and memory are extrapolated to n = 20,000 from
their measured growth between the two sizes.

BLAS threads are limited to one on both sides (threadpoolctl), the libraries run one thread, and the
numba kernels run single-threaded (``n_jobs=None``). Kernels are compiled before any measurement (the
compile time is reported separately). The load average is printed at the start and the end: on a shared
machine, timings are only comparable within one run.

Usage: ``python benchmarks/bench_boosting.py [--quick]`` (quick: n_train = 2,000, 200 explained rows,
20 trees; dense at 250 and 500).
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import time
import tracemalloc
import warnings

import numpy as np
from _common import rss_peak
from sklearn.datasets import make_friedman1
from sklearn.ensemble import GradientBoostingRegressor, HistGradientBoostingRegressor
from threadpoolctl import threadpool_limits

from shap_instances import BoostingExplainer

warnings.filterwarnings("ignore", message="X does not have valid feature names")


# ---------------------------------------------------------------------------------------------- measurement
def _child(fn, mode, queue):
    with threadpool_limits(1):
        if mode == "trace":
            tracemalloc.start()
            result = fn()
            peak = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
            queue.put((None, peak, None))
            return
        with rss_peak() as growth:
            start, cpu = time.perf_counter(), time.process_time()
            result = fn()
            elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
        queue.put(((elapsed, cpu), growth(), result[1] if isinstance(result, tuple) else None))


def measure(fn):
    """((wall seconds, CPU seconds of the calling thread), tracemalloc peak, RSS growth, check) of ``fn()`` in
    forked children."""
    ctx = mp.get_context("fork")
    out = {}
    for mode in ("trace", "rss"):
        queue = ctx.Queue()
        process = ctx.Process(target=_child, args=(fn, mode, queue))
        process.start()
        out[mode] = queue.get()
        process.join()
    return out["rss"][0], out["trace"][1], out["rss"][1], out["rss"][2]


def seconds(times) -> str:
    """"wall (CPU)": on a loaded machine the process's CPU time (one working thread) is what an idle one takes."""
    return f"{times[0]:.2f} ({times[1]:.2f})"


def load() -> str:
    return " ".join(f"{v:.2f}" for v in os.getloadavg())


# ---------------------------------------------------------------------------------------------- models
def models(depth: int, n_trees: int):
    found = {
        "sklearn GradientBoosting": lambda: GradientBoostingRegressor(n_estimators=n_trees, max_depth=depth,
                                                                      random_state=0),
        "sklearn HistGradientBoosting": lambda: HistGradientBoostingRegressor(
            max_iter=n_trees, max_depth=depth, max_leaf_nodes=2**depth, early_stopping=False, random_state=0),
    }
    try:
        import xgboost as xgb

        found["XGBoost"] = lambda: xgb.XGBRegressor(n_estimators=n_trees, max_depth=depth, n_jobs=1,
                                                    tree_method="hist", random_state=0)
    except ImportError:
        print("xgboost is not installed: skipped")
    try:
        import lightgbm as lgb

        found["LightGBM"] = lambda: lgb.LGBMRegressor(n_estimators=n_trees, max_depth=depth, num_leaves=2**depth,
                                                      n_jobs=1, verbose=-1, random_state=0)
    except ImportError:
        print("lightgbm is not installed: skipped")
    return found


def reconstruction(explanation, margin) -> float:
    total = explanation.base_values + explanation.values.sum(axis=1)
    return float(np.max(np.abs(total - margin) / np.maximum(1.0, np.abs(margin))))


# ---------------------------------------------------------------------------------------------- dense AXIL-style
def dense_weights(model, X_train, X):
    """Target weights from the definition with n x n matrices per tree (no sample weights)."""
    n = X_train.shape[0]
    eta = model.learning_rate
    train = model.apply(X_train)
    query = model.apply(X)
    M = np.full((n, n), 1.0 / n)
    W = np.full((X.shape[0], n), 1.0 / n)
    for t in range(train.shape[1]):
        residual_operator = np.eye(n) - M
        same = query[:, t][:, None] == train[:, t][None, :]
        W += eta * (same / same.sum(axis=1, keepdims=True)) @ residual_operator
        del same
        same = train[:, t][:, None] == train[:, t][None, :]
        M += eta * (same / same.sum(axis=1, keepdims=True)) @ residual_operator
        del same, residual_operator
    return W


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    n_train, n_test, n_trees, depth = (2_000, 200, 20, 6) if args.quick else (20_000, 1_000, 100, 6)
    dense_sizes = (250, 500) if args.quick else (1_000, 2_000)
    print(f"load average at start: {load()} ({os.cpu_count()} cores)")
    X_all, y_all = make_friedman1(n_train + n_test, n_features=10, noise=1.0, random_state=0)
    X, y, X_test = X_all[:n_train], y_all[:n_train], X_all[n_train:]

    # compile the kernels once (numba caches them on disk): the compile time, reported separately
    start = time.perf_counter()
    warm = GradientBoostingRegressor(n_estimators=2, max_depth=2).fit(X[:50], y[:50])
    for kind in ("weights", "gradients"):
        BoostingExplainer(warm, X[:50], y=y[:50], kind=kind)(X_test[:2])
    print(f"first call (numba compile or cache load): {time.perf_counter() - start:.2f} s")

    print(f"\nn_train = {n_train:,}, explained rows = {n_test:,}, {n_trees} trees of depth {depth}; output "
          f"(values, float64) = {n_test * n_train * 8 / 2**20:.0f} MiB\n")
    header = ("| library | fit (s) | build (s) | build peak (MiB) | weights (s) | weights peak / output "
              "(tracemalloc, RSS) | gradients (s) | gradients peak / output (tracemalloc, RSS) | "
              "reconstruction weights, gradients | top_k(k=100) of the weights (s, tracemalloc MiB) |")
    print("times: wall clock (CPU time of the process)\n")
    print(header)
    print("|---" * 10 + "|")
    output = n_test * n_train * 8.0
    for name, make in models(depth, n_trees).items():
        with threadpool_limits(1):
            start = time.perf_counter()
            model = make().fit(X, y)
            fit = time.perf_counter() - start
        margin = model.predict(X_test)
        built, built_peak, _, _ = measure(lambda model=model: BoostingExplainer(model, X, y=y))
        explainers = [BoostingExplainer(model, X, y=y, kind=kind) for kind in ("weights", "gradients")]
        cells = []
        for explainer in explainers:
            times, trace, rss, gap = measure(
                lambda explainer=explainer, margin=margin: (None, reconstruction(explainer(X_test), margin)))
            cells.append((times, trace / output, rss / output, gap))
        (ws, wt, wr, wg), (gs, gt, gr, gg) = cells
        chunked = BoostingExplainer(model, X, y=y, max_memory=32 * 2**20)  # chunks of 32 MiB of values
        top_s, top_peak, _, _ = measure(lambda chunked=chunked: chunked.top_k(X_test, k=100))
        print(f"| {name} | {fit:.1f} | {seconds(built)} | {built_peak / 2**20:.0f} | {seconds(ws)} | "
              f"{wt:.2f}, {wr:.2f} | {seconds(gs)} | {gt:.2f}, {gr:.2f} | {wg:.1e}, {gg:.1e} | "
              f"{seconds(top_s)}, {top_peak / 2**20:.0f} |")

    print(f"\ndense AXIL-style computation ({n_test} explained rows, GradientBoostingRegressor, {n_trees} trees of "
          f"depth {depth}) beside BoostingExplainer on the same model:\n")
    print("| n_train | dense (s) | dense peak (MiB, tracemalloc) | BoostingExplainer build + weights (s) | "
          "BoostingExplainer peak (MiB, tracemalloc) | max weight difference | CPU time ratio |")
    print("|---" * 7 + "|")
    dense_rows = []
    for n in dense_sizes:
        with threadpool_limits(1):
            model = GradientBoostingRegressor(n_estimators=n_trees, max_depth=depth, random_state=0).fit(X[:n], y[:n])
        dense_s, dense_peak, _, _ = measure(lambda model=model, n=n: dense_weights(model, X[:n], X_test))

        def ours(model=model, n=n):
            return BoostingExplainer(model, X[:n], y=y[:n]).weights(X_test)

        ours_s, ours_peak, _, _ = measure(ours)
        with threadpool_limits(1):
            difference = float(np.max(np.abs(dense_weights(model, X[:n], X_test) - ours())))
        dense_rows.append((n, dense_s[1], dense_peak))
        print(f"| {n:,} | {seconds(dense_s)} | {dense_peak / 2**20:.0f} | {seconds(ours_s)} | "
              f"{ours_peak / 2**20:.0f} | {difference:.1e} | {dense_s[1] / ours_s[1]:.0f}x |")
    (n1, t1, m1), (n2, t2, m2) = dense_rows
    time_growth = np.log(t2 / t1) / np.log(n2 / n1)
    memory_growth = np.log(m2 / m1) / np.log(n2 / n1)
    scale = n_train / n2
    print(f"\ndense growth between n = {n1:,} and {n2:,}: CPU time ~ n^{time_growth:.2f}, "
          f"peak ~ n^{memory_growth:.2f}; "
          f"extrapolated to n = {n_train:,}: {t2 * scale**time_growth:,.0f} CPU s and "
          f"{m2 * scale**memory_growth / 2**30:.1f} GiB (the n x n float64 matrices alone: "
          f"{3 * n_train**2 * 8 / 2**30:.1f} GiB for M, P_t and I - M)")
    print(f"\nload average at end: {load()}")


if __name__ == "__main__":
    main()
