"""The scripts behind docs/reproductions.md, one entry per table or figure, for ``run_all.py reproductions``.

Each entry names the script and its arguments for the full run (the protocol of the page's row) and for
``--quick`` (a smoke run of a few seconds to a minute), or ``None`` where the script has no small mode: a
script that writes the documentation's figures and has no ``--quick`` is not run by a quick pass, so a smoke
run never replaces a documented figure with a small one.

An entry may carry ``claims`` (``_verdicts.Claim``: the paper's number or ordering, its source, the tolerance)
and its ``seeds``; ``run_all.py reproductions`` copies both into the entry's result file
(``benchmarks/results/repro-NAME.json``), and docs/reproductions.md renders the verdict that ``_verdicts.verdict``
derives from them and the recorded values.
"""

from __future__ import annotations

from typing import NamedTuple

from _verdicts import Claim


class Reproduction(NamedTuple):
    """One reproduction: the seed paper, what it reproduces, the script, its full and quick arguments, and the
    paper's claims it tests with the seeds it runs."""

    seed: str
    what: str
    script: str
    full: tuple[str, ...]
    quick: tuple[str, ...] | None
    claims: tuple[Claim, ...] = ()
    seeds: str | None = None

    @property
    def scripts(self) -> list[str]:
        """The producing script: a result file is stale when its content hash changed."""
        return [self.script]

    def claims_record(self) -> list[dict] | None:
        return [claim.as_record() for claim in self.claims] or None


#: Appendix Fig. 1 of the representer paper (seed 002), "false negatives of implicit feedback", as orderings per
#: seed at 1% and 5% of the negatives removed (the figure gives no numbers; the text states the orderings).
FIGURE_1 = "Tsai et al., Appendix C.1 and Fig. 1"
FALSE_NEGATIVE_CLAIMS = tuple(
    claim for percent in ("1", "5") for claim in (
        Claim(f"fn_representer_above_random_{percent}", f"the representer finds more false negatives than random "
              f"({percent}% removed)", "more", FIGURE_1),
        Claim(f"fn_loss_above_random_{percent}", f"the loss finds more false negatives than random ({percent}% "
              "removed)", "more", FIGURE_1),
        Claim(f"fn_representer_below_loss_{percent}", f"the representer finds fewer false negatives than the loss "
              f"({percent}% removed)", "slightly fewer", FIGURE_1),
        Claim(f"recall_representer_above_random_{percent}", f"removing by the representer raises recall@20 more "
              f"than random removal ({percent}% removed)", "more", FIGURE_1),
    ))
#: Table 1 of the representer paper (seed 002) in high dimension, as orderings per high-dimensional set of one split
#: (the paper's sets do not ship offline: other data, so at most "in kind"): the representer's AUC-DEL+ below and
#: AUC-DEL- above each other method's, and the representer faster per explained point than either influence function.
TABLE_1 = "Tsai et al., Table 1"
HIGHDIM_SETS = {"tweets": "tweets uni+bigrams", "fine_foods": "fine-food uni+bigrams"}
HIGHDIM_BASELINES = {"l2": "the l2 representer", "if": "the influence function (project's variant)",
                     "if_paper": "the influence function (the paper's variant)", "random": "random deletion"}
HIGHDIM_CLAIMS = tuple(
    Claim(f"table1.{short}.{statistic}.{data}", f"{HIGHDIM_SETS[data]}: the representer's AUC-DEL{sign} {side} "
          f"{baseline}'s", side, TABLE_1)
    for short, baseline in HIGHDIM_BASELINES.items() for data in HIGHDIM_SETS
    for statistic, sign, side in (("plus", "+", "below"), ("minus", "-", "above"))
) + tuple(
    Claim(f"runtime.{short}.{data}", f"{HIGHDIM_SETS[data]}: the representer faster per explained point than "
          f"{HIGHDIM_BASELINES[short]}", "61 ms against 2,678 ms (20 newsgroups)", TABLE_1 + " (time)")
    for short in ("if", "if_paper") for data in HIGHDIM_SETS)
