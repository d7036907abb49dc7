"""Memory per explainer against n: the peak of one call, in a fresh process per point, against the result's size.

Each point (an explainer, a size n) runs in its own interpreter (``python benchmarks/bench_memory.py --point
NAME N``), so no peak of an earlier point, no allocator cache and no import hides in it. The child builds the
data and fits the model, makes one small warm-up call (numba compilation or cache loading), then measures one
call of the explainer:

* **traced peak**: ``tracemalloc``'s peak during the call, every allocation through Python's and NumPy's
  allocators (arrays included), exact and independent of the allocator; numba's own allocations inside compiled
  kernels are not traced;
* **RSS peak**: the growth of the resident set during the call (``ru_maxrss`` when the call raised it, else a
  thread sampling ``/proc/self/statm`` every 2 ms), which sees everything, the allocator's caching included;
* **held**: what the returned Explanation keeps (traced, after the call).

Both peaks are given in MiB and as multiples of the **result**, the values matrix (``values.nbytes``: n_explained x
n_players [x outputs] float64). The residual decomposition of the training rows (ridge refits through the fused
exact kernel, ``make_regression(n, 20)``, 16 permutations) is also run by the code *before* the memory work
(``git archive`` of commit ``BEFORE`` into a temporary directory, first on ``PYTHONPATH``), in the same run, so
the before / after table compares like with like.

The children get the thread limit through ``OMP_NUM_THREADS`` / ``OPENBLAS_NUM_THREADS`` / ``MKL_NUM_THREADS``
and ``threadpoolctl``.

Usage: ``python benchmarks/bench_memory.py [--quick] [--threads N] [--markdown FILE] [--before REV]``.
"""

from __future__ import annotations

import gc
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: The commit before the memory work of issue 14 (the Explanation held values, errors and both bounds).
BEFORE = "ebba13e"

#: Points per explainer: (label, sizes, quick sizes, what n is).
POINTS = {
    "residual_ridge": ("residual, ridge (fused exact refits), training rows", (1000, 2000, 4000, 8000),
                       (250, 500, 1000), "n training rows = explained rows; 16 permutations, p = 20"),
    "residual_tree": ("residual, decision tree (refits), training rows", (50, 100, 200), (50, 100),
                      "n training rows = explained rows; 16 permutations, max_depth 4"),
    "isotonic": ("isotonic (SISR), one row, 16 features, max_memory 256 MiB", (50, 400), (50,),
                 "n background rows; all 2^16 coalitions"),
    "naive_bayes": ("naive Bayes (Gaussian, 16 features)", (25_000, 100_000, 400_000), (5_000, 20_000),
                    "n explained rows"),
    "gap": ("GAP, test points (50 trees)", (1000, 2000, 4000), (500, 1000), "n training rows = test rows"),
    "gap_oob": ("GAP, out-of-bag (50 trees)", (1000, 2000, 4000), (500, 1000), "n training rows, all explained"),
    "boosting": ("boosting (50 trees, depth 3)", (1000, 2000, 4000), (500, 1000), "n training rows = explained"),
    "representer": ("representer (ridge)", (1000, 2000, 4000), (500, 1000), "n training rows = explained"),
    "knn_plugin": ("KNN plugin (K = 5)", (1000, 2000, 4000), (500, 1000), "n training rows = test rows"),
}


