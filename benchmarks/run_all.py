"""Run the benchmark scripts (``benchmarks/bench_*.py``) and write their tables into one markdown file.

Usage: ``python benchmarks/run_all.py [--quick] [--long] [--out FILE] [--threads N] [name ...]``.

Each script runs in its own process (first-call numba compile times and memory peaks do not leak between
benchmarks) with ``--markdown`` pointing at a temporary file; the file written (``docs/benchmarks.md`` by
default, ``benchmarks/results/benchmarks-quick.md`` with ``--quick``, so a quick pass never replaces the
documented numbers) holds a header with the machine and one section per script, each stamped with its date,
mode, thread settings, load averages at start and end and wall time. Each section's tables sit between
``<!-- --8<-- [start:NAME] -->`` and ``<!-- --8<-- [end:NAME] -->``, so the documentation pages include them
(pymdownx.snippets, ``--8<-- "docs/benchmarks.md:NAME"``) instead of retyping numbers. Naming scripts
(``run_all.py gap naive_bayes``) reruns only those and keeps the other sections of an existing file (each
section is delimited by ``<!-- bench:NAME -->`` and ``<!-- /bench:NAME -->``). Scripts in ``ONLY_WHEN_NAMED``
(hours-long reproductions) run only when named.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
import time
from collections import deque
from datetime import UTC, datetime
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

from _common import machine_description  # noqa: E402 - after the path set-up above

#: Section titles and the documentation page that discusses each benchmark.
TITLES = {
    "boosting": ("BoostingExplainer: four libraries, the dense AXIL-style computation, 100,000 rows",
                 "explainers/boosting.md#performance"),
    "cli": ("Command line: start-up and report times", None),
    "engine": ("Game engine: batched Kernel SHAP against shap.KernelExplainer", "engine.md#benchmarks"),
    "gap": ("GapExplainer: sparse RF-GAP proximities against a leaf-grouped dense matrix",
            "explainers/gap.md#performance"),
    "isotonic": ("IsotonicShapleyExplainer: sparsity recovery and time per fit against a dense implementation",
                 "explainers/isotonic.md"),
    "knn_plugin": ("KNN-Shapley plugin: the recursion against enumeration, Monte-Carlo and plain NumPy",
                   "plugins.md#speed"),
    "logistic": ("LogisticRegression fast refits",
                 "explainers/residual.md#logistic-regression-warm-started-newton-along-the-prefix"),
    "memory": ("Memory per explainer against n: peak of one call against the result's size",
               "reliability.md#memory-per-explainer"),
    "naive_bayes": ("NaiveBayesExplainer: against warm shap.KernelExplainer and shap.explainers.Exact",
                    "explainers/naive_bayes.md#speed"),
    "representer": ("RepresenterExplainer: Table 1 and 3 analogues, speed against the influence function",
                    "explainers/representer.md"),
    "report": ("Command line report at scale: 5,000 and 50,000 rows, time, memory, progress", "report.md#at-scale"),
    "residual": ("InstanceKernelExplainer: ridge against scikit-learn refits, CC means at scale, memory, dask",
                 "explainers/residual.md#benchmarks"),
}
#: Scripts that run only when named: reproductions of a paper's protocol that take hours, not speed benchmarks.
ONLY_WHEN_NAMED = {
    "naive_bayes_table3",  # docs/explainers/naive_bayes.md, Table 3 (KernelSHAP on every dataset)
    "representer_highdim",  # docs/explainers/representer.md, Table 1 in high dimension (about 40 minutes)
    "representer_table2",  # docs/explainers/representer.md, Table 2 (matrix factorisation, FIA)
    "residual_estimators",  # docs/explainers/residual.md, figures 9 and 10 (the four estimators by size)
}
SECTION = re.compile(r"<!-- bench:(?P<name>[a-z_]+) -->\n.*?`, (?P<seconds>\d+) s\..*?"
                     r"<!-- --8<-- \[start:(?P=name)\] -->\n(?P<body>.*?)\n<!-- --8<-- \[end:(?P=name)\] -->\n"
                     r"<!-- /bench:(?P=name) -->\n", re.S)


def run_script(script: Path, args) -> tuple[int, float, str]:
    """Run one script, streaming its output; ``(exit code, seconds, markdown section body)``."""
    name = script.stem.removeprefix("bench_")
    with tempfile.TemporaryDirectory() as tmp:
        markdown = Path(tmp) / f"{name}.md"
        writes_markdown = "--markdown" in script.read_text()  # else its printed output is the section
        command = [sys.executable, str(script)]
        command += ["--markdown", str(markdown), "--threads", str(args.threads)] if writes_markdown else []
        command += ["--quick"] if args.quick else []
        command += ["--long"] if args.long and name == "residual" else []  # bench_report: all its cases by default
        start = time.perf_counter()
        tail: deque[str] = deque(maxlen=25)
        printed: list[str] = []
        with subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) as proc:
            for line in proc.stdout:
                print(line, end="", flush=True)
                tail.append(line)
                printed.append(line)
        seconds = time.perf_counter() - start
        body = markdown.read_text().strip() if markdown.exists() else ""
        if not writes_markdown:
            body = "```text\n" + "".join(printed).rstrip() + "\n```"
    if proc.returncode != 0:
        body += (f"\n\n**The script failed (exit {proc.returncode}); the last lines of its output:**\n\n```text\n"
                 + "".join(tail).rstrip() + "\n```")
    return proc.returncode, seconds, body


def section(name: str, body: str, seconds: float) -> str:
    title, page = TITLES.get(name, (name, None))
    link = f" Discussed in [{page.split('#')[0]}]({page})." if page else ""
    return (f"<!-- bench:{name} -->\n## {title}\n\n`python benchmarks/bench_{name}.py`, {seconds:.0f} s.{link}\n\n"
            f"<!-- --8<-- [start:{name}] -->\n{body}\n<!-- --8<-- [end:{name}] -->\n<!-- /bench:{name} -->\n")


def compose(sections: dict[str, str], quick: bool) -> str:
    now = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    header = (
        "# Benchmarks\n\n"
        "Generated by `python benchmarks/run_all.py` (do not edit by hand: rerun it, or rerun some scripts with "
        "`python benchmarks/run_all.py NAME ...`, which keeps the other sections). The documentation pages include "
        "these sections rather than retyping their numbers.\n\n"
        f"- Written: {now}{' (quick mode: small sizes, for checking the scripts, not for quoting)' if quick else ''}\n"
        f"- Machine: {machine_description()}\n"
        "- Rules: every comparison runs both sides in the same process under the same BLAS / OpenMP thread limit "
        "(threadpoolctl; stated in each section); first calls (numba compilation or cache loading, shap's own "
        "warm-up) are timed on their own and never enter a ratio; times are medians of three repetitions with "
        "the two sides alternating, and a ratio is the median of the per-repetition ratios (range in brackets); "
        "each section gives the load average (1 / 5 / 15 min) at its start and end, since the machine is shared "
        "with other jobs.\n"
    )
    ordered = [sections[name] for name in sorted(sections)]
    return header + "\n" + "\n".join(ordered)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small versions (a minute or two each)")
    parser.add_argument("--long", action="store_true", help="also the hours-long parts (residual: full forest)")
    parser.add_argument("--threads", type=int, default=1, help="BLAS / OpenMP threads for every script (default 1)")
    parser.add_argument("--out", type=Path, help="markdown file to write (default: docs/benchmarks.md, or "
                        "benchmarks/results/benchmarks-quick.md with --quick)")
    parser.add_argument("--rewrite", action="store_true", help="run nothing: rewrite --out from its own sections "
                        "(after a change of titles or header)")
    parser.add_argument("names", nargs="*", help="run only these (e.g. gap naive_bayes)")
    args = parser.parse_args(argv)
    out = args.out or (HERE / "results" / "benchmarks-quick.md" if args.quick else ROOT / "docs" / "benchmarks.md")
    scripts = sorted(HERE.glob("bench_*.py"))
    unknown = set(args.names) - {s.stem.removeprefix("bench_") for s in scripts}
    if unknown:
        parser.error(f"no benchmark named {sorted(unknown)}; choose from {sorted(TITLES)}")
    if args.names or args.rewrite:
        scripts = [s for s in scripts if s.stem.removeprefix("bench_") in args.names]
    else:
        scripts = [s for s in scripts if s.stem.removeprefix("bench_") not in ONLY_WHEN_NAMED]
    sections = {}
    if (args.names or args.rewrite) and out.exists():  # keep the sections not rerun
        sections = {m["name"]: section(m["name"], m["body"], float(m["seconds"]))
                    for m in SECTION.finditer(out.read_text())}
    if args.rewrite:
        out.write_text(compose(sections, args.quick))
    failures = 0
    for script in scripts:
        name = script.stem.removeprefix("bench_")
        print(f"\n## {script.name}\n", flush=True)
        code, seconds, body = run_script(script, args)
        failures += code != 0
        sections[name] = section(name, body, seconds)
        print(f"\n({script.name}: exit {code}, {seconds:.1f} s)", flush=True)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(compose(sections, args.quick))  # after every script: an interrupted run keeps its tables
    print(f"\nwrote {out}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
