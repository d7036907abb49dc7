"""The report's residual decomposition: the linear model refit on subsets of training rows (Liu & Barnard).

Shapley values are linear in the game, so every mean over explained rows is the Shapley value of one scalar
game. The CC plot's contribution means, the data values and the lists of helpful and harmful rows come from
the aggregate game over all training rows (:func:`~shap_instances.metrics.cc_means`, eq. 5's sign rule, so that
helpful means positive; O(n) memory, O(n p^2) per permutation for ridge), with the section's share of the time budget as
``max_time``; the composition means are free (residual / n, efficiency). Only what needs the full matrix, the
CC variance plot and the behaviour outliers, decomposes the residuals of a random sample of explained rows
(all of them up to 1,000; every training row stays a player), with sampling errors from
:func:`~shap_instances.metrics.contribution_statistics`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from sklearn.base import clone

from ..utils import beyond_noise, ranking_z
from . import _figures
from ._context import Context, explained_class_sentence
from ._plan import PRECISE_SHARE, STOP_SHARE
from ._precision import Precision

if TYPE_CHECKING:
    from ._html import Report

__all__ = ["ResidualDecomposition", "residual_problem", "time_permutations", "summary_table"]


def residual_problem(context: Context) -> tuple[Any, pd.Series, str, Any]:
    """(model, target, label, positive class or None): what the section decomposes.

    Regression: the linear pipeline's estimator on the encoded matrix and the target. Two classes: a ridge
    regression of the indicator of the second (sorted) class, a linear probability model.
    """
    from sklearn.linear_model import Ridge

    from ._models import final_estimator

    label = str(context.y_train.name or "target")
    if context.classification:
        positive = np.unique(context.y_train)[1]
        target = pd.Series((context.y_train == positive).astype(float).to_numpy(), index=context.Z_train.index)
        return Ridge(alpha=1.0), target, f"{label} == {positive}", positive
    target = pd.Series(np.asarray(context.y_train, dtype=np.float64), index=context.Z_train.index)
    return clone(final_estimator(context.linear)), target, label, None


def _explainer(context: Context, random_state: Any = None, **options: Any) -> Any:
    """The section's InstanceKernelExplainer on the encoded training rows (its seed, memory budget, bars)."""
    from ..explainers.residual import InstanceKernelExplainer

    model, target, _, _ = residual_problem(context)
    return InstanceKernelExplainer(model, context.Z_train, y=target,
                                   random_state=context.seed if random_state is None else random_state,
                                   max_memory=context.max_memory, **options)


def time_permutations(context: Context, sample_size: int, *, repeat_below: float = 2.0,
                      max_time: float | None = None) -> tuple[float, float]:
    """Seconds per permutation of the aggregate game (two outputs over all training rows) and of the vector game
    of ``sample_size`` explained rows, each from an antithetic pair (timed, not kept).

    With ``max_time``, a game is refused (:class:`~shap_instances.exceptions.BudgetError`) before its pair when
    the estimator's probe (one evaluation, or a short walk for a refit shortcut that walks prefixes: ridge,
    logistic regression, ...) puts the pair above ``max_time`` seconds, and a timing run stops there.

    The first pair also pays for first allocations (and, with a refit shortcut, for loading its compiled
    kernels); with a shortcut (then four pairs), or when it took less than ``repeat_below`` seconds, a second
    run is timed and the faster per permutation kept. Games without a refit shortcut are timed once, on the
    aggregate (their refits dominate: the vector game is given the same cost).
    """
    from ..approximators import PermutationApproximator, Throughput
    from ..games import AggregateGame

    explainer = _explainer(context, silent=True)
    n = len(context.Z_train)
    vector = explainer.game(context.Z_train if sample_size >= n else context.Z_train.iloc[:sample_size],  # one object:
                            explainer.y_train_[:sample_size])  # validated once (utils.validating_once)
    game = explainer.game()
    aggregate = AggregateGame(game, np.full((n, 2), 1.0 / n))  # the cost does not depend on the weights

    def seconds(game: Any) -> float:
        timings: list[float] = []
        while len(timings) < 2 and (game.cheap or sum(timings) < repeat_below):
            count = 8 if timings and game.cheap else 2  # a shortcut's call has a fixed cost: spread it
            start = time.perf_counter()
            result = PermutationApproximator(n_permutations=count, random_state=context.seed, silent=True,
                                             max_time=max_time).estimate(game)
            timings.append(Throughput.measure(time.perf_counter() - start, result.info["n_permutations"]).per_unit)
        return min(timings)

    per_aggregate = seconds(aggregate)
    return per_aggregate, (seconds(vector) if game.cheap else per_aggregate)


