"""Issue 39's boundary fuzzing: the surfaces of the fourth round (hostile files, CSV cells, output folders,
valuation, the command line's numbers, budgets, shap's idioms), classified as :mod:`tests.fuzz_faults` classifies
its cases (docs/reliability.md, "Boundary fuzzing (issue 39)").

Each surface is a generator of ``(case, outcome)`` pairs, seeded, every case with an independent oracle: the same
call with correctly ordered columns, the model's own ``predict``, refits by hand, the bytes of the user's files
before the case. Two outcomes join the failures of :mod:`tests.fuzz_faults`: **over budget** (a run past 110% of
its ``--time-budget`` or ``max_evals``) and, for a hostile file, **code execution** also when the loader built an
object whose finaliser or native handle the file chose (its effect need not be seen: a collected ``DataSource``
deletes a folder, a freed ``DMatrix`` handle kills the process). Cases that may crash the process (native
handles, memory maps of truncated files) run in a forked child (:func:`isolated`). Run as a script for the table
and the list of failing cases::

    PYTHONPATH=. python -m tests.fuzz_boundary [--surface NAME ...] [--seed N] [--budget-seconds S]
"""

from __future__ import annotations

import argparse
import csv
import faulthandler
import gc
import json
import os
import resource
import select
import signal
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np

from . import fuzz_faults
from .fuzz_faults import FAILURES as FAULT_FAILURES
from .fuzz_faults import OUTCOMES as FAULT_OUTCOMES
from .fuzz_faults import _crash

FAILURES = (*FAULT_FAILURES, "over budget")
OUTCOMES = (*FAULT_OUTCOMES, "over budget")
#: Cells a spreadsheet evaluates: text beginning with one of these (OWASP's "CSV injection").
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
#: The surfaces, in the order they run: name -> the module of :mod:`tests` and its generator.
SURFACES = {
    "persistence": ("fuzz_boundary_files", "persistence_cases"),
    "csv": ("fuzz_boundary_files", "csv_cases"),
    "outputs": ("fuzz_boundary_files", "output_cases"),
    "valuation": ("fuzz_boundary_valuation", "valuation_cases"),
    "cli numbers": ("fuzz_boundary_calls", "cli_number_cases"),
    "budget": ("fuzz_boundary_calls", "budget_cases"),
    "idioms": ("fuzz_boundary_calls", "idiom_cases"),
}
#: Surfaces whose every case passes on main before issue 39's fixes: their sample runs in the default test run.
#: The lead adds a surface here once its fix is merged and ``python -m tests.fuzz_boundary --surface NAME`` shows
#: no failure (tests/test_fuzz_boundary.py).
PASSING_ON_MAIN: tuple[str, ...] = ("persistence", "csv", "outputs", "valuation", "cli numbers", "idioms")


# ------------------------------------------------------------------------------------------ the classifiers
def unsafe_cells(path: Path) -> list[str]:
    """The cells of the CSV file ``path`` a spreadsheet would evaluate: text (not a number) beginning with
    ``=``, ``+``, ``-``, ``@``, a tab or a carriage return.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "t.csv"
    >>> _ = path.write_text("a,=1+1\\n-2.5,'=x\\n")
    >>> unsafe_cells(path)
    ['=1+1']
    """
    with open(path, newline="", encoding="utf-8", errors="replace") as stream:
        return [cell for row in csv.reader(stream) for cell in row
                if cell.startswith(FORMULA_STARTS) and not _number(cell)]


def _number(cell: str) -> bool:
    try:
        float(cell)
    except ValueError:
        return False
    return True


def refused_or_wrong(outcome: str) -> str:
    """A case the package must refuse: an answer (right or not) is silently wrong; a warning is a refusal."""
    return "silently wrong" if outcome == "right answer" else outcome


