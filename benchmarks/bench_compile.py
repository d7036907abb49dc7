"""Cold numba compile time per warm-up family: seconds, signatures per kernel, the costliest kernels.

Each family of :data:`shap_instances.testing._warm_up.FAMILIES` runs in a fresh process with an empty
``NUMBA_CACHE_DIR`` (a new temporary folder), so every kernel it needs is compiled; a listener on numba's
``numba:compile`` event records each compilation (function, argument types, seconds; a nested compilation is
counted inside its caller's seconds too), and the process's CPU seconds beside the wall time (on a loaded machine
the CPU seconds are the comparable figure: compilation runs on one thread). The same process then runs the family
again (``warm``: the kernels' own speed, nothing compiled), and a second fresh process with the now filled cache
runs it once (``cached``: what a later process pays to load the machine code). The load average is printed before
and after each family.

Run from the repository root::

    python benchmarks/bench_compile.py                      # every family
    python benchmarks/bench_compile.py logistic lowrank     # some
    python benchmarks/bench_compile.py --src /tmp/old lowrank   # another checkout's code, same conditions

It prints a table per family and writes ``benchmarks/results/compile.json`` (``--out`` to change it): per family
the cold, warm and cached seconds, the number of compilations, the signatures of each package kernel and the top
kernels, with the command, date, versions, cores and load.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: Kernels listed per family, by inclusive compile seconds.
TOP = 8


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
    for record in cold["records"]:
        per_kernel[record["kernel"]].append(record["s"])
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


def write_result(results: list[dict], path: Path, src: str) -> None:
    """The JSON result file: numbers, command, date, versions, cores (load per family inside)."""
    import numba
    import numpy

    payload = {"benchmark": "compile", "command": " ".join([Path(sys.executable).name, *sys.argv]),
               "date": datetime.now(UTC).isoformat(timespec="seconds"), "python": platform.python_version(),
               "numba": numba.__version__, "numpy": numpy.__version__, "cores": os.cpu_count(),
               "source": src or str(ROOT), "families": results}
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_suffix(".json.tmp")
    temporary.write_text(json.dumps(payload, indent=1))
    temporary.replace(path)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("families", nargs="*", help="warm-up families (default: all)")
    parser.add_argument("--src", default="", help="import shap_instances from this folder instead")
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "compile.json"))
    parser.add_argument("--timeout", type=float, default=3600.0, help="seconds per process")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        _child(args.child)
        return
    sys.path.insert(0, args.src or str(ROOT))
    from shap_instances.testing._warm_up import FAMILIES

    results = []
    for family in args.families or list(FAMILIES):
        with tempfile.TemporaryDirectory(prefix=f"numba_cache_{family}_") as cache:
            before = list(os.getloadavg())
            cold = _run_child(family, cache, args.src, args.timeout)
            cached = _run_child(family, cache, args.src, args.timeout)
            results.append(summarise(family, cold, cached, (before, list(os.getloadavg()))))
        _print(results[-1])
        write_result(results, Path(args.out), args.src)
    print(f"\ntotal cold: {sum(r['cold_s'] for r in results):.1f} s ({sum(r['cold_cpu_s'] for r in results):.1f} s "
          f"CPU) over {len(results)} families; wrote {args.out}")


if __name__ == "__main__":
    main()
