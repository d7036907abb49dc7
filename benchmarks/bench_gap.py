"""Benchmark: sparse RF-GAP proximities (GapExplainer) against a dense-matrix computation, in the same run.

For each task (regression, classification) a forest of 100 trees is fitted on n_train = 20,000 points and
the proximities of 1,000 test points are computed twice:

* **sparse**: ``GapExplainer(forest, X, y=y)`` (leaf index, verified against every leaf) then
  ``ex.proximities(X_test)`` (numba kernel, CSR);
* **dense**: the straightforward numpy computation of the (m, n_train) float64 matrix
  ``sum_t [leaf_t(x) = leaf_t(i)] c_i(t) / W_t(leaf) / T``, tree by tree (one ``tree.apply`` at a time) and
  in blocks of 128 query rows, adding the leaf weights in place (``np.add(..., where=same_leaf)``): its only
  large array is the output matrix itself, so its peak is close to the dense matrix's size (no strawman).

The out-of-bag proximities of all training points (n_train x n_train) are timed for the sparse method, and
against the dense method at a size where the dense matrix fits (``dense_oob_n``). The scale rows fit a forest
on n_train = 100,000 points for each task (regression and classification; full mode; quick mode runs them at
twice its n_train only to exercise the code) and report the sparse method's time and peak memory.

Memory is measured the same way for both methods, twice, each time in a forked child process doing only that
computation: the **tracemalloc peak** (every numpy, numba and Python allocation; deterministic) and the
**peak resident-set growth** (sampled every 2 ms; also sees allocator slack and C-level buffers). Times come
from the resident-set run (tracemalloc slows allocation-heavy code). The checks (reconstruction error,
agreement of the two methods) run after the peak is recorded. Kernels are compiled before any measurement.

Usage: ``python benchmarks/bench_gap.py [--quick]``.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import threading
import time
import tracemalloc

import numpy as np
from sklearn.datasets import make_classification, make_friedman1
from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor

from shap_instances import GapExplainer
from shap_instances._kernels.proximity import gap_fill_rows, gap_row_counts


def _rss() -> int:
    with open("/proc/self/statm") as handle:
        return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _child(fn, args, check, mode, queue):
    if mode == "trace":
        tracemalloc.start()
        result = fn(*args)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        queue.put((None, peak, None))
        return
    base = _rss()
    peak = [base]
    done = threading.Event()

    def sample():
        while not done.is_set():
            peak[0] = max(peak[0], _rss())
            time.sleep(0.002)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    start = time.perf_counter()
    result = fn(*args)
    elapsed = time.perf_counter() - start
    done.set()
    sampler.join()
    peak[0] = max(peak[0], _rss())
    queue.put((elapsed, peak[0] - base, check(result)))


def _fork(fn, args, check, mode):
    ctx = mp.get_context("fork")
    queue = ctx.Queue()
    process = ctx.Process(target=_child, args=(fn, args, check, mode, queue))
    process.start()
    out = queue.get()
    process.join()
    return out


def measure(fn, args, check):
    """(seconds, tracemalloc peak bytes, peak RSS growth bytes, check(result)), each in a forked child."""
    _, traced, _ = _fork(fn, args, check, "trace")
    elapsed, rss, checked = _fork(fn, args, check, "rss")
    return elapsed, traced, rss, checked


# ------------------------------------------------------------------------------------------ methods
STATE = {}


def sparse_test(kind):
    s = STATE[kind]
    ex = GapExplainer(s["model"], s["X"], y=s["y"])
    start = time.perf_counter()
    P = ex.proximities(s["Xt"])
    return P, time.perf_counter() - start


def check_sparse_test(kind):
    def check(result):
        s = STATE[kind]
        P, rows_time = result
        return float(np.max(np.abs(P @ s["targets"] - s["output"]))), P.nnz, checksum(P[:50].toarray()), rows_time
    return check


def sparse_oob(kind):
    s = STATE[kind]
    ex = GapExplainer(s["model"], s["X"], y=s["y"])
    start = time.perf_counter()
    P = ex.proximities()
    return P, time.perf_counter() - start


def check_sparse_oob(result):
    P, rows_time = result
    return P.nnz, rows_time


def dense_matrix(model, X, query, oob=False, block=128):
    """Dense (m, n) float64 RF-GAP matrix: tree by tree, blocks of query rows, weights added in place."""
    X32 = np.ascontiguousarray(X, dtype=np.float32)
    Q32 = X32 if oob else np.ascontiguousarray(query, dtype=np.float32)
    m, n = Q32.shape[0], X32.shape[0]
    K = np.zeros((m, n))
    used = np.zeros(m)
    for tree, drawn in zip(model.estimators_, model.estimators_samples_, strict=True):
        c = np.bincount(drawn, minlength=n).astype(np.float64)
        train_leaves = tree.apply(X32)
        query_leaves = train_leaves if oob else tree.apply(Q32)
        w = c / np.bincount(train_leaves, weights=c)[train_leaves]  # c_i / W(leaf of i)
        use = c == 0 if oob else np.ones(m, dtype=bool)
        used += use
        for a in range(0, m, block):
            same = query_leaves[a:a + block, None] == train_leaves[None, :]
            same &= use[a:a + block, None]
            np.add(K[a:a + block], w[None, :], out=K[a:a + block], where=same)
    K /= np.maximum(used, 1)[:, None]
    return K


def dense_test(kind):
    s = STATE[kind]
    return dense_matrix(s["model"], s["X"], s["Xt"])


def check_dense_test(kind):
    def check(K):
        s = STATE[kind]
        return float(np.max(np.abs(K @ s["targets"] - s["output"]))), int(np.count_nonzero(K)), checksum(K[:50])
    return check


def dense_oob(kind):
    s = STATE[kind]
    return dense_matrix(s["model"], s["X"], None, oob=True)


def check_dense_oob(K):
    return int(np.count_nonzero(K)), K.nbytes


def checksum(dense_rows):
    return float(np.sum(dense_rows * np.arange(1, dense_rows.shape[1] + 1)[None, :]))


def warm_kernels():
    """Compile (or load from numba's cache) every kernel signature the runs use, outside the measurements."""
    query = np.zeros((1, 1), dtype=np.int32)
    offsets, ptr = np.zeros(1, dtype=np.int64), np.array([0, 1], dtype=np.int32)
    for members_dtype in (np.uint16, np.int32):
        members = np.zeros(1, dtype=members_dtype)
        counts = gap_row_counts(query, offsets, ptr, members, 1)
        for mass_dtype in (np.uint8, np.float64):
            gap_fill_rows(query, offsets, ptr, members, np.ones(1, dtype=mass_dtype), 1,
                          np.array([0, counts[0]]), np.empty(1, np.int32), np.empty(1))


# ------------------------------------------------------------------------------------------ setup
def setup(kind, n_train, n_test, n_trees, seed=0):
    n = n_train + n_test
    if kind == "regression":
        X, y = make_friedman1(n, n_features=10, noise=1.0, random_state=seed)
        model = RandomForestRegressor(n_trees, random_state=seed, n_jobs=2)
    else:
        X, y = make_classification(n, n_features=20, n_informative=8, n_classes=3, flip_y=0.05, random_state=seed)
        model = RandomForestClassifier(n_trees, random_state=seed, n_jobs=2)
    X_train, y_train, X_test = X[:n_train], y[:n_train], X[n_train:]
    start = time.perf_counter()
    model.fit(X_train, y_train)
    fit_time = time.perf_counter() - start
    if kind == "regression":
        targets, output = y_train.astype(float), model.predict(X_test)
    else:
        targets, output = np.eye(3)[y_train], model.predict_proba(X_test)
    STATE[kind] = dict(model=model, X=X_train, y=y_train, Xt=X_test, targets=targets, output=output)
    return fit_time


def fmt_mib(b):
    return f"{b / 2**20:,.1f} MiB" if b < 100 * 2**20 else f"{b / 2**20:,.0f} MiB"


def main(quick: bool = False) -> None:
    n_train, n_test, n_trees = (4000, 300, 30) if quick else (20_000, 1000, 100)
    dense_oob_n = 2000 if quick else 5000
    load = os.getloadavg()
    print(f"GapExplainer proximities: n_train = {n_train:,}, {n_trees} trees, {n_test:,} test points "
          f"({'quick' if quick else 'full'} mode), {os.cpu_count()} cores, load average at start "
          f"{load[0]:.2f} / {load[1]:.2f} / {load[2]:.2f}. Times on a shared machine are noisy.\n")
    warm_kernels()
    setup("regression", 300, 10, 3)
    start = time.perf_counter()
    sparse_test("regression")
    warm = time.perf_counter() - start
    rows = []
    for kind in ("regression", "classification"):
        fit_time = setup(kind, n_train, n_test, n_trees)
        ts, ms, rs_s, (err_s, nnz, cs_s, rows_s) = measure(sparse_test, (kind,), check_sparse_test(kind))
        td, md, rs_d, (err_d, nnz_d, cs_d) = measure(dense_test, (kind,), check_dense_test(kind))
        assert nnz == nnz_d and abs(cs_s - cs_d) <= 1e-9 * max(1.0, abs(cs_d)), "sparse and dense disagree"
        rows.append((f"{kind}: {n_test:,} test points", ts, rows_s, ms, rs_s, td, md, rs_d, max(err_s, err_d), nnz))
        to, mo, ro, (nnz_o, rows_o) = measure(sparse_oob, (kind,), check_sparse_oob)
        rows.append((f"{kind}: OOB, all {n_train:,} training points", to, rows_o, mo, ro, None, n_train**2 * 8.0,
                     None, None, nnz_o))
        # dense OOB baseline on a smaller training set, where the dense matrix fits comfortably
        setup(kind, dense_oob_n, n_test, n_trees, seed=1)
        to2, mo2, ro2, (nnz_o2, rows_o2) = measure(sparse_oob, (kind,), check_sparse_oob)
        td2, md2, rd2, (nnz_d2, _) = measure(dense_oob, (kind,), check_dense_oob)
        assert nnz_o2 == nnz_d2, "sparse and dense OOB supports differ"
        rows.append((f"{kind}: OOB, {dense_oob_n:,} training points", to2, rows_o2, mo2, ro2, td2, md2, rd2, None,
                     nnz_o2))
        print(f"({kind}: forest fit {fit_time:.1f} s)")
    # scale rows: the sparse method alone at n_train = 100,000 (full mode), or at 2 x n_train (quick mode, to
    # exercise the code path). Classification matters most here: its pure leaves are large, so it has far more
    # non-zeros per row than regression, and its OOB matrix is the biggest object the benchmark builds.
    n_scale = 2 * n_train if quick else 100_000
    for kind in ("regression", "classification"):
        fit_time = setup(kind, n_scale, n_test, n_trees)
        t1, m1, r1m, (err1, nnz1, _, r1) = measure(sparse_test, (kind,), check_sparse_test(kind))
        t2, m2, r2m, (nnz2, r2) = measure(sparse_oob, (kind,), check_sparse_oob)
        rows.append((f"scale, {kind}: n_train = {n_scale:,}, {n_test:,} test points", t1, r1, m1, r1m, None,
                     n_test * n_scale * 8.0, None, err1, nnz1))
        rows.append((f"scale, {kind}: n_train = {n_scale:,}, OOB all training points", t2, r2, m2, r2m, None,
                     n_scale**2 * 8.0, None, None, nnz2))
        print(f"(scale, {kind}: forest fit {fit_time:.1f} s)")
    load = os.getloadavg()
    print(f"\nkernel compile / first call: {warm:.2f} s (excluded below); load average at end {load[0]:.2f} / "
          f"{load[1]:.2f} / {load[2]:.2f}\n")
    print("| task | sparse time | of which rows | dense time | time ratio | sparse peak, traced / RSS "
          "| dense peak, traced / RSS | memory ratio, traced / RSS | max abs error vs predict | nnz |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name, ts, rs, ms, mrs, td, md, mrd, err, nnz in rows:
        dense_time = "-" if td is None else f"{td:.2f} s"
        time_ratio = "-" if td is None else f"{td / ts:.1f}x"
        if td is None:
            dense_mem = fmt_mib(md) + " (matrix alone, not run)"
            mem_ratio = f"{md / max(ms, 1):.0f}x / {md / max(mrs, 1):.0f}x"
        else:
            dense_mem = f"{fmt_mib(md)} / {fmt_mib(mrd)}"
            mem_ratio = f"{md / max(ms, 1):.1f}x / {mrd / max(mrs, 1):.1f}x"
        error = "-" if err is None else f"{err:.1e}"
        print(f"| {name} | {ts:.2f} s | {rs:.2f} s | {dense_time} | {time_ratio} | {fmt_mib(ms)} / {fmt_mib(mrs)} "
              f"| {dense_mem} | {mem_ratio} | {error} | {nnz:,} |")
    print("\nsparse time = building and verifying the leaf index (GapExplainer construction) + the rows "
          "(ex.proximities); 'of which rows' is the second part alone, the cost of each further call.")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small fast version (< 60 s)")
    main(quick=parser.parse_args().quick)
