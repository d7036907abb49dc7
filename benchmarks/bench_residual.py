"""Residual decomposition benchmarks (each measurement runs in its own process: clean peaks and timings).

1. ``ridge``: diabetes (442 rows) with Ridge, symmetric case, 3n = 1,326 permutations of the full matrix, against
   scikit-learn refits along the same permutations (a few timed, the rest extrapolated), same run, default
   environment (no thread limit set by the benchmark); the values of the timed permutations are compared too.
2. ``cc``: the CC plot's means (sign-normalised and plain contribution means, one aggregate game with two
   outputs) for ridge on 20 standardised features: n = 10,000 rows with 3n permutations and n = 100,000 rows
   with 1,000 permutations; wall and CPU time, peak memory (tracemalloc and RSS), standard errors, and the
   aggregate's prefix values against scikit-learn refits of random prefixes.
3. ``memory``: peak memory of the full-matrix decomposition (16 permutations) for n = 1,000 to 8,000, the
   estimator alone and the explainer (whose Explanation adds the 95% bounds), in units of the result (one
   n x n float64 matrix).
4. ``dask``: a refit-heavy game (a small random forest) serially and on a dask.distributed LocalCluster with 1
   and 2 worker processes: times, speed-up, bitwise identity.
5. ``forest``: Boston with a random forest (the first 120 rows and 20 trees; ``--long``: all 506 rows, 100
   trees, hours), time and error per evaluation budget, permutation against kernel sampling, n_jobs=2.

Usage: ``python benchmarks/bench_residual.py [--quick] [--markdown FILE] [--threads N] [sections ...]`` (default:
ridge cc memory dask forest). Each section's table sits between the snippet markers ``residual-<section>`` (the docs
include them by that name, ``--8<-- "docs/benchmarks.md:residual-cc"``).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import resource
import subprocess
import sys
import time
import tracemalloc
import warnings

import numpy as np
from sklearn.ensemble import RandomForestRegressor
from sklearn.linear_model import Ridge
from threadpoolctl import threadpool_limits

from shap_instances import InstanceKernelExplainer
from shap_instances.approximators import KernelApproximator, PermutationApproximator
from shap_instances.datasets import load_boston, load_diabetes
from shap_instances.games import ResidualGame
from shap_instances.metrics import cc_means

SECTIONS = ("ridge", "cc", "memory", "dask", "forest")


# ------------------------------------------------------------------ measurement helpers
def rss_mib() -> float:
    """Peak resident set size of this process so far, MiB."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def current_rss_mib() -> float:
    with open("/proc/self/statm") as handle:
        return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def measured(call, trace: bool = False):
    """(result, wall seconds, CPU seconds, tracemalloc peak MiB or None) of ``call()``.

    Timings are taken without tracemalloc (which slows every Python allocation, scikit-learn's refits several
    times more than the numba kernels); ``trace=True`` is for memory runs.
    """
    if trace:
        tracemalloc.start()
    wall, cpu = time.perf_counter(), time.process_time()
    result = call()
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    peak = None
    if trace:
        peak = tracemalloc.get_traced_memory()[1] / 2**20
        tracemalloc.stop()
    return result, wall, cpu, peak


def in_child(task: str, **kwargs) -> dict:
    """Run ``task`` in a fresh interpreter (its own peak RSS and compile state) and return its JSON answer."""
    command = [sys.executable, __file__, "--child", task, json.dumps(kwargs)]
    done = subprocess.run(command, capture_output=True, text=True, cwd=os.path.dirname(os.path.dirname(__file__)))
    if done.returncode != 0:
        raise RuntimeError(f"{task} {kwargs} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def conditions() -> str:
    """Load average, cores and thread settings: the conditions a table was measured under."""
    import numba
    from threadpoolctl import threadpool_info

    blas = ", ".join(f"{info['internal_api']} {info['num_threads']} threads" for info in threadpool_info()
                     if info["user_api"] == "blas")
    variables = {name: os.environ[name] for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
                 if name in os.environ}
    return (f"load average {os.getloadavg()[0]:.1f} / {os.getloadavg()[1]:.1f} (1 / 5 min) on {os.cpu_count()} cores; "
            f"BLAS: {blas or 'none loaded'} (environment: {variables or 'no thread variables set'}); "
            f"numba: {numba.get_num_threads()} threads")


def standardised(n: int, p: int = 20, seed: int = 0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p)) * rng.uniform(0.5, 3.0, size=p) + rng.normal(size=p) * 5
    X = (X - X.mean(axis=0)) / X.std(axis=0)
    y = X @ rng.normal(size=p) + rng.standard_t(4, size=n)
    return X, y


