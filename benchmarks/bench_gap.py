"""Benchmark: sparse RF-GAP proximities (GapExplainer) against a leaf-grouped dense computation, in the same run.

For each task (regression, classification) a forest of 100 trees is fitted on n_train = 20,000 points, and
the proximities of 1,000 test points and the out-of-bag proximities of all training points are computed twice:

* **sparse**: ``GapExplainer(forest, X, y=y)`` (leaf index, verified against every leaf) then
  ``ex.proximities(X_test)`` or ``ex.proximities()`` (numba kernel, CSR);
* **dense**: the (m, n_train) float64 matrix ``(1/T) sum_t c_i(t) [leaf_t(x) = leaf_t(i)] / W_t(leaf)`` written
  from the paper the way a user would write it well: tree by tree, the in-bag training points sorted by leaf
  once, each query's leaf found by ``searchsorted``, so only co-members are ever touched (no query-by-training
  comparison). For test points each query's pairs are expanded and added in one vectorised step; for the
  out-of-bag matrix, where many queries share a leaf, queries are grouped by leaf and each group gets one block
  update (in a trial run these were the faster of the two variants, 1.9 s against 3.0 s and 13 s against
  18 s). Its only large array is the output matrix itself.

The scale rows fit a forest on n_train = 100,000 points for each task (full mode; quick mode runs them at
twice its n_train only to exercise the code) and report the sparse method alone (one run; the dense matrix
would need 75 GiB for the out-of-bag case).

Memory is measured the same way for both methods, in forked child processes doing only that computation:
the **tracemalloc peak** (every numpy, numba and Python allocation; deterministic; one run) and the **peak
resident-set growth** (sampled every 2 ms; also sees allocator slack and C-level buffers). Times come from
the resident-set runs (tracemalloc slows allocation-heavy code): three per method, sparse and dense
alternating, medians reported, ratios the median of the per-repetition ratios. The checks (reconstruction
error, agreement of the two methods) run after the peak is recorded. Kernels are compiled before any
measurement (the first call is reported on its own); BLAS and OpenMP are limited to one thread for both.

Usage: ``python benchmarks/bench_gap.py [--quick] [--threads N] [--markdown FILE]``.
"""

from __future__ import annotations

import multiprocessing as mp
import statistics
import time
import tracemalloc
from dataclasses import dataclass

import numpy as np
from _common import REPEATS, Bench, Timing, fmt_mib, markdown_table, ratio, rss_peak
from sklearn.datasets import make_classification, make_friedman1
from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor

from shap_instances import GapExplainer
from shap_instances.forest._kernels import gap_fill_rows, gap_row_counts


def _child(fn, args, check, mode, queue):
    if mode == "trace":
        tracemalloc.start()
        result = fn(*args)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        queue.put((None, peak, None))
        return
    with rss_peak() as growth:
        start = time.perf_counter()
        result = fn(*args)
        elapsed = time.perf_counter() - start
    queue.put((elapsed, growth(), check(result)))


def _fork(fn, args, check, mode):
    ctx = mp.get_context("fork")
    queue = ctx.Queue()
    process = ctx.Process(target=_child, args=(fn, args, check, mode, queue))
    process.start()
    out = queue.get()
    process.join()
    return out


@dataclass
class Measured:
    time: Timing  # seconds of the resident-set runs
    traced: int  # tracemalloc peak bytes (one run)
    rss: float  # median peak RSS growth of the resident-set runs, bytes
    checked: list  # check(result) of every resident-set run


def measure(*methods, repeats=REPEATS):
    """Measure ``methods`` (each ``(fn, args, check)``), each run in a forked child: one tracemalloc run, then
    ``repeats`` resident-set runs in which the methods alternate. Returns one :class:`Measured` per method."""
    traced = [_fork(fn, args, check, "trace")[1] for fn, args, check in methods]
    runs = [[] for _ in methods]
    for _ in range(repeats):
        for k, (fn, args, check) in enumerate(methods):
            runs[k].append(_fork(fn, args, check, "rss"))
    return [Measured(Timing([r[0] for r in rows]), peak, statistics.median(r[1] for r in rows), [r[2] for r in rows])
            for rows, peak in zip(runs, traced, strict=True)]


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
    return P.nnz, rows_time, checksum(P[:50].toarray())


