"""Benchmark: boosting ``top_k`` over the training rows, MaxScore against the bounded-big-leaf kernel.

Data as ``bench_scale_dask.py``'s boosting workload: ``X`` standard normal (n x 20),
``y = X[:, 0] + sin(X[:, 1]) + 0.3 * noise``, a HistGradientBoostingRegressor of 100 trees (31 leaves,
``min_samples_leaf=20``), ``kind="gradients"``, k = 10. For each ``n`` of ``--sizes``, ``--rows`` training rows
(evenly spread) are explained by

* **MaxScore**: ``top_gradient_contributions(..., leaf_size=None)``, what ``top_k`` uses (kernel
  ``maxscore_top_k_rows``): the cost per explained row is the leaves it scatters, cut at ``theta``;
* **bounded leaves**: the previous kernel, ``leaf_size = n / 5`` (``pruned_top_k_rows``): O(n) per row.

Both run single-threaded on the same rows and must give the same indices and values (checked, bit for bit). The
table gives the CPU time per explained row (``time.process_time``: on a shared machine it is close to what an
idle machine's wall clock would show), the ratio, the one-off sort of the leaves' rows (a MaxScore call on one
row; the kernel's time per row is the difference to the call on all rows), the peak resident set of the process,
and the full ``top_k(None)`` over all n rows extrapolated from the per-row time to two cores
at a parallel efficiency of 1 (an extrapolation, written as one). ``--full N`` also fits the model on N rows and
runs ``BoostingExplainer.top_k(..., k=10)`` against all N training rows (wall clock, peak resident set): first on
``--efficiency-rows`` evenly spread training rows with ``n_jobs=1`` and ``n_jobs=2`` (the efficiency 1 -> 2 workers,
``T1 / (2 T2)``, and the same result checked), then ``top_k(None)`` over all N rows with each of ``--full-jobs``
(default 2: at 1,000,000 rows one job would take twice the 30-minute target). Under ``run_all.py figures`` the
full run's summary is recorded (``full_minutes``, ``efficiency``, ``peak_gib``, ...), and at a million rows issue
28's target for it (``issue_28``: 30 minutes, 8 GiB, an efficiency of 0.8), which docs/scale.md renders.

Usage: ``python benchmarks/bench_boosting_top_k.py [--quick] [--sizes 20000 100000 300000] [--rows 1000]
[--full 100000] [--efficiency-rows 20000] [--full-jobs 2]``
"""

from __future__ import annotations

import os
import resource
import time

import numpy as np
from _common import Bench, markdown_table, record, target_verdict
from sklearn.ensemble import HistGradientBoostingRegressor

from shap_instances import BoostingExplainer
from shap_instances.boosting import row_major_contributions, top_gradient_contributions


