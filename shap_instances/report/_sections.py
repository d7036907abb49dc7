"""The sections of the instance report: each one applies to some tasks and adds text, tables and figures."""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from functools import cached_property

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import shap

from ..models import fit_model
from . import _figures

__all__ = ["Context", "SECTIONS"]


@dataclass
class Context:
    """Data, fitted models and results shared between sections."""

    X_train: pd.DataFrame
    X_test: pd.DataFrame
    y_train: pd.Series
    y_test: pd.Series
    task: str = "regression"
    model: str = "auto"
    seed: int = 0
    results: dict = field(default_factory=dict)

    @property
    def classification(self) -> bool:
        return self.task == "classification"

    @cached_property
    def linear_model(self):
        name = self.model if self.model in ("ridge", "lasso", "logistic") else "auto"
        return fit_model(name, self.task, self.X_train, self.y_train, self.seed)

    @cached_property
    def forest(self):
        return fit_model("forest", self.task, self.X_train, self.y_train, self.seed)


def _score(model, X, y, classification) -> str:
    if classification:
        return f"accuracy {np.mean(model.predict(X) == np.asarray(y)):.3f}"
    residual = model.predict(X) - np.asarray(y, dtype=float)
    return f"RMSE {np.sqrt(np.mean(residual**2)):.3g}, R2 {model.score(X, y):.3f}"


class Overview:
    """Data and model summary."""

    @staticmethod
    def applies(context) -> bool:
        return True

    @staticmethod
    def build(report, context) -> None:
        section = report.section("Overview")
        rows = {
            type(context.linear_model).__name__: _score(context.linear_model, context.X_test, context.y_test,
                                                        context.classification),
            type(context.forest).__name__: _score(context.forest, context.X_test, context.y_test,
                                                  context.classification),
        }
        section.table(pd.DataFrame({"held-out score": rows}), caption="Models fitted on the training rows.")
        section.table(context.X_train.describe().T[["mean", "std", "min", "max"]],
                      caption="Training features.")


