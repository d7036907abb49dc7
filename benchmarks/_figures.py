"""The figure scripts behind measured numbers quoted on the documentation's pages (outside the benchmark and
reproduction pages): ``python benchmarks/run_all.py figures [NAME ...]`` runs them and writes
``benchmarks/results/fig-NAME.json``, which the pages render with ``{{ result:fig-NAME:KEY }}``.

A script here hands its numbers to the result file with ``_common.record(key=value)``; a number no script records
does not belong on a page (docs/hooks/results.py fails the build on it).
"""

from __future__ import annotations

from typing import NamedTuple


class Figure(NamedTuple):
    """One script whose recorded numbers a page quotes: the page, what it measures, the script, its full and quick
    arguments (``None``: no small mode, skipped by ``--quick``), and the project's files it imports (a change in
    one of them makes the result stale too; tests/test_reproductions.py checks the list is complete)."""

    page: str
    what: str
    script: str
    full: tuple[str, ...] = ()
    quick: tuple[str, ...] | None = ("--quick",)
    uses: tuple[str, ...] = ()  # the project's files the script imports (beside benchmarks/_common.py)

    seeds = None  # a reproduction's (run_all.py writes them into the result file)

    @property
    def scripts(self) -> list[str]:
        """The producing script and the files it imports: a result file is stale when a content hash changed."""
        return [self.script, *self.uses]

    @property
    def label(self) -> str:
        """Its heading's parenthesis in ``run_all.py``'s output: the page that quotes it."""
        return self.page

    def claims_record(self) -> None:
        """A figure carries no paper's claims (those are reproductions, benchmarks/_reproductions.py)."""
        return None


F = Figure
ISOTONIC = ("benchmarks/bench_isotonic.py",)  # the SISR scripts' shared game generator and estimators
VARIANCE = ("benchmarks/bench_variance.py",)  # measure_variance.py runs it and reads its tables back
FAULT_FUZZ = ("tests/fuzz_faults.py", "tests/fuzz_faults_cli.py")  # the fault fuzz's harness and its cases
BOUNDARY_FUZZ = ("tests/fuzz_boundary.py", "tests/fuzz_boundary_files.py", "tests/fuzz_boundary_valuation.py",
                 "tests/fuzz_boundary_calls.py", *FAULT_FUZZ)  # its surfaces, on the fault fuzz's harness
