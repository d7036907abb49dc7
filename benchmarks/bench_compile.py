"""Cold numba compile time per warm-up family: seconds, signatures per kernel, the costliest kernels.

Each family of :data:`shap_instances.testing._warm_up.FAMILIES` runs in a fresh process with an empty
``NUMBA_CACHE_DIR`` (a new temporary folder), so every kernel it needs is compiled; a listener on numba's
``numba:compile`` event records each compilation (function, argument types, seconds; a nested compilation is
counted inside its caller's seconds too), and the process's CPU seconds beside the wall time (on a loaded machine
the CPU seconds are the comparable figure: compilation runs on one thread). The same process then runs the family
again (``warm``: the kernels' own speed, nothing compiled), and a second fresh process with the now filled cache
runs it once (``cached``: what a later process pays to load the machine code). The load average is printed before
and after each family. Up to :data:`JOBS` processes run at a time (``--jobs``).

Then the first call of each explainer and of ``data_values`` (:func:`first_call_cases`: cases of
``scripts/value_snapshot.py``), each in a fresh process with an empty cache: the CPU seconds of the call alone
(imports, data and model built before), which is what a user's first call pays after a ``pip install``.

Run from the repository root::

    python benchmarks/run_all.py compile                    # everything: benchmarks/results/bench-compile.json
    python benchmarks/bench_compile.py logistic lowrank     # some families, printed only
    python benchmarks/bench_compile.py --first-calls none   # families only
    python benchmarks/bench_compile.py --src /tmp/old lowrank   # another checkout's code, same conditions

It prints a table per family (cold, warm and cached seconds, compilations, the top kernels, the kernels with
several signatures) and the first calls' table, and records the figures the documentation renders
(``_common.record``: ``FAMILY.cold_cpu_s``, ``total.cold_cpu_s``, ``first.CASE.cpu_s``, ``first.max_cpu_s``, ...)
into ``bench-compile.json`` when ``run_all.py`` runs it.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from _common import fmt_load, load_average, record

ROOT = Path(__file__).resolve().parent.parent
#: Kernels listed per family, by inclusive compile seconds.
TOP = 8
#: Processes measured at a time: one, so that each has a core of the 2 to itself, as on a quiet machine. Four at a
#: time (the setting until the thirteenth round) put each process's CPU seconds 1.3 to 1.5 times higher (two
#: processes per core share its caches and pipeline: the logistic first call took 38.9 CPU s beside three others and
#: 26.3 s alone, the same code).
JOBS = 1


def _child(family: str) -> None:
    """Run one family twice in this process (cold, then warm) and print the compilations as JSON."""
    import warnings

    from numba.core import event

    records: list[dict[str, object]] = []

    class Listener(event.Listener):
        def __init__(self) -> None:
            self.started: dict[tuple[int, str], float] = {}

        def on_start(self, ev: event.Event) -> None:
            self.started[id(ev.data["dispatcher"]), str(ev.data["args"])] = time.perf_counter()

        def on_end(self, ev: event.Event) -> None:
            dispatcher, args = ev.data["dispatcher"], str(ev.data["args"])
            seconds = time.perf_counter() - self.started.pop((id(dispatcher), args), time.perf_counter())
            function = dispatcher.py_func
            records.append({"kernel": f"{function.__module__}.{function.__qualname__}", "args": args, "s": seconds})

    event.register("numba:compile", Listener())
    from shap_instances.testing._warm_up import FAMILIES

    runs, cpu = [], []
    for _ in range(2):
        start, start_cpu = time.perf_counter(), time.process_time()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            FAMILIES[family]()
        runs.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    print(json.dumps({"cold": runs[0], "warm": runs[1], "cold_cpu": cpu[0], "warm_cpu": cpu[1], "records": records}))


def _run_child(family: str, cache: str, src: str, timeout: float) -> dict:
    env = dict(os.environ, NUMBA_CACHE_DIR=cache, PYTHONPATH=os.pathsep.join(filter(None, [src, os.environ.get(
        "PYTHONPATH", "")])))
    done = subprocess.run([sys.executable, __file__, "--child", family], env=env, capture_output=True, text=True,
                          timeout=timeout, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def summarise(family: str, cold: dict, cached: dict, load: tuple[list[float], list[float]]) -> dict:
    """One family's result: totals, signatures per package kernel and the top kernels (inclusive seconds)."""
    per_kernel: dict[str, list[float]] = defaultdict(list)
    for compiled in cold["records"]:
        per_kernel[compiled["kernel"]].append(compiled["s"])
    ours = {name: len(seconds) for name, seconds in per_kernel.items() if name.startswith("shap_instances.")}
    top = sorted(per_kernel, key=lambda name: -sum(per_kernel[name]))[:TOP]
    return {"family": family, "cold_s": cold["cold"], "cold_cpu_s": cold["cold_cpu"], "warm_s": cold["warm"],
            "warm_cpu_s": cold["warm_cpu"], "cached_s": cached["cold"],
            "compilations": len(cold["records"]), "package_kernels": len(ours),
            "signatures": dict(sorted(ours.items())),
            "top": [{"kernel": name, "signatures": len(per_kernel[name]), "s": sum(per_kernel[name])} for name in top],
            "load_before": load[0], "load_after": load[1]}


