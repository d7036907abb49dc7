"""Command-line start-up and report times: what ``shap-instances`` costs before and while it works.

Each command runs in a fresh interpreter (``python -m shap_instances ...`` on this checkout), once to warm
up (numba's cache, the file-system cache; reported on its own) and then three times: medians. Measured:

* ``python -c "import shap_instances.cli"``, beside ``python -c "pass"`` (the interpreter alone), and the
  share of the import spent importing shap (``python -X importtime``, cumulative);
* ``shap-instances --version`` and ``--help``, which import neither shap nor scikit-learn, against the same
  ``--version`` with the modules imported first that ``shap_instances/__init__.py`` and ``cli.py`` imported at
  module level before the top level became lazy (``_base``, ``_explanation``, ``registry``, ``models``; shap
  among them): the start-up before and after, timed alternately, ratio the median of three;
* ``shap-instances list`` (which loads every explainer, and so shap);
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

from _common import Bench, compare, first_call, fmt_seconds, markdown_table, ratio, repeat

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


#: What ``shap_instances/__init__.py`` and ``cli.py`` imported at module level before the lazy top level.
EAGER = "import shap_instances._base, shap_instances._explanation, shap_instances.registry, shap_instances.report"


def _import_times(env: dict, code: str) -> tuple[float, float]:
    """Summed top-level import seconds of ``code`` and the cumulative seconds of ``shap`` (``-X importtime``)."""
    out = subprocess.run([sys.executable, "-X", "importtime", "-c", code], env=env, cwd=ROOT, capture_output=True,
                         text=True, check=True).stderr
    total, shap_seconds = 0.0, 0.0
    for line in out.splitlines():
        match = re.match(r"import time:\s*\d+ \|\s*(\d+) \|(\s*)(\S+)$", line)
        if match and len(match[2]) == 1:  # top level: each module's cumulative time counted once
            total += int(match[1]) / 1e6
        if match and match[3] == "shap":
            shap_seconds = int(match[1]) / 1e6
    return total, shap_seconds


def _median_of_3(env: dict, code: str) -> tuple[float, float]:
    times = [_import_times(env, code) for _ in range(3)]
    return sorted(t[0] for t in times)[1], sorted(t[1] for t in times)[1]


def main(bench: Bench) -> None:
    env = _env(bench.args.threads)
    with tempfile.TemporaryDirectory() as tmp:
        if bench.quick:
            last = ("explain --rows 5", ["-m", "shap_instances", "explain", "--rows", "5", "--force", "--out",
                                         str(Path(tmp) / "values.csv")])
        else:
            last = ("report", ["-m", "shap_instances", "report", "--silent", "--force", "--out",
                               str(Path(tmp) / "report")])
        commands = [
            ('python -c "pass"', ["-c", "pass"]),
            ('python -c "import shap_instances.cli"', ["-c", "import shap_instances.cli"]),
            ("shap-instances --help", ["-m", "shap_instances", "--help"]),
            ("shap-instances list", ["-m", "shap_instances", "list"]),
            (f"shap-instances {last[0]}", last[1]),
        ]
        rows = []
        for name, arguments in commands:
            run = _runner(arguments, env)
            first = first_call(run)
            timing = repeat(run)
            rows.append([f"`{name}`", fmt_seconds(first), str(timing),
                         f"{fmt_seconds(min(timing.seconds))} - {fmt_seconds(max(timing.seconds))}"])
            if name == 'python -c "import shap_instances.cli"':  # the before / after pair comes next
                lazy = _runner(["-m", "shap_instances", "--version"], env)
                eager = _runner(["-c", f"{EAGER}; import sys; from shap_instances.cli import main; "
                                       "sys.exit(main(['--version']))"], env)
                firsts = first_call(lazy), first_call(eager)
                after, before = compare(lazy, eager)
                for label, first, timing in (("shap-instances --version", firsts[0], after),
                                             ("shap-instances --version, imports as before (shap eagerly)",
                                              firsts[1], before)):
                    rows.append([f"`{label}`", fmt_seconds(first), str(timing),
                                 f"{fmt_seconds(min(timing.seconds))} - {fmt_seconds(max(timing.seconds))}"])
    cli_total, cli_shap = _median_of_3(env, "import shap_instances.cli")
    eager_total, eager_shap = _median_of_3(env, f"{EAGER}; import shap_instances.cli")
    bench.print(
        "Each command in a fresh interpreter (thread limit through OMP_NUM_THREADS, OPENBLAS_NUM_THREADS and "
        f"MKL_NUM_THREADS = {bench.args.threads}): one warm-up run, then three runs (median and range). "
        "`--version` and `--help` import neither shap nor scikit-learn: the package's top level is lazy and "
        "`cli.py` imports what a command needs when it runs. Before that change `shap_instances/__init__.py` "
        "imported `_base`, `_explanation` and `registry`, and `cli.py` imported `models`, which import shap; the "
        "row \"imports as before\" imports those modules first, then runs the same `--version`.",
        markdown_table(["command", "first run", "median of 3", "range"], rows),
        f"Start-up of `shap-instances --version`, before / after the lazy imports: **{ratio(before, after)}** "
        "(median of the three per-repetition ratios, the two sides alternating; range in brackets). "
        f"`python -X importtime` (median of three, top-level modules summed): `import shap_instances.cli` "
        f"{cli_total:.2f} s, of which shap {cli_shap:.2f} s; with the imports as before {eager_total:.2f} s, of "
        f"which shap {eager_shap:.2f} s.", part="table")


if __name__ == "__main__":
    Bench(__doc__).run(main)
