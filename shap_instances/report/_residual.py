"""The report's residual decomposition: the linear model refit on subsets of training rows (Liu & Barnard).

Up to 1,000 training rows every row is explained (the symmetric case). Beyond, the residuals of a random sample
of training rows are decomposed (all training rows stay players): the composition mean of every row is still
exact (its residual / n, by efficiency), and a training row's contribution statistics are means over the
sampled residuals, with a stated sampling error.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from sklearn.base import clone

from . import _figures
from ._context import explained_class_sentence

if TYPE_CHECKING:
    import shap

    from ._context import Context
    from ._html import Report

__all__ = ["ResidualDecomposition", "residual_problem", "time_permutations", "sampled_summary"]

#: Runs of permutations at most: the runs are the re-planning steps of the section.
MAX_RUNS = 80
#: Beyond 3n permutations (the paper's budget) the section goes on, while time remains, up to this many times n,
#: as long as the permutation error of a contribution mean is above a quarter of their (estimated true) spread.
MOST_PER_PLAYER = 30


def residual_problem(context: Context) -> tuple[Any, pd.Series, str, Any]:
    """(model, target, label, positive class or None): what the section decomposes.

    Regression: the linear pipeline's estimator on the encoded matrix and the target. Two classes: a ridge
    regression of the indicator of the second (sorted) class, a linear probability model.
    """
    from sklearn.linear_model import Ridge

    from ..models import final_estimator

    label = str(context.y_train.name or "target")
    if context.classification:
        positive = np.unique(context.y_train)[1]
        target = pd.Series((context.y_train == positive).astype(float).to_numpy(), index=context.Z_train.index)
        return Ridge(alpha=1.0), target, f"{label} == {positive}", positive
    target = pd.Series(np.asarray(context.y_train, dtype=np.float64), index=context.Z_train.index)
    return clone(final_estimator(context.linear)), target, label, None


def explained_positions(n_train: int, size: int, seed: int) -> np.ndarray:
    """Sorted positions of the training rows whose residuals are decomposed (all of them when size == n)."""
    if size >= n_train:
        return np.arange(n_train)
    return np.sort(np.random.default_rng(seed).choice(n_train, size, replace=False))


def time_permutations(context: Context, positions: np.ndarray, *, repeat_below: float = 2.0) -> float:
    """Seconds per permutation of the section's residual game, from one antithetic pair (timed, not kept).

    The first pair also pays for first allocations; when it took less than ``repeat_below`` seconds a second
    pair is timed and the faster of the two kept.
    """
    from threadpoolctl import threadpool_limits

    from ..estimators import PermutationEstimator
    from ..explainers.residual import InstanceKernelExplainer

    model, target, _, _ = residual_problem(context)
    explainer = InstanceKernelExplainer(model, context.Z_train, y=target, random_state=context.seed, silent=True)
    game = explainer.game(context.Z_train.iloc[positions], target.iloc[positions])
    timings: list[float] = []
    with threadpool_limits(limits=1, user_api="blas"):
        while len(timings) < 2 and sum(timings) < repeat_below:
            start = time.perf_counter()
            PermutationEstimator(n_permutations=2, random_state=context.seed, silent=True).estimate(game)
            timings.append(time.perf_counter() - start)
    return min(timings) / 2


def sampled_summary(explanation: shap.Explanation, residuals: np.ndarray, positions: np.ndarray) -> pd.DataFrame:
    """CC statistics of every training row from the decomposition of the residuals of the rows at ``positions``.

    Parameters
    ----------
    explanation : shap.Explanation
        Values of shape (m, n): the residuals of m training rows decomposed over all n training rows.
    residuals : array-like of shape (n,)
        Every training row's residual under the model fitted on all rows.
    positions : array of int, shape (m,)
        Which training rows were explained.

    Returns
    -------
    DataFrame
        One row per training row: ``composition_mean`` (residual / n, exact for every row),
        ``composition_var`` (explained rows only, NaN elsewhere), ``contribution_mean`` and ``contribution_var``
        over the explained rows (sign-normalised, eq. 5), ``sampling_se`` (the standard error of
        ``contribution_mean`` from sampling m of the n residuals, with the finite-population correction; 0 when
        every row is explained), ``permutation_se`` (an upper bound on its standard error from the
        permutations: the mean of the per-entry standard errors; the report replaces it with the error measured
        by two independent halves), ``residual``, ``explained``. With every row explained the
        statistics equal :func:`~shap_instances.metrics.cc_summary`.

    Examples
    --------
    >>> import numpy as np, shap
    >>> from shap_instances.report._residual import sampled_summary
    >>> e = shap.Explanation(np.array([[1.0, -2.0, 0.5]]), base_values=np.zeros(1), feature_names=list("abc"))
    >>> s = sampled_summary(e, np.array([-0.5, 1.0, 2.0]), np.array([0]))
    >>> s["contribution_mean"].tolist(), s["explained"].tolist()
    ([1.0, -2.0, 0.5], [True, False, False])
    """
    from ..metrics import normalised_contributions

    values = np.asarray(explanation.values, dtype=np.float64)
    m, n = values.shape
    contributions = normalised_contributions(explanation)
    composition_var = np.full(n, np.nan)
    composition_var[positions] = values.var(axis=1)
    correction = np.sqrt(max(0.0, 1.0 - m / n))
    spread = contributions.std(axis=0, ddof=1) if m > 1 else np.full(n, np.nan)
    errors = getattr(explanation, "error_std", None)
    permutation = np.asarray(errors).mean(axis=0) if errors is not None else np.zeros(n)
    explained = np.zeros(n, dtype=bool)
    explained[positions] = True
    return pd.DataFrame({
        "composition_mean": np.asarray(residuals, dtype=np.float64) / n,
        "composition_var": composition_var,
        "contribution_mean": contributions.mean(axis=0),
        "contribution_var": contributions.var(axis=0),
        "sampling_se": spread / np.sqrt(m) * correction,
        "permutation_se": permutation,
        "residual": np.asarray(residuals, dtype=np.float64),
        "explained": explained,
    }, index=[str(name) for name in explanation.feature_names])


def chunk_sizes(n_permutations: int) -> tuple[int, int]:
    """(number of runs, permutations per run): two to eight runs of an even number of permutations (antithetic
    pairs), as many runs as keep the total within 10% of ``n_permutations`` (never above it, at least 4), so
    the section's bar moves between runs.

    Examples
    --------
    >>> from shap_instances.report._residual import chunk_sizes
    >>> chunk_sizes(1326), chunk_sizes(22), chunk_sizes(4)
    ((8, 164), (5, 4), (2, 2))
    """
    options = [(runs, max(2, n_permutations // runs // 2 * 2)) for runs in range(8, 1, -1)]
    close = [(runs, each) for runs, each in options if 0.9 * n_permutations <= runs * each <= n_permutations]
    if close:
        return close[0]
    return max(options, key=lambda option: (option[0] * option[1] <= max(n_permutations, 4), option[0] * option[1]))


class _Runs:
    """Running sums of independent estimates in two groups (alternating runs): the mean of all, and the
    permutation error of contribution means from the difference of the two groups' means."""

    def __init__(self):
        self.sums, self.squares, self.counts, self.first = [0.0, 0.0], 0.0, [0, 0], None

    def add(self, explanation) -> None:
        group = (self.counts[0] + self.counts[1]) % 2
        values = np.asarray(explanation.values, dtype=np.float64)
        self.sums[group] = self.sums[group] + values
        errors = getattr(explanation, "error_std", None)
        self.squares = self.squares + (np.asarray(errors) ** 2 if errors is not None else 0.0)
        self.counts[group] += 1
        self.first = explanation if self.first is None else self.first

    def mean(self):
        """The average of the runs as one Explanation (efficient, as each run is), with its standard errors."""
        import shap

        runs = sum(self.counts)
        values = (self.sums[0] + self.sums[1]) / runs
        error = np.sqrt(self.squares) / runs if np.ndim(self.squares) else None
        return shap.Explanation(values, base_values=self.first.base_values, data=self.first.data,
                                feature_names=self.first.feature_names, error_std=error)

    def contribution_error(self, signs) -> float:
        """Root mean square over training rows of the permutation error of the (sign-normalised) contribution
        means: with k_a and k_b runs in the groups, ``(a - b) sqrt(k_a k_b) / (k_a + k_b)`` has the variance of
        the error of the average of all runs (half the difference for equal groups)."""
        (k_a, k_b), (a, b) = self.counts, (self.sums[g] / self.counts[g] for g in (0, 1))
        difference = (signs[:, None] * (a - b)).mean(axis=0) * np.sqrt(k_a * k_b) / (k_a + k_b)
        return float(np.sqrt(np.mean(difference**2)))


