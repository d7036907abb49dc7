"""Every ```python block of the README and docs/ runs as written (the blocks of one page share a namespace).

A block that is an excerpt of a larger file (it cannot run alone) starts with the line ``# excerpt``.
"""

import re
from pathlib import Path

import matplotlib
import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)


def _runnable_blocks(page: Path) -> list[str]:
    return [block for block in BLOCK.findall(page.read_text()) if not block.startswith("# excerpt")]


pytestmark = pytest.mark.slow  # about 30 s: run by the slow CI step

PAGES_WITH_CODE = [page for page in PAGES if _runnable_blocks(page)]


@pytest.mark.parametrize("page", PAGES_WITH_CODE, ids=[str(p.relative_to(ROOT)) for p in PAGES_WITH_CODE])
def test_page_snippets_run(page, monkeypatch, tmp_path):
    matplotlib.use("Agg")
    if any("import torch" in block for block in _runnable_blocks(page)):
        pytest.importorskip("torch")  # the torch extra's examples (its tests skip the same way without it)
    monkeypatch.chdir(tmp_path)  # snippets that write files write them here
    namespace: dict = {"__name__": "__docs__"}
    for number, block in enumerate(_runnable_blocks(page), start=1):
        try:
            exec(compile(block, f"{page.name}[block {number}]", "exec"), namespace)  # noqa: S102 - our own docs
        except Exception as exc:
            raise AssertionError(f"{page.relative_to(ROOT)}, python block {number} fails: {type(exc).__name__}: "
                                 f"{exc}\n{block}") from exc
    import matplotlib.pyplot as plt

    plt.close("all")
