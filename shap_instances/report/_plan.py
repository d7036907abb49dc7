"""The report's time budget: measure what one unit of work costs here, size every section, show live progress.

Before any section runs, ``_measure.measure`` times one permutation (an antithetic pair) of the residual
decomposition's two games, the aggregate game of the CC means and the vector game of a sample of explained
rows, and the first trees of the forest with the RF-GAP trust scores they give; :func:`make_plan` then sizes
the sections so that the whole report fits the budget: all the forest's trees and all held-out rows when they
fit, the rest of the time for the residual decomposition (a third at most for the sampled rows' ``3 n``
permutations, the rest for the aggregate game: no fixed number, it runs in rounds until its errors are below
``STOP_SHARE`` of the spread or the time is spent; the time it leaves, and what the other sections' estimates
overstate, goes back to the sampled rows while their variances are not precise: the section runs last).
``max_evals`` caps the residual section's refits. Costs that are not measured (figures, outlier forests) are
small and estimated from the data's size.

Memory: the large arrays are the sampled decomposition (``BYTES_PER_SAMPLED_ENTRY`` per explained row and
training row), the forest and copies of the data. :func:`memory_plan` sizes the sample to the memory budget
(``max_memory``, default half the memory available) and refuses, before anything is allocated, a budget too
small for the data and the forest with the estimate and the option that helps.
Each section then runs under a :class:`SectionBar`: a tqdm bar in planned seconds, advanced as each piece of
work ends, so its ETA moves with the measured speed.
"""

from __future__ import annotations

import math
import os
import sys
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
from tqdm.auto import tqdm

if TYPE_CHECKING:
    from ..approximators import StagePace

__all__ = ["Costs", "Plan", "SectionBar", "affordable", "check_least_budget", "cut_reason", "least_costs",
           "least_report_seconds", "least_seconds", "make_plan", "memory_plan", "residual_sample_size"]

#: Seconds per figure written (matplotlib to PNG) at the least: :func:`time_figure` measures it, now.
FIGURE_SECONDS = 1.2
#: Trees of the forest when time allows, and the fewest the plan gives it.
MAX_TREES, MIN_TREES, PROBE_TREES = 100, 20, 4
#: Fewest permutations of the residual game (two antithetic pairs: a standard error needs two units).
MIN_PERMUTATIONS = 4
#: A part of the report is precise when the error of what it shows (the root mean square of the standard errors)
#: is at most this share of the spread of those values across training rows; otherwise it is shown under "Not
#: enough precision", with the budget that would make it precise, never as results.
PRECISE_SHARE = 0.3
#: The aggregate game stops early, before its time is spent, once the error of both its outputs (the contribution
#: means and the plain means behind the data values) is at most this share of their spread.
STOP_SHARE = 0.2
#: Bytes per entry (explained row x training row) of the sampled decomposition: values, standard errors, the
#: two 95% bounds and the estimator's work block (five float64 matrices), the sign-normalised contributions,
#: their transpose for the outlier forest and the moments of contribution_statistics (about ten in all).
BYTES_PER_SAMPLED_ENTRY = 80
#: Bytes per training row and tree of the forest section (tree nodes and the RF-GAP leaf index).
BYTES_PER_ROW_TREE = 48
#: Seconds to write the report's HTML and tables (not measured).
WRITING_SECONDS = 1.0
#: Share of the budget kept in reserve for what the estimates miss.
RESERVE = 0.1