# ------------------------------------------------------------------ child tasks
def child_ridge(quick: bool) -> dict:
    X, y = load_diabetes()
    X, y = X.to_numpy(), y.to_numpy(dtype=float)
    n = len(y)
    warm = InstanceKernelExplainer(Ridge(alpha=0.1), X[:50], y=y[:50], n_permutations=4, random_state=0, silent=True)
    warm()  # load the compiled kernels (reported apart)
    ours, wall, cpu, _ = measured(lambda: InstanceKernelExplainer(Ridge(alpha=0.1), X, y=y, n_permutations=3 * n,
                                                                  random_state=0, silent=True)())
    full = Ridge(alpha=0.1).fit(X, y).predict(X) - y
    gap = float(np.max(np.abs(ours.base_values + ours.values.sum(1) - full)))
    timed = 2 if quick else 4  # permutations (antithetic pairs) refitted with scikit-learn
    slow = ResidualGame(Ridge(alpha=0.1), X, y, use_fast_path=False)
    refit, refit_wall, refit_cpu, _ = measured(lambda: PermutationApproximator(n_permutations=timed, random_state=0,
                                                                             silent=True).estimate(slow))
    same = PermutationApproximator(n_permutations=timed, random_state=0, silent=True).estimate(ResidualGame(
        Ridge(alpha=0.1), X, y))
    agreement = float(np.max(np.abs(same.values - refit.values)) / np.max(np.abs(refit.values)))
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1, user_api="blas"):  # a fairer baseline: scikit-learn without BLAS threads
        _, one_wall, one_cpu, _ = measured(lambda: PermutationApproximator(n_permutations=2, random_state=0,
                                                                         silent=True).estimate(slow))
    return {"n": n, "ours_wall": wall, "ours_cpu": cpu, "gap": gap, "timed": timed,
            "refit_wall": refit_wall / timed * 3 * n, "refit_cpu": refit_cpu / timed * 3 * n,
            "one_wall": one_wall / 2 * 3 * n, "one_cpu": one_cpu / 2 * 3 * n, "agreement": agreement}


def child_cc(n: int, permutations: int, checks: int) -> dict:
    X, y = standardised(n)
    baseline = current_rss_mib()
    explainer = InstanceKernelExplainer(Ridge(alpha=1.0), X, y=y, n_permutations=permutations, random_state=0,
                                        silent=True)
    InstanceKernelExplainer(Ridge(alpha=1.0), X[:200], y=y[:200], n_permutations=2, random_state=0,
                            silent=True).aggregate(weights=["sign", "mean"])  # load the compiled kernels
    table, wall, cpu, _ = measured(lambda: cc_means(explainer))
    rss = rss_mib() - baseline
    # the peak does not grow with the number of permutations (fixed batches, O(n) accumulators): traced on 32
    short = InstanceKernelExplainer(Ridge(alpha=1.0), X, y=y, n_permutations=32, random_state=0, silent=True)
    _, _, _, peak = measured(lambda: cc_means(short), trace=True)
    values = table["contribution_mean"].to_numpy()
    se = table["contribution_mean_se"].to_numpy()
    # the aggregate game's prefixes against scikit-learn refits of random prefixes of one permutation
    game = ResidualGame(Ridge(alpha=1.0), X, y)
    weights = -np.sign(game.full_value) / n
    rng = np.random.default_rng(1)
    permutation = rng.permutation(n)
    prefixes = game.aggregate(weights).prefix_values(permutation[None, :])[0, :, 0]
    errors = []
    for t in np.unique(np.concatenate([[1, 2, 21, n], rng.integers(1, n + 1, size=checks)])):
        rows = permutation[:t]
        refit = (Ridge(alpha=1.0).fit(X[rows], y[rows]).predict(X) - y) @ weights
        errors.append(abs(prefixes[t] - refit) / max(abs(refit), 1e-300))
    return {"n": n, "permutations": explainer.result_.info["n_permutations"], "wall": wall, "cpu": cpu,
            "tracemalloc": peak, "rss": rss, "median_se": float(np.median(se)),
            "median_value": float(np.median(np.abs(values))), "spread": float(np.std(values)),
            "prefix_checks": len(errors), "prefix_error": float(max(errors))}


