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


def build(tmp_path: Path, page: str, home: str = "# Home\n") -> subprocess.CompletedProcess:
    """Builds ``reproductions.md`` (a result page, :data:`hook.RESULT_PAGES`) and ``explainers/gap.md`` (any
    other page)."""
    docs = tmp_path / "docs"
    (docs / "explainers").mkdir(parents=True, exist_ok=True)
    (docs / "explainers" / "gap.md").write_text(home)
    (docs / "reproductions.md").write_text(page)
    (tmp_path / "mkdocs.yml").write_text(
        f"site_name: gate\ndocs_dir: docs\nhooks:\n  - {ROOT / 'docs' / 'hooks' / 'results.py'}\n"
        "nav:\n  - explainers/gap.md\n  - reproductions.md\n")
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
                                   "AUC 0.873", "11.44 [11.18, 11.72]", "Kendall 24/28", "about 57 minutes",
                                   "the tests cut the time to 12.5 s", "tests agree with shap to 0.25",
                                   "peaks at 1,786 MiB traced", "an index of 10.6 MB"])
def test_what_counts_as_a_typed_measured_figure(typed):
    assert hook.typed_figures(f"Planted: {typed}.") != []


def test_a_stale_or_missing_file_names_the_command_that_writes_it():
    assert hook.rerun("bench-report") == "python benchmarks/run_all.py report"
    assert hook.rerun("repro-residual_boston_forest") == "python benchmarks/run_all.py reproductions " \
                                                         "residual_boston_forest"
    assert hook.rerun("fig-variance_leaf_sizes") == "python benchmarks/run_all.py figures variance_leaf_sizes"


def test_a_verdicts_reason_keeps_its_table_cell():
    assert hook.in_a_cell("mean |composition| lower") == "mean \\|composition\\| lower"


def test_a_tables_header_is_read_too():
    assert hook.typed_figures("| time, 12.5 s | ours |\n|---|---|\n| a | b |\n") != []


@pytest.mark.parametrize("cell", ["80.8 rows", "72 of 331 rows", "affinity 2 to 36"])
@pytest.mark.parametrize("column", ["ours", "verdict"])
def test_in_the_ours_and_verdict_columns_any_decimal_count_or_range_is_measured(column, cell):
    table = f"| claim | paper | {column} |\n|---|---|---|\n| Fig. 2 | 12.5 of 20 | {cell} |\n"
    assert hook.typed_figures(table) != []
    assert hook.typed_figures(table.replace(cell, "see [the run](#run)")) == []  # the paper's column is its own


@pytest.mark.parametrize("setting", ["tolerance 1e-9", "noise 0.05", "C = 0.3", "`tol=1e-12`", "$10^{-6}$",
                                     "Fig. 12, p = 10", "shap 0.51", "{{ result:bench-x:y }}", "<!-- 12 s -->",
                                     "a cell of 1e300", "tested to 1e-12", "shap 0.46 to 0.51", "version 0.51.0",
                                     "arXiv:2301.01864", "a nominal 95%", "a 0/1 target", "above 24 hours",
                                     "the tests check it against refits to 1e-10", "alpha is raised to 1e-10",
                                     "chunks of 256 MiB", "peak <= 2 GiB", "a 19 GB file"])
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



def test_a_mean_claim_compares_the_mean_over_the_draws():
    """A rate over draws (the SISR poster's support recovery): each draw's 0 or 100 is far from 98.7, the mean
    is what the paper's number is compared with."""
    rate = Claim("support", "support", 98.7, "poster", kind="mean", tolerance=5).as_record()
    assert verdict([rate], {"support": [100] * 19 + [75]}).verdict == "reproduced in kind"  # 98.75: within
    assert verdict([{**rate, "protocol": True}], {"support": [100] * 19 + [75]}).verdict == "reproduced"
    assert verdict([{**rate, "protocol": True}], {"support": [100] * 4}).verdict == "reproduced in kind"  # 4 draws
    assert verdict([rate], {"support": [100] * 15 + [50] * 5}).verdict == "differs"  # 87.5: outside
    assert "mean of 20 draws" in verdict([rate], {"support": [100] * 20}).reason
    assert verdict([rate], {"support": [100] * 19 + [float("nan")]}).verdict == "differs"  # an undefined draw

def test_an_undefined_or_infinite_number_is_outside_every_tolerance():
    """A ratio of two z-scores can be 0 / 0 (NaN) or infinite; neither may pass as within the tolerance."""
    number = {**CLAIMS[1], "deterministic": False}
    assert verdict([number], {"count": [float("nan")] * 3}).verdict == "differs"
    assert verdict([number], {"count": [20.0, 20.0, float("nan")]}).verdict == "reproduced in kind"
    assert verdict([number], {"count": [float("inf")]}).verdict == "differs"


