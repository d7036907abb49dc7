"""The report: written offline, every image loads in a real browser (headless Chromium)."""

import base64
import re
import shutil
import subprocess
import time

import numpy as np
import pandas as pd
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


def test_report_names_the_place_stratified_estimator_of_the_aggregate_game(report_path):
    """A ridge report's contribution means come from place strata (a draw is cut short), and the text says so; the
    efficiency of the means holds (they add up to minus the mean absolute residual)."""
    text = " ".join(report_path.read_text().split())
    assert "spent by place-stratified sampling" in text and "antithetic permutations in" not in text
    table = pd.read_csv(report_path.parent / "instances.csv", index_col=0)
    np.testing.assert_allclose(table["contribution_mean"].sum(), -table["residual"].abs().mean(), rtol=1e-9)


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


@pytest.mark.slow
def test_binary_classification_report_has_every_section(tmp_path):
    from sklearn.datasets import load_breast_cancer

    X, y = load_breast_cancer(return_X_y=True, as_frame=True)
    X, y = X.iloc[:150, :8], y.iloc[:150]
    html = run_report(X, y, task="classification", out=tmp_path, silent=True).read_text()
    assert "Residual decomposition" in html and "linear probability model" in html
    assert "Rows whose label the model and the data disagree with" in html and "p_forest" in html
    assert "Section skipped" not in html
    assert sorted(p.stem for p in tmp_path.glob("*.png")) == sorted(FIGURES)


@pytest.mark.slow
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
    _figures.helpful_harmful_bars(ax, contribution, pd.Series(0.01, index=contribution.index), k=10)
    labels = [t.get_text() for t in ax.get_yticklabels()]  # r4 is 0: neither helpful nor harmful
    assert labels == ["row r8", "row r7", "row r6", "row r5", "row r3", "row r2", "row r1", "row r0"]
    plt.close(fig)

    values = pd.Series([0.1, 3.0, 2.0, 0.5], index=["a", "b", "c", "d"])
    fig, (left, right) = plt.subplots(1, 2)
    _figures.data_value_rank(left, values, [1, 0, 1, -1], shown=["b", "c"])
    _figures.data_value_top(right, values, [1, 0, 1, -1], errors=pd.Series(0.1, index=values.index), k=2)
    assert [t.get_text() for t in right.get_yticklabels()] == ["row b", "row c"]
    assert [p.get_facecolor() for p in right.patches[:2]] == [matplotlib.colors.to_rgba(c) for c in
                                                              (_figures._NEUTRAL, _figures.HELPFUL)]  # b within noise
    assert [t.get_text() for t in left.get_legend().get_texts()] == [
        "marked: the 2 rows labelled on the right", "helpful row (contribution mean > 0 beyond its error)",
        "contribution mean within its noise"]
    assert [t.get_text() for t in right.get_legend().get_texts()] == ["95% interval (+/- 1.96 standard errors)"]
    plt.close(fig)


def _costs(**changes):
    from shap_instances.report._plan import Costs

    costs = dict(spent=2.0, per_permutation=0.01, per_aggregate=0.002, per_tree=0.02, gap_fixed_per_tree=0.005,
                 gap_per_row_tree=1e-5, n_train=400, n_test=100, n_explained=400, n_features=10)
    return Costs(**{**costs, **changes})


def test_plan_gives_everything_when_it_fits_and_respects_the_budget():
    from shap_instances.report._plan import make_plan

    plan = make_plan(_costs(), 180.0, residual=True, n_players=400)
    # the sampled rows' 3n, the aggregate game all the time left (no fixed cap), all trees, every held-out row
    assert plan.sample_permutations == 1200 and plan.n_permutations > 20 * 400
    assert plan.n_permutations * 0.002 + 1200 * 0.01 > 0.8 * 180 - 2.0 - 20  # it fills the budget
    assert plan.n_trees == 100 and plan.trust_rows == 100
    assert plan.total <= 180.0 and not plan.warnings
    assert [line.split("]")[0].strip() for line in plan.lines()[1:5]] == ["[1/4", "[2/4", "[3/4", "[4/4"]


