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
    "scale_dask": F("docs/scale.md", "naive Bayes from Parquet, GAP out-of-bag and boosting top_k on a LocalCluster "
                    "of 1 and 2 workers, at the reduced sizes", "benchmarks/bench_scale_dask.py",
                    ("--nb-rows", "2000000", "--gap-train", "100000", "--boost-train", "20000", "--workers", "1", "2"),
                    ("--nb-rows", "250000", "--gap-train", "5000", "--boost-train", "2000", "--workers", "1")),
    "catboost": F("docs/models.md", "BoostingExplainer on CatBoost's defaults beside LightGBM, 20,000 rows",
                  "benchmarks/bench_catboost.py", (), ("--n-train", "2000", "--n-test", "100", "--trees", "10")),
    "knn_shapley": F("docs/plugins.md", "KNN-Shapley removal curves on breast cancer (test accuracy)",
                     "docs/scripts/make_knn_shapley_figures.py", (), None),

    # docs/engine.md, docs/reliability.md, docs/valuation.md

    # docs/report.md and docs/explainers/residual.md, naive_bayes.md, boosting.md
    "boosting": F("docs/explainers/boosting.md", "the concentration of the target weights (diabetes) and the trust "
                  "scores of signed weights (concrete, five folds), with the figures (about a minute)",
                  "docs/scripts/make_boosting_figures.py", quick=None),
    "naive_bayes": F("docs/explainers/naive_bayes.md", "the worked example's held-out accuracy and its figures",
                     "docs/scripts/make_naive_bayes_figures.py", quick=None),
    "residual_influence": F("docs/explainers/residual.md", "all-S and largest-S influence against the exact values "
                            "(diabetes, 10 training rows; seconds)", "docs/scripts/make_residual_influence_table.py",
                            quick=()),

    # docs/explainers/gap.md, isotonic.md, representer.md

}
