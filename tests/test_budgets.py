"""Budgets refused before the work (issue 24 item 3, issue 26 item 5): the plan is timed on one refit."""

from __future__ import annotations

import re
import time
import warnings

import numpy as np
import pytest
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.datasets import load_diabetes

from shap_instances import InstanceKernelExplainer
from shap_instances.approximators import PermutationApproximator
from shap_instances.approximators._budget import DEFAULT_TIME_LIMIT
from shap_instances.exceptions import BudgetError
from shap_instances.games import Game


class SlowMean(RegressorMixin, BaseEstimator):
    """Predicts the training mean; ``fit`` sleeps ``seconds`` (a stand-in for an expensive refit)."""

    def __init__(self, seconds: float = 0.005) -> None:
        self.seconds = seconds

    def fit(self, X, y):
        time.sleep(self.seconds)
        self.mean_ = float(np.mean(y))
        return self

    def predict(self, X):
        return np.full(len(X), self.mean_)


def _data(n=40):
    X, y = load_diabetes(return_X_y=True)
    return X[:n], y[:n]


def _explainer(n=40, **kw):
    X, y = _data(n)
    return InstanceKernelExplainer(SlowMean().fit(X, y), X, y=y, random_state=0, silent=True, **kw), X[:2], y[:2]


def test_a_huge_run_is_refused_at_once_with_the_estimate_and_the_remedies():
    explainer, X, y = _explainer(80, n_permutations=10**12)  # one pair of permutations: 2 x 81 fits of 5 ms
    start = time.perf_counter()
    with pytest.raises(BudgetError, match=r"refused before the work.*days.*max_time=.*fewer permutations.*"
                                          r"fewer rows.*fast refit path"):
        explainer(X, y)
    assert time.perf_counter() - start < 0.5  # one or two refits timed, not one pair of permutations (0.8 s)


