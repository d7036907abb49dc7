"""Shared machinery of the benchmark scripts (``benchmarks/bench_*.py``), in one place.

* :class:`Bench` parses the common options (``--quick``, ``--threads``, ``--markdown``), limits BLAS and OpenMP
  threads with ``threadpoolctl`` for the whole run (so a method and its baseline always run under the same
  setting), prints the load average at the start and at the end, and collects the markdown it prints so that
  ``run_all.py`` can assemble ``docs/benchmarks.md`` from it.
* :func:`repeat` and :func:`compare` time calls ``REPEATS`` (3) times; :func:`compare` alternates the two sides
  within each repetition, so a change of load on this shared machine hits both; :func:`ratio` is the median of
  the per-repetition ratios, printed with their range.
* :func:`first_call` times a warm-up call on its own: first-call costs (numba compilation or cache loading,
  shap's own warm-up, imports) are reported separately for both sides and never enter a ratio.
* :func:`markdown_table` writes a table; :func:`fmt_seconds` and :func:`fmt_mib` format cells.
* :func:`record` hands named numbers from a script to its result file; :func:`write_result` is the one writer of
  ``benchmarks/results/NAME.json`` (the numbers, the command, the date, versions, git commit, cores, load averages
  at start and end, seeds, the producing scripts' content hashes); ``run_all.py`` calls it for every script it
  runs, and ``docs/hooks/results.py`` renders the documentation's figures from those files.

Scripts run from the repository root as ``python benchmarks/bench_NAME.py``; Python puts ``benchmarks/`` on
``sys.path``, so they ``import _common``.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import platform
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from threadpoolctl import threadpool_info, threadpool_limits

#: Repetitions of every timing that enters a ratio (the median is reported).
REPEATS = 3
#: Where result files live: ``benchmarks/results/NAME.json`` (full runs, committed) and ``results/quick/``
#: (``--quick`` runs: never rendered in the documentation, not committed).
RESULTS = Path(__file__).resolve().parent / "results"
ROOT = RESULTS.parent.parent
#: The environment variable through which ``run_all.py`` tells a script where :func:`record` writes.
VALUES_ENV = "SHAP_INSTANCES_RESULT_VALUES"
#: ``run_all.py``'s registries (``run_all.py reproductions|figures NAME``) and the prefix of their result files
#: (``repro-NAME.json``, ``fig-NAME.json``); a benchmark's is ``bench-NAME.json`` (``run_all.py NAME``).
RESULT_PREFIXES = {"reproductions": "repro", "figures": "fig"}
#: Version of the result files' layout (``docs/hooks/results.py`` reads this one).
SCHEMA = 1


def load_average() -> tuple[float, float, float]:
    """The 1, 5 and 15 minute load averages."""
    return os.getloadavg()


def fmt_load(load: Sequence[float]) -> str:
    return " / ".join(f"{x:.2f}" for x in load)


def fmt_seconds(seconds: float) -> str:
    """Seconds with a unit that keeps three significant digits: ``1.23 s``, ``45.6 ms``, ``0.21 us``."""
    if seconds >= 1:
        return f"{seconds:.2f} s" if seconds < 100 else f"{seconds:,.0f} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.3g} ms"
    return f"{seconds * 1e6:.3g} us"


def fmt_mib(n_bytes: float) -> str:
    return f"{n_bytes / 2**20:,.1f} MiB" if n_bytes < 100 * 2**20 else f"{n_bytes / 2**20:,.0f} MiB"


@dataclass
class Timing:
    """Wall-clock seconds of repeated calls and the result of the last one."""

    seconds: list[float]
    result: object = field(default=None, repr=False)

    @property
    def median(self) -> float:
        return statistics.median(self.seconds)

    def __str__(self) -> str:
        return fmt_seconds(self.median)


def rss() -> int:
    """This process's resident set size in bytes (Linux ``/proc``)."""
    with open("/proc/self/statm") as handle:
        return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


