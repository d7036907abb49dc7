"""Scale on a dask LocalCluster: naive Bayes from Parquet through ``explain``, GAP out-of-bag, boosting ``top_k``.

Each workload runs on a fresh ``LocalCluster`` of 1 and of 2 single-threaded worker processes (``--workers``), and
once in this process as the baseline:

* **naive Bayes**: ``shap-instances explain --explain rows.parquet --scheduler ADDRESS`` on ``--nb-rows`` x
  ``--nb-features`` rows (row groups of ``--row-group`` rows; a GaussianNB fitted on 20,000 rows), the values
  written as ``--out values.npy`` (memory-mapped arrays) and as Parquet parts (``--nb-format``); baselines, on
  1,000,000 rows in memory, here: ``NaiveBayesExplainer`` of a bare GaussianNB on an ndarray, and the command's
  own explainer (its model is a pipeline: standard scaling, then GaussianNB) on a DataFrame, scaling included;
* **GAP out-of-bag**: ``GapExplainer(forest, scheduler=...).proximities()``, the out-of-bag proximity matrix of
  ``--gap-train`` training rows (``--trees`` trees, ``min_samples_leaf=5``) by blocks of rows; baseline: the same
  call without a scheduler;
* **boosting top_k**: ``BoostingExplainer(model, scheduler=...).top_k(None, k=10)`` over all ``--boost-train``
  training rows (a HistGradientBoostingRegressor of ``--trees`` trees, ``kind="gradients"``); baseline: the same
  call without a scheduler.

Every distributed result is compared with the baseline (bitwise). Reported: wall time, rows per second, the
parallel efficiency ``t1 / (w t_w)`` from 1 to ``w`` workers, and the peak resident memory of each worker process
(``VmHWM`` of the worker, so it includes the interpreter and the scattered explainer; the workers import
the package before the clock starts, so the times include the numba kernels' first calls). The load average is
printed beside every table: the machine may be shared, and every ratio is between runs of one invocation. Under
``run_all.py figures scale_dask`` each workload's table is recorded as part ``nb``, ``gap`` or ``boosting`` of
``benchmarks/results/fig-scale_dask.json`` (docs/scale.md renders them). For
naive Bayes, rows per CPU second are printed too (the workers' and this process's CPU time, user and system, all
threads, over the run, against the in-memory call's own CPU time): under load, wall times stretch with the other
processes, CPU seconds much less.

    python benchmarks/bench_scale_dask.py                        # the reduced sizes the docs quote
    python benchmarks/bench_scale_dask.py --nb-rows 50_000_000 --gap-train 1_000_000 --boost-train 1_000_000
"""

from __future__ import annotations

import argparse
import copy
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

# one OpenMP thread in this process and (inherited) in every worker, as docs/scale.md's figures were measured: the
# workers are single-threaded by design, and the baselines must be too; set before numpy loads its runtimes
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import scipy.sparse as sp  # noqa: E402
from _common import (  # noqa: E402
    fmt_load,
    fmt_mib,
    fmt_seconds,
    load_average,
    machine_description,
    markdown_table,
    record,
    target_verdict,
)

import shap_instances as si  # noqa: E402
from shap_instances.cli import main as cli  # noqa: E402

#: Issue 28's sizes: naive Bayes explains 50 million rows; GAP and boosting train on a million.
TARGET_ROWS, TARGET_TRAIN = 50_000_000, 1_000_000


def _peak_rss() -> int:
    """This process's peak resident set (``VmHWM``: reset by exec, unlike ``getrusage``'s, which a spawned worker
    inherits from the process that started it)."""
    with open("/proc/self/status") as handle:
        return next(int(line.split()[1]) * 1024 for line in handle if line.startswith("VmHWM:"))


def _cpu_seconds() -> float:
    """CPU seconds (user and system, all threads) this process has used: rates per CPU second hold under load,
    where wall times stretch with the other processes sharing the cores."""
    return time.process_time()


def _warm_up() -> None:
    """Imports on a worker before the timed run (the numba kernels load from their cache at the first call)."""
    import shap_instances.cli
    import shap_instances.explainers.boosting
    import shap_instances.explainers.gap
    import shap_instances.explainers.naive_bayes  # noqa: F401


