"""LogisticRegression's fast refit path (LogisticPath) against scikit-learn refits of the same prefixes, and pyDVL.

1. ``prefixes``: 2,000 rows x 20 features (``make_classification``, random_state 0), ``LogisticRegression()``;
   one permutation's prefix values by the path (all 2,000 explained rows), against scikit-learn refits of every
   ``stride``-th prefix of the same permutation (timed, then scaled by the stride: the cost of refitting all
   2,000 prefixes), same run; the values of the refitted prefixes against ours (scikit-learn at its default
   ``tol=1e-4``, and its newton-cholesky solver at ``tol=1e-10`` for the last five prefixes). The
   one-permutation timings run on one numba
   thread, and the speed-up is also given in CPU time (``time.process_time``, ours and the refits', both on one
   core), which a loaded machine disturbs far less than wall time.
2. ``multinomial``: 1,000 rows x 10 features, 3 classes (``make_classification``, random_state 0), the
   multinomial ``LogisticRegression()``; one permutation's prefix values by the path (all rows explained, the
   probability of label 1 minus the target) against scikit-learn refits of every 50th prefix (scaled by 50), and
   the full set's values against ``newton-cg`` at ``tol=1e-12``.
3. ``pydvl``: Monte Carlo data Shapley per permutation, ours (``metrics.data_shapley``) against pyDVL's
   ``ShapleyValuation`` with a ``PermutationSampler`` (one process), both on 200 training and 200 test rows x 20
   features; pyDVL runs in /work/venvs/peers when it exists (another venv: pyDVL is not a dependency), its
   per-permutation cost as half the time of a 2-permutation run after a 1-permutation warm-up. Skipped, and said
   so, without it.

4. ``threads``: the fused kernel of the full matrix (2,000 x 20 as in 1, every row explained, 32 permutations by
   ``PermutationApproximator``) on one numba thread and on all of them, alternately, twice each: wall and CPU time
   per permutation, and the 3n = 6,000 permutations extrapolated from the faster (short runs: their first batches
   are small, so this overstates the whole run's time; ``target`` measures it). Means something only on free
   cores (the load is printed).

5. ``profile``: where one permutation of the fused kernel spends its CPU time (2,000 x 20 as in 1, every row
   explained, one numba thread, the best of five runs each): the prefix fits, and within them one gradient pass
   over every prefix and the exact-Hessian refreshes; the explained rows' values (the logits' matrix product, their
   sigmoids and residuals); the scatter of the differences; the Welford update of the n x m unit; and the whole
   ``logistic_units`` call; then the gradient passes per prefix, counted (the fits' Python versions, about 10 s).

6. ``target``: issue 24's run itself, not extrapolated: the full-matrix residual decomposition (2,000 x 20 as in
   1, every row explained) with 3n = 6,000 antithetic permutations (``PermutationApproximator``, the fused kernel
   on every numba thread): wall and CPU time, and the largest standard error of the values. About 3 minutes on
   2 free cores; it means something only there (the load is printed).

Usage: ``python benchmarks/bench_logistic.py [--quick] [--markdown FILE] [sections ...]``
(default: prefixes multinomial pydvl threads profile target).
"""

from __future__ import annotations

import os
import subprocess
import textwrap
import time
import warnings
from pathlib import Path

import numba
import numpy as np
from _common import Bench, first_call, fmt_load, fmt_seconds, load_average, markdown_table, run_sections
from sklearn.datasets import make_classification
from sklearn.linear_model import LogisticRegression

from shap_instances.approximators import PermutationApproximator
from shap_instances.games import ResidualGame
from shap_instances.games._prefix_kernels import welford_update
from shap_instances.linear import _logistic_kernels as kernels
from shap_instances.metrics import data_shapley

SECTIONS = ("prefixes", "multinomial", "pydvl", "threads", "profile", "target")
PEERS = Path("/work/venvs/peers/bin/python")


def _refit_prefixes(X, y, permutation, sizes, **params):
    """(seconds, residuals (len(sizes), n), CPU seconds) of scikit-learn refits of the given prefixes: P(1) - y."""
    out = np.empty((len(sizes), len(y)))
    start, cpu = time.perf_counter(), time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for k, t in enumerate(sizes):
            rows = permutation[:t]
            fitted = LogisticRegression(**params).fit(X[rows], y[rows])
            out[k] = fitted.predict_proba(X)[:, list(fitted.classes_).index(1.0)] - y
    return time.perf_counter() - start, out, time.process_time() - cpu