def child_memory(n: int, permutations: int, what: str) -> dict:
    X, y = standardised(n, p=20, seed=1)
    InstanceKernelExplainer(Ridge(alpha=1.0), X[:100], y=y[:100], n_permutations=2, random_state=0, silent=True)()
    baseline = current_rss_mib()
    if what == "estimator":
        game = ResidualGame(Ridge(alpha=1.0), X, y)
        call = lambda: PermutationApproximator(n_permutations=permutations, random_state=0, silent=True).estimate(game)  # noqa: E731
    else:
        explainer = InstanceKernelExplainer(Ridge(alpha=1.0), X, y=y, n_permutations=permutations, random_state=0,
                                            silent=True)
        call = explainer
    _, wall, cpu, peak = measured(call, trace=True)
    return {"n": n, "what": what, "wall": wall, "cpu": cpu, "tracemalloc": peak, "rss": rss_mib() - baseline,
            "result": 8 * n * n / 2**20}


def child_dask(workers: int, n: int, trees: int, permutations: int, repeats: int = 2) -> dict:
    from distributed import Client, LocalCluster

    X, y = load_diabetes()
    X, y = X.to_numpy()[:n], y.to_numpy(dtype=float)[:n]
    model = RandomForestRegressor(n_estimators=trees, max_depth=6, random_state=0, n_jobs=1)
    options = dict(approximator="permutation", n_permutations=permutations, batch_size=permutations // 2,
                   random_state=0, silent=True)
    walls = []
    with contextlib.ExitStack() as stack:
        client = None
        if workers:
            cluster = stack.enter_context(LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                                       dashboard_address=None))
            client = stack.enter_context(Client(cluster))
        # warm-up (not timed): imports and a first refit, in every worker
        small = dict(options, n_permutations=2 * max(workers, 1), batch_size=2 * max(workers, 1))
        InstanceKernelExplainer(model, X[:8], y=y[:8], scheduler=client, **small)()
        for _ in range(repeats):
            explanation, wall, _, _ = measured(InstanceKernelExplainer(model, X, y=y, scheduler=client, **options))
            walls.append(wall)
    return {"workers": workers, "wall": float(np.median(walls)), "walls": walls,
            "digest": float(np.sum(explanation.values * np.arange(1, n + 1))),
            "values": explanation.values.ravel()[:50].tolist()}


CHILDREN = {"ridge": child_ridge, "cc": child_cc, "memory": child_memory, "dask": child_dask}


# ------------------------------------------------------------------ sections
def ridge_speed(quick: bool) -> None:
    before = conditions()
    r = in_child("ridge", quick=quick)
    print(f"### Diabetes, Ridge, {3 * r['n']:,} permutations of the full matrix\n\nBefore: {before}.\n")
    print("| diabetes, Ridge(alpha=0.1), 1,326 permutations | wall seconds | CPU seconds | note |")
    print("|---|---|---|---|")
    print(f"| exact prefix fits, fused numba kernel (ours) | {r['ours_wall']:.2f} | {r['ours_cpu']:.2f} | "
          f"max efficiency gap {r['gap']:.1e} |")
    print(f"| scikit-learn refits ({r['timed']} permutations timed, extrapolated) | {r['refit_wall']:.0f} | "
          f"{r['refit_cpu']:.0f} | values of the timed permutations agree with ours to {r['agreement']:.1e} |")
    print(f"| speed-up | **{r['refit_wall'] / r['ours_wall']:.0f}x** | {r['refit_cpu'] / r['ours_cpu']:.0f}x | "
          "target >= 100x (wall, same run) |")
    print(f"| scikit-learn refits with BLAS limited to 1 thread (2 permutations timed, extrapolated) | "
          f"{r['one_wall']:.0f} | {r['one_cpu']:.0f} | not the default environment: a fairer baseline |")
    print(f"| speed-up against that | {r['one_wall'] / r['ours_wall']:.0f}x | {r['one_cpu'] / r['ours_cpu']:.0f}x | "
          "|")
    print(f"\nAfter: {conditions()}.\n", flush=True)


