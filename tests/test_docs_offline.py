"""The documentation reads offline: the formulas of every explainer page are typeset by the MathJax that the
site serves itself, in headless Chromium with every host name unresolvable."""

import html as html_module
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
EXPLAINER_PAGES = sorted(p.stem for p in (ROOT / "docs" / "explainers").glob("*.md"))
REMOTE = re.compile(r"""<(?:script|link|img|iframe)\b[^>]*\b(?:src|href)=["']?(?:https?:)?//""", re.IGNORECASE)

# Injected before </body>: once MathJax has typeset the page, write what it did into a body attribute.
_PROBE = """<script>
window.addEventListener("load", () => {
  const report = (state) => document.body.setAttribute("data-math", JSON.stringify(state));
  if (!window.MathJax || !window.MathJax.startup) { report({ error: "MathJax did not load" }); return; }
  MathJax.startup.promise.then(() => {
    const formulas = [...document.querySelectorAll(".arithmatex")];
    const containers = [...document.querySelectorAll("mjx-container")];
    report({
      formulas: formulas.length,
      typeset: formulas.filter((f) => f.querySelector("mjx-container")).length,
      errors: document.querySelectorAll("mjx-merror").length,
      raw: [...document.querySelectorAll(".arithmatex, .md-ellipsis")]
        .map((e) => e.innerText).filter((t) => /\\\\[\\[(]/.test(t)),
      literal_backslash: containers.map((c) => c.querySelector("mjx-assistive-mml"))
        .filter((m) => m && m.textContent.includes("\\\\")).map((m) => m.textContent),
      remote: performance.getEntriesByType("resource").map((r) => r.name).filter((n) => !n.startsWith("file:")),
    });
  }, (error) => report({ error: String(error) }));
});
</script>"""


def test_mkdocs_config_loads_nothing_remote():
    config = (ROOT / "mkdocs.yml").read_text()
    assert not re.search(r"https?://", config.split("extra_javascript:")[1].split("hooks:")[0])
    assert "docs/hooks/mathjax.py" in config


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    pytest.importorskip("mkdocs", reason="the docs extra is not installed (bash scripts/setup.sh installs it)")
    out = tmp_path_factory.mktemp("site")
    result = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--quiet", "--site-dir", str(out)],
                            cwd=ROOT, capture_output=True, text=True, timeout=600,
                            env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert result.returncode == 0, result.stderr[-3000:]
    return out


@pytest.mark.slow
def test_built_site_references_no_remote_script_or_style(site):
    pages = list(site.rglob("*.html"))
    assert len(pages) > 10
    offenders = {str(p.relative_to(site)): REMOTE.findall(p.read_text()) for p in pages}
    assert not {page: found for page, found in offenders.items() if found}
    assert (site / "javascripts" / "mathjax" / "tex-mml-chtml.js").is_file()


@pytest.mark.slow
@pytest.mark.skipif(CHROMIUM is None, reason="Chromium is not installed (bash scripts/setup.sh --with-browser)")
@pytest.mark.parametrize("page", EXPLAINER_PAGES)
def test_formulas_are_typeset_offline(site, page, tmp_path):
    html = site / "explainers" / page / "index.html"
    probe = html.with_name("probe.html")  # beside the page, so that its relative links still resolve
    probe.write_text(html.read_text().replace("</body>", _PROBE + "</body>"))
    result = subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-quic",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--host-resolver-rules=MAP * ~NOTFOUND",  # no network: every host name fails to resolve
         f"--user-data-dir={tmp_path / 'profile'}", "--virtual-time-budget=15000", "--dump-dom", probe.as_uri()],
        capture_output=True, text=True, timeout=120,
    )
    match = re.search(r"data-math=\"([^\"]*)\"", result.stdout)
    assert match, f"the probe did not report: {result.stderr[-2000:]}"
    state = json.loads(html_module.unescape(match.group(1)))
    assert "error" not in state, state
    assert state["formulas"] > 0, f"{page}: no formulas found"
    assert state["typeset"] == state["formulas"], state
    assert state["errors"] == 0 and not state["raw"] and not state["literal_backslash"], state
    assert not state["remote"], state
