"""``shap-instances report --data`` on synthetic CSVs: wall time, peak memory and live progress per section.

Targets (issue 15): 5,000 x 20 (numeric, and mixed with a string column) within 3 minutes and 2 GiB; 50,000 x 20
within the default time budget (at most 15 minutes) and 4 GiB, every section with a moving ETA.

The CSVs are generated here from scikit-learn's ``make_regression`` (20 columns, 10 informative, noise 10); the
mixed one replaces column ``x0`` by a string column ``grade`` (five levels, the quintiles of ``x0``, so it
stays informative). Each report runs as the command line in its own process (``python -m
shap_instances.cli report``, default time budget unless ``--time-budget`` is given); its peak resident memory
is that process's ``ru_maxrss``. Its stderr is parsed for the tqdm bars: a section's ETA "moves" when its
bar, or the permutation bar inside it, shows at least two different remaining times.

A section that ends within two seconds of starting (the overview, the representer points) shows its bar at 0% and
100% only: it is counted as "instant" rather than as a bar whose ETA does not move.

Usage: ``python benchmarks/bench_report.py [--quick] [--time-budget SECONDS] [--markdown FILE] [--threads N]``;
the default runs the four cases (5,000 and 50,000 rows, numeric and mixed); ``--quick`` runs the 5,000-row cases
only with a 60 s budget. The reports run as a user runs them (the command line in the default environment, no
thread limit set here; ``--threads`` is accepted for ``run_all.py`` and recorded only). The table also gives the
work each report did (permutations of the aggregate game, sampled rows, trees, and the error of a contribution
mean relative to their spread when the report flags it); the tables sit between the snippet markers
``report-table`` and ``report-plans``.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.datasets import make_regression

ROOT = Path(__file__).resolve().parent.parent
TARGETS = {5_000: (180.0, 2.0), 50_000: (900.0, 4.0)}  # rows -> (seconds, GiB)
_BAR = re.compile(r"(\[\d+/\d+\] [a-z ]+|permutations):.*?\[(\d\d:\d\d(?::\d\d)?)<(\?|\d\d:\d\d(?::\d\d)?)")


def make_csv(path: Path, n_rows: int, *, mixed: bool, seed: int = 0) -> Path:
    """A regression CSV of ``n_rows`` x 20 features (+ target ``y``); ``mixed`` turns x0 into a string column."""
    X, y = make_regression(n_rows, 20, n_informative=10, noise=10.0, random_state=seed)
    frame = pd.DataFrame(X, columns=[f"x{i}" for i in range(20)]).assign(y=y)
    if mixed:
        levels = np.array(["E", "D", "C", "B", "A"])
        frame["x0"] = levels[pd.qcut(frame["x0"], 5, labels=False)]
        frame = frame.rename(columns={"x0": "grade"})
    frame.to_csv(path, index=False)
    return path


def run_report(csv: Path, out: Path, budget: float | None) -> dict:
    """Run the command line on ``csv``; return wall seconds, peak RSS (GiB), exit code and the ETA summary."""
    command = [sys.executable, "-m", "shap_instances.cli", "report", "--data", str(csv), "--target", "y",
               "--out", str(out), "--force"] + ([] if budget is None else ["--time-budget", str(budget)])
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    start = time.perf_counter()
    with tempfile.TemporaryFile("w+") as err:
        process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=err, text=True)
        _, status, usage = os.wait4(process.pid, 0)
        wall = time.perf_counter() - start
        err.seek(0)
        stderr = err.read()
    etas: dict[str, dict] = {}
    for desc, elapsed, remaining in _BAR.findall(stderr.replace("\r", "\n")):
        entry = etas.setdefault(desc.strip(), {"remaining": set(), "elapsed": 0})
        entry["elapsed"] = max(entry["elapsed"], _seconds(elapsed))
        if remaining != "?":
            entry["remaining"].add(remaining)
    plan = [line for line in stderr.replace("\r", "\n").splitlines()
            if line.startswith(("plan for", "  memory", "  [", "  planned", "  note"))]
    page = (out / "index.html").read_text() if (out / "index.html").is_file() else ""
    done = re.search(r"training rows, (?:the evaluations of )?([\d,]+) (?:antithetic )?permutations", page)
    sampled = re.search(r"random sample of ([\d,]+) of the", page)
    trees = re.search(r"A random forest \((\d+) trees", page)
    noise = re.search(r"(?i)the error of the contribution means \(.*?\) is (\d+)% of their spread", page)
    work = (f"{done.group(1) if done else '-'} permutations of the aggregate game, "
            f"{sampled.group(1) if sampled else 'all'} sampled rows, {trees.group(1) if trees else '-'} trees"
            + (f"; error {noise.group(1)}% of spread" if noise else ""))
    return {"wall": wall, "rss": usage.ru_maxrss / 2**20, "code": os.waitstatus_to_exitcode(status),
            "etas": etas, "plan": plan, "tail": stderr[-600:], "work": work}


def _seconds(clock: str) -> int:
    parts = [int(p) for p in clock.split(":")]
    return sum(p * 60**k for k, p in enumerate(reversed(parts)))


def eta_summary(etas: dict) -> tuple[str, bool]:
    """A line on the sections' bars (how many moved, how many ended within 2 s) and whether all that lasted moved."""
    sections = {d: e for d, e in etas.items() if d.startswith("[")}
    instant = [d for d, e in sections.items() if e["elapsed"] < 2]
    moving = [d for d, e in sections.items() if len(e["remaining"]) >= 2]
    stuck = [d for d in sections if d not in moving and d not in instant]
    text = f"{len(moving)}/{len(sections)} moving, {len(instant)} instant (< 2 s)"
    if etas.get("permutations") and len(etas["permutations"]["remaining"]) >= 2:
        text += ", permutation bar moving"
    if stuck:
        text += f"; NOT moving: {', '.join(stuck)}"
    return text, not stuck


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="the 5,000-row cases with a 60 s budget")
    parser.add_argument("--time-budget", type=float, default=None, help="passed to every run (default: the CLI's)")
    parser.add_argument("--markdown", type=Path, default=None, help="also write the tables to this file")
    parser.add_argument("--threads", type=int, default=None, help="recorded only: the reports run as a user runs "
                        "them")
    args = parser.parse_args(argv)
    if args.markdown is None:
        return _run(args)
    buffer = io.StringIO()  # the tables go to the terminal and the markdown file once the runs are done
    with contextlib.redirect_stdout(buffer):
        code = _run(args)
    print(buffer.getvalue(), end="")
    args.markdown.write_text(buffer.getvalue())
    return code