def cc_scale(quick: bool) -> None:
    cases = [(2_000, 6_000), (20_000, 100)] if quick else [(10_000, 30_000), (100_000, 1_000)]
    before = conditions()
    rows = [in_child("cc", n=n, permutations=k, checks=8) for n, k in cases]
    print(f"### CC plot means at scale: ridge, 20 standardised features\n\nBefore: {before}.\n")
    print("One aggregate game with two outputs (sign-normalised and plain contribution means, the same "
          "antithetic permutations): `metrics.cc_means(explainer)`. Times without tracemalloc; peak memory above "
          "the data: RSS of the timed run (the process), tracemalloc (NumPy allocations) of a 32-permutation run "
          "(the peak does not grow with the budget).\n")
    print("| rows n | permutations | wall s | CPU s | tracemalloc peak MiB | RSS peak MiB | median SE | median "
          "abs. mean | SD of the means | prefixes vs scikit-learn refits (max relative error) | target |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    targets = {10_000: "5 min, 1 GiB", 100_000: "5 min, 2 GiB"}
    for r in rows:
        print(f"| {r['n']:,} | {r['permutations']:,} | {r['wall']:.0f} | {r['cpu']:.0f} | {r['tracemalloc']:.1f} | "
              f"{r['rss']:.0f} | {r['median_se']:.2e} | {r['median_value']:.2e} | {r['spread']:.2e} | "
              f"{r['prefix_error']:.1e} ({r['prefix_checks']} prefixes) | {targets.get(r['n'], '-')} |")
    print(f"\nAfter: {conditions()}.\n", flush=True)


def memory_table(quick: bool) -> None:
    sizes = (500, 1_000) if quick else (1_000, 2_000, 4_000, 8_000)
    before = conditions()
    print(f"### Peak memory of the full-matrix decomposition (ridge, 16 permutations)\n\nBefore: {before}.\n")
    print("Result = one n x n float64 matrix. The estimator keeps two running sums (mean, sum of squared "
          "deviations) and one unit's block; the explainer's Explanation holds the values and the standard errors "
          "(two matrices; its 95% bounds are computed from them when read).\n")
    print("| n | result MiB | estimator: tracemalloc / RSS peak MiB | estimator / result | "
          "explainer: tracemalloc / RSS peak MiB | explainer / result | explainer wall s (traced) |")
    print("|---|---|---|---|---|---|---|")
    for n in sizes:
        e = in_child("memory", n=n, permutations=16, what="estimator")
        x = in_child("memory", n=n, permutations=16, what="explainer")
        print(f"| {n:,} | {e['result']:.0f} | {e['tracemalloc']:.0f} / {e['rss']:.0f} | "
              f"{e['tracemalloc'] / e['result']:.2f} / {e['rss'] / e['result']:.2f} | {x['tracemalloc']:.0f} / "
              f"{x['rss']:.0f} | {x['tracemalloc'] / x['result']:.2f} / {x['rss'] / x['result']:.2f} | "
              f"{x['wall']:.1f} |", flush=True)
    print(f"\nAfter: {conditions()}.\n", flush=True)


def dask_speedup(quick: bool) -> None:
    n, trees, permutations = (24, 10, 8) if quick else (40, 20, 16)
    before = conditions()
    runs = [in_child("dask", workers=w, n=n, trees=trees, permutations=permutations) for w in (0, 1, 2)]
    identical = all(r["values"] == runs[0]["values"] and r["digest"] == runs[0]["digest"] for r in runs)
    print(f"### Dask: RandomForestRegressor({trees} trees, depth 6) refits, {n} diabetes rows, {permutations} "
          f"permutations\n\nBefore: {before}.\n")
    print("Worker processes warmed up before timing (imports and a first refit); the first unit (2 permutations) is "
          "timed in the calling process, the rest goes to the cluster. With one worker thread in the cluster, "
          "joblib's dask backend runs the batches in the calling process (its effective n_jobs is 1), so the "
          "1-worker row measures that.\n")
    print("| run | wall s (median of 2; both) | speed-up vs the 1-worker run | same values as serial |")
    print("|---|---|---|---|")
    for r in runs:
        name = "serial (this process)" if r["workers"] == 0 else f"LocalCluster, {r['workers']} worker process(es)"
        speed = f"{runs[1]['wall'] / r['wall']:.2f}x"
        both = ", ".join(f"{w:.1f}" for w in r["walls"])
        print(f"| {name} | {r['wall']:.1f} ({both}) | {speed} | "
              f"{'bitwise' if r['values'] == runs[0]['values'] else 'NO'} |")
    print(f"\nBitwise identical across the three runs: {identical}. After: {conditions()}.\n", flush=True)


def forest_budgets(quick: bool) -> None:
    """Time and accuracy per budget for a random forest (refits of clones, n_jobs=2).

    A long reference run would cost hours at full size, so accuracy is measured without one: each method runs
    twice per budget with independent seeds, and the RMS difference of the two runs divided by sqrt(2) estimates
    each run's RMS error (both are unbiased, so E|A - B|^2 = 2 Var). It is shown beside the median standard error
    that the run reports, relative to the RMS of the values.
    """
    X, y = load_boston()
    X, y = X.to_numpy(), y.to_numpy(dtype=float)
    long = "--long" in sys.argv
    if not long:
        X, y = X[:120], y[:120]
    forest = RandomForestRegressor(n_estimators=100 if long else 20, random_state=0, n_jobs=1)
    print(f"### Boston ({len(y)} rows), RandomForestRegressor({forest.n_estimators}): budgets\n\nBefore: "
          f"{conditions()}.")
    game = ResidualGame(forest, X, y)
    n = len(y)
    print(f"\nBoston ({n} rows), RandomForestRegressor({forest.n_estimators}), symmetric case, n_jobs=2; error: "
          "RMS difference of two runs with independent seeds / sqrt(2), relative to the RMS value\n")
    print("| estimator | evaluations | seconds per run | relative RMS error (two runs) | "
          "reported median SE / RMS value |")
    print("|---|---|---|---|---|")
    estimators = {
        "permutation": lambda budget, seed: PermutationApproximator(max_evals=budget, random_state=seed, n_jobs=2,
                                                                 silent=True),
        "kernel": lambda budget, seed: KernelApproximator(max_evals=budget, random_state=seed, n_jobs=2, silent=True),
    }
    for budget in (2 * (n + 1), 4 * (n + 1)):
        for name, make in estimators.items():
            start = time.perf_counter()
            first, second = (make(budget, seed).estimate(game) for seed in (0, 1))
            seconds = (time.perf_counter() - start) / 2
            scale = np.sqrt(np.mean(((first.values + second.values) / 2) ** 2))
            error = np.sqrt(np.mean((first.values - second.values) ** 2) / 2) / scale
            reported = np.median(first.standard_errors) / scale
            print(f"| {name} | {first.n_evaluations} | {seconds:.1f} | {error:.2f} | {reported:.2f} |", flush=True)
    print(f"\nAfter: {conditions()}.\n", flush=True)


RUNNERS = {"ridge": ridge_speed, "cc": cc_scale, "memory": memory_table, "dask": dask_speedup,
           "forest": forest_budgets}


def main(argv: list[str]) -> None:
    warnings.simplefilter("ignore")
    if argv[:1] == ["--child"]:
        result = CHILDREN[argv[1]](**json.loads(argv[2]))
        print(json.dumps(result))
        return
    markdown = _option(argv, "--markdown")  # run_all.py: the tables also go to this file
    threads = int(_option(argv, "--threads") or 1)
    quick = "--quick" in argv
    chosen = [a for a in argv if not a.startswith("--")] or list(SECTIONS)
    unknown = set(chosen) - set(RUNNERS)
    if unknown:
        raise SystemExit(f"unknown section(s) {sorted(unknown)}; choose from {sorted(RUNNERS)}")
    with threadpool_limits(threads), contextlib.ExitStack() as stack:
        if markdown:
            out = stack.enter_context(open(markdown, "w"))
            stack.enter_context(contextlib.redirect_stdout(_Tee(sys.__stdout__, out)))
        for name in chosen:  # each table between snippet markers, so the docs include it by name
            start = time.perf_counter()
            print(f"<!-- --8<-- [start:residual-{name}] -->", flush=True)
            RUNNERS[name](quick)
            print(f"({name}: {time.perf_counter() - start:.0f} s)\n", flush=True)
            print(f"<!-- --8<-- [end:residual-{name}] -->\n", flush=True)


def _option(argv: list[str], name: str) -> str | None:
    """The value after ``name`` in ``argv``, removed from it (None when absent)."""
    if name not in argv:
        return None
    i = argv.index(name)
    value = argv[i + 1]
    del argv[i:i + 2]
    return value


class _Tee(io.TextIOBase):
    """Everything printed goes to the terminal and into the markdown file."""

    def __init__(self, *streams):
        self.streams = streams

    def write(self, text):
        for stream in self.streams:
            stream.write(text)
        return len(text)


if __name__ == "__main__":
    main(sys.argv[1:])
