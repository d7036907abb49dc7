"""Parts of the variance benchmark that docs/engine.md quotes, each recorded: ``benchmarks/bench_variance.py`` run
unchanged, its printed tables read back.

``python docs/scripts/measure_variance.py ARGS`` runs ``bench_variance.main()`` with ``ARGS`` (its own options:
``--permutations``, ``--repeats``, ``--reference``, ``--skip-forest``, ``--skip-logistic``, ``--skip-diabetes``,
``--report-game``, ``--report-reference``, ``--leaf-sizes``), echoes what it prints, and records every estimator
table it printed (``part:KEY``) with each estimator's error ratio to the antithetic baseline at equal CPU and at
equal wall time (``KEY:ESTIMATOR:cpu``, ``KEY:ESTIMATOR:wall``); KEY is ``logistic_BUDGET``, ``forest`` or
``report``. ``benchmarks/_figures.py`` registers three runs (``python benchmarks/run_all.py figures
variance_logistic variance_forest variance_report``), a few minutes each, where the benchmark's full default run
(``python benchmarks/run_all.py variance``) takes over 40 minutes of a core. The leaf-size table (figure
``variance_leaf_sizes``, about 15 minutes of a core) is recorded as ``part:leaf_sizes`` and, per
``min_samples_leaf`` L, ``leaf_L:rows`` (mean in-bag rows a leaf), ``leaf_L:closed_s`` (the closed form's seconds),
``leaf_L:in_permutations`` (that time in antithetic permutations) and ``leaf_L:gain`` (the control variate's error
ratio at equal wall time).
"""

from __future__ import annotations

import contextlib
import io
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))
import bench_variance  # noqa: E402
from _common import record  # noqa: E402

#: The leaf-size table's title: its rows are read by :func:`_leaf_sizes`.
LEAF_SIZES = re.compile(r"^closed form against leaf size")
#: A table's title (the line before it) and the key its numbers are recorded under.
KEYS = ((re.compile(r"^logistic regression.*?(\d+) permutations' worth a run"), "logistic_{}"),
        (re.compile(r"^fixed-structure forest"), "forest"), (re.compile(r"^the report's aggregate game"), "report"))


class Tee(io.StringIO):
    """A buffer that also writes through to the terminal."""

    def write(self, text: str) -> int:
        sys.__stdout__.write(text)
        return super().write(text)


def tables(printed: str) -> dict[str, object]:
    """The estimator tables in ``printed``: ``part:KEY`` and each row's ratios (see the module's docstring)."""
    values: dict[str, object] = {}
    for block in printed.split("\n\n"):
        lines = block.strip().splitlines()
        rows = [line for line in lines if line.startswith("|")]
        if rows and LEAF_SIZES.match(lines[0]):
            values |= _leaf_sizes(rows)
            continue
        key = _key(lines[0]) if rows else None
        if key is None:
            continue
        values[f"part:{key}"] = "\n".join(rows)
        for row in rows[2:]:
            name, *_, by_cpu, by_wall = (cell.strip() for cell in row.strip("|").split("|"))
            if by_cpu != "exact":
                values |= {f"{key}:{name}:cpu": float(by_cpu), f"{key}:{name}:wall": float(by_wall)}
    return values


def _leaf_sizes(rows: list[str]) -> dict[str, object]:
    """The leaf-size table (header and separator first): its part and each leaf size's four numbers."""
    values: dict[str, object] = {"part:leaf_sizes": "\n".join(rows)}
    for row in rows[2:]:
        leaf, sizes, closed, _, in_permutations, gain, _ = (cell.strip() for cell in row.strip("|").split("|"))
        values |= {f"leaf_{leaf}:rows": int(sizes.split("/")[0]), f"leaf_{leaf}:closed_s": float(closed),
                   f"leaf_{leaf}:in_permutations": float(in_permutations), f"leaf_{leaf}:gain": float(gain)}
    return values


def _key(title: str) -> str | None:
    """The key of the table under ``title``, None for a table the page does not quote."""
    for pattern, key in KEYS:
        match = pattern.match(title)
        if match:
            return key.format(*match.groups())
    return None


def main(argv: list[str]) -> None:
    buffer = Tee()
    sys.argv = [bench_variance.__file__, *argv]
    with contextlib.redirect_stdout(buffer):
        bench_variance.main()
    record(**tables(buffer.getvalue()))


if __name__ == "__main__":
    main(sys.argv[1:])
