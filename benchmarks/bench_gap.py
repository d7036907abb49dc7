"""Benchmark: sparse RF-GAP proximities (GapExplainer) against a dense-matrix computation, in the same run.

For each task (regression, classification) a forest of 100 trees is fitted on n_train = 20,000 points and
the proximities of 1,000 test points are computed twice:

* **sparse**: ``GapExplainer(forest, X, y)`` (leaf index, verified against every leaf) then
  ``ex.proximities(X_test)`` (numba kernel, CSR);
* **dense**: the straightforward computation, tree by tree, of the (m, n_train) float64 matrix
  ``sum_t [leaf_t(x) = leaf_t(i)] c_i(t) / W_t(leaf) / T`` with numpy broadcasting.

The out-of-bag proximities of all training points (n_train x n_train) are timed for the sparse method, and
against the dense method at a size where the dense matrix fits (``dense_oob_n``). The scale row fits a forest
on n_train = 100,000 points (full mode only) and reports the sparse method's peak memory.

Memory is the peak resident-set growth of a forked child process doing only that computation (sampled every
2 ms, so it includes numba's allocations, which tracemalloc does not see). Every run checks that both methods
agree and reconstruct ``predict`` / ``predict_proba`` (max abs error printed).

Usage: ``python benchmarks/bench_gap.py [--quick]``.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import threading
import time

import numpy as np
from sklearn.datasets import make_classification, make_friedman1
from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor

from shap_instances import GapExplainer


def _rss() -> int:
    with open("/proc/self/statm") as handle:
        return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _child(fn, args, queue):
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
    queue.put((elapsed, peak[0] - base, result))


def measure(fn, *args):
    """(seconds, peak extra bytes, result) of ``fn(*args)`` run in a forked child."""
    ctx = mp.get_context("fork")
    queue = ctx.Queue()
    process = ctx.Process(target=_child, args=(fn, args, queue))
    process.start()
    out = queue.get()
    process.join()
    return out


# ------------------------------------------------------------------------------------------ methods
STATE = {}


def sparse_test(kind):
    s = STATE[kind]
    ex = GapExplainer(s["model"], s["X"], s["y"])
    start = time.perf_counter()
    P = ex.proximities(s["Xt"])
    rows_time = time.perf_counter() - start
    return float(np.max(np.abs(P @ s["targets"] - s["output"]))), P.nnz, checksum(P[:50].toarray()), rows_time


def sparse_oob(kind, n=None):
    s = STATE[kind]
    ex = GapExplainer(s["model"], s["X"], s["y"])
    start = time.perf_counter()
    P = ex.proximities()
    return P.nnz, time.perf_counter() - start


def dense_matrix(model, X, query, c_list, oob=False):
    """Dense (m, n) RF-GAP matrix, tree by tree, float64 (the baseline)."""
    train_leaves = model.apply(X)
    query_leaves = train_leaves if oob else model.apply(query)
    m, n = query_leaves.shape[0], X.shape[0]
    K = np.zeros((m, n))
    used = np.zeros(m)
    for t, c in enumerate(c_list):
        same = query_leaves[:, [t]] == train_leaves[None, :, t]
        W = same @ c
        block = same * (c[None, :] / W[:, None])
        if oob:
            use = c == 0
            block[~use] = 0.0
            used += use
        else:
            used += 1
        K += block
        del same, block
    K /= np.maximum(used, 1)[:, None]
    return K


def dense_test(kind):
    s = STATE[kind]
    c_list = [np.bincount(idx, minlength=s["X"].shape[0]).astype(float) for idx in s["model"].estimators_samples_]
    K = dense_matrix(s["model"], s["X"], s["Xt"], c_list)
    return float(np.max(np.abs(K @ s["targets"] - s["output"]))), int((K > 0).sum()), checksum(K[:50])


def dense_oob(kind):
    s = STATE[kind]
    c_list = [np.bincount(idx, minlength=s["X"].shape[0]).astype(float) for idx in s["model"].estimators_samples_]
    K = dense_matrix(s["model"], s["X"], None, c_list, oob=True)
    return int((K > 0).sum()), K.nbytes


def checksum(dense_rows):
    return float(np.sum(dense_rows * np.arange(1, dense_rows.shape[1] + 1)[None, :]))


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
    return f"{b / 2**20:,.0f} MiB"


def main(quick: bool = False) -> None:
    n_train, n_test, n_trees = (4000, 300, 30) if quick else (20_000, 1000, 100)
    dense_oob_n = 2000 if quick else 5000
    print(f"GapExplainer proximities: n_train = {n_train:,}, {n_trees} trees, {n_test:,} test points "
          f"({'quick' if quick else 'full'} mode). Times on a shared 2-core machine are noisy.\n")
    # compile the kernel once outside the measurements (reported separately)
    setup("regression", 300, 10, 3)
    start = time.perf_counter()
    sparse_test("regression")
    warm = time.perf_counter() - start
    rows = []
    for kind in ("regression", "classification"):
        fit_time = setup(kind, n_train, n_test, n_trees)
        ts, ms, (err_s, nnz, cs_s, rows_s) = measure(sparse_test, kind)
        td, md, (err_d, nnz_d, cs_d) = measure(dense_test, kind)
        assert nnz == nnz_d and abs(cs_s - cs_d) <= 1e-9 * max(1.0, abs(cs_d)), "sparse and dense disagree"
        rows.append((f"{kind}: {n_test:,} test points", ts, rows_s, ms, td, md, max(err_s, err_d), nnz))
        to, mo, (nnz_o, rows_o) = measure(sparse_oob, kind)
        rows.append((f"{kind}: OOB, all {n_train:,} training points", to, rows_o, mo, None, n_train**2 * 8.0, None,
                     nnz_o))
        # dense OOB baseline on a subset-size forest where the dense matrix fits comfortably
        setup(kind, dense_oob_n, n_test, n_trees, seed=1)
        to2, mo2, (nnz_o2, rows_o2) = measure(sparse_oob, kind)
        td2, md2, (nnz_d2, _) = measure(dense_oob, kind)
        assert nnz_o2 == nnz_d2, "sparse and dense OOB supports differ"
        rows.append((f"{kind}: OOB, {dense_oob_n:,} training points", to2, rows_o2, mo2, td2, md2, None, nnz_o2))
        print(f"({kind}: forest fit {fit_time:.1f} s)")
    if not quick:
        fit_time = setup("regression", 100_000, n_test, n_trees)
        t1, m1, (err1, nnz1, _, r1) = measure(sparse_test, "regression")
        t2, m2, (nnz2, r2) = measure(sparse_oob, "regression")
        rows.append((f"scale, regression: n_train = 100,000, {n_test:,} test points", t1, r1, m1, None,
                     n_test * 100_000 * 8.0, err1, nnz1))
        rows.append(("scale, regression: n_train = 100,000, OOB all training points", t2, r2, m2, None,
                     100_000**2 * 8.0, None, nnz2))
        print(f"(scale: forest fit {fit_time:.1f} s)")
    print(f"\nkernel compile / first call: {warm:.2f} s (excluded below)\n")
    print("| task | sparse time | of which rows | sparse peak memory | dense time | dense peak memory | time ratio "
          "| memory ratio | max abs error vs predict | nnz |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name, ts, rs, ms, td, md, err, nnz in rows:
        dense_time = "-" if td is None else f"{td:.2f} s"
        dense_mem = fmt_mib(md) + ("" if td is not None else " (matrix alone, not run)")
        time_ratio = "-" if td is None else f"{td / ts:.1f}x"
        mem_ratio = f"{md / max(ms, 1):.1f}x"
        error = "-" if err is None else f"{err:.1e}"
        print(f"| {name} | {ts:.2f} s | {rs:.2f} s | {fmt_mib(ms)} | {dense_time} | {dense_mem} | {time_ratio} "
              f"| {mem_ratio} | {error} | {nnz:,} |")
    print("\nsparse time = building and verifying the leaf index (GapExplainer construction) + the rows "
          "(ex.proximities); 'of which rows' is the second part alone, the cost of each further call.")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small fast version (< 60 s)")
    main(quick=parser.parse_args().quick)