def _on_cluster(n_workers: int, run):
    """(seconds, result, peak RSS of each worker, CPU seconds of the workers and this process) of ``run(client)``
    on a fresh LocalCluster of worker processes."""
    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=True, memory_limit=0,
                      dashboard_address=None) as cluster, Client(cluster) as client:
        client.run(_warm_up)
        cpu = sum(client.run(_cpu_seconds).values()) + time.process_time()
        start = time.perf_counter()
        result = run(client)
        seconds = time.perf_counter() - start
        cpu = sum(client.run(_cpu_seconds).values()) + time.process_time() - cpu
        peaks = sorted(client.run(_peak_rss).values())
    return seconds, result, peaks, cpu


def _write_nb_files(folder: Path, n_rows: int, n_features: int, row_group: int) -> None:
    """A training CSV (20,000 rows, two Gaussian classes) and ``n_rows`` rows to explain, in Parquet row groups."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(0)
    columns = [f"x{j}" for j in range(n_features)]
    label = rng.integers(0, 2, 20_000)
    train = pd.DataFrame(rng.normal(size=(20_000, n_features)) + label[:, None] * 0.3, columns=columns)
    train.assign(label=label).to_csv(folder / "train.csv", index=False)
    writer = None
    for start in range(0, n_rows, row_group):
        block = pd.DataFrame(rng.normal(size=(min(row_group, n_rows - start), n_features)), columns=columns)
        table = pa.Table.from_pandas(block, preserve_index=False)
        writer = writer or pq.ParquetWriter(folder / "rows.parquet", table.schema)
        writer.write_table(table, row_group_size=row_group)
    writer.close()


def naive_bayes(args, folder: Path) -> tuple[list, str]:
    from sklearn.naive_bayes import GaussianNB

    from shap_instances.report import auto_model, encode, final_estimator, fit_model

    _write_nb_files(folder, args.nb_rows, args.nb_features, args.row_group)
    train = pd.read_csv(folder / "train.csv")
    X = train.drop(columns="label")
    rows = pd.DataFrame(np.random.default_rng(1).normal(size=(1_000_000, args.nb_features)), columns=X.columns)
    bare = si.NaiveBayesExplainer(GaussianNB().fit(X.to_numpy(), train.label), X.to_numpy()[:1000])
    # the command's own model (scaled features, then GaussianNB) and explainer, on a DataFrame, in this process
    model = fit_model(auto_model("classification", "naive_bayes"), "classification", X, train.label, 0,
                      explainer="naive_bayes")
    same = si.Explainer(final_estimator(model), encode(model, X), algorithm="naive_bayes")
    matrix = rows.to_numpy()
    rates = {"bare": _in_memory_rate(bare, matrix), "same": _in_memory_rate(lambda r: same(encode(model, r)), rows)}
    del rows, matrix
    table = [["in memory, this process: GaussianNB on an ndarray", "", f"{rates['bare'][0]:,.0f}", "", "", "",
              f"{rates['bare'][1]:,.0f}", "", ""],
             ["in memory, this process: the command's pipeline (scaler + GaussianNB) on a DataFrame", "",
              f"{rates['same'][0]:,.0f}", "", "", "", f"{rates['same'][1]:,.0f}", "", ""]]
    read = _read_rate(folder / "rows.parquet")
    ceiling = 1 / (1 + rates["same"][1] / read)  # a row read and explained costs at least both CPU times
    table.append(["reading alone, this process: the row groups to float64 matrices (pyarrow)", "", "", "", "", "",
                  f"{read:,.0f}", f"at most {ceiling:.2f} for any run reading the file", ""])
    summary: dict[str, dict] = {}
    for suffix in args.nb_format:
        times: dict[int, float] = {}
        for w in args.workers:
            out = folder / f"nb-{w}.{suffix}"

            def run(client, out=out):
                assert cli(["explain", "--data", str(folder / "train.csv"), "--target", "label", "--explainer",
                            "naive_bayes", "--explain", str(folder / "rows.parquet"), "--out", str(out), "--force",
                            "--scheduler", client.scheduler.address]) == 0

            seconds, _, peaks, cpu = _on_cluster(w, run)
            times[w] = seconds
            rate, per_cpu = args.nb_rows / seconds, args.nb_rows / cpu
            table.append([f"explain --out .{suffix}, {w} worker(s)", fmt_seconds(seconds), f"{rate:,.0f}",
                          f"{rate / w / rates['bare'][0]:.2f}", f"{rate / w / rates['same'][0]:.2f}",
                          f"{times[args.workers[0]] * args.workers[0] / (w * seconds):.2f}", f"{per_cpu:,.0f}",
                          f"{per_cpu / rates['same'][1]:.2f}", ", ".join(fmt_mib(p) for p in peaks)])
            _check_first_part(folder, suffix, w)
            summary[f"{suffix}_{w}"] = {"seconds": seconds, "per_core": rate / w / rates["bare"][0],
                                        "worker_peak_gib": max(peaks) / 2**30}
            shutil.rmtree(out)  # at 50 million rows the values take 20 GB: one output on disk at a time
    _record_naive_bayes(summary, ceiling, args.nb_rows)
    return table, (f"naive Bayes: {args.nb_rows:,} x {args.nb_features} from Parquet (row groups of "
                   f"{args.row_group:,}), values written as {' and '.join(args.nb_format)} (the first row group's "
                   "values of every run checked bitwise against explain without a scheduler)")


def _record_naive_bayes(summary: dict[str, dict], ceiling: float, n_rows: int) -> None:
    """Record each naive Bayes run and, at issue 28's size (:data:`TARGET_ROWS` rows), its targets: a worker's
    peak within 2 GiB, and the rate per core at least 0.8 of the in-memory one (the bare GaussianNB's on an
    ndarray, which the target names)."""
    peak = max(run["worker_peak_gib"] for run in summary.values())
    per_core = max(run["per_core"] for run in summary.values())
    record(**{f"nb_{name}_{key}": round(value, 2) for name, run in summary.items() for key, value in run.items()},
           nb_worker_peak_gib=round(peak, 2), nb_best_per_core=round(per_core, 2), nb_read_ceiling=round(ceiling, 2))
    if n_rows >= TARGET_ROWS:
        record(nb_memory_target=target_verdict(memory=(peak, "<=", 2)),
               nb_throughput_target=target_verdict(throughput=(per_core, ">=", 0.8)))


def _in_memory_rate(explain, rows) -> tuple[float, float]:
    """Rows per second and per CPU second of ``explain(rows)``, the fastest of 3 calls (after a first call on
    1,000 rows apart)."""
    explain(rows[:1000])
    seconds, cpu = [], []
    for _ in range(3):
        start, start_cpu = time.perf_counter(), time.process_time()
        explain(rows)
        seconds.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    return len(rows) / min(seconds), len(rows) / min(cpu)


def _read_rate(path: Path, limit: int = 2_000_000) -> float:
    """Rows per CPU second of reading the first ``limit`` rows of ``path`` into float64 matrices (pyarrow, as the
    command's workers read them), the fastest of 3: no run that reads the file can explain faster per CPU second
    than reading and explaining in memory, one after the other."""
    import pyarrow.parquet as pq

    handle = pq.ParquetFile(path)
    groups = [g for g in range(handle.num_row_groups) if g * handle.metadata.row_group(0).num_rows < limit]
    rows, best = sum(handle.metadata.row_group(g).num_rows for g in groups), float("inf")
    for _ in range(3):
        start = time.process_time()
        for g in groups:
            table = handle.read_row_group(g)
            np.column_stack([column.to_numpy() for column in table.columns])
        best = min(best, time.process_time() - start)
    return rows / best


def _check_first_part(folder: Path, suffix: str, workers: int) -> None:
    """The first row group's values from the cluster run equal those of ``explain`` without a scheduler."""
    import pyarrow.parquet as pq

    from shap_instances.utils import memmap_explanation

    first = pq.ParquetFile(folder / "rows.parquet").read_row_group(0)
    pq.write_table(first, folder / "first.parquet")
    here = folder / f"here.{suffix}"
    assert cli(["explain", "--data", str(folder / "train.csv"), "--target", "label", "--explainer", "naive_bayes",
                "--explain", str(folder / "first.parquet"), "--out", str(here), "--force"]) == 0
    there = folder / f"nb-{workers}.{suffix}"
    if suffix == "npy":
        ours, theirs = memmap_explanation(here), memmap_explanation(there)
        n = len(first)
        assert np.array_equal(ours.values, theirs.values[:n]), "values differ"
        assert np.array_equal(ours.base_values, theirs.base_values[:n]), "base values differ"
    else:
        assert pd.read_parquet(here).equals(pd.read_parquet(there / "part-00000.parquet")), "values differ"


def gap(args, folder: Path) -> tuple[list, str]:
    from sklearn.ensemble import RandomForestRegressor

    rng = np.random.default_rng(2)
    X = rng.normal(size=(args.gap_train, 20))
    y = X[:, 0] + np.sin(X[:, 1]) + 0.3 * rng.normal(size=len(X))
    forest = RandomForestRegressor(args.trees, min_samples_leaf=5, max_features=0.5, n_jobs=-1, random_state=0)
    start = time.perf_counter()
    forest.fit(X, y)
    fitted = time.perf_counter() - start
    forest.set_params(n_jobs=1)
    small = RandomForestRegressor(2, min_samples_leaf=5, random_state=0).fit(X[:300], y[:300])
    si.GapExplainer(small, X[:300], y=y[:300]).proximities()  # the kernels compiled before the clock starts
    start = time.perf_counter()
    explainer = si.GapExplainer(forest, X, y=y)  # built once, in this process (the forest's leaf index)
    built = time.perf_counter() - start
    explainer.index_.oob_rows(np.arange(10))  # the kernels' signatures of this index's dtypes, compiled or loaded
    start, start_cpu = time.perf_counter(), time.process_time()
    serial = explainer.proximities()
    base, base_cpu = time.perf_counter() - start, time.process_time() - start_cpu

    def on_cluster(client):
        worker = copy.copy(explainer)
        worker.scheduler = client
        return worker.proximities()

    nodes = sum(tree.tree_.node_count for tree in forest.estimators_)
    table = [[f"fitting the forest, this process ({os.cpu_count()} cores, not part of the explainer)",
              fmt_seconds(fitted), "", "", "", "", ""],
             ["building the explainer, this process (serial, once)", fmt_seconds(built), "", "", "", "", ""]]
    rows, last = _rows_table(args, base, serial, on_cluster, base_cpu)
    _record_full_size("gap", args.gap_train, fitted + built + last["seconds"], last, fit_minutes=fitted / 60,
                      build_minutes=built / 60, pass_minutes=last["seconds"] / 60)
    return table + rows, (
        f"GAP out-of-bag proximities (the explainer built once, outside the clock of the rows below): "
        f"{args.gap_train:,} training rows x 20 features, {args.trees} trees (min_samples_leaf=5, {nodes:,} nodes), "
        f"{serial.nnz:,} non-zeros ({fmt_mib(serial.data.nbytes + serial.indices.nbytes + serial.indptr.nbytes)}); "
        f"leaf index {fmt_mib(explainer.index_.nbytes)}; OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS')}")


def boosting(args, folder: Path) -> tuple[list, str]:
    from sklearn.ensemble import HistGradientBoostingRegressor

    rng = np.random.default_rng(3)
    X = rng.normal(size=(args.boost_train, 20))
    y = X[:, 0] + np.sin(X[:, 1]) + 0.3 * rng.normal(size=len(X))
    model = HistGradientBoostingRegressor(max_iter=args.trees, early_stopping=False, random_state=0).fit(X, y)
    small = HistGradientBoostingRegressor(max_iter=2, early_stopping=False, random_state=0).fit(X[:300], y[:300])
    si.BoostingExplainer(small, X[:300], y=y[:300], kind="gradients").top_k(None, k=10)  # compiled before the clock
    start = time.perf_counter()
    serial = si.BoostingExplainer(model, X, y=y, kind="gradients").top_k(None, k=10)
    base = time.perf_counter() - start
    rows, last = _rows_table(args, base, serial, lambda client: si.BoostingExplainer(
        model, X, y=y, kind="gradients", scheduler=client).top_k(None, k=10))
    _record_full_size("boosting", args.boost_train, last["seconds"], last)
    return rows, (
        f"boosting top_k (k = 10) over all {args.boost_train:,} training rows: HistGradientBoostingRegressor, "
        f"{args.trees} trees, kind=\"gradients\"")


def _record_full_size(name: str, n_train: int, seconds: float, last: dict, **minutes: float) -> None:
    """Record a workload's summary and, at issue 28's size (:data:`TARGET_TRAIN` training rows), its target: the
    whole run within 30 minutes, 8 GiB, an efficiency from 1 to 2 workers of at least 0.8. The memory is this
    process's peak, which holds the serial baseline's result beside the cluster's for the bitwise comparison."""
    record(**{f"{name}_{key}": round(value, 2) for key, value in {**last, **minutes, "minutes": seconds / 60}.items()})
    if n_train >= TARGET_TRAIN:
        record(**{f"{name}_issue_28": target_verdict(minutes=(seconds / 60, "<=", 30),
                                                     memory=(last["process_peak_gib"], "<=", 8),
                                                     efficiency=(last["efficiency"], ">=", 0.8))})


def _same(result, serial) -> bool:
    """Bitwise equality of two CSR matrices (arrays compared, the floats as their bits: no copy of either)."""
    return (result.shape == serial.shape and np.array_equal(result.indptr, serial.indptr)
            and np.array_equal(result.indices, serial.indices)
            and np.array_equal(result.data.view(np.uint64), serial.data.view(np.uint64)))


def _rows_table(args, base: float, serial: sp.csr_matrix, run, base_cpu: float | None = None) -> tuple[list, dict]:
    """The table of the serial run and the cluster runs, and the last (largest) cluster run's summary: its
    seconds, efficiency from the first, and the peak resident set (GiB) of a worker and of this process."""
    table = [["this process, no scheduler", fmt_seconds(base), "", "",
              "" if base_cpu is None else f"{base_cpu:.1f}", "", ""]]
    times, process_peak = {}, 0
    for w in args.workers:
        held = _reset_peak_rss()
        seconds, result, peaks, cpu = _on_cluster(w, run)
        assert _same(result, serial), "results differ"
        del result
        times[w] = seconds
        efficiency = times[args.workers[0]] * args.workers[0] / (w * seconds)
        process_peak = max(process_peak, _peak_rss())
        table.append([f"{w} worker(s)", fmt_seconds(seconds), f"{base / seconds:.2f}", f"{efficiency:.2f}",
                      f"{cpu:.1f}", ", ".join(fmt_mib(p) for p in peaks),
                      f"{fmt_mib(_peak_rss())} ({fmt_mib(held)} before)"])
    return table, {"seconds": seconds, "efficiency": efficiency, "worker_peak_gib": max(peaks) / 2**30,
                   "process_peak_gib": process_peak / 2**30}


def _reset_peak_rss() -> int:
    """Start this process's ``VmHWM`` afresh (Linux >= 4.0), so that its peak is that of the next run; returns
    the resident set it starts from (what the process held before: the forest, the serial result)."""
    with open("/proc/self/clear_refs", "w") as handle:
        handle.write("5")
    return _peak_rss()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="+", choices=("nb", "gap", "boosting"), default=["nb", "gap", "boosting"])
    parser.add_argument("--workers", nargs="+", type=int, default=[1, 2])
    parser.add_argument("--nb-rows", type=int, default=5_000_000)
    parser.add_argument("--nb-features", type=int, default=50)
    parser.add_argument("--row-group", type=int, default=250_000)
    parser.add_argument("--nb-format", nargs="+", choices=("npy", "parquet"), default=["npy", "parquet"],
                        help="the --out formats of the naive Bayes runs")
    parser.add_argument("--gap-train", type=int, default=100_000)
    parser.add_argument("--boost-train", type=int, default=100_000)
    parser.add_argument("--trees", type=int, default=100)
    args = parser.parse_args()
    print(f"# bench_scale_dask: {' '.join(sys.argv[1:]) or '(defaults)'}; {os.cpu_count()} cores; "
          f"load average {fmt_load(load_average())}")
    print(f"# {machine_description()}")
    headers = {"nb": ["run", "wall", "rows/s", "per core / in-memory ndarray rate",
                      "per core / in-memory pipeline rate", "efficiency 1 -> w", "rows per CPU s",
                      "per CPU s / in-memory pipeline's", "peak RSS per worker"],
               "gap": ["run", "wall", "speed-up", "efficiency 1 -> w", "CPU s (workers and this process)",
                       "peak RSS per worker",
                       "peak RSS, this process (held before the run)"]}
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.only:
            rows, title = {"nb": naive_bayes, "gap": gap, "boosting": boosting}[name](args, Path(tmp))
            text = f"{title} (load average {fmt_load(load_average())})\n\n" + markdown_table(
                headers.get(name, headers["gap"]), rows)
            print("\n" + text)
            record(**{f"part:{name}": text})  # the page renders it: {{ part:fig-scale_dask:nb }}


if __name__ == "__main__":
    main()