@contextlib.contextmanager
def rss_peak():
    """Peak growth of the resident set during the block, sampled every 2 ms by a thread.

    ``with rss_peak() as growth: work()`` and then ``growth()`` gives the bytes.
    """
    base = rss()
    peak = [base]
    done = threading.Event()

    def sample():
        while not done.is_set():
            peak[0] = max(peak[0], rss())
            time.sleep(0.002)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    try:
        yield lambda: peak[0] - base
    finally:
        done.set()
        sampler.join()
        peak[0] = max(peak[0], rss())


def timed(function: Callable[[], object]) -> tuple[float, object]:
    """``(seconds, result)`` of one call."""
    start = time.perf_counter()
    result = function()
    return time.perf_counter() - start, result


def first_call(function: Callable[[], object]) -> float:
    """Seconds of a warm-up call (reported on its own, never part of a ratio)."""
    return timed(function)[0]


def repeat(function: Callable[[], object], repeats: int = REPEATS) -> Timing:
    """Time ``repeats`` calls of ``function``."""
    timing = Timing([])
    for _ in range(repeats):
        seconds, timing.result = timed(function)
        timing.seconds.append(seconds)
    return timing


def compare(ours: Callable[[], object], baseline: Callable[[], object],
            repeats: int = REPEATS) -> tuple[Timing, Timing]:
    """Time both sides ``repeats`` times, alternating within each repetition; ``(ours, baseline)``."""
    mine, theirs = Timing([]), Timing([])
    for _ in range(repeats):
        for timing, function in ((mine, ours), (theirs, baseline)):
            seconds, timing.result = timed(function)
            timing.seconds.append(seconds)
    return mine, theirs


def ratios(numerator: Timing, denominator: Timing) -> list[float]:
    return [a / b for a, b in zip(numerator.seconds, denominator.seconds, strict=True)]


def ratio(numerator: Timing, denominator: Timing, *, spread: bool = True) -> str:
    """Median of the per-repetition ratios ``numerator / denominator``, e.g. ``12x (11-13)`` or ``1.6x (1.4-1.7)``."""
    values = ratios(numerator, denominator)
    text = _fmt_ratio(statistics.median(values))
    if spread and len(values) > 1:
        text += f" ({_fmt_ratio(min(values), unit=False)}-{_fmt_ratio(max(values), unit=False)})"
    return text


def _fmt_ratio(value: float, unit: bool = True) -> str:
    text = f"{value:,.0f}" if value >= 10 else f"{value:.1f}" if value >= 1 else f"{value:.2g}"
    return text + ("x" if unit else "")


def markdown_table(header: Sequence[str], rows: Sequence[Sequence[object]], align: str | None = None) -> str:
    """A markdown table; ``align`` is one letter per column (``l`` or ``r``), default all left."""
    align = align or "l" * len(header)
    rule = ["---:" if a == "r" else "---" for a in align]
    lines = ["| " + " | ".join(str(h) for h in header) + " |", "|" + "|".join(rule) + "|"]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines)


def thread_description() -> str:
    """The thread pools as ``threadpoolctl`` sees them now, e.g. ``blas (openblas 0.3.30): 1``."""
    pools = {}
    for pool in threadpool_info():
        name = f"{pool['user_api']} ({pool['internal_api']} {pool.get('version') or ''}".rstrip() + ")"
        pools.setdefault(name, set()).add(pool["num_threads"])
    if not pools:
        return "no BLAS or OpenMP pool loaded"
    return ", ".join(f"{name}: {'/'.join(str(n) for n in sorted(counts))}" for name, counts in sorted(pools.items()))


def _memory_gib() -> float:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    except (ValueError, OSError):  # pragma: no cover - not Linux
        return float("nan")


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as handle:
            for line in handle:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:  # pragma: no cover - not Linux
        pass
    return platform.processor() or platform.machine()


def machine_description() -> str:
    """CPU, cores, memory, OS and the versions of the libraries the benchmarks time."""
    found = versions()
    return (f"{_cpu_model()}, {os.cpu_count()} cores, {_memory_gib():.0f} GiB memory, {platform.system()} "
            f"{platform.release()}, Python {found.pop('python')}; " + ", ".join(f"{k} {v}" for k, v in found.items()))


