"""The report's label-issue section: rows whose label the model and the data disagree with."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..approximators import Throughput
from ..valuation import label_issues
from ._context import explained_class_sentence
from ._plan import SectionStep

if TYPE_CHECKING:
    from ._context import Context
    from ._html import Report

__all__ = ["LabelIssues"]

#: Rows listed in the report's table (all of them are in the full table ``label_issues.csv``).
SHOWN = 20


class LabelIssues:
    """:func:`~shap_instances.valuation.label_issues` on the training rows, the most suspect first."""

    key = "label_issues"

    @staticmethod
    def applies(context: Context) -> bool:
        return context.classification and int(context.y_train.value_counts().min()) >= 5

    @staticmethod
    def skip_reason(context: Context) -> str:
        if not context.classification:
            return "label issues are looked for in classification tasks only."
        return "label issues need at least 5 training rows of every class (5-fold out-of-fold probabilities)."

    @staticmethod
    def build(report: Report, context: Context, bar: Any) -> None:
        section = report.section("Rows whose label the model and the data disagree with")
        found = label_issues(context.Z_train, context.y_train.to_numpy(), random_state=context.seed)
        found.index = context.Z_train.index.astype(str)
        bar.advance(bar.bar.total * 0.9, "out-of-sample probabilities")
        flagged = found[found["is_issue"]].sort_values("label_quality")
        section.text(explained_class_sentence("every class", "each training row is judged on its own given label"))
        section.text(
            "Each training row's label quality is the probability that models which never saw the row give its "
            "label, averaged over three families that err differently: a logistic regression and a 10-nearest-"
            "neighbour vote (5-fold out-of-fold) and a random forest's out-of-bag vote (the soft Data-OOB value). "
            "A row is flagged when another label is more probable; the columns p_logistic, p_forest and p_knn are "
            f"the evidence of each family. {len(flagged)} of {len(found)} training rows are flagged"
            + (f"; the {SHOWN} most suspect are listed." if len(flagged) > SHOWN else ".")
            + " A flagged row is worth checking, not necessarily wrong: rare but genuine cases are flagged too.")
        if len(flagged):
            section.table(flagged.drop(columns=["is_issue"]).head(SHOWN).round(3),
                          caption="Flagged training rows, lowest label quality first.")
        context.results["label_issues"] = found
        bar.advance(bar.bar.total, "table")


    @staticmethod
    def plan_step(n_train: int) -> SectionStep:
        """The section's line in the plan: about 1 s plus 3 ms per training row (measured on a loaded 2-core box)."""
        cost = Throughput(3e-3, anchor_seconds=1.0)
        return SectionStep("label issues", "out-of-sample probabilities of the given labels", cost.seconds_for(n_train))


