"""The report: written offline, every image loads in a real browser (headless Chromium)."""

import re
import shutil
import subprocess

import pytest

from shap_instances.datasets import load_diabetes
from shap_instances.report import run_report

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")

_COUNT_IMAGES = """<script>window.addEventListener("load", () => {
  const loaded = [...document.images].filter(i => i.complete && i.naturalWidth > 0).length;
  document.body.setAttribute("data-images", loaded + "/" + document.images.length);
});</script>"""


@pytest.fixture(scope="module")
def report_path(tmp_path_factory):
    X, y = load_diabetes()
    return run_report(X.iloc[:150], y.iloc[:150], out=tmp_path_factory.mktemp("report"), silent=True)


def test_report_files(report_path):
    folder = report_path.parent
    html = report_path.read_text()
    assert html.count("<img") >= 4 and "data:image/png;base64," in html
    assert "http://" not in html and "https://" not in html  # self-contained: nothing to fetch
    for name in ("cc_plot.png", "gap_waterfall.png", "trust_scores.png", "instances.csv", "trust_scores.csv"):
        assert (folder / name).stat().st_size > 0, name


@pytest.mark.skipif(CHROMIUM is None, reason="Chromium is not installed (scripts/setup.sh installs Debian's chromium)")
def test_every_image_loads_in_chromium(report_path, tmp_path):
    probe = tmp_path / "probe.html"
    probe.write_text(report_path.read_text().replace("</body>", _COUNT_IMAGES + "</body>"))
    result = subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         f"--user-data-dir={tmp_path / 'profile'}", "--virtual-time-budget=5000", "--dump-dom", probe.as_uri()],
        capture_output=True, text=True, timeout=120,
    )
    match = re.search(r'data-images="(\d+)/(\d+)"', result.stdout)
    assert match, result.stderr[-2000:]
    loaded, total = map(int, match.groups())
    assert total >= 4 and loaded == total


def test_report_variance_plot(report_path):
    assert (report_path.parent / "cc_variance_plot.png").stat().st_size > 0


def test_binary_classification_report_has_every_section(tmp_path):
    from sklearn.datasets import load_breast_cancer

    X, y = load_breast_cancer(return_X_y=True, as_frame=True)
    X, y = X.iloc[:150, :8], y.iloc[:150]
    html = run_report(X, y, task="classification", out=tmp_path, silent=True).read_text()
    assert "Residual decomposition" in html and "linear probability model" in html
    assert "Section skipped" not in html
    assert (tmp_path / "cc_plot.png").exists() and (tmp_path / "trust_scores.png").exists()


def test_multiclass_report_says_what_it_skipped(tmp_path):
    from sklearn.datasets import load_iris

    X, y = load_iris(return_X_y=True, as_frame=True)
    html = run_report(X, y, task="classification", out=tmp_path, silent=True).read_text()
    assert "Section skipped: the residual decomposition needs" in html
    assert not (tmp_path / "cc_plot.png").exists() and (tmp_path / "trust_scores.png").exists()