def _print(result: dict) -> None:
    print(f"\n{result['family']}: cold {result['cold_s']:.1f} s ({result['cold_cpu_s']:.1f} s CPU), warm "
          f"{result['warm_s']:.3f} s ({result['warm_cpu_s']:.3f} s CPU), cached (new process) "
          f"{result['cached_s']:.2f} s; {result['compilations']} compilations, {result['package_kernels']} package "
          f"kernels; load {' / '.join(f'{x:.1f}' for x in result['load_before'])} before, "
          f"{' / '.join(f'{x:.1f}' for x in result['load_after'])} after")
    print("| kernel | signatures | seconds (inclusive) |\n|---|---:|---:|")
    for row in result["top"]:
        print(f"| `{row['kernel'].replace('shap_instances.', '')}` | {row['signatures']} | {row['s']:.1f} |")
    several = {name: count for name, count in result["signatures"].items() if count > 1}
    if several:
        print("kernels with several signatures:", ", ".join(f"{k.rsplit('.', 1)[-1]} {v}" for k, v in several.items()))


def _first_call_child(case: str) -> None:
    """Run one case of ``scripts/value_snapshot.py`` (its data and model built first, untimed) and print its CPU and
    wall seconds as JSON: in a process with an empty cache, what that call pays to compile."""
    import warnings

    sys.path.insert(0, str(ROOT / "scripts"))
    from value_snapshot import all_cases

    run = all_cases()[case]
    start, start_cpu = time.perf_counter(), time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        run()
    print(json.dumps({"cpu_s": time.process_time() - start_cpu, "wall_s": time.perf_counter() - start}))


def first_call_cases(src: str) -> list[str]:
    """The first calls timed: each registered explainer on its conformance problem (``class/NAME/default``), the
    residual explainer with each model family's fast path (``residual/MODEL/perm``) and ``data_values`` on the
    three problems of the snapshot (``data_values/MODEL/shapley/auto``): the cases of ``scripts/value_snapshot.py``,
    named there once."""
    code = ("import json, sys; sys.path.insert(0, sys.argv[1]); from value_snapshot import all_cases; "
            "print(json.dumps(list(all_cases())))")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [src, os.environ.get("PYTHONPATH", "")])))
    names = json.loads(subprocess.run([sys.executable, "-c", code, str(ROOT / "scripts")], env=env, check=True,
                                      capture_output=True, text=True).stdout.strip().splitlines()[-1])
    return [name for name in names if name.endswith(("/default", "/perm", "/shapley/auto"))]