class Bench:
    """One benchmark run: the common options, thread limits, load averages, and the markdown it prints.

    Usage::

        def main(bench):
            bench.print(markdown_table(...))

        if __name__ == "__main__":
            Bench(__doc__).run(main)

    ``arguments`` adds script-specific options: a function taking the ``argparse.ArgumentParser``.
    """

    def __init__(self, doc: str, argv: Sequence[str] | None = None,
                 arguments: Callable[[argparse.ArgumentParser], None] | None = None):
        parser = argparse.ArgumentParser(description=doc.strip().splitlines()[0])
        parser.add_argument("--quick", action="store_true", help="small sizes (a minute or two)")
        parser.add_argument("--threads", type=int, default=1,
                            help="BLAS and OpenMP threads for both sides of every comparison (default: 1)")
        parser.add_argument("--markdown", type=Path, help="also write the markdown printed to this file")
        if arguments is not None:
            arguments(parser)
        self.args = parser.parse_args(argv)
        self.quick = self.args.quick
        self._parts: list[str] = []

    def print(self, *parts: str, part: str | None = None) -> None:
        """Print markdown (blocks separated by blank lines) and keep it for the markdown file.

        ``part`` names the blocks for the documentation: in the markdown file they sit between snippet markers
        ``[start:SCRIPT-PART]`` and ``[end:SCRIPT-PART]``, so a page includes them with
        ``--8<-- "docs/benchmarks.md:SCRIPT-PART"`` (SCRIPT: the script's name without ``bench_``). A first
        block that is a heading stays outside the markers (the including page has its own).
        """
        text = "\n\n".join(parts)
        print(text + "\n", flush=True)
        if part is not None:  # a leading "### title" block stays outside: the including page has its own
            name = f"{Path(sys.argv[0]).stem.removeprefix('bench_')}-{part}"
            title, body = text.partition("\n\n")[::2] if text.startswith("#") else ("", text)
            text = (f"{title}\n\n" if title else "") + (
                f"<!-- --8<-- [start:{name}] -->\n{body}\n<!-- --8<-- [end:{name}] -->")
            record(**{f"part:{part}": body})
        self._parts.append(text)

    def run(self, main: Callable[[Bench], None]) -> None:
        """Run ``main(self)`` under the thread limit; the run's conditions open the markdown file (part
        ``conditions``: date, mode, threads, load average at start and end, wall time)."""
        start_load, start = load_average(), time.perf_counter()
        started = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
        with threadpool_limits(limits=self.args.threads):
            threads = thread_description()
            print(f"_{started}, {'quick' if self.quick else 'full'} mode, threads {threads}, load average at start "
                  f"{fmt_load(start_load)}_\n", flush=True)
            main(self)
        end_load = load_average()
        conditions = (f"_Measured {started}, {'quick' if self.quick else 'full'} mode, "
                      f"{time.perf_counter() - start:.0f} s; threads (the same for every method and its baseline): "
                      f"{threads}; load average (1 / 5 / 15 min) {fmt_load(start_load)} at the start, "
                      f"{fmt_load(end_load)} at the end._")
        self.print(conditions, part="conditions")
        self._parts.insert(0, self._parts.pop())
        if self.args.markdown is not None:
            self.args.markdown.write_text("\n\n".join(self._parts) + "\n")


def target_verdict(**checks: tuple[float, str, float]) -> str:
    """``"met"`` when every check ``name=(measured, op, target)`` holds (``op``: ``"<="`` or ``">="``), else
    ``"not met: "`` and the names of those that miss, so that a page states an issue's target from the numbers.

    >>> target_verdict(minutes=(14.4, "<=", 30), efficiency=(0.71, ">=", 0.8))
    'not met: efficiency'
    """
    missed = [name for name, (value, op, target) in checks.items()
              if not (value <= target if op == "<=" else value >= target)]
    return "met" if not missed else "not met: " + ", ".join(name.replace("_", " ") for name in missed)


