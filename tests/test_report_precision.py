"""The report spends its budget on precision: no fixed cap, --max-evals, "not enough precision" for the parts whose
error is above 30% of their spread (with the budget that would make them precise), and the captions that explain
the data values beside the contribution means and the sign of "harmful".

Independent checks: efficiency (the contribution means add up to minus the mean absolute residual), the data value
is the square of the plain mean, the 1/sqrt(m) extrapolation recomputed from instances.csv, pooled rounds against
their closed form.
"""

from __future__ import annotations

import html
import re
import time

import numpy as np
import pandas as pd
import pytest

from shap_instances._explanation import build_explanation
from shap_instances.datasets import load_diabetes
from shap_instances.exceptions import InvalidParameterError
from shap_instances.metrics import contribution_statistics
from shap_instances.report import run_report
from shap_instances.report._plan import PRECISE_SHARE, Costs, make_plan
from shap_instances.report._precision import Precision
from shap_instances.report._residual import (
    _errors,
    _explainer,
    _pool,
    _stop_reason,
    refine_sample,
    variance_precision,
)
from shap_instances.utils import spread_test


def _text(path) -> str:
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", path.read_text())))


@pytest.fixture(scope="module")
def starved(tmp_path_factory):
    """A report whose residual section gets 10 permutations in all (--max-evals): too few to be precise."""
    X, y = load_diabetes()
    out = tmp_path_factory.mktemp("starved")
    n_train = 80
    path = run_report(X.iloc[:100], y.iloc[:100], out=out, silent=True, time_budget=60,
                      max_evals=10 * (n_train + 1))
    return path, pd.read_csv(out / "instances.csv", index_col=0)


def test_imprecise_parts_are_listed_below_the_precise_sections_not_shown(starved):
    path, _ = starved
    text = _text(path)
    assert "Not enough precision" in text
    # below every precise section (the forest is the last one), and the noise is not printed as results
    assert text.rindex("Not enough precision") > text.index("Random forest: which training rows")
    assert "Most helpful training rows" not in text and "CC plot: mean composition" not in text
    assert not (path.parent / "helpful_harmful.png").exists() and not (path.parent / "cc_plot.png").exists()
    assert "stopped at --max-evals" in text
    assert re.search(r"rerun with --time-budget \d+ or more", text)
    # the sampled rows get no more rounds beyond --max-evals (10 permutations in all)
    sampled = int(re.search(r"every row is decomposed \(([\d,]+) permutations", text).group(1))
    aggregate = int(re.search(r"([\d,]+) antithetic permutations in", text).group(1))
    assert sampled + aggregate <= 10, (sampled, aggregate)


def test_the_budget_named_follows_the_error_of_the_means(starved):
    """The contribution means of 10 permutations do not spread beyond their noise: the spread test, the spread
    resolved and the permutations that resolve half of it (4 times those made) recomputed from instances.csv. Where
    the rows do spread, the permutations named are (e / e')^2 times those made, e' the error at 30% of the spread."""
    path, table = starved
    text = _text(path)
    done = int(re.search(r"([\d,]+) antithetic permutations in", text).group(1).replace(",", ""))
    test = spread_test(table["contribution_mean"], table["contribution_mean_se"])
    share = round(100 * test.error / test.spread)
    assert not test.detected, test
    match = re.search(r"The contribution means \(.*?\): the error is (\d+)% of the spread .*? resolves a true "
                      r"spread of ([\d.e+-]+) .*? would take ([\d,]+) permutations \(([\d,]+) evaluations\)", text)
    assert match, text[text.index("Not enough precision"):]
    assert int(match.group(1)) == share and float(match.group(2)) == float(f"{test.resolved:.3g}")
    assert int(match.group(3).replace(",", "")) == 4 * done and int(match.group(4).replace(",", "")) == 4 * done * 81
    assert "no budget" not in text


