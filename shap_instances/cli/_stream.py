"""``explain --explain FILE``: every row of a Parquet or CSV file, read, explained and written partition by
partition (here, or on a dask cluster), its options refused before any model is fitted."""

from __future__ import annotations

import importlib.util
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ._budget import _PartitionBudget
from ._inputs import _same_file
from ._parts import _part_table, _part_values, _read_row_group, _RowGroup
from ._sink import _earlier_output, _PartWriter


def _check_stream_options(args, out: Path) -> None:
    """Refuse ``--explain`` options that cannot work, before any model is fitted."""
    _check_stream_source(Path(args.explain), out)
    _check_stream_out(args, out)


def _check_stream_source(source: Path, out: Path) -> None:
    """Refuse an ``--explain`` file that is not Parquet or CSV, does not exist, is ``--out``, or without dask."""
    if source.suffix not in (".parquet", ".csv"):
        raise ValueError(f"--explain must be a .parquet or .csv file, got {source.name}")
    if not source.exists():
        raise ValueError(f"--explain {source}: no such file")
    if importlib.util.find_spec("dask") is None:
        raise ValueError("--explain reads its file partition by partition with dask: "
                         "pip install 'shap-instances[dask]'")
    if source.resolve() == out.resolve() or _same_file(source, out):
        raise ValueError(f"--out {out} is the --explain file (or a link to it); choose another path")


def _check_stream_out(args, out: Path) -> None:
    """Refuse an ``--explain`` output of the wrong kind (a file for a folder, long values in ``.npy``) or a folder
    that holds files other than an earlier run's."""
    if out.suffix == ".npy" and (args.format == "long" or args.top_k is not None):
        raise ValueError("--out NAME.npy holds the values array of every row (wide); --format long and --top-k "
                         "write .parquet or .csv")
    if os.path.lexists(out) and (out.is_dir() != (out.suffix != ".csv") or not out.exists()):
        kind = "a file" if out.suffix == ".csv" else "a folder"
        raise ValueError(f"--out {out} is not {kind} (a {out.suffix} output of --explain is {kind}; a broken link is "
                         "neither); it is not replaced: choose another path")
    if out.is_dir() and args.force and any(not _earlier_output(out, p) for p in out.iterdir()):
        raise ValueError(f"--out {out} is a folder that holds files other than those of an earlier --explain "
                         "run; choose another folder")


def _check_explain_columns(path: Path, columns: list[str]) -> None:
    """Refuse, before a model is fitted and before anything is written, an ``--explain`` file whose header cannot
    be read (not CSV, not Parquet, damaged) or that lacks columns of ``--data``."""
    try:
        if path.suffix == ".parquet":
            import pyarrow.parquet as pq

            names = [str(name) for name in pq.ParquetFile(path).schema_arrow.names]
        else:
            import pandas as pd

            names = [str(name) for name in pd.read_csv(path, nrows=0).columns]
    except (OSError, ValueError) as error:  # pandas' ParserError and pyarrow's ArrowInvalid are ValueErrors
        raise ValueError(f"--explain {path} cannot be read as {path.suffix[1:]} ({type(error).__name__}: "
                         f"{str(error)[:200]}); nothing was written: pass a {path.suffix[1:]} file with the columns "
                         "of --data") from None
    missing = [column for column in columns if column not in names]
    if missing:
        raise ValueError(f"--explain {path} lacks the columns {missing[:10]} of --data; nothing was written: add "
                         "them, or explain a file with the columns of --data")


def _explain_file(args, explainer, encoder, first, columns: list[str], target: str) -> int:
    """``explain --explain FILE``: every row of FILE, explained and written partition by partition (``first``:
    the first row of --data with its target, whose values give the shape of a ``.npy`` output)."""
    frame, offsets = _read_partitions(Path(args.explain), args.block_size)
    n_rows = offsets[-1] if isinstance(offsets, list) else offsets
    takes_y = getattr(explainer, "call_y", "none") != "none" and target in frame.columns
    frame = frame[[*columns, target] if takes_y else columns]
    options: dict[str, Any] = {"encoder": encoder, "columns": columns, "target": target if takes_y else None}
    npy = Path(args.out).suffix == ".npy"
    top_k = None if npy else _chosen_top_k(args, explainer, n_rows)
    sink = _PartWriter(Path(args.out), args.force)
    try:
        _explain_into(args, explainer, sink, frame, offsets, first, options, top_k)
        sink.finish()
    except BaseException:  # no half-written output that reads as a result (a .npy's unwritten rows are zeros)
        sink.discard()
        raise
    shape = "npy" if npy else "top " + str(top_k) if top_k else args.format
    print(f"{type(explainer).__name__}: {n_rows} rows -> {args.out} ({shape}, {sink.lines} lines)")
    return 0


