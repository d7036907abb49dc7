"""``run_report``: the end-to-end instance analysis behind ``shap-instances report``."""

from __future__ import annotations

import math
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402
from sklearn.model_selection import train_test_split  # noqa: E402

from ..utils import RUN_OPTIONS, validate_params, validating_once  # noqa: E402
from . import _plan  # noqa: E402
from ._context import file_model_sentence, prepare  # noqa: E402
from ._html import Report  # noqa: E402
from ._label_issues import LabelIssues  # noqa: E402
from ._measure import measure  # noqa: E402
from ._models import model_columns  # noqa: E402
from ._sections import SECTIONS, Overview  # noqa: E402

__all__ = ["run_report"]

#: The options :func:`run_report` checks (:func:`~shap_instances.utils.validate_params`), declared once in
#: :data:`~shap_instances.utils.RUN_OPTIONS`, which the command line reads its numbers by.
_CONSTRAINTS: dict[str, list] = {name: RUN_OPTIONS[name].constraints()
                                 for name in ("time_budget", "max_memory", "max_evals", "seed", "startup")}


@validating_once()  # the training rows are validated once, however many explainers get them
def run_report(X: pd.DataFrame, y: pd.Series, *, task: str = "regression", model: str = "auto",
               out: str | os.PathLike[str] = "shap-instances-report", seed: int = 0, silent: bool = False,
               test_size: float = 0.2, time_budget: float = 180.0, max_memory: float | None = None,
               fitted_model: Any = None, max_evals: int | None = None, startup: float = 0.0) -> Path:
    """Analyse a dataset's training instances end to end and write an HTML report with PNG figures.

    The data are split into training and held-out rows. Sections (each skipped with a note when it does not
    apply): the residual decomposition of a linear model over training instances (CC plot, most helpful
    and harmful instances, behaviour-based outliers, data values), the representer-point view of the linear
    model, and a random forest's predictions as proximity-weighted sums of training targets with trust scores
    for held-out rows. Every model is a pipeline that standardises numeric columns and one-hot encodes string
    columns (:mod:`shap_instances.report`).

    Sampled parts are shown only when precise: a part whose error is above 30% of its spread across training rows
    (the contribution means, the data values, the contribution variances) is listed under "Not enough precision"
    at the end, with the budget that would make it precise, never shown as results. The work is planned to fit
    ``time_budget``: the cost of one residual permutation and of the forest's first
    trees is measured, the plan (one line per section: what it computes, its share of the budget, its estimate)
    is printed unless ``silent``, and each section shows a progress bar with a moving ETA. The residual
    decomposition's means (CC plot, data values, helpful and harmful rows) come from one aggregate game over all
    training rows (O(n) memory); its CC variance plot and behaviour outliers from the full decomposition of a
    random sample of explained rows (all of them up to 1,000), with their sampling errors stated.

    Parameters
    ----------
    X : DataFrame
        Features: numeric and string (or categorical) columns, no missing values.
    y : Series
        Target.
    task : {"regression", "classification"}
    model : str
        The linear model of the command line ("auto": ridge or logistic regression).
    out : str or Path
        Output folder: ``index.html`` (self-contained) and the figures as PNG files.
    seed : int
        Seed of the split, of the sampled explained rows and of every sampled estimate.
    silent : bool
        No plan and no progress bars.
    test_size : float
        Share of held-out rows.
    time_budget : float, default=180
        Seconds the whole report should take, measured from the start of this call. The plan keeps 10% in
        reserve; it overruns (and says so in its notes) only when even the smallest useful sizes do not fit.
    max_memory : float, optional
        Bytes for the report's large arrays (default: half the memory available): the sampled decomposition is
        sized to it, every explainer is given it, and a budget too small for the data and the forest is refused
        (:class:`~shap_instances.exceptions.MemoryBudgetError`, with the estimate) before any work.
    fitted_model : estimator or Pipeline, optional
        A model of the user's (``report --model-file``), in place of ``model``: it is never refitted or changed.
        The residual decomposition, the data values, the representer points and the label-issue check refit
        clones of it (:func:`sklearn.base.clone`) on the training rows; the forest section grows a clone of it
        when it is a bootstrap random forest and is skipped otherwise. Only the columns it was fitted on are used
        (a :class:`~shap_instances.exceptions.DataValidationError` names those ``X`` lacks).
    max_evals : int, optional
        Most evaluations (refits of the model on a subset of the training rows; a permutation of ``n`` training rows
        costs ``n + 1``) of the residual decomposition, its two games together; refused before any work
        (:class:`~shap_instances.exceptions.InvalidParameterError`) when it allows fewer than the 8 permutations
        the section needs. Default: only the time budget limits them.
    startup : float, default=0
        Seconds of the caller's whole budget spent before this call (``shap-instances report``: the interpreter's
        start, the imports and reading the CSV); ``time_budget`` is what is left. Only said, beside the budget,
        in the plan and the report ("180 s, of which 21 s went to start-up: 159 s planned").

    Returns
    -------
    Path
        The HTML file.

    Examples
    --------
    >>> from shap_instances.datasets import load_diabetes
    >>> from shap_instances.report import run_report
    >>> X, y = load_diabetes()
    >>> path = run_report(X.iloc[:120], y.iloc[:120], out=__import__("tempfile").mkdtemp(), silent=True,
    ...                   time_budget=60)
    >>> path.name
    'index.html'
    """
    start = time.perf_counter()
    validate_params("run_report", _CONSTRAINTS, {"time_budget": time_budget, "max_memory": max_memory,
                                                 "max_evals": max_evals, "seed": seed, "startup": startup})
    if fitted_model is not None:
        X = model_columns(fitted_model, X, f"the {type(fitted_model).__name__} model")
    decomposed = task != "classification" or pd.Series(y).nunique() == 2  # the residual section applies
    n_test = math.ceil(test_size * len(X))
    _plan.check_least_budget(_plan.least_costs(time.perf_counter() - start, len(X) - n_test, n_test, X.shape[1]),
                             time_budget, residual=decomposed, forest=fitted_model is None,
                             how="its figures, overview and writing alone, before any model is fitted")
    stratify = y if task == "classification" else None
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=test_size, random_state=seed,
                                                        stratify=stratify)
    context = prepare(X_train, X_test, y_train, y_test, task=task, model=model, seed=seed, silent=silent,
                      file_model=fitted_model)
    context.max_memory = max_memory
    if max_evals is not None:
        _plan.evals_permutations(max_evals, len(X_train))  # refused before any work when too small
    sample_size, memory = _plan.memory_plan(len(X_train), len(X_test), context.Z_train.shape[1], max_memory)
    steps = [step for step in SECTIONS if step.applies(context)]
    skipped = [step for step in SECTIONS if step not in steps]
    plan = _planned(context, steps, start, time_budget, sample_size=sample_size, max_evals=max_evals)
    plan.memory, plan.startup = memory, startup
    context.plan = plan
    context.deadline = start + time_budget * (1 - _plan.RESERVE)
    context.end = start + time_budget
    if not silent:
        print("\n".join(plan.lines()), file=sys.stderr, flush=True)
    report = Report(
        title="shap-instances report",
        intro=(f"{len(X)} rows x {X.shape[1]} columns ({task}); {len(X_train)} training instances are explained, "
               f"{len(X_test)} held-out rows are used for evaluation. Seed {seed}; time budget "
               f"{_plan.budget_words(time_budget, startup)}."),
    )
    _build_sections(report, context, [step for step in steps if step.key in plan.sections])
    _finish(report, context, skipped, time.perf_counter() - start, _plan.budget_words(time_budget, startup))
    return report.write(out)


