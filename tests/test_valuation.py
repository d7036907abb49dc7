"""Data valuation: every semivalue against brute-force enumeration, the utility game against scikit-learn refits,
class-wise Shapley by enumeration, Data-OOB against the members' own predictions."""

from __future__ import annotations

import functools
import itertools
import math
import warnings

import numpy as np
import pytest
from scipy.special import beta as beta_function
from sklearn.datasets import load_breast_cancer, load_iris
from sklearn.ensemble import (
    BaggingClassifier,
    BaggingRegressor,
    ExtraTreesRegressor,
    GradientBoostingClassifier,
    RandomForestClassifier,
    RandomForestRegressor,
)
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.metrics import get_scorer, roc_auc_score
from sklearn.naive_bayes import GaussianNB
from sklearn.tree import DecisionTreeClassifier

from shap_instances.approximators import (
    MSRBanzhafApproximator,
    RegressionBanzhafApproximator,
    WeightedPermutationApproximator,
)
from shap_instances.exceptions import InvalidParameterError, UnsupportedModelError
from shap_instances.games import FunctionGame
from shap_instances.valuation import (
    Semivalue,
    classwise_shapley,
    data_oob,
    data_values,
    label_issues,
    semivalue_approximator,
    utility_game,
)

SEMIVALUES = [Semivalue("shapley"), Semivalue("banzhaf"), Semivalue("beta", 16.0, 1.0), Semivalue("beta", 4.0, 2.0),
              Semivalue("loo")]


def brute_weight(semivalue: Semivalue, n: int, s: int) -> float:
    """p(s) written out from each definition (factorials, powers of two, the Beta function)."""
    if semivalue.name == "shapley":
        return math.factorial(s) * math.factorial(n - 1 - s) / math.factorial(n)
    if semivalue.name == "banzhaf":
        return 0.5 ** (n - 1)
    if semivalue.name == "loo":
        return float(s == n - 1)
    return beta_function(s + semivalue.beta, n - 1 - s + semivalue.alpha) / beta_function(semivalue.alpha,
                                                                                        semivalue.beta)


def brute_semivalue(v, n: int, semivalue: Semivalue) -> np.ndarray:
    """phi_i = sum over S of the others of p(|S|) (v(S + i) - v(S)), by itertools (v called once per set)."""
    v = functools.cache(lambda subset, v=v: v(set(subset)))
    phi = np.zeros(n)
    for i in range(n):
        others = [j for j in range(n) if j != i]
        for s in range(n):
            for subset in itertools.combinations(others, s):
                phi[i] += brute_weight(semivalue, n, s) * (v(frozenset(subset) | {i}) - v(frozenset(subset)))
    return phi


def table_game(n: int, seed: int = 0) -> tuple[FunctionGame, dict]:
    """A game with an arbitrary value for every coalition."""
    rng = np.random.default_rng(seed)
    table = rng.normal(size=2**n)
    weights = 1 << np.arange(n)
    game = FunctionGame(lambda masks: table[masks.astype(np.int64) @ weights], n)
    return game, table


@pytest.mark.parametrize("semivalue", SEMIVALUES, ids=lambda s: s.label)
def test_exact_semivalues_match_brute_force(semivalue):
    n = 6
    game, table = table_game(n)
    v = lambda subset: table[sum(1 << j for j in subset)]  # noqa: E731
    result = semivalue_approximator(semivalue, "exact").estimate(game)
    np.testing.assert_allclose(result.values[:, 0], brute_semivalue(v, n, semivalue), atol=1e-12)
    assert result.info["efficient"] == (semivalue.name == "shapley")
    assert result.info["adds_up_to"] == ("v(all) - v(empty)" if semivalue.name == "shapley" else None)
    np.testing.assert_allclose(semivalue.weights(n) @ [math.comb(n - 1, s) for s in range(n)], 1.0)