def _time_one_permutation(game: ResidualGame, permutation: np.ndarray) -> tuple[float, tuple, np.ndarray, list,
                                                                             float]:
    """``(first call's seconds, load before the timings, prefix values, seconds of 3 timed calls, their least CPU
    seconds)``, on one numba thread (one permutation keeps one busy; idle ones would add to the CPU time)."""
    compile_seconds = first_call(lambda: game.fast_path.prefix_values_batch(permutation[None]))
    load = load_average()
    ours, cpu = [], []
    threads = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        for _ in range(3):
            start, cpu_start = time.perf_counter(), time.process_time()
            values = game.fast_path.prefix_values_batch(permutation[None])[0, 1:]
            ours.append(time.perf_counter() - start)
            cpu.append(time.process_time() - cpu_start)
    finally:
        numba.set_num_threads(threads)
    return compile_seconds, load, values, ours, min(cpu)


def prefixes(bench: Bench) -> None:
    n = 500 if bench.quick else 2000
    stride = 50 if bench.quick else 20
    X, y = make_classification(n, 20, n_informative=10, random_state=0)
    y = y.astype(float)
    game = ResidualGame(LogisticRegression(), X, y)
    permutation = np.random.default_rng(0).permutation(n)
    compile_seconds, load, values, ours, ours_cpu = _time_one_permutation(game, permutation)
    sizes = np.arange(stride, n + 1, stride)
    refit_seconds, refits, refit_cpu = _refit_prefixes(X, y, permutation, sizes)
    _, tight, _ = _refit_prefixes(X, y, permutation, sizes[-5:], tol=1e-10, solver="newton-cholesky")
    refit_all = refit_seconds * stride
    ours_median = float(np.median(ours))
    end_load = load_average()
    rows = [["one permutation, all prefixes, all explained rows", fmt_seconds(ours_median),
             f"{fmt_seconds(refit_all)} ({len(sizes)} refits timed x {stride})",
             f"{refit_all / ours_median:.0f}x (CPU time: {fmt_seconds(ours_cpu)} against "
             f"{fmt_seconds(refit_cpu * stride)}, {refit_cpu * stride / ours_cpu:.0f}x)",
             f"{np.abs(values[sizes - 1] - refits).max():.1e} (tol 1e-4); "
             f"{np.abs(values[sizes[-5:] - 1] - tight).max():.1e} (newton-cholesky, tol 1e-10)"]]
    bench.print(
        f"### LogisticRegression, {n:,} rows x 20 features: prefix refits",
        markdown_table(["work", "LogisticPath", "scikit-learn refits (same prefixes)", "speed-up",
                        "max difference of values"], rows),
        f"First call (numba compilation or cache load) {fmt_seconds(compile_seconds)}, not in the ratios; ours: "
        f"median of 3; load average {fmt_load(load)} before the timings, {fmt_load(end_load)} after; "
        f"{os.cpu_count()} cores.", part="prefixes")


def multinomial(bench: Bench) -> None:
    n, stride = (300, 30) if bench.quick else (1000, 50)
    X, y = make_classification(n, 10, n_informative=6, n_classes=3, random_state=0)
    y = y.astype(float)
    game = ResidualGame(LogisticRegression(), X, y)
    permutation = np.random.default_rng(0).permutation(n)
    compile_seconds, load, values, ours, _ = _time_one_permutation(game, permutation)
    sizes = np.arange(stride, n + 1, stride)
    refit_seconds, refits, _ = _refit_prefixes(X, y, permutation, sizes)
    _, tight, _ = _refit_prefixes(X, y, permutation, sizes[-1:], tol=1e-12, solver="newton-cg")
    ours_median = float(np.median(ours))
    rows = [[f"one permutation, all prefixes, all explained rows ({n:,} x 10, 3 classes)", fmt_seconds(ours_median),
             f"{fmt_seconds(refit_seconds * stride)} ({len(sizes)} refits timed x {stride})",
             f"{refit_seconds * stride / ours_median:.0f}x",
             f"{np.abs(values[sizes - 1] - refits).max():.1e} (tol 1e-4); "
             f"{np.abs(values[-1] - tight[0]).max():.1e} (all rows, newton-cg, tol 1e-12)"]]
    bench.print(
        "### Multinomial LogisticRegression: prefix refits",
        markdown_table(["work", "LogisticPath", "scikit-learn refits (same prefixes)", "speed-up",
                        "max difference of values"], rows),
        "Values: P(label 1) minus the target, as the residual game's refit path. First call "
        f"{fmt_seconds(compile_seconds)}, not in the ratio; ours: median of 3; load average {fmt_load(load)} before "
        f"the timings, {fmt_load(load_average())} after; {os.cpu_count()} cores.", part="multinomial")