def _run_first_call(case: str, src: str, timeout: float) -> dict:
    with tempfile.TemporaryDirectory(prefix="numba_cache_first_") as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache, PYTHONPATH=os.pathsep.join(filter(None, [src, os.environ.get(
            "PYTHONPATH", "")])))
        done = subprocess.run([sys.executable, __file__, "--first-call", case], env=env, capture_output=True,
                              text=True, timeout=timeout, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def _family(family: str, src: str, timeout: float) -> dict:
    """One family cold (a fresh process, an empty cache), warm, and cached (a second process)."""
    with tempfile.TemporaryDirectory(prefix=f"numba_cache_{family}_") as cache:
        before = list(os.getloadavg())
        cold = _run_child(family, cache, src, timeout)
        cached = _run_child(family, cache, src, timeout)
        return summarise(family, cold, cached, (before, list(os.getloadavg())))


def measure_families(families: list[str], src: str, timeout: float, jobs: int) -> list[dict]:
    """Each family (:func:`_family`, ``jobs`` at a time), printed and recorded (``FAMILY.cold_cpu_s`` ...,
    ``total.cold_cpu_s``)."""
    with ThreadPoolExecutor(jobs) as pool:
        results = list(pool.map(lambda family: _family(family, src, timeout), families))
    for result in results:
        _print(result)
        family = result["family"]
        record(**{f"{family}.{key}": round(result[key], 2) for key in ("cold_s", "cold_cpu_s", "cached_s")},
               **{f"{family}.compilations": result["compilations"], f"{family}.load": result["load_before"]})
    total_cpu = sum(r["cold_cpu_s"] for r in results)
    record(**{"total.cold_cpu_s": round(total_cpu, 1), "total.cold_s": round(sum(r["cold_s"] for r in results), 1)})
    print(f"\ntotal cold: {sum(r['cold_s'] for r in results):.1f} s ({total_cpu:.1f} s CPU) over {len(results)} "
          "families")
    return results


def measure_first_calls(cases: list[str], src: str, timeout: float, jobs: int) -> None:
    """Each case's first call in a fresh process with an empty cache (``jobs`` at a time); printed and recorded
    (``first.CASE.cpu_s``, ``first.max_cpu_s``)."""
    with ThreadPoolExecutor(jobs) as pool:
        timings = list(pool.map(lambda case: (os.getloadavg()[0], _run_first_call(case, src, timeout)), cases))
    print("\nfirst call in a fresh process, empty cache (CPU seconds of the call; wall; load at its start)")
    print("| call | CPU s | wall s | load |\n|---|---:|---:|---|")
    for case, (load, timed) in zip(cases, timings, strict=True):
        print(f"| `{case}` | {timed['cpu_s']:.1f} | {timed['wall_s']:.1f} | {load:.1f} |")
        record(**{f"first.{case}.cpu_s": round(timed["cpu_s"], 1), f"first.{case}.wall_s": round(timed["wall_s"], 1)})
    worst = max(timed["cpu_s"] for _, timed in timings)
    record(**{"first.max_cpu_s": round(worst, 1)})
    print(f"slowest first call: {worst:.1f} s CPU")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("families", nargs="*", help="warm-up families (default: all)")
    parser.add_argument("--src", default="", help="import shap_instances from this folder instead")
    parser.add_argument("--first-calls", default="all", help="comma-separated snapshot cases, 'all' (default: "
                        "first_call_cases) or 'none'")
    parser.add_argument("--timeout", type=float, default=3600.0, help="seconds per process")
    parser.add_argument("--jobs", type=int, default=JOBS, help="processes at a time (default %(default)s)")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--first-call", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        _child(args.child)
        return
    if args.first_call:
        _first_call_child(args.first_call)
        return
    sys.path.insert(0, args.src or str(ROOT))
    from shap_instances.testing._warm_up import FAMILIES

    print(f"load average {fmt_load(load_average())} at the start; {os.cpu_count()} cores")
    measure_families(args.families or list(FAMILIES), args.src, args.timeout, args.jobs)
    if args.first_calls != "none":
        cases = first_call_cases(args.src) if args.first_calls == "all" else args.first_calls.split(",")
        measure_first_calls(cases, args.src, args.timeout, args.jobs)
    print(f"load average {fmt_load(load_average())} at the end")


if __name__ == "__main__":
    main()
