"""A self-contained HTML document: sections of text, tables and figures embedded as base64 PNG."""

from __future__ import annotations

import base64
import html
import io
import os
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd

__all__ = ["Report", "Section"]

_STYLE = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 2rem auto; max-width: 1100px;
       color: #1d2330; line-height: 1.5; padding: 0 1rem; }
h1 { border-bottom: 3px solid #ff0d57; padding-bottom: .3rem; }
h2 { margin-top: 2.5rem; color: #1e88e5; }
figure { margin: 1rem 0; } figure img { max-width: 100%; border: 1px solid #e3e6ec; }
figcaption { font-size: .9rem; color: #5b6475; }
table { border-collapse: collapse; font-size: .85rem; margin: 1rem 0; }
th, td { border: 1px solid #d9dde5; padding: .25rem .5rem; text-align: right; }
th { background: #f3f5f9; } .note { color: #5b6475; font-size: .9rem; }
nav ul { columns: 2; }
"""


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

    def table(self, frame: pd.DataFrame, *, caption: str = "", float_format: str = "{:.4g}") -> None:
        """Add a table."""
        rendered = frame.to_html(float_format=lambda v: float_format.format(v), border=0, escape=True)
        caption_html = f"<p class='note'>{html.escape(caption)}</p>" if caption else ""
        self.blocks.append(rendered + caption_html)

    def figure(self, fig, name: str, caption: str) -> None:
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

    def write(self, folder) -> Path:
        """Write ``index.html``, every figure as PNG and every table as CSV into ``folder``; return the HTML path.

        Everything is written into a temporary folder beside ``folder`` and renamed into place at the end, so
        an interrupted run leaves no half report (and an earlier report stays whole until then).
        """
        folder = Path(folder)
        folder.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", dir=folder.parent))
        try:
            for section in self.sections:
                for name, png in section.figures.items():
                    (staging / f"{name}.png").write_bytes(png)
            (staging / "index.html").write_text(self.to_html(), encoding="utf-8")
            for name, table in self.tables.items():
                table.to_csv(staging / f"{name}.csv")
            if folder.exists():  # an earlier report (the command line checked): replaced only once this one is whole
                shutil.rmtree(folder)
            os.replace(staging, folder)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
        return folder / "index.html"