PYDVL_SCRIPT = textwrap.dedent("""
    import sys, time, numpy as np
    from joblib import parallel_config
    from sklearn.datasets import make_classification
    from sklearn.linear_model import LogisticRegression
    from pydvl.valuation import (Dataset, MaxSamples, ModelUtility, PermutationSampler, ShapleyValuation,
                                 SupervisedScorer)
    n = int(sys.argv[1])
    X, y = make_classification(2 * n, 20, n_informative=10, random_state=0)
    train, test = Dataset(X[:n], y[:n]), Dataset(X[n:], y[n:])
    seconds = []
    for m in (1, 2):  # the first run warms up (imports, joblib); the second's time per permutation is printed
        utility = ModelUtility(LogisticRegression(), SupervisedScorer("accuracy", test, default=0.0))
        sampler = PermutationSampler(seed=m)
        valuation = ShapleyValuation(utility, sampler, is_done=MaxSamples(sampler, m), progress=False)
        with parallel_config(n_jobs=1):
            start = time.perf_counter(); valuation.fit(train); seconds.append(time.perf_counter() - start)
    print(seconds[1] / 2)
""")


def pydvl(bench: Bench) -> None:
    n = 100 if bench.quick else 200
    X, y = make_classification(2 * n, 20, n_informative=10, random_state=0)
    y = y.astype(float)
    k = 20
    first_call(lambda: data_shapley(LogisticRegression(), X[:n], y[:n], X[n:], y[n:], n_permutations=2))
    load = load_average()
    start = time.perf_counter()
    data_shapley(LogisticRegression(), X[:n], y[:n], X[n:], y[n:], n_permutations=k, random_state=0)
    ours = (time.perf_counter() - start) / k
    if not PEERS.exists() or subprocess.run([str(PEERS), "-c", "import pydvl"], capture_output=True).returncode:
        bench.print("### Monte Carlo data Shapley against pyDVL", f"Ours: {fmt_seconds(ours)} per permutation "
                    f"({n} training rows); not run against pyDVL ({PEERS} is missing or has no pydvl).", part="pydvl")
        return
    theirs = float(subprocess.run([str(PEERS), "-c", PYDVL_SCRIPT, str(n)], capture_output=True, text=True,
                                  check=True).stdout.split()[-1])
    bench.print(
        "### Monte Carlo data Shapley against pyDVL",
        markdown_table(["training x test rows", "ours per permutation", "pyDVL per permutation", "speed-up"],
                       [[f"{n} x {n}", fmt_seconds(ours), fmt_seconds(theirs), f"{theirs / ours:.0f}x"]]),
        f"Ours: `metrics.data_shapley` (test Brier score of the predicted probabilities), {k} permutations; pyDVL "
        "0.10: test accuracy (its utility refits the same model per prefix: the cost is the refits), one process. "
        f"Load average {fmt_load(load)} before, {fmt_load(load_average())} after.", part="pydvl")