def test_the_budget_named_for_rows_that_spread_follows_the_error():
    """Rows that spread beyond their noise but not precisely: (e / e')^2 times the permutations, e' the error at 30%
    of the true spread sqrt(s^2 - e^2), recomputed here."""
    values, errors = np.linspace(-1.0, 1.0, 50), np.full(50, 0.5)
    part = Precision.of("the means", values, errors, permutations=10, seconds=1.0, n_players=50)
    true_spread = np.sqrt(values.std(ddof=1) ** 2 - 0.25)
    factor = (0.5 / (true_spread * PRECISE_SHARE / np.sqrt(1 - PRECISE_SHARE**2))) ** 2
    assert part.test.detected and not part.precise
    assert f"About {factor:.1f} times the permutations would make it precise: {int(np.ceil(factor * 10)):,} " \
           f"permutations ({int(np.ceil(factor * 10)) * 51:,} evaluations)" in part.needs(180)


def test_efficiency_behind_the_harmful_caption_and_the_data_values(starved):
    """Each residual's contributions add up to it (v(empty) = 0), so the contribution means add up to minus the
    mean absolute residual; the data value is the square of the plain mean."""
    _, table = starved
    np.testing.assert_allclose(table["contribution_mean"].sum(), -table["residual"].abs().mean(), rtol=1e-9)
    np.testing.assert_allclose(table["instance_value"], table["plain_mean"] ** 2, rtol=1e-12)


def test_max_evals_too_small_is_refused_before_any_work():
    X, y = load_diabetes()
    start = time.perf_counter()
    with pytest.raises(InvalidParameterError, match=r"--max-evals 500 allows 6 permutations .* at least 648"):
        run_report(X.iloc[:100], y.iloc[:100], out="/nonexistent/never-written", silent=True, max_evals=500)
    assert time.perf_counter() - start < 5
    with pytest.raises(InvalidParameterError, match=r"max_evals must be None or an int in \[1, 1000000000000000\]"):
        run_report(X.iloc[:100], y.iloc[:100], silent=True, max_evals=0)


def test_plan_splits_max_evals_and_has_no_fixed_cap():
    costs = Costs(spent=2.0, per_permutation=0.01, per_aggregate=0.001, per_tree=0.01, gap_fixed_per_tree=0.0,
                  gap_per_row_tree=0.0, n_train=100, n_test=25, n_explained=100, n_features=5)
    free = make_plan(costs, 600, residual=True, n_players=100)
    assert free.n_permutations > 100 * 100 and free.max_evals is None
    for evals in (1_000, 5_555, 101_000):
        plan = make_plan(costs, 600, residual=True, n_players=100, max_evals=evals)
        assert plan.sample_permutations + plan.n_permutations <= evals // 101
        assert plan.sample_permutations <= evals // 101 // 3 + 1 and plan.n_permutations >= 4
        assert "--max-evals" in plan.sections["residual"].what


def test_pooled_rounds_weight_by_permutations():
    names = ["a", "b", "c"]
    first = build_explanation(np.array([[1.0, 2.0, 3.0]]), 0.0, feature_names=names,
                              standard_errors=np.full((1, 3), 0.4))
    second = build_explanation(np.array([[2.0, 2.0, 0.0]]), 0.0, feature_names=names,
                               standard_errors=np.full((1, 3), 0.2))
    rounds = [(10, np.asarray(first.values), np.asarray(first.error_std)),
              (30, np.asarray(second.values), np.asarray(second.error_std))]
    pooled = _pool(second, rounds)
    np.testing.assert_allclose(pooled.values, [[1.75, 2.0, 0.75]])
    np.testing.assert_allclose(pooled.error_std, np.sqrt((0.25 * 0.4) ** 2 + (0.75 * 0.2) ** 2))
    assert list(pooled.feature_names) == names


@pytest.mark.parametrize("errors, left, timed_out, evals, expected", [
    (0.01, 100.0, False, False, "precise"),
    (0.5, 100.0, True, False, "time"),
    (0.5, 0.1, False, False, "time"),
    (0.5, 100.0, False, True, "max_evals"),
    (0.5, 100.0, False, False, ""),          # (0.5 / 0.3)^2 times 1 s: within the 100 s left, go on
    (5.0, 10.0, False, False, "out of reach"),  # the spread is mostly noise: 30% is far beyond 10 s
])
def test_stop_reasons(errors, left, timed_out, evals, expected):
    values = np.array([np.linspace(-1.0, 1.0, 50), np.linspace(-1.0, 1.0, 50)])
    pooled = build_explanation(values, 0.0, feature_names=[str(i) for i in range(50)],
                               standard_errors=np.full(values.shape, errors))
    assert _stop_reason(pooled, 0.2, spent=1.0, left=left, timed_out=timed_out, evals=evals) == expected