def _planned(context: Any, steps: list[Any], start: float, time_budget: float, *, sample_size: int,
             max_evals: int | None) -> _plan.Plan:
    """The plan of the sections ``steps``, from their unit costs measured here (bounded probes), its sections in the
    order they run: a section whose probe or least does not fit ``time_budget`` is cut (``context.cut``, with the
    sentence saying why), and the budget refused only when not even the report without the forest and residual
    sections fits (:func:`._plan.affordable`)."""
    residual = any(step.key == "residual" for step in steps)
    forest = any(step.key == "forest" for step in steps)
    costs, context.cut = measure(context, start, residual=residual, sample_size=sample_size, forest=forest,
                                 time_budget=time_budget)
    residual, forest, cut = _plan.affordable(costs, time_budget, residual=residual and "residual" not in context.cut,
                                             forest=forest and "forest" not in context.cut)
    context.cut.update(cut)
    plan = _plan.make_plan(costs, time_budget, residual=residual, n_players=len(context.Z_train), forest=forest,
                           max_evals=max_evals)
    if context.file_model is not None:
        plan.warnings.append(file_model_sentence(context))
    plan.warnings.extend(f"section skipped to end within the time budget: {reason}" for reason in context.cut.values())
    if LabelIssues in steps:
        plan.sections[LabelIssues.key] = LabelIssues.plan_step(len(context.Z_train))
    plan.sections = _run_order(steps, plan.sections)
    return plan