def summary_table(means: pd.DataFrame, sample: Any) -> pd.DataFrame:
    """Every training row's CC statistics: means from the aggregate game, variances from the sampled rows.

    Parameters
    ----------
    means : DataFrame
        :func:`~shap_instances.metrics.cc_means` of the aggregate game (one row per training row).
    sample : shap.Explanation
        :meth:`InstanceKernelExplainer.explain_sample <shap_instances.InstanceKernelExplainer.explain_sample>`:
        the decomposition of a random sample of the explained rows (``sampled_rows``, ``population_size``).

    Returns
    -------
    DataFrame
        ``means``' columns, then ``composition_var`` (the sampled rows' own decompositions; NaN for the rows not
        sampled), ``contribution_var`` and ``contribution_var_se`` (over the sampled residuals, with their
        sampling error; :func:`~shap_instances.metrics.contribution_statistics`), ``contribution_var_noise`` (the
        part of that variance due to the permutations) and ``explained`` (whether the row was sampled).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import Ridge
    >>> from shap_instances import InstanceKernelExplainer
    >>> from shap_instances.datasets import load_diabetes
    >>> from shap_instances.metrics import cc_means
    >>> from shap_instances.report._residual import summary_table
    >>> X, y = load_diabetes()
    >>> explainer = InstanceKernelExplainer(Ridge(), X[:60], y=y[:60], n_permutations=20, random_state=0,
    ...                                     silent=True)
    >>> table = summary_table(cc_means(explainer), explainer.explain_sample(10))
    >>> int(table["explained"].sum()), int(table["composition_var"].notna().sum()), len(table)
    (10, 10, 60)
    """
    from ..metrics import contribution_statistics

    n = len(means)
    statistics = contribution_statistics(sample)
    composition_var = np.full(n, np.nan)
    composition_var[sample.sampled_rows] = np.asarray(sample.values, dtype=np.float64).var(axis=1)
    explained = np.zeros(n, dtype=bool)
    explained[sample.sampled_rows] = True
    return means.assign(
        composition_var=composition_var,
        contribution_var=statistics["contribution_var"].to_numpy(),
        contribution_var_se=statistics["contribution_var_se"].to_numpy(),
        contribution_var_noise=statistics["contribution_var_noise"].to_numpy(),
        explained=explained,
    )


class ResidualDecomposition:
    """InstanceKernelExplainer on the linear model: CC plot, helpful and harmful rows, outliers, data values."""

    key = "residual"
    #: It spends the time the other sections leave (until its parts are precise): it runs last.
    elastic = True

    @staticmethod
    def applies(context: Context) -> bool:
        return not context.classification or np.unique(context.y_train).size == 2

    @staticmethod
    def skip_reason(context: Context) -> str:
        return (f"the residual decomposition needs a regression target or two classes (decomposed through a "
                f"linear probability model); this target has {np.unique(context.y_train).size} classes.")

    @staticmethod
    def build(report: Report, context: Context, bar: Any) -> None:
        model, target, label, positive = residual_problem(context)
        costs = context.plan.costs
        section = report.section(f"Residual decomposition ({type(model).__name__})")
        runs = _decompose(context, bar, len(target))
        means, values, variances = runs.means(), runs.values(), runs.variances()
        _describe(section, context, runs, label, positive)
        colour = target.to_numpy()
        _cc_plots(section, runs, colour, label, means=means.precise, variances=variances.precise)
        bar.advance(2 * costs.per_figure, "CC plots")
        if means.precise:
            _helpful_and_harmful(section, runs.summary, colour)
        bar.advance(costs.per_figure, "helpful and harmful rows")
        outliers = _behaviour_outliers(section, context, runs, show=variances.precise)
        bar.advance(costs.per_figure + 1.5 * costs.per_figure / 1.2, "outliers")
        if values.precise:
            _data_values(section, runs.summary)
        context.imprecise.extend(("Residual decomposition", part.needs(context.plan.budget))
                                 for part in (means, variances, values) if not part.precise)
        context.results["instances"] = runs.summary.join(outliers)


