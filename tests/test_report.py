"""The report: written offline, every image loads in a real browser (headless Chromium)."""

import base64
import re
import shutil
import subprocess

import pytest

from shap_instances.datasets import load_diabetes
from shap_instances.report import run_report

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")

# every figure of a regression report, each written as NAME.png and embedded in index.html
FIGURES = ("cc_plot", "cc_variance_plot", "helpful_harmful", "behaviour_outliers", "data_values",
           "gap_waterfall", "gap_cumulative_weight", "trust_scores")

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
    assert "http://" not in html and "https://" not in html  # self-contained: nothing to fetch
    assert sorted(p.stem for p in folder.glob("*.png")) == sorted(FIGURES)
    assert html.count("<img") == len(FIGURES)
    for name in FIGURES:
        png = (folder / f"{name}.png").read_bytes()
        assert png.startswith(b"\x89PNG") and len(png) > 5000, name
        assert f"data:image/png;base64,{base64.b64encode(png).decode('ascii')}" in html, f"{name}.png is not embedded"
    for name in ("instances.csv", "trust_scores.csv"):
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
    assert total == len(FIGURES) and loaded == total


def test_report_variance_plot(report_path):
    assert (report_path.parent / "cc_variance_plot.png").stat().st_size > 0


def test_binary_classification_report_has_every_section(tmp_path):
    from sklearn.datasets import load_breast_cancer

    X, y = load_breast_cancer(return_X_y=True, as_frame=True)
    X, y = X.iloc[:150, :8], y.iloc[:150]
    html = run_report(X, y, task="classification", out=tmp_path, silent=True).read_text()
    assert "Residual decomposition" in html and "linear probability model" in html
    assert "Section skipped" not in html
    assert sorted(p.stem for p in tmp_path.glob("*.png")) == sorted(FIGURES)


def test_multiclass_report_says_what_it_skipped(tmp_path):
    from sklearn.datasets import load_iris

    X, y = load_iris(return_X_y=True, as_frame=True)
    html = run_report(X, y, task="classification", out=tmp_path, silent=True).read_text()
    assert "Section skipped: the residual decomposition needs" in html
    assert sorted(p.stem for p in tmp_path.glob("*.png")) == ["gap_cumulative_weight", "gap_waterfall", "trust_scores"]


def test_figure_helpers_draw_the_extreme_rows():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np
    import pandas as pd

    from shap_instances.report import _figures

    contribution = pd.Series(np.linspace(-1, 1, 9), index=[f"r{i}" for i in range(9)])
    fig, ax = plt.subplots()
    _figures.helpful_harmful_bars(ax, contribution, k=10)  # k larger than half the rows: groups stay disjoint
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert labels == ["row r8", "row r7", "row r6", "row r5", "row r3", "row r2", "row r1", "row r0"]
    plt.close(fig)

    values = pd.Series([0.1, 3.0, 2.0, 0.5], index=["a", "b", "c", "d"])
    fig, (left, right) = plt.subplots(1, 2)
    _figures.data_value_rank(left, values, [True, False, True, False], k=2)
    _figures.data_value_top(right, values, [True, False, True, False], k=2)
    assert [t.get_text() for t in right.get_yticklabels()] == ["row b", "row c"]
    plt.close(fig)