def test_plan_shrinks_the_work_to_the_budget():
    from shap_instances.report._plan import make_plan

    costs = _costs(per_permutation=2.5, per_aggregate=0.5, per_tree=1.0, gap_per_row_tree=2e-4, n_train=40_000,
                   n_test=10_000, n_explained=200, spent=15.0)
    plan = make_plan(costs, 180.0, residual=True, n_players=40_000)
    assert 4 <= plan.n_permutations < 120_000 and plan.n_permutations % 2 == 0
    assert 4 <= plan.sample_permutations and plan.sample_permutations * 2.5 <= 180 / 3
    assert 20 <= plan.n_trees < 100
    assert plan.total <= 180.0 * 1.001, plan.lines()
    assert plan.batch_size == 2  # 2.5 s per permutation and 64 MB of values each: the smallest batch
    hopeless = make_plan(costs, 20.0, residual=True, n_players=40_000)
    assert hopeless.n_permutations == 4 and hopeless.warnings  # the fewest useful permutations, said to overrun


def test_summary_table_takes_means_from_the_aggregate_game_and_variances_from_the_sample():
    """The report's table: contribution means of the aggregate game equal those of the full matrix (same
    permutations), the variances are the sampled rows' statistics of that matrix, and the composition means are
    residual / n."""
    import numpy as np
    from sklearn.linear_model import Ridge

    from shap_instances import InstanceKernelExplainer
    from shap_instances.metrics import cc_means, cc_summary, normalised_contributions
    from shap_instances.report._residual import summary_table

    X, y = load_diabetes()
    X, y = X.iloc[:40], y.iloc[:40]
    explainer = InstanceKernelExplainer(Ridge(alpha=0.5), X, y=y, n_permutations=20, random_state=3, silent=True)
    full = explainer()
    sample = explainer.explain_sample(9)
    rows = sample.sampled_rows
    np.testing.assert_allclose(sample.values, full.values[rows], atol=1e-9)  # the same permutations
    table = summary_table(cc_means(explainer), sample)
    reference = cc_summary(full)
    for column in ("contribution_mean", "composition_mean", "residual"):
        np.testing.assert_allclose(table[column], reference[column], atol=1e-9, err_msg=column)
    contributions = normalised_contributions(full)[rows]
    np.testing.assert_allclose(table["contribution_var"], contributions.var(axis=0, ddof=1), atol=1e-12)
    np.testing.assert_allclose(table["composition_var"].to_numpy()[rows], full.values[rows].var(axis=1))
    assert table["composition_var"].isna().sum() == 40 - 9 and table["explained"].sum() == 9
    assert (table["contribution_mean_se"] > 0).all() and (table["contribution_var_se"] > 0).all()


def test_memory_plan_sizes_the_sample_and_refuses_a_budget_too_small():
    import pytest

    from shap_instances.exceptions import MemoryBudgetError
    from shap_instances.report._plan import BYTES_PER_SAMPLED_ENTRY, memory_plan

    assert memory_plan(40_000, 10_000, 20, 8 * 2**30)[0] == 200  # the time rule's 200 rows fit in 4 GiB
    rows, line = memory_plan(40_000, 10_000, 20, 2**30)
    assert 2 <= rows < 200 and rows * BYTES_PER_SAMPLED_ENTRY * 40_000 <= 2**30 / 2 and "MiB" in line
    with pytest.raises(MemoryBudgetError, match=r"raise --max-memory .* to at least"):
        memory_plan(40_000, 10_000, 20, 2**20)


def test_report_command_refuses_a_tiny_memory_budget_before_any_work(tmp_path, capsys):
    from shap_instances.cli import main

    X, y = load_diabetes()
    data = tmp_path / "d.csv"
    X.assign(y=y).to_csv(data, index=False)
    out = tmp_path / "r"
    assert main(["report", "--data", str(data), "--target", "y", "--out", str(out), "--max-memory", "0.0001"]) == 2
    err = capsys.readouterr().err
    assert "needs about 2.1 MiB" in err and "memory budget of 0.1 MiB" in err and "raise --max-memory" in err
    assert not out.exists()