@pytest.mark.slow  # a site build: a few seconds on a loaded machine
def test_a_planted_typed_figure_on_any_page_fails_the_strict_build(tmp_path, monkeypatch):
    write(tmp_path, monkeypatch, speed="31x", fewer=[True] * 5, count=20)
    assert build(tmp_path, PAGE, home="# GAP\n\nThe forest explains its predictions.\n").returncode == 0
    result = build(tmp_path, PAGE, home="# GAP\n\nPlanted: built in 0.92 s.\n")
    assert result.returncode != 0
    assert "explainers/gap.md: a typed measured figure, 0.92 s" in result.stderr


@pytest.mark.slow  # site builds: a few seconds each on a loaded machine
def test_a_recorded_run_fails_on_every_page(tmp_path, monkeypatch):
    """Issue 42: ``{{ recorded:DATE }}`` once let a page outside the result pages keep figures typed by hand; the
    last such runs now have result files, and the mark fails the build wherever it stands, its figures too."""
    write(tmp_path, monkeypatch, speed="31x", fewer=[True] * 5, count=20)
    for page, home in ((PAGE + "\nBuilt in 0.92 s. {{ recorded:2026-11-20 }}\n", "# Home\n"),
                       (PAGE, "# GAP\n\nBuilt in 0.92 s on 2 cores. {{ recorded:2026-11-20 }}\n")):
        result = build(tmp_path, page, home=home)
        assert result.returncode != 0
        assert "{{ recorded:DATE }} is refused" in result.stderr and "a typed measured figure, 0.92 s" in result.stderr


def test_a_recorded_mark_hides_no_figure():
    page = "Measured on 2 cores: {{ recorded:2026-11-20 }}\n\n| model | time |\n|---|---|\n| forest | 0.92 s |\n"
    assert [figure.split()[:2] for figure in hook.typed_figures(page)] == [["0.92", "s"]]


def page_figures(path: Path, text: str | None = None) -> list[str]:
    """The typed measured figures of a page (or README) as the gate reads it."""
    return hook.typed_figures(hook.include_snippets(path.read_text() if text is None else text))


def test_the_published_pages_carry_no_typed_figure():
    """Every page, and README (which no hook renders: it quotes tolerances, links to the measured pages)."""
    pages = sorted((ROOT / "docs").rglob("*.md"))
    assert len(pages) > 20 and ROOT / "docs" / "explainers" / "gap.md" in pages
    for page in [*pages, ROOT / "README.md"]:
        assert page_figures(page) == [], page.relative_to(ROOT)


@pytest.mark.parametrize("planted", ["The report took 159 s.", "A 14x speed-up. {{ recorded:2026-11-20 }}"])
def test_a_typed_figure_planted_in_readme_is_found(planted):
    readme = ROOT / "README.md"
    assert page_figures(readme, readme.read_text() + f"\n{planted}\n") != []


def test_included_benchmark_tables_and_gated_pages_become_placeholders():
    """pymdownx.snippets would include the raw files after the hook ran, placeholders unrendered."""
    text = hook.include_snippets('--8<-- "docs/valuation_benchmark.md"\n\n  --8<-- "docs/benchmarks.md:gap-table"\n')
    assert "--8<--" not in text and "{{ part:bench-valuation:" in text  # the page's own placeholders, inlined
    assert "  {{ section:bench-gap:" in text or "  {{ part:bench-gap:table }}" in text


def test_a_scripts_output_renders_as_a_terminal_shows_it():
    block = hook.text_block("start\n\rbar  50%\rbar 100%\r        \nshown ```code```\n")
    assert block.startswith("````text\nstart\n") and "bar" not in block and block.endswith("shown ```code```\n````")


def test_a_part_is_read_from_the_runs_markdown_between_its_snippet_markers():
    result = {"name": "bench-report", "values": {}, "markdown": "intro\n\n<!-- --8<-- [start:report-table] -->\n"
              "| a |\n|---|\n| 1 |\n<!-- --8<-- [end:report-table] -->\nafter"}
    assert hook.part(result, "table") == "| a |\n|---|\n| 1 |"
    with pytest.raises(hook.ResultError, match="no snippet 'plans'"):
        hook.part(result, "plans")


def test_a_recorded_list_renders_one_value_per_seed():
    assert hook.shown([0.99270145, 1.0, 2]) == "0.992701, 1, 2" and hook.shown(0.5) == "0.5" and hook.shown("7") == "7"