@dataclass
class _Decomposition:
    """What the section computed: the sampled rows' decomposition and the aggregate game's CC statistics."""

    n: int  # training rows (players)
    sample: Any  # the decomposition of the sampled explained rows (a shap.Explanation)
    sample_permutations: int
    sample_seconds: float
    summary: pd.DataFrame  # summary_table: every training row's CC statistics, and plain_mean (data values)
    n_permutations: int  # of the aggregate game
    rounds: int  # runs of the aggregate game pooled
    spent: float  # seconds the aggregate game took
    stopped: str  # why the aggregate game stopped: "precise", "time" or "max_evals"
    approximator: str = "permutation"  # of the aggregate game: "place-stratified" or "permutation"

    @property
    def m(self) -> int:
        """Explained rows decomposed (the sample)."""
        return len(self.sample.sampled_rows)

    def means(self) -> Precision:
        """The precision of the contribution means (CC plot, helpful and harmful rows)."""
        return Precision.of("the contribution means (the CC plot's vertical axis, the most helpful and most harmful "
                            "rows)", self.summary["contribution_mean"], self.summary["contribution_mean_se"],
                            permutations=self.n_permutations, seconds=self.spent, n_players=self.n)

    def values(self) -> Precision:
        """The precision of the plain means whose squares are the data values."""
        return Precision.of("the plain contribution means behind the data values", self.summary["plain_mean"],
                            self.summary["plain_mean_se"], permutations=self.n_permutations, seconds=self.spent,
                            n_players=self.n)

    def variances(self) -> Precision:
        """The permutation noise of the contribution variances (CC variance plot, behaviour outliers), pooled over
        training rows (:meth:`Precision.pooled`)."""
        return variance_precision(self.summary, permutations=self.sample_permutations, seconds=self.sample_seconds,
                                  n_players=self.n)


def variance_precision(table: pd.DataFrame, *, permutations: int, seconds: float, n_players: int) -> Precision:
    """:meth:`Precision.pooled` of the contribution variances in ``table`` (``contribution_var`` and
    ``contribution_var_noise``: :func:`summary_table` or :func:`~shap_instances.metrics.contribution_statistics`)."""
    return Precision.pooled("the contribution variances of the sampled rows (the CC variance plot, the behaviour "
                            "outliers)", table["contribution_var"], table["contribution_var_noise"],
                            permutations=permutations, seconds=seconds, n_players=n_players)


def _decompose(context: Context, bar: Any, n: int) -> _Decomposition:
    """The sampled rows' decomposition, then the aggregate game's, each stopping on time by itself (``max_time``).

    The time the section may use runs up to the deadline, less what the sections not yet run (none: it runs last)
    and this one's figures are planned to take; the sampled rows take their planned share first, the aggregate
    game the rest (:func:`_aggregate`: in rounds, until precise or out of time), and the sampled rows whatever
    the aggregate game leaves while their contribution variances are not precise (:func:`refine_sample`).
    """
    plan = context.plan
    aggregate_planned = plan.n_permutations * plan.costs.per_aggregate
    afterwards = max(plan.sections["residual"].estimate - aggregate_planned - plan.sample_seconds, 0.0)
    stop_at = context.section_deadline("residual") - afterwards

    start = time.perf_counter()
    share = plan.sample_seconds / max(plan.sample_seconds + aggregate_planned, 1e-9)
    sampler = _explainer(context, n_permutations=plan.sample_permutations, silent=context.silent,
                         batch_size=min(plan.batch_size, plan.sample_permutations),
                         max_time=max(share * (stop_at - start), 1.0))
    sample = sampler.explain_sample(plan.costs.n_explained)
    sample_permutations = sampler.result_.info["n_permutations"]
    sample_seconds = time.perf_counter() - start
    bar.advance(plan.sample_seconds, f"{len(sample.sampled_rows):,} sampled rows, {sample_permutations:,} permutations")
    bar.replan(aggregate_planned + afterwards)

    start = time.perf_counter()
    explainer, pooled, done, rounds, stopped, used = _aggregate(context, stop_at, n)
    spent = time.perf_counter() - start
    bar.advance(aggregate_planned, f"{done:,} permutations of the aggregate game")
    most = (None if plan.max_evals is None  # what --max-evals leaves after both games' first runs
            else max(plan.sample_permutations + plan.n_permutations - done - sample_permutations, 0))
    sample, sample_permutations, sample_seconds = refine_sample(context, sample, sample_permutations,
                                                                sample_seconds, stop_at, most)
    bar.replan(afterwards)
    return _Decomposition(n=n, sample=sample, sample_permutations=sample_permutations, sample_seconds=sample_seconds,
                          summary=summary_table(cc_means_of(explainer, pooled), sample), n_permutations=done,
                          rounds=rounds, spent=spent, stopped=stopped,
                          approximator="place-stratified" if "place-stratified" in used else "auto")