def record(**values: object) -> None:
    """Hand named numbers (JSON-able: numbers, strings, lists, dicts) to this run's result file.

    Under ``run_all.py`` (which sets ``SHAP_INSTANCES_RESULT_VALUES``) they are merged by name into the file's
    ``values``, which the documentation renders (``{{ result:NAME:key }}``) and the verdict rules read; a script run
    on its own prints as before and records nothing.
    """
    target = os.environ.get(VALUES_ENV)
    if not target:
        return
    path = Path(target)
    merged = json.loads(path.read_text()) if path.exists() else {}
    merged.update(values)
    path.write_text(json.dumps(merged, indent=1, default=float))


def file_hash(path: str | Path) -> str:
    """sha256 of a file's bytes: the staleness rule compares it with the hash a result file recorded."""
    return hashlib.sha256((ROOT / path).read_bytes()).hexdigest()


def _git(*args: str) -> str:
    try:
        return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):  # pragma: no cover - not a git checkout
        return ""


def git_commit() -> str:
    """The commit checked out now (empty outside a git checkout)."""
    return _git("rev-parse", "HEAD")


def versions() -> dict[str, str]:
    """Versions of the libraries the benchmarks time (``"not installed"`` where absent)."""
    from importlib.metadata import PackageNotFoundError, version

    found = {}
    for name in ("numpy", "scipy", "scikit-learn", "numba", "shap", "shap-instances"):
        try:
            found[name] = version(name)
        except PackageNotFoundError:
            found[name] = "not installed"
    found["python"] = platform.python_version()
    return found


def write_result(name: str, *, scripts: Sequence[str], command: Sequence[str], started: datetime,
                 load_start: Sequence[float], load_end: Sequence[float], wall_s: float, quick: bool,
                 exit_code: int = 0, values: dict | None = None, seeds: object = None, claims: object = None,
                 markdown: str | None = None, output: str | None = None, commit: str | None = None) -> Path:
    """Write ``benchmarks/results/NAME.json`` (``results/quick/NAME.json`` for a ``--quick`` run): the one writer.

    ``scripts`` are the producing files (repository-relative); their content hashes are recorded, and the
    documentation build calls the file stale when one of them has changed since (``docs/hooks/results.py``).
    ``claims`` (reproductions) carry the paper's numbers with their source, the tolerance and the seed range.
    ``commit``: the git commit the run started at (:func:`git_commit`; by default the one checked out now).
    """
    commit = commit or git_commit()
    dirty = bool(_git("status", "--porcelain", "--", *scripts))
    result = {
        "schema": SCHEMA, "name": name, "mode": "quick" if quick else "full", "exit_code": exit_code,
        "command": ["python", *command], "date": started.strftime("%Y-%m-%d %H:%M UTC"),
        "wall_s": round(wall_s, 1), "git_commit": commit + ("+local changes" if dirty else ""),
        "scripts": {script: file_hash(script) for script in scripts}, "versions": versions(),
        "machine": {"cpu": _cpu_model(), "cores": os.cpu_count(), "memory_gib": round(_memory_gib()),
                    "os": f"{platform.system()} {platform.release()}"},
        "load": {"start": [round(x, 2) for x in load_start], "end": [round(x, 2) for x in load_end]},
        "seeds": seeds, "claims": claims, "values": values or {}, "markdown": markdown, "output": output,
    }
    path = RESULTS / ("quick" if quick else "") / f"{name}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_suffix(".json.tmp")
    temporary.write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n")
    temporary.replace(path)
    return path


if __name__ == "__main__":  # pragma: no cover
    sys.exit("benchmarks/_common.py is a helper module; run benchmarks/run_all.py or a bench_*.py script")


def run_sections(doc: str, sections: dict[str, Callable[[Bench], None]]) -> None:
    """Run the sections named on the command line (every one by default), in that order, under one ``Bench``."""
    chosen = [name for name in sys.argv[1:] if name in sections] or list(sections)

    def main(bench: Bench) -> None:
        for name in chosen:
            sections[name](bench)

    Bench(doc, argv=[a for a in sys.argv[1:] if a not in sections]).run(main)
