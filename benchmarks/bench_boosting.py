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

**Scale** (the 2-minute / 4 GiB target): n_train = 100,000 rows, 1,000 explained rows, 500 trees of depth 6,
for LightGBM (``--all-libraries``: also HistGradientBoosting and XGBoost; the kernels are the same for every
library, only the fit and the replay differ; scikit-learn's ``GradientBoostingRegressor`` is left out: fitting
it alone would take about a quarter of an hour on one core). Building the explainer and computing the values
run in one forked child whose peak resident-set growth is the memory reported. Then **top_k over the
training set**: the 10 largest contributions of training rows explained as rows, with ``kind="gradients"``
(each explained row touches only the rows sharing its leaves), its rows split over every core (``n_jobs=-1``:
the one step of this script that is not single-threaded, since the target is for the machine), for a tenth of
the 100,000 rows, evenly spread, and the time scaled by 10 (``--full-top-k``: all of them,
``explainer.top_k(None, k=10)``); the target weights of all training rows would be 100,000 x 100,000 x 500
recursion steps, and their time is extrapolated from the measured cost of 200 rows.

Usage: ``python benchmarks/bench_boosting.py [--quick] [--markdown FILE]`` (quick: n_train = 2,000, 200
explained rows, 20 trees, dense at 250 and 500, scale at 5,000 rows and 50 trees).
"""

from __future__ import annotations

import multiprocessing as mp
import time
import tracemalloc
import warnings

import numpy as np
from _common import Bench, markdown_table, rss_peak
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


def one_child(fn):
    """Run ``fn()`` in a forked child (one BLAS thread); ``(its result, peak resident-set growth in bytes)``.

    ``fn`` returns a dict of what it measured (timings taken inside, reconstruction errors)."""
    ctx = mp.get_context("fork")
    queue = ctx.Queue()

    def child():
        with threadpool_limits(1), rss_peak() as growth:
            result = fn()
        queue.put((result, growth()))

    process = ctx.Process(target=child)
    process.start()
    out = queue.get()
    process.join()
    return out


def traced(fn):
    """``((wall, CPU) seconds, tracemalloc peak, result)`` of ``fn()`` in one forked child (one BLAS thread)."""
    ctx = mp.get_context("fork")
    queue = ctx.Queue()

    def child():
        with threadpool_limits(1):
            tracemalloc.start()
            mark = clock()
            result = fn()
            spent = since(mark)
            peak = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
        queue.put((spent, peak, result))

    process = ctx.Process(target=child)
    process.start()
    out = queue.get()
    process.join()
    return out


def clock():
    return time.perf_counter(), time.process_time()


def since(mark) -> tuple[float, float]:
    return time.perf_counter() - mark[0], time.process_time() - mark[1]


def libraries_table(bench, X, y, X_test, n_trees, depth):
    n_train, n_test = X.shape[0], X_test.shape[0]
    header = ["library", "fit (s)", "build (s)", "build peak (MiB)", "weights (s)",
              "weights peak / output (tracemalloc, RSS)", "gradients (s)",
              "gradients peak / output (tracemalloc, RSS)", "reconstruction weights, gradients",
              "top_k(k=100) of the weights (s, tracemalloc MiB)"]
    rows = []
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
        rows.append([name, f"{fit:.1f}", seconds(built), f"{built_peak / 2**20:.0f}", seconds(ws),
                     f"{wt:.2f}, {wr:.2f}", seconds(gs), f"{gt:.2f}, {gr:.2f}", f"{wg:.1e}, {gg:.1e}",
                     f"{seconds(top_s)}, {top_peak / 2**20:.0f}"])
    bench.print(f"n_train = {n_train:,}, explained rows = {n_test:,}, {n_trees} trees of depth {depth}; output "
                f"(values, float64) = {output / 2**20:.0f} MiB. Times: wall clock (CPU time of the process).",
                markdown_table(header, rows), part="table")


def dense_table(bench, X, y, X_test, n_trees, depth, sizes):
    n_test, n_train = X_test.shape[0], X.shape[0]
    header = ["n_train", "dense (s)", "dense peak (MiB, tracemalloc)", "BoostingExplainer build + weights (s)",
              "BoostingExplainer peak (MiB, tracemalloc)", "max weight difference", "CPU time ratio"]
    rows, dense_rows = [], []
    for n in sizes:
        with threadpool_limits(1):
            model = GradientBoostingRegressor(n_estimators=n_trees, max_depth=depth, random_state=0).fit(X[:n], y[:n])
        dense_s, dense_peak, dense = traced(lambda model=model, n=n: dense_weights(model, X[:n], X_test))
        ours_s, ours_peak, mine = traced(
            lambda model=model, n=n: BoostingExplainer(model, X[:n], y=y[:n]).weights(X_test))
        difference = float(np.max(np.abs(dense - mine)))
        dense_rows.append((n, dense_s[1], dense_peak))
        rows.append([f"{n:,}", seconds(dense_s), f"{dense_peak / 2**20:.0f}", seconds(ours_s),
                     f"{ours_peak / 2**20:.0f}", f"{difference:.1e}", f"{dense_s[1] / ours_s[1]:.0f}x"])
    (n1, t1, m1), (n2, t2, m2) = dense_rows
    time_growth = np.log(t2 / t1) / np.log(n2 / n1)
    memory_growth = np.log(m2 / m1) / np.log(n2 / n1)
    scale = n_train / n2
    bench.print(f"The dense AXIL-style computation ({n_test:,} explained rows, GradientBoostingRegressor, {n_trees} "
                f"trees of depth {depth}) beside BoostingExplainer on the same model; times wall (CPU).",
                markdown_table(header, rows),
                f"Dense growth between n = {n1:,} and {n2:,}: CPU time ~ n^{time_growth:.2f}, peak ~ "
                f"n^{memory_growth:.2f}; extrapolated to n = {n_train:,}: {t2 * scale**time_growth:,.0f} CPU s and "
                f"{m2 * scale**memory_growth / 2**30:.1f} GiB (the n x n float64 matrices alone: "
                f"{3 * n_train**2 * 8 / 2**30:.1f} GiB for M, P_t and I - M).", part="dense")


def scale_tables(bench, n_train, n_test, n_trees, depth, libraries, top_k_rows):
    X_all, y_all = make_friedman1(n_train + n_test, n_features=10, noise=1.0, random_state=1)
    X, y, X_test = X_all[:n_train], y_all[:n_train], X_all[n_train:]
    output = n_test * n_train * 8.0
    header = ["library", "fit (s)", "build (s)", "weights (s)", "build + weights (s)", "peak, build + weights (GiB)",
              "gradients: build + values (s)", "peak, gradients (GiB)", "reconstruction weights, gradients"]
    rows = []
    fitted = {}
    for name, make in models(depth, n_trees).items():
        if name not in libraries:
            continue
        with threadpool_limits(1):
            start = time.perf_counter()
            model = fitted[name] = make().fit(X, y)
            fit = time.perf_counter() - start
        margin = model.predict(X_test)

        def run(kind, model=model, margin=margin):
            mark = clock()
            explainer = BoostingExplainer(model, X, y=y, kind=kind)
            build = since(mark)
            mark = clock()
            explanation = explainer(X_test)
            values = since(mark)
            return {"build": build, "values": values, "gap": reconstruction(explanation, margin)}

        weights, weights_peak = one_child(lambda: run("weights"))
        gradients, gradients_peak = one_child(lambda: run("gradients"))
        total = tuple(a + b for a, b in zip(weights["build"], weights["values"]))
        gradient_total = tuple(a + b for a, b in zip(gradients["build"], gradients["values"]))
        rows.append([name, f"{fit:.1f}", seconds(weights["build"]), seconds(weights["values"]), seconds(total),
                     f"{weights_peak / 2**30:.2f}", seconds(gradient_total), f"{gradients_peak / 2**30:.2f}",
                     f"{weights['gap']:.1e}, {gradients['gap']:.1e}"])
    bench.print(f"n_train = {n_train:,}, explained rows = {n_test:,}, {n_trees} trees of depth {depth}; output "
                f"(values, float64) = {output / 2**30:.2f} GiB. Times: wall clock (CPU time of the process); peaks: "
                "resident-set growth of a child that builds the explainer and explains the rows.",
                markdown_table(header, rows), part="scale")

    name = "LightGBM" if "LightGBM" in fitted else next(iter(fitted))
    model, k = fitted[name], 10

    explained = np.linspace(0, n_train - 1, top_k_rows).astype(int)  # training rows, evenly spread

    def top(model=model):
        mark = clock()
        explainer = BoostingExplainer(model, X, y=y, kind="gradients", n_jobs=-1)  # rows over every core
        build = since(mark)
        mark = clock()
        result = explainer.top_k(None if top_k_rows == n_train else X[explained], k=k)
        spent = since(mark)
        # check a few rows against the dense values of the same rows
        checked = np.linspace(0, top_k_rows - 1, 5).astype(int)
        dense = explainer(X[explained[checked]]).values
        largest = np.sort(np.abs(dense), axis=1)[:, -k:]
        found = np.sort(np.abs(result[checked].toarray()), axis=1)[:, -k:]
        return {"build": build, "top": spent, "nnz": result.nnz, "gap": float(np.max(np.abs(largest - found)))}

    found, peak = one_child(top)
    weights_per_row = None
    with threadpool_limits(1):
        explainer = BoostingExplainer(model, X, y=y)
        leaves = explainer.trees_.apply(X_test[:200])
        mark = clock()
        from shap_instances.boosting import target_weights

        target_weights(explainer.trees_, leaves)
        weights_per_row = since(mark)[1] / leaves.shape[0]
    share = n_train / top_k_rows
    rows = [[name, f"{top_k_rows:,} x {k}", seconds(found["build"]), seconds(found["top"]),
             f"{found['top'][0] * share:,.1f} ({found['top'][1] * share:,.1f})" if share > 1 else "(measured)",
             f"{peak / 2**30:.2f}", f"{found['gap']:.1e}",
             f"{weights_per_row * n_train:,.0f} CPU s ({weights_per_row * 1e3:.2f} ms per row)"]]
    subset = ("" if share == 1 else f" {top_k_rows:,} of them, evenly spread, measured and the time scaled by "
              f"{share:.0f} (rows are independent: the cost is linear in their number);")
    bench.print(f"top_k over the {n_train:,} training rows as explained rows (k = {k}, kind=\"gradients\", "
                f"n_jobs=-1, pruned from 20,000 training rows on, {n_trees} trees of depth {depth}):{subset} the "
                "largest values checked against the dense values of 5 rows; the last column extrapolates the target "
                "weights (kind=\"weights\") of every training row from the CPU time of 200 rows.",
                markdown_table(["library", "explained x k", "build (s)", "top_k (s)",
                                f"top_k of all {n_train:,} rows (s)", "peak (GiB)", "largest gap to dense",
                                "weights of all training rows (extrapolated)"], rows),
                part="top_k")


def main(bench):
    quick = bench.quick
    n_train, n_test, n_trees, depth = (2_000, 200, 20, 6) if quick else (20_000, 1_000, 100, 6)
    dense_sizes = (250, 500) if quick else (1_000, 2_000)
    X_all, y_all = make_friedman1(n_train + n_test, n_features=10, noise=1.0, random_state=0)
    X, y, X_test = X_all[:n_train], y_all[:n_train], X_all[n_train:]

    # compile the kernels once (numba caches them on disk): the compile time, reported separately
    start = time.perf_counter()
    warm = GradientBoostingRegressor(n_estimators=2, max_depth=2).fit(X[:50], y[:50])
    for kind in ("weights", "gradients"):
        BoostingExplainer(warm, X[:50], y=y[:50], kind=kind)(X_test[:2])
    bench.print(f"First call (numba compile or cache load): {time.perf_counter() - start:.2f} s (excluded).",
                part="compile")
    libraries_table(bench, X, y, X_test, n_trees, depth)
    dense_table(bench, X, y, X_test, n_trees, depth, dense_sizes)
    libraries = ("sklearn HistGradientBoosting", "XGBoost", "LightGBM") if bench.args.all_libraries else ("LightGBM",)
    n_big = 5_000 if quick else 100_000
    top_k_rows = n_big if bench.args.full_top_k else n_big // 10
    scale_tables(bench, *((5_000, 100, 50, 6) if quick else (100_000, 1_000, 500, 6)), libraries, top_k_rows)


def arguments(parser):
    parser.add_argument("--all-libraries", action="store_true",
                        help="scale tables for HistGradientBoosting, XGBoost and LightGBM (default: LightGBM only)")
    parser.add_argument("--full-top-k", action="store_true",
                        help="top_k over every training row (default: a tenth of them, the time scaled by 10)")


if __name__ == "__main__":
    Bench(__doc__, arguments=arguments).run(main)
