"""A self-contained HTML document: sections of text, tables and figures embedded as base64 PNG."""

from __future__ import annotations

import base64
import html
import io
import os
import shutil
import tempfile
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from ..exceptions import OutputConflictError, ShapInstancesWarning
from ..utils import FolderLock, check_output_folder, file_digest, spreadsheet_safe
from ._manifest import read_manifest, report_files, write_manifest

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["Report", "Section", "column_format"]

_STYLE = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 2rem auto; max-width: 1100px;
       color: #1d2330; line-height: 1.5; padding: 0 1rem; }
h1 { border-bottom: 3px solid #ff0d57; padding-bottom: .3rem; }
h2 { margin-top: 2.5rem; color: #1e88e5; }
figure { margin: 1rem 0; } figure img { max-width: 100%; border: 1px solid #e3e6ec; }
figcaption { font-size: .9rem; color: #5b6475; }
.table-wrap { max-width: 100%; overflow-x: auto; margin: 1rem 0; }
table { border-collapse: collapse; font-size: .85rem; font-variant-numeric: tabular-nums; }
th, td { border: 1px solid #d9dde5; padding: .25rem .5rem; text-align: right; }
td.text, th.text { text-align: left; }
th { background: #f3f5f9; } .note { color: #5b6475; font-size: .9rem; }
.comment { border-left: 3px solid #1e88e5; padding: .2rem .8rem; background: #f6f9fd; }
nav ul { columns: 2; }
"""


def column_format(values: Any) -> Callable[[Any], str]:
    """One number format for a whole table column, so its entries line up and read alike.

    Integers get thousands separators; other numbers a fixed number of decimals chosen from the column's typical
    (median) magnitude, about four significant digits; a column whose typical magnitude is below 1e-4 or whose
    largest is 1e7 or more is written in scientific notation throughout. Infinite values are written as "inf" and
    "-inf", missing values as an empty cell.

    Examples
    --------
    >>> from shap_instances.report._html import column_format
    >>> f = column_format([117700.0, 0.1762, 12.5])
    >>> [f(v) for v in (117700.0, 0.1762, float("inf"))]
    ['117,700.00', '0.18', 'inf']
    >>> [column_format([0.1762, 0.5])(v) for v in (0.1762, 0.5)]
    ['0.1762', '0.5000']
    """
    array = np.asarray(values, dtype=np.float64)
    finite = np.abs(array[np.isfinite(array)])
    if finite.size and np.all(finite == np.round(finite)) and finite.max() < 1e15:
        pattern = "{:,.0f}"
    elif finite.size == 0 or finite.max() == 0:
        pattern = "{:.4g}"
    else:
        typical = float(np.median(finite[finite > 0]))
        if typical < 1e-4 or finite.max() >= 1e7:
            pattern = "{:.3e}"
        else:
            decimals = int(np.clip(3 - np.floor(np.log10(typical)), 0, 6))
            pattern = "{:,.DECIMALSf}".replace("DECIMALS", str(decimals))

    def format_one(value: Any) -> str:
        if value is None or (isinstance(value, float) and np.isnan(value)):
            return ""
        if np.isinf(value):
            return "inf" if value > 0 else "-inf"
        return pattern.format(value)

    return format_one


@dataclass
class Section:
    """One section of the report: a title, paragraphs, tables and figures, in order."""

    title: str
    blocks: list[str] = field(default_factory=list)
    figures: dict[str, bytes] = field(default_factory=dict)

    @property
    def anchor(self) -> str:
        return "".join(ch if ch.isalnum() else "-" for ch in self.title.lower())

    def text(self, paragraph: str) -> None:
        """Add a paragraph (plain text, escaped)."""
        self.blocks.append(f"<p>{html.escape(paragraph)}</p>")

    def comment(self, paragraph: str) -> None:
        """Add a highlighted paragraph: what a figure or table shows that a reader might misread."""
        self.blocks.append(f"<p class='comment'>{html.escape(paragraph)}</p>")

    def table(self, frame: pd.DataFrame, *, caption: str = "", by_row: bool = False) -> None:
        """Add a table, each numeric column in one format (:func:`column_format`), text left-aligned, wrapped to
        the page width. ``by_row``: one format per row instead (a numeric table whose rows are on different
        scales, such as a summary of features)."""
        columns = _cells_by_row(frame) if by_row else _cells_by_column(frame)
        head = "".join(f"<th class='{kind}'>{html.escape(str(c))}</th>" for c, (kind, _) in zip(frame.columns, columns))
        body = "".join(
            f"<tr><th>{html.escape(str(name))}</th>"
            + "".join(f"<td class='{kind}'>{html.escape(cells[r])}</td>" for kind, cells in columns) + "</tr>"
            for r, name in enumerate(frame.index)
        )
        caption_html = f"<p class='note'>{html.escape(caption)}</p>" if caption else ""
        table = "<table class='by-row'>" if by_row else "<table>"
        self.blocks.append(f"<div class='table-wrap'>{table}<thead><tr><th></th>{head}</tr></thead>"
                           f"<tbody>{body}</tbody></table></div>{caption_html}")

    def figure(self, fig: Figure, name: str, caption: str) -> None:
        """Add a matplotlib figure (closed afterwards); it is embedded and also saved as ``name``.png."""
        buffer = io.BytesIO()
        fig.savefig(buffer, format="png", dpi=110, bbox_inches="tight")
        plt.close(fig)
        png = buffer.getvalue()
        self.figures[name] = png
        encoded = base64.b64encode(png).decode("ascii")
        self.blocks.append(
            f"<figure><img alt='{html.escape(caption)}' src='data:image/png;base64,{encoded}'>"
            f"<figcaption>{html.escape(caption)}</figcaption></figure>"
        )


def _cells_by_column(frame: pd.DataFrame) -> list[tuple[str, list[str]]]:
    """(kind, formatted cells) of each column of ``frame``: numbers in one format per column, the rest as text."""
    columns = []
    for column in frame.columns:
        series = frame[column]
        if pd.api.types.is_numeric_dtype(series) and not pd.api.types.is_bool_dtype(series):
            columns.append(("num", [column_format(series)(v) for v in series.to_numpy(dtype=np.float64)]))
        else:
            columns.append(("text", ["" if v is None else str(v) for v in series]))
    return columns


def _cells_by_row(frame: pd.DataFrame) -> list[tuple[str, list[str]]]:
    """(kind, formatted cells) of each column of the numeric ``frame``, in one format per row."""
    formats = [column_format(row) for row in frame.to_numpy(dtype=np.float64)]
    return [("num", [f(v) for f, v in zip(formats, frame[column].to_numpy(dtype=np.float64))])
            for column in frame.columns]


@dataclass
class Report:
    """An ordered list of sections rendered to one HTML file plus PNG files."""

    title: str
    intro: str = ""
    sections: list[Section] = field(default_factory=list)
    #: name -> table written beside the HTML as ``name.csv`` (the full tables behind the report's excerpts)
    tables: dict[str, pd.DataFrame] = field(default_factory=dict)

    def section(self, title: str) -> Section:
        """Start a new section and return it."""
        section = Section(title)
        self.sections.append(section)
        return section

    def to_html(self) -> str:
        """The whole document as a string."""
        toc = "".join(f"<li><a href='#{s.anchor}'>{html.escape(s.title)}</a></li>" for s in self.sections)
        body = "".join(
            f"<section id='{s.anchor}'><h2>{html.escape(s.title)}</h2>{''.join(s.blocks)}</section>"
            for s in self.sections
        )
        return (
            "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
            f"<title>{html.escape(self.title)}</title><style>{_STYLE}</style></head><body>"
            f"<h1>{html.escape(self.title)}</h1><p>{html.escape(self.intro)}</p>"
            f"<nav><ul>{toc}</ul></nav>{body}</body></html>"
        )

    def write(self, folder: str | os.PathLike[str]) -> Path:
        """Write ``index.html``, every figure as PNG and every table as CSV into ``folder``; return the HTML path.

        The folder's manifest (:data:`MANIFEST`) records each file the report wrote with its size and SHA-256. A
        later report replaces or removes only the files that still match it (regular files in the folder, not
        links); a listed file changed since is kept and named in a :class:`ShapInstancesWarning`, and a file the
        report would write that no earlier report provably wrote (a user's own ``index.html``) is refused with
        :class:`OutputConflictError` before anything changes. Everything is written into a temporary folder
        inside ``folder`` first (the same file system, also when ``folder`` is a link to another one) and moved
        into place file by file, each move atomic; the manifest accepts the old and the new content of each file
        while they move, so an interrupted run leaves files a rerun still recognises. The folder is locked
        (:class:`~shap_instances.utils.FolderLock`) while the report writes: a second report into it is refused.
        """
        created = not os.path.lexists(folder)
        folder = _report_folder(folder)
        try:
            with FolderLock(folder):  # one report (or explain_partitions) writing into the folder at a time
                listed, earlier = read_manifest(folder), report_files(folder)
                staging = Path(tempfile.mkdtemp(prefix=".shap-instances-staging-", dir=folder))
                try:
                    written = self._write_files(staging)
                    _replace_files(folder, staging, written, listed, earlier)
                finally:
                    shutil.rmtree(staging, ignore_errors=True)
        finally:
            if created and not any(folder.iterdir()):  # a failed first report leaves no empty folder
                folder.rmdir()
        kept = sorted(set(listed) - earlier - set(written))
        if kept:
            warnings.warn(f"{folder}: {len(kept)} file(s) listed in the report manifest cannot be proven the report's "
                          "(changed since, a link, missing, or not a report file's name) and were kept: "
                          f"{kept[:10]}",
                          ShapInstancesWarning, stacklevel=2)
        return folder / "index.html"

    def _write_files(self, staging: Path) -> dict[str, list[dict[str, Any]]]:
        """Every file of the report into ``staging``; each file's name and [digest] (size, SHA-256)."""
        for section in self.sections:
            for name, png in section.figures.items():
                (staging / f"{name}.png").write_bytes(png)
        (staging / "index.html").write_text(self.to_html(), encoding="utf-8")
        for name, table in self.tables.items():
            spreadsheet_safe(table).to_csv(staging / f"{name}.csv")
        return {path.name: [file_digest(path)] for path in sorted(staging.iterdir())}


def _replace_files(folder: Path, staging: Path, written: dict[str, list[dict[str, Any]]],
                   listed: dict[str, list[dict[str, Any]]], earlier: set[str]) -> None:
    """Move the staged files into ``folder`` and remove the earlier report's files this one does not write; the
    manifest accepts old and new content while the files move, and lists the new files alone at the end."""
    _refuse_foreign(folder, list(written), earlier)
    write_manifest(folder, {**{name: listed[name] for name in earlier},
                            **{name: [*listed.get(name, []), *digests] for name, digests in written.items()}})
    for name in written:  # replaced, never written through: a hard link to an input stays intact
        os.replace(staging / name, folder / name)
    for name in sorted(earlier - set(written)):  # the earlier report's files this one does not write
        (folder / name).unlink(missing_ok=True)
    write_manifest(folder, written)


def _report_folder(folder: Any) -> Path:
    """``folder``, created if missing; refused when it is ``""`` or something other than a folder is there (a
    file, a link to nothing)."""
    folder = check_output_folder(folder, name="out", owner="Report.write")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise OutputConflictError(f"the report's folder {folder} cannot be made ({error.strerror}); choose another "
                                  "--out") from None
    return folder


def _refuse_foreign(folder: Path, written: list[str], earlier: set[str]) -> None:
    """Refuse to replace a file in ``folder`` that the earlier report (its manifest) did not write."""
    foreign = [name for name in written if name not in earlier and os.path.lexists(folder / name)]
    if foreign:
        raise OutputConflictError(f"{folder} holds files a report would write but no earlier report wrote: "
                              f"{foreign[:10]}; they are not replaced: move them, or choose another --out")
