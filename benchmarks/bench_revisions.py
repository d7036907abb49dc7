"""Did a change slow anything down? The same workloads timed on two revisions of the package, alternately.

A refactor (the family layout of 0.2, say) must keep the speed it moved: this script checks out the baseline
revision into a temporary git worktree and times each workload on both trees in fresh processes, alternating
baseline and current ``--pairs`` times, so that a drift of the machine's load hits both alike. Each process
imports the package, runs the workload once to compile its numba kernels (not timed), then times it
``--repeats`` times and reports the fastest. The table gives the median over pairs of each tree's time and the
ratio current / baseline (below 1: faster now).

Usage: ``python benchmarks/bench_revisions.py [--baseline REV] [--pairs N] [--repeats N] [--quick]``
(default baseline: the last commit before the family layout). Needs git and the checkout's history.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LAYOUT_BASELINE = "9f8aa73"  # the last commit before "Layout: one package per model family"

#: name -> Python source run in a fresh process: ``setup`` once, then ``work()`` timed (names common to both trees).
WORKLOADS: dict[str, str] = {
    "residual: ridge, 442 rows, 200 permutations, explain 442": (
        "from sklearn.linear_model import Ridge\n"
        "X, y = load_diabetes()\n"
        "def work():\n"
        "    return si.InstanceKernelExplainer(Ridge(alpha=1.0), X, y=y, n_permutations=200, random_state=0,"
        " silent=True)(X, y).values\n"),
    "GAP: forest of 300 trees, 442 rows, explain 442": (
        "from sklearn.ensemble import RandomForestRegressor\n"
        "X, y = load_diabetes()\n"
        "forest = RandomForestRegressor(300, random_state=0).fit(X, y)\n"
        "def work():\n"
        "    return si.GapExplainer(forest, X, y=y)(X).values\n"),
    "boosting: HGB of 300 iterations, 442 rows, explain 442": (
        "from sklearn.ensemble import HistGradientBoostingRegressor\n"
        "X, y = load_diabetes()\n"
        "model = HistGradientBoostingRegressor(max_iter=300, random_state=0).fit(X, y)\n"
        "def work():\n"
        "    return si.BoostingExplainer(model, X, y=y)(X).values\n"),
    "naive Bayes: Gaussian, breast cancer x 200 (113,800 rows)": (
        "import pandas as pd\n"
        "from sklearn.naive_bayes import GaussianNB\n"
        "X, y = load_breast_cancer(); X = pd.concat([X] * 200, ignore_index=True)\n"
        "model = GaussianNB().fit(X, pd.concat([y] * 200, ignore_index=True))\n"
        "def work():\n"
        "    return si.NaiveBayesExplainer(model, X)(X).values\n"),
    "representer: logistic, breast cancer x 10 (5,690 rows), explain 569": (
        "from sklearn.linear_model import LogisticRegression\n"
        "from sklearn.preprocessing import StandardScaler\n"
        "import pandas as pd\n"
        "X, y = load_breast_cancer(); X = pd.DataFrame(StandardScaler().fit_transform(X), columns=X.columns)\n"
        "X, y = pd.concat([X] * 10, ignore_index=True), pd.concat([y] * 10, ignore_index=True)\n"
        "model = LogisticRegression(C=0.1, tol=1e-10, max_iter=10000).fit(X, y)\n"
        "def work():\n"
        "    return si.RepresenterExplainer(model, X, y=y)(X.iloc[:569]).values\n"),
}

RUNNER = """
import json, sys, time, warnings
warnings.simplefilter("ignore")
import shap_instances as si
from shap_instances.datasets import load_breast_cancer, load_diabetes
{setup}
work()  # compile the numba kernels, fill caches: not timed
times = []
for _ in range({repeats}):
    start = time.perf_counter(); work(); times.append(time.perf_counter() - start)
print(json.dumps(min(times)))
"""


def time_once(tree: Path, setup: str, repeats: int) -> float:
    """The fastest of ``repeats`` runs of the workload on the package in ``tree``, in a fresh process."""
    env = {**os.environ, "PYTHONPATH": str(tree), "MPLBACKEND": "Agg"}
    code = RUNNER.format(setup=setup, repeats=repeats)
    run = subprocess.run([sys.executable, "-c", code], cwd=tree, env=env, capture_output=True, text=True,
                         check=False)
    if run.returncode != 0:
        raise SystemExit(f"the workload failed on {tree}:\n{run.stderr[-2000:]}")
    return float(json.loads(run.stdout.strip().splitlines()[-1]))


def compare(baseline: Path, current: Path, pairs: int, repeats: int, only: str = "") -> list[tuple[str, float, float]]:
    """(workload, median baseline seconds, median current seconds), alternating the trees pair by pair."""
    rows = []
    for name, setup in WORKLOADS.items():
        if only not in name:
            continue
        old, new = [], []
        for pair in range(pairs):
            order = [(baseline, old), (current, new)] if pair % 2 == 0 else [(current, new), (baseline, old)]
            for tree, times in order:
                times.append(time_once(tree, setup, repeats))
        rows.append((name, statistics.median(old), statistics.median(new)))
        print(f"  {name}: {rows[-1][1]:.3f} s -> {rows[-1][2]:.3f} s", file=sys.stderr)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", default=LAYOUT_BASELINE, help="git revision to compare with")
    parser.add_argument("--pairs", type=int, default=5, help="alternating (baseline, current) pairs per workload")
    parser.add_argument("--repeats", type=int, default=3, help="timed runs per process (the fastest counts)")
    parser.add_argument("--quick", action="store_true", help="2 pairs of 1 run: checks that the script works")
    parser.add_argument("--only", default="", help="run the workloads whose name contains this text")
    args = parser.parse_args()
    pairs, repeats = (2, 1) if args.quick else (args.pairs, args.repeats)
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                          check=True).stdout.strip()
    with tempfile.TemporaryDirectory() as tmp:
        baseline = Path(tmp) / "baseline"
        subprocess.run(["git", "worktree", "add", "--detach", "-q", str(baseline), args.baseline], cwd=ROOT,
                       check=True)
        try:
            rows = compare(baseline, ROOT, pairs, repeats, args.only)
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(baseline)], cwd=ROOT, check=False)
    load = os.getloadavg()
    print(f"\nbaseline {args.baseline} vs current {head} (working tree); {pairs} alternating pairs, fastest of "
          f"{repeats} runs per process; load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; "
          f"{os.cpu_count()} CPUs\n")
    print("| workload | baseline (s) | current (s) | current / baseline |")
    print("|---|---:|---:|---:|")
    for name, old, new in rows:
        print(f"| {name} | {old:.3f} | {new:.3f} | {new / old:.2f} |")


if __name__ == "__main__":
    main()