@pytest.mark.parametrize("semivalue,estimator", [(Semivalue("banzhaf"), "msr"), (Semivalue("banzhaf"), "regression"),
                                                 (Semivalue("banzhaf"), "permutation"),
                                                 (Semivalue("beta", 16.0, 1.0), "permutation"),
                                                 (Semivalue("shapley"), "permutation"), (Semivalue("loo"), "loo")],
                         ids=lambda x: getattr(x, "label", x))
def test_sampling_estimators_agree_with_enumeration(semivalue, estimator):
    game, _ = table_game(7, seed=1)
    exact = semivalue_approximator(semivalue, "exact").estimate(game).values[:, 0]
    result = semivalue_approximator(semivalue, estimator, max_evals=40_000, random_state=0).estimate(game)
    if result.standard_errors is None:  # leave-one-out is exact
        np.testing.assert_allclose(result.values[:, 0], exact, atol=1e-12)
        return
    errors = result.standard_errors[:, 0]
    assert np.all(np.abs(result.values[:, 0] - exact) < 4.5 * errors + 1e-12), (result.values[:, 0], exact, errors)
    assert np.all(errors < 0.1)
    assert result.n_evaluations <= 40_000


@pytest.mark.parametrize("make", [MSRBanzhafApproximator, RegressionBanzhafApproximator], ids=["msr", "regression"])
def test_standard_errors_are_calibrated(make):
    """Across 40 seeds the estimate lands within two standard errors of the exact value ~95% of the time."""
    game, _ = table_game(5, seed=2)
    exact = semivalue_approximator(Semivalue("banzhaf"), "exact").estimate(game).values[:, 0]
    inside = []
    for seed in range(40):
        r = make(400, random_state=seed).estimate(game)
        inside.append(np.abs(r.values[:, 0] - exact) < 2 * r.standard_errors[:, 0])
    assert 0.85 < np.mean(inside) <= 1.0


def test_regression_banzhaf_beats_msr_on_a_nearly_additive_game():
    """Additive plus a small interaction: same coalitions' budget, the least-squares error is several times lower."""
    weights = np.linspace(-1.0, 2.0, 12)
    game = FunctionGame(lambda m: m @ weights + 0.3 * (m[:, 0] & m[:, 1]) + 0.1 * np.sin(m.sum(1)), 12)
    exact = semivalue_approximator(Semivalue("banzhaf"), "exact").estimate(game).values[:, 0]
    errors = {name: np.sqrt(np.mean([(make(300, random_state=seed).estimate(game).values[:, 0] - exact) ** 2
                                     for seed in range(10)]))
              for name, make in [("msr", MSRBanzhafApproximator), ("regression", RegressionBanzhafApproximator)]}
    assert errors["regression"] < errors["msr"] / 3, errors
    additive = RegressionBanzhafApproximator(100, random_state=0).estimate(FunctionGame(lambda m: m @ weights, 12))
    np.testing.assert_allclose(additive.values[:, 0], weights, atol=1e-9)  # an additive game: no residual, no error
    assert np.all(additive.standard_errors < 1e-9)
    with pytest.raises(InvalidParameterError, match="at least 2 \\(n \\+ 1\\)"):
        RegressionBanzhafApproximator(20).estimate(game)


def ridge_problem(n=12, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n + 30, 3))
    y = X @ [1.0, -2.0, 0.5] + rng.normal(size=n + 30)
    return X[:n], y[:n], X[n:], y[n:]


