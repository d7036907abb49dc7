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

from . import _figures
from ._context import Context, explained_class_sentence

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


def _explainer(context: Context, **options: Any) -> Any:
    """The section's InstanceKernelExplainer on the encoded training rows (its seed, memory budget, bars)."""
    from ..explainers.residual import InstanceKernelExplainer

    model, target, _, _ = residual_problem(context)
    return InstanceKernelExplainer(model, context.Z_train, y=target, random_state=context.seed,
                                   max_memory=context.max_memory, **options)


def time_permutations(context: Context, sample_size: int, *, repeat_below: float = 2.0) -> tuple[float, float]:
    """Seconds per permutation of the aggregate game (two outputs over all training rows) and of the vector game
    of ``sample_size`` explained rows, each from an antithetic pair (timed, not kept).

    The first pair also pays for first allocations (and, with a refit shortcut, for loading its compiled
    kernels); with a shortcut (then four pairs), or when it took less than ``repeat_below`` seconds, a second
    run is timed and the faster per permutation kept. Games without a refit shortcut are timed once, on the
    aggregate (their refits dominate: the vector game is given the same cost).
    """
    from ..approximators import PermutationApproximator
    from ..games import AggregateGame

    explainer = _explainer(context, silent=True)
    n = len(context.Z_train)
    vector = explainer.game(context.Z_train.iloc[:sample_size], explainer.y_train_[:sample_size])
    game = explainer.game()
    aggregate = AggregateGame(game, np.full((n, 2), 1.0 / n))  # the cost does not depend on the weights

    def seconds(game: Any) -> float:
        timings: list[float] = []
        while len(timings) < 2 and (game.cheap or sum(timings) < repeat_below):
            count = 8 if timings and game.cheap else 2  # a shortcut's call has a fixed cost: spread it
            start = time.perf_counter()
            PermutationApproximator(n_permutations=count, random_state=context.seed, silent=True).estimate(game)
            timings.append((time.perf_counter() - start) / count)
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


def _precision_comment(error: float, spread: float, *, spent: float, capped: bool) -> str:
    """What the permutation error of the contribution means allows one to read from the CC plot and the lists.

    The observed spread of the contribution means is that of the true means plus that of their errors, so the
    true spread is estimated as ``sqrt(spread^2 - error^2)``; the comment says whether the rows differ beyond
    their noise, and what more permutations would buy.

    Examples
    --------
    >>> from shap_instances.report._residual import _precision_comment
    >>> _precision_comment(0.01, 0.1, spent=10, capped=False)[:46]
    'The error of a contribution mean is 10% of the'
    """
    if not spread > 0:
        return "Every contribution mean is the same: the training rows do not differ in their effect on the residuals."
    ratio = error / spread
    true_spread = float(np.sqrt(max(spread**2 - error**2, 0.0)))
    if ratio <= 0.5:
        return (f"The error of a contribution mean is {ratio:.0%} of their spread across training rows: the CC "
                "plot's vertical positions and the lists of most helpful and most harmful rows stand above the noise.")
    parts = [f"At this budget the error of a contribution mean is {ratio:.0%} of their spread across training rows"]
    if true_spread < 0.5 * error:
        parts.append(": the rows do not differ detectably in their effect on the residuals (the spread is what the "
                     "errors alone would give, as for homogeneous data), so the CC plot's vertical positions and the "
                     "lists of most helpful and most harmful rows below are noise; the composition means (residual "
                     "/ n) are exact.")
        target, goal = error / 2, "Halving the permutation error"
    else:
        parts.append(f": the contribution means differ (true spread about {true_spread:.3g}) but the CC plot's "
                     "vertical positions and the lists of most helpful and most harmful rows below are dominated "
                     "by noise; the composition means (residual / n) are exact.")
        target, goal = true_spread / 4, "Bringing the permutation error to a quarter of that spread"
    factor = (error / target) ** 2
    needed = factor * spent
    from ._plan import MOST_PER_PLAYER

    parts.append(f" {goal} takes about {factor:.0f} times as many permutations ("
                 + (f"{needed / 60:.0f} minutes" if needed >= 90 else f"{needed:.0f} s") + " at this speed); "
                 + (f"the report stops at {MOST_PER_PLAYER}n permutations: compute more with "
                    "InstanceKernelExplainer(n_permutations=...).aggregate() in Python." if capped
                    else "raise --time-budget accordingly."))
    return "".join(parts)


