"""The hypothesis fuzz suite's outcomes, the run behind the outcome table of docs/reliability.md ("Fuzzing").

``python docs/scripts/measure_fuzz.py [--slow]`` (run through ``python benchmarks/run_all.py figures fuzz``) runs
``pytest tests/test_fuzz.py`` in a subprocess with ``CI=1`` (hypothesis derandomised: the same cases on every run)
and ``SHAP_INSTANCES_FUZZ_SUMMARY`` set, reads the summary the suite writes (each case's outcome) and pytest's
failed tests, prints the outcome table (one row per registered explainer and the command line) and records it
(``part:outcomes``) with the number of cases, of failed tests, the examples per explainer and per command-line
suite, and the seconds of the run. Without ``--slow`` it runs the default tests (``DEFAULT_EXAMPLES`` cases per
explainer and as many tables); with it the ``slow`` ones (``SLOW_EXAMPLES`` per explainer, half as many tables).
``--quick``: the naive Bayes explainer's default test only (a check of the script, not for the page).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks")]
from _common import record  # noqa: E402

#: The table's outcome columns: the suite's outcome names, then pytest's failed tests.
COLUMNS = ("explained", "explained, ReconstructionWarning", "refused", "known issue (reported)", "failed tests")
FAILED = re.compile(r"^FAILED tests/test_fuzz\.py::test_fuzz_(explainer|cli)\w*(?:\[(\w+)\])?", re.M)


def run_suite(slow: bool, quick: bool) -> tuple[dict, Counter, str]:
    """Run the suite: (its summary, failed tests per row, pytest's output)."""
    marks = ["-m", "slow" if slow else "not slow"]
    selection = ["-k", "test_fuzz_explainer and naive_bayes"] if quick else []
    with tempfile.TemporaryDirectory() as folder:
        summary = Path(folder) / "fuzz.json"
        env = {**os.environ, "CI": "1", "SHAP_INSTANCES_FUZZ_SUMMARY": str(summary),
               "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
        done = subprocess.run([sys.executable, "-m", "pytest", "tests/test_fuzz.py", "-q", "-rf", "-p",
                               "no:cacheprovider", *marks, *selection], cwd=ROOT, env=env, capture_output=True,
                              text=True)
        output = done.stdout + done.stderr
        if done.returncode not in (0, 1) or not summary.is_file():
            raise SystemExit(f"pytest ended with exit code {done.returncode} and no summary:\n{output[-4000:]}")
        failed = Counter("command line" if kind == "cli" else name for kind, name in FAILED.findall(output))
        return json.loads(summary.read_text()), failed, output


def table(summary: dict, failed: Counter) -> str:
    """The outcome table (Markdown): one row per explainer and the command line, refusals by exception type."""
    rows: dict[str, Counter] = {}
    for key, count in summary["outcomes"].items():
        _suite, name, outcome = key.split("/", 2)
        row = "command line" if name == "cli" else name
        rows.setdefault(row, Counter())[outcome] += count
    lines = ["| suite | " + " | ".join(COLUMNS) + " | cases |", "|---|" + "---|" * (len(COLUMNS) + 1)]
    for row in sorted(rows, key=lambda r: (r == "command line", r)):
        lines.append(f"| {row} | " + " | ".join(_cell(rows[row], column, failed[row]) for column in COLUMNS)
                     + f" | {sum(rows[row].values())} |")
    return "\n".join(lines)


def _cell(outcomes: Counter, column: str, failed: int) -> str:
    if column == "failed tests":
        return str(failed)
    if column == "refused":  # each exception type, and the command line's exit 2
        refused = {o.split(": ", 1)[-1]: n for o, n in outcomes.items() if o.startswith("refused") or o == "exit 2"}
        return ", ".join(f"{n} ({kind})" for kind, n in sorted(refused.items())) or "0"
    return str(outcomes[column] + (outcomes["exit 0"] if column == "explained" else 0))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--slow", action="store_true", help="the slow tests (400 cases per explainer)")
    parser.add_argument("--quick", action="store_true", help="the naive Bayes explainer's default test only")
    args = parser.parse_args(argv)
    from tests import test_fuzz

    started = time.perf_counter()
    summary, failed, output = run_suite(args.slow, args.quick)
    seconds = time.perf_counter() - started
    outcomes = table(summary, failed)
    print(outcomes)
    print(output[-3000:] if failed else output.strip().splitlines()[-1])
    print(f"{seconds:.0f} s")
    examples = test_fuzz.SLOW_EXAMPLES if args.slow else test_fuzz.DEFAULT_EXAMPLES
    record(**{"part:outcomes": outcomes}, cases=summary["cases"], failed_tests=sum(failed.values()),
           examples=examples, tables=examples // 2 if args.slow else examples, seconds=round(seconds))


if __name__ == "__main__":
    main()
