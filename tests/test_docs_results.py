"""The docs' figures come from result files: ``docs/hooks/results.py`` fails ``mkdocs build --strict`` on a typed
measured figure or a stale result file, and renders values, conditions and computed verdicts.

Each build test makes a two-page site in a temporary folder (no API pages, no theme's extras) against result files
written there by ``benchmarks/_common.write_result``, the one writer: a few seconds a build.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT / "docs" / "hooks"))

import results as hook  # noqa: E402 - docs/hooks is not a package
from _common import write_result  # noqa: E402
from _verdicts import Claim, verdict  # noqa: E402

pytest.importorskip("mkdocs", reason="the docs extra is not installed (bash scripts/setup.sh installs it)")

CLAIMS = [Claim("fewer", "the method finds fewer than the loss", "fewer", "Fig. 1").as_record(),
          Claim("count", "#Var", 20, "Table 1", kind="number", tolerance=1, deterministic=True).as_record()]


def write(tmp_path: Path, monkeypatch, **values) -> Path:
    """A full-mode result file ``repro-demo.json`` whose producing script is ``tmp_path/demo.py``."""
    script = tmp_path / "demo.py"
    if not script.exists():
        script.write_text("print('the demo reproduction')\n")
    monkeypatch.setattr("_common.RESULTS", tmp_path / "results")
    return write_result("repro-demo", scripts=[str(script)], command=["demo.py"], started=datetime.now(UTC),
                        load_start=(1.0, 1.0, 1.0), load_end=(2.0, 2.0, 2.0), wall_s=3.0, quick=False,
                        values=values, seeds="0-4", claims=CLAIMS, output=OUTPUT)


#: What a script printed: a fenced block and a heading of its own, which the page must show as text.
OUTPUT = "printed\n```text\ninner block\n```\n### printed heading\n"


def build(tmp_path: Path, page: str) -> subprocess.CompletedProcess:
    docs = tmp_path / "docs"
    docs.mkdir(exist_ok=True)
    (docs / "index.md").write_text("# Home\n")
    (docs / "reproductions.md").write_text(page)
    (tmp_path / "mkdocs.yml").write_text(
        f"site_name: gate\ndocs_dir: docs\nhooks:\n  - {ROOT / 'docs' / 'hooks' / 'results.py'}\n"
        "nav:\n  - index.md\n  - reproductions.md\n")
    environment = {**os.environ, "SHAP_INSTANCES_RESULTS": str(tmp_path / "results"), "NO_MKDOCS_2_WARNING": "1"}
    return subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
                          cwd=tmp_path, env=environment, capture_output=True, text=True, timeout=120)


PAGE = ("# Reproductions\n\n| claim | paper | ours | verdict |\n|---|---|---|---|\n"
        "| Fig. 1 | 0.25 faster | {{ result:repro-demo:speed }} | {{ verdict:repro-demo }} |\n\n"
        "{{ measured:repro-demo }}\n\n{{ output:repro-demo }}\n")


@pytest.mark.slow  # site builds: a few seconds each on a loaded machine
def test_a_page_rendered_from_a_current_result_file_builds(tmp_path, monkeypatch):
    write(tmp_path, monkeypatch, speed="31x [12, 63]", fewer=[False, False, True, False, False], count=20)
    result = build(tmp_path, PAGE)
    assert result.returncode == 0, result.stderr
    html = (tmp_path / "site" / "reproductions" / "index.html").read_text()
    assert "31x [12, 63]" in html
    assert "<strong>differs</strong>" in html and "holds in 1 of 5 seeds" in html
    assert "load average 1.00 / 1.00 / 1.00 at the start, 2.00 / 2.00 / 2.00 at the end, seeds 0-4" in html
    assert "### printed heading" in html and "<h3" not in html  # the output stays one text block


@pytest.mark.parametrize("typed", ["took 12.5 s", "a 14x speed-up", "recall 96%", "error 3.3e-16",
                                   "AUC 0.873", "11.44 [11.18, 11.72]", "Kendall 24/28", "about 57 minutes"])
def test_what_counts_as_a_typed_measured_figure(typed):
    assert hook.typed_figures(f"Planted: {typed}.") != []


def test_a_tables_header_is_read_too():
    assert hook.typed_figures("| time, 12.5 s | ours |\n|---|---|\n| a | b |\n") != []


@pytest.mark.parametrize("cell", ["80.8 rows", "72 of 331 rows", "affinity 2 to 36"])
@pytest.mark.parametrize("column", ["ours", "verdict"])
def test_in_the_ours_and_verdict_columns_any_decimal_count_or_range_is_measured(column, cell):
    table = f"| claim | paper | {column} |\n|---|---|---|\n| Fig. 2 | 12.5 of 20 | {cell} |\n"
    assert hook.typed_figures(table) != []
    assert hook.typed_figures(table.replace(cell, "see [the run](#run)")) == []  # the paper's column is its own


@pytest.mark.parametrize("setting", ["tolerance 1e-9", "noise 0.05", "C = 0.3", "`tol=1e-12`", "$10^{-6}$",
                                     "Fig. 12, p = 10", "shap 0.51", "{{ result:bench-x:y }}", "<!-- 12 s -->"])
def test_what_is_not_a_measured_figure(setting):
    assert hook.typed_figures(f"Stated: {setting}.") == []


@pytest.mark.slow  # a site build: a few seconds on a loaded machine
def test_a_planted_typed_figure_fails_the_strict_build(tmp_path, monkeypatch):
    write(tmp_path, monkeypatch, speed="31x", fewer=[True] * 5, count=20)
    result = build(tmp_path, PAGE + "\nPlanted: a 14x speed-up.\n")
    assert result.returncode != 0
    assert "a typed measured figure, 14x" in result.stderr


@pytest.mark.slow  # site builds: a few seconds each on a loaded machine
def test_a_typed_number_in_the_ours_column_fails_and_the_papers_column_is_free(tmp_path, monkeypatch):
    write(tmp_path, monkeypatch, speed="31x", fewer=[True] * 5, count=20)
    assert build(tmp_path, PAGE).returncode == 0  # the paper's "0.25 faster" is the paper's
    result = build(tmp_path, PAGE.replace("{{ result:repro-demo:speed }}", "80.8 rows"))
    assert result.returncode != 0 and "80.8" in result.stderr


@pytest.mark.slow  # site builds: a few seconds each on a loaded machine
def test_a_stale_result_file_fails_the_strict_build(tmp_path, monkeypatch):
    write(tmp_path, monkeypatch, speed="31x", fewer=[True] * 5, count=20)
    (tmp_path / "demo.py").write_text("print('the demo reproduction, changed')\n")  # the script changed since
    result = build(tmp_path, PAGE)
    assert result.returncode != 0 and "is stale" in result.stderr and "demo.py changed" in result.stderr


@pytest.mark.slow  # site builds: a few seconds each on a loaded machine
def test_a_quick_or_missing_result_fails_and_not_rerun_passes(tmp_path, monkeypatch):
    path = write(tmp_path, monkeypatch, speed="31x", fewer=[True] * 5, count=20)
    record = json.loads(path.read_text())
    path.write_text(json.dumps({**record, "mode": "quick"}))
    assert "--quick run" in build(tmp_path, PAGE).stderr
    path.unlink()
    assert "no result file" in build(tmp_path, PAGE).stderr
    not_rerun = "# Reproductions\n\n| claim | ours |\n|---|---|\n| Fig. 1 | {{ not_rerun:2026-11-20 }} |\n"
    result = build(tmp_path, not_rerun)
    assert result.returncode == 0, result.stderr


def test_verdicts_follow_the_written_rules():
    ordering, number = CLAIMS
    assert verdict([ordering], {"fewer": [True] * 5}).verdict == "reproduced in kind"  # not the paper's protocol
    assert verdict([{**ordering, "protocol": True}], {"fewer": [True] * 5}).verdict == "reproduced"
    assert verdict([{**ordering, "protocol": True}], {"fewer": [True] * 4}).verdict == "reproduced in kind"
    assert verdict([ordering], {"fewer": [True, True, False, False, False]}).verdict == "differs"
    assert verdict([ordering], {"fewer": [True, True, False, False]}).verdict == "differs"  # half is not a majority
    assert verdict([number], {"count": 21}).verdict == "reproduced in kind"  # on the tolerance's edge: within
    assert verdict([ordering], {}).verdict == "not run"
    assert verdict([{**number, "protocol": True}], {"count": 20}).verdict == "reproduced"
    assert verdict([number], {"count": 20}).verdict == "reproduced in kind"
    assert verdict([number], {"count": 13}).verdict == "differs"
    assert verdict(CLAIMS, {"fewer": [True] * 5, "count": 13}).verdict == "differs"  # the weakest claim


def test_the_published_pages_carry_no_typed_figure():
    """The gated pages, and README (which no hook renders: it quotes tolerances, links to the measured pages)."""
    for page in [*(ROOT / "docs" / name for name in hook.GATED), ROOT / "README.md"]:
        assert hook.typed_figures(hook.include_snippets(page.read_text())) == [], page.name


def test_included_benchmark_tables_and_gated_pages_become_placeholders():
    """pymdownx.snippets would include the raw files after the hook ran, placeholders unrendered."""
    text = hook.include_snippets('--8<-- "docs/valuation_benchmark.md"\n\n  --8<-- "docs/benchmarks.md:gap-table"\n')
    assert "--8<--" not in text and "{{ part:bench-valuation:" in text  # the page's own placeholders, inlined
    assert "  {{ section:bench-gap:" in text or "  {{ part:bench-gap:table }}" in text


def test_a_scripts_output_renders_as_a_terminal_shows_it():
    block = hook.text_block("start\n\rbar  50%\rbar 100%\r        \nshown ```code```\n")
    assert block.startswith("````text\nstart\n") and "bar" not in block and block.endswith("shown ```code```\n````")