def test_rows_within_their_noise_get_a_bound_and_a_budget_never_no_budget():
    """Before: "the rows do not differ detectably ... so no budget would make it readable" whenever the observed
    spread was at most the noise. Now the test of :func:`spread_test`, the bound of the true spread, the spread this
    budget resolves, and four times the permutations to resolve half of it."""
    noise = Precision.of("the means", np.array([0.1, -0.1, 0.1, -0.1]), np.full(4, 0.2), permutations=10,
                         seconds=1.0, n_players=4)
    test = spread_test(np.array([0.1, -0.1, 0.1, -0.1]), np.full(4, 0.2))
    assert not noise.precise and not test.detected and noise.test == test
    text = noise.needs(180)
    assert "no budget" not in text and "do not differ detectably at this budget" in text
    assert f"their true spread is below {test.upper:.3g}" in text
    assert f"resolves a true spread of {test.resolved:.3g}" in text
    assert "would take 40 permutations (200 evaluations)" in text and "--time-budget 183 or more" in text
    assert f"below {test.upper:.3g}, which this budget resolves" in noise.sentence()
    spread = Precision.of("the means", np.linspace(-1.0, 1.0, 50), np.full(50, 0.5), permutations=10, seconds=1.0,
                          n_players=50)
    assert spread.test is not None and spread.test.detected and "About " in spread.needs(180)
    assert "beyond this noise" not in spread.sentence()
    pooled = Precision.pooled("the variances", np.ones(3), np.full(3, 2.0), permutations=10, seconds=1.0, n_players=3)
    assert "no budget" not in pooled.needs(60) and "halving it would take 40 permutations" in pooled.needs(60)


def test_precision_without_a_standard_error_says_so():
    unknown = Precision.of("the variances", np.array([0.1, 0.3]), np.array([np.inf, np.inf]), permutations=2,
                           seconds=1.0, n_players=2)
    assert not unknown.precise
    assert "no standard error yet" in unknown.sentence() and "too few for a standard error" in unknown.needs(60)


def test_the_noise_of_the_contribution_variances_matches_repeated_runs():
    """The variance section's error, from one run's standard errors, against the spread of 40 repeated runs of the
    same rows: 16 permutations of 160 training rows, where a row's marginal contributions are heavy-tailed (large
    only when it joins a small coalition, about 16 / 160 of the times) and most rows' sample variances miss the
    tail. The median over rows of the noise estimates was 5% of the truth here; the pooled mean is within 20%."""
    from sklearn.linear_model import Ridge

    from shap_instances import InstanceKernelExplainer
    from shap_instances.metrics import contribution_statistics

    X, y = load_diabetes()
    runs = [InstanceKernelExplainer(Ridge(), X[:160], y=y[:160], n_permutations=16, random_state=seed,
                                    silent=True)(X[:24], y[:24]) for seed in range(40)]
    realised = np.array([run.values for run in runs]).var(axis=0, ddof=1).mean()  # each entry's noise, pooled
    estimates = np.array([variance_precision(contribution_statistics(run), permutations=16, seconds=1.0,
                                             n_players=160).error ** 2 for run in runs]) / realised
    assert 0.8 < np.median(estimates) < 1.25, np.median(estimates)
    assert estimates.min() > 0.4 and estimates.max() < 2.5, (estimates.min(), estimates.max())


@pytest.fixture()
def sampled(monkeypatch):
    """A report context on 112 diabetes training rows and the decomposition of 30 of them, 4 permutations."""
    from types import SimpleNamespace

    from sklearn.model_selection import train_test_split

    from shap_instances.report._context import prepare

    X, y = load_diabetes()
    context = prepare(*train_test_split(X.iloc[:150], y.iloc[:150], random_state=0), task="regression",
                      model="auto", seed=0, silent=True)
    context.plan = SimpleNamespace(batch_size=8)
    return context, _explainer(context, n_permutations=4, silent=True).explain_sample(30)