@pytest.mark.parametrize("scoring", ["r2", "neg_mean_squared_error", "explained_variance", "neg_median_absolute_error"])
def test_score_game_fast_path_equals_sklearn_refits(scoring):
    X, y, Xv, yv = ridge_problem()
    game = utility_game(Ridge(alpha=0.5), X, y, Xv, yv, scoring=scoring)
    assert game.cheap
    masks = np.random.default_rng(1).random((6, len(y))) < 0.6
    expected = [get_scorer(scoring)(Ridge(alpha=0.5).fit(X[m], y[m]), Xv, yv) for m in masks]
    np.testing.assert_allclose(game(masks)[:, 0], expected, rtol=1e-9, atol=1e-9)
    permutations = np.array([np.random.default_rng(2).permutation(len(y))])
    prefixes = game.prefix_values(permutations)[0, :, 0]
    order = permutations[0]
    direct = [get_scorer(scoring)(Ridge(alpha=0.5).fit(X[order[:t]], y[order[:t]]), Xv, yv)
              for t in range(2, len(y) + 1)]
    np.testing.assert_allclose(prefixes[2:], direct, rtol=1e-8, atol=1e-8)
    assert prefixes[0] == game.default_score


@pytest.mark.parametrize("semivalue", ["shapley", "banzhaf", "beta", "loo"])
def test_data_values_on_the_ridge_shortcut_match_brute_force(semivalue):
    X, y, Xv, yv = ridge_problem(n=7)
    dv = data_values(Ridge(alpha=0.5), X, y, Xv, yv, semivalue=semivalue, approximator="exact", scoring="r2")
    score = get_scorer("r2")
    default = 1.0 - np.sum((yv - y.mean()) ** 2) / np.sum((yv - yv.mean()) ** 2)

    def v(subset):
        rows = sorted(subset)
        return score(Ridge(alpha=0.5).fit(X[rows], y[rows]), Xv, yv) if rows else default

    sv = Semivalue(semivalue, 16.0, 1.0)
    np.testing.assert_allclose(dv.values.to_numpy(), brute_semivalue(v, 7, sv), atol=1e-9)
    if sv.efficient:
        assert dv.adds_up_to == "v(all) - v(empty)" and abs(dv.values.sum() - dv.total) < 1e-9
    else:
        assert dv.adds_up_to is None and dv.total is None


def test_any_scorer_on_a_classifier_matches_refits():
    X, y = load_breast_cancer(return_X_y=True)
    X = ((X - X.mean(0)) / X.std(0))[:, :6]
    rows = np.r_[0:3, 19:22]  # three of each class
    Xt, yt, Xv, yv = X[rows], y[rows], X[300:360], y[300:360]

    def v(subset):
        chosen = sorted(subset)
        if len(set(yt[chosen])) < 2:
            return 0.0
        model = GaussianNB().fit(Xt[chosen], yt[chosen])
        return roc_auc_score(yv, model.predict_proba(Xv)[:, 1])

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        dv = data_values(GaussianNB(), Xt, yt, Xv, yv, semivalue="banzhaf", approximator="exact",
                         scoring="roc_auc", default_score=0.0)
    np.testing.assert_allclose(dv.values.to_numpy(), brute_semivalue(v, 6, Semivalue("banzhaf")), atol=1e-12)
    assert dv.info["n_failed_fits"] > 0  # the one-class subsets