def residual_sample_size(n_train: int, memory: float | None = None) -> int:
    """How many explained rows the residual section's vector game decomposes: all up to 1,000, then a sample.

    Only the CC variance plot and the behaviour outliers need the (explained x training) matrix; the means come
    from the aggregate game over all rows. The matrix is dense and a permutation costs about ``n_train x
    n_explained`` operations beyond its refits, so the sample shrinks as the training set grows (500 rows at
    4,000 training rows, 200 at 40,000) to keep it near 8 million entries, and to what ``memory`` bytes hold
    (:data:`BYTES_PER_SAMPLED_ENTRY` per entry; 0 when not even one row fits).

    Examples
    --------
    >>> from shap_instances.report._plan import residual_sample_size
    >>> residual_sample_size(353), residual_sample_size(4_000), residual_sample_size(40_000)
    (353, 500, 200)
    >>> residual_sample_size(40_000, memory=2**28)   # 256 MiB hold 83 rows of 40,000 entries
    83
    """
    size = n_train if n_train <= 1000 else int(min(500, max(100, 8_000_000 // n_train)))
    if memory is not None:
        size = min(size, int(max(memory, 0.0) // (BYTES_PER_SAMPLED_ENTRY * n_train)))
    return size


def memory_plan(n_train: int, n_test: int, n_columns: int, max_memory: float | None) -> tuple[int, str]:
    """``(sampled rows, the plan's memory line)``: the sample that fits the memory budget, or a refusal.

    The data (a dozen float64 copies of the encoded matrix) and the forest (:data:`MAX_TREES` trees) come first;
    the sampled decomposition gets the rest, at most half the budget. A budget that cannot hold the data, the
    forest and two sampled rows raises :class:`~shap_instances.exceptions.MemoryBudgetError` before any work.

    Examples
    --------
    >>> from shap_instances.report._plan import memory_plan
    >>> memory_plan(4_000, 1_000, 20, 2 * 2**30)[0]
    500
    """
    from ..exceptions import MemoryBudgetError
    from ..utils import default_memory_budget

    budget = default_memory_budget() if max_memory is None else float(max_memory)
    fixed = 12 * 8.0 * (n_train + n_test) * n_columns + BYTES_PER_ROW_TREE * n_train * MAX_TREES
    sample = residual_sample_size(n_train, min(budget - fixed, budget / 2))
    if sample < 2:
        needed = fixed + 2 * BYTES_PER_SAMPLED_ENTRY * n_train
        raise MemoryBudgetError(
            f"the report on {n_train:,} training rows x {n_columns} encoded columns needs about "
            f"{_mib(needed)} MiB of arrays (the data, a forest of {MAX_TREES} trees, and at least two "
            f"sampled rows of the residual decomposition), more than the memory budget of {_mib(budget)} "
            f"MiB; raise --max-memory (max_memory=) to at least {2 * needed / 2**30:.2g} GiB, or pass fewer rows.")
    line = (f"memory: about {(fixed + sample * BYTES_PER_SAMPLED_ENTRY * n_train) / 2**20:,.0f} MiB of arrays "
            f"(budget {budget / 2**20:,.0f} MiB{'' if max_memory is not None else ', half the machine'}): "
            f"{sample:,} sampled rows x {n_train:,} training rows for the CC variance and the outliers")
    return sample, line


@dataclass
class Costs:
    """Measured seconds per unit of work."""

    spent: float  # seconds from the start of the report to the end of the measurements
    per_permutation: float  # the vector game of the sampled explained rows
    per_aggregate: float  # the aggregate game of the CC means (two outputs, all training rows)
    per_tree: float
    gap_fixed_per_tree: float  # RF-GAP index and out-of-bag proximities of the training rows, per tree
    gap_per_row_tree: float  # trust scores of one held-out row, per tree
    n_train: int
    n_test: int
    n_explained: int
    n_features: int
    per_figure: float = FIGURE_SECONDS  # one scatter of every training row written to PNG (time_figure)


@dataclass
class SectionStep:
    """What one section will compute, the seconds it is expected to take and the least it can take (fewer trees,
    fewer permutations: None when it cannot shrink)."""

    title: str
    what: str
    estimate: float
    least: float | None = None

    @property
    def least_seconds(self) -> float:
        """The seconds of the least this section can do."""
        return self.estimate if self.least is None else min(self.least, self.estimate)


def budget_words(budget: float, startup: float = 0.0) -> str:
    """The time budget in words, saying what start-up took from it: the seconds the report plans (``budget``) and,
    when ``startup`` seconds went before it (the command line's start, imports and loading), the whole budget.

    Examples
    --------
    >>> from shap_instances.report._plan import budget_words
    >>> budget_words(159.2, startup=20.8)
    '180 s, of which 21 s went to start-up: 159 s planned'
    >>> budget_words(60)
    '60 s'
    """
    if startup <= 0:
        return f"{budget:.0f} s"
    return f"{budget + startup:.0f} s, of which {startup:.0f} s went to start-up: {budget:.0f} s planned"


@dataclass
class Plan:
    """The sizes every section uses and the plan's lines."""

    budget: float
    costs: Costs
    n_permutations: int  # of the aggregate game
    batch_size: int
    n_trees: int
    trust_rows: int
    sample_permutations: int = 0  # of the sampled rows' vector game
    max_evals: int | None = None  # the residual section's most refits (sampled rows and aggregate game together)
    sample_seconds: float = 0.0
    memory: str = ""
    sections: dict[str, SectionStep] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    startup: float = 0.0  # seconds of the caller's budget spent before the report started (the command's start-up)

    @property
    def total(self) -> float:
        return self.costs.spent + WRITING_SECONDS + sum(step.estimate for step in self.sections.values())

    def lines(self) -> list[str]:
        """The plan as printed: one line per section with its share of the budget and its estimate."""
        c = self.costs
        load = _load()
        lines = [f"plan for a time budget of {budget_words(self.budget, self.startup)} ({load}); measured here: one "
                 f"permutation of the aggregate game {_seconds(c.per_aggregate)} ({c.n_train:,} training rows), of "
                 f"the sampled rows {_seconds(c.per_permutation)} ({c.n_explained:,} explained x {c.n_train:,} "
                 "training rows), "
                 + (f"one forest tree {_seconds(c.per_tree)}, " if c.per_tree > 0 else "")
                 + f"one figure {_seconds(c.per_figure)}; {c.spent:.1f} s spent "
                 "on loading, fitting and measuring"]
        if self.memory:
            lines.append(f"  {self.memory}")
        width = max(len(step.title) for step in self.sections.values())
        for number, step in enumerate(self.sections.values(), start=1):
            share = step.estimate / self.budget
            lines.append(f"  [{number}/{len(self.sections)}] {step.title:<{width}}  {share:4.0%}  "
                         f"~{step.estimate:5.0f} s  {step.what}")
        lines.append(f"  planned total ~{self.total:.0f} s of {self.budget:.0f} s")
        return lines + [f"  note: {warning}" for warning in self.warnings]


def evals_permutations(max_evals: int, n_players: int) -> int:
    """The permutations (even: antithetic pairs) that ``max_evals`` evaluations of an ``n_players`` game allow,
    or a refusal when they allow fewer than the :data:`MIN_PERMUTATIONS` of each of the residual section's two
    games."""
    from ..exceptions import InvalidParameterError

    most = max_evals // (n_players + 1)
    if most < 2 * MIN_PERMUTATIONS:
        raise InvalidParameterError(
            f"--max-evals {max_evals:,} allows {most} permutations of the {n_players:,} training rows (each costs "
            f"{n_players + 1:,} evaluations); the residual decomposition needs at least {2 * MIN_PERMUTATIONS} "
            f"({MIN_PERMUTATIONS} for each of its two games): raise --max-evals (max_evals=) to at least "
            f"{2 * MIN_PERMUTATIONS * (n_players + 1):,}.")
    return most - most % 2


def _mib(n_bytes: float) -> str:
    """Bytes as MiB: whole numbers from 10 MiB, two significant digits below."""
    mib = n_bytes / 2**20
    return f"{mib:,.0f}" if mib >= 10 else f"{mib:.2g}"


def _seconds(value: float) -> str:
    return f"{value * 1000:.1f} ms" if value < 1 else f"{value:.2f} s"


def _load() -> str:
    try:
        return f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores"
    except OSError:  # pragma: no cover - platforms without getloadavg
        return f"{os.cpu_count()} cores"


def time_figure(n_points: int) -> float:
    """Seconds to draw a coloured scatter of ``n_points`` points with a colour bar and write it as the report's
    PNG: the figures' cost on this machine, now (it grows with the load from other jobs).

    Examples
    --------
    >>> from shap_instances.report._plan import time_figure
    >>> time_figure(100) > 0
    True
    """
    import io

    import matplotlib.pyplot as plt

    def draw(n: int) -> float:
        start = time.perf_counter()
        points = np.random.default_rng(0).normal(size=(3, n))
        fig, ax = plt.subplots(figsize=(6, 5))
        fig.colorbar(ax.scatter(points[0], points[1], c=points[2], s=14, alpha=0.8), ax=ax)
        fig.savefig(io.BytesIO(), format="png", dpi=110, bbox_inches="tight")
        plt.close(fig)
        return time.perf_counter() - start

    draw(10)  # the first figure of a process also loads fonts and backends
    return draw(n_points)


def _forest_size(c: Costs, share: float) -> tuple[int, int]:
    """(trees, held-out rows given trust scores) that fit ``share`` seconds: all when they fit, else fewer trees
    (down to :data:`MIN_TREES`), then a sample of the held-out rows (down to 200)."""
    trees, rows = MAX_TREES, c.n_test
    while trees > MIN_TREES and _forest_seconds(c, trees, rows) > share:
        trees -= 5
    while rows > 200 and _forest_seconds(c, trees, rows) > share:
        rows = max(200, rows // 2)
    return trees, rows


def _residual_size(c: Costs, left: float, n_players: int, max_evals: int | None,
                   warnings: list[str]) -> tuple[int, int, int]:
    """(permutations of the aggregate game, of the sampled rows' vector game, batch) that fit ``left`` seconds
    and ``max_evals``; a warning appended when not even the fewest of the aggregate game fit."""
    from ..approximators import Throughput  # not at import: the command line's --help imports the report's names

    def permutations(seconds: float, cost: float, most: int) -> int:
        fitting = Throughput(max(cost, 1e-9)).units_within(seconds)
        return int(np.clip(fitting - fitting % 2, MIN_PERMUTATIONS, most + most % 2))

    most = 10**12 if max_evals is None else evals_permutations(max_evals, n_players)
    sample_permutations = permutations(left / 3, c.per_permutation, min(3 * n_players, most // 3))
    fitting = Throughput(max(c.per_aggregate, 1e-9)).units_within(left - sample_permutations * c.per_permutation)
    n_permutations = permutations(left - sample_permutations * c.per_permutation, c.per_aggregate,
                                  most - sample_permutations)
    if fitting < MIN_PERMUTATIONS:
        warnings.append(f"the budget leaves time for {max(fitting, 0)} permutations of the aggregate game; the "
                        f"report computes {MIN_PERMUTATIONS}, the fewest that give standard errors, and will "
                        "overrun")
    # a batch of about 1.5 seconds (the progress bar's step), at most 16 permutations and about 256 MB of
    # prefix values (8 bytes x 3 arrays x n_train x n_explained per permutation): larger batches cost more
    # per permutation once their arrays leave the caches
    memory = 256e6 / (24.0 * c.n_train * c.n_explained)
    batch = int(np.clip(min(Throughput(max(c.per_permutation, 1e-9)).units_within(1.5), memory, 16), 2, 16))
    return n_permutations, sample_permutations, batch - batch % 2


def make_plan(costs: Costs, budget: float, *, residual: bool, n_players: int, forest: bool = True,
              max_evals: int | None = None) -> Plan:
    """Size the sections to fit ``budget`` seconds, from the measured ``costs``.

    The forest gets all its trees and every held-out row when they take at most a third of the time left after
    the fixed costs, else as many trees as fit (at least 20) and, if that is still too slow, a sample of
    held-out rows for the trust scores; the residual decomposition gets the rest: the sampled rows' vector game
    up to ``3 n`` permutations in at most a third of it, the aggregate game the remainder, as many permutations
    as fit (it stops earlier once precise: :data:`STOP_SHARE`); each at least four. ``max_evals`` caps the
    permutations of both games together (``n + 1`` evaluations each): the sampled rows get at most a third.
    Without ``forest`` (the section is skipped), no time goes to the forest and the plan has no forest line.

    Examples
    --------
    >>> from shap_instances.report._plan import Costs, make_plan
    >>> costs = Costs(spent=2.0, per_permutation=0.01, per_aggregate=0.001, per_tree=0.01, gap_fixed_per_tree=0.0,
    ...               gap_per_row_tree=0.0, n_train=100, n_test=25, n_explained=100, n_features=5)
    >>> make_plan(costs, 100, residual=True, n_players=100).n_permutations > 10 * 100   # no fixed cap
    True
    >>> plan = make_plan(costs, 100, residual=True, n_players=100, max_evals=10_100)      # 100 permutations
    >>> plan.sample_permutations + plan.n_permutations
    100
    """
    c = costs
    residual_fixed, forest_fixed, overview, representer, writing = _fixed_seconds(c, residual=residual,
                                                                                  forest=forest)
    available = budget * (1 - RESERVE) - c.spent - overview - representer - writing - residual_fixed - forest_fixed
    warnings: list[str] = []
    share = available / 3 if residual else available
    trees, rows = _forest_size(c, share)
    grows_forest, forest_time = forest, _forest_seconds(c, trees, rows) if forest else 0.0
    n_permutations, sample_permutations, batch = 0, 0, 2
    if residual:
        n_permutations, sample_permutations, batch = _residual_size(c, available - forest_time, n_players,
                                                                    max_evals, warnings)
    if grows_forest and forest_time > share and trees == MIN_TREES:
        warnings.append(f"the forest's {trees} trees and trust scores need about {forest_time:.0f} s, more than the "
                        f"{max(share, 0):.0f} s the budget leaves them")
    plan = Plan(budget, costs, n_permutations, batch, trees, rows, sample_permutations=sample_permutations,
                sample_seconds=sample_permutations * c.per_permutation, max_evals=max_evals, warnings=warnings)
    plan.sections["overview"] = SectionStep("overview", "data summary, preprocessing, held-out scores", overview)
    if residual:
        sampled = (f"a random sample of {c.n_explained:,} explained rows" if c.n_explained < c.n_train
                   else f"all {c.n_train:,} rows explained")
        plan.sections["residual"] = SectionStep(
            "residual decomposition",
            f"CC means and data values: up to {n_permutations:,} permutations of the aggregate game over "
            f"{n_players:,} training rows (fewer once its error is below {STOP_SHARE:.0%} of the spread"
            + (f"; --max-evals {max_evals:,}" if max_evals is not None else "")
            + f"); CC variance and outliers: {sample_permutations:,} permutations, {sampled}, then the time the "
            f"aggregate game and the other sections leave while their noise is above {PRECISE_SHARE:.0%} (this "
            "section runs last)",
            n_permutations * c.per_aggregate + sample_permutations * c.per_permutation + residual_fixed,
            least=MIN_PERMUTATIONS * (c.per_aggregate + c.per_permutation) + residual_fixed)
    plan.sections["representer"] = SectionStep("representer points", "top training rows of 5 held-out rows",
                                               representer)
    trust = f"trust scores of {rows:,} held-out rows" + (f" (a sample of {c.n_test:,})" if rows < c.n_test else "")
    if grows_forest:
        plan.sections["forest"] = SectionStep("random forest", f"{trees} trees; RF-GAP explanations; {trust}",
                                              forest_time + forest_fixed,
                                              least=_forest_seconds(c, MIN_TREES, min(rows, 200)) + forest_fixed)
    return plan


def _fixed_seconds(c: Costs, *, residual: bool, forest: bool) -> tuple[float, float, float, float, float]:
    """Seconds of the work whose size does not follow the budget: (the residual section's figures and
    statistics, the forest's figures, the overview, the representer section, writing the report)."""
    figure = c.per_figure
    slower = figure / FIGURE_SECONDS  # the load from other jobs slows the unmeasured work as it slows figures
    residual_fixed = (figure * 5 + slower * (2e-7 * c.n_train * max(c.n_explained, c.n_features) + 1.5)
                      if residual else 0.0)
    forest_fixed = figure * 3 + 0.5 if forest else 0.0
    return residual_fixed, forest_fixed, 0.5 + 0.2 * figure, 0.5 + 2e-6 * c.n_train * c.n_features, WRITING_SECONDS


def _forest_seconds(c: Costs, trees: int, rows: int) -> float:
    """Seconds of the forest's ``trees`` trees (the first :data:`PROBE_TREES` already grown) and of the trust
    scores of ``rows`` held-out rows."""
    return (trees - PROBE_TREES) * c.per_tree + trees * (c.gap_fixed_per_tree + rows * c.gap_per_row_tree)


def least_costs(spent: float, n_train: int, n_test: int, n_features: int) -> Costs:
    """The costs known before anything is measured: ``spent`` seconds already, every measured cost 0 and a
    figure at :data:`FIGURE_SECONDS`, so that :func:`check_least_budget` on them is a lower bound."""
    return Costs(spent=spent, per_permutation=0.0, per_aggregate=0.0, per_tree=0.0, gap_fixed_per_tree=0.0,
                 gap_per_row_tree=0.0, n_train=max(n_train, 1), n_test=n_test, n_explained=1,
                 n_features=n_features)


def least_seconds(costs: Costs, *, residual: bool, forest: bool) -> float:
    """The least budget that :func:`make_plan` fits in, :data:`RESERVE` kept: from a lower bound (what is spent,
    the fixed work, :data:`MIN_TREES` trees with the trust scores of at most 200 rows, :data:`MIN_PERMUTATIONS`
    permutations of each residual game), raised to what the plan of that budget needs until the plan fits.

    Examples
    --------
    >>> from shap_instances.report._plan import least_costs, least_seconds
    >>> round(least_seconds(least_costs(2.0, 100, 25, 5), residual=False, forest=False), 1)  # (2 s + 2.2 s) / 0.9
    4.7
    """
    work = sum(_fixed_seconds(costs, residual=residual, forest=forest))
    if forest:
        work += _forest_seconds(costs, MIN_TREES, min(costs.n_test, 200))
    if residual:
        work += MIN_PERMUTATIONS * (costs.per_aggregate + costs.per_permutation)
    budget = (costs.spent + work) / (1 - RESERVE)
    for _ in range(200):  # the plan may give the forest and the sampled rows more than their least first
        needed = make_plan(costs, budget, residual=residual, n_players=costs.n_train, forest=forest).total
        if needed <= budget * (1 - RESERVE):
            break
        budget = max(budget * 1.01, needed / (1 - RESERVE) * (1 + 1e-6))  # above rounding
    return budget


def least_report_seconds(spent: float, *, forest: bool) -> float:
    """The least budget of any report, before the data are read: ``spent`` seconds and the fixed work of a report
    without the residual section (:func:`least_seconds` with every measured cost 0), the forest's when ``forest``.

    Examples
    --------
    >>> from shap_instances.report import least_report_seconds
    >>> least_report_seconds(0.0, forest=True) > least_report_seconds(0.0, forest=False) > 2
    True
    """
    return least_seconds(least_costs(spent, 1, 0, 1), residual=False, forest=forest)


def cut_reason(step: SectionStep, pace: StagePace, seconds_left: float) -> str | None:
    """Why section ``step`` is cut before it runs (the sentence the report shows), or None when the least it can do
    (:attr:`SectionStep.least_seconds`) ends within ``seconds_left`` at the ``pace`` the sections before it ran.

    Examples
    --------
    >>> from shap_instances.approximators import StagePace
    >>> from shap_instances.report._plan import SectionStep, cut_reason
    >>> step = SectionStep("label issues", "out-of-sample probabilities", 20.0)
    >>> pace = StagePace()
    >>> cut_reason(step, pace, 30.0) is None
    True
    >>> pace.observe(planned=10.0, taken=25.0)          # the machine got busier: 2.5 s per planned second
    >>> print(cut_reason(step, pace, 30.0))  # doctest: +ELLIPSIS +NORMALIZE_WHITESPACE
    label issues: the sections before it took 2.5x their planned time ... so even its least would take about 50 s,
    and 30 s of the time budget are left; a time budget about 20 s larger would include it.
    """
    from ..approximators import format_seconds

    least = step.least_seconds
    if pace.fits(least, seconds_left):
        return None
    needed = pace.seconds_for(least)
    speed = (f"the sections before it took {pace.ratio:.1f}x their planned time (the machine is busier than when "
             "the plan was measured), so even its least" if pace.ratio > 1 else "even its least")
    return (f"{step.title}: {speed} would take about {format_seconds(needed)}, and "
            f"{format_seconds(max(seconds_left, 0.0))} of the time budget are left; a time budget about "
            f"{math.ceil(needed - seconds_left)} s larger would include it.")


def affordable(costs: Costs, budget: float, *, residual: bool, forest: bool) -> tuple[bool, bool, dict[str, str]]:
    """``(residual, forest, cut)``: the sections that the least report of ``budget`` seconds can hold, from the
    measured ``costs``: both, else without the forest, else without the residual decomposition either, each cut
    section with the sentence saying why (``cut``: key -> sentence). Only when not even the report without them
    fits is the budget refused (:func:`check_least_budget`, naming the budget of that smallest report).

    Examples
    --------
    >>> from shap_instances.report._plan import Costs, affordable
    >>> costs = Costs(spent=2.0, per_permutation=0.5, per_aggregate=0.5, per_tree=1.0, gap_fixed_per_tree=0.0,
    ...               gap_per_row_tree=0.0, n_train=100, n_test=25, n_explained=100, n_features=5)
    >>> residual, forest, cut = affordable(costs, 25.0, residual=True, forest=True)
    >>> residual, forest, list(cut)
    (True, False, ['forest'])
    """
    from ..approximators import format_seconds

    full = least_seconds(costs, residual=residual, forest=forest)
    cut: dict[str, str] = {}
    for keeps_residual, keeps_forest in ((residual, forest), (residual, False), (False, False)):
        least = least_seconds(costs, residual=keeps_residual, forest=keeps_forest)
        if least <= budget:
            break
    else:
        check_least_budget(costs, budget, residual=False, forest=False, how="measured here: the fits and the "
                           "figures, without the forest and residual sections, which it would leave out")
    for key, title, kept, wanted in (("forest", "random forest", keeps_forest, forest),
                                     ("residual", "residual decomposition", keeps_residual, residual)):
        if wanted and not kept:
            cut[key] = (f"{title}: the least report with it needs about {format_seconds(full)} here (measured), more "
                        f"than the {format_seconds(budget)} of the time budget; a time budget about "
                        f"{math.ceil(full - budget)} s larger would include it.")
    return keeps_residual, keeps_forest, cut


def check_least_budget(costs: Costs, budget: float, *, residual: bool, forest: bool, how: str) -> None:
    """Refuse, before the sections run, a ``budget`` below :func:`least_seconds` with
    :class:`~shap_instances.exceptions.BudgetError` naming the budget that would work (``needed``)."""
    from ..approximators import format_seconds
    from ..exceptions import BudgetError

    needed = least_seconds(costs, residual=residual, forest=forest)
    if needed > budget:
        raise BudgetError(
            f"refused before the work: the smallest report here needs about {format_seconds(needed)} ({how}), more "
            f"than time_budget={budget:.3g} s; pass a time budget of at least {math.ceil(needed)} s", needed=needed)


class SectionBar:
    """A tqdm bar for one section, counted in planned seconds and advanced as each piece of work ends.

    Its rate is planned seconds per real second, so its ETA is the plan's remaining time corrected by the speed
    measured so far, and it moves at every step.
    """

    def __init__(self, number: int, count: int, step: SectionStep, *, silent: bool) -> None:
        self.start = time.perf_counter()
        self.bar = tqdm(total=max(step.estimate, 1e-3), desc=f"[{number}/{count}] {step.title}", unit="s",
                        disable=silent, leave=True, file=sys.stderr, dynamic_ncols=True,
                        bar_format="{desc}: {percentage:3.0f}%|{bar}| [{elapsed}<{remaining}] {postfix}")
        self.done = 0.0

    def advance(self, planned_seconds: float, what: str = "") -> None:
        """One piece of work ended; it was planned to take ``planned_seconds``."""
        planned_seconds = min(planned_seconds, self.bar.total - self.done)
        self.done += planned_seconds
        if what:
            self.bar.set_postfix_str(what, refresh=False)
        self.bar.update(planned_seconds)
        self.bar.refresh()  # every piece of work shows, however soon after the last (tqdm's mininterval)

    def replan(self, remaining: float) -> None:
        """The work still to come is now expected to take ``remaining`` seconds (measured speed, not the plan)."""
        self.bar.total = self.done + max(remaining, 1e-3)
        self.bar.refresh()

    def close(self) -> float:
        """Fill the bar and return the section's real seconds."""
        self.advance(self.bar.total - self.done)
        self.bar.close()
        return time.perf_counter() - self.start
