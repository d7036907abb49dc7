"""Run the benchmark scripts (``benchmarks/bench_*.py``) and write their tables into one markdown file.

Usage: ``python benchmarks/run_all.py [--quick] [--long] [--out FILE] [--threads N] [name ...]``, or
``python benchmarks/run_all.py reproductions [--quick] [--list] [NAME ...]`` for the scripts behind
docs/reproductions.md (listed in ``benchmarks/_reproductions.py``; see :func:`run_registry`), or
``python benchmarks/run_all.py figures [--quick] [NAME ...]`` for the scripts behind measured numbers quoted on
the other pages (listed in ``benchmarks/_figures.py``; result files ``fig-NAME.json``).

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
import os
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

from _common import (  # noqa: E402 - after the path set-up above
    RESULT_PREFIXES,
    VALUES_ENV,
    fmt_load,
    git_commit,
    load_average,
    machine_description,
    write_result,
)
from _figures import FIGURES  # noqa: E402
from _reproductions import REPRODUCTIONS, commands  # noqa: E402

#: The registries run by name (``run_all.py reproductions|figures [NAME ...]``), each entry with its script.
REGISTRIES = {"reproductions": REPRODUCTIONS, "figures": FIGURES}

#: Section titles and the documentation page that discusses each benchmark.
TITLES = {
    "boosting": ("BoostingExplainer: four libraries, the dense AXIL-style computation, 100,000 rows",
                 "explainers/boosting.md#performance"),
    "cli": ("Command line: start-up and report times", None),
    "compile": ("numba compile cost: each family cold, and the first call of each explainer and of data_values",
                "engine.md#compilation"),
    "engine": ("Game engine: batched Kernel SHAP against shap.KernelExplainer", "engine.md#benchmarks"),
    "fixed_forest": ("Fixed-structure forest game against full refits",
                     "engine.md#fixed-structure-forests-a-named-approximation-of-refits"),
    "fast_paths": ("Naive Bayes, discriminant and kernel refit paths against scikit-learn refits",
                   "engine.md#naive-bayes-kernel-ridge-gaussian-process-and-linear-discriminant-refits"),
    "gap": ("GapExplainer: sparse RF-GAP proximities against a leaf-grouped dense matrix",
            "explainers/gap.md#performance"),
    "isotonic": ("IsotonicShapleyExplainer: sparsity recovery and time per fit against a dense implementation",
                 "explainers/isotonic.md"),
    "knn_plugin": ("KNN-Shapley plugin: the recursion against enumeration, Monte-Carlo and plain NumPy",
                   "plugins.md#speed"),
    "label_issues": ("label_issues against cleanlab's out-of-fold logistic scores (run in the peers' venv)",
                     "valuation.md#speed-against-cleanlab-issue-40"),
    "logistic": ("LogisticRegression fast refits",
                 "explainers/residual.md#logistic-regression-warm-started-newton-along-the-prefix"),
    "memory": ("Memory per explainer against n: peak of one call against the result's size",
               "reliability.md#memory-per-explainer"),
    "naive_bayes": ("NaiveBayesExplainer: against warm shap.KernelExplainer and shap.explainers.Exact",
                    "explainers/naive_bayes.md#speed"),
    "representer": ("RepresenterExplainer: Table 1 and 3 analogues, speed against the influence function",
                    "explainers/representer.md"),
    "representer_torch": ("RepresenterExplainer and TracInCP of a PyTorch MLP: 1,000 x 10,000 rows, against captum",
                          "explainers/representer.md"),
    "report": ("Command line report at scale: 5,000 and 50,000 rows, time, memory, progress", "report.md#at-scale"),
    "residual": ("InstanceKernelExplainer: ridge against scikit-learn refits, CC means at scale, memory, dask",
                 "explainers/residual.md#benchmarks"),
    "sisr_speed": ("SISR fit time: this tree against the previous revision", "explainers/isotonic.md#the-alternation"),
    "valuation": ("Data valuation against pyDVL and cleanlab (run in the peers' venv)", "valuation_benchmark.md"),
}
#: Scripts that run only when named: reproductions of a paper's protocol that take hours, not speed benchmarks.
ONLY_WHEN_NAMED = {
    "naive_bayes_table3",  # docs/explainers/naive_bayes.md, Table 3 (KernelSHAP on every dataset)
    "representer_highdim",  # docs/explainers/representer.md, Table 1 in high dimension (about 40 minutes)
    "representer_table2",  # docs/explainers/representer.md, Table 2 (matrix factorisation, FIA)
    "residual_estimators",  # docs/explainers/residual.md, figures 9 and 10 (the four estimators by size)
    "valuation",  # docs/valuation_benchmark.md: pyDVL and cleanlab, the peers' venv only (about an hour)
}
SECTION = re.compile(r"<!-- bench:(?P<name>[a-z_]+) -->\n.*?<!-- /bench:(?P=name) -->\n", re.S)


def run_script(script: Path, args) -> tuple[int, float, str]:
    """Run one script, streaming its output, and write its result file ``benchmarks/results/bench-NAME.json``;
    ``(exit code, seconds, markdown section body)``."""
    name = script.stem.removeprefix("bench_")
    with tempfile.TemporaryDirectory() as tmp:
        markdown = Path(tmp) / f"{name}.md"
        writes_markdown = "--markdown" in script.read_text()  # else its printed output is the section
        command = [str(script.relative_to(ROOT))]
        command += ["--markdown", str(markdown), "--threads", str(args.threads)] if writes_markdown else []
        command += ["--quick"] if args.quick else []
        command += ["--long"] if args.long and name == "residual" else []  # bench_report: all its cases by default
        run = MeasuredRun(command, Path(tmp))
        body = markdown.read_text().strip() if markdown.exists() else ""
        if not writes_markdown:
            body = "```text\n" + "".join(run.printed).rstrip() + "\n```"
        if run.code != 0:
            body += failure(run.code, run.printed)
        shown = [part if part != str(markdown) else "FILE.md" for part in command]
        run.write(f"bench-{name}", [command[0]], shown, args.quick, markdown=body)
    return run.code, run.seconds, body


class MeasuredRun:
    """One script run in its own process: exit code, seconds, output, load averages, and the numbers it recorded
    (``_common.record``); :meth:`write` turns them into its result file (``_common.write_result``)."""

    def __init__(self, command: list[str], tmp: Path):
        self.values_file = tmp / "values.json"
        self.started, self.load_start, self.commit = datetime.now(UTC), load_average(), git_commit()
        self.code, self.seconds, self.printed = stream([sys.executable, *command],
                                                       env={**os.environ, VALUES_ENV: str(self.values_file)})
        self.load_end = load_average()

    def write(self, name: str, scripts: list[str], command: list[str], quick: bool, **fields) -> Path:
        import json

        values = json.loads(self.values_file.read_text()) if self.values_file.exists() else {}
        return write_result(name, scripts=scripts, command=command, started=self.started, load_start=self.load_start,
                            load_end=self.load_end, wall_s=self.seconds, quick=quick, exit_code=self.code,
                            values=values, output="".join(self.printed), commit=self.commit, **fields)


def stream(command: list[str], env: dict[str, str] | None = None) -> tuple[int, float, list[str]]:
    """Run ``command`` from the repository root, echoing its output; ``(exit code, seconds, output lines)``."""
    start = time.perf_counter()
    printed: list[str] = []
    with subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          env=env) as proc:
        for line in proc.stdout:
            print(line, end="", flush=True)
            printed.append(line)
    return proc.returncode, time.perf_counter() - start, printed


def failure(code: int, printed: list[str]) -> str:
    """The markdown that says a script failed, with the last 25 lines of its output."""
    tail = "".join(deque(printed, maxlen=25)).rstrip()
    return f"\n\n**The script failed (exit {code}); the last lines of its output:**\n\n```text\n{tail}\n```"


def section(name: str, body: str, seconds: float, quick: bool = False, date: str | None = None) -> str:
    """One benchmark's section of the markdown file: for a full run a placeholder that ``docs/hooks/results.py``
    renders from ``benchmarks/results/bench-NAME.json`` (``date``: a section that no result file backs yet,
    rendered "not rerun since DATE"); for a quick run the tables themselves."""
    title, page = TITLES.get(name, (name, None))
    link = f"Discussed in [{page.split('#')[0]}]({page}).\n\n" if page else ""
    content = (f"`python benchmarks/bench_{name}.py --quick`, {seconds:.0f} s.\n\n{body}" if quick
               else f"{{{{ section:bench-{name}{':' + date if date else ''} }}}}")
    return f"<!-- bench:{name} -->\n## {title}\n\n{link}{content}\n<!-- /bench:{name} -->\n"


#: What follows this line in docs/benchmarks.md is written by hand and kept as it is by :func:`compose`.
HAND_RUN = "<!-- hand-run benchmarks: kept by run_all.py below its generated sections -->"


def compose(sections: dict[str, str], quick: bool, footer: str = "") -> str:
    """The markdown file: the header, the sections in name order, and ``footer`` (the hand-run part, from
    :data:`HAND_RUN` on, of the file being rewritten)."""
    header = (
        "# Benchmarks\n\n"
        "Every figure on this page, and every benchmark table that another page includes, is rendered at build time "
        "from a result file, `benchmarks/results/bench-NAME.json`, that `python benchmarks/run_all.py [NAME ...]` "
        "wrote (the numbers, the command, the date, the git commit, versions, cores, the load average at the start and "
        "the end); this page holds placeholders, not numbers. The documentation build fails on a figure typed here "
        "by hand, and on a result file whose producing script changed since it ran (rerun it): "
        "[how the gate works](reproductions.md#where-the-figures-come-from).\n\n"
        + ("Quick mode: small sizes, for checking the scripts, not for quoting.\n\n" if quick else "")
        + "Rules: every comparison runs both sides in the same process under the same BLAS / OpenMP thread limit "
        "(threadpoolctl; stated in each section); first calls (numba compilation or cache loading, shap's own "
        "warm-up) are timed on their own and never enter a ratio; times are medians of three repetitions with "
        "the two sides alternating, and a ratio is the median of the per-repetition ratios (range in brackets); "
        "each section gives the load average (1 / 5 / 15 min) at its start and end, since the machine is shared "
        "with other jobs.\n"
    )
    ordered = [sections[name] for name in sorted(sections)]
    return header + "\n" + "\n".join(ordered) + ("\n" + footer if footer else "")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small versions (a minute or two each)")
    parser.add_argument("--long", action="store_true", help="also the hours-long parts (residual: full forest)")
    parser.add_argument("--threads", type=int, default=1, help="BLAS / OpenMP threads for every script (default 1)")
    parser.add_argument("--out", type=Path, help="markdown file to write (default: docs/benchmarks.md, or "
                        "benchmarks/results/benchmarks-quick.md with --quick)")
    parser.add_argument("--rewrite", action="store_true", help="run nothing: rewrite --out from its own sections "
                        "(after a change of titles or header)")
    parser.add_argument("names", nargs="*", help="run only these (e.g. gap naive_bayes); 'reproductions [NAME ...]' "
                        "runs the scripts behind docs/reproductions.md instead, 'figures [NAME ...]' those of "
                        "benchmarks/_figures.py")
    parser.add_argument("--list", action="store_true", help="with 'reproductions' or 'figures': print the commands, "
                        "run nothing")
    args = parser.parse_intermixed_args(argv)  # "reproductions --quick NAME": names on both sides of options
    if args.names and args.names[0] in REGISTRIES:
        return run_registry(args.names[0], args.names[1:], args)
    out = args.out or (HERE / "results" / "benchmarks-quick.md" if args.quick else ROOT / "docs" / "benchmarks.md")
    scripts = sorted(HERE.glob("bench_*.py"))
    unknown = set(args.names) - {s.stem.removeprefix("bench_") for s in scripts}
    if unknown:
        parser.error(f"no benchmark named {sorted(unknown)}; choose from {sorted(TITLES)}")
    if args.names or args.rewrite:
        scripts = [s for s in scripts if s.stem.removeprefix("bench_") in args.names]
    else:
        scripts = [s for s in scripts if s.stem.removeprefix("bench_") not in ONLY_WHEN_NAMED]
    sections, footer = {}, ""
    if out.exists():
        existing = out.read_text()
        footer = existing[existing.index(HAND_RUN):] if HAND_RUN in existing else ""
        if args.names or args.rewrite:  # keep the sections not rerun
            sections = {m["name"]: m.group() for m in SECTION.finditer(existing)}
    if args.rewrite:
        out.write_text(compose(sections, args.quick, footer))
    failures = 0
    for script in scripts:
        name = script.stem.removeprefix("bench_")
        print(f"\n## {script.name}\n", flush=True)
        code, seconds, body = run_script(script, args)
        failures += code != 0
        sections[name] = section(name, body, seconds, args.quick)
        print(f"\n({script.name}: exit {code}, {seconds:.1f} s)", flush=True)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(compose(sections, args.quick, footer))  # after every script: an interrupted run keeps its tables
    print(f"\nwrote {out}")
    return 1 if failures else 0


def run_registry(mode: str, names: list[str], args) -> int:
    """Run the scripts of registry ``mode`` (:data:`REGISTRIES`: those behind docs/reproductions.md, or the figures
    of the other pages), all or those named; write each result file ``PREFIX-NAME.json`` and their output to one
    file.

    The file (``benchmarks/results/MODE.md``, or ``MODE-quick.md`` with ``--quick``; ``--out`` overrides) holds
    one section per script: the command, exit code, wall time, load averages at start and end, and the script's
    printed output. It is rewritten after every script, so an interrupted run keeps what it finished.
    """
    registry = REGISTRIES[mode]
    chosen = commands(names, args.quick, registry, mode.removesuffix("s"))
    if args.list:
        for name, argv in chosen:
            print(f"{name}: " + ("(skipped in --quick: no small mode)" if argv is None else "python " + " ".join(argv)))
        return 0
    out = args.out or HERE / "results" / f"{mode}{'-quick' if args.quick else ''}.md"
    now = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    quick = " --quick" if args.quick else ""
    parts = [f"# {mode.capitalize()}\n\nGenerated by `python benchmarks/run_all.py {mode}{quick}` ({now}; machine: "
             f"{machine_description()}).\n"]
    failures = 0
    for name, argv in chosen:
        entry = registry[name]
        head = f"## {name} ({entry.label}): {entry.what}\n\n"
        if argv is None:
            parts.append(head + "Not run in --quick: the script writes the documentation's figures and has no "
                         "small mode.\n")
            continue
        print(f"\n## {name}: python {' '.join(argv)}\n", flush=True)
        with tempfile.TemporaryDirectory() as tmp:
            run = MeasuredRun(argv, Path(tmp))
            run.write(f"{RESULT_PREFIXES[mode]}-{name}", entry.scripts, argv, args.quick, seeds=entry.seeds,
                      claims=entry.claims_record())
        code, seconds, printed = run.code, run.seconds, run.printed
        failures += code != 0
        body = "```text\n" + "".join(printed).rstrip() + "\n```" + (failure(code, printed) if code else "")
        parts.append(head + f"`python {' '.join(argv)}`: exit {code}, {seconds:.0f} s, load average "
                     f"{fmt_load(run.load_start)} at the start, {fmt_load(run.load_end)} at the end.\n\n{body}\n")
        write(out, parts)
    write(out, parts)
    print(f"\nwrote {out}")
    return 1 if failures else 0


def write(out: Path, parts: list[str]) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("\n".join(parts))


if __name__ == "__main__":
    sys.exit(main())