def threads(bench: Bench) -> None:
    n, k = (500, 8) if bench.quick else (2000, 32)
    X, y = make_classification(n, 20, n_informative=10, random_state=0)
    game = ResidualGame(LogisticRegression(), X, y.astype(float))
    first_call(lambda: PermutationApproximator(n_permutations=2, silent=True).estimate(game))
    load, most = load_average(), numba.get_num_threads()
    timings: dict[int, list[tuple[float, float]]] = {1: [], most: []}
    try:
        for count in (1, most, 1, most):
            numba.set_num_threads(count)
            start, cpu = time.perf_counter(), time.process_time()
            PermutationApproximator(n_permutations=k, random_state=0, silent=True).estimate(game)
            timings[count].append(((time.perf_counter() - start) / k, (time.process_time() - cpu) / k))
    finally:
        numba.set_num_threads(most)
    rows = [[f"{count} numba thread{'s' * (count > 1)}", fmt_seconds(min(w for w, _ in runs)),
             fmt_seconds(min(c for _, c in runs)), fmt_seconds(3 * n * min(w for w, _ in runs))]
            for count, runs in timings.items()]
    bench.print(
        f"### The fused kernel on one thread and on {most}: {n:,} x 20, every row explained",
        markdown_table(["threads", "wall per permutation", "CPU per permutation", f"{3 * n:,} permutations (wall)"],
                       rows),
        f"{k} permutations per run, the better of two runs each, alternating; load average {fmt_load(load)} before, "
        f"{fmt_load(load_average())} after; {os.cpu_count()} cores.", part="threads")


@numba.njit
def _passes(Zc, yp, w, pen, g):
    """One gradient pass on every prefix of the rows (columns of ``Zc``) at a fixed ``w``: the unit of the fits'
    work."""
    for t in range(1, Zc.shape[1]):
        kernels._objective(Zc, yp[:t + 1], w, pen, g, False)


@numba.njit
def _refreshes(Zc, w, pen, A):
    """The exact Hessians of the prefix fits' schedule (each time the prefix grows by ``REFRESH``)."""
    due = 2.0
    for t in range(1, Zc.shape[1]):
        if t + 1 >= due:
            kernels._exact_hessian(A, Zc, t + 1, w, pen)
            due = kernels.REFRESH * (t + 1)


def _best_cpu(work, reps: int = 5) -> float:
    """The least CPU time of ``reps`` calls of ``work`` (after one untimed call)."""
    work()
    times = []
    for _ in range(reps):
        cpu = time.process_time()
        work()
        times.append(time.process_time() - cpu)
    return min(times)


def _profile_parts(game: ResidualGame, permutation: np.ndarray) -> dict[str, float]:
    """CPU seconds of each part of one permutation of the fused kernel (section 5)."""
    path = game.fast_path
    arguments = path._arguments(permutation[None])
    Z, y, ZE, yE, W, empty, _, pen, scale, tol, _, _ = arguments  # binary: the walk's model is None
    n, m = Z.shape[0], empty.shape[0]
    Zc, yp, ZEt = np.ascontiguousarray(Z[permutation].T), y[permutation], np.ascontiguousarray(ZE.T)
    coefs, active = np.zeros((n, Z.shape[1])), np.zeros((n, 0))
    fitted = np.arange(n) >= kernels._prefix_fits(Zc, yp, pen, scale, tol, coefs, 0)  # every prefix
    logits, sink = np.empty((n, m)), np.zeros((1, n, m))
    unit, mean, m2, full = np.random.default_rng(0).random((n, m)), np.zeros((n, m)), np.zeros((n, m)), np.zeros(m)

    def all_values():
        for s in range(0, n, kernels.BLOCK):
            e = min(s + kernels.BLOCK, n)
            kernels._block_values(ZEt, yE, W, coefs[s:e], active[s:e], None, fitted[s:e], empty)

    return {
        "prefix fits": _best_cpu(lambda: kernels._prefix_fits(Zc, yp, pen, scale, tol, np.zeros_like(coefs), 0)),
        "  one gradient pass on every prefix": _best_cpu(lambda: _passes(Zc, yp, coefs[-1], pen, np.zeros_like(pen))),
        "  exact-Hessian refreshes": _best_cpu(lambda: _refreshes(Zc, coefs[-1], pen, np.zeros((len(pen),) * 2))),
        "explained rows' values": _best_cpu(all_values),
        "  logits' matrix product alone": _best_cpu(lambda: np.dot(coefs, ZEt, out=logits)),
        "walk: fits, values, scatter": _best_cpu(lambda: kernels.logistic_walk(
            Z, y, ZEt, yE, W, empty, permutation, pen, scale, tol, None, sink, 0, 1.0, 1, 0)),
        "Welford update of the n x m unit": _best_cpu(lambda: welford_update(unit, mean, m2, 1)),
        "logistic_units, one permutation": _best_cpu(lambda: kernels.logistic_units(
            *arguments, 1, unit, mean, m2, 0, full, 1)),
    }