def isolated(case: Callable[[], str], seconds: float) -> str:
    """``case()`` run in a forked child (its outcome back through a pipe), for cases that can kill the process:
    a child killed by a signal gives ``"killed by <signal>"``, one past ``seconds`` ``"hang"``.

    Examples
    --------
    >>> isolated(lambda: "right answer", 30)
    'right answer'
    >>> isolated(lambda: os.kill(os.getpid(), signal.SIGSEGV), 30)
    'killed by SIGSEGV'
    """
    reader, writer = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        os.close(reader)
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        faulthandler.disable()  # a crash is the outcome, not a traceback on the run's stderr
        start = len(fuzz_faults.CRASHES)
        try:
            outcome = case()
            gc.collect()  # finalisers of what the case built run here, in the child
        except BaseException as exc:  # noqa: BLE001 - the parent classifies
            outcome = _crash(exc)
        os.write(writer, json.dumps([outcome, fuzz_faults.CRASHES[start:]]).encode())
        os._exit(0)
    os.close(writer)
    ready, _, _ = select.select([reader], [], [], seconds)
    payload = os.read(reader, 1 << 20) if ready else b""
    if not ready:
        os.kill(pid, signal.SIGKILL)
    os.close(reader)
    _, status = os.waitpid(pid, 0)
    if not ready:
        return "hang"
    if os.WIFSIGNALED(status):
        return f"killed by {signal.Signals(os.WTERMSIG(status)).name}"
    outcome, crashes = json.loads(payload or b'["obscure crash", ["the child wrote nothing"]]')
    fuzz_faults.CRASHES.extend(crashes)
    return outcome


# ------------------------------------------------------------------------------------------ the run
def surface_cases(surface: str, folder: Path, rng: np.random.Generator) -> Iterator[tuple[str, str]]:
    """The ``(case, outcome)`` pairs of one surface (each case's name begins with the surface's)."""
    import importlib

    module, function = SURFACES[surface]
    generator = getattr(importlib.import_module(f"tests.{module}"), function)
    (folder / surface.replace(" ", "-")).mkdir()
    for case, outcome in generator(folder / surface.replace(" ", "-"), rng):
        yield f"{surface}: {case}", outcome


def run_all(surfaces: tuple[str, ...] = tuple(SURFACES), seed: int = 39, *,
            report: Callable[[str, str], None] | None = None) -> Counter:
    """Every case of ``surfaces``: (surface, outcome) -> cases, and ("failure", "case: outcome") for each
    failure; ``report(case, outcome)`` is called after each case."""
    counts: Counter = Counter()
    with tempfile.TemporaryDirectory() as tmp:
        for surface in surfaces:
            rng = np.random.default_rng([seed, len(surface)])
            for case, outcome in surface_cases(surface, Path(tmp), rng):
                counts[(surface, outcome)] += 1
                if outcome in FAILURES:
                    counts[("failure", f"{case}: {outcome}")] += 1
                if report is not None:
                    report(case, outcome)
    return counts


def failures(counts: Counter) -> list[str]:
    """The failing cases of a run, one line each."""
    return [what for (category, what) in counts if category == "failure"]


def table(counts: Counter) -> str:
    """The count table (Markdown): one row per surface, one column per outcome (over budget included)."""
    return fuzz_faults.table(counts, OUTCOMES, [s for s in SURFACES if any(c == s for c, _ in counts)], "surface")


def main(argv: list[str] | None = None) -> int:
    """The full run: the table, each failing case and each crash's exception, one line each."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--surface", action="append", choices=tuple(SURFACES), help="run this surface only")
    parser.add_argument("--seed", type=int, default=39)
    parser.add_argument("--verbose", action="store_true", help="print each case's outcome as it ends")
    parser.add_argument("--budget-seconds", type=float, default=None, help="the budget surface's --time-budget "
                        "(default 10; a loaded machine slows the commands' start-up, which the budget includes)")
    args = parser.parse_args(argv)
    if args.budget_seconds is not None:
        from tests import fuzz_boundary_calls

        fuzz_boundary_calls.BUDGET_SECONDS = args.budget_seconds
    started = time.perf_counter()
    fuzz_faults.compile_kernels()
    show = (lambda case, outcome: print(f"{outcome:>15}  {case}", flush=True)) if args.verbose else None
    counts = run_all(tuple(args.surface or SURFACES), args.seed, report=show)
    print(table(counts))
    for what in failures(counts):
        print(f"FAILURE: {what}")
    for crash in fuzz_faults.CRASHES:
        print(f"CRASH: {crash}")
    if "budget" in (args.surface or SURFACES):
        from tests import fuzz_boundary_calls

        for note in fuzz_boundary_calls.NOTES:
            print(f"BUDGET: {note}")
    print(f"{time.perf_counter() - started:.0f} s, load {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":  # pragma: no cover - the full run, for docs/reliability.md
    raise SystemExit(main())