def _precise_enough(estimates, signs, m: int, n: int) -> bool:
    """Whether the permutation error of the contribution means is at most a quarter of their estimated true
    spread (or at most their sampling error, which more permutations do not lower)."""
    means = estimates.mean()
    contributions = signs[:, None] * np.asarray(means.values)
    spread = float(contributions.mean(axis=0).std())
    error = estimates.contribution_error(signs)
    sampling = float(np.median(contributions.std(axis=0, ddof=1))) / np.sqrt(m) * np.sqrt(max(0.0, 1 - m / n)) \
        if m > 1 else 0.0
    true_spread = np.sqrt(max(spread**2 - error**2 - sampling**2, 0.0))
    return error <= max(true_spread / 4, sampling)


def _precision_comment(permutation: float, sampling: float, spread: float, *, spent: float, m: int, n: int,
                       capped: bool) -> str:
    """What the errors of the contribution means allow one to read from the CC plot and the row lists.

    The observed spread of the contribution means is that of the true means plus that of their errors, so the
    true spread is estimated as ``sqrt(spread^2 - error^2)``; the comment says whether the rows differ beyond
    their noise, and what more permutations would buy.

    Examples
    --------
    >>> from shap_instances.report._residual import _precision_comment
    >>> _precision_comment(0.01, 0.0, 0.1, spent=10, m=50, n=50, capped=False)[:46]
    'The error of a contribution mean is 10% of the'
    """
    error = float(np.hypot(permutation, sampling))
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
        target, goal = permutation / 2, "Halving the permutation error"
    else:
        parts.append(f": the contribution means differ (true spread about {true_spread:.3g}) but the CC plot's "
                     "vertical positions and the lists of most helpful and most harmful rows below are dominated "
                     "by noise; the composition means (residual / n) are exact.")
        target, goal = true_spread / 4, "Bringing the permutation error to a quarter of that spread"
    if permutation > target:
        factor = (permutation / target) ** 2
        needed = factor * spent
        parts.append(f" {goal} takes about {factor:.0f} times as many permutations ("
                     + (f"{needed / 60:.0f} minutes" if needed >= 90 else f"{needed:.0f} s") + " at this speed); "
                     + (f"the report stops at {MOST_PER_PLAYER}n permutations: compute more with "
                        "InstanceKernelExplainer(n_permutations=...) in Python." if capped
                        else "raise --time-budget accordingly."))
    if m < n and sampling > target:
        parts.append(f" The sampling error of the {m:,} explained rows ({sampling:.3g}) does not fall with more "
                     "permutations; the report caps the explained rows to bound its memory.")
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
        from sklearn.decomposition import PCA
        from threadpoolctl import threadpool_limits

        from ..explainers.residual import InstanceKernelExplainer
        from ..metrics import behaviour_outliers, instance_values, normalised_contributions
        from ..plots import cc_plot

        plan = context.plan
        model, target, label, positive = residual_problem(context)
        n = len(target)
        positions = plan.residual_positions
        m = len(positions)
        section = report.section(f"Residual decomposition ({type(model).__name__})")
        # independent runs in two alternating groups: their average is the estimate and the difference of the
        # groups measures the permutation error of the aggregates (contribution means), which per-entry standard
        # errors bound only loosely (the entries of one permutation are strongly correlated); the section's bar
        # moves after every run
        runs, each = chunk_sizes(plan.n_permutations)
        # after each run the measured speed re-plans the runs still to come, against the time the budget leaves
        # once the later sections have had their estimates (at least two runs; beyond 3n permutations only while
        # the contribution means are not yet precise, up to MOST_PER_PLAYER n): a burst
        # of load while measuring neither wastes the budget nor lets the section overrun it by more than a run
        allotment = plan.n_permutations * plan.costs.per_permutation
        afterwards = max(plan.sections["residual"].estimate - allotment, 0.0)
        later = sum(step.estimate for key, step in plan.sections.items() if key in ("representer", "forest"))
        stop_at = context.deadline - afterwards - later
        most = max(runs, min(MAX_RUNS, MOST_PER_PLAYER * n // each))
        signs = -np.sign(clone(model).fit(context.Z_train, target).predict(context.Z_train.iloc[positions])
                         - target.to_numpy()[positions])
        seeds = np.random.SeedSequence(context.seed).generate_state(most)
        estimates, start = _Runs(), time.perf_counter()
        for number, seed in enumerate(seeds, start=1):
            explainer = InstanceKernelExplainer(
                model, context.Z_train, y=target, n_permutations=each, batch_size=min(plan.batch_size, each),
                random_state=int(seed), silent=context.silent,
                # MAX_TIME: once InstanceKernelExplainer takes max_time= (issue 15, item 3), pass
                # max_time=(stop_at - time.perf_counter()) / (runs still to come) here with n_permutations=3n,
                # and drop the re-planning below: the estimator then stops on time by itself, instead of runs of
                # `each` permutations sized from the measured cost of one permutation.
            )
            with threadpool_limits(limits=1, user_api="blas"):  # small products: one BLAS thread is faster
                estimates.add(explainer() if m == n else
                              explainer(context.Z_train.iloc[positions], target.iloc[positions]))
            spent = time.perf_counter() - start
            per_run = spent / number
            further = min(most - number, int((stop_at - time.perf_counter()) / per_run))
            further = max(further, 2 - number)
            if number >= 2 and number * each >= 3 * n and _precise_enough(estimates, signs, m, n):
                further = 0
            bar.advance(per_run, f"{number * each:,} permutations")
            bar.replan(further * per_run + afterwards)
            if further <= 0:
                break
        explanation = estimates.mean()
        n_permutations = sum(estimates.counts) * each
        residuals = clone(model).fit(context.Z_train, target).predict(context.Z_train) - target.to_numpy()
        summary = sampled_summary(explanation, residuals, positions)
        contribution = summary["contribution_mean"]
        spread = float(contribution.std())
        sampling = float(summary["sampling_se"].median())
        permutation = estimates.contribution_error(signs)
        summary["permutation_se"] = permutation
        section.text(
            "Each residual is split into Shapley contributions of the training rows: the model is refit on "
            f"subsets of the {n:,} training rows (exact refits along {n_permutations:,} random permutations, "
            "the number the time budget allowed, in independent runs whose two alternating groups measure the "
            "permutation error). Composition = a residual's share per row; contribution = a "
            "row's effect on the residuals, positive when it shrinks them (sign-normalised, eq. 5 of Liu & "
            "Barnard). The model sees the encoded matrix (standardised numeric columns, one-hot string columns); "
            "the preprocessing is fitted once on all training rows and held fixed while the model is refit."
        )
        if positive is not None:
            section.text(explained_class_sentence(
                positive, f"the residuals are those of a ridge regression of the indicator {label}, a linear "
                          "probability model: residual = P(class) - 1[row has the class]"))
        if m < n:
            section.text(
                f"Explained rows: a random sample of {m:,} of the {n:,} training rows (seed {context.seed}); every "
                "training row is a player. The composition mean of every row is exact (its residual / n); each "
                f"row's contribution statistics are means over the {m:,} sampled residuals. Sampling error of a "
                f"contribution mean: median standard error {sampling:.3g} (finite-population corrected); "
                f"permutation error {permutation:.3g} (root mean square over training rows); the contribution "
                f"means themselves spread with standard deviation {spread:.3g} across training rows."
            )
        else:
            section.text(f"Every training row is explained. Permutation error of a contribution mean: "
                         f"{permutation:.3g} (root mean square over training rows); the contribution means spread "
                         f"with standard deviation {spread:.3g} across training rows.")
        section.comment(_precision_comment(permutation, sampling, spread, spent=spent, m=m, n=n,
                                           capped=n_permutations >= MOST_PER_PLAYER * n - each))
        colour = target.to_numpy()
        ax = cc_plot(summary, color=colour, show=False, label=label)
        section.figure(_figures.figure_of(ax), "cc_plot", "CC plot: mean composition (residual / n) against mean "
                                             f"contribution, for all {n:,} training rows" +
                       (f" (contributions averaged over the {m:,} sampled residuals)." if m < n else "."))
        ax = cc_plot(summary, statistic="var", color=colour, show=False, label=label)
        section.figure(_figures.figure_of(ax), "cc_variance_plot",
                       "CC variance plot: variance of the composition against variance of the contribution"
                       + (f", for the {m:,} explained rows (a composition variance needs the row's own "
                          "decomposition)." if m < n else "."))
        bar.advance(2 * 1.2, "CC plots")

        helpful = contribution.to_numpy() > 0
        table = pd.DataFrame({
            "contribution_mean": contribution,
            "standard_error": np.hypot(summary["sampling_se"], summary["permutation_se"]),
            "residual": summary["residual"],
            "target": colour,
        }, index=summary.index)
        fig, ax = plt.subplots(figsize=(7.5, 6.5))
        _figures.helpful_harmful_bars(ax, contribution, k=10)
        ax.set_title("Most helpful and most harmful training rows")
        section.figure(fig, "helpful_harmful",
                       "The training rows with the largest and the smallest mean sign-normalised contribution: "
                       "helpful rows shrink the other residuals, harmful rows enlarge them.")
        se_note = (" standard_error: the sampling error of the row's contribution mean and the permutation error "
                   "(root mean square over rows) combined.")
        section.table(table.sort_values("contribution_mean", ascending=False).head(8),
                      caption="Most helpful training rows: they shrink the other residuals the most." + se_note)
        section.table(table.sort_values("contribution_mean").head(8),
                      caption="Most harmful training rows: they enlarge the other residuals the most.")
        bar.advance(1.2, "helpful and harmful rows")

        outliers = behaviour_outliers(explanation, context.Z_train, random_state=context.seed)
        behaviour = normalised_contributions(explanation).T  # one row per training instance
        pca = PCA(n_components=2, random_state=context.seed).fit(behaviour)
        components, share = pca.transform(behaviour), pca.explained_variance_ratio_
        fig, (left, right) = plt.subplots(1, 2, figsize=(12, 5))
        flags = outliers["by_behaviour"].to_numpy(), outliers["by_features"].to_numpy()
        _figures.outlier_scatter(left, summary["composition_mean"], contribution, *flags,
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
        bar.advance(1.2 + 1.5, "outliers")

        values = instance_values(explanation)
        k = min(12, len(values))
        fig, (left, right) = plt.subplots(1, 2, figsize=(12, 5), gridspec_kw={"width_ratios": [3, 2]})
        _figures.data_value_rank(left, values, helpful, k=k)
        left.set_title("All training rows, sorted")
        _figures.data_value_top(right, values, helpful, k=k)
        right.set_title(f"The {k} largest data values")
        section.figure(fig, "data_values",
                       f"Data values (the squared mean contribution of each training row), sorted; the {k} "
                       "largest are labelled, coloured by the sign of their mean sign-normalised contribution.")
        section.table(values.sort_values(ascending=False).head(8).to_frame(),
                      caption="Data values: the squared mean contribution of each training row (the paper's value; "
                              "all rows, with the CC statistics and outlier flags, in instances.csv).")
        context.results["instances"] = summary.assign(instance_value=values).join(outliers)