def _finish(report: Report, context: Any, skipped: list[Any], seconds: float, budget: str) -> None:
    """The parts not precise enough, the overview's last lines: the sections skipped and the time taken; the full
    tables behind the report's excerpts."""
    if context.imprecise:
        _imprecise_section(report, context.imprecise)
    Overview.finish(context)
    for step in skipped:
        context.overview.text(f"Section skipped: {step.skip_reason(context)}")
    for reason in context.cut.values():
        context.overview.text(f"Section skipped to end within the time budget: {reason}")
    context.overview.text(f"Computed in {seconds:.1f} s (time budget {budget}).")
    report.tables.update(context.results)


def _run_order(steps: list[Any], sections: dict[str, Any]) -> dict[str, Any]:
    """The plan's sections in the order they run (:func:`_elastic_last`)."""
    return {step.key: sections[step.key] for step in _elastic_last(steps) if step.key in sections}


def _elastic_last(steps: list[Any]) -> list[Any]:
    """``steps`` in the order they run: those that spend the time left (``elastic``) last, the others as given."""
    return sorted(steps, key=lambda step: getattr(step, "elastic", False))


def _build_sections(report: Report, context: Any, planned: list[Any], clock: Callable[[], float] = time.perf_counter
                    ) -> None:
    """Build the ``planned`` sections, those that spend the time left (``elastic``: the residual decomposition)
    last, so that the time the others' estimates overstate goes to precision (the plan lists them in that order:
    :func:`_run_order`); the report keeps ``planned``'s order.

    The plan is re-made as the sections run: each section's seconds against its plan give the pace of the run
    (:class:`~shap_instances.approximators.StagePace`: slower when the machine got busier after the costs were
    measured), and a section whose least no longer ends within the budget at that pace is cut before it runs,
    with the sentence saying why (:func:`._plan.cut_reason`, shown in the overview and on stderr); the sections
    after it get its time."""
    from ..approximators import StagePace

    plan, pace = context.plan, StagePace()
    order = _elastic_last(planned)
    built: dict[str, list[Any]] = {}
    with plt.rc_context({"figure.max_open_warning": 0}):
        for number, step in enumerate(order, start=1):
            planned_step = plan.sections[step.key]
            if step.key != Overview.key and _cut(context, step.key, pace, clock):
                continue
            bar = _plan.SectionBar(number, len(order), planned_step, silent=context.silent)
            first, started = len(report.sections), clock()
            try:
                step.build(report, context, bar)
            finally:
                context.timings[step.key] = bar.close()
                built[step.key] = report.sections[first:]
            pace.observe(planned_step.estimate, clock() - started)
    report.sections[:] = [section for step in planned for section in built.get(step.key, [])]


def _cut(context: Any, key: str, pace: Any, clock: Callable[[], float]) -> bool:
    """Whether section ``key`` is cut before it runs (its least does not end within the budget, the writing left
    for after it, at the ``pace`` so far); a cut section leaves the plan, its reason kept in ``context.cut``."""
    step = context.plan.sections[key]
    reason = _plan.cut_reason(step, pace, context.end - clock() - pace.seconds_for(_plan.WRITING_SECONDS))
    if reason is None:
        return False
    context.cut[key] = reason
    del context.plan.sections[key]
    if not context.silent:
        print(f"re-plan: section skipped to end within the time budget: {reason}", file=sys.stderr, flush=True)
    return True


def _imprecise_section(report: Report, parts: list[tuple[str, str]]) -> None:
    """The parts not precise enough to show, below every precise section, each with the budget it would need."""
    section = report.section("Not enough precision")
    section.text("These parts were computed but are not shown as results: their error is above "
                 f"{_plan.PRECISE_SHARE:.0%} of the spread of what they would show across training rows, so their "
                 "rankings and positions would be mostly noise. Each says what budget would make it precise (the "
                 "error falls as one over the square root of the permutations).")
    for title, paragraph in parts:
        section.comment(f"{title}. {paragraph}")