# ---------------------------------------------------------------------------------------------- the child
def _problem(name: str, n: int):
    """``(call, warm_up)`` of one point: two functions returning an Explanation."""
    import numpy as np
    from sklearn.datasets import make_classification, make_regression

    import shap_instances as si

    if name.startswith("residual"):
        from sklearn.linear_model import Ridge
        from sklearn.tree import DecisionTreeRegressor

        X, y = make_regression(n, 20 if name == "residual_ridge" else 5, noise=1.0, random_state=0)
        model = Ridge() if name == "residual_ridge" else DecisionTreeRegressor(max_depth=4, random_state=0)
        options = dict(n_permutations=16, random_state=0, silent=True)
        return (lambda: si.InstanceKernelExplainer(model, X, y=y, **options)(),
                lambda: si.InstanceKernelExplainer(model, X[:20], y=y[:20], **options)())
    if name == "isotonic":
        from sklearn.linear_model import LinearRegression

        X, y = make_regression(n + 1, 16, random_state=0)
        model = LinearRegression().fit(X, y)
        options = dict(sparsity=4, max_memory=2**28, random_state=0, silent=True)
        return (lambda: si.IsotonicShapleyExplainer(model.predict, X[1:], **options)(X[:1]),
                lambda: si.IsotonicShapleyExplainer(model.predict, X[1:3], **options)(X[:1]))  # compiles shap's masking
    if name == "naive_bayes":
        from sklearn.naive_bayes import GaussianNB

        X, y = make_classification(1000, 16, random_state=0)
        model = GaussianNB().fit(X, y)
        rows = np.random.default_rng(0).normal(size=(n, 16))
        explainer = si.NaiveBayesExplainer(model, X)
        return lambda: explainer(rows), lambda: explainer(rows[:10])
    if name in ("gap", "gap_oob"):
        from sklearn.ensemble import RandomForestRegressor

        X, y = make_regression(2 * n, 10, noise=1.0, random_state=0)
        forest = RandomForestRegressor(50, min_samples_leaf=5, oob_score=True, random_state=0, n_jobs=1)
        forest.fit(X[:n], y[:n])
        explainer = si.GapExplainer(forest, X[:n], y=y[:n])
        if name == "gap":
            return lambda: explainer(X[n:]), lambda: explainer(X[n:n + 10])
        return explainer.oob_explanation, lambda: explainer.oob_explanation(rows=range(10))
    if name == "boosting":
        from sklearn.ensemble import GradientBoostingRegressor

        X, y = make_regression(n, 10, noise=1.0, random_state=0)
        model = GradientBoostingRegressor(n_estimators=50, max_depth=3, random_state=0).fit(X, y)
        explainer = si.BoostingExplainer(model, X, y=y)
        return lambda: explainer(X), lambda: explainer(X[:10])
    if name == "representer":
        from sklearn.linear_model import Ridge

        X, y = make_regression(n, 10, noise=1.0, random_state=0)
        explainer = si.RepresenterExplainer(Ridge(alpha=1.0).fit(X, y), X, y=y)
        return lambda: explainer(X), lambda: explainer(X[:10])
    if name == "knn_plugin":
        from sklearn.neighbors import KNeighborsClassifier

        X, y = make_classification(2 * n, 10, random_state=0)
        explainer = si.list_explainers()["knn_shapley"](KNeighborsClassifier(5).fit(X[:n], y[:n]), X[:n], y=y[:n])
        return lambda: explainer(X[n:], y[n:]), lambda: explainer(X[n:n + 10], y[n:n + 10])
    raise SystemExit(f"no point named {name!r}")


def _child(name: str, n: int, threads: int) -> None:
    """Measure one point and print its numbers as one JSON line."""
    from _common import rss, rss_peak
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=threads):
        call, warm_up = _problem(name, n)
        warm_up()
        gc.collect()
        base, max_before = rss(), resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
        tracemalloc.start()
        started = time.perf_counter()
        with rss_peak() as growth:
            explanation = call()
        seconds = time.perf_counter() - started
        held, traced = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        max_after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    rss_growth = max(growth(), max_after - base if max_after > max_before else 0)
    import shap_instances

    print(json.dumps({"shape": list(explanation.values.shape), "result": int(explanation.values.nbytes),
                      "traced": traced, "held": held, "rss": rss_growth, "seconds": seconds,
                      "module": shap_instances.__file__}))