def refine_sample(context: Context, sample: Any, permutations: int, seconds: float, stop_at: float,
                  most: int | None = None) -> tuple[Any, int, float]:
    """More permutations of the sampled rows while their contribution variances are not precise and time is left:
    the report's budget spent on the part still imprecise once the aggregate game is done (issue 24).

    Rounds of doubling size on the same rows, each with an independent seed and cut by ``max_time`` at
    ``stop_at``, pooled as the aggregate game's rounds are (:func:`_pooled`); ``most`` caps the permutations of all
    the new rounds (``--max-evals``). Returns ``(the pooled sample, its permutations, its seconds)``.
    """
    from ..metrics import contribution_statistics

    rows, target = sample.sampled_rows, residual_problem(context)[1].to_numpy()
    rounds = [(permutations, np.asarray(sample.values), _errors(sample))]
    while True:
        precise = variance_precision(contribution_statistics(sample), permutations=permutations, seconds=seconds,
                                     n_players=len(target)).precise
        left = stop_at - time.perf_counter()
        size = permutations if most is None else min(permutations, most - (permutations - rounds[0][0]))
        if precise or left < 0.5 or size < 2:  # half a second: a round's set-up would not pay
            return sample, permutations, seconds
        start = time.perf_counter()
        explainer = _explainer(context, n_permutations=size - size % 2, silent=True, max_time=left,
                               batch_size=min(context.plan.batch_size, size - size % 2),
                               random_state=np.random.default_rng([context.seed, 2, len(rounds)]))
        more = explainer(context.Z_train.iloc[rows], target[rows])
        rounds.append((int(explainer.result_.info["n_permutations"]), np.asarray(more.values), _errors(more)))
        sample = _resampled(sample, *_pooled(rounds))
        permutations, seconds = sum(count for count, _, _ in rounds), seconds + time.perf_counter() - start


def _resampled(sample: Any, values: np.ndarray, errors: np.ndarray) -> Any:
    """``sample`` (an :meth:`explain_sample <shap_instances.InstanceKernelExplainer.explain_sample>` result) with
    new values and standard errors, and the rest kept."""
    from .._explanation import build_explanation

    out = build_explanation(values, sample.base_values, feature_names=list(sample.feature_names),
                            data=sample.data, display_data=sample.display_data, standard_errors=errors)
    out.row_names, out.sampled_rows, out.population_size = (getattr(sample, "row_names", None), sample.sampled_rows,
                                                            sample.population_size)
    return out


def aggregate_approximator(context: Context, n: int) -> str:
    """The aggregate game's estimator: place strata with the first-order control variate where a draw is cut
    short (:func:`~shap_instances.approximators.cuts_walks`; more than 12 rows: below, "auto" enumerates), else
    "auto" (antithetic permutations). Their errors at equal time: docs/engine.md, "Variance reduction"."""
    from ..approximators import cuts_walks

    return "place-stratified" if n > 12 and cuts_walks(residual_problem(context)[0]) else "auto"


def cc_means_of(explainer: Any, pooled: Any) -> pd.DataFrame:
    """:func:`~shap_instances.metrics.cc_means` of the pooled aggregate game, with the plain means behind the
    data values and their standard errors (``plain_mean``, ``plain_mean_se``)."""
    from ..metrics import cc_means

    errors = np.asarray(pooled.error_std)
    return cc_means(explainer, explanation=pooled).assign(plain_mean=pooled.values[1], plain_mean_se=errors[1])


def _aggregate(context: Context, stop_at: float, n: int) -> tuple[Any, Any, int, int, str, set[str]]:
    """The aggregate game (eq. 5's signs and the plain means) in rounds, pooled, until both outputs are precise
    beyond need (error at most :data:`~shap_instances.report._plan.STOP_SHARE` of the spread), the time is spent
    (``stop_at``) or, with ``max_evals``, the plan's permutations are done.

    The first round has ``2 n`` permutations (at least four; with place strata, four times their pilot's budget),
    each next one as many as all before it, so the
    precision is checked after every doubling; each round stops on time by itself (``max_time``). Rounds use
    independent seeds (the first the report's seed); the pooled mean weights each round by its permutations,
    and its standard error is ``sqrt(sum (m_k / M)^2 se_k^2)``.

    A round uses :func:`aggregate_approximator`'s estimator when its budget is at least twice the place strata's
    pilot draws, else antithetic permutations (both unbiased, with standard errors: they pool alike).

    Returns ``(explainer, pooled explanation, permutations, rounds, why it stopped, the estimators used)``.
    """
    from ..approximators import PlaceStratifiedApproximator
    from ._plan import MIN_PERMUTATIONS, STOP_SHARE

    plan = context.plan
    limit = plan.n_permutations if plan.max_evals is not None else None
    preferred, pilot = aggregate_approximator(context, n), PlaceStratifiedApproximator().pilot_permutations(n)
    first = 4 * pilot if preferred == "place-stratified" else max(MIN_PERMUTATIONS, 2 * n)
    size, done, start = first, 0, time.perf_counter()
    rounds: list[tuple[int, np.ndarray, np.ndarray]] = []
    used: set[str] = set()
    while True:
        if limit is not None:
            size = min(size, limit - done)
        seed = context.seed if not rounds else np.random.default_rng([context.seed, len(rounds)])
        method = preferred if size >= 2 * pilot else "auto"
        used.add(method)
        explainer = _explainer(context, n_permutations=size, silent=context.silent, random_state=seed,
                               max_time=max(stop_at - time.perf_counter(), 0.5), approximator=method)
        explanation = explainer.aggregate(weights=["sign", "mean"])
        info = explainer.result_.info
        count = int(info.get("n_permutations", size))
        done += count
        rounds.append((count, np.asarray(explanation.values), _errors(explanation)))
        pooled = _pool(explanation, rounds)
        now = time.perf_counter()
        timed_out = info.get("stopped_by") == "max_time"
        stopped = _stop_reason(pooled, STOP_SHARE, spent=now - start, left=stop_at - now, timed_out=timed_out,
                               evals=limit is not None and done >= limit)
        if stopped:
            return explainer, pooled, done, len(rounds), stopped, used
        size = done


