"""Issue 39's boundary fuzzing, the full run behind the surface table of docs/reliability.md ("Boundary fuzzing").

``python docs/scripts/measure_boundary_fuzz.py`` (run through ``python benchmarks/run_all.py figures
boundary_fuzz``) runs ``tests.fuzz_boundary.run_all`` over every surface with its seed (39), every explainer's
kernels compiled once, untimed, before the cases; the budget surface's commands get ``--time-budget 10``. It
prints the outcome table (one row per surface, one column per outcome), each failing case, each crash and the
budget surface's notes, and records the table (``part:surfaces``), the number of cases, of failures, the seconds
of the run and the budget run that ended closest to its budget, with its seconds. ``--quick``: the ``cli
numbers`` and ``idioms`` surfaces only (a check of the script, not for the page).
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks")]
from _common import record  # noqa: E402

#: The surfaces of ``--quick``: seconds each.
QUICK = ("cli numbers", "idioms")
#: A budget run's note: its command, then its wall time after the interpreter's start-up.
TIMED = re.compile(r"^(.*): ([\d.]+) s after start-up")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="the cli numbers and idioms surfaces only")
    quick = parser.parse_args(argv).quick
    from tests import fuzz_boundary, fuzz_boundary_calls, fuzz_faults

    started = time.perf_counter()
    fuzz_faults.compile_kernels()
    counts = fuzz_boundary.run_all(QUICK if quick else tuple(fuzz_boundary.SURFACES))
    seconds = time.perf_counter() - started
    surfaces = fuzz_boundary.table(counts)
    failures = fuzz_boundary.failures(counts)
    print(surfaces)
    for what in failures:
        print(f"FAILURE: {what}")
    for crash in fuzz_faults.CRASHES:
        print(f"CRASH: {crash}")
    for note in fuzz_boundary_calls.NOTES:
        print(f"BUDGET: {note}")
    print(f"{seconds:.0f} s")
    record(**{"part:surfaces": surfaces}, cases=sum(n for (c, _), n in counts.items() if c != "failure"),
           failures=len(failures), budget_seconds=fuzz_boundary_calls.BUDGET_SECONDS, seconds=round(seconds),
           **slowest_budget_run(fuzz_boundary_calls.NOTES))


def slowest_budget_run(notes: list[str]) -> dict[str, object]:
    """The budget run that ended closest to its budget (seconds after the interpreter's start-up), from the
    surface's notes ("explain ... --explainer NAME --rows 5: 9.1 s after start-up, ..."); none without them."""
    timed = [(float(match[2]), match[1]) for match in map(TIMED.match, notes) if match]
    if not timed:
        return {}
    seconds, run = max(timed)
    return {"slowest_budget_run": " ".join(word for word in run.split() if "/" not in word),  # no temporary paths
            "slowest_budget_s": seconds}


if __name__ == "__main__":
    main()