# ---------------------------------------------------------------------------------------------- the parent
def _measure(name: str, n: int, threads: int, code: Path) -> dict:
    env = dict(os.environ, PYTHONPATH=str(code) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    for variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        env[variable] = str(threads)
    done = subprocess.run([sys.executable, __file__, "--point", name, str(n), str(threads)], cwd=ROOT, env=env,
                          capture_output=True, text=True)
    if done.returncode != 0:
        return {"error": (done.stderr.strip().splitlines() or ["(no output)"])[-1]}
    point = json.loads(done.stdout.strip().splitlines()[-1])
    if not Path(point.pop("module")).resolve().is_relative_to(code.resolve()):
        return {"error": f"imported shap_instances from outside {code}"}
    return point


def _mib(n_bytes: float) -> str:
    return f"{n_bytes / 2**20:,.1f}" if n_bytes < 100 * 2**20 else f"{n_bytes / 2**20:,.0f}"


def _times(point: dict, key: str) -> str:
    return f"{point[key] / point['result']:.2f}x" if point["result"] >= 2**20 else "result < 1 MiB"


def _before_tree(revision: str, into: Path) -> Path | None:
    """The package as of ``revision`` under ``into`` (``git archive``), or None when git cannot give it."""
    archive = subprocess.run(["git", "archive", revision, "shap_instances"], cwd=ROOT, capture_output=True)
    if archive.returncode != 0:
        return None
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive.stdout, check=True)
    return into


def main(bench) -> None:
    from _common import markdown_table

    threads = bench.args.threads
    rows, residual = [], {}
    for name, (label, sizes, quick_sizes, _) in POINTS.items():
        for n in quick_sizes if bench.quick else sizes:
            point = _measure(name, n, threads, ROOT)
            print(f"{name} n={n}: {point}", flush=True)
            if "error" in point:
                rows.append([label, f"{n:,}", f"failed: {point['error']}", "", "", "", "", ""])
                continue
            if name == "residual_ridge":
                residual[n] = point
            rows.append([label, f"{n:,}", "x".join(f"{d:,}" for d in point["shape"]), _mib(point["result"]),
                         f"{_mib(point['traced'])} ({_times(point, 'traced')})",
                         f"{_mib(point['rss'])} ({_times(point, 'rss')})",
                         f"{_mib(point['held'])} ({_times(point, 'held')})", f"{point['seconds']:.1f}"])
    bench.print("### Peak memory of one call against n",
                markdown_table(["explainer", "n", "values shape", "result (MiB)", "traced peak (MiB, x result)",
                                "RSS peak (MiB, x result)", "held (MiB, x result)", "seconds"], rows,
                               "llrrrrrr"),
                "n is: " + "; ".join(f"{POINTS[k][0]}: {POINTS[k][3]}" for k in POINTS) + ".", part="explainers")

    with tempfile.TemporaryDirectory() as tmp:
        before = _before_tree(bench.args.before, Path(tmp))
        table = []
        for n, after in residual.items():
            old = _measure("residual_ridge", n, threads, before) if before is not None else {"error": "no git"}
            print(f"residual_ridge before n={n}: {old}", flush=True)
            if "error" in old:
                table.append([f"{n:,}", _mib(after["result"]), f"failed: {old['error']}", "",
                              f"{_mib(after['traced'])} ({_times(after, 'traced')})",
                              f"{_mib(after['rss'])} ({_times(after, 'rss')})"])
                continue
            table.append([f"{n:,}", _mib(after["result"]),
                          f"{_mib(old['traced'])} ({_times(old, 'traced')})",
                          f"{_mib(old['rss'])} ({_times(old, 'rss')})",
                          f"{_mib(after['traced'])} ({_times(after, 'traced')})",
                          f"{_mib(after['rss'])} ({_times(after, 'rss')})"])
    bench.print(f"### Residual decomposition of the training rows: before ({bench.args.before}) and after",
                markdown_table(["n", "result (MiB)", "before: traced peak", "before: RSS peak", "after: traced peak",
                                "after: RSS peak"], table, "rrrrrr"),
                "Ridge refits (the fused exact kernel), `make_regression(n, 20)`, 16 permutations, random_state=0; the "
                "values are bitwise the same before and after. Peaks in MiB (and as multiples of the result).",
                part="residual")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--point":
        _child(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
    else:
        from _common import Bench

        bench = Bench(__doc__, arguments=lambda parser: parser.add_argument(
            "--before", default=BEFORE, help=f"commit to compare the residual decomposition with (default {BEFORE})"))
        bench.run(main)
