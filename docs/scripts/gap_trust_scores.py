"""The trust-score figures quoted on docs/explainers/gap.md: ``python docs/scripts/gap_trust_scores.py [--quick]``.

Under ``benchmarks/run_all.py figures gap_trust_scores`` every number the page quotes is recorded
(``benchmarks/results/fig-gap_trust_scores.json``), rounded as the page shows it, and the decile tables as parts:

* the worked example's train/test splits (diabetes: 300 trees, ``min_samples_leaf=5``; breast cancer: 300 trees):
  how many training points carry nine tenths of a prediction's weight, the wrong and the confident right
  classification, the worst and the best diabetes prediction with their predictive distributions, the training
  error in sample and out of bag;
* five-fold cross-fitting (200 trees): the decile tables of docs/scripts/make_gap_figures.py (the weighted
  out-of-bag error against the absolute error on diabetes; the class probability, the outlier margin on both scales
  and the paper's outlier ratio against accuracy on breast cancer);
* the choice of runner-up class and of outlier scale, five folds with 100 trees on breast cancer, iris, wine and
  digits: how often the paper's "median proximity" to a class is 0 for every other class, how often the two
  runner-up rules disagree, and how much the margin's Spearman correlation with correctness moves between scales
  and between runner-up rules (the largest difference over the data sets).

``--quick``: two datasets of the runner-up part and 50 trees everywhere (for checking the script, never quoted).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.stats import spearmanr
from sklearn.base import clone, is_classifier
from sklearn.datasets import load_breast_cancer, load_diabetes, load_digits, load_iris, load_wine
from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor
from sklearn.model_selection import KFold, StratifiedKFold, train_test_split

from shap_instances import GapExplainer
from shap_instances.weighted_targets import neighbours_for_weight, trust_decile_table

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import record  # noqa: E402
from make_gap_figures import markdown  # noqa: E402 - the decile tables as that script prints them


def trees(n: int, quick: bool) -> int:
    return 50 if quick else n


def worked_regression(quick: bool) -> None:
    """The diabetes split of the worked example: neighbours, training errors, the worst and the best prediction."""
    X, y = load_diabetes(return_X_y=True, as_frame=True)
    X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.25, random_state=0)
    forest = RandomForestRegressor(trees(300, quick), min_samples_leaf=5, oob_score=True, random_state=0)
    forest.fit(X_tr, y_tr)
    ex = GapExplainer(forest, X_tr, y=y_tr)
    P, prediction = ex.proximities(X_te), forest.predict(X_te)
    scores = ex.trust_scores(X_te)
    error = np.abs(y_te.to_numpy() - prediction)
    rank = scores["weighted_oob_error"].rank(pct=True).to_numpy()
    values = {"diabetes.n_train": len(y_tr), "diabetes.n_test": len(y_te),
              "diabetes.neighbours_90": float(np.median(neighbours_for_weight(P))),
              "diabetes.training_mae.in_sample": round(float(np.abs(y_tr - forest.predict(X_tr)).mean()), 2),
              "diabetes.training_mae.oob": round(float(np.abs(y_tr.to_numpy() - ex.oob_predictions()[:, 0]).mean()), 2)}
    for tag, row in (("worst", int(np.argmax(error))), ("best", int(np.argmin(error)))):
        s = scores.iloc[row]
        values |= {f"diabetes.{tag}.row": row, f"diabetes.{tag}.prediction": round(float(prediction[row]), 1),
                   f"diabetes.{tag}.true": round(float(y_te.iloc[row])), f"diabetes.{tag}.q10": round(float(s["q10"])),
                   f"diabetes.{tag}.q90": round(float(s["q90"])),
                   f"diabetes.{tag}.weighted_oob_error": round(float(s["weighted_oob_error"]), 1),
                   f"diabetes.{tag}.percentile": round(100 * float(rank[row]))}
    width, weighted = scores["q90"] - scores["q10"], scores["weighted_oob_error"]
    values |= {"diabetes.spearman.width": round(float(spearmanr(width, error)[0]), 2),
               "diabetes.spearman.weighted_oob_error": round(float(spearmanr(weighted, error)[0]), 2)}
    print(values)
    record(**values)


def worked_classification(quick: bool) -> None:
    """The breast-cancer split of the worked example: neighbours, the wrong and the confident right prediction."""
    X, y = load_breast_cancer(return_X_y=True, as_frame=True)
    X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.3, random_state=0, stratify=y)
    forest = RandomForestClassifier(trees(300, quick), random_state=0).fit(X_tr, y_tr)
    ex = GapExplainer(forest, X_tr, y=y_tr)
    scores, predicted = ex.trust_scores(X_te), forest.predict(X_te)
    probability = scores["class_probability"].to_numpy()
    wrong, right = np.flatnonzero(predicted != y_te.to_numpy()), np.flatnonzero(predicted == y_te.to_numpy())
    values = {"breast_cancer.n_train": len(y_tr),
              "breast_cancer.neighbours_90": float(np.median(neighbours_for_weight(ex.proximities(X_te))))}
    for tag, row in (("wrong", wrong[np.argmin(probability[wrong])]), ("right", right[np.argmax(probability[right])])):
        values |= {f"breast_cancer.{tag}.probability": round(float(probability[row]), 2),
                   f"breast_cancer.{tag}.margin": round(float(scores["outlier_margin"].iloc[row]))
                   if np.isfinite(scores["outlier_margin"].iloc[row]) else "+inf"}
    print(values)
    record(**values)


def cross_fitted(X: pd.DataFrame, y: pd.Series, forest, columns: dict[str, dict]) -> dict[str, np.ndarray]:
    """Five-fold cross-fitted trust-score columns (``{name: (column, trust_scores options)}``), the absolute error
    (regression) or correctness (classification), and, for classifiers, the share of each test point's non-predicted
    classes whose median proximity over their training points is 0."""
    classifier = is_classifier(forest)
    folds = (StratifiedKFold if classifier else KFold)(5, shuffle=True, random_state=0)
    found = {name: np.zeros(len(y)) for name in [*columns, "error", "median_zero"]}
    for train, test in folds.split(X, y):
        model = clone(forest).fit(X.iloc[train], y.iloc[train])
        ex = GapExplainer(model, X.iloc[train], y=y.iloc[train])
        for name, (column, options) in columns.items():
            found[name][test] = ex.trust_scores(X.iloc[test], **options)[column]
        predicted = model.predict(X.iloc[test])
        found["error"][test] = (predicted == y.iloc[test]) if classifier else np.abs(y.iloc[test] - predicted)
        if classifier:
            found["median_zero"][test] = median_proximity_zero(ex.proximities(X.iloc[test]), y.iloc[train], predicted)
    return found


def median_proximity_zero(P, y_train: pd.Series, predicted: np.ndarray) -> np.ndarray:
    """Per row of ``P``: whether the median of its proximities over the training points of every non-predicted class
    is 0 (the paper's runner-up rule, read literally, is then undefined)."""
    dense, labels = P.toarray(), y_train.to_numpy()
    medians = {c: np.median(dense[:, labels == c], axis=1) for c in np.unique(labels)}
    return np.array([all(medians[c][i] == 0 for c in medians if c != predicted[i]) for i in range(len(dense))])


def decile_tables(quick: bool) -> None:
    """The five-fold decile tables of the page and the numbers read from them."""
    X, y = load_diabetes(return_X_y=True, as_frame=True)
    reg = cross_fitted(X, y, RandomForestRegressor(trees(200, quick), min_samples_leaf=5, random_state=0),
                       {"score": ("weighted_oob_error", {})})
    rho, p_value = spearmanr(reg["score"], reg["error"])
    X, y = load_breast_cancer(return_X_y=True, as_frame=True)
    clf = cross_fitted(X, y, RandomForestClassifier(trees(200, quick), random_state=0),
                       {"probability": ("class_probability", {}), "margin": ("outlier_margin", {}),
                        "log_margin": ("outlier_margin", {"outlier_scale": "log"}), "ratio": ("outlier_ratio", {})})
    defined = ~np.isnan(clf["ratio"])
    tables = {"weighted_oob_error": (trust_decile_table(reg["score"], reg["error"]), "mean abs test error"),
              "class_probability": (trust_decile_table(clf["probability"], clf["error"], n_bins=5), "test accuracy"),
              "outlier_margin": (trust_decile_table(clf["margin"], clf["error"]), "test accuracy"),
              "outlier_ratio": (trust_decile_table(clf["ratio"][defined], clf["error"][defined]), "test accuracy")}
    log_table = trust_decile_table(clf["log_margin"], clf["error"])
    raw_accuracy, log_accuracy = tables["outlier_margin"][0]["error_mean"], log_table["error_mean"]
    values = {"diabetes.folds.spearman": round(float(rho), 2), "diabetes.folds.p_value": float(f"{p_value:.1g}"),
              "margin.lowest_decile": round(100 * float(raw_accuracy.iloc[0])),
              "margin.other_deciles.min": round(100 * float(raw_accuracy.iloc[1:].min())),
              "margin.other_deciles.max": round(100 * float(raw_accuracy.iloc[1:].max())),
              "log_margin.min": round(float(np.min(clf["log_margin"]))),
              "log_margin.lowest_decile": round(float(log_accuracy.iloc[0]), 3),
              "log_margin.lowest_decile.sem": round(float(log_table["error_sem"].iloc[0]), 3),
              "log_margin.other_deciles.min": round(100 * float(log_accuracy.iloc[1:].min())),
              "log_margin.other_deciles.max": round(100 * float(log_accuracy.iloc[1:].max())),
              "ratio.undefined": int((~defined).sum())}
    print(values)
    for name, (table, error) in tables.items():
        text = markdown(table, name.replace("_", " ").replace("oob", "OOB"), error)
        print("\n" + text)
        values[f"part:{name}"] = text
    record(**values)


def runner_up(quick: bool) -> None:
    """Runner-up rules and outlier scales on four data sets (five folds, 100 trees)."""
    loaders = {"breast_cancer": load_breast_cancer, "iris": load_iris, "wine": load_wine, "digits": load_digits}
    values, gaps = {}, {"scales": [], "runner_up": []}
    for name, load in list(loaders.items())[: 2 if quick else None]:
        X, y = load(return_X_y=True, as_frame=True)
        found = cross_fitted(X, y, RandomForestClassifier(trees(100, quick), random_state=0),
                             {"raw": ("outlier_margin", {}), "log": ("outlier_margin", {"outlier_scale": "log"}),
                              "by_probability_margin": ("outlier_margin", {"runner_up": "probability"}),
                              "by_outlier": ("runner_up_class", {}),
                              "by_probability": ("runner_up_class", {"runner_up": "probability"})})
        rho = {key: spearmanr(found[key], found["error"], nan_policy="omit")[0]
               for key in ("raw", "log", "by_probability_margin")}
        gaps["scales"].append(abs(rho["raw"] - rho["log"]))
        gaps["runner_up"].append(abs(rho["raw"] - rho["by_probability_margin"]))
        if y.nunique() > 2:
            values[f"{name}.median_zero"] = round(100 * float(found["median_zero"].mean()))
            differs = found["by_outlier"] != found["by_probability"]
            values[f"{name}.runner_up_differs"] = round(100 * float(differs.mean()))
    values["scales.largest_spearman_difference"] = round(float(max(gaps["scales"])), 3)
    values["runner_up.largest_spearman_difference"] = round(float(max(gaps["runner_up"])), 3)
    print(values)
    record(**values)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="50 trees, two data sets in the runner-up part")
    quick = parser.parse_args(argv).quick
    worked_regression(quick)
    worked_classification(quick)
    decile_tables(quick)
    runner_up(quick)


if __name__ == "__main__":
    main()
