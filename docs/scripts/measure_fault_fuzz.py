"""Issue 26's fault fuzzing, the full run behind the outcome table of docs/reliability.md ("Faults").

``python docs/scripts/measure_fault_fuzz.py`` (run through ``python benchmarks/run_all.py figures fault_fuzz``)
runs ``tests.fuzz_faults.run_all``: 90 damaged saves per registered explainer (plugins included), 80 damaged
checkpoints, the column and target cases and the command line's cases, every explainer's kernels compiled once,
untimed, before the timed cases; a case running past ``tests.fuzz_faults.HANG_SECONDS`` counts as a hang. It prints
the outcome table (one row per category, one column per outcome), each failure and crash, and records the table
(``part:outcomes``), the number of cases, of failures, of registered explainers and the seconds of the run.
``--quick``: 5 saves per explainer, 5 checkpoints, no command-line cases (a check of the script, not for the page).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks")]
from _common import record  # noqa: E402

#: Damaged saves per explainer and damaged checkpoints of the full run (``--quick``: 5 and 5, no command line).
SAVES, CHECKPOINTS = 90, 80


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="5 saves per explainer, 5 checkpoints, no command line")
    quick = parser.parse_args(argv).quick
    import shap_instances as si
    from tests import fuzz_faults

    started = time.perf_counter()
    counts = fuzz_faults.run_all(5 if quick else SAVES, 5 if quick else CHECKPOINTS, cli=not quick)
    seconds = time.perf_counter() - started
    outcomes = fuzz_faults.table(counts)
    failures = {what: count for (category, what), count in counts.items() if category == "failure"}
    print(outcomes)
    for what, count in sorted(failures.items()):
        print(f"FAILURE x{count}: {what}")
    for crash in fuzz_faults.CRASHES:
        print(f"CRASH: {crash}")
    print(f"{seconds:.0f} s")
    record(**{"part:outcomes": outcomes}, cases=sum(n for (c, _), n in counts.items() if c != "failure"),
           failures=sum(failures.values()), explainers=len(si.list_explainers()), seconds=round(seconds))


if __name__ == "__main__":
    main()
