"""Run every benchmark script (``benchmarks/bench_*.py``) and print their tables.

Usage: ``python benchmarks/run_all.py [--quick] [name ...]``. Each script runs in its own process, so
first-call numba compile times and memory peaks do not leak between benchmarks.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small versions (each under a minute)")
    parser.add_argument("names", nargs="*", help="run only these (e.g. gap naive_bayes)")
    args = parser.parse_args(argv)
    scripts = sorted(HERE.glob("bench_*.py"))
    if args.names:
        scripts = [s for s in scripts if s.stem.removeprefix("bench_") in args.names]
    failures = 0
    for script in scripts:
        print(f"\n## {script.stem}\n", flush=True)
        start = time.perf_counter()
        command = [sys.executable, str(script)] + (["--quick"] if args.quick else [])
        result = subprocess.run(command, cwd=HERE.parent)
        failures += result.returncode != 0
        print(f"\n({script.name}: exit {result.returncode}, {time.perf_counter() - start:.1f} s)", flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