def test_classwise_shapley_matches_enumeration():
    X, y = load_iris(return_X_y=True)
    rows = np.r_[0:2, 50:53, 100:102]  # three classes: 2, 3 and 2 rows
    Xt, yt, Xv, yv = X[rows], y[rows], X[::10], y[::10]
    n = len(yt)

    def u(subset, label):
        chosen = sorted(subset)
        if not chosen:
            return 0.0
        pred = GaussianNB().fit(Xt[chosen], yt[chosen]).predict(Xv)
        own = yv == label
        return np.sum((pred == yv) & own) / len(yv) * np.exp(np.sum((pred == yv) & ~own) / len(yv))

    expected = np.zeros(n)
    for label in np.unique(yt):
        own, others = np.flatnonzero(yt == label), np.flatnonzero(yt != label)
        for k in range(len(others) + 1):
            for context in itertools.combinations(others, k):
                game = lambda subset: u(set(own[list(subset)]) | set(context), label)  # noqa: B023, E731
                expected[own] += brute_semivalue(game, len(own), Semivalue("shapley")) / 2 ** len(others)
    # the paper's last step: each class rescaled to add up to its in-class accuracy of the model fitted on all rows
    pred = GaussianNB().fit(Xt, yt).predict(Xv)
    normalized = expected.copy()
    for label in np.unique(yt):
        own = yt == label
        normalized[own] *= np.sum((pred == yv) & (yv == label)) / len(yv) / expected[own].sum()
    assert not np.allclose(normalized, expected)  # the rescaling changes the values
    dv = classwise_shapley(GaussianNB(), Xt, yt, Xv, yv, exact=True)
    np.testing.assert_allclose(dv.values.to_numpy(), normalized, atol=1e-12)
    scale = np.array([dv.info["class_scale"][label] for label in yt])
    np.testing.assert_allclose(dv.values.to_numpy() / scale, expected, atol=1e-12)  # the values before it
    sampled = classwise_shapley(GaussianNB(), Xt, yt, Xv, yv, n_contexts=12, n_permutations=4,
                                random_state=0, normalize=False)
    errors = sampled.standard_errors.to_numpy()
    assert np.all(np.abs(sampled.values.to_numpy() - expected) < 5 * errors + 1e-9), (sampled.values, expected)


def reference_oob(model, X, y, classifier):
    """Data-OOB written as pyDVL does it: each member predicts its out-of-bag rows."""
    total, count = np.zeros(len(y)), np.zeros(len(y))
    features = getattr(model, "estimators_features_", [slice(None)] * len(model.estimators_))
    for member, drawn, cols in zip(model.estimators_, model.estimators_samples_, features, strict=True):
        oob = np.setdiff1d(np.arange(len(y)), drawn)
        pred = member.predict(X[oob][:, cols])
        score = (model.classes_[pred.astype(int)] == y[oob]) if classifier else -((pred - y[oob]) ** 2)
        total[oob] += score
        count[oob] += 1
    return total / count


@pytest.mark.parametrize("make", [lambda: RandomForestClassifier(20, random_state=0),
                                  lambda: BaggingClassifier(DecisionTreeClassifier(max_depth=3), 10, max_features=0.5,
                                                            random_state=0),
                                  lambda: RandomForestRegressor(15, random_state=0),
                                  lambda: ExtraTreesRegressor(15, bootstrap=True, random_state=0),
                                  lambda: BaggingRegressor(n_estimators=10, random_state=0)],
                         ids=["rf-clf", "bagging-clf", "rf-reg", "et-reg", "bagging-reg"])
def test_data_oob_equals_the_members_own_predictions(make):
    X, y = load_breast_cancer(return_X_y=True)
    X, y = X[:200], y[:200]
    model = make()
    classifier = hasattr(model, "predict_proba")
    labels = np.where(y == 1, "benign", "malignant") if classifier else X[:, 0] * 3 + y
    model.fit(X, labels)
    expected = reference_oob(model, X, labels, classifier)
    dv = data_oob(model, X, labels)
    np.testing.assert_allclose(dv.values.to_numpy(), expected, atol=1e-12, equal_nan=True)
    assert np.isfinite(dv.values).mean() > 0.95


def test_data_oob_of_a_pipeline_is_that_of_its_forest_on_the_transformed_rows():
    """A pipeline of a scaler and a forest: the forest's own members (reference_oob) on the scaled rows; a
    TransformedTargetRegressor is refused with the way out."""
    from sklearn.compose import TransformedTargetRegressor
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    X, y = load_breast_cancer(return_X_y=True)
    X, y = X[:150], y[:150]
    pipeline = make_pipeline(StandardScaler(), RandomForestClassifier(20, random_state=0)).fit(X, y)
    forest, scaled = pipeline[-1], pipeline[0].transform(X)
    expected = reference_oob(forest, scaled, y, True)
    np.testing.assert_allclose(data_oob(pipeline, X, y).values.to_numpy(), expected, atol=1e-12, equal_nan=True)
    wrapped = TransformedTargetRegressor(RandomForestRegressor(5, random_state=0), func=np.log1p,
                                         inverse_func=np.expm1).fit(X, X[:, 0])
    with pytest.raises(UnsupportedModelError, match="regressor_"):
        data_oob(wrapped, X, X[:, 0])