class ForestProximities:
    """GapExplainer: the forest's held-out predictions as proximity-weighted sums of training targets."""

    @staticmethod
    def applies(context) -> bool:
        return True

    @staticmethod
    def build(report, context) -> None:
        from ..explainers.gap import GapExplainer
        from ..plots import gap_cumulative_weight, trust_deciles

        section = report.section("Random forest: which training rows make each prediction")
        explainer = GapExplainer(context.forest, context.X_train, y=context.y_train)
        explanation = explainer(context.X_test)
        single = explanation[..., 1] if explanation.values.ndim == 3 else explanation
        row = 0
        section.text(
            "A random forest's prediction is exactly a weighted sum of training targets (RF-GAP proximities): "
            "base value (the mean training target) plus one contribution per training row, "
            "k_ji * (y_i - base). The waterfall shows the training rows that move the first held-out "
            "prediction most."
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            shap.plots.waterfall(single[row], max_display=12, show=False)
        fig = plt.gcf()
        fig.set_size_inches(8, 5)
        section.figure(fig, "gap_waterfall", f"Training instances behind the prediction for held-out row "
                                             f"{context.X_test.index[row]}.")
        ax = gap_cumulative_weight(explanation, show=False)
        section.figure(ax.figure, "gap_cumulative_weight",
                       "Cumulative proximity weight against the number of training neighbours (held-out rows).")
        scores = explainer.trust_scores(context.X_test)
        prediction = context.forest.predict(context.X_test)
        if context.classification:
            score_column = "class_probability"
            outcome, ylabel = (prediction == np.asarray(context.y_test)).astype(float), "accuracy"
        else:
            score_column = "weighted_oob_error"
            outcome = np.abs(prediction - np.asarray(context.y_test, dtype=float))
            ylabel = "mean absolute error"
        ax = trust_deciles(scores[score_column].to_numpy(), outcome, n_bins=5, show=False, ylabel=ylabel,
                           xlabel=f"{score_column} quintile")
        section.figure(ax.figure, "trust_scores", "Held-out error by quintile of the trust score.")
        section.table(scores.head(10), caption="Trust scores of the first held-out rows (all in trust_scores.csv).")
        context.results["trust_scores"] = scores


class ResidualDecomposition:
    """InstanceKernelExplainer on the linear model: CC plot, helpful and harmful rows, outliers, data values."""

    @staticmethod
    def applies(context) -> bool:
        return not context.classification or np.unique(context.y_train).size == 2

    @staticmethod
    def skip_reason(context) -> str:
        return (f"the residual decomposition needs a regression target or two classes (decomposed through a "
                f"linear probability model); this target has {np.unique(context.y_train).size} classes.")

    @staticmethod
    def build(report, context) -> None:
        from sklearn.decomposition import PCA
        from sklearn.linear_model import Ridge

        from ..explainers.residual import InstanceKernelExplainer
        from ..metrics import behaviour_outliers, cc_summary, instance_values, normalised_contributions
        from ..plots import cc_plot

        target, label = context.y_train, str(context.y_train.name or "target")
        if context.classification:  # a linear probability model: residuals of the positive-class indicator
            positive = np.unique(context.y_train)[1]
            target = (context.y_train == positive).astype(float)
            model, label = Ridge(alpha=1.0), f"{label} == {positive}"
        else:
            model = context.linear_model
        section = report.section(f"Residual decomposition ({type(model).__name__})")
        explainer = InstanceKernelExplainer(model, context.X_train, y=target, random_state=context.seed,
                                            silent=True)
        explanation = explainer()
        summary = cc_summary(explanation)
        section.text(
            "Each training residual is split into Shapley contributions of the training rows (the model refit "
            f"on subsets; {explainer.result_.info.get('n_permutations', 'all')} permutations, exact refits). "
            "Composition = a residual's share per row; contribution = a row's effect on all residuals, "
            "positive when it shrinks them (sign-normalised, eq. 5 of Liu & Barnard)."
            + (f" The target is classification, so the residuals are those of a ridge regression of the "
               f"indicator {label} (a linear probability model)." if context.classification else "")
        )
        ax = cc_plot(explanation, show=False, label=label)
        section.figure(ax.figure, "cc_plot", "CC plot: mean composition against mean contribution per training row.")
        ax = cc_plot(explanation, statistic="var", show=False, label=label)
        section.figure(ax.figure, "cc_variance_plot",
                       "CC variance plot: variance of the composition against variance of the contribution.")
        contribution = summary["contribution_mean"]
        helpful = contribution.to_numpy() > 0
        table = pd.DataFrame({
            "contribution_mean": contribution,
            "residual": summary["residual"],
            "target": np.asarray(target, dtype=float),
        }, index=summary.index)
        fig, ax = plt.subplots(figsize=(7.5, 6.5))
        _figures.helpful_harmful_bars(ax, contribution, k=10)
        ax.set_title("Most helpful and most harmful training rows")
        section.figure(fig, "helpful_harmful",
                       "The training rows with the largest and the smallest mean sign-normalised contribution: "
                       "helpful rows shrink the other residuals, harmful rows enlarge them.")
        section.table(table.sort_values("contribution_mean", ascending=False).head(8),
                      caption="Most helpful training rows: they shrink the other residuals the most.")
        section.table(table.sort_values("contribution_mean").head(8),
                      caption="Most harmful training rows: they enlarge the other residuals the most.")

        outliers = behaviour_outliers(explanation, context.X_train, random_state=context.seed)
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
        section.figure(fig, "behaviour_outliers",
                       "Behaviour-based outliers (IsolationForest on each row's contributions to every residual; "
                       "red) against outliers on the raw features (blue rings), on the CC plane and on the first "
                       "two principal components of the contribution rows.")
        counts = pd.crosstab(outliers["by_behaviour"], outliers["by_features"])
        section.table(counts, caption="IsolationForest outliers on contribution rows (behaviour) against outliers "
                                      "on the raw features (Liu & Barnard, figure 6).")

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


class RepresenterPoints:
    """RepresenterExplainer on the linear model: the training rows behind held-out decisions."""

    @staticmethod
    def applies(context) -> bool:
        from ..explainers.representer import RepresenterExplainer

        return RepresenterExplainer.supports_model(context.linear_model)

    @staticmethod
    def skip_reason(context) -> str:
        return f"representer points need a regularised linear model, not {type(context.linear_model).__name__}."

    @staticmethod
    def build(report, context) -> None:
        from ..explainers.representer import RepresenterExplainer

        model = context.linear_model
        section = report.section(f"Representer points ({type(model).__name__})")
        section.text(
            "At the optimum of a regularised linear model, each decision is a sum over training rows, "
            "alpha_i * k(x_i, x): a global importance of the training row times its similarity to the point. "
            "Below, the training rows that push the first held-out decisions up and down the most."
        )
        explainer = RepresenterExplainer(model, context.X_train, y=context.y_train)
        n = min(5, len(context.X_test))
        output = None if not context.classification or len(model.classes_) == 2 else model.classes_[0]
        top = explainer.top_k(context.X_test.iloc[:n], k=3, output=output)
        names = np.asarray(context.X_train.index.astype(str))
        rows = {}
        for j in range(n):
            rows[str(context.X_test.index[j])] = {
                "pushes up": ", ".join(f"{names[i]} ({v:+.3g})" for i, v in
                                       zip(top.positive_indices[j], top.positive_values[j])),
                "pushes down": ", ".join(f"{names[i]} ({v:+.3g})" for i, v in
                                         zip(top.negative_indices[j], top.negative_values[j])),
            }
        section.table(pd.DataFrame(rows).T, caption="Training rows with the largest representer values "
                                                    "(row name and contribution to the decision).")


SECTIONS = [Overview, ResidualDecomposition, RepresenterPoints, ForestProximities]
