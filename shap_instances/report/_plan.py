"""The report's time budget: measure what one unit of work costs here, size every section, show live progress.

Before any section runs, :func:`measure` times one permutation of the residual game (an antithetic pair) and
the first trees of the forest with the RF-GAP trust scores they give; :func:`make_plan` then sizes the
sections so that the whole report fits the budget: all the forest's trees and all held-out rows when they
fit, the rest of the time for the residual decomposition's permutations (``3 n``, the paper's budget, when
they fit). Costs that are not measured (figures, outlier forests) are small and estimated from the data's size.
Each section then runs under a :class:`SectionBar`: a tqdm bar in planned seconds, advanced as each piece of
work ends, so its ETA moves with the measured speed.
"""

from __future__ import annotations

import os
import sys
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
from tqdm.auto import tqdm

if TYPE_CHECKING:
    from ._context import Context

__all__ = ["Costs", "Plan", "SectionBar", "measure", "make_plan", "residual_sample_size"]

#: Seconds per figure written (matplotlib to PNG), measured on the 2-core machine under load.
FIGURE_SECONDS = 1.2
#: Trees of the forest when time allows, and the fewest the plan gives it.
MAX_TREES, MIN_TREES, PROBE_TREES = 100, 20, 4
#: Fewest permutations of the residual game (two antithetic pairs: a standard error needs two units).
MIN_PERMUTATIONS = 4
#: Share of the budget kept in reserve for what the estimates miss.
RESERVE = 0.1