def _errors(explanation: Any) -> np.ndarray:
    errors = getattr(explanation, "error_std", None)
    return np.zeros(np.shape(explanation.values)) if errors is None else np.asarray(errors, dtype=np.float64)


def _pool(explanation: Any, rounds: list[tuple[int, np.ndarray, np.ndarray]]) -> Any:
    """An explanation like the last round's holding the mean of every round, weighted by permutations, and its
    error."""
    from .._explanation import build_explanation

    values, errors = _pooled(rounds)
    return build_explanation(values, explanation.base_values, feature_names=list(explanation.feature_names),
                             standard_errors=errors)


def _pooled(rounds: list[tuple[int, np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray]:
    """The mean of independent rounds ``(permutations, values, standard errors)`` weighted by their permutations,
    and its standard error ``sqrt(sum (m_k / M)^2 se_k^2)``."""
    total = sum(count for count, _, _ in rounds)
    return (np.asarray(sum(count / total * values for count, values, _ in rounds)),
            np.sqrt(sum((count / total * errors) ** 2 for count, _, errors in rounds)))


def _stop_reason(pooled: Any, share: float, *, spent: float, left: float, timed_out: bool, evals: bool) -> str:
    """Why the aggregate game stops after this round, or "" (go on): "precise" when both outputs' errors are at
    most ``share`` of their spread; "time" (the round was cut by ``max_time``, or under half a second is ``left``);
    "max_evals"; "out of reach" when the contribution means cannot reach the report's
    :data:`~shap_instances.report._plan.PRECISE_SHARE` in the time left at the speed of the ``spent`` seconds
    (their error falls as one over the square root of the permutations)."""
    values, errors = np.asarray(pooled.values), np.asarray(pooled.error_std)
    parts = [Precision.of("", values[k], errors[k], permutations=1, seconds=spent, n_players=1)
             for k in range(len(values))]
    if all(part.share <= share for part in parts):
        return "precise"
    if timed_out or left < 0.5:
        return "time"
    if evals:
        return "max_evals"
    return "out of reach" if parts[0].factor() * spent > spent + left else ""


def _describe(section: Any, context: Context, runs: _Decomposition, label: str, positive: Any) -> None:
    """The section's text: what is decomposed, the aggregate game's budget and error, the sample, the comment."""
    n, means = runs.n, runs.means()
    stopped = {"precise": f", stopped once its error was below {STOP_SHARE:.0%} of the spread",
               "time": ", stopped by the time budget", "max_evals": ", stopped at --max-evals (max_evals=)",
               "out of reach": f", stopped once the error of {PRECISE_SHARE:.0%} of the spread proved out of reach "
                               "within the time budget"}[runs.stopped]
    section.text(
        "Each residual is split into Shapley contributions of the training rows: the model is refit on "
        f"subsets of the {n:,} training rows, exactly, along random permutations. Composition = a residual's "
        "share per row; contribution = a row's effect on the residuals, positive when it shrinks them "
        "(each explained residual's sign, eq. 5 of the paper, as cc_plot(sign_by=\"explained\") draws it; the "
        "paper's figure 3 and cc_plot's default sign each row by its own residual instead, which flips rows "
        "with negative residuals: see docs/explainers/residual.md). The model sees the "
        "encoded matrix (standardised numeric columns, one-hot string columns); the preprocessing is fitted "
        "once on all training rows and held fixed while the model is refit."
    )
    section.text(
        "Means over the explained rows are Shapley values of one scalar game (Shapley values are linear in "
        "the game): the contribution means, the data values and the lists of helpful and harmful rows come "
        f"from that aggregate game over all {n:,} training rows, {_estimator_phrase(runs)} in "
        f"{runs.rounds} round(s) of doubling size{stopped}, in {runs.spent:.1f} s, never the {n:,} x {n:,} "
        f"matrix; its permutation error of a contribution mean is {means.error:.3g} (root mean square of the "
        f"standard errors over training rows), and the contribution means spread with standard deviation "
        f"{means.spread:.3g}. The composition means are exact: a row's residual / n (efficiency)."
    )
    if positive is not None:
        section.text(explained_class_sentence(
            positive, f"the residuals are those of a ridge regression of the indicator {label}, a linear "
                      "probability model: residual = P(class) - 1[row has the class]"))
    section.text(_sample_sentence(context, runs))
    section.comment(" ".join(part.sentence() for part in (means, runs.values(), runs.variances())))


def _estimator_phrase(runs: _Decomposition) -> str:
    """How the aggregate game was estimated, with its budget in permutations."""
    if runs.approximator != "place-stratified":
        return f"{runs.n_permutations:,} antithetic permutations"
    return (f"the evaluations of {runs.n_permutations:,} permutations spent by place-stratified sampling (the "
            "places a row joins at cut into strata, each sampled on short prefixes, the budget allocated where the "
            "variance is (Neyman), with the first-order control variate where the model has one; unbiased up to "
            "O(1/draws), standard errors scaled to a t interval: docs/engine.md, \"Variance reduction\")")


def _sample_sentence(context: Context, runs: _Decomposition) -> str:
    """Where the CC variance plot and the behaviour outliers come from: the sampled rows, and their errors."""
    summary, n, m = runs.summary, runs.n, runs.m
    variance = summary["contribution_var"].where(summary["contribution_var"] > 0)
    var_se = float(np.median(summary["contribution_var_se"] / variance))
    noise = runs.variances().share ** 2
    return (
        "The CC variance plot and the behaviour outliers need each row's own decomposition (not a mean): "
        + (f"they come from the full decomposition of a random sample of {m:,} of the {n:,} explained rows "
           f"(seed {context.seed}; every training row is a player), {runs.sample_permutations:,} "
           f"permutations in {runs.sample_seconds:.1f} s. Sampling error of a training row's contribution "
           f"variance: median {var_se:.0%} of it (finite-population corrected); "
           if m < n else
           f"every row is decomposed ({runs.sample_permutations:,} permutations in {runs.sample_seconds:.1f} "
           "s); ")
        + f"the permutations' noise makes up {noise:.0%} of the contribution variances (pooled over training rows)."
    )


def _cc_plots(section: Any, runs: _Decomposition, colour: np.ndarray, label: str, *, means: bool,
              variances: bool) -> None:
    """The CC plot (all training rows, aggregate game) and the CC variance plot (the sampled rows), each only when
    precise (``means``, ``variances``)."""
    from ..plots import cc_plot

    summary, n, m = runs.summary, runs.n, runs.m
    sampled = summary.loc[summary["explained"]]
    if means:
        ax = cc_plot(summary, color=colour, show=False, label=label)
        average = float(summary["contribution_mean"].mean())
        assert ax is not None  # show=False returns the axes
        ax.axhline(average, color="0.4", linestyle="--", linewidth=1,
                   label=f"average row: -mean |residual| / n = {average:.3g}")
        ax.legend(loc="best", fontsize="small")
        section.figure(_figures.figure_of(ax), "cc_plot", "CC plot: mean composition (residual / n) against mean "
                       f"contribution (the aggregate game), for all {n:,} training rows. " + harmful_sentence(summary))
    if variances:
        ax = cc_plot(summary, statistic="var", color=colour, show=False, label=label)
        section.figure(_figures.figure_of(ax), "cc_variance_plot",
                       "CC variance plot: variance of the composition against variance of the contribution"
                       + (f", for the {len(sampled):,} sampled rows (a composition variance needs the row's own "
                          f"decomposition; contribution variances over the {m:,} sampled residuals)."
                          if m < n else "."))


def harmful_sentence(summary: pd.DataFrame) -> str:
    """Why most rows read as harmful: the contribution means add up to minus the mean absolute residual.

    The empty coalition's residual is 0 (the paper's convention, ``v(empty) = 0``), so each explained residual's
    contributions add up to the residual itself, and signed by it (eq. 5) to ``-|residual|``: the contribution
    means of all ``n`` rows add up to ``-mean |residual|``, an average of ``-mean |residual| / n`` per row.

    Examples
    --------
    >>> import pandas as pd
    >>> from shap_instances.report._residual import harmful_sentence
    >>> table = pd.DataFrame({"contribution_mean": [-0.5, -0.3, 0.1, -0.3], "residual": [2.0, -1.0, 0.5, -0.5]})
    >>> harmful_sentence(table)[:60]
    'A contribution mean is negative ("harmful") for 3 of the 4 r'
    """
    contribution, n = summary["contribution_mean"], len(summary)
    total = float(contribution.sum())
    mean_abs = float(summary["residual"].abs().mean())
    return (f"A contribution mean is negative (\"harmful\") for {int((contribution < 0).sum()):,} of the {n:,} rows, "
            f"and that is expected: the model fitted on no rows has residual 0 by the paper's convention (v(empty) "
            f"= 0), so each residual's contributions add up to the residual itself and, signed by it (eq. 5), to "
            f"minus its size. The contribution means therefore add up to minus the mean absolute residual "
            f"({total:.4g}; mean |residual| {mean_abs:.4g}), {total / n:.3g} per row on average (the dashed line): "
            "read a row against that line, above it the row shrinks the residuals more than the average row does, "
            "below it less.")


def _helpful_and_harmful(section: Any, summary: pd.DataFrame, colour: np.ndarray) -> None:
    """The most helpful and most harmful training rows beyond their noise: a bar chart with 95% error bars and two
    tables, which name only rows whose contribution mean is away from 0 beyond its error."""
    contribution, errors = summary["contribution_mean"], summary["contribution_mean_se"]
    table = pd.DataFrame({
        "contribution_mean": contribution,
        "standard_error": errors,
        "residual": summary["residual"],
        "target": colour,
    }, index=summary.index)
    helpful, harmful = _figures.helpful_and_harmful_rows(contribution, errors, k=10)
    fig, ax = plt.subplots(figsize=(7.5, 6.5))
    _figures.helpful_harmful_bars(ax, contribution, errors, k=10)
    ax.set_title("Most helpful and most harmful training rows (beyond their error)")
    counts = _figures.beyond_noise_sentence(len(helpful), len(harmful), 10)
    z = ranking_z(len(summary))
    rule = (f"A row is listed only when its contribution mean is away from 0 by more than {z:.2f} standard errors"
            f" (a 95% interval widened for ranking all {len(summary):,} rows, so that rows of pure "
            "noise are not listed); the error bars are 95% intervals (+/- 1.96 standard errors). ")
    section.figure(fig, "helpful_harmful",
                   "The training rows with the largest and the smallest mean sign-normalised contribution: "
                   f"helpful rows shrink the other residuals, harmful rows enlarge them. {rule}{counts}")
    se_note = " standard_error: the permutation error of the row's contribution mean (aggregate game)."
    if len(helpful):
        section.table(table.loc[helpful.index[:8]], caption="Most helpful training rows beyond their error: they "
                                                            "shrink the other residuals the most." + se_note)
    if len(harmful):
        section.table(table.loc[harmful.index[::-1][:8]], caption="Most harmful training rows beyond their "
                                                                  "error: they enlarge the other residuals the "
                                                                  "most." + se_note)


def _behaviour_outliers(section: Any, context: Context, runs: _Decomposition, *, show: bool) -> pd.DataFrame:
    """IsolationForest outliers on the sampled rows' contributions against those on the features; the flags (for
    instances.csv), and the figure and table when ``show`` (the contribution variances are precise)."""
    from sklearn.decomposition import PCA

    from ..metrics import behaviour_outliers, normalised_contributions

    summary, sample, n, m = runs.summary, runs.sample, runs.n, runs.m
    outliers = behaviour_outliers(sample, context.Z_train, random_state=context.seed)
    if not show:
        return outliers
    behaviour = normalised_contributions(sample).T  # one row per training instance
    pca = PCA(n_components=2, random_state=context.seed).fit(behaviour)
    components, share = pca.transform(behaviour), pca.explained_variance_ratio_
    del behaviour
    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 5))
    flags = outliers["by_behaviour"].to_numpy(), outliers["by_features"].to_numpy()
    _figures.outlier_scatter(left, summary["composition_mean"], summary["contribution_mean"], *flags,
                             xlabel="composition mean (residual / n)",
                             ylabel="contribution mean (sign-normalised)")
    left.set_title("CC plane")
    _figures.outlier_scatter(right, components[:, 0], components[:, 1], *flags, legend=False,
                             xlabel=f"contribution PC 1 ({share[0]:.0%} of variance)",
                             ylabel=f"contribution PC 2 ({share[1]:.0%} of variance)")
    right.set_title("First two principal components of the contribution rows")
    for axis in (left, right):
        _figures.short_ticks(axis, "x")
        _figures.short_ticks(axis, "y")
    section.figure(fig, "behaviour_outliers",
                   "Behaviour-based outliers (IsolationForest on each row's contributions to the "
                   + (f"{m:,} sampled residuals" if m < n else "residuals")
                   + "; red) against outliers on the encoded features (blue rings), on the CC plane and on "
                   "the first two principal components of the contribution rows.")
    counts = pd.crosstab(outliers["by_behaviour"], outliers["by_features"])
    section.table(counts, caption="IsolationForest outliers on contribution rows (behaviour, rows) against "
                                  "outliers on the encoded features (columns) (Liu & Barnard, figure 6).")
    return outliers