def _explain_into(args, explainer, sink, frame, offsets, first, options: dict[str, Any], top_k: int | None) -> None:
    """The partitions of ``frame`` explained and written to ``sink`` (:func:`_explain_file`)."""
    import functools

    import numpy as np

    from ..utils import explain_partitions

    n_rows = offsets[-1] if isinstance(offsets, list) else offsets
    npy = Path(args.out).suffix == ".npy"
    if npy:  # the files at their final size, from the values of a row of --data (no partition of FILE read for it)
        sink.allocate(_part_values(explainer, first[frame.columns], **options), n_rows)
    # Parquet row groups into Parquet parts or the .npy files: each worker writes its own (first rows known)
    here = not (isinstance(offsets, list) and len(offsets) == frame.npartitions + 1 and sink.folder)
    written: dict[str, Any] = {"out": None if here else str(sink.target.resolve()),
                               "offsets": None if here else offsets}
    call: Callable[..., Any] = (functools.partial(_part_values, **options, **written) if npy else
            functools.partial(_part_table, **options, long=args.format == "long", top_k=top_k, **written))
    if not here:  # each worker reads its own row groups (the next slice read while one is explained)
        read = list(frame.columns)
        frame = np.array([_RowGroup(str(Path(args.explain).resolve()), i, read) for i in range(len(offsets) - 1)],
                         dtype=object)
    if args.time_budget is not None:  # each partition gets its share; none starts that cannot end in time
        n_parts = frame.npartitions if here else len(frame)
        call = _PartitionBudget(call, args, explainer, n_parts)
    explain_partitions(explainer, frame, scheduler=args.scheduler, call=call, sink=sink, numbered=not here,
                       rows_per_part=1 if not here else None)


def _read_partitions(path: Path, block_size: int):
    """(dask DataFrame of ``path``, the first row of each row group and the number of rows (Parquet), or the
    number of rows (CSV)): a partition per Parquet row group, or per CSV block."""
    import dask.dataframe as dd
    import numpy as np

    if path.suffix == ".parquet":
        import pyarrow.parquet as pq
        from dask import delayed

        parquet = pq.ParquetFile(path)
        sizes = [parquet.metadata.row_group(i).num_rows for i in range(parquet.metadata.num_row_groups)]
        # each row group read by pyarrow itself: dask's read_parquet took three times as long for the same rows
        parts = [delayed(_read_row_group)(str(path), i) for i in range(len(sizes))]
        meta = parquet.schema_arrow.empty_table().to_pandas()
        return dd.from_delayed(parts, meta=meta, verify_meta=False), np.cumsum([0, *sizes]).tolist()
    from ..utils import scan_text_file

    n_lines, ends_with_newline = scan_text_file(path, "--explain")  # less the header; a last line without one too
    return dd.read_csv(path, blocksize=block_size), n_lines - 1 + (not ends_with_newline)


def _chosen_top_k(args, explainer, n_rows: int) -> int | None:
    """``--top-k``, or 10 for an instance explainer whose values of all rows would exceed ``--max-memory``."""
    from ..utils import available_memory_bytes

    if args.top_k is not None or getattr(explainer, "players", "") != "instances":
        return args.top_k
    players = len(getattr(explainer, "train_names_", None) or [])
    outputs = max(1, len(getattr(explainer, "output_names_", None) or []))
    needed = 8.0 * n_rows * players * outputs
    budget = args.max_memory * 2**30 if args.max_memory is not None else available_memory_bytes() / 2
    if needed <= budget:
        return None
    print(f"shap-instances: the values of {n_rows} rows x {players} training rows would take {needed / 2**20:,.0f} "
          f"MiB, more than --max-memory ({budget / 2**20:,.0f} MiB): writing each row's 10 largest (--top-k 10; "
          "pass --top-k K or a larger --max-memory to choose)", file=sys.stderr)
    return 10