def test_bad_input_is_refused():
    X, y, Xv, yv = ridge_problem()
    with pytest.raises(InvalidParameterError, match="scoring"):
        data_values(Ridge(), X, y, Xv, yv, scoring="no_such_score")
    with pytest.raises(InvalidParameterError, match="semivalue"):
        data_values(Ridge(), X, y, Xv, yv, semivalue="owen")
    with pytest.raises(InvalidParameterError, match="alpha must be a finite number in"):
        data_values(Ridge(), X, y, Xv, yv, semivalue="beta", alpha=0.0)
    with pytest.raises(InvalidParameterError, match="Banzhaf values only"):
        data_values(Ridge(), X, y, Xv, yv, approximator="msr")
    with pytest.raises(InvalidParameterError, match="max_evals"):
        data_values(Ridge(), X, y, Xv, yv, max_evals=0)
    with pytest.raises(UnsupportedModelError, match="needs a classifier, but Ridge is a regressor"):
        classwise_shapley(Ridge(), X, y, Xv, yv)
    Xc, yc = load_breast_cancer(return_X_y=True)
    with pytest.raises(UnsupportedModelError, match="bagging"):
        data_oob(GradientBoostingClassifier(n_estimators=2).fit(Xc, yc), Xc, yc)
    with pytest.raises(UnsupportedModelError, match="bootstrap=False"):
        data_oob(ExtraTreesRegressor(3).fit(X, y), X, y)


def test_inputs_are_not_modified():
    X, y, Xv, yv = ridge_problem()
    copies = [a.copy() for a in (X, y, Xv, yv)]
    model = Ridge(alpha=0.5)
    data_values(model, X, y, Xv, yv, semivalue="banzhaf", max_evals=200, random_state=0)
    assert not hasattr(model, "coef_")
    for before, after in zip(copies, (X, y, Xv, yv), strict=True):
        np.testing.assert_array_equal(before, after)


def test_weighted_permutations_reproducible():
    game, _ = table_game(6)
    a = WeightedPermutationApproximator(Semivalue("beta", 16.0, 1.0), 50, random_state=3).estimate(game)
    b = WeightedPermutationApproximator(Semivalue("beta", 16.0, 1.0), 50, random_state=3).estimate(game)
    np.testing.assert_array_equal(a.values, b.values)


def test_label_issues_finds_flipped_labels_with_evidence():
    X, y = load_breast_cancer(return_X_y=True)
    X, y = X[:200], np.where(y[:200] == 1, "benign", "malignant")
    flipped = np.random.default_rng(0).choice(200, 20, replace=False)
    noisy = y.copy()
    noisy[flipped] = np.where(y[flipped] == "benign", "malignant", "benign")
    found = label_issues(X, noisy, random_state=0)
    assert list(found.columns) == ["label", "suggested_label", "label_quality", "is_issue", "rank", "p_logistic",
                                   "p_forest", "p_knn"]
    is_flipped = np.isin(np.arange(200), flipped)
    assert roc_auc_score(is_flipped, -found["label_quality"]) > 0.9
    assert found.loc[found["is_issue"], "suggested_label"].ne(found.loc[found["is_issue"], "label"]).all()
    np.testing.assert_allclose(found["label_quality"], found[["p_logistic", "p_forest", "p_knn"]].mean(axis=1))
    assert found["is_issue"].to_numpy()[is_flipped].mean() > 0.7
    with pytest.raises(InvalidParameterError, match="evidence"):
        label_issues(X, noisy, evidence=("svm",))
    with pytest.raises(InvalidParameterError, match="at least 2 classes"):
        label_issues(X[:8], noisy[:8])


