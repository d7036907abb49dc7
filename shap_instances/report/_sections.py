"""The sections of the instance report: each one applies to some tasks and adds text, tables and figures."""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from functools import cached_property

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import shap

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
        from ..cli import fit_model

        name = self.model if self.model in ("ridge", "lasso", "logistic") else "auto"
        return fit_model(name, self.task, self.X_train, self.y_train, self.seed)

    @cached_property
    def forest(self):
        from ..cli import fit_model

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
        explainer = GapExplainer(context.forest, context.X_train, context.y_train, silent=True)
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


SECTIONS = [Overview, ForestProximities]