@pytest.mark.slow
def test_report_under_a_small_memory_budget_samples_fewer_rows(tmp_path):
    """A budget that holds the data but not the full decomposition: the report samples the explained rows it
    fits, says so, and every figure is still written."""
    from shap_instances.report._plan import memory_plan

    X, y = load_diabetes()
    budget = 1.5 * 2**20
    rows, _ = memory_plan(120, 30, 10, budget)
    assert 2 <= rows < 120
    html = run_report(X.iloc[:150], y.iloc[:150], out=tmp_path, silent=True, time_budget=30,
                      max_memory=budget).read_text()
    assert f"a random sample of {rows:,} of the 120 explained rows" in html
    assert sorted(p.stem for p in tmp_path.glob("*.png")) == sorted(FIGURES)


def test_trust_comment_says_what_the_bars_show():
    import numpy as np

    from shap_instances.report._forest import trust_comment
    from shap_instances.weighted_targets import trust_decile_table

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

    from shap_instances.report import fit_model
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


def test_a_forest_with_rows_never_out_of_bag_is_said_in_words_not_warned():
    """Before: with the report's fewest trees some training rows are in-bag in every tree, and scikit-learn's
    "Some inputs do not have OOB scores" (with its source line, "warn(") broke into the progress bar on stderr;
    now the fit is quiet and the section says how many rows lack an out-of-bag prediction, counted
    independently here from scikit-learn's own out-of-bag predictions."""
    import warnings

    import numpy as np
    from sklearn.model_selection import train_test_split

    from shap_instances.explainers.gap import GapExplainer
    from shap_instances.report._context import prepare
    from shap_instances.report._forest import _never_out_of_bag, grow_forest

    X, y = load_diabetes()
    parts = train_test_split(X.iloc[:200], y.iloc[:200], test_size=0.2, random_state=0)
    context = prepare(*parts, task="regression", model="auto", seed=0, silent=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # scikit-learn's warning fails the test
        forest = grow_forest(context, 3, oob=True)  # 3 trees: about a quarter of the rows are never out-of-bag
    n = len(context.F_train)
    never = int((forest.oob_prediction_ == 0).sum())  # scikit-learn predicts 0 for them; the targets are above 25
    assert never > 0
    sentence = _never_out_of_bag(GapExplainer(forest, context.F_train, y=np.asarray(parts[2])), 3)
    assert sentence is not None and sentence.startswith(f"{never:,} of the {n:,} training rows are in-bag")


def test_report_budget_counts_from_the_process_start():
    """The command's --time-budget includes the interpreter's start and the imports: the age of the process."""
    import time

    from shap_instances.cli._budget import _process_age

    first = _process_age()
    time.sleep(0.2)
    second = _process_age()
    assert first > 0 and 0.1 <= second - first <= 5.0


@pytest.mark.parametrize("from_python", [True, False])
def test_report_budget_origin_is_the_call_from_python_and_the_process_as_a_program(monkeypatch, tmp_path,
                                                                                    from_python):
    """``main([...])`` in a process that has run for a long time keeps its budget (it counts from the call); the
    command line (``main()``, arguments from ``sys.argv``) counts from the process start."""
    import sys

    import shap_instances.report as report
    from shap_instances import cli
    from shap_instances.cli import _budget

    budgets = []

    def fake_run_report(*args, time_budget, startup, **kwargs):
        budgets.append(time_budget)
        assert time_budget + startup == pytest.approx(150)  # the start-up is said beside the budget, not lost
        return tmp_path / "index.html"

    monkeypatch.setattr(report, "run_report", fake_run_report)
    monkeypatch.setattr(_budget, "_process_age", lambda: 100.0)  # the process started 100 s ago
    monkeypatch.setattr(_budget, "_STARTED", time.perf_counter())  # and imported the command line just now (a long
    # test session imported it minutes ago: that age, not the process's 100 s, would count)
    arguments = ["report", "--out", str(tmp_path / "r"), "--silent", "--time-budget", "150"]
    if from_python:
        assert cli.main(arguments) == 0
        assert 140 < budgets[0] <= 150  # loading the data, not the process's 100 s, counts
    else:
        monkeypatch.setattr(sys, "argv", ["shap-instances", *arguments])
        assert cli.main() == 0
        assert budgets[0] <= 50  # the process's 100 s count


@pytest.mark.slow
def test_the_report_says_what_start_up_took_from_the_budget(tmp_path, capsys):
    """Before: the command's default --time-budget 180 was printed as "time budget 159 s", 21 s of start-up
    deducted without a word; the plan, the intro and the overview now say "180 s, of which 21 s went to start-up:
    159 s planned"."""
    import shap_instances.report as report
    from shap_instances.datasets import load_diabetes

    X, y = load_diabetes()
    path = report.run_report(X.iloc[:120], y.iloc[:120], out=tmp_path / "r", time_budget=159.2, startup=20.8,
                             max_evals=1210)
    said = "180 s, of which 21 s went to start-up: 159 s planned"
    plan = capsys.readouterr().err
    assert f"plan for a time budget of {said} (" in plan
    page = path.read_text()
    assert f"time budget {said}." in page and f"(time budget {said})." in page
    from shap_instances.exceptions import InvalidParameterError

    with pytest.raises(InvalidParameterError, match=r"run_report: startup must be .*\[0, inf\)"):
        report.run_report(X, y, out=tmp_path / "s", startup=-1.0)


#: How many times one report (120 rows of the diabetes data, 96 training rows) validates its training rows: once per
#: matrix of them (the linear models' standardised rows, the forest's unscaled float32 ones), however many explainers
#: get them (run_report validates within utils.validating_once; before: 12, once per explainer). A ratchet.
TRAINING_VALIDATIONS = 2

#: How many times one report enters forest/_trust (gap_trust_scores): the forest's cost probe three times (the
#: kernels' compilation, a first and a second timed call), its section once. A ratchet.
TRUST_ENTRIES = 4


@pytest.mark.slow
def test_one_report_validates_its_training_rows_a_bounded_number_of_times(tmp_path, monkeypatch):
    """Every validation check_data runs (utils/_validation.py's _checked_data) counted, and every entry into the
    forest's trust scores."""
    import shap_instances.forest._trust as trust
    import shap_instances.report as report
    from shap_instances.utils import _validation

    validated, checked, entries = [], _validation._checked_data, []
    monkeypatch.setattr(_validation, "_checked_data",
                        lambda X, *args: validated.append(np.shape(X)[0] if np.ndim(X) else 0) or checked(X, *args))
    scores = trust.gap_trust_scores
    monkeypatch.setattr(trust, "gap_trust_scores", lambda *args, **kwargs: entries.append(1) or scores(*args, **kwargs))
    X, y = load_diabetes()
    report.run_report(X.iloc[:120], y.iloc[:120], out=tmp_path / "r", silent=True, time_budget=60, max_evals=1210)
    assert 0 < validated.count(96) <= TRAINING_VALIDATIONS, validated
    assert 0 < len(entries) <= TRUST_ENTRIES, len(entries)


@pytest.mark.parametrize("option", [{"max_memory": 0}, {"max_memory": -1.0}, {"time_budget": float("nan")},
                                    {"time_budget": 0}])
def test_run_report_refuses_a_budget_that_is_not_positive(option, tmp_path):
    """Checked at the boundary, before the data are split or a model is fitted."""
    from shap_instances.exceptions import InvalidParameterError
    from shap_instances.report import run_report

    X, y = load_diabetes()
    from shap_instances.utils import RUN_OPTIONS

    name = next(iter(option))
    refused = f"run_report: {name} must be (None or )?" + re.escape(str(RUN_OPTIONS[name].allowed))
    with pytest.raises(InvalidParameterError, match=refused):
        run_report(X.iloc[:60], y.iloc[:60], out=tmp_path / "r", silent=True, **option)
    assert not (tmp_path / "r").exists()


@pytest.mark.slow
def test_overview_flags_a_row_identifier_column(tmp_path):
    """A column with a different whole number on every row (a row id, here in the order of the target) is named
    in the overview, with what to do; ordinary columns are not."""
    import html

    from shap_instances.report import run_report

    X, y = load_diabetes()
    X = X.iloc[:120].copy()
    X.insert(0, "row_id", np.argsort(np.argsort(y.iloc[:120].to_numpy())))  # leaks the target's order
    page = html.unescape(run_report(X, y.iloc[:120], out=tmp_path / "r", silent=True, time_budget=30).read_text())
    assert "Column(s) row_id take a different whole number on every training row" in page
    assert "Column(s) age" not in page and "Column(s) bmi" not in page


@pytest.mark.parametrize("most", [1_000, 5])
def test_the_logistic_model_reaches_its_optimum(monkeypatch, most):
    """The command line's logistic model is at the optimum of its objective (gradient checked by hand), with the
    full-Hessian solver or, above ``MAX_CHOLESKY_COEFFICIENTS``, newton-cg; L-BFGS stopped far from it."""
    import pandas as pd

    import shap_instances.report._models as models
    from shap_instances.report import encode, final_estimator, fit_model

    monkeypatch.setattr(models, "MAX_CHOLESKY_COEFFICIENTS", most)
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.normal(size=600), "b": rng.normal(size=600),
                      "colour": rng.choice(["red", "green", "blue"], size=600)})
    y = np.where(X["a"] + (X["colour"] == "red") + rng.normal(size=600) > 0.5, "yes", "no")
    y[X["b"] > 1.2] = "maybe"
    model = fit_model("logistic", "classification", X, y)
    estimator = final_estimator(model)
    assert estimator.solver == ("newton-cholesky" if most == 1_000 else "newton-cg")
    Z = encode(model, X).to_numpy(dtype=float)
    indicator = (y[:, None] == estimator.classes_[None, :]).astype(float)
    gradient = Z.T @ (estimator.predict_proba(encode(model, X)) - indicator) + estimator.coef_.T / estimator.C
    assert np.abs(gradient).max() < 1e-6


