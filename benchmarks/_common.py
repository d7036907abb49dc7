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

Scripts run from the repository root as ``python benchmarks/bench_NAME.py``; Python puts ``benchmarks/`` on
``sys.path``, so they ``import _common``.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import platform
import statistics
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
    from importlib.metadata import PackageNotFoundError, version

    versions = []
    for name in ("numpy", "scipy", "scikit-learn", "numba", "shap", "shap-instances"):
        try:
            versions.append(f"{name} {version(name)}")
        except PackageNotFoundError:
            versions.append(f"{name} (not installed)")
    return (f"{_cpu_model()}, {os.cpu_count()} cores, {_memory_gib():.0f} GiB memory, {platform.system()} "
            f"{platform.release()}, Python {platform.python_version()}; " + ", ".join(versions))


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


if __name__ == "__main__":  # pragma: no cover
    sys.exit("benchmarks/_common.py is a helper module; run benchmarks/run_all.py or a bench_*.py script")


def run_sections(doc: str, sections: dict[str, Callable[[Bench], None]]) -> None:
    """Run the sections named on the command line (every one by default), in that order, under one ``Bench``."""
    chosen = [name for name in sys.argv[1:] if name in sections] or list(sections)

    def main(bench: Bench) -> None:
        for name in chosen:
            sections[name](bench)

    Bench(doc, argv=[a for a in sys.argv[1:] if a not in sections]).run(main)