def test_one_unit_above_max_time_is_refused_and_a_run_that_fits_runs():
    explainer, X, y = _explainer(n_permutations=4, max_time=0.05)  # one pair: 2 x 41 refits of 5 ms > 0.05 s
    with pytest.raises(BudgetError, match=r"one antithetic pair.*max_time=0.05"):
        explainer(X, y)
    explainer, X, y = _explainer(n_permutations=4, max_time=30.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        explanation = explainer(X, y)
    assert explainer.result_.info["n_permutations"] == 4 and np.isfinite(explanation.values).all()


def test_the_default_limit_and_max_time_lifting_it(monkeypatch):
    from shap_instances.approximators import _budget

    monkeypatch.setattr(_budget, "DEFAULT_TIME_LIMIT", 1.0)  # 40 permutations of 21 refits of 5 ms: ~4 s
    explainer, X, y = _explainer(20, n_permutations=40)
    with pytest.raises(BudgetError, match="default limit"):
        explainer(X, y)
    explainer, X, y = _explainer(20, n_permutations=40, max_time=0.8)  # anytime: cut down to fit, not refused
    explainer(X, y)
    assert explainer.result_.info["stopped_by"] == "max_time"
    assert DEFAULT_TIME_LIMIT == 24 * 3600


def test_the_plan_is_printed_before_the_work(capsys):
    X, y = _data(12)
    from shap_instances.games import ResidualGame

    game = ResidualGame(SlowMean(0.001), X, y)
    PermutationApproximator(n_permutations=4, random_state=0).estimate(game)
    assert "plan: 4 permutations (left), about" in capsys.readouterr().err


class _SlowWalk(Game):
    """A cheap game whose walk costs ``seconds`` a prefix (a refit shortcut's fused walk, slowed down), with
    ``cuts_walks`` as given: the value of a coalition is its size."""

    cheap = True

    def __init__(self, n_players, seconds, cuts_walks):
        super().__init__(n_players, 1)
        self.seconds, self.cuts_walks = seconds, cuts_walks
        self.walked = []  # the length of every walk asked for

    def value_function(self, coalitions):
        return coalitions.sum(axis=1, keepdims=True).astype(float)

    def prefix_values(self, permutations):
        self.walked.append(permutations.shape[1])
        time.sleep(self.seconds * permutations.size)
        return np.broadcast_to(np.arange(permutations.shape[1] + 1.0)[None, :, None],
                               (len(permutations), permutations.shape[1] + 1, 1)).copy()


def test_a_cheap_games_first_pair_is_refused_from_a_short_walk_not_run_whole():
    """Issue 40 item 2: a refit shortcut's first antithetic pair ran unbounded (54 s of a 60 s budget on a quarter
    of a core); now a walk of a sixteenth of the players is timed first, and a pair that cannot fit is refused."""
    game = _SlowWalk(160, 0.01, cuts_walks=True)  # a pair: 2 x 1.6 s; the probe walks 10 prefixes (0.1 s)
    start = time.perf_counter()
    with pytest.raises(BudgetError, match=r"one antithetic pair.*the first 10 places of an order of the 160 players"
                                          r".*max_time=0.5"):
        PermutationApproximator(n_permutations=8, max_time=0.5, random_state=0, silent=True).estimate(game)
    assert time.perf_counter() - start < 0.5 and max(game.walked) == 10
    game = _SlowWalk(160, 0.01, cuts_walks=False)  # no short walk: the pair runs whole, as before
    result = PermutationApproximator(n_permutations=8, max_time=0.5, random_state=0, silent=True).estimate(game)
    assert result.info["n_permutations"] == 2 and game.walked == [160]


class _FirstCallSlowWalk(_SlowWalk):
    """A cheap walk whose first call in the process also pays a one-off ``setup`` (numba loading or compiling its
    kernels)."""

    def __init__(self, n_players, seconds, setup):
        super().__init__(n_players, seconds, cuts_walks=True)
        self.setup = setup

    def prefix_values(self, permutations):
        if self.setup:
            time.sleep(self.setup)
            self.setup = 0.0
        return super().prefix_values(permutations)


def test_a_first_calls_setup_in_the_probe_does_not_refuse_a_run_that_fits():
    """Seen in bench_engine.py on the quiet machine: a ridge walk's first call in a process, timed with its kernels'
    loading, put 20,000 permutations at 30 hours (5.48 s each; the whole run takes about 2 s) and refused them: the
    probe was measured again only when one unit did not fit, not when the whole run would be refused. Here the
    first walk's set-up puts a permutation at 0.5 s x 16 parts (20,000 of them: 44 hours); measured again, the run
    is planned at its own pace and runs."""
    game = _FirstCallSlowWalk(160, 1e-7, setup=0.5)
    result = PermutationApproximator(n_permutations=20_000, random_state=0, silent=True).estimate(game)
    assert result.info["n_permutations"] == 20_000
    assert game.walked[:2] == [10, 10]  # the probe walked twice


def test_a_probed_run_stops_after_its_first_unit_when_the_next_would_overrun():
    """Issue 40 item 2: the first batch's time was never trusted, so a second unit always ran, past the budget
    (instance_kernel on a quarter of a core: 79 s for 60). Where the probe agrees that the next unit cannot fit, the
    run stops after one, within its budget (its standard errors then say they are not estimated)."""
    game = _SlowWalk(160, 0.005, cuts_walks=True)  # a pair: 1.6 s; 2.0 s hold one pair, not two
    start = time.perf_counter()
    result = PermutationApproximator(n_permutations=8, max_time=2.0, random_state=0, silent=True).estimate(game)
    assert result.info["n_permutations"] == 2 and result.info["stopped_by"] == "max_time"
    assert time.perf_counter() - start < 2.2
    unprobed = _SlowWalk(160, 0.005, cuts_walks=False)  # no probe: the first batch alone does not stop it
    result = PermutationApproximator(n_permutations=8, max_time=2.0, random_state=0, silent=True).estimate(unprobed)
    assert result.info["n_permutations"] == 4


class _GrowingWalk(_SlowWalk):
    """A walk whose step costs ``seconds`` times the prefix's length (a logistic refit's Newton steps run over the
    prefix's rows) and can start at a prefix (``starts_walks``, with ``first``)."""

    starts_walks = True

    def prefix_values(self, permutations, first=0):
        k, s = permutations.shape
        self.walked.append((first, s))
        time.sleep(self.seconds * k * sum(range(first + 1, s + 1)))
        return np.broadcast_to(np.arange(first, s + 1.0)[None, :, None], (k, s + 1 - first, 1)).copy()


def test_the_probe_of_a_walk_whose_steps_grow_times_the_middle_places():
    """Issue 40 item 2: on a quarter of a core instance_kernel still ran a second pair (73.6 s for 60). The logistic
    walk's steps cost more the longer the prefix, and the probe timed the first sixteenth of the places, which put
    a permutation at about a fifteenth of its time here: the pair below ran (2.6 s for 2.0) and a second one after
    it. A game that starts walks at a prefix now has the middle places timed, where a step costs the walk's mean."""
    game = _GrowingWalk(160, 1e-4, cuts_walks=True)  # a permutation: 1.29 s; its first 10 places 5.5 ms, 76-85 81 ms
    start = time.perf_counter()
    with pytest.raises(BudgetError, match=r"one antithetic pair.*places 76 to 85 of an order of the 160 players"):
        PermutationApproximator(n_permutations=8, max_time=2.0, random_state=0, silent=True).estimate(game)
    assert time.perf_counter() - start < 0.5 and set(game.walked) == {(75, 85)}
    game = _GrowingWalk(160, 1e-4, cuts_walks=True)  # 3.0 s hold one pair (2.6 s), not two
    start = time.perf_counter()
    result = PermutationApproximator(n_permutations=8, max_time=3.0, random_state=0, silent=True).estimate(game)
    assert result.info["n_permutations"] == 2 and time.perf_counter() - start < 3.3


def test_a_cheap_game_that_fits_runs_with_the_same_values_after_its_probe(capsys):
    runs = []
    for cuts_walks in (True, False):
        game = _SlowWalk(40, 0.0, cuts_walks)
        runs.append(PermutationApproximator(n_permutations=8, random_state=3).estimate(game))
    assert np.array_equal(runs[0].values, runs[1].values) and runs[0].n_evaluations == runs[1].n_evaluations
    assert "plan: 8 permutations (left), about" in capsys.readouterr().err


@pytest.mark.parametrize("make", ["ridge", "logistic", "multiclass"])
def test_a_cut_walk_is_the_start_of_the_whole_walk(make):
    """What ``cuts_walks`` promises: a walk of an order's first places gives the values of the whole walk's
    first prefixes, bit for bit, for the residual game and its aggregate."""
    from sklearn.linear_model import LogisticRegression, Ridge

    from shap_instances.games import AggregateGame, ResidualGame

    rng = np.random.default_rng(0)
    X = rng.normal(size=(120, 4))
    y = X @ np.arange(1.0, 5.0) + rng.normal(size=120)
    target = {"ridge": y, "logistic": (y > 0).astype(int), "multiclass": np.digitize(y, [-2.0, 2.0])}[make]
    model = (Ridge() if make == "ridge" else LogisticRegression()).fit(X[:80], target[:80])
    game = ResidualGame(model, X[:80], target[:80], X[80:], target[80:])
    order = rng.permutation(80)[None, :]
    for walked in (game, AggregateGame(game, np.full((40, 2), 1 / 40))):
        assert walked.cheap and walked.cuts_walks
        assert np.array_equal(walked.prefix_values(order[:, :9]), walked.prefix_values(order)[:, :10])


def test_a_walk_started_at_a_prefix_gives_the_whole_walks_values_there():
    """What ``starts_walks`` promises, through the wrappers too (the aggregate of the report, the loss game): the
    walk from a cold fit on an order's first 40 rows gives the whole walk's values from there, to the logistic
    path's tolerance (the whole walk reaches them warm-started); the other games say they start no walk."""
    from sklearn.linear_model import LogisticRegression, Ridge

    from shap_instances.games import AggregateGame, LossGame, ResidualGame

    rng = np.random.default_rng(1)
    X = rng.normal(size=(120, 4))
    y = (X @ np.arange(1.0, 5.0) + rng.normal(size=120) > 0).astype(int)
    game = ResidualGame(LogisticRegression().fit(X[:80], y[:80]), X[:80], y[:80], X[80:], y[80:])
    order = rng.permutation(80)[None, :]
    for walked in (game, AggregateGame(game, np.full((40, 2), 1 / 40)), LossGame(game)):
        assert walked.starts_walks
        started, whole = walked.prefix_values(order, 40), walked.prefix_values(order)[:, 40:]
        assert started.shape == whole.shape and np.allclose(started, whole, rtol=0, atol=2 * game.fast_path.tol)
    old_style = _SlowWalk(5, 0.0, cuts_walks=False)  # a user's Game whose prefix_values takes no ``first``
    assert AggregateGame(old_style, [2.0]).prefix_values(np.arange(5)[None, :]).ravel().tolist() == [0, 2, 4, 6, 8, 10]
    ridge = ResidualGame(Ridge().fit(X[:80], y[:80]), X[:80], y[:80], X[80:], y[80:])
    assert ridge.cuts_walks and not ridge.starts_walks and not AggregateGame(ridge, np.ones(40)).starts_walks
    assert np.array_equal(ridge.prefix_values(order, 40), ridge.prefix_values(order)[:, 40:])


def test_a_game_whose_shortcut_walks_whole_orders_says_so():
    from sklearn.dummy import DummyRegressor
    from sklearn.ensemble import RandomForestRegressor
    from sklearn.naive_bayes import GaussianNB

    from shap_instances.games import ResidualGame

    X, y = _data(30)
    for model, target in ((DummyRegressor(), y), (GaussianNB(), (y > y.mean()).astype(int))):
        game = ResidualGame(model.fit(X, target), X, target)
        assert game.cheap and not game.cuts_walks
    assert not ResidualGame(SlowMean(0.0).fit(X, y), X, y).cuts_walks
    forest = RandomForestRegressor(n_estimators=3, random_state=0).fit(X, y)
    fixed = ResidualGame(forest, X, y, refit="fixed_structure")
    assert fixed.cheap and not fixed.cuts_walks
    with pytest.raises(ValueError, match=r"shape \(k, 30\).*walks no cut order"):
        fixed.prefix_values(np.arange(10)[None, :])  # refused: its kernel read past the order's end (memory)


def test_explain_takes_a_time_budget_and_max_evals_and_refuses_in_one_line(capsys, tmp_path):
    from shap_instances.cli import main

    out = str(tmp_path / "v.csv")
    start = time.perf_counter()
    assert main(["explain", "--explainer", "instance_kernel", "--model", "ridge", "--rows", "2",
                 "--max-evals", str(10**13), "--out", out]) == 2
    assert time.perf_counter() - start < 30
    err = capsys.readouterr().err
    assert "refused before the work" in err and "--time-budget SECONDS" in err and err.count("error:") == 1
    assert main(["explain", "--explainer", "instance_kernel", "--model", "ridge", "--rows", "2", "--time-budget",
                 "60", "--max-evals", "4000", "--out", out]) == 0
    printed = capsys.readouterr()
    assert "plan: " in printed.err and "; RMS standard error" in printed.out
    out = str(tmp_path / "w.csv")
    assert main(["explain", "--explainer", "knn_shapley", "--rows", "2", "--max-evals", "100", "--out", out]) == 2
    assert "--max-evals applies to" in capsys.readouterr().err
    assert main(["explain", "--rows", "2", "--time-budget", "-1", "--out", out]) == 2
    assert "--time-budget: the value must be a finite number in [1, " in capsys.readouterr().err


@pytest.mark.slow
def test_batches_are_cut_to_the_time_left():
    X, y = _data(20)
    from shap_instances.games import ResidualGame

    game = ResidualGame(SlowMean(0.01), X, y)  # one permutation: 21 fits of 10 ms, a batch of 16: ~3.4 s
    start = time.perf_counter()
    result = PermutationApproximator(n_permutations=10**6, max_time=2.0, random_state=0, silent=True).estimate(game)
    assert time.perf_counter() - start < 2.0 + 2.5  # about one unit (~0.5-1 s) past max_time, not a batch (~4-8 s)
    assert result.info["stopped_by"] == "max_time"


def test_kernel_times_one_coalition_before_its_first_batch():
    """A costly game: the kernel design is re-planned to max_time after one timed complementary pair (the probe),
    not after a batch; a first batch of 16 coalitions at 50 ms would alone overrun the 0.3 s by half a second."""
    from shap_instances.approximators import KernelApproximator
    from shap_instances.games import FunctionGame

    weights = np.random.default_rng(0).normal(size=(10, 2))
    calls = []

    def values(masks):
        calls.append(len(masks))
        time.sleep(0.05 * len(masks))
        return np.asarray(masks, dtype=np.float64) @ weights

    start = time.perf_counter()
    result = KernelApproximator(max_evals=400, max_time=0.3, random_state=0, silent=True).estimate(
        FunctionGame(values, 10, 2))
    assert time.perf_counter() - start < 0.3 + 0.45  # the probe, then batches of the re-planned design
    assert result.info["stopped_by"].startswith("max_time") and result.info["n_coalitions"] < 400
    assert calls[:2] == [2, 2]  # v(empty) and v(all), then one complementary pair timed alone (not 16)
    assert result.efficiency_gap() < 1e-10


def test_explain_says_how_precise_sampled_values_are():
    """The one precision sentence (utils.precision_summary) on an explanation, the CLI's last line: exact values
    are called exact, sampled ones get their RMS standard error against their spread."""
    import numpy as np

    from shap_instances._explanation import build_explanation
    from shap_instances.utils import precision_summary

    values = np.array([[3.0, -4.0], [0.0, 0.0]])
    sampled = build_explanation(values, 0.0, feature_names=["a", "b"], standard_errors=np.full((2, 2), 0.5))
    spread = values.std(ddof=1)
    assert sampled.precision == precision_summary(values, np.full((2, 2), 0.5))
    assert sampled.precision.startswith(f"RMS standard error 0.5 = {0.5 / spread:.0%} of the values' spread "
                                        f"({spread:.3g}); the values spread beyond their noise")
    assert build_explanation(values, 0.0, feature_names=["a", "b"]).precision == "exact values (no sampling error)"


def test_kernel_design_cut_mid_evaluation_says_max_time_and_keeps_efficiency():
    """A game that turns slow after the probe: the batches stop when max_time passes, and the evaluated strata keep
    their kernel mass (efficiency holds). On a quiet machine the quick probe leaves the design as planned
    ("max_time"); on a loaded one the probe itself may be slow enough to re-plan it ("max_time (re-planned)"): both
    are stops by the time limit."""
    from shap_instances.approximators import KernelApproximator
    from shap_instances.games import FunctionGame

    weights = np.random.default_rng(0).normal(size=(10, 1))
    calls = []

    def values(masks):
        calls.append(len(masks))
        if len(calls) > 3:  # v(empty), v(all) and the probe are quick
            time.sleep(0.3)
        return np.asarray(masks, dtype=np.float64) @ weights

    result = KernelApproximator(max_evals=1000, max_time=0.5, random_state=0, silent=True, n_jobs=1).estimate(
        FunctionGame(values, 10, 1))
    assert result.info["stopped_by"] in ("max_time", "max_time (re-planned)") and not result.converged
    assert result.info["n_coalitions"] < 1000 and result.efficiency_gap() < 1e-10


class _FakeClock:
    """A clock the test advances: each section 'takes' its planned seconds times the machine's slowdown."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _replanned_report(slowdown: float):
    """(sections run, context, the fake clock's end) of a report whose sections take ``slowdown`` times their plan
    on a 100 s budget: overview 2 s, representer 5 s, label issues 20 s, forest 10 s (least 6 s), the residual
    decomposition last (40 s planned, least 8 s)."""
    from types import SimpleNamespace

    from shap_instances.report._html import Report
    from shap_instances.report._plan import SectionStep
    from shap_instances.report._report import _build_sections

    clock, ran = _FakeClock(), []
    steps = {"overview": SectionStep("overview", "", 2.0), "representer": SectionStep("representer points", "", 5.0),
             "label_issues": SectionStep("label issues", "", 20.0),
             "forest": SectionStep("random forest", "", 10.0, least=6.0),
             "residual": SectionStep("residual decomposition", "", 40.0, least=8.0)}

    def section(key: str) -> SimpleNamespace:
        def build(report, context, bar):
            ran.append(key)
            clock.now += slowdown * steps[key].estimate
        return SimpleNamespace(key=key, elastic=key == "residual", build=build)

    context = SimpleNamespace(plan=SimpleNamespace(sections=dict(steps)), silent=True, timings={}, end=100.0, cut={})
    _build_sections(Report(title="t", intro=""), context, [section(key) for key in steps], clock=clock)
    return ran, context, clock.now


def test_the_plan_is_remade_as_the_sections_run_and_cuts_what_no_longer_fits():
    """A machine three times busier than when the costs were measured: the overview takes 6 s for its 2, so the
    pace is 3 s per planned second; representer (15 s) and label issues (60 s) still fit, then the forest's least
    (18 s) and the residual's (24 s) do not fit in the 16 s left (3 s kept for writing): both are cut before they
    run, with the sentence saying why, and the run ends within its budget instead of at 6 + 15 + 60 + 30 + 120 s."""
    ran, context, ended = _replanned_report(3.0)
    assert ran == ["overview", "representer", "label_issues"]
    assert ended == 81.0 <= 100.0
    assert set(context.cut) == {"forest", "residual"}
    assert "3.0x their planned time" in context.cut["forest"] and "about 18 s" in context.cut["forest"]
    assert "16 s of the time budget are left" in context.cut["residual"]
    assert "forest" not in context.plan.sections  # the sections after a cut one get its time


def test_a_run_at_the_planned_pace_cuts_nothing():
    ran, context, ended = _replanned_report(1.0)
    assert ran == ["overview", "representer", "label_issues", "forest", "residual"] and context.cut == {}
    assert ended == 77.0


def _costs(**changed):
    from shap_instances.report._plan import Costs

    costs = dict(spent=2.0, per_permutation=0.5, per_aggregate=0.5, per_tree=1.0, gap_fixed_per_tree=0.0,
                 gap_per_row_tree=0.0, n_train=100, n_test=25, n_explained=100, n_features=5)
    return Costs(**{**costs, **changed})


def test_a_budget_too_small_for_every_section_cuts_the_forest_then_the_residual_before_refusing():
    """Where the least full report does not fit, the plan cuts sections (with the budget that would include them)
    instead of planning an overrun; it refuses, naming the smallest report's budget, only when that does not fit."""
    from shap_instances.exceptions import BudgetError
    from shap_instances.report._plan import affordable, least_seconds

    costs = _costs()
    full = least_seconds(costs, residual=True, forest=True)
    no_forest = least_seconds(costs, residual=True, forest=False)
    smallest = least_seconds(costs, residual=False, forest=False)
    assert smallest < no_forest < full
    assert affordable(costs, full, residual=True, forest=True) == (True, True, {})
    residual, forest, cut = affordable(costs, (no_forest + full) / 2, residual=True, forest=True)
    assert (residual, forest, list(cut)) == (True, False, ["forest"])
    assert f"about {np.ceil(full - (no_forest + full) / 2):.0f} s larger" in cut["forest"]
    residual, forest, cut = affordable(costs, (smallest + no_forest) / 2, residual=True, forest=True)
    assert (residual, forest, sorted(cut)) == (False, False, ["forest", "residual"])
    with pytest.raises(BudgetError, match="without the forest and residual sections") as refused:
        affordable(costs, smallest * 0.99, residual=True, forest=True)
    assert refused.value.needed == pytest.approx(smallest)


def test_the_forest_probe_stops_after_one_tree_when_the_least_forest_cannot_fit(monkeypatch):
    """Before: the probes ran whole (the report refused 241 s into a 180 s budget at load 20); now the forest's
    first tree (here 0.05 s) shows that 20 trees need about 1 s, more than the 0.5 s left: no further tree."""
    from types import SimpleNamespace

    from shap_instances.report import _forest

    grown = []

    def grow(context, n_trees, *, oob, **kwargs):
        time.sleep(0.05)
        grown.append(n_trees)
        return SimpleNamespace(set_params=lambda **params: None)

    monkeypatch.setattr(_forest, "grow_forest", grow)
    said = _forest.time_forest(SimpleNamespace(), 4, seconds_left=0.5)
    assert grown == [1] and isinstance(said, str)
    assert said.startswith("random forest: its first tree took") and "20 trees would need about 1 s" in said


def test_a_fit_probe_is_waited_for_only_while_the_fit_could_still_fit(monkeypatch):
    """Before: boosting's 1,000- and 2,000-row probe fits ran 153 s and 126 s on a 60 s budget at load 17. Here a
    probe fit takes 3 s; 2 s for 10,000 rows allow 0.2 s for 1,000 (the fit is at least linear): the estimate comes
    back well before the probe ends, says the probe was stopped, and exceeds the 2 s (so the caller refuses)."""
    import pandas as pd

    from shap_instances.report import _models

    fit_seconds = [3.0]
    monkeypatch.setattr(_models, "fit_model", lambda *args, **kwargs: time.sleep(fit_seconds[0]))
    X = pd.DataFrame({"a": np.arange(10_000.0)})
    start = time.perf_counter()
    seconds, how = _models.estimate_fit_seconds("ridge", "regression", X, np.arange(10_000.0), max_seconds=2.0)
    assert time.perf_counter() - start < 2.0  # not waited for: the probe fit takes 3 s
    assert seconds >= 2.0
    assert re.fullmatch(r"a fit of 1,000 random rows was stopped after \d\.\d\d s, unfinished", how), how
    fit_seconds[0] = 0.3
    seconds, how = _models.estimate_fit_seconds("ridge", "regression", X.iloc[:4_000], np.arange(4_000.0),
                                                max_seconds=30.0)  # a budget that holds both probes: waited for
    assert "fits of 1,000 and 2,000 random rows took 0.3" in how and seconds >= 0.3  # a fixed cost: the line
