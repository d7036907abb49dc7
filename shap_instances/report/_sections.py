"""The sections of the instance report: each one applies to some tasks and adds text, tables and figures.

A section is a class with ``key`` (its entry in the plan), ``applies(context)``, ``skip_reason(context)`` and
``build(report, context, bar)``; :data:`SECTIONS` lists them in order. The residual decomposition and the
forest live in their own modules.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ._context import explained_class_sentence
from ._forest import ForestProximities
from ._label_issues import LabelIssues
from ._models import categorical_columns, final_estimator
from ._residual import ResidualDecomposition

if TYPE_CHECKING:
    from ._context import Context
    from ._html import Report

__all__ = ["SECTIONS", "Overview", "RepresenterPoints"]


def identifier_columns(X: pd.DataFrame) -> list[Any]:
    """Numeric columns that look like row identifiers: whole numbers, a different one on every row (20 rows or more).

    Examples
    --------
    >>> import pandas as pd
    >>> identifier_columns(pd.DataFrame({"id": range(30), "size": [1.5, 2.0] * 15, "count": [3] * 30}))
    ['id']
    """
    if len(X) < 20:
        return []
    found = []
    for column in X.columns:
        values = X[column].to_numpy()
        if values.dtype.kind in "iu" or (values.dtype.kind == "f" and np.all(np.mod(values, 1) == 0)):
            if pd.Series(values).nunique() == len(values):
                found.append(column)
    return found


class Overview:
    """Data, preprocessing and model summary (the model scores are added at the end, see ``finish``)."""

    key = "overview"

    @staticmethod
    def applies(context: Context) -> bool:
        return True

    @staticmethod
    def build(report: Report, context: Context, bar: Any) -> None:
        section = report.section("Overview")
        X = context.X_train
        categorical = categorical_columns(X)
        numeric = [c for c in X.columns if c not in categorical]
        section.text(
            "Every model is a scikit-learn pipeline fitted on the training rows: numeric columns are standardised "
            "(StandardScaler; the random forest sees them unscaled) and string columns one-hot encoded "
            "(OneHotEncoder, at most 20 columns per string column, rarer values pooled). "
            + ("The explainers of training rows (residual decomposition, representer points, RF-GAP) work on the "
               f"encoded matrix, so their tables and the outlier check on raw features name encoded columns such as "
               f"{', '.join(map(str, [c for c in context.Z_train.columns if c not in numeric][:3]))}."
               if categorical else "There are no string columns, so the encoded columns keep their names.")
        )
        if numeric:
            section.table(X[numeric].describe().T[["mean", "std", "min", "max"]], by_row=True,
                          caption="Numeric training columns (before scaling).")
        identifiers = identifier_columns(X[numeric])
        if identifiers:
            section.comment(
                f"Column(s) {', '.join(map(str, identifiers))} take a different whole number on every training row, "
                "as a row identifier does. If that is what they are, drop them and run again: the models (and so "
                "every explanation below) can learn from the order in which the rows were stored, which a new row "
                "does not have.")
        bar.advance(bar.bar.total / 2, "numeric columns")  # two steps: the bar shows a remaining time between
        if categorical:
            rows = {}
            for column in categorical:
                counts = X[column].astype(str).value_counts()
                rows[column] = {"distinct values": len(counts), "most frequent": counts.index[0],
                                "share of rows": counts.iloc[0] / len(X)}
            section.table(pd.DataFrame(rows).T, caption="String columns (one-hot encoded).")
        bar.advance(bar.bar.total, "string columns")
        context.overview = section

    @staticmethod
    def finish(context: Context) -> None:
        """Add the models' held-out scores and the time each section took (known once all have run)."""
        section = context.overview
        section.table(pd.DataFrame({"held-out score": context.scores}),
                      caption="Models fitted on the training rows, scored on the held-out rows.")
        if context.plan is not None:
            plan = context.plan
            rows = {step.title: {"planned seconds": round(step.estimate, 1),
                                 "seconds": round(context.timings.get(key, np.nan), 1), "what": step.what}
                    for key, step in plan.sections.items() if key in context.timings}
            section.table(pd.DataFrame(rows).T, caption=f"Time budget {plan.budget:.0f} s: the plan made from "
                                                        "measured costs, and the time each section took.")


class RepresenterPoints:
    """RepresenterExplainer on the linear model: the training rows behind held-out decisions."""

    key = "representer"

    @staticmethod
    def applies(context: Context) -> bool:
        from ..explainers.representer import RepresenterExplainer

        return RepresenterExplainer.supports_model(final_estimator(context.linear))

    @staticmethod
    def skip_reason(context: Context) -> str:
        return ("representer points need a regularised linear model, not "
                f"{type(final_estimator(context.linear)).__name__}.")

    @staticmethod
    def build(report: Report, context: Context, bar: Any) -> None:
        from ..explainers.representer import RepresenterExplainer

        model = final_estimator(context.linear)
        section = report.section(f"Representer points ({type(model).__name__})")
        section.text(
            "At the optimum of a regularised linear model, each decision is a sum over training rows, "
            "alpha_i * k(x_i, x): a global importance of the training row times its similarity to the point "
            "(on the encoded, standardised columns). Below, the training rows that push the first held-out "
            "decisions up and down the most."
        )
        n = min(5, len(context.X_test))
        output = None
        if context.classification:
            classes = model.classes_
            if len(classes) == 2:
                section.text(explained_class_sentence(
                    classes[1], f"the decision function is the log-odds of {classes[1]} against {classes[0]}"))
            else:
                predicted = pd.Series(model.predict(context.Z_test.iloc[:n]))
                output = predicted.value_counts().index[0]
                section.text(explained_class_sentence(
                    output, f"the most frequent predicted class of these {n} rows; the decision function is "
                            f"class {output}'s score against the other classes"))
        explainer = RepresenterExplainer(model, context.Z_train, y=context.y_train, max_memory=context.max_memory)
        bar.advance(bar.bar.total / 2, "representer values")
        top = explainer.top_k(context.Z_test.iloc[:n], k=3, output=output)
        names = np.asarray(context.Z_train.index.astype(str))
        rows = {}
        for j in range(n):
            rows[str(context.Z_test.index[j])] = {
                "pushes up": ", ".join(f"row {names[i]} ({_signed(v)})" for i, v in
                                       zip(top.positive_indices[j], top.positive_values[j])),
                "pushes down": ", ".join(f"row {names[i]} ({_signed(v)})" for i, v in
                                         zip(top.negative_indices[j], top.negative_values[j])),
            }
        section.table(pd.DataFrame(rows).T, caption="Training rows with the largest representer values "
                                                    "(row name and contribution to the decision).")


def _signed(value: float) -> str:
    """A signed contribution with three significant digits and no exponent below 1e6 (+0.0123, +878, -1,140)."""
    if 1000 <= abs(value) < 1e6:
        return f"{float(f'{value:.3g}'):+,.0f}"
    return f"{value:+.3g}"


SECTIONS: list[Any] = [Overview, ResidualDecomposition, RepresenterPoints, ForestProximities, LabelIssues]
