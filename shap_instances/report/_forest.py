"""The report's random-forest section: held-out predictions as proximity-weighted sums of training targets.

The forest is grown in chunks of trees (``warm_start``: the same trees as one fit with the same seed), the
first of them while the report measures its costs, so its progress bar moves and its size follows the time
budget. It works on the encoded matrix (numeric columns unscaled, string columns one-hot encoded).
"""

from __future__ import annotations

import math
import time
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from scipy.stats import spearmanr

from . import _figures
from ._context import explained_class_sentence, score
from ._models import final_estimator

if TYPE_CHECKING:
    from ._context import Context
    from ._html import Report

__all__ = ["ForestProximities", "grow_forest", "time_forest", "trust_comment"]

#: The trust-score columns shown on the page (all of them are in trust_scores.csv).
_SHOWN = {
    "classification": ["predicted_class", "class_probability", "weighted_oob_accuracy", "runner_up_class",
                       "outlier_margin", "n_neighbours_90"],
    "regression": ["prediction", "weighted_oob_error", "q10", "q50", "q90", "n_neighbours_90"],
}


def grow_forest(context: Context, n_trees: int, *, oob: bool, bar: Any = None, deadline: float | None = None,
                after_fixed: float = 0.0, after_per_tree: float = 0.0) -> Any:
    """Grow ``context.forest_estimator`` to ``n_trees`` trees in chunks of about a tenth, advancing ``bar``.

    With ``deadline`` (a ``time.perf_counter()`` value: when the section should be done), the measured speed
    re-plans the number of trees after every chunk, between 20 (or those grown) and 100, leaving time for the
    work after the trees: ``after_fixed`` seconds plus ``after_per_tree`` per tree (RF-GAP and trust scores).
    """
    import warnings

    from ..approximators import Throughput
    from ._models import make_model
    from ._plan import MAX_TREES, MIN_TREES

    forest = context.forest_estimator
    if forest is None:
        forest = (final_estimator(make_model("forest", context.task, context.X_train, context.seed))
                  if context.forest_template is None else context.forest_template)  # a clone of the user's forest
        forest.set_params(warm_start=True, oob_score=False)
        context.forest_estimator = forest
    done = len(getattr(forest, "estimators_", []))
    chunk = max(1, -(-(n_trees - done) // 10))
    y = np.asarray(context.y_train)
    start, grown, target = time.perf_counter(), 0, n_trees
    while done < target:
        step = min(chunk, target - done)
        done += step
        forest.set_params(n_estimators=done, oob_score=oob and done == target)
        _fit_quietly(forest, context.F_train, y)
        grown += step
        if deadline is not None:
            per_tree = Throughput.measure(time.perf_counter() - start, grown).per_unit
            left = deadline - time.perf_counter() - after_fixed
            # t trees in all cost (t - done) per_tree + t after_per_tree: a line whose fixed part, -done per_tree,
            # is the trees grown
            fits = Throughput(per_tree + after_per_tree, anchor_seconds=-done * per_tree).units_within(left)
            target = int(np.clip(fits, max(MIN_TREES, done), MAX_TREES))
            if bar is not None:
                bar.advance(step * per_tree, f"{done}/{target} trees")
                bar.replan((target - done) * per_tree + after_fixed + target * after_per_tree)
    if oob and not hasattr(forest, "oob_score_"):  # the plan shrank after the last chunk: out-of-bag now
        forest.set_params(oob_score=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "Warm-start fitting without increasing n_estimators"
            forest.fit(context.F_train, y)
    forest.set_params(warm_start=False)
    return forest


def _fit_quietly(forest: Any, X: Any, y: np.ndarray) -> None:
    """``forest.fit(X, y)`` without scikit-learn's "Some inputs do not have OOB scores": with few trees some
    training rows are in-bag in every tree, which the section says in words (:func:`_never_out_of_bag`) instead of a
    warning that interrupts the progress bar with a line of scikit-learn's source."""
    import warnings

    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Some inputs do not have OOB scores", category=UserWarning)
        forest.fit(X, y)


def _never_out_of_bag(explainer: Any, n_trees: int) -> str | None:
    """The sentence for the training rows that are in-bag in every tree (no out-of-bag prediction), or None."""
    never = int((explainer.gap_.oob_counts() == 0).sum())
    if never == 0:
        return None
    rows = "row is" if never == 1 else "rows are"
    return (f"{never:,} of the {explainer.n_train_:,} training {rows} in-bag in every one of the {n_trees} trees, so "
            "they have no out-of-bag prediction: the out-of-bag columns of the trust scores leave them out (more "
            "trees, from a larger time budget, leave fewer such rows).")


def time_forest(context: Context, probe_trees: int, n_rows: int = 200, *,
                seconds_left: float = float("inf")) -> tuple[float, float, float] | str:
    """(seconds per tree, RF-GAP seconds per tree, trust-score seconds per held-out row and tree), measured on
    the first ``probe_trees`` trees, which are kept; or, when the first tree shows that the least forest
    (:data:`~._plan.MIN_TREES` trees) cannot grow in ``seconds_left``, the sentence saying so, the rest of the
    probe not run (a bounded probe: it costs one tree of the twenty it would refuse)."""
    from ..approximators import Throughput, format_seconds
    from ..explainers.gap import GapExplainer
    from ._plan import MIN_TREES

    start = time.perf_counter()
    forest = grow_forest(context, 1, oob=False)
    least = Throughput.measure(time.perf_counter() - start, 1).seconds_for(MIN_TREES)
    if least > seconds_left:
        return (f"random forest: its first tree took {format_seconds(least / MIN_TREES)} here, so its least "
                f"{MIN_TREES} trees would need about {format_seconds(least)}, more than the "
                f"{format_seconds(max(seconds_left, 0.0))} left of the time budget; a time budget about "
                f"{math.ceil(least - seconds_left)} s larger would include it.")
    forest.set_params(warm_start=True)
    forest = grow_forest(context, probe_trees, oob=False)
    per_tree = Throughput.measure(time.perf_counter() - start, probe_trees).per_unit
    forest.set_params(warm_start=True)  # the section grows it further
    rows = context.F_test.iloc[:n_rows]
    y = np.asarray(context.y_train)
    explainer = GapExplainer(forest, context.F_train, y=y, max_memory=context.max_memory)
    explainer.trust_scores(rows.iloc[:2])  # compiles the numba kernels (once per machine with their cache)
    start = time.perf_counter()
    explainer = GapExplainer(forest, context.F_train, y=y, max_memory=context.max_memory)
    explainer.trust_scores(rows)
    first = time.perf_counter() - start
    start = time.perf_counter()
    explainer.trust_scores(rows)  # the out-of-bag proximities are cached now: only the rows' share
    second = time.perf_counter() - start
    per_row = Throughput.measure(Throughput.measure(second, len(rows)).per_unit, probe_trees).per_unit
    return per_tree, Throughput.measure(max(first - second, 0.0), probe_trees).per_unit, per_row


def trust_comment(table: pd.DataFrame, score_values: Any, outcome: Any, *, classification: bool,
                  score_name: str) -> str:
    """What the trust-score figure shows, in words: a constant outcome, a non-monotone trend, the rank correlation.

    Examples
    --------
    >>> import numpy as np
    >>> from shap_instances.weighted_targets import trust_decile_table
    >>> from shap_instances.report._forest import trust_comment
    >>> score = np.linspace(0, 1, 50)
    >>> table = trust_decile_table(score, np.ones(50), n_bins=5)
    >>> trust_comment(table, score, np.ones(50), classification=True, score_name="class_probability")[:40]
    'Every held-out row is classified correct'
    """
    means = table["error_mean"].to_numpy()
    per_bin = int(np.median(table["n"]))
    if np.ptp(np.asarray(outcome, dtype=float)) == 0:
        if classification:
            return (f"Every held-out row is classified correctly, so the accuracy is {means[0]:.1f} in every "
                    f"quintile: these {len(outcome)} held-out rows hold no error for the trust score to flag, and "
                    "say nothing about how well it ranks. A harder or larger held-out set would.")
        return "Every held-out row has the same error, so no trust score can rank them."
    rho, p_value = spearmanr(score_values, outcome)
    from ._html import column_format

    values = ", ".join(map(column_format(means), means))
    expected = "higher" if classification else "larger"
    trend = np.diff(means)
    quantity = "accuracy" if classification else "error"
    if np.all(trend >= 0):
        shape = f"The mean {quantity} never falls from one quintile of the score to the next ({values})."
    else:
        dips = [str(i + 2) for i in np.flatnonzero(trend < 0)]
        shape = (f"The mean per quintile ({values}) is not monotone: it falls at quintile{'s' if len(dips) > 1 else ''}"
                 f" {', '.join(dips)}. Each quintile holds about {per_bin} rows and the bars show one standard error "
                 "either side, so neighbouring quintiles that overlap do not differ beyond noise.")
    if np.isnan(rho):
        return shape
    verdict = (f"so {expected} scores go with {'better predictions' if classification else 'larger errors'} on "
               "average" if rho > 0 and p_value < 0.05 else "too weak to rank rows on this held-out set")
    return (f"{shape} Over all {len(outcome)} held-out rows the rank correlation between {score_name} and the "
            f"{'correctness' if classification else 'absolute error'} is {rho:.2f} (p = {p_value:.2g}), {verdict}.")


class ForestProximities:
    """GapExplainer: the forest's held-out predictions as proximity-weighted sums of training targets."""

    key = "forest"

    @staticmethod
    def applies(context: Context) -> bool:
        return context.file_model is None or context.forest_template is not None

    @staticmethod
    def skip_reason(context: Context) -> str:
        return (f"the forest section explains a bootstrap random forest, and the --model-file model is a "
                f"{type(final_estimator(context.file_model)).__name__}; the report fits no forest of its own when "
                "it is given a model.")

    @staticmethod
    def build(report: Report, context: Context, bar: Any) -> None:
        from ..explainers.gap import GapExplainer

        plan = context.plan
        forest = _grown_forest(context, bar)
        n_trees = len(forest.estimators_)
        section = report.section("Random forest: which training rows make each prediction")
        y_train = np.asarray(context.y_train)
        explainer = GapExplainer(forest, context.F_train, y=y_train, max_memory=context.max_memory)
        shown = context.F_test.iloc[:50]
        explanation = explainer(shown)
        bar.advance(n_trees * plan.costs.gap_fixed_per_tree / 2, "RF-GAP index")
        _proximity_figures(section, context, forest, explanation, shown, y_train)
        bar.advance(2 * plan.costs.per_figure, "figures")
        scores = _trust_scores(section, context, forest, explainer, bar)
        bar.advance(plan.costs.per_figure, "trust figure")
        context.results["trust_scores"] = scores


def _grown_forest(context: Context, bar: Any) -> Any:
    """The section's forest, grown to the planned size within the time left (and scored on the held-out rows)."""
    from sklearn.pipeline import Pipeline

    from ._models import describe_preprocessing
    from ._plan import PROBE_TREES

    plan = context.plan
    after_per_tree = plan.costs.gap_fixed_per_tree + plan.trust_rows * plan.costs.gap_per_row_tree
    after_fixed = max(plan.sections["forest"].estimate - (plan.n_trees - PROBE_TREES) * plan.costs.per_tree
                      - plan.n_trees * after_per_tree, 0.0)
    forest = grow_forest(context, plan.n_trees, oob=True, bar=bar, deadline=context.section_deadline("forest"),
                         after_fixed=after_fixed, after_per_tree=after_per_tree)
    pipeline = Pipeline([("preprocess", context.forest_preprocess), ("model", forest)])
    context.scores[describe_preprocessing(pipeline)] = score(pipeline, context.X_test, context.y_test,
                                                             context.classification)
    return forest


def _proximity_figures(section: Any, context: Context, forest: Any, explanation: Any, shown: pd.DataFrame,
                       y_train: np.ndarray) -> None:
    """What RF-GAP is, the waterfall of the first held-out prediction, and the cumulative proximity weight."""
    from ..plots import gap_cumulative_weight

    section.text(
        f"A random forest ({len(forest.estimators_)} trees, min_samples_leaf=5) predicts exactly a weighted sum of "
        "training targets (RF-GAP proximities): base value (the mean training target, or the class share) "
        "plus one contribution per training row, k_ji * (y_i - base). It works on the encoded matrix (numeric "
        "columns unscaled, string columns one-hot encoded). The waterfall shows the training rows that move "
        "the first held-out prediction most."
    )
    row_name = context.X_test.index[0]
    if context.classification:
        classes = list(forest.classes_)
        predicted = forest.predict(shown.iloc[:1])[0]
        k = classes.index(predicted)
        values, base = explanation.values[0, :, k], explanation.base_values[0, k]
        targets, target_label = y_train, "class"
        section.text(explained_class_sentence(
            predicted, f"the forest's predicted class for held-out row {row_name}; the waterfall explains its "
                       f"probability, and the trust scores below the probability of each row's own predicted "
                       "class"))
        what = f"the probability of class {predicted}"
    else:
        values, base = explanation.values[0], explanation.base_values[0]
        targets, target_label, what = y_train, "target", "the prediction"
    fig = _figures.gap_waterfall(values, base, context.F_train.index, targets, target_label=target_label)
    section.figure(fig, "gap_waterfall",
                   f"Training rows behind {what} for held-out row {row_name}: each bar is one training row, "
                   f"labelled 'row NAME ({target_label} VALUE)' with its row name in the data and its "
                   f"{target_label}; its length is k_ji * (y_i - base). The bottom bar sums the other training "
                   "rows; E[f(X)] is the base value and f(x) the forest's prediction.")
    ax = gap_cumulative_weight(explanation, show=False)
    section.figure(_figures.figure_of(ax), "gap_cumulative_weight",
                   f"Cumulative proximity weight against the number of training neighbours ({len(shown)} "
                   "held-out rows).")


def _trust_scores(section: Any, context: Context, forest: Any, explainer: Any, bar: Any) -> pd.DataFrame:
    """The trust scores of (a sample of) the held-out rows: held-out quality by quintile, a comment, a table."""
    from ..plots import trust_deciles
    from ..weighted_targets import trust_decile_table

    plan = context.plan
    positions = np.arange(len(context.F_test))
    if plan.trust_rows < len(positions):
        positions = np.sort(np.random.default_rng(context.seed).choice(len(positions), plan.trust_rows,
                                                                      replace=False))
    rows = context.F_test.iloc[positions]
    scores = explainer.trust_scores(rows)
    never_oob = _never_out_of_bag(explainer, len(forest.estimators_))
    if never_oob:
        section.text(never_oob)
    bar.advance(len(forest.estimators_) * (plan.costs.gap_fixed_per_tree / 2 + len(rows) * plan.costs.gap_per_row_tree),
                "trust scores")
    y_rows = np.asarray(context.y_test)[positions]
    prediction = forest.predict(rows)
    if context.classification:
        score_column, ylabel = "class_probability", "accuracy"
        outcome = (prediction == y_rows).astype(float)
    else:
        score_column, ylabel = "weighted_oob_error", "mean absolute error"
        outcome = np.abs(prediction - y_rows.astype(float))
    table = trust_decile_table(scores[score_column].to_numpy(), outcome, n_bins=5)
    ax = trust_deciles(table, show=False, ylabel=ylabel, xlabel=f"{score_column} quintile")
    sampled = f" (a random sample of {len(rows):,} of {len(context.F_test):,})" if len(rows) < len(
        context.F_test) else ""
    section.figure(_figures.figure_of(ax), "trust_scores",
                   f"Held-out {ylabel} by quintile of the trust score {score_column}, {len(rows):,} held-out "
                   f"rows{sampled}; bars: one standard error either side.")
    section.comment(trust_comment(table, scores[score_column].to_numpy(), outcome,
                                  classification=context.classification, score_name=score_column))
    shown_columns = [c for c in _SHOWN[context.task] if c in scores.columns]
    section.table(scores[shown_columns].head(10), caption=_trust_caption(context.classification))
    return scores


def _trust_caption(classification: bool) -> str:
    """The caption of the trust-score table: what its less obvious columns mean."""
    caption = "Trust scores of the first held-out rows (all columns and rows in trust_scores.csv)."
    if classification:
        return caption + (
            " outlier_margin = outlier z-score of the runner-up class minus that of the predicted class:"
            " large when the row is typical of its predicted class and atypical of the alternative (inf"
            " when no neighbour has the runner-up class). The paper's outlier_ratio, the quotient of the "
            "two z-scores, is in the CSV only: its denominator is centred on 0 for typical rows of the "
            "predicted class, so it turns negative or explodes for exactly the rows that deserve trust.")
    return caption + (" weighted_oob_error: proximity-weighted out-of-bag absolute error of the training "
                      "neighbours; q10, q50, q90: quantiles of their targets.")