def _data_values(section: Any, summary: pd.DataFrame) -> None:
    """The data values (squared plain mean contributions): all rows sorted, the largest of those beyond their error
    labelled with 95% error bars, and a table that sets them beside the contribution means, with one caption on why
    they differ."""
    signs = beyond_noise(summary["contribution_mean"], summary["contribution_mean_se"])
    named = beyond_noise(summary["plain_mean"], summary["plain_mean_se"]) != 0
    values = summary["instance_value"].rename("instance_value")
    errors = 2 * summary["plain_mean"].abs() * summary["plain_mean_se"]  # of m^2, to first order: 2 |m| se(m)
    top = min(12, int(named.sum()))
    shown = values[named].iloc[np.argsort(-values[named].to_numpy(), kind="stable")[:top]].index
    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 5), gridspec_kw={"width_ratios": [3, 2]})
    _figures.data_value_rank(left, values, signs, shown=shown)
    left.set_title("All training rows, sorted")
    _figures.data_value_top(right, values[named], signs[named], errors=errors, k=top)
    right.set_title(f"The {top} largest data values beyond their error")
    section.figure(fig, "data_values",
                   f"Data values (the square of each training row's plain mean contribution, from the aggregate "
                   f"game), sorted; the {top} largest of the {int(named.sum()):,} whose plain mean is away from 0 by "
                   f"more than {ranking_z(len(summary)):.2f} standard errors (as for the helpful and harmful rows) are "
                   "labelled, with 95% error bars (+/- 1.96 standard errors of the square, 2 |mean| times the mean's), "
                   "and coloured by the sign of their contribution mean (eq. 5) where it is beyond its error, grey "
                   "where it is within noise. How they differ from the contribution means: see the table below.")
    table = summary.loc[named, ["instance_value", "plain_mean", "contribution_mean", "residual"]]
    section.table(table.sort_values("instance_value", ascending=False).head(8),
                  caption=data_value_caption(summary))


