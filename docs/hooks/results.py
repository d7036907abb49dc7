"""mkdocs hook: every measured figure of the benchmark and reproduction pages comes from a result file.

Result files are ``benchmarks/results/NAME.json``, written by ``benchmarks/_common.write_result`` (through
``python benchmarks/run_all.py [NAME ...]`` and ``python benchmarks/run_all.py reproductions [NAME ...]``). Pages
name them in placeholders, which this hook replaces at build time:

* ``{{ result:FILE:KEY }}``: one recorded value (``values[KEY]`` of ``FILE.json``);
* ``{{ part:FILE:PART }}`` and ``{{ section:FILE[:DATE] }}``: a table a script printed (``Bench.print(part=)``),
  or the whole markdown of a benchmark's run;
* ``{{ output:FILE }}``: what the script printed, as a text block;
* ``{{ measured:FILE }}``: the run's conditions (date, git commit, command, wall time, cores, load, seeds);
* ``{{ verdict:FILE[:PREFIX] }}``: the verdict that ``benchmarks/_verdicts.verdict`` derives from the claims
  the file carries (the paper's numbers with their source, the tolerance, the seeds) and the recorded values;
* ``{{ not_rerun:DATE }}``: a row whose figures have no result file yet (``DATE``: when they were last run); it
  shows no figure.

``{{ recorded:DATE }}``, which once let a page outside the result pages keep figures typed by hand from a run that
wrote no result file, is refused on every page: the last of those runs were rerun with result files (issue 42).

A snippet line ``--8<-- "docs/benchmarks.md:NAME[-PART]"`` on any page becomes the ``section`` or ``part``
placeholder of ``bench-NAME.json`` (``docs/benchmarks.md`` holds placeholders, not tables), and a gated page
included whole (``--8<-- "docs/valuation_benchmark.md"``) is inlined, so that its placeholders render.

**The gate** (a warning, so ``mkdocs build --strict``, which CI runs, fails):

* a placeholder whose file is missing, was a ``--quick`` run or failed, lacks the key, or is **stale**: a file
  is stale when the content hash of a producing script it recorded (``scripts``) differs from the script's
  now. Only the script counts, not the package modules it times: a behaviour-preserving move of package code
  does not make a figure stale, and each page shows the commit the figure was measured at;
* a **typed measured figure** on any page (docs/**/*.md), outside placeholders, code, maths, links and the paper's
  column of a table: a time (``12 s``, ``3.1 ms``, ``45 minutes``), a ratio (``14x``), a memory or file size written
  with a decimal point or a thousands separator (``1,786 MiB``, ``10.6 MB``; a whole number of units, ``256 MiB``,
  ``2 GiB``, passes: the sizes the pages state are mostly limits, chunk sizes and defaults), a percentage, a number in
  scientific notation with a negative exponent (an error, ``3e-14``; ``1e300`` is a magnitude, an input), a decimal
  with two or more places (a correlation, an AUC, an MSE), a mean followed by its spread (``80.8 [70, 91]``,
  ``0.5 ± 0.1``) or a count out of a total (``24/28``); in a table's "ours" and "verdict" columns also any decimal, a
  count "k of n" and a range "a to b"; unless a stated setting introduces it (``tolerance``, ``tol``, ``noise``,
  ``=``, ``<=``, a test's tolerance before an error ("the tests check it ... to 1e-10"), a target ("the target of
  10x"), a version after ``shap`` or ``version``, an ``arXiv:`` number, ...) or it is on :data:`ALLOWED`. README,
  which no hook renders, is held to the same definition by ``tests/test_docs_results.py``.

**The allow-list** of numbers that are not measured is narrow on purpose: :data:`SETTING` (the words that introduce
a setting, a tolerance a test asserts, a version or a reference) and :data:`ALLOWED` (exact phrases: versions,
limits the code enforces, notations). A measured figure never goes there: it is rendered from a result file.
"""

from __future__ import annotations

import json
import logging
import os
import re
import sys
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
#: The result files (``SHAP_INSTANCES_RESULTS`` points elsewhere: the gate's own test builds a page against its own).
RESULTS = Path(os.environ.get("SHAP_INSTANCES_RESULTS", ROOT / "benchmarks" / "results"))
sys.path.insert(0, str(ROOT / "benchmarks"))
from _common import RESULT_PREFIXES, file_hash  # noqa: E402 - benchmarks/ is not a package
from _verdicts import verdict  # noqa: E402

log = logging.getLogger("mkdocs.hooks.results")

