"""The tables ``explain`` writes: wide (a column per player) or long (a line per value), their size checked before
the work, and Parquet written while the next table is computed."""

from __future__ import annotations

import contextlib
from pathlib import Path

#: The widest table ``explain`` writes (spreadsheets open 16,384 columns; pandas slows to a crawl beyond this).
_MAX_WIDE_COLUMNS = 100_000


#: Bytes of one value in a written table: a float64 in full in a CSV cell (25), a long line with its row and
#: player (40), or in Parquet (8, 16 long).
_BYTES_PER_VALUE = {(".csv", False): 25, (".csv", True): 40, (".parquet", False): 8, (".parquet", True): 16}


def _check_output_size(args, out: Path, n_rows: int, n_values: int) -> None:
    """Refuse an ``explain`` output that would be absurdly wide or large, before the work (``n_values`` a lower
    bound: the players) or before writing (exact): a wide table above :data:`_MAX_WIDE_COLUMNS` columns, a table
    larger than the free disk or than the memory budget (``--max-memory``) that builds it; the message names the
    options that make it small."""
    from ..exceptions import InvalidParameterError
    from ..utils import check_disk, check_memory

    long = args.format == "long" or args.top_k is not None
    smaller = ("--top-k K (each row's K largest values, one line each), fewer --rows, or --explain FILE with "
               "--out NAME.npy (memory-mapped arrays)")
    if not long and n_values + 1 > _MAX_WIDE_COLUMNS:
        raise InvalidParameterError(
            f"--out {out.name}: a wide table of {n_values + 1:,} columns (a base value and {n_values:,} values a row) "
            f"is refused: above {_MAX_WIDE_COLUMNS:,} columns spreadsheets and most readers cannot use it; "
            f"pass {smaller}, or --format long (one line per value)")
    kept = n_values if args.top_k is None else min(args.top_k, n_values)
    if out.suffix not in (".csv", ".parquet"):
        return
    what = f"--out {out.name}: {n_rows:,} rows x {kept:,} values"
    check_disk(n_rows * kept * _BYTES_PER_VALUE[out.suffix, long], out.parent, what, instead=f"Pass {smaller}.")
    budget = None if args.max_memory is None else args.max_memory * 2**30
    check_memory(3 * 8.0 * n_rows * kept, what + " (the table and its copies while it is built and written)",
                 max_memory=budget, instead=f"Pass {smaller}, or a larger --max-memory.")


def _wide_table(explanation, index):
    """An Explanation as a table: base value column(s), then one column per player (per player and output)."""
    import numpy as np
    import pandas as pd

    values = np.asarray(explanation.values)
    columns = list(explanation.feature_names)
    base_columns = ["base_value"]
    if values.ndim == 3:  # one column per (player, output) and one base value per output
        outputs = explanation.output_names
        outputs = [str(o) for o in outputs] if outputs is not None else [str(k) for k in range(values.shape[2])]
        columns = [f"{c}|{o}" for c in columns for o in outputs]
        base_columns = [f"base_value|{o}" for o in outputs]
        values = values.reshape(values.shape[0], -1)
    base = np.asarray(explanation.base_values, dtype=np.float64).reshape(-1, len(base_columns))
    base = np.broadcast_to(base, (len(values), len(base_columns)))
    # one block (base values, then values) in column order: no concatenation of frames, one copy
    return pd.DataFrame(np.asfortranarray(np.hstack([base, values])), index=index, columns=base_columns + columns)


def _long_table(explanation, top_k: int | None):
    """One line per value: row, player, (output,) value; ``top_k``: the row's largest in absolute value only;
    the base values are the lines of player ``base_value``."""
    import numpy as np
    import pandas as pd

    values = np.asarray(explanation.values)
    values = values[:, :, None] if values.ndim == 2 else values
    n, m, d = values.shape
    values = values.transpose(0, 2, 1)  # (row, output, player)
    if top_k is not None and top_k < m:
        players = np.sort(np.argpartition(-np.abs(values), top_k - 1, axis=2)[:, :, :top_k], axis=2)
    else:
        players = np.broadcast_to(np.arange(m), (n, d, m))
    kept = np.take_along_axis(values, players, axis=2)
    names = pd.Categorical(["base_value", *map(str, explanation.feature_names)])
    base = np.asarray(explanation.base_values, dtype=np.float64).reshape(n, d)
    table = pd.DataFrame({
        "row": np.repeat(np.arange(n), d * (players.shape[2] + 1)),
        "player": names.take(np.concatenate([np.full((n, d, 1), -1), players], axis=2).ravel() + 1),
        "output": np.repeat(np.tile(np.arange(d), n), players.shape[2] + 1),
        "value": np.concatenate([base[:, :, None], kept], axis=2).ravel(),
    })
    if d == 1:
        return table.drop(columns="output")
    outputs = explanation.output_names
    table["output"] = pd.Categorical.from_codes(table["output"], [str(o) for o in outputs])
    return table


def _numbered(table, offset: int):
    """A part's table with the column ``row`` (first) counted from ``offset``, the partition's first row in the file."""
    import numpy as np
    import pandas as pd

    if "row" in table.columns:
        return table.assign(row=table["row"] + offset)
    numbered = table.set_axis(pd.RangeIndex(len(table)))  # no copy of the values (a new block for the numbers)
    numbered.insert(0, "row", np.asarray(table.index) + offset)
    return numbered


def _parquet_options(table) -> dict:
    """Options of pyarrow's Parquet writer for a table of values: no dictionary encoding but for the categorical
    columns (trying one on every float column, then giving it up, was most of the writing time), no compression
    (values hardly compress: 10% smaller, twice the time)."""
    categorical = [str(c) for c, dtype in table.dtypes.items() if dtype == "category"]
    return {"use_dictionary": categorical or False, "compression": "none"}


def _write_parquet(table, path: Path) -> None:
    """``table`` (pandas) written to the Parquet file ``path`` with :func:`_parquet_options`, without its index."""
    table.to_parquet(path, index=False, **_parquet_options(table))


def _write_overlapped(tables, path: Path) -> int:
    """Write the pandas tables of an iterator as row groups of one Parquet file, a thread writing each while the
    iterator computes the next; the number of lines written."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    with contextlib.ExitStack() as stack:
        writers: list = []

        def write(table) -> int:  # in the thread, one table at a time: the file opened with the first's schema
            arrow = pa.Table.from_pandas(table, preserve_index=False)
            if not writers:
                writers.append(stack.enter_context(pq.ParquetWriter(path, arrow.schema, **_parquet_options(table))))
            writers[0].write_table(arrow)
            return len(table)

        return _overlapped(tables, write)


def _overlapped(items, write) -> int:
    """``write(item)`` for each item of an iterator, in a thread while the iterator computes the next item; the
    sum of what ``write`` returned."""
    from concurrent.futures import ThreadPoolExecutor

    total, pending = 0, None
    with ThreadPoolExecutor(1) as pool:
        for item in items:
            if pending is not None:
                total += pending.result()
            pending = pool.submit(write, item)
        if pending is not None:
            total += pending.result()
    return total