def data_value_caption(summary: pd.DataFrame) -> str:
    """One caption for the data values beside the contribution means: what each is and why they differ.

    Examples
    --------
    >>> import pandas as pd
    >>> from shap_instances.report._residual import data_value_caption
    >>> table = pd.DataFrame({"instance_value": [9.0, 0.01], "plain_mean": [-3.0, 0.1],
    ...                       "contribution_mean": [-0.2, 0.05], "residual": [-140.0, 3.0]}, index=[359, 7])
    >>> "row 359: data value 9 (plain mean -3)" in data_value_caption(table)
    True
    """
    row = summary["instance_value"].idxmax()
    top = summary.loc[row]
    return (
        "Data values beside contribution means: two different averages over the explained residuals of the same "
        "row's contributions. instance_value, the data value (the paper's), is the square of plain_mean, the "
        "row's contributions averaged as they are: how far the row moves the residuals, all in one direction, "
        "on average (its effect on the mean residual). contribution_mean (eq. 5, the CC plot and the helpful and "
        "harmful lists) first signs each contribution by the residual it goes to: whether the row shrinks the "
        "residuals' size (positive) or enlarges it. A row with a large residual pulls the fit towards its own "
        "target, which moves every residual the same way: a large plain mean, hence a large data value; but that "
        "shift shrinks the residuals of one sign and enlarges those of the other, which nearly cancel in the "
        f"contribution mean. Here row {row}: data value {top['instance_value']:.3g} (plain mean "
        f"{top['plain_mean']:.3g}), contribution mean {top['contribution_mean']:.3g}, its own residual "
        f"{top['residual']:.4g}. All rows, with the CC statistics and outlier flags, are in instances.csv."
    )