def data(n: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(3)
    X = rng.normal(size=(n, 20))
    return X, X[:, 0] + np.sin(X[:, 1]) + 0.3 * rng.normal(size=n)


def cpu(function):
    start = time.process_time()
    result = function()
    return time.process_time() - start, result


def size_row(n: int, rows: int, k: int) -> list:
    X, y = data(n)
    model = HistGradientBoostingRegressor(max_iter=100, early_stopping=False, random_state=0).fit(X, y)
    explainer = BoostingExplainer(model, X, y=y, kind="gradients")
    trees = explainer.trees_
    index = row_major_contributions(trees, 0)
    query = trees.apply(X[np.linspace(0, n - 1, rows).astype(int)])
    # every MaxScore call sorts the leaves' lists first: a call on one row times that (and one row), and the
    # kernel's time per row is the difference to the call on all rows (same sort, same allocations)
    # (after an untimed first call, whose numba compilation or cache load made the one-row call the longer one)
    one_row = [cpu(lambda: top_gradient_contributions(trees, query[:1], k, None, index))[0] for _ in range(3)]
    sort_s = min(one_row[1:])
    fast_s, (fast_i, fast_v, _) = cpu(lambda: top_gradient_contributions(trees, query, k, None, index))
    fast_s = max(fast_s - sort_s, 0.0) * rows / (rows - 1)
    old_s, (old_i, old_v, _) = cpu(lambda: top_gradient_contributions(trees, query, k, max(1, n // 5), index))
    same = np.array_equal(fast_i, old_i) and np.array_equal(fast_v, old_v)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
    return [f"{n:,}", f"{1e3 * fast_s / rows:.3f}", f"{1e3 * old_s / rows:.3f}", f"{old_s / fast_s:.1f}",
            f"{sort_s:.1f}", f"{(sort_s + fast_s * n / rows) / 2 / 60:.1f}", f"{(old_s * n / rows) / 2 / 60:.1f}",
            f"{peak:.2f}", "yes" if same else "NO", f"{os.getloadavg()[0]:.1f}"]


def _timed_top_k(model, X, y, rows, k: int, jobs: int) -> tuple[float, object]:
    """(wall seconds, result) of ``top_k`` of the training ``rows`` (None: all) with ``n_jobs=jobs``."""
    explainer = BoostingExplainer(model, X, y=y, kind="gradients", n_jobs=jobs)
    start = time.perf_counter()
    result = explainer.top_k(None if rows is None else X[rows], k=k)
    return time.perf_counter() - start, result


def full_run(bench, n: int, k: int) -> None:
    X, y = data(n)
    start = time.perf_counter()
    model = HistGradientBoostingRegressor(max_iter=100, early_stopping=False, random_state=0).fit(X, y)
    fit_s, rows = time.perf_counter() - start, np.linspace(0, n - 1, min(bench.args.efficiency_rows, n)).astype(int)
    (t1, r1), (t2, r2) = (_timed_top_k(model, X, y, rows, k, jobs) for jobs in (1, 2))
    table = [[f"{len(rows):,} evenly spread rows", "1", f"{t1:.1f}", "", ""],
             [f"{len(rows):,} evenly spread rows", "2", f"{t2:.1f}", f"{t1 / (2 * t2):.2f}",
              str((r1 != r2).nnz == 0)]]
    _print_full(bench, n, k, fit_s, table, "efficiency")
    for jobs in bench.args.full_jobs:
        seconds, _ = _timed_top_k(model, X, y, None, k, jobs)
        table.append([f"all {n:,} rows", str(jobs), f"{seconds:.1f} ({seconds / 60:.1f} min)", "", ""])
    if bench.args.full_jobs:
        peak = _print_full(bench, n, k, fit_s, table, "full")
        minutes, efficiency = seconds / 60, t1 / (2 * t2)  # the last all-rows call (the most jobs by default)
        record(full_rows=n, full_jobs=jobs, full_minutes=round(minutes, 1), efficiency=round(efficiency, 2),
               peak_gib=round(peak, 2), fit_s=round(fit_s), same_result=bool((r1 != r2).nnz == 0))
        if n >= 1_000_000:  # issue 28's target, at its size
            record(issue_28=target_verdict(minutes=(minutes, "<=", 30), memory=(peak, "<=", 8),
                                           efficiency=(efficiency, ">=", 0.8)))


def _print_full(bench, n: int, k: int, fit_s: float, table: list, part: str) -> float:
    """Print the table of :func:`full_run` so far, with the peak resident set (returned, GiB) and the load."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
    bench.print(f"top_k (k = {k}) against all {n:,} training rows: wall clock (the model's fit, {fit_s:.0f} s, apart)",
                markdown_table(["explained", "n_jobs", "wall (s)", "efficiency 1 -> 2", "same result"], table),
                f"Peak resident set of the process {peak:.2f} GiB; load average {os.getloadavg()[0]:.1f} at the end.",
                part=part)
    return peak


def main(bench):
    X, y = data(300)  # compile the kernels before any clock
    warm = BoostingExplainer(HistGradientBoostingRegressor(max_iter=2).fit(X, y), X, y=y, kind="gradients")
    query = warm.trees_.apply(X[:3])
    for leaf_size in (None, 50):
        top_gradient_contributions(warm.trees_, query, 2, leaf_size, row_major_contributions(warm.trees_, 0))
    sizes = (5_000, 20_000) if bench.quick else tuple(bench.args.sizes)
    rows, k = (200 if bench.quick else bench.args.rows), 10
    table = [size_row(n, rows, k) for n in sizes]
    if table:
        bench.print(f"top_k (k = {k}) of {rows:,} training rows, evenly spread, explained against all n training "
                    "rows (kind=\"gradients\", HistGradientBoostingRegressor, 100 trees); CPU ms per explained row, "
                    "one thread",
                    markdown_table(["n", "MaxScore (ms/row)", "bounded leaves (ms/row)", "ratio",
                                    "sort of the leaves and one row (s)",
                                    "MaxScore, all n rows, 2 cores (min, extrapolated)",
                                    "bounded leaves, all n rows, 2 cores (min, extrapolated)", "peak resident (GiB)",
                                    "same result", "load"], table), part="sizes")
    if bench.args.full:
        full_run(bench, bench.args.full, k)


def arguments(parser):
    parser.add_argument("--sizes", type=int, nargs="*", default=[20_000, 100_000, 300_000], help="none: no table")
    parser.add_argument("--rows", type=int, default=1_000, help="explained training rows per size")
    parser.add_argument("--full", type=int, default=0, help="also top_k against all of this many training rows")
    parser.add_argument("--efficiency-rows", type=int, default=20_000, help="rows explained with 1 and 2 jobs")
    parser.add_argument("--full-jobs", type=int, nargs="*", default=[2], help="n_jobs of top_k(None) over all rows")


if __name__ == "__main__":
    Bench(__doc__, arguments=arguments).run(main)