#: The result pages, which another page may include whole (``--8<-- "docs/NAME.md"``: their placeholders then
#: render there too). Every page is gated alike.
RESULT_PAGES = ("benchmarks.md", "reproductions.md", "valuation_benchmark.md")
#: Numbers on the pages (and README) that are not measured: versions, the load averages' windows, a generator's
#: formula, the verdict rules' default tolerances, the limits the code enforces (a run estimated above 24 hours is
#: refused, a budget run may end at 110% of its budget), binary labels, the tests' extreme inputs. Exact phrases.
ALLOWED = ("Python 3.11", "3.11 or newer", "shap 0.51", "pyDVL 0.10", "(1 / 5 / 15 min)", "y = 1.5x",
           "0.03 on a correlation", "5 percentage points", "5% relative", "95% interval", "0.03 on Pearson",
           # on the other pages: versions, the limits the code enforces, notations, extreme inputs of the tests
           "shap 0.46 to 0.51", "24 hours", "110% of", "95% bounds", "0/1", "1e-300", "5% steps")
#: The last commit whose pages carried figures typed without result files (pointed to by "not rerun" notes).
BEFORE_RESULT_FILES = "9e0b03e"
PLACEHOLDER = re.compile(r"\{\{\s*(result|part|section|output|measured|verdict|not_rerun)\s*:"
                         r"\s*([^}]*?)\s*\}\}")
SNIPPET = re.compile(r'^(?P<indent>[ \t]*)--8<-- "docs/benchmarks\.md:(?P<name>[a-z_]+)(?:-(?P<part>[a-z_0-9]+))?"'
                     r"[ \t]*$", re.M)
WHOLE_PAGE = re.compile(r'^[ \t]*--8<-- "docs/(?P<page>[a-z_]+\.md)"[ \t]*$', re.M)
NUMBER = r"(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?"
FIGURE = re.compile(rf"""
    (?<![\w.=<>/])(?:
        {NUMBER}\s?(?:ms|us|µs|s|seconds|min|minutes|h|hours)\b  # a time
      | {NUMBER}x\b                                             # a ratio
      | (?:\d{{1,3}}(?:,\d{{3}})+(?:\.\d+)?|\d+\.\d+)\s?[KMGT]i?B\b   # a size with a decimal or a separator
      | {NUMBER}\s?%                                            # a percentage
      | \d(?:\.\d+)?e-\d+\b                                   # scientific notation (an error)
      | \d*\.\d{{2,}}\b                                         # two or more decimals
      | {NUMBER}(?=\s*(?:±|\[[-+]?\d))                          # a mean with its spread
      | \d+/\d+(?![\d/])                                        # a count out of a total (Kendall's k/C)
    )""", re.X)
#: In a table's "ours" and "verdict" columns also any number with a decimal point, a count "k of n" and a range
#: "a to b" are measured.
OURS = re.compile(r"(?<![\w.=<>/@])(?:\d+\.\d+\b|\d[\d,]* of \d[\d,]*\b|\d[\d,.]* to [-+]?\d[\d,.]*\b)")
MEASURED_COLUMNS = ("ours", "verdict")
#: Words after which a number is a stated setting, not a measurement.
SETTING = re.compile(r"(?:tolerance|tol|default|within|noise|weight|theta|alpha|lambda|bound|threshold|[=<>≤≥]"
                     r"|(?:tested|checked) to|nominal|target(?: of)?|shap|pyDVL|version|arXiv:)\s*[-+]?$", re.I)
#: A tolerance the tests assert, in words ("the tests check it against refits to 1e-10", "raised to 1e-10"): read
#: so only before a number in scientific notation.
TEST_TOLERANCE = re.compile(r"(?:(?:tests?|tested|checks?|checked)\b[^.;()]{0,60}\bto|raised to)\s*$", re.I)
SCIENTIFIC = re.compile(r"\d(?:\.\d+)?e-\d+")
#: Placeholders outside code (a placeholder written in backticks is shown, not rendered).
CODE_OR_PLACEHOLDER = re.compile(r"```.*?```|`[^`\n]*`|" + PLACEHOLDER.pattern, re.S)
#: What the gate does not read: code, maths, HTML comments, link targets, placeholders.
SKIPPED = re.compile(r"```.*?```|`[^`\n]*`|\$\$.*?\$\$|\$[^$\n]*\$|<!--.*?-->|\]\([^)]*\)|\{\{.*?\}\}", re.S)
#: A ``{{ recorded:DATE }}`` mark, refused (outside inline code, which :data:`INLINE_CODE` removes first).
RECORDED = re.compile(r"\{\{\s*recorded\s*:")
INLINE_CODE = re.compile(r"`[^`\n]*`")
PAPER_COLUMN = re.compile(r"^\s*(?:the )?(?:paper|poster)", re.I)  # a column of the paper's numbers


