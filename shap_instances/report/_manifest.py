"""The manifest of a report's folder: the files a report wrote, the only ones a later report replaces.

Kept apart from the HTML writer (which imports matplotlib) so that the command line checks ``--out`` cheaply.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

__all__ = ["MANIFEST", "MANIFEST_FORMAT", "report_files"]


#: The file, in a report's folder, that lists the files the report wrote (the only ones a later report replaces).
MANIFEST = ".shap-instances-report.json"
MANIFEST_FORMAT = "shap-instances report manifest 1"


def report_files(folder: str | os.PathLike[str]) -> set[str]:
    """The files an earlier report wrote into ``folder``, from its manifest (empty when there is none).

    A manifest that cannot be read, or that names paths outside the folder, is refused with
    :class:`FileExistsError`: the folder is then not taken for a report.

    Examples
    --------
    >>> import tempfile
    >>> from shap_instances.report import report_files
    >>> report_files(tempfile.mkdtemp())
    set()
    """
    path = Path(folder) / MANIFEST
    if not path.is_file():
        return set()
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
        files = set(manifest["files"]) if manifest.get("format") == MANIFEST_FORMAT else None
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        files = None
    if files is None or not all(isinstance(f, str) and f and Path(f).name == f and f not in (".", "..")
                                for f in files):
        raise FileExistsError(f"{path} is not a manifest this version of shap-instances wrote; the folder is not "
                              "taken for a report: choose another --out")
    return files