@pytest.mark.slow  # about 4 s
def test_an_imprecise_variance_gets_the_time_left(sampled, monkeypatch):
    """While the contribution variances are not precise the sampled rows get more rounds until the time is spent
    (here never precise: the threshold is lowered to 0.1%), and their pooled error falls as one over the square root
    of the permutations."""
    import shap_instances.report._precision as precision

    context, sample = sampled
    monkeypatch.setattr(precision, "PRECISE_SHARE", 0.001)
    before = _errors(sample)
    start = time.perf_counter()
    pooled, permutations, _ = refine_sample(context, sample, 4, 0.1, start + 4.0)
    spent = time.perf_counter() - start
    assert 0.8 * 4.0 < spent < 4.0 + 1.5 and permutations > 40
    assert pooled.values.shape == sample.values.shape
    np.testing.assert_array_equal(pooled.sampled_rows, sample.sampled_rows)
    ratio = np.sqrt(np.mean(_errors(pooled) ** 2) / np.mean(before**2)) * np.sqrt(permutations / 4)
    assert 0.6 < ratio < 1.6, ratio
    capped = refine_sample(context, sample, 4, 0.1, time.perf_counter() + 3.0, most=12)[1]
    assert capped <= 4 + 12


def test_a_precise_variance_stops_the_rounds(sampled):
    context, sample = sampled
    start = time.perf_counter()
    pooled, permutations, seconds = refine_sample(context, sample, 4, 0.1, start + 30.0)
    assert time.perf_counter() - start < 10 and permutations > 4
    table = contribution_statistics(pooled)
    assert variance_precision(table, permutations=permutations, seconds=seconds, n_players=112).precise


def test_the_section_that_spends_the_time_left_runs_last_and_stays_in_its_place():
    """The residual decomposition (``elastic``) is built after the sections whose estimates may overstate their
    time, and the plan lists it last; the report keeps the sections' own order."""
    from types import SimpleNamespace

    from shap_instances.report._html import Report
    from shap_instances.report._plan import SectionStep
    from shap_instances.report._report import _build_sections, _run_order

    ran: list[str] = []

    def step(key: str, elastic: bool = False) -> SimpleNamespace:
        def build(report, context, bar):
            ran.append(key)
            report.section(key)
        return SimpleNamespace(key=key, elastic=elastic, build=build)

    steps = [step("overview"), step("residual", elastic=True), step("representer"), step("forest")]
    sections = _run_order(steps, {key: SectionStep(key, "", 1.0) for key in
                                  ("overview", "residual", "representer", "forest")})
    assert list(sections) == ["overview", "representer", "forest", "residual"]
    report, context = Report(title="t", intro=""), SimpleNamespace(plan=SimpleNamespace(sections=dict(sections)),
                                                                   silent=True, timings={}, end=float("inf"), cut={})
    _build_sections(report, context, steps)
    assert ran == ["overview", "representer", "forest", "residual"]
    assert [section.title for section in report.sections] == ["overview", "residual", "representer", "forest"]
    assert set(context.timings) == set(sections)


def test_a_section_that_runs_before_the_residual_one_leaves_it_its_planned_time():
    """The forest now runs before the residual decomposition: its re-planning of trees must stop at the deadline
    less the residual section's planned seconds, not at the report's deadline."""
    from types import SimpleNamespace

    from shap_instances.report._context import Context

    plan = SimpleNamespace(sections={key: SimpleNamespace(estimate=seconds) for key, seconds in
                                     (("overview", 1.0), ("representer", 2.0), ("forest", 10.0), ("residual", 100.0))})
    context = SimpleNamespace(plan=plan, deadline=500.0, timings={"overview": 0.5, "representer": 1.0})
    assert Context.section_deadline(context, "forest") == 400.0
    context.timings["forest"] = 7.0
    assert Context.section_deadline(context, "residual") == 500.0