#: Table 2 of the representer paper (seed 002) on dslabs movielens (the paper: MovieLens-1M; other data), as
#: orderings of one split: the representer's AUC-DEL+ below and AUC-DEL- above the other method's.
TABLE_2 = "Tsai et al., Table 2"
DELETION = (("plus", "AUC-DEL+", "below"), ("minus", "AUC-DEL-", "above"))


def _deletion_claims(prefix: str, model: str, others: dict[str, str], source: str) -> tuple[Claim, ...]:
    """The representer's AUC-DEL+ below and AUC-DEL- above each of ``others`` (``key: name``), as orderings."""
    return tuple(Claim(f"{prefix}.{key}.{statistic}", f"{model}: the representer's {name} {side} {other}'s", side,
                       source) for key, other in others.items() for statistic, name, side in DELETION)


TABLE2_CLAIMS = (_deletion_claims("table2.soft", "SoftImpute", {"random": "random deletion"}, TABLE_2)
                 + _deletion_claims("table2.mf", "matrix factorisation", {"fia": "FIA", "random": "random deletion"},
                                    TABLE_2))
#: Table 2's two-tower rows (YoutubeNet on MovieLens-1M in the paper; other data, model input and optimiser here).
TWO_TOWER_CLAIMS = _deletion_claims("two_tower", "two towers", {"fia": "FIA", "random": "random deletion"},
                                    TABLE_2 + ", YoutubeNet rows")
#: Table 8 (appendix G): "the performance of TracIn is much better than the high-dimensional representers on vanilla
#: MF models": TracInCP's AUC-DEL+ below and AUC-DEL- above the representer's, per seed; both ahead of random.
TABLE_8 = "Tsai et al., Table 8 and Appendix G"
TRACIN_CLAIMS = (
    Claim("table8.tracin_ahead.plus", "TracInCP's AUC-DEL+ below the representer's", "below", TABLE_8),
    Claim("table8.tracin_ahead.minus", "TracInCP's AUC-DEL- above the representer's", "above", TABLE_8),
    Claim("table8.random.plus", "the representer's and TracInCP's AUC-DEL+ below random deletion's", "below",
          TABLE_8),
    Claim("table8.random.minus", "the representer's and TracInCP's AUC-DEL- above random deletion's", "above",
          TABLE_8),
)
#: Table 6: the test accuracy of the explained l1 logistic models, 97.50% on the paper's three sets ("above 97%"),
#: against ours per split on other data (tolerance: 5 percentage points, the page's default on a rate).
TABLE6_SETS = {"digits": "digits 4 vs 9", "tweets": "tweets uni+bigrams", "fine_foods": "fine-food uni+bigrams"}
TABLE6_CLAIMS = tuple(
    Claim(f"accuracy.{key}", f"test accuracy (%), {name}", 97.5, "Tsai et al., Table 6", kind="number",
          tolerance=5.0) for key, name in TABLE6_SETS.items())
#: Lemaire, Clérot & Boullé (seed 003), Tables 1 and 3: dataset -> (N_k, Pearson, Kendall, #Var); and Table 1's
#: accuracy and AUC. The scripts read them from here.
NB_TABLE3_PAPER = {
    "twonorm": (200, 0.9027, 0.7052, 20), "crx": (690, 0.9953, 0.9047, 7), "ionosphere": (351, 0.9974, 0.8888, 9),
    "spambase": (200, 0.8829, 0.7684, 29), "tic-tac-toe": (958, 1.0, 1.0, 5), "german": (1000, 0.9974, 0.9047, 9),
    "telco": (1000, 0.9633, 0.7333, 10), "adult": (1000, 0.8373, 0.7692, 13), "KRFCC": (858, 0.9993, 1.0, 3),
    "breast": (699, 0.9908, 0.8571, 8),
}
NB_TABLE1_PAPER = {"twonorm": (0.9766, 0.9969), "crx": (0.8112, 0.9149), "ionosphere": (0.9619, 0.9621),
                   "spambase": (0.9328, 0.9791), "tic-tac-toe": (0.6713, 0.7383), "german": (0.7090, 0.7112),
                   "telco": (0.8047, 0.8476), "breast": (0.975, 0.9915)}