class ResidualDecomposition:
    """InstanceKernelExplainer on the linear model: CC plot, helpful and harmful rows, outliers, data values."""

    key = "residual"

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
        _describe(section, context, runs, label, positive)
        colour = target.to_numpy()
        _cc_plots(section, runs, colour, label)
        bar.advance(2 * costs.per_figure, "CC plots")
        _helpful_and_harmful(section, runs.summary, colour)
        bar.advance(costs.per_figure, "helpful and harmful rows")
        outliers = _behaviour_outliers(section, context, runs)
        bar.advance(costs.per_figure + 1.5 * costs.per_figure / 1.2, "outliers")
        _data_values(section, runs.summary)
        context.results["instances"] = runs.summary.join(outliers)


@dataclass
class _Decomposition:
    """What the section computed: the sampled rows' decomposition and the aggregate game's CC statistics."""

    n: int  # training rows (players)
    sample: Any  # the decomposition of the sampled explained rows (a shap.Explanation)
    sample_permutations: int
    sample_seconds: float
    summary: pd.DataFrame  # summary_table: every training row's CC statistics
    n_permutations: int  # of the aggregate game
    spent: float  # seconds the aggregate game took
    stopped: bool  # the aggregate game was stopped by the time budget

    @property
    def m(self) -> int:
        """Explained rows decomposed (the sample)."""
        return len(self.sample.sampled_rows)


def _decompose(context: Context, bar: Any, n: int) -> _Decomposition:
    """The sampled rows' decomposition, then the aggregate game's, each stopping on time by itself (``max_time``).

    The time the section may use runs up to the deadline, less what the later sections and this one's figures
    are planned to take; the sampled rows take their planned share first, the aggregate game the rest.
    """
    from ..metrics import cc_means

    plan = context.plan
    aggregate_planned = plan.n_permutations * plan.costs.per_aggregate
    afterwards = max(plan.sections["residual"].estimate - aggregate_planned - plan.sample_seconds, 0.0)
    later = sum(s.estimate for key, s in plan.sections.items() if key in ("representer", "forest"))
    stop_at = context.deadline - afterwards - later

    def time_left(share: float = 1.0) -> float:
        return max(share * (stop_at - time.perf_counter()), 1.0)

    start = time.perf_counter()
    sampler = _explainer(context, n_permutations=plan.sample_permutations, silent=context.silent,
                         batch_size=min(plan.batch_size, plan.sample_permutations),
                         max_time=time_left(plan.sample_seconds / max(plan.sample_seconds + aggregate_planned, 1e-9)))
    sample = sampler.explain_sample(plan.costs.n_explained)
    sample_permutations = sampler.result_.info["n_permutations"]
    sample_seconds = time.perf_counter() - start
    bar.advance(plan.sample_seconds, f"{len(sample.sampled_rows):,} sampled rows, {sample_permutations:,} permutations")
    bar.replan(aggregate_planned + afterwards)

    start = time.perf_counter()
    explainer = _explainer(context, n_permutations=plan.n_permutations, silent=context.silent, max_time=time_left())
    means = cc_means(explainer)  # the aggregate game, eq. 5's signs (helpful rows positive)
    info = explainer.result_.info
    spent = time.perf_counter() - start
    bar.advance(aggregate_planned, f"{info['n_permutations']:,} permutations of the aggregate game")
    bar.replan(afterwards)
    return _Decomposition(n=n, sample=sample, sample_permutations=sample_permutations, sample_seconds=sample_seconds,
                          summary=summary_table(means, sample), n_permutations=info["n_permutations"], spent=spent,
                          stopped=info.get("stopped_by") == "max_time")


def _describe(section: Any, context: Context, runs: _Decomposition, label: str, positive: Any) -> None:
    """The section's text: what is decomposed, the aggregate game's budget and error, the sample, the comment."""
    n, n_permutations, summary = runs.n, runs.n_permutations, runs.summary
    spread = float(summary["contribution_mean"].std())
    permutation = float(np.sqrt(np.mean(summary["contribution_mean_se"] ** 2)))
    stopped = " (stopped by the time budget)" if runs.stopped else ""
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
        f"from that aggregate game over all {n:,} training rows, {n_permutations:,} antithetic permutations"
        f"{stopped} in {runs.spent:.1f} s, never the {n:,} x {n:,} matrix; its permutation error of a "
        f"contribution mean is {permutation:.3g} (root mean square of the standard errors over training rows), "
        f"and the contribution means spread with standard deviation {spread:.3g}. The composition means are "
        "exact: a row's residual / n (efficiency)."
    )
    if positive is not None:
        section.text(explained_class_sentence(
            positive, f"the residuals are those of a ridge regression of the indicator {label}, a linear "
                      "probability model: residual = P(class) - 1[row has the class]"))
    section.text(_sample_sentence(context, runs))
    section.comment(_precision_comment(permutation, spread, spent=runs.spent, capped=n_permutations >= _most(n)))