def test_helpful_harmful_lists_only_rows_beyond_their_error_with_95_percent_bars():
    """Before: the "10 most helpful" included rows of mean 0.0008 and 0.0006 with standard errors 0.015 and 0.012,
    and no error bars. Now a row is listed only when it is away from 0 by more than ranking_z(n) errors, the
    legend counts the rows listed, and each bar carries +/- 1.96 standard errors."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np
    import pandas as pd

    from shap_instances._explanation import Z_95
    from shap_instances.report import _figures
    from shap_instances.utils import ranking_z

    rng = np.random.default_rng(0)
    n = 400
    contribution = pd.Series(rng.normal(0, 0.0005, n), index=[f"r{i}" for i in range(n)])
    errors = pd.Series(0.012, index=contribution.index)
    contribution.iloc[:3] = [0.2, 0.1, 0.06]  # three rows helpful beyond their error (z = 3.84: 0.046)
    contribution.iloc[3:5] = [0.0008, 0.0006]
    contribution.iloc[17] = 0.03  # beyond 1.96 errors, within the 3.84 of ranking 400 rows: noise can do that
    contribution.iloc[5:17] = -np.linspace(0.06, 0.2, 12)  # twelve harmful
    assert ranking_z(n) * 0.012 < 0.06
    fig, ax = plt.subplots()
    _figures.helpful_harmful_bars(ax, contribution, errors, k=10)
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert labels[:3] == ["row r0", "row r1", "row r2"] and not {"row r3", "row r4", "row r17"} & set(labels)
    assert len(labels) == 13 and labels[-1] == "row r16"  # the 10 most harmful: the most harmful last
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert legend == ["3 helpful beyond their error (the rest within noise)", "10 most harmful (beyond their error)",
                      "95% interval (+/- 1.96 standard errors)"]
    (segments,) = [c for c in ax.collections if c.get_segments()]  # the error bars: value -/+ 1.96 se
    for (x0, _), (x1, _) in (s[:2] for s in segments.get_segments()):
        assert x1 - x0 == pytest.approx(2 * Z_95 * 0.012)
    assert _figures.beyond_noise_sentence(3, 12, 10) == ("3 rows are helpful beyond their error (the rest are within "
                                                         "noise); the 10 most harmful beyond their error.")
    plt.close(fig)
    fig, ax = plt.subplots()
    _figures.helpful_harmful_bars(ax, contribution * 0.01, errors, k=10)  # nothing beyond the noise
    assert not [t.get_text() for t in ax.get_yticklabels()] and "No training row" in ax.texts[0].get_text()
    plt.close(fig)