#: Table 1's #Var, the number of variables Khiops selected. Ours come from our L1 / BIC selection, not Khiops'
#: MAP search, so the protocol is not the paper's; tolerance: 5% relative.
NB_VARIABLES = {name: NB_TABLE3_PAPER[name][3] for name in NB_TABLE1_PAPER}
NB_VARIABLE_CLAIMS = tuple(
    Claim(f"n_var.{name}", f"#Var, {name}", count, "Lemaire et al., Table 1", kind="number",
          tolerance=0.05 * count, deterministic=True) for name, count in NB_VARIABLES.items())
#: Our selection, discretisation and N_k cap (200 rows) are not Khiops' protocol: every naive Bayes claim below has
#: ``protocol=False`` (at most "in kind"); tolerance 0.03 on a correlation and on an accuracy or AUC (the rows').
NB_TOLERANCE = 0.03


def _nb_agreement_claims(prefix: str, name: str, what: str) -> tuple[Claim, ...]:
    """Table 3's Pearson and Kendall of ``name`` (ours against KernelSHAP on the probability), as numbers."""
    _, pearson, kendall, _ = NB_TABLE3_PAPER[name]
    return tuple(Claim(f"{prefix}.{statistic}", f"{name}, {statistic.capitalize()} {what}", paper,
                       "Lemaire et al., Table 3", kind="number", tolerance=NB_TOLERANCE)
                 for statistic, paper in (("pearson", pearson), ("kendall", kendall)))


def _nb_table1_claims(name: str) -> tuple[Claim, ...]:
    """Table 1's accuracy and AUC of ``name``, against our cross-validated ones per seed."""
    return tuple(Claim(f"table1.{name}.{statistic}", f"{name}, {label}", paper, "Lemaire et al., Table 1",
                       kind="number", tolerance=NB_TOLERANCE)
                 for statistic, label, paper in zip(("accuracy", "auc"), ("accuracy", "AUC"),
                                                    NB_TABLE1_PAPER[name], strict=True))


#: ``naive_bayes_table3``: one seed (seed 0 draws the explained rows and seeds KernelSHAP) per dataset.
TABLE3_CLAIMS = tuple(claim for name in NB_TABLE1_PAPER
                      for claim in _nb_agreement_claims(f"table3.{name}", name, "(KernelSHAP on the probability)"))
#: ``naive_bayes_protocol`` (twonorm, seeds 0-4): both readings of "Knowledge base", and Table 1.
NB_PROTOCOL_CLAIMS = (*(claim for reading in ("background", "explained") for claim in _nb_agreement_claims(
    f"table3.twonorm.{reading}", "twonorm", f"(KernelSHAP on the probability, the {reading} reading)")),
    *_nb_table1_claims("twonorm"))
#: ``naive_bayes_table1``: Table 1 on the other datasets, seeds 0-4.
NB_TABLE1_CLAIMS = tuple(claim for name in NB_TABLE1_PAPER if name != "twonorm" for claim in _nb_table1_claims(name))
#: Fig. 3 gives a scatter, no number: KernelSHAP's values (on the probability) along ours with visible spread.
SCATTER_CLAIMS = (Claim("fig3.spread", "KernelSHAP on the probability follows our values with visible spread "
                        "(pooled Pearson between 0 and 1)", "a scatter along the diagonal with visible spread",
                        "Lemaire et al., Fig. 3"),)