def _sample_sentence(context: Context, runs: _Decomposition) -> str:
    """Where the CC variance plot and the behaviour outliers come from: the sampled rows, and their errors."""
    summary, n, m = runs.summary, runs.n, runs.m
    variance = summary["contribution_var"].where(summary["contribution_var"] > 0)
    var_se = float(np.median(summary["contribution_var_se"] / variance))
    noise = float(np.median(summary["contribution_var_noise"] / variance))
    return (
        "The CC variance plot and the behaviour outliers need each row's own decomposition (not a mean): "
        + (f"they come from the full decomposition of a random sample of {m:,} of the {n:,} explained rows "
           f"(seed {context.seed}; every training row is a player), {runs.sample_permutations:,} "
           f"permutations in {runs.sample_seconds:.1f} s. Sampling error of a training row's contribution "
           f"variance: median {var_se:.0%} of it (finite-population corrected); "
           if m < n else
           f"every row is decomposed ({runs.sample_permutations:,} permutations in {runs.sample_seconds:.1f} "
           "s); ")
        + f"the permutations' noise makes up a median {noise:.0%} of a contribution variance."
    )


def _cc_plots(section: Any, runs: _Decomposition, colour: np.ndarray, label: str) -> None:
    """The CC plot (all training rows, aggregate game) and the CC variance plot (the sampled rows)."""
    from ..plots import cc_plot

    summary, n, m = runs.summary, runs.n, runs.m
    sampled = summary.loc[summary["explained"]]
    ax = cc_plot(summary, color=colour, show=False, label=label)
    section.figure(_figures.figure_of(ax), "cc_plot", "CC plot: mean composition (residual / n) against mean "
                                         f"contribution (the aggregate game), for all {n:,} training rows.")
    ax = cc_plot(summary, statistic="var", color=colour, show=False, label=label)
    section.figure(_figures.figure_of(ax), "cc_variance_plot",
                   "CC variance plot: variance of the composition against variance of the contribution"
                   + (f", for the {len(sampled):,} sampled rows (a composition variance needs the row's own "
                      f"decomposition; contribution variances over the {m:,} sampled residuals)."
                      if m < n else "."))


def _helpful_and_harmful(section: Any, summary: pd.DataFrame, colour: np.ndarray) -> None:
    """The most helpful and most harmful training rows: a bar chart and two tables."""
    contribution = summary["contribution_mean"]
    table = pd.DataFrame({
        "contribution_mean": contribution,
        "standard_error": summary["contribution_mean_se"],
        "residual": summary["residual"],
        "target": colour,
    }, index=summary.index)
    fig, ax = plt.subplots(figsize=(7.5, 6.5))
    _figures.helpful_harmful_bars(ax, contribution, k=10)
    ax.set_title("Most helpful and most harmful training rows")
    section.figure(fig, "helpful_harmful",
                   "The training rows with the largest and the smallest mean sign-normalised contribution: "
                   "helpful rows shrink the other residuals, harmful rows enlarge them.")
    se_note = " standard_error: the permutation error of the row's contribution mean (aggregate game)."
    section.table(table.sort_values("contribution_mean", ascending=False).head(8),
                  caption="Most helpful training rows: they shrink the other residuals the most." + se_note)
    section.table(table.sort_values("contribution_mean").head(8),
                  caption="Most harmful training rows: they enlarge the other residuals the most.")


def _behaviour_outliers(section: Any, context: Context, runs: _Decomposition) -> pd.DataFrame:
    """IsolationForest outliers on the sampled rows' contributions against those on the features; the flags."""
    from sklearn.decomposition import PCA

    from ..metrics import behaviour_outliers, normalised_contributions

    summary, sample, n, m = runs.summary, runs.sample, runs.n, runs.m
    outliers = behaviour_outliers(sample, context.Z_train, random_state=context.seed)
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
    """The data values (squared mean contributions): all rows sorted, the largest labelled, and a table."""
    helpful = summary["contribution_mean"].to_numpy() > 0
    values = summary["instance_value"].rename("instance_value")
    top = min(12, len(values))
    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 5), gridspec_kw={"width_ratios": [3, 2]})
    _figures.data_value_rank(left, values, helpful, k=top)
    left.set_title("All training rows, sorted")
    _figures.data_value_top(right, values, helpful, k=top)
    right.set_title(f"The {top} largest data values")
    section.figure(fig, "data_values",
                   f"Data values (the squared mean contribution of each training row, from the aggregate game), "
                   f"sorted; the {top} largest are labelled, coloured by the sign of their mean sign-normalised "
                   "contribution.")
    section.table(values.sort_values(ascending=False).head(8).to_frame(),
                  caption="Data values: the squared mean contribution of each training row (the paper's value; "
                          "all rows, with the CC statistics and outlier flags, in instances.csv).")


def _most(n: int) -> int:
    from ._plan import MOST_PER_PLAYER

    return MOST_PER_PLAYER * n