def _run(args) -> int:
    budget = 60.0 if args.quick and args.time_budget is None else args.time_budget
    cases = [(5_000, False), (5_000, True)] + ([] if args.quick else [(50_000, False), (50_000, True)])
    load_start = os.getloadavg()
    print(f"_{time.strftime('%Y-%m-%d %H:%M')}, {os.cpu_count()} cores, load average at start "
          f"{load_start[0]:.1f} / {load_start[1]:.1f} / {load_start[2]:.1f} (1 / 5 / 15 min), time budget "
          f"{'the default (180 s)' if budget is None else f'{budget:.0f} s'}; each report is one command-line "
          "process, its peak resident memory included._\n")
    rows, plans = [], []
    with tempfile.TemporaryDirectory() as folder:
        for n_rows, mixed in cases:
            csv = make_csv(Path(folder) / f"data_{n_rows}_{'mixed' if mixed else 'numeric'}.csv", n_rows, mixed=mixed)
            result = run_report(csv, Path(folder) / f"report_{n_rows}_{mixed}", budget)
            seconds, gib = TARGETS[n_rows]
            eta, every = eta_summary(result["etas"])
            verdict = ("yes" if result["code"] == 0 and result["wall"] <= seconds and result["rss"] <= gib and every
                       else "no")
            rows.append((f"{n_rows:,} x 20 {'mixed' if mixed else 'numeric'}", result, seconds, gib, verdict, eta))
            plans.append(f"{n_rows:,} x 20 {'mixed' if mixed else 'numeric'}:\n" + "\n".join(result["plan"]))
            if result["code"] != 0:
                plans.append(result["tail"])
            print(f"({n_rows:,} {'mixed' if mixed else 'numeric'}: {result['wall']:.0f} s)", file=sys.stderr,
                  flush=True)
    load_end = os.getloadavg()
    print("<!-- --8<-- [start:report-table] -->")
    print("| data | exit | wall s | peak RSS GiB | target | within target | work done | progress bars (ETA) |")
    print("|---|---|---|---|---|---|---|---|")
    for name, result, seconds, gib, verdict, eta in rows:
        print(f"| {name} | {result['code']} | {result['wall']:.0f} | {result['rss']:.2f} | {seconds:.0f} s, "
              f"{gib:.0f} GiB | {verdict} | {result['work']} | {eta} |")
    print(f"\n_Load average at end {load_end[0]:.1f} / {load_end[1]:.1f} / {load_end[2]:.1f}._")
    print("<!-- --8<-- [end:report-table] -->\n")
    print("The plans the reports printed (measured costs, memory, one line per section):\n")
    print("<!-- --8<-- [start:report-plans] -->")
    print("```text\n" + "\n\n".join(plans) + "\n```")
    print("<!-- --8<-- [end:report-plans] -->")
    return 0 if all(row[1]["code"] == 0 for row in rows) else 1  # the verdicts are in the table


if __name__ == "__main__":
    sys.exit(main())