R = Reproduction
#: Every reproduction, in the order of docs/reproductions.md. Full runs take from seconds to an hour (the
#: Boston forest, seed 000) on two shared cores.
REPRODUCTIONS = {
    "residual_boston_ridge": R("000", "Figs. 3, 6, 7 (ridge): CC plot, sign conventions, outliers",
                               "docs/scripts/make_residual_boston_figures.py", ("ridge",), None),
    "residual_boston_forest": R("000", "Figs. 4, 5, 7 (random forest, 12 permutations; about 45 minutes)",
                                "docs/scripts/make_residual_boston_figures.py", ("forest",), None),
    "residual_outliers": R("000", "Fig. 6: behaviour against feature outliers, both sign conventions, 5 seeds",
                           "benchmarks/repro_residual_outliers.py", (), ("--quick",)),
    "residual_outliers_forest": R("000", "Fig. 6 with the paper's random forest (fixed-structure game), 5 seeds",
                                  "benchmarks/repro_residual_outliers.py", ("--model", "fixed_forest"),
                                  ("--quick", "--model", "fixed_forest")),
    "residual_removal": R("000", "Fig. 8 (ridge panel): test MSE when removing rows by value",
                          "docs/scripts/make_residual_removal_figures.py", (), None),
    "residual_removal_forest": R("000", "Fig. 8, forest panel: scores from the fixed-structure game, 5 seeds",
                                 "benchmarks/repro_residual_removal_forest.py", (), ("--quick",)),
    "residual_estimators": R("000", "Figs. 9 and 10: the four estimators by problem size",
                             "benchmarks/bench_residual_estimators.py", ("--figures",), ("--quick",)),
    "residual_appendix": R("000", "Appendix Figs. 11-15: concrete and 2-D toy sets (ridge)",
                           "docs/scripts/make_residual_appendix_figures.py", (), ("--quick",)),
    "isotonic_recovery": R("001", "sparsity recovery, p = 10 and 15, RIC and oracle s, both variants",
                           "benchmarks/sisr_recovery.py", ("--sizes", "10,15", "--repetitions", "20"),
                           ("--sizes", "10", "--repetitions", "2", "--noises", "0.05", "--variants", "package",
                            "--selection", "oracle")),
    "isotonic_recovery_p10": R("001", "sparsity recovery, p = 10 only (the rows at p = 10 of isotonic_recovery)",
                               "benchmarks/sisr_recovery.py", ("--sizes", "10", "--repetitions", "20"),
                               ("--sizes", "10", "--repetitions", "2", "--noises", "0.05", "--variants", "package",
                                "--selection", "oracle")),
    "isotonic_noise_model": R("001", "sparsity recovery, p = 10, noise on the payoffs (the other reading)",
                              "benchmarks/sisr_recovery.py", ("--sizes", "10", "--repetitions", "20",
                                                              "--generator", "payoff", "--variants", "package"),
                              ("--sizes", "10", "--repetitions", "2", "--noises", "0.05", "--variants", "package",
                               "--selection", "oracle", "--generator", "payoff")),
    "isotonic_claims": R("001", "the non-increasing objective; lower sparsity is faster",
                         "benchmarks/repro_isotonic_claims.py", (), ("--quick",)),
    "isotonic_oracle_large": R("001", "sparsity recovery, p = 20 and 25, oracle s", "benchmarks/bench_isotonic.py",
                               (), ("--quick",)),
    "isotonic_recovery_large_ric": R("001", "sparsity recovery, p = 20, RIC (the poster's protocol), 5 draws",
                                     "benchmarks/sisr_recovery.py",
                                     ("--sizes", "20", "--selection", "ric", "--variants", "package",
                                      "--repetitions", "5", "--noises", "0.05,0.1,0.2"),
                                     ("--sizes", "10", "--repetitions", "2", "--noises", "0.05", "--variants",
                                      "package", "--selection", "ric")),
    "isotonic_recovery_p25_ric": R("001", "sparsity recovery, p = 25, RIC, 5 draws (hours; resumes from its log)",
                                   "benchmarks/sisr_recovery.py",
                                   ("--sizes", "25", "--selection", "ric", "--variants", "package",
                                    "--repetitions", "5", "--noises", "0.05,0.1,0.2",
                                    "--log", "benchmarks/results/sisr_recovery_p25_ric.jsonl"),
                                   ("--sizes", "10", "--repetitions", "2", "--noises", "0.05", "--variants",
                                    "package", "--selection", "ric")),
    "isotonic_case_studies": R("001", "prostate and Boston case studies", "docs/scripts/make_isotonic_figures.py",
                               (), None),
    "isotonic_transforms": R("001", "domain adaptation (seven transforms) and R^2 payoffs",
                             "docs/scripts/make_isotonic_transforms.py", (), None),
    "representer_highdim": R("002", "Table 1 in high dimension, runtime (about 40 minutes)",
                             "benchmarks/bench_representer_highdim.py", (), ("--quick",), HIGHDIM_CLAIMS,
                             "0 (one split; 8 explained points)"),
    "representer_table2": R("002", "Table 2: SoftImpute and matrix factorisation, FIA, random",
                            "benchmarks/bench_representer_table2.py", (), ("--quick",), TABLE2_CLAIMS,
                            "0 (one split; 8 explained pairs)"),
    "representer_two_tower": R("002", "Table 2, two-tower rows: representer, FIA, random, 5 seeds (about 15 minutes)",
                               "benchmarks/repro_representer_two_tower.py",
                               ("--seeds", "5", "--points", "2", "--max-iter", "300", "--refit-iter", "50",
                                "--methods", "High-dim Rep.,FIA,Random"), ("--quick",), TWO_TOWER_CLAIMS, "0-4"),
    "representer_table6": R("002", "Table 6: test accuracy of the l1 logistic models, 5 splits",
                            "benchmarks/repro_representer_table6.py", (), ("--quick",), TABLE6_CLAIMS, "0-4"),
    "representer_tracin": R("002", "Table 8: the representer against TracInCP on SGD-trained MF, 5 seeds",
                            "benchmarks/repro_representer_tracin.py", ("--points", "4"), ("--quick",), TRACIN_CLAIMS,
                            "0-4"),
    "representer_false_negatives": R("002", "Appendix Fig. 1: false negatives of implicit MF, 5 seeds",
                                     "benchmarks/repro_representer_false_negatives.py", (), ("--quick",),
                                     FALSE_NEGATIVE_CLAIMS, "0-4"),
    "naive_bayes_table3": R("003", "Tables 1 and 3: #Var, Pearson and Kendall against KernelSHAP",
                            "benchmarks/bench_naive_bayes_table3.py", ("--max-rows", "200"), ("--quick",),
                            TABLE3_CLAIMS,
                            "0 (one row draw; KernelSHAP's sampler seeded 0)"),
    "naive_bayes_selection": R("003", "Table 1 #Var: the variables our selection keeps, against Khiops'",
                               "benchmarks/repro_naive_bayes_selection.py", (), ("--quick",), NB_VARIABLE_CLAIMS,
                               "deterministic"),
    "naive_bayes_protocol": R("003", "Knowledge base and KernelSHAP output readings, Table 1 accuracy and AUC, "
                              "WOE against Shapley, 5 seeds", "benchmarks/repro_naive_bayes_protocol.py",
                              ("--datasets", "twonorm"), ("--quick",), NB_PROTOCOL_CLAIMS, "0-4"),
    "naive_bayes_table1": R("003", "Table 1 accuracy and AUC, WOE against Shapley, the other datasets, 5 seeds",
                            "benchmarks/repro_naive_bayes_protocol.py",
                            ("--no-kernelshap", "--datasets",
                             "crx,breast,tic-tac-toe,ionosphere,german,telco,spambase"),
                            ("--quick", "--no-kernelshap"), NB_TABLE1_CLAIMS, "0-4"),
    "naive_bayes_scatter": R("003", "Fig. 3: ours against KernelSHAP on twonorm",
                             "docs/scripts/make_naive_bayes_scatter.py", (), None, SCATTER_CLAIMS,
                             "0 (one row draw; the figure)"),
    "gap_figures": R("004", "Figs. 1, 2, 9-15: neighbours, trust by decile, a wrong and a right classification",
                     "docs/scripts/make_gap_figures.py", (), None),
    "gap_predictive_distribution": R("004", "Figs. 3 and 6: predictive distribution of a bad and a good prediction",
                                     "docs/scripts/make_gap_predictive_distribution.py", (), None),
    "gap_shap_views": R("004", "Figs. 4, 5, 7, 8: top-2 SHAP features and proximity-weighted distributions, "
                        "tail score over 5 seeds", "docs/scripts/make_gap_shap_views.py", (), ("--quick",)),
}


def commands(names: list[str], quick: bool) -> list[tuple[str, list[str] | None]]:
    """``(name, argv after the interpreter)`` per chosen reproduction; ``None`` where a quick pass skips it."""
    unknown = sorted(set(names) - set(REPRODUCTIONS))
    if unknown:
        raise SystemExit(f"no reproduction named {unknown}; choose from {sorted(REPRODUCTIONS)}")
    chosen = names or list(REPRODUCTIONS)
    result = []
    for name in chosen:
        entry = REPRODUCTIONS[name]
        args = entry.quick if quick else entry.full
        result.append((name, None if args is None else [entry.script, *args]))
    return result
