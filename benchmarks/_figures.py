"""The figure scripts behind measured numbers quoted on the documentation's pages (outside the benchmark and
reproduction pages): ``python benchmarks/run_all.py figures [NAME ...]`` runs them and writes
``benchmarks/results/fig-NAME.json``, which the pages render with ``{{ result:fig-NAME:KEY }}``.

A script here hands its numbers to the result file with ``_common.record(key=value)``; a number no script records
does not belong on a page (docs/hooks/results.py fails the build on it, outside a dated ``{{ recorded:DATE }}``).
"""

from __future__ import annotations

from typing import NamedTuple


class Figure(NamedTuple):
    """One script whose recorded numbers a page quotes: the page, what it measures, the script, its full and quick
    arguments (``None``: no small mode, skipped by ``--quick``)."""

    page: str
    what: str
    script: str
    full: tuple[str, ...] = ()
    quick: tuple[str, ...] | None = ("--quick",)

    seed = "-"  # the same row heading as a reproduction's
    seeds = None

    @property
    def scripts(self) -> list[str]:
        """The producing script: a result file is stale when its content hash changed."""
        return [self.script]

    def claims_record(self) -> None:
        """A figure carries no paper's claims (those are reproductions, benchmarks/_reproductions.py)."""
        return None


F = Figure
#: Every figure script, grouped by page (keep each page's entries together).
FIGURES: dict[str, Figure] = {
    # docs/scale.md, docs/architecture.md, docs/quickstart.md, docs/models.md, docs/plugins.md

    # docs/engine.md, docs/reliability.md, docs/valuation.md
    "label_issues_nasscds": F("docs/valuation.md", "label_issues on nassCDS as it comes, 5% of 5,000 labels flipped",
                              "docs/scripts/measure_label_issues_nasscds.py"),
    "fault_fuzz": F("docs/reliability.md", "issue 26's fault fuzzing, full run: the outcome table",
                    "docs/scripts/measure_fault_fuzz.py"),
    # the hand-run variance benchmark, a part at a time (its full default run is over 40 minutes of a core)
    "variance_logistic": F("docs/engine.md", "issue 24's logistic target: place strata against antithetic permutations",
                           "docs/scripts/measure_variance.py",
                           ("--permutations", "64", "256", "--repeats", "4", "--reference", "6000", "--skip-forest",
                            "--leaf-sizes"),
                           ("--permutations", "16", "--repeats", "2", "--reference", "200", "--skip-forest",
                            "--leaf-sizes")),
    "variance_forest": F("docs/engine.md", "the fixed-structure forest: control variate against antithetic",
                         "docs/scripts/measure_variance.py", ("--skip-logistic", "--repeats", "3", "--leaf-sizes"),
                         ("--skip-logistic", "--repeats", "1", "--reference", "200", "--permutations", "16",
                          "--leaf-sizes")),
    "variance_report": F("docs/engine.md", "place strata against antithetic on the report's 24,540-row game",
                         "docs/scripts/measure_variance.py",
                         ("--report-game", "--skip-diabetes", "--permutations", "64", "--repeats", "4",
                          "--report-reference", "600", "--leaf-sizes"),
                         ("--report-game", "--skip-diabetes", "--permutations", "16", "--repeats", "1",
                          "--report-reference", "60", "--leaf-sizes")),

    # docs/report.md and docs/explainers/residual.md, naive_bayes.md, boosting.md

    # docs/explainers/gap.md, isotonic.md, representer.md

}
