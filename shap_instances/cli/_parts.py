"""One partition of ``explain --explain FILE``, explained where it runs (here or on a dask worker): its rows read
slice by slice, each slice's values computed while a thread writes the one before."""

from __future__ import annotations

from pathlib import Path

from ..exceptions import ShapInstancesError
from ._tables import _long_table, _numbered, _overlapped, _wide_table, _write_overlapped


def _read_row_group(path: str, i: int):
    """Row group ``i`` of the Parquet file ``path``, as a pandas DataFrame (one partition of ``--explain``)."""
    import pyarrow.parquet as pq

    return pq.ParquetFile(path).read_row_group(i).to_pandas()


class _RowGroup:
    """Row group ``index`` of the Parquet file ``path`` (its ``columns``), read where it is explained: by
    :func:`_slices`, slice by slice, each slice read by a thread while the one before is explained."""

    def __init__(self, path: str, index: int, columns: list[str]) -> None:
        self.path, self.index, self.columns = path, index, columns

    def slices(self):
        """(first row, rows) of the :data:`_WRITE_SLICES` slices, as pandas tables numbered from 0."""
        import pyarrow.parquet as pq

        parquet = pq.ParquetFile(self.path)
        step = max(1, -(-parquet.metadata.row_group(self.index).num_rows // _WRITE_SLICES))
        batches = parquet.iter_batches(step, row_groups=[self.index], columns=self.columns, use_threads=False)
        start = 0
        for batch in _prefetched(batch.to_pandas() for batch in batches):
            yield start, batch
            start += len(batch)


def _prefetched(items):
    """The items of an iterator, the next one computed by a thread while the caller works on the current."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(1) as pool:
        pending = pool.submit(next, items, None)
        while (item := pending.result()) is not None:
            pending = pool.submit(next, items, None)
            yield item


#: Slices a worker's partition is explained and written in (the writing of one overlaps the next's explanation).
_WRITE_SLICES = 4


def _part_table(explainer, part, *, encoder, columns: list[str], target: str | None, long: bool,
                top_k: int | None, out: str | None = None, offsets: list[int] | None = None, index: int = 0):
    """The table of one partition's values (run on a worker), its rows numbered from 0 within the partition; or,
    given ``out``, that table numbered from the partition's first row in the file and written to ``out`` as part
    ``index`` (the number of lines written is returned), by slices: a thread writes one slice while the next is
    explained (the rows are independent, so the values are those of one call on the whole partition)."""
    part = _one_part(part)
    options = {"encoder": encoder, "columns": columns, "target": target, "long": long, "top_k": top_k}
    if out is None or offsets is None:
        return _slice_table(explainer, part, **options)
    tables = (_numbered(_slice_table(explainer, rows, **options), offsets[index] + start)
              for start, rows in _slices(part))
    return _write_overlapped(tables, Path(out) / f"part-{index:05d}.parquet")


def _one_part(part):
    """A partition of ``explain --explain``: a table numbered from 0, or the :class:`_RowGroup` that an array of
    one holds."""
    if isinstance(part, _RowGroup):
        return part
    if not hasattr(part, "reset_index"):  # an array of one _RowGroup (a dask partition of the row groups)
        return part[0]
    return part.reset_index(drop=True)


def _slices(part):
    """(first row, rows) of the :data:`_WRITE_SLICES` slices of the table ``part`` (or of a :class:`_RowGroup`),
    each numbered from 0."""
    if isinstance(part, _RowGroup):
        yield from part.slices()
        return
    step = max(1, -(-len(part) // _WRITE_SLICES))
    for start in range(0, max(len(part), 1), step):
        yield start, part.iloc[start:start + step].reset_index(drop=True)


def _slice_table(explainer, part, *, encoder, columns: list[str], target: str | None, long: bool,
                 top_k: int | None):
    """The values of the rows ``part`` as a wide or long table, rows numbered from 0."""
    explanation = _part_explanation(explainer, part, encoder=encoder, columns=columns, target=target)
    return (_long_table(explanation, top_k) if top_k is not None or long else
            _wide_table(explanation, part.index))


def _part_explanation(explainer, part, *, encoder, columns: list[str], target: str | None):
    """The Explanation of the rows ``part`` (a table of the --explain file's columns), encoded as --data was."""
    try:
        X = part[columns] if encoder is None else encoder(part[columns])
        return explainer(X) if target is None else explainer(X, part[target])
    except ShapInstancesError as error:
        missing = [str(column) for column in columns if part[column].isna().any()]
        if not missing:
            raise
        raise type(error)(f"--explain: missing values in column(s) {', '.join(missing[:10])}, which the model does "
                          "not take (--dropna drops rows of --data only); impute them in the file first, or explain "
                          f"with a model that takes them (--explainer gap, say: its forest does). ({error})") from error


def _part_values(explainer, part, *, encoder, columns: list[str], target: str | None, out: str | None = None,
                 offsets: list[int] | None = None, index: int = 0):
    """``--out NAME.npy``: the values and base values of one partition (run on a worker), or, given ``out``,
    those written in place into the folder's files from the partition's first row in the file (the number of
    rows written is returned), by slices, as :func:`_part_table` writes Parquet parts."""
    from ..utils import write_memmap_rows

    options = {"encoder": encoder, "columns": columns, "target": target}
    part = _one_part(part)
    if out is None or offsets is None:
        return _values_only(_part_explanation(explainer, part, **options))
    slices = ((offsets[index] + start, _values_only(_part_explanation(explainer, rows, **options)))
              for start, rows in _slices(part))
    return _overlapped(slices, lambda item: write_memmap_rows(out, *item))


def _values_only(explanation):
    """The values and base values of an Explanation (its names kept): what ``--out NAME.npy`` holds."""
    import shap

    return shap.Explanation(explanation.values, base_values=explanation.base_values,
                            feature_names=explanation.feature_names, output_names=explanation.output_names)
