"""Command-line start-up and report times: what ``shap-instances`` costs before and while it works.

Each command runs in a fresh interpreter (``python -m shap_instances.cli ...`` on this checkout), once to warm
up (numba's cache, the file-system cache; reported on its own) and then three times: medians. Measured:

* ``python -c "import shap_instances.cli"``, beside ``python -c "pass"`` (the interpreter alone), and the
  share of the import spent importing shap (``python -X importtime``, cumulative);
* ``shap-instances --version`` and ``shap-instances list``;
* ``shap-instances report`` on the embedded diabetes data (``--quick``: ``explain --rows 5`` instead, which
  fits and explains without the figures).

The children get the thread limit through ``OMP_NUM_THREADS`` / ``OPENBLAS_NUM_THREADS`` /
``MKL_NUM_THREADS`` (threadpoolctl limits only the current process).

Usage: ``python benchmarks/bench_cli.py [--quick] [--threads N] [--markdown FILE]``.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from _common import Bench, first_call, fmt_seconds, markdown_table, repeat

ROOT = Path(__file__).resolve().parent.parent


def _env(threads: int) -> dict:
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        env[name] = str(threads)
    return env


def _runner(arguments: list[str], env: dict):
    def run():
        subprocess.run([sys.executable, *arguments], env=env, check=True, cwd=ROOT, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
    return run


def _shap_import_share(env: dict) -> tuple[float, float]:
    """Cumulative import seconds of ``shap_instances.cli`` and of ``shap`` within it (``-X importtime``)."""
    out = subprocess.run([sys.executable, "-X", "importtime", "-c", "import shap_instances.cli"], env=env,
                         cwd=ROOT, capture_output=True, text=True, check=True).stderr
    cumulative = {}
    for line in out.splitlines():
        match = re.match(r"import time:\s*\d+ \|\s*(\d+) \|(\s*)(\S+)$", line)
        if match:
            cumulative[match[3]] = int(match[1]) / 1e6
    return cumulative.get("shap_instances.cli", float("nan")), cumulative.get("shap", 0.0)


def main(bench: Bench) -> None:
    env = _env(bench.args.threads)
    with tempfile.TemporaryDirectory() as tmp:
        if bench.quick:
            last = ("explain --rows 5", ["-m", "shap_instances.cli", "explain", "--rows", "5", "--force", "--out",
                                         str(Path(tmp) / "values.csv")])
        else:
            last = ("report", ["-m", "shap_instances.cli", "report", "--silent", "--force", "--out",
                               str(Path(tmp) / "report")])
        commands = [
            ('python -c "pass"', ["-c", "pass"]),
            ('python -c "import shap_instances.cli"', ["-c", "import shap_instances.cli"]),
            ("shap-instances --version", ["-m", "shap_instances.cli", "--version"]),
            ("shap-instances list", ["-m", "shap_instances.cli", "list"]),
            (f"shap-instances {last[0]}", last[1]),
        ]
        rows = []
        for name, arguments in commands:
            run = _runner(arguments, env)
            first = first_call(run)
            timing = repeat(run)
            rows.append([f"`{name}`", fmt_seconds(first), str(timing),
                         f"{fmt_seconds(min(timing.seconds))} - {fmt_seconds(max(timing.seconds))}"])
    shares = [_shap_import_share(env) for _ in range(3)]
    total = sorted(s[0] for s in shares)[1]
    shap_part = sorted(s[1] for s in shares)[1]
    bench.print(
        "Each command in a fresh interpreter (thread limit through OMP_NUM_THREADS, OPENBLAS_NUM_THREADS and "
        f"MKL_NUM_THREADS = {bench.args.threads}): one warm-up run, then three runs (median and range). "
        f"`python -X importtime -c \"import shap_instances.cli\"` (median of three): {total:.2f} s cumulative, of "
        f"which importing shap {shap_part:.2f} s ({100 * shap_part / total:.0f}%). shap comes in through the "
        "package's `__init__` (`_base`, `_explanation`, `registry`), not through `cli.py`, which imports only the "
        "standard library and `shap_instances.exceptions` at module level.",
        markdown_table(["command", "first run", "median of 3", "range"], rows), part="table")


if __name__ == "__main__":
    Bench(__doc__).run(main)