#: Every figure script, grouped by page (keep each page's entries together).
FIGURES: dict[str, Figure] = {
    # docs/scale.md, docs/architecture.md, docs/quickstart.md, docs/models.md, docs/plugins.md
    "scale_dask": F("docs/scale.md", "naive Bayes from Parquet, GAP out-of-bag and boosting top_k on a LocalCluster "
                    "of 1 and 2 workers, at the reduced sizes", "benchmarks/bench_scale_dask.py",
                    ("--nb-rows", "2000000", "--gap-train", "100000", "--boost-train", "20000", "--workers", "1", "2"),
                    ("--nb-rows", "250000", "--gap-train", "5000", "--boost-train", "2000", "--workers", "1")),
    # issue 28's full sizes, one workload a run (each needs the quiet 2-core machine to itself for its minutes)
    "scale_nb_50m": F("docs/scale.md", "naive Bayes over 50,000,000 x 50 rows from one Parquet file (about 19 GB, "
                      "and 19 GiB of values beside it) through explain, 1 and 2 workers",
                      "benchmarks/bench_scale_dask.py",
                      ("--only", "nb", "--nb-rows", "50000000", "--row-group", "250000", "--nb-format", "npy",
                       "--workers", "1", "2"), None),
    "scale_gap_1m": F("docs/scale.md", "GAP out-of-bag proximities of 1,000,000 training rows, 1 and 2 workers "
                      "(about 20 minutes, most of it the forest's fit)", "benchmarks/bench_scale_dask.py",
                      ("--only", "gap", "--gap-train", "1000000", "--workers", "1", "2"), None),
    "boosting_top_k_1m": F("docs/scale.md", "boosting top_k over 1,000,000 training rows on 1 and 2 threads "
                           "(about 17 minutes)", "benchmarks/bench_boosting_top_k.py",
                           ("--sizes", "--full", "1000000", "--efficiency-rows", "20000", "--full-jobs", "2"),
                           ("--sizes", "--full", "20000", "--efficiency-rows", "2000", "--full-jobs", "2")),
    "catboost": F("docs/models.md", "BoostingExplainer on CatBoost's defaults beside LightGBM, 20,000 rows",
                  "benchmarks/bench_catboost.py", (), ("--n-train", "2000", "--n-test", "100", "--trees", "10")),
    "knn_shapley": F("docs/plugins.md", "KNN-Shapley removal curves on breast cancer (test accuracy)",
                     "docs/scripts/make_knn_shapley_figures.py", (), None),

    # docs/benchmarks.md
    "budgets_hmda": F("docs/benchmarks.md", "explain --time-budget 120 of eight explainers on HMDA (issue 24's budget "
                      "target), each in a fresh interpreter", "benchmarks/bench_budgets.py",
                      ("--table", "hmda", "--loads", "0", "--report-budget", "0", "--budget", "120", "--rows", "20",
                       "--kill", "1.4", "--explainers",
                       "instance_kernel,loo,knn_shapley,naive_bayes,representer,gap,boosting,isotonic"),
                      ("--table", "hmda", "--loads", "0", "--report-budget", "0", "--budget", "30", "--rows", "2",
                       "--kill", "1.4", "--explainers", "naive_bayes,representer")),

    # docs/engine.md, docs/reliability.md, docs/valuation.md
    "label_issues_nasscds": F("docs/valuation.md", "label_issues on nassCDS as it comes, 5% of 5,000 labels flipped",
                              "docs/scripts/measure_label_issues_nasscds.py"),
    "fault_fuzz": F("docs/reliability.md", "issue 26's fault fuzzing, full run: the outcome table",
                    "docs/scripts/measure_fault_fuzz.py", uses=FAULT_FUZZ),
    "boundary_fuzz": F("docs/reliability.md", "issue 39's boundary fuzzing, every surface (seed 39): the outcome "
                       "table", "docs/scripts/measure_boundary_fuzz.py", uses=BOUNDARY_FUZZ),
    "fuzz": F("docs/reliability.md", "the hypothesis fuzz suite's slow tests (derandomised): the outcome table",
              "docs/scripts/measure_fuzz.py", ("--slow",), uses=("tests/test_fuzz.py", "tests/strategies.py")),
    # the hand-run variance benchmark, a part at a time (its full default run is over 40 minutes of a core)
    "variance_logistic": F("docs/engine.md", "issue 24's logistic target: place strata against antithetic permutations",
                           "docs/scripts/measure_variance.py",
                           ("--permutations", "64", "256", "--repeats", "4", "--reference", "6000", "--skip-forest",
                            "--leaf-sizes"),
                           ("--permutations", "16", "--repeats", "2", "--reference", "200", "--skip-forest",
                            "--leaf-sizes"), VARIANCE),
    "variance_forest": F("docs/engine.md", "the fixed-structure forest: control variate against antithetic",
                         "docs/scripts/measure_variance.py", ("--skip-logistic", "--repeats", "3", "--leaf-sizes"),
                         ("--skip-logistic", "--repeats", "1", "--reference", "200", "--permutations", "16",
                          "--leaf-sizes"), VARIANCE),
    "variance_leaf_sizes": F("docs/engine.md", "the fixed-structure forest's closed form against leaf size, beside "
                             "the control variate (2,000 Friedman #1 rows, 100 trees)",
                             "docs/scripts/measure_variance.py",
                             ("--skip-logistic", "--repeats", "3", "--leaf-sizes", "1", "5", "20", "50", "100"),
                             ("--skip-logistic", "--repeats", "1", "--reference", "200", "--permutations", "16",
                              "--leaf-sizes", "1", "5"), VARIANCE),
    "variance_report": F("docs/engine.md", "place strata against antithetic on the report's 24,540-row game",
                         "docs/scripts/measure_variance.py",
                         ("--report-game", "--skip-diabetes", "--permutations", "64", "--repeats", "4",
                          "--report-reference", "600", "--leaf-sizes"),
                         ("--report-game", "--skip-diabetes", "--permutations", "16", "--repeats", "1",
                          "--report-reference", "60", "--leaf-sizes"), VARIANCE),

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
    "gap_trust_scores": F("docs/explainers/gap.md", "trust scores: worked example, decile tables, runner-up rules",
                          "docs/scripts/gap_trust_scores.py", uses=("docs/scripts/make_gap_figures.py",)),
    "isotonic_ric_coalitions": F("docs/explainers/isotonic.md", "RIC with n = the number of coalitions, p = 10 and 15",
                                 "benchmarks/sisr_recovery.py",
                                 ("--sizes", "10,15", "--selection", "ric", "--variants", "package", "--ric-n",
                                  "coalitions", "--repetitions", "10", "--noises", "0.05,0.1,0.2"), None, ISOTONIC),
    "isotonic_ric_75": F("docs/explainers/isotonic.md", "RIC at p = 10, 75 draws (the poster's count if s* = 4)",
                         "benchmarks/sisr_recovery.py",
                         ("--sizes", "10", "--selection", "ric", "--variants", "package", "--repetitions", "75",
                          "--noises", "0.1,0.2"), None, ISOTONIC),
    "isotonic_oracle_75": F("docs/explainers/isotonic.md", "oracle s at p = 10 and 15, 75 draws: package and threshold",
                            "benchmarks/sisr_recovery.py",
                            ("--sizes", "10,15", "--selection", "oracle", "--variants", "package,threshold",
                             "--repetitions", "75", "--noises", "0.05,0.1,0.2"), None, ISOTONIC),
    "isotonic_signed_generator": F("docs/explainers/isotonic.md", "oracle s at p = 15 without ties (signed generator)",
                                   "benchmarks/sisr_recovery.py",
                                   ("--sizes", "15", "--selection", "oracle", "--variants", "package,poster",
                                    "--generator", "signed", "--repetitions", "10", "--noises", "0.05,0.1,0.2"),
                                   None, ISOTONIC),
    "isotonic_huber_outliers": F("docs/explainers/isotonic.md", "Huber against squared loss on games with outliers",
                                 "docs/scripts/isotonic_huber_outliers.py", uses=("tests/test_isotonic.py",)),
    "isotonic_warm_start": F("docs/explainers/isotonic.md", "RIC warm-started across s against the package's start",
                             "benchmarks/sisr_warm_start.py", uses=ISOTONIC),
    "representer_two_tower_last_layer": F("docs/explainers/representer.md",
                                          "two towers: the exact last-layer representer beside Definition 1 and random",
                                          "benchmarks/repro_representer_two_tower.py",
                                          ("--seeds", "5", "--points", "2", "--max-iter", "300", "--refit-iter", "50",
                                           "--methods", "High-dim Rep.,Random,Last-layer l2 Rep. (item tower)"), None,
                                          ("benchmarks/bench_representer_table2.py",)),
    "representer_torch": F("docs/explainers/representer.md", "an MLP on breast cancer: identity, TracInCP agreement",
                           "docs/scripts/make_representer_torch_figure.py", (), None),

}