class ResultError(ValueError):
    """A placeholder that no current, full result file backs."""


@cache
def load(name: str) -> dict:
    path = RESULTS / f"{name}.json"
    if not path.is_file():
        raise ResultError(f"no result file benchmarks/results/{name}.json (run `{rerun(name)}`)")
    return json.loads(path.read_text())


def rerun(name: str) -> str:
    """The command that writes result file ``name`` (``bench-X``, ``repro-X``, ``fig-X``) again."""
    prefix, _, what = name.partition("-")
    mode = next((f"{registry} " for registry, known in RESULT_PREFIXES.items() if known == prefix), "")  # bench-
    return f"python benchmarks/run_all.py {mode}{what}"


def stale_scripts(result: dict) -> list[str]:
    """The producing scripts whose content changed (or that are gone) since the run: the staleness rule."""
    changed = []
    for script, digest in result.get("scripts", {}).items():
        try:
            same = file_hash(script) == digest
        except FileNotFoundError:
            same = False
        if not same:
            changed.append(script)
    return changed


def checked(name: str) -> dict:
    """The result file ``name``, refused when it is a quick run, failed, or stale."""
    result = load(name)
    command = rerun(name)
    if result["mode"] != "full":
        raise ResultError(f"{name}.json is a --quick run: quick runs are never documented (run `{command}`)")
    if result["exit_code"] != 0:
        raise ResultError(f"{name}.json records a failed run (exit {result['exit_code']}): rerun `{command}`")
    changed = stale_scripts(result)
    if changed:
        raise ResultError(f"{name}.json is stale: {', '.join(changed)} changed since it ran at "
                          f"{result['git_commit'][:12]}; rerun `{command}`")
    return result


def measured(result: dict) -> str:
    load_start, load_end = (" / ".join(f"{x:.2f}" for x in result["load"][k]) for k in ("start", "end"))
    seeds = f", seeds {result['seeds']}" if result.get("seeds") else ""
    return (f"*measured {result['date']} at commit `{result['git_commit'][:10]}` by `{' '.join(result['command'])}`"
            f" ({result['wall_s']:.0f} s, {result['machine']['cores']} cores, load average {load_start} at the "
            f"start, {load_end} at the end{seeds})*")


def value(result: dict, key: str) -> str:
    if key not in result["values"]:
        raise ResultError(f"{result['name']}.json has no value {key!r}")
    return shown(result["values"][key])


def shown(found) -> str:
    """A recorded value as a page shows it: a float to six significant digits, a list of values (one per seed)
    comma-separated, anything else as written."""
    if isinstance(found, list):
        return ", ".join(shown(item) for item in found)
    return f"{found:g}" if isinstance(found, float) else str(found)


def part(result: dict, name: str) -> str:
    """A table a script printed: recorded as ``part:NAME`` (``Bench.print(part=)``), or the span of the run's
    markdown between its snippet markers ``[start:BENCH-NAME]`` and ``[end:BENCH-NAME]``."""
    if f"part:{name}" in result["values"]:
        return value(result, f"part:{name}")
    marker = re.escape(f"{result['name'].removeprefix('bench-')}-{name}")
    span = re.search(rf"\[start:{marker}\] -->\n(.*?)<!-- --8<-- \[end:{marker}\]", result["markdown"] or "", re.S)
    if span is None:
        raise ResultError(f"{result['name']}.json has no value {'part:' + name!r} and no snippet {name!r}")
    return span.group(1).strip()


def render(kind: str, argument: str) -> str:
    """The text of one placeholder."""
    if kind == "not_rerun":
        return f"*not rerun since {argument} (the row's last revision): no result file backs its figures yet*"
    name, _, rest = argument.partition(":")
    if kind == "section" and not (RESULTS / f"{name}.json").is_file() and rest:
        return (f"*Not rerun since {rest}: no result file backs its figures yet (`python benchmarks/run_all.py "
                f"{name.removeprefix('bench-')}`; the figures of that run are in docs/benchmarks.md at commit "
                f"{BEFORE_RESULT_FILES}).*")
    result = checked(name)
    if kind == "result":
        return value(result, rest)
    if kind == "part":
        return part(result, rest)
    if kind == "section":
        return measured(result) + "\n\n" + (result["markdown"] or "")
    if kind == "output":
        return text_block(result["output"])
    if kind == "measured":
        return measured(result)
    outcome = verdict(result["claims"] or [], result["values"], rest)  # kind == "verdict"
    return f"**{outcome.verdict}** ({in_a_cell(outcome.reason)})"


