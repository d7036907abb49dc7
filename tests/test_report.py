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


def _costs(**changes):
    from shap_instances.report._plan import Costs

    costs = dict(spent=2.0, per_permutation=0.01, per_tree=0.02, gap_fixed_per_tree=0.005, gap_per_row_tree=1e-5,
                 n_train=400, n_test=100, n_explained=400, n_features=10)
    return Costs(**{**costs, **changes})


def test_plan_gives_everything_when_it_fits_and_respects_the_budget():
    from shap_instances.report._plan import make_plan

    plan = make_plan(_costs(), 180.0, residual=True, n_players=400)
    assert plan.n_permutations == 1200 and plan.n_trees == 100 and plan.trust_rows == 100  # 3n, all trees, rows
    assert plan.total <= 180.0 and not plan.warnings
    assert [line.split("]")[0].strip() for line in plan.lines()[1:5]] == ["[1/4", "[2/4", "[3/4", "[4/4"]


def test_plan_shrinks_the_work_to_the_budget():
    from shap_instances.report._plan import make_plan

    costs = _costs(per_permutation=2.5, per_tree=1.0, gap_per_row_tree=2e-4, n_train=40_000, n_test=10_000,
                   n_explained=200, spent=15.0)
    plan = make_plan(costs, 180.0, residual=True, n_players=40_000)
    assert 4 <= plan.n_permutations < 120_000 and plan.n_permutations % 2 == 0
    assert 20 <= plan.n_trees < 100
    assert plan.total <= 180.0 * 1.001, plan.lines()
    assert plan.batch_size == 2  # 2.5 s per permutation and 64 MB of values each: the smallest batch
    hopeless = make_plan(costs, 20.0, residual=True, n_players=40_000)
    assert hopeless.n_permutations == 4 and hopeless.warnings  # the fewest useful permutations, said to overrun


def test_sampled_summary_is_the_full_decomposition_restricted_to_the_sample():
    """Explaining a sample of training rows gives those rows of the full decomposition (same permutations), and
    the summary's statistics are the full matrix's statistics over the sampled rows."""
    import numpy as np
    from sklearn.linear_model import Ridge

    from shap_instances import InstanceKernelExplainer
    from shap_instances.metrics import cc_summary, normalised_contributions
    from shap_instances.report._residual import sampled_summary

    X, y = load_diabetes()
    X, y = X.iloc[:40], y.iloc[:40]
    options = dict(n_permutations=20, random_state=3, silent=True)
    full = InstanceKernelExplainer(Ridge(alpha=0.5), X, y=y, **options)()
    positions = np.array([1, 7, 8, 20, 33])
    sampled = InstanceKernelExplainer(Ridge(alpha=0.5), X, y=y, **options)(X.iloc[positions], y.iloc[positions])
    np.testing.assert_allclose(sampled.values, full.values[positions], atol=1e-9)
    residuals = full.base_values + full.values.sum(axis=1)
    summary = sampled_summary(sampled, residuals, positions)
    contributions = normalised_contributions(full)[positions]
    np.testing.assert_allclose(summary["contribution_mean"], contributions.mean(axis=0), atol=1e-12)
    np.testing.assert_allclose(summary["composition_mean"], cc_summary(full)["composition_mean"], atol=1e-9)
    np.testing.assert_allclose(summary["composition_var"].to_numpy()[positions], full.values[positions].var(axis=1))
    assert summary["composition_var"].isna().sum() == 40 - len(positions)
    m, n = len(positions), 40
    expected = contributions.std(axis=0, ddof=1) / np.sqrt(m) * np.sqrt(1 - m / n)
    np.testing.assert_allclose(summary["sampling_se"], expected)
    everything = sampled_summary(full, residuals, np.arange(40))  # every row explained: cc_summary's numbers
    np.testing.assert_allclose(everything["contribution_var"], cc_summary(full)["contribution_var"], atol=1e-12)
    assert (everything["sampling_se"] == 0).all()


def test_runs_average_and_measure_the_permutation_error():
    import numpy as np
    import shap

    from shap_instances.report._residual import _Runs, chunk_sizes

    rng = np.random.default_rng(0)
    truth = rng.normal(size=(3, 6))
    runs = _Runs()
    draws = [truth + rng.normal(scale=0.1, size=truth.shape) for _ in range(400)]
    for draw in draws:
        runs.add(shap.Explanation(draw, base_values=np.zeros(3), feature_names=list("abcdef")))
    np.testing.assert_allclose(runs.mean().values, np.mean(draws, axis=0))
    # the error of a contribution mean over 3 rows of noise 0.1, averaged over 400 runs: 0.1 / sqrt(3 * 400)
    error = runs.contribution_error(np.ones(3))
    assert 0.6 * 0.1 / np.sqrt(1200) < error < 1.5 * 0.1 / np.sqrt(1200)
    for total in (4, 22, 360, 1326):
        count, each = chunk_sizes(total)
        assert 2 <= count <= 8 and each % 2 == 0 and 0.9 * total <= count * each <= total


def test_trust_comment_says_what_the_bars_show():
    import numpy as np

    from shap_instances.metrics.trust import trust_decile_table
    from shap_instances.report._forest import trust_comment

    score = np.linspace(0, 1, 100)
    rising = score + np.random.default_rng(0).normal(scale=0.05, size=100)
    table = trust_decile_table(score, rising, n_bins=5)
    assert "never falls" in trust_comment(table, score, rising, classification=False, score_name="s")
    bumpy = np.where((score > 0.4) & (score < 0.6), 0.0, score)
    comment = trust_comment(trust_decile_table(score, bumpy, n_bins=5), score, bumpy, classification=False,
                            score_name="s")
    assert "not monotone: it falls at quintile 3" in comment and "standard error" in comment
    right = np.ones(100)
    assert "Every held-out row is classified correctly" in trust_comment(
        trust_decile_table(score, right, n_bins=5), score, right, classification=True, score_name="s")


def test_forest_grown_in_chunks_is_the_forest_of_one_fit():
    """The report grows its forest with warm_start in chunks (and re-plans the count); the trees, and the
    out-of-bag predictions the trust scores use, are those of one fit with the same seed."""
    import numpy as np
    from sklearn.model_selection import train_test_split

    from shap_instances.models import fit_model
    from shap_instances.report._context import prepare
    from shap_instances.report._forest import grow_forest

    X, y = load_diabetes()
    parts = train_test_split(X.iloc[:200], y.iloc[:200], test_size=0.2, random_state=0)
    context = prepare(*parts, task="regression", model="auto", seed=0, silent=True)
    grow_forest(context, 4, oob=False)  # the probe's trees
    context.forest_estimator.set_params(warm_start=True)
    forest = grow_forest(context, 30, oob=True)
    reference = fit_model("forest", "regression", parts[0], parts[2], 0).steps[-1][1].set_params(n_estimators=30)
    reference.fit(context.F_train, parts[2])
    for grown, fitted in zip(forest.estimators_, reference.estimators_, strict=True):  # the same trees
        np.testing.assert_array_equal(grown.tree_.threshold, fitted.tree_.threshold)
    np.testing.assert_allclose(forest.predict(context.F_test), reference.predict(context.F_test), rtol=1e-13)
    np.testing.assert_allclose(forest.oob_prediction_, reference.oob_prediction_, rtol=1e-13)
    assert not forest.warm_start