def dense_matrix(model, X, query=None, oob=False):
    """Dense (m, n) float64 RF-GAP matrix from the paper's formula, grouped by leaf (see the module docstring).

    ``oob=True``: ``query`` is the training data itself and each row averages the trees where it is out-of-bag.
    """
    X32 = np.ascontiguousarray(X, dtype=np.float32)
    n = X32.shape[0]
    Q32 = X32 if oob else np.ascontiguousarray(query, dtype=np.float32)
    m = Q32.shape[0]
    K = np.zeros((m, n))
    flat = K.reshape(-1)
    used = np.zeros(m)
    for tree, drawn in zip(model.estimators_, model.estimators_samples_, strict=True):
        c = np.bincount(drawn, minlength=n).astype(np.float64)  # in-bag multiplicities c_i(t)
        train_leaves = tree.apply(X32)
        query_leaves = train_leaves if oob else tree.apply(Q32)
        inbag = np.flatnonzero(c)
        members = inbag[np.argsort(train_leaves[inbag], kind="stable")]  # in-bag points sorted by leaf
        member_leaves = train_leaves[members]
        w = c / np.bincount(train_leaves, weights=c, minlength=tree.tree_.node_count)[train_leaves]  # c_i / W
        queries = np.flatnonzero(c == 0) if oob else np.arange(m)
        used[queries] += 1
        leaves = query_leaves[queries]
        start = np.searchsorted(member_leaves, leaves, "left")
        stop = np.searchsorted(member_leaves, leaves, "right")
        if oob:  # many queries share a leaf: one block update per leaf
            order = np.argsort(leaves, kind="stable")
            _, first, count = np.unique(leaves[order], return_index=True, return_counts=True)
            for f, k in zip(first, count, strict=True):
                cols = members[start[order[f]]:stop[order[f]]]
                K[np.ix_(queries[order[f:f + k]], cols)] += w[cols]
        else:  # each query's co-members expanded into (row, column) pairs, added at once (no repeats per tree)
            size = stop - start
            rows = np.repeat(queries, size)
            cols = members[np.arange(size.sum()) + np.repeat(start - np.cumsum(size) + size, size)]
            flat[rows * n + cols] += w[cols]
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
    return int(np.count_nonzero(K)), checksum(K[:50])


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


def _row(name, sparse, rows_seconds, dense, error, nnz, matrix_bytes):
    """One table row; ``dense`` None: not run (the matrix alone is shown)."""
    cells = [name, f"{sparse.time.median:.2f} s", f"{statistics.median(rows_seconds):.2f} s"]
    if dense is None:
        cells += ["-", "-", f"{fmt_mib(sparse.traced)} / {fmt_mib(sparse.rss)}",
                  f"{fmt_mib(matrix_bytes)} (matrix alone, not run)",
                  f"{matrix_bytes / max(sparse.traced, 1):,.0f}x / {matrix_bytes / max(sparse.rss, 1):,.0f}x"]
    else:
        cells += [f"{dense.time.median:.2f} s", ratio(dense.time, sparse.time),
                  f"{fmt_mib(sparse.traced)} / {fmt_mib(sparse.rss)}",
                  f"{fmt_mib(dense.traced)} / {fmt_mib(dense.rss)}",
                  f"{dense.traced / max(sparse.traced, 1):.1f}x / {dense.rss / max(sparse.rss, 1):.1f}x"]
    return cells + ["-" if error is None else f"{error:.1e}", f"{nnz:,}"]


def _agree(sparse_checksum, dense_checksum):
    return abs(sparse_checksum - dense_checksum) <= 1e-9 * max(1.0, abs(dense_checksum))