def in_a_cell(text: str) -> str:
    """``text`` safe in a markdown table's cell, where verdicts stand: a claim's ``|x|`` would end the cell."""
    return text.replace("|", "\\|")


def text_block(output: str) -> str:
    """What a script printed, as a terminal shows it (a progress bar's redrawn line: its last state), fenced by
    more backticks than any run in it."""
    shown = [line.rsplit("\r", 1)[-1].rstrip() for line in output.split("\n")]
    text = "\n".join(shown).strip("\n")
    fence = "`" * max([3, *(len(run) + 1 for run in re.findall(r"`+", text))])
    return f"{fence}text\n{text}\n{fence}"


@cache
def last_runs() -> dict[str, str]:
    """``{NAME: date}`` of the benchmark sections of docs/benchmarks.md that no result file backs yet."""
    text = (ROOT / "docs" / "benchmarks.md").read_text()
    return dict(re.findall(r"\{\{\s*section:bench-([a-z_]+):([^}\s]+)\s*\}\}", text))


def include_snippets(markdown: str) -> str:
    """``--8<-- "docs/benchmarks.md:NAME[-PART]"`` lines as placeholders of ``bench-NAME.json``."""
    def placeholder(match: re.Match) -> str:
        name, part = match["name"], match["part"]
        if part and (RESULTS / f"bench-{name}.json").is_file():
            return f"{match['indent']}{{{{ part:bench-{name}:{part} }}}}"
        date = last_runs().get(name, "the result files were introduced")
        return f"{match['indent']}{{{{ section:bench-{name}:{date} }}}}"

    def whole_page(match: re.Match) -> str:  # a gated page included whole: its placeholders render here too
        return (ROOT / "docs" / match["page"]).read_text() if match["page"] in RESULT_PAGES else match.group()

    return WHOLE_PAGE.sub(whole_page, SNIPPET.sub(placeholder, markdown))


def typed_figures(markdown: str) -> list[str]:
    """Measured figures typed on a page (see the module's docstring for the definition)."""
    found: list[str] = []
    header: list[str] = []
    for line in SKIPPED.sub(lambda m: " " * len(m.group()), markdown).splitlines():
        in_table = line.lstrip().startswith("|")
        cells = line.split("|") if in_table else [line]
        if not in_table:
            header = []
        elif set(line.replace("|", "").strip()) <= set("-: "):
            continue  # a table's rule
        elif not header:  # a header row: read as prose (its cells name the columns)
            header, cells = [cell.strip().lower() for cell in cells], [line]
            in_table = False
        for index, cell in enumerate(cells):
            column = header[index] if in_table and index < len(header) else ""
            if PAPER_COLUMN.match(column):
                continue
            for phrase in ALLOWED:
                cell = cell.replace(phrase, " " * len(phrase))
            matches = [*FIGURE.finditer(cell), *(OURS.finditer(cell) if column in MEASURED_COLUMNS else ())]
            found += sorted({f"{m.group().strip()}  (in: {cell.strip()[:80]})" for m in matches
                             if not stated(m.group().strip(), cell[:m.start()].rstrip())})
    return found


def stated(figure: str, before: str) -> bool:
    """Whether the text ``before`` a number makes it a stated setting (:data:`SETTING`), or a test's tolerance."""
    return bool(SETTING.search(before) or (SCIENTIFIC.fullmatch(figure) and TEST_TOLERANCE.search(before)))


def on_page_markdown(markdown, page, **kwargs):
    source = page.file.src_uri
    markdown = include_snippets(markdown)
    if RECORDED.search(INLINE_CODE.sub("", markdown)):
        log.warning("%s: {{ recorded:DATE }} is refused: every measured figure comes from a result file; render "
                    "the figures from one ({{ result:FILE:KEY }}) or say {{ not_rerun:DATE }}", source)
    for figure in typed_figures(markdown):
        log.warning("%s: a typed measured figure, %s: render it from a result file ({{ result:FILE:KEY }}, "
                    "{{ part:FILE:PART }}) or say {{ not_rerun:DATE }}", source, figure)

    def replace(match: re.Match) -> str:
        try:
            return render(match[1], match[2])
        except ResultError as error:
            log.warning("%s: %s", source, error)
            return f"*(no current result: {error})*"

    return CODE_OR_PLACEHOLDER.sub(lambda m: replace(m) if m[1] else m.group(), markdown)


def on_config(config, **kwargs):
    load.cache_clear()  # mkdocs serve: reread the result files on every build
    last_runs.cache_clear()
    return config