def _count_passes(game: ResidualGame, permutation: np.ndarray) -> tuple[float, float]:
    """(gradient passes per prefix, rows they cover over n^2 / 2) of one permutation's prefix fits: the Python
    versions of ``_prefix_fits``, ``_cold_fit``, ``_newton`` and ``_backtrack`` (interpreted, about 10 s at n = 2,000),
    with the compiled gradient wrapped by a counter; the module's functions are restored afterwards."""
    path = game.fast_path
    Z, y, _, _, _, _, _, pen, scale, tol, _, _ = path._arguments(permutation[None])
    counts = [0, 0]
    compiled = {name: getattr(kernels, name) for name in ("_gradient", "_newton", "_cold_fit", "_backtrack")}

    def counted(Zc, *rest):
        counts[0] += not rest[4]  # with_loss False: a gradient pass (loss passes are the backtracking's)
        counts[1] += rest[0].shape[0] * (not rest[4])  # the prefix's rows: its targets' count
        return compiled["_gradient"](Zc, *rest)

    kernels._gradient, kernels._newton = counted, compiled["_newton"].py_func
    kernels._cold_fit, kernels._backtrack = compiled["_cold_fit"].py_func, compiled["_backtrack"].py_func
    try:
        n = len(permutation)
        kernels._prefix_fits.py_func(np.ascontiguousarray(Z[permutation].T), y[permutation], pen, scale, tol,
                                     np.zeros((n, Z.shape[1])), 0)  # skip 0: every prefix fitted
    finally:
        for name, function in compiled.items():
            setattr(kernels, name, function)
    return counts[0] / n, counts[1] / (n * n / 2)


def profile(bench: Bench) -> None:
    n = 500 if bench.quick else 2000
    X, y = make_classification(n, 20, n_informative=10, random_state=0)
    game = ResidualGame(LogisticRegression(), X, y.astype(float))
    load, most = load_average(), numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        parts = _profile_parts(game, np.random.default_rng(0).permutation(n))
    finally:
        numba.set_num_threads(most)
    whole = parts["logistic_units, one permutation"]
    rows = [[name, fmt_seconds(seconds), f"{seconds / whole:.0%}"] for name, seconds in parts.items()]
    passes, covered = _count_passes(game, np.random.default_rng(0).permutation(n))
    bench.print(
        f"### Where one permutation of the fused kernel goes: {n:,} x 20, every row explained, tol "
        f"{game.fast_path.tol:.0e}, one numba thread",
        markdown_table(["part", "CPU", "share of logistic_units"], rows, "lrr"),
        f"CPU time, the best of five runs each. The fits make {passes:.2f} gradient passes per prefix (counted), "
        f"{covered:.2f} times the rows of one pass on every prefix; "
        f"load average {fmt_load(load)} before, {fmt_load(load_average())} after.", part="profile")


def target(bench: Bench) -> None:
    n = 500 if bench.quick else 2000
    X, y = make_classification(n, 20, n_informative=10, random_state=0)
    game = ResidualGame(LogisticRegression(), X, y.astype(float))
    first_call(lambda: PermutationApproximator(n_permutations=2, silent=True).estimate(game))
    load = load_average()
    start, cpu = time.perf_counter(), time.process_time()
    result = PermutationApproximator(n_permutations=3 * n, random_state=0, silent=True).estimate(game)
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    rows = [[f"{3 * n:,} antithetic permutations, {n:,} x {n:,} values", f"{numba.get_num_threads()}",
             fmt_seconds(wall), fmt_seconds(cpu), f"{float(np.max(result.standard_errors)):.2e}"]]
    bench.print(
        f"### Issue 24's run: the full residual decomposition, {n:,} x 20, 3n permutations (not extrapolated)",
        markdown_table(["work", "numba threads", "wall", "CPU", "largest standard error"], rows),
        f"Load average {fmt_load(load)} before, {fmt_load(load_average())} after; {os.cpu_count()} cores; target: "
        "3 minutes of wall time on 2 cores.", part="target")


if __name__ == "__main__":
    run_sections(__doc__, {name: globals()[name] for name in SECTIONS})