def test_label_issues_encodes_a_data_frame_with_strings_and_missing_values():
    """A DataFrame with a string column, a boolean column and missing values gives what its encoding by hand
    gives (median for missing numbers, one-hot with 'missing' as a category), and the input is left untouched."""
    import pandas as pd
    X, y = load_breast_cancer(return_X_y=True)
    rng = np.random.default_rng(1)
    frame = pd.DataFrame(X[:120, :3], columns=["a", "b", "c"], index=[f"case{i}" for i in range(120)])
    frame.loc[rng.random(120) < 0.1, "a"] = np.nan
    frame["size"] = pd.Series(np.where(X[:120, 3] > np.median(X[:120, 3]), "large", "small"), index=frame.index)
    frame.loc[rng.random(120) < 0.1, "size"] = None
    frame["flag"] = X[:120, 4] > np.median(X[:120, 4])
    labels = np.where(y[:120] == 1, "benign", "malignant")
    before = frame.copy()
    found = label_issues(frame, labels, random_state=0)
    pd.testing.assert_frame_equal(frame, before)
    a = frame["a"].fillna(frame["a"].median()).to_numpy()
    size = frame["size"].fillna("missing")
    by_hand = np.column_stack([a, frame[["b", "c"]].to_numpy()]
                              + [(size == v).to_numpy(float) for v in ("large", "missing", "small")]
                              + [(frame["flag"].astype(str) == v).to_numpy(float) for v in ("False", "True")])
    expected = label_issues(by_hand, labels, random_state=0)
    assert found.index[0] == "case0"
    np.testing.assert_allclose(found["label_quality"].to_numpy(), expected["label_quality"].to_numpy(), atol=1e-12)


def test_label_issues_families_equal_scikit_learn_out_of_fold():
    """Each family's evidence against scikit-learn computed independently on the same split: the logistic and
    k-NN columns equal ``cross_val_predict`` of a scaled pipeline (KNeighborsClassifier's own vote), also where a
    training fold lacks a class (KFold over sorted labels: its probability is 0); the forest column equals a
    RandomForestClassifier of ``n_trees`` trees' out-of-bag probabilities."""
    from sklearn.model_selection import KFold, cross_val_predict
    from sklearn.neighbors import KNeighborsClassifier
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from shap_instances.utils import check_random_state
    X, y = load_iris(return_X_y=True)
    X = X + np.random.default_rng(0).normal(scale=1e-3, size=X.shape)  # no tied distances: one k-NN answer
    rows = np.arange(len(y))
    for cv in (KFold(5, shuffle=True, random_state=1), KFold(3)):  # KFold(3): each training fold lacks a class
        found = label_issues(X, y, cv=cv, n_trees=30, random_state=0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # cross_val_predict warns of the missing class
            logistic = cross_val_predict(make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000)), X, y,
                                         cv=cv, method="predict_proba")
            knn = cross_val_predict(make_pipeline(StandardScaler(), KNeighborsClassifier(10)), X, y, cv=cv,
                                    method="predict_proba")
        np.testing.assert_allclose(found["p_logistic"], logistic[rows, y], rtol=0, atol=1e-12)
        np.testing.assert_allclose(found["p_knn"], knn[rows, y], rtol=0, atol=1e-12)
    assert (found["p_logistic"] == 0).all()  # KFold(3) over sorted labels: no fold's model knows its rows' class
    seed = int(check_random_state(0).integers(2**31 - 1))
    forest = RandomForestClassifier(30, min_samples_leaf=2, oob_score=True, random_state=seed, n_jobs=1).fit(X, y)
    np.testing.assert_allclose(found["p_forest"], forest.oob_decision_function_[rows, y], rtol=0, atol=1e-12)