def main(bench: Bench) -> None:
    quick = bench.quick
    n_train, n_test, n_trees = (4000, 300, 30) if quick else (20_000, 1000, 100)
    start = time.perf_counter()
    warm_kernels()
    setup("regression", 300, 10, 3)
    sparse_test("regression")
    warm = time.perf_counter() - start
    rows, notes = [], []
    for kind in ("regression", "classification"):
        fit_time = setup(kind, n_train, n_test, n_trees)
        s = STATE[kind]
        index_bytes = GapExplainer(s["model"], s["X"], y=s["y"]).index_.nbytes
        sparse, dense = measure((sparse_test, (kind,), check_sparse_test(kind)),
                                (dense_test, (kind,), check_dense_test(kind)))
        err_s, nnz, cs_s, _ = sparse.checked[-1]
        err_d, nnz_d, cs_d = dense.checked[-1]
        assert nnz == nnz_d and _agree(cs_s, cs_d), "sparse and dense test-point proximities disagree"
        rows.append(_row(f"{kind}: {n_test:,} test points, n = {n_train:,}", sparse, [c[3] for c in sparse.checked],
                         dense, max(err_s, err_d), nnz, None))
        sparse, dense = measure((sparse_oob, (kind,), check_sparse_oob), (dense_oob, (kind,), check_dense_oob))
        nnz_o, _, cs_o = sparse.checked[-1]
        nnz_d, cs_d = dense.checked[-1]
        assert nnz_o == nnz_d and _agree(cs_o, cs_d), "sparse and dense OOB proximities disagree"
        rows.append(_row(f"{kind}: OOB, all {n_train:,} training points", sparse, [c[1] for c in sparse.checked],
                         dense, None, nnz_o, None))
        notes.append(f"{kind}: forest fit {fit_time:.1f} s, leaf index {index_bytes / 1e6:.1f} MB")
    # scale rows: the sparse method alone at n_train = 100,000 (full mode), or at 2 x n_train (quick mode, to
    # exercise the code path), one run each. Classification matters most here: its pure leaves are large, so it
    # has far more non-zeros per row than regression, and its OOB matrix is the biggest object built here.
    n_scale = 2 * n_train if quick else 100_000
    for kind in ("regression", "classification"):
        fit_time = setup(kind, n_scale, n_test, n_trees)
        (sparse,) = measure((sparse_test, (kind,), check_sparse_test(kind)), repeats=1)
        err, nnz, _, rows_seconds = sparse.checked[-1]
        rows.append(_row(f"scale, {kind}: {n_test:,} test points, n = {n_scale:,}", sparse, [rows_seconds], None,
                         err, nnz, n_test * n_scale * 8.0))
        (sparse,) = measure((sparse_oob, (kind,), check_sparse_oob), repeats=1)
        nnz, rows_seconds, _ = sparse.checked[-1]
        rows.append(_row(f"scale, {kind}: OOB, all {n_scale:,} training points", sparse, [rows_seconds], None,
                         None, nnz, n_scale**2 * 8.0))
        notes.append(f"scale, {kind}: forest fit {fit_time:.1f} s")
    bench.print(
        f"GapExplainer proximities: {n_trees} fully grown trees, {n_test:,} test points, sparse vs the leaf-grouped "
        f"dense matrix. Times: medians of {REPEATS} runs per method (scale rows: one run), ratios the median of "
        f"the per-run ratios (range in brackets). Kernel compilation / first call: {warm:.2f} s (excluded). "
        + "; ".join(notes) + ".",
        markdown_table(["task", "sparse time", "of which rows", "dense time", "speed-up (dense / sparse)",
                        "sparse peak, traced / RSS",
                        "dense peak, traced / RSS", "memory ratio, traced / RSS", "max abs error vs predict",
                        "non-zeros"], rows),
        "sparse time = building and verifying the leaf index (GapExplainer construction) + the rows "
        "(ex.proximities); 'of which rows' is the second part alone, the cost of each further call.", part="table")


if __name__ == "__main__":
    Bench(__doc__).run(main)
