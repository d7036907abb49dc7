"""Where ``explain --explain FILE`` writes: a folder of Parquet parts, one CSV file, or a folder of ``.npy`` arrays,
staged and put in place only when every partition is written."""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any, cast

from ._tables import _numbered, _write_parquet

#: The arrays of an ``--out NAME.npy`` folder (``utils.memmap_explanation`` reopens it).
_NPY_FIELDS = ("values", "base_values")


def _earlier_output(out: Path, path: Path) -> bool:
    """Whether ``path``, in the folder ``out``, is a file an ``--explain`` run writes there (replaced by --force)."""
    from ..utils import MemmapWriter

    if path.name.startswith((MemmapWriter.STAGING, _staging_prefix(out))):  # left by a killed run
        return True
    if out.suffix == ".npy":  # names.json: written by versions before the completion marker
        return path.name in {MemmapWriter.MARKER, "names.json", *(f"{name}.npy" for name in _NPY_FIELDS)}
    return path.name.startswith("part-")


def _staging_prefix(out: Path) -> str:
    """The name's start of the staging file or folder of an ``--explain`` output ``out`` (a hidden name)."""
    return f".{out.name}.partial-"


class _PartWriter:
    """The sink of ``explain --explain``: the tables of the partitions, in order, each row numbered in the file;
    a ``.parquet`` output is a folder of parts ``part-00000.parquet``..., a ``.csv`` one file appended to, a
    ``.npy`` one a folder of arrays of every row (:data:`_NPY_FIELDS`, a :class:`~shap_instances.utils.MemmapWriter`).

    Everything is written into a staging file or folder (:attr:`target`) and put in place by :meth:`finish` only
    when every partition is written, so a failure (:meth:`discard`) leaves an earlier ``--out`` as it was."""

    def __init__(self, out: Path, force: bool) -> None:
        self.out, self.force, self.offset, self.lines = out, force, 0, 0
        self.arrays: Any = None
        self.staging: Path | None = None
        if out.suffix == ".parquet":  # inside an earlier output folder (its file system); hidden from readers
            out.parent.mkdir(parents=True, exist_ok=True)
            self.staging = Path(tempfile.mkdtemp(prefix=_staging_prefix(out), dir=out if out.is_dir() else
                                                 out.parent))
        elif out.suffix == ".csv":
            handle, name = tempfile.mkstemp(prefix=_staging_prefix(out), suffix=".csv", dir=out.parent)
            os.close(handle)
            self.staging = Path(name)

    @property
    def target(self) -> Path:
        """Where the parts are written: the staging file or folder (the arrays' staging folder for ``.npy``)."""
        return self.arrays.staging if self.arrays is not None else cast(Path, self.staging)

    def finish(self) -> None:
        """Put what was written in place of ``--out`` (an earlier output's parts replaced, nothing else)."""
        if self.arrays is not None:
            self.arrays.explanation()
            return
        staging = self.target
        if self.out.suffix == ".parquet" and self.out.is_dir():
            for old in self.out.glob("part-*.parquet"):
                old.unlink()
            for new in staging.iterdir():
                os.replace(new, self.out / new.name)
            staging.rmdir()
        else:
            os.replace(staging, self.out)
        self.staging = None

    def discard(self) -> None:
        """Remove what this run wrote (after a failure); an earlier ``--out`` is left as it was."""
        if self.arrays is not None:
            self.arrays.close()
        if self.staging is not None and self.staging.is_dir():
            shutil.rmtree(self.staging, ignore_errors=True)
        elif self.staging is not None:
            self.staging.unlink(missing_ok=True)

    @property
    def folder(self) -> bool:
        """Whether the output is a folder (of Parquet parts, or of ``.npy`` arrays)."""
        return self.out.suffix in (".parquet", ".npy")

    def allocate(self, like, n_rows: int) -> None:
        """``.npy``: the arrays of ``n_rows`` rows, shaped as the Explanation ``like``'s, refused before any work
        when the disk cannot hold them (a memory map written past a full disk kills the process)."""
        from ..utils import MemmapWriter

        self.arrays = MemmapWriter(self.out, n_rows, fields=_NPY_FIELDS, overwrite=self.force)  # checked, locked
        row_bytes = sum(getattr(like, name)[:1].nbytes for name in _NPY_FIELDS)
        free = shutil.disk_usage(self.out).free
        if row_bytes * n_rows > free:
            raise ValueError(f"--out {self.out}: the values of {n_rows:,} rows take {row_bytes * n_rows / 2**30:,.1f} "
                             f"GiB, more than the {free / 2**30:,.1f} GiB free on its disk")
        print(f"shap-instances: plan: --out {self.out.name}: {n_rows:,} rows of {like.values[0].size:,} values, "
              f"{row_bytes * n_rows / 2**30:,.2f} GiB of the {free / 2**30:,.1f} GiB free on its disk", file=sys.stderr)
        self.arrays.allocate(like)

    def __call__(self, i: int, table) -> int:
        if isinstance(table, int):  # written by the worker
            if self.arrays is not None:  # counted: the arrays are put in place only when every row is written
                self.arrays(i, table)
            self.lines += table
            return table
        if self.arrays is not None:  # one part of the .npy arrays, written here in order
            self.arrays(i, table)
            self.lines += len(table.values)
            return len(table.values)
        rows = int(table["row"].max()) + 1 if "row" in table.columns and len(table) else len(table)
        table = _numbered(table, self.offset)
        if self.out.suffix == ".parquet":
            _write_parquet(table, self.target / f"part-{i:05d}.parquet")
        else:
            from ..utils import spreadsheet_safe

            spreadsheet_safe(table).to_csv(self.target, mode="a", header=i == 0, index=False)
        self.offset += rows
        self.lines += len(table)
        return len(table)