def test_label_issues_n_trees_finds_flipped_multiclass_labels():
    """Wine (3 classes, string labels) with 10% of the labels flipped: at the default 50 trees and at the former
    200 the flipped rows are found (AUC by scikit-learn's roc_auc_score, independent of the ranking code); only the
    forest's column depends on n_trees; a forest of few trees leaves rows without an out-of-bag vote uniform."""
    import pandas as pd
    from sklearn.datasets import load_wine
    X, codes = load_wine(return_X_y=True)
    rng = np.random.default_rng(3)
    flipped = rng.choice(len(codes), len(codes) // 10, replace=False)
    noisy = codes.copy()
    noisy[flipped] = (codes[flipped] + rng.integers(1, 3, len(flipped))) % 3
    labels = np.array(["barolo", "grignolino", "barbera"])[noisy]
    is_flipped = np.isin(np.arange(len(codes)), flipped)
    default, former = label_issues(X, labels, random_state=0), label_issues(X, labels, random_state=0, n_trees=200)
    for found in (default, former):
        assert roc_auc_score(is_flipped, -found["label_quality"]) > 0.97
        assert found["is_issue"].to_numpy()[is_flipped].mean() >= 0.8
        assert set(found["rank"].to_numpy()[is_flipped]) <= set(range(1, 31))  # every flip in the 30 most suspect
    pd.testing.assert_frame_equal(default[["p_logistic", "p_knn"]], former[["p_logistic", "p_knn"]], check_exact=True)
    assert not np.array_equal(default["p_forest"], former["p_forest"])
    one_tree = label_issues(X, labels, evidence=("forest",), n_trees=1, random_state=0)["p_forest"].to_numpy()
    assert np.isclose(one_tree, 1 / 3).mean() > 0.5  # ~63% of rows are in the one tree's bootstrap draw: no vote


def test_score_game_logistic_shortcut_equals_sklearn_refits():
    """Coalitions and prefixes (empty, one class included) under four scorers, against scikit-learn refits."""
    from sklearn.linear_model import LogisticRegression
    X, y = load_breast_cancer(return_X_y=True)
    X = ((X - X.mean(0)) / X.std(0))[:, :6]
    # text labels (the shortcut maps the second class to 1); scikit-learn's Brier score wants numeric ones
    scorings = {"accuracy": "text", "roc_auc": "text", "neg_log_loss": "text", "neg_brier_score": "numeric"}
    labels = {"text": np.array(["benign", "malignant"]), "numeric": np.array([0, 1])}
    rng = np.random.default_rng(3)
    masks = rng.random((6, 24)) < 0.4
    masks[0], masks[1] = False, y[:24] == 1  # empty; one class
    order = rng.permutation(24)
    rows = [np.flatnonzero(m) for m in masks] + [order[:t] for t in range(25)]
    fits = [LogisticRegression(C=0.5, tol=1e-10, max_iter=10_000).fit(X[r], y[r]) if len(set(y[r])) == 2 else None
            for r in rows]
    for scoring, kind in scorings.items():
        yt, yv = labels[kind][y[:24]], labels[kind][y[300:380]]
        game = utility_game(LogisticRegression(C=0.5), X[:24], yt, X[300:380], yv, scoring=scoring,
                            default_score=-1.0)
        assert game.cheap
        expected = [-1.0 if fit is None else get_scorer(scoring)(_relabelled(fit, labels[kind]), X[300:380], yv)
                    for fit in fits]  # empty or one class: scikit-learn refuses, default_score
        got = np.r_[game(masks)[:, 0], game.prefix_values(order[None])[0, :, 0]]
        np.testing.assert_allclose(got, expected, atol=1e-6, err_msg=scoring)
        assert game.n_failed_fits == 0


def _relabelled(fit, classes):
    """A fitted 0/1 logistic regression that predicts ``classes`` instead."""
    fit.classes_ = classes
    return fit