def residual_sample_size(n_train: int) -> int:
    """How many training rows the residual section explains: all up to 1,000, then a sample.

    The values are a dense (explained x training) matrix and a permutation costs about ``n_train x
    n_explained`` operations beyond its refits, so the sample shrinks as the training set grows (500 rows at
    4,000 training rows, 200 at 40,000) to keep that matrix near 8 million entries.

    Examples
    --------
    >>> from shap_instances.report._plan import residual_sample_size
    >>> residual_sample_size(353), residual_sample_size(4_000), residual_sample_size(40_000)
    (353, 500, 200)
    """
    if n_train <= 1000:
        return n_train
    return int(min(500, max(100, 8_000_000 // n_train)))


@dataclass
class Costs:
    """Measured seconds per unit of work."""

    spent: float  # seconds from the start of the report to the end of the measurements
    per_permutation: float
    per_tree: float
    gap_fixed_per_tree: float  # RF-GAP index and out-of-bag proximities of the training rows, per tree
    gap_per_row_tree: float  # trust scores of one held-out row, per tree
    n_train: int
    n_test: int
    n_explained: int
    n_features: int


@dataclass
class SectionStep:
    """What one section will compute, and the seconds it is expected to take."""

    title: str
    what: str
    estimate: float


@dataclass
class Plan:
    """The sizes every section uses and the plan's lines."""

    budget: float
    costs: Costs
    n_permutations: int
    batch_size: int
    n_trees: int
    trust_rows: int
    residual_positions: np.ndarray | None = None
    sections: dict[str, SectionStep] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

    @property
    def total(self) -> float:
        return self.costs.spent + sum(step.estimate for step in self.sections.values())

    def lines(self) -> list[str]:
        """The plan as printed: one line per section with its share of the budget and its estimate."""
        c = self.costs
        load = _load()
        lines = [f"plan for a {self.budget:.0f} s time budget ({load}); measured here: one residual permutation "
                 f"{_seconds(c.per_permutation)} ({c.n_explained:,} explained x {c.n_train:,} training rows), "
                 f"one forest tree {_seconds(c.per_tree)}; {c.spent:.1f} s spent on loading, fitting and measuring"]
        width = max(len(step.title) for step in self.sections.values())
        for number, step in enumerate(self.sections.values(), start=1):
            share = step.estimate / self.budget
            lines.append(f"  [{number}/{len(self.sections)}] {step.title:<{width}}  {share:4.0%}  "
                         f"~{step.estimate:5.0f} s  {step.what}")
        lines.append(f"  planned total ~{self.total:.0f} s of {self.budget:.0f} s")
        return lines + [f"  note: {warning}" for warning in self.warnings]


def _seconds(value: float) -> str:
    return f"{value * 1000:.1f} ms" if value < 1 else f"{value:.2f} s"


def _load() -> str:
    try:
        return f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores"
    except OSError:  # pragma: no cover - platforms without getloadavg
        return f"{os.cpu_count()} cores"


def measure(context: Context, start: float, *, residual: bool) -> tuple[Costs, np.ndarray]:
    """Time one antithetic pair of residual permutations and the first trees of the forest (kept for later).

    Returns the costs and the positions of the training rows the residual section will explain.
    """
    from ._forest import time_forest
    from ._residual import explained_positions, time_permutations

    n_train = len(context.Z_train)
    positions = explained_positions(n_train, residual_sample_size(n_train), context.seed)
    per_permutation = time_permutations(context, positions) if residual else 0.0
    per_tree, gap_fixed, gap_row = time_forest(context, PROBE_TREES)
    costs = Costs(spent=time.perf_counter() - start, per_permutation=per_permutation, per_tree=per_tree,
                  gap_fixed_per_tree=gap_fixed, gap_per_row_tree=gap_row, n_train=n_train,
                  n_test=len(context.Z_test), n_explained=len(positions), n_features=context.Z_train.shape[1])
    return costs, positions


def make_plan(costs: Costs, budget: float, *, residual: bool, n_players: int) -> Plan:
    """Size the sections to fit ``budget`` seconds, from the measured ``costs``.

    The forest gets all its trees and every held-out row when they take at most a third of the time left after
    the fixed costs, else as many trees as fit (at least 20) and, if that is still too slow, a sample of
    held-out rows for the trust scores; the residual decomposition gets the rest, up to ``3 n`` permutations,
    at least four.
    """
    c = costs
    n_figures_residual, n_figures_forest = 5, 3
    residual_fixed = (FIGURE_SECONDS * n_figures_residual + 2e-7 * c.n_train * max(c.n_explained, c.n_features)
                      + 1.5) if residual else 0.0
    forest_fixed = FIGURE_SECONDS * n_figures_forest + 0.5
    overview = 0.5 + 0.2 * FIGURE_SECONDS
    representer = 0.5 + 2e-6 * c.n_train * c.n_features
    writing = 1.0
    available = budget * (1 - RESERVE) - c.spent - overview - representer - writing - residual_fixed - forest_fixed
    warnings = []

    def forest_seconds(trees: int, rows: int) -> float:
        return ((trees - PROBE_TREES) * c.per_tree + trees * (c.gap_fixed_per_tree + rows * c.gap_per_row_tree))

    share = available / 3 if residual else available
    trees, rows = MAX_TREES, c.n_test
    while trees > MIN_TREES and forest_seconds(trees, rows) > share:
        trees -= 5
    while rows > 200 and forest_seconds(trees, rows) > share:
        rows = max(200, rows // 2)
    forest = forest_seconds(trees, rows)
    n_permutations, batch = 0, 2
    if residual:
        most = 3 * n_players + (3 * n_players) % 2
        fitting = int((available - forest) / max(c.per_permutation, 1e-9))
        n_permutations = int(np.clip(fitting - fitting % 2, MIN_PERMUTATIONS, most))
        if fitting < MIN_PERMUTATIONS:
            warnings.append(f"the budget leaves time for {max(fitting, 0)} residual permutations; the report "
                            f"computes {MIN_PERMUTATIONS}, the fewest that give standard errors, and will overrun")
        # a batch of about 1.5 seconds (the progress bar's step), at most 16 permutations and about 256 MB of
        # prefix values (8 bytes x 3 arrays x n_train x n_explained per permutation): larger batches cost more
        # per permutation once their arrays leave the caches
        memory = 256e6 / (24.0 * c.n_train * c.n_explained)
        batch = int(np.clip(min(1.5 / max(c.per_permutation, 1e-9), memory, 16), 2, 16))
        batch -= batch % 2
    if forest > share and trees == MIN_TREES:
        warnings.append(f"the forest's {trees} trees and trust scores need about {forest:.0f} s, more than the "
                        f"{max(share, 0):.0f} s the budget leaves them")
    plan = Plan(budget, costs, n_permutations, batch, trees, rows, warnings=warnings)
    plan.sections["overview"] = SectionStep("overview", "data summary, preprocessing, held-out scores", overview)
    if residual:
        sampled = (f"{c.n_explained:,} explained rows, a random sample of the {c.n_train:,} training rows"
                   if c.n_explained < c.n_train else f"all {c.n_train:,} training rows explained")
        plan.sections["residual"] = SectionStep(
            "residual decomposition",
            f"{n_permutations:,} permutations of exact refits over {n_players:,} training rows"
            + (" (more while time remains and the contribution means are imprecise)" if n_permutations >= 3 * n_players
               else "") + f"; {sampled}; CC plots, outliers, data values",
            n_permutations * c.per_permutation + residual_fixed)
    plan.sections["representer"] = SectionStep("representer points", "top training rows of 5 held-out rows",
                                               representer)
    trust = f"trust scores of {rows:,} held-out rows" + (f" (a sample of {c.n_test:,})" if rows < c.n_test else "")
    plan.sections["forest"] = SectionStep("random forest", f"{trees} trees; RF-GAP explanations; {trust}",
                                          forest + forest_fixed)
    return plan


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

    def replan(self, remaining: float) -> None:
        """The work still to come is now expected to take ``remaining`` seconds (measured speed, not the plan)."""
        self.bar.total = self.done + max(remaining, 1e-3)
        self.bar.refresh()

    def close(self) -> float:
        """Fill the bar and return the section's real seconds."""
        self.advance(self.bar.total - self.done)
        self.bar.close()
        return time.perf_counter() - self.start
