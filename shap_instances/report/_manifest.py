"""The manifest of a report's folder: the files a report wrote, each with its size and SHA-256, the only ones a
later report replaces or removes, and only while they still match.

Kept apart from the HTML writer (which imports matplotlib) so that the command line checks ``--out`` cheaply.
"""

from __future__ import annotations

import json
import os
import re
import stat
from pathlib import Path
from typing import Any

from ..exceptions import OutputConflictError
from ..utils import file_digest, write_atomically

__all__ = ["MANIFEST", "MANIFEST_FORMAT", "read_manifest", "report_files", "write_manifest"]


#: The file, in a report's folder, that lists the files the report wrote (the only ones a later report replaces).
MANIFEST = ".shap-instances-report.json"
MANIFEST_FORMAT = "shap-instances report manifest 2"

#: The names of the files a report writes: its page, its figures and its tables (nothing else is ever removed).
_REPORT_NAME = re.compile(r"(?:index\.html|[A-Za-z0-9_][A-Za-z0-9_.-]*\.(?:png|csv))")


def read_manifest(folder: str | os.PathLike[str]) -> dict[str, list[dict[str, Any]]]:
    """The files the manifest of ``folder`` lists, each with the digests (size, SHA-256) it may match ({} when
    there is no manifest). A manifest of shap-instances 0.x before digests (a list of names) lists its files with
    no digest: none of them is proven the report's.

    Raises
    ------
    OutputConflictError
        A file that is not a report manifest (unreadable, not JSON, another format, a link): the folder is not
        taken for a report.
    """
    path = Path(folder) / MANIFEST
    if not os.path.lexists(path):
        return {}
    try:
        manifest = json.loads(path.read_text(encoding="utf-8")) if not path.is_symlink() else {}
        if manifest.get("format") not in (MANIFEST_FORMAT, _NAMES_ONLY):
            raise ValueError(f"format {manifest.get('format')!r}")
        files = manifest["files"]
        files = dict.fromkeys(files, []) if isinstance(files, list) else files
        return {str(name): [d for d in digests if _valid_digest(d)] for name, digests in files.items()
                if isinstance(digests, list)}
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as error:
        raise OutputConflictError(
            f"{path} is not a report manifest that shap-instances wrote ({type(error).__name__}); the folder is "
            "not taken for a report and nothing in it is changed: choose another --out, or delete that file"
        ) from None


#: The format of the manifests that listed names only (before sizes and digests were recorded).
_NAMES_ONLY = "shap-instances report manifest 1"


def _valid_digest(digest: Any) -> bool:
    """Whether a manifest's digest is {size: int, sha256: str}."""
    return (isinstance(digest, dict) and isinstance(digest.get("size"), int) and not isinstance(digest["size"], bool)
            and isinstance(digest.get("sha256"), str))


def report_files(folder: str | os.PathLike[str]) -> set[str]:
    """The files of ``folder`` that an earlier report wrote and that are still as it wrote them: listed in its
    manifest, regular files in the folder itself (not links), of the size and SHA-256 the manifest records.

    Only these are ever replaced or removed by a later report; a listed file changed since (or a link, or a name
    that is not a report file's) is kept.

    Raises
    ------
    OutputConflictError
        A manifest this version did not write (see :func:`read_manifest`).

    Examples
    --------
    >>> import tempfile
    >>> from shap_instances.report import report_files
    >>> report_files(tempfile.mkdtemp())
    set()
    """
    folder = Path(folder)
    return {name for name, digests in read_manifest(folder).items()
            if _REPORT_NAME.fullmatch(name) and _matches(folder / name, digests)}


def _matches(path: Path, digests: list[dict[str, Any]]) -> bool:
    """Whether ``path`` is a regular file (a link is not followed) of one of the listed sizes and SHA-256s."""
    try:
        info = os.lstat(path)
    except OSError:
        return False
    if not stat.S_ISREG(info.st_mode) or info.st_size not in {d["size"] for d in digests}:
        return False
    return file_digest(path) in [{"size": d["size"], "sha256": d["sha256"]} for d in digests]


def write_manifest(folder: Path, entries: dict[str, list[dict[str, Any]]]) -> None:
    """Write the manifest of ``folder`` (whole: a temporary file renamed into place)."""
    text = json.dumps({"format": MANIFEST_FORMAT, "files": entries}, indent=1, sort_keys=True)
    write_atomically(folder / MANIFEST, lambda temporary: Path(temporary).write_text(text, encoding="utf-8"))
