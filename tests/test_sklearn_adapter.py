"""The scikit-learn adapter (shap_instances/utils/_sklearn_internals.py), on the installed scikit-learn.

Each accessor is compared with something independent: the model's own predictions, scikit-learn's public
functions, or the fitted trees' stored sizes. ``scripts/test_oldest_sklearn.sh`` runs this file (and the forest
and boosting tests) on the oldest supported scikit-learn; the default run covers the newest.
"""

from __future__ import annotations

import re
import tomllib
import warnings
from pathlib import Path

import numpy as np
import pytest
from sklearn.ensemble import (
    ExtraTreesClassifier,
    GradientBoostingClassifier,
    GradientBoostingRegressor,
    HistGradientBoostingClassifier,
    HistGradientBoostingRegressor,
    RandomForestClassifier,
    RandomForestRegressor,
)
from sklearn.model_selection import train_test_split
from sklearn.utils.class_weight import compute_sample_weight

import shap_instances.utils._sklearn_internals as adapter
from shap_instances.exceptions import SklearnVersionWarning
from shap_instances.utils import (
    NEWEST_TESTED_SKLEARN,
    OLDEST_SKLEARN,
    SKLEARN_SUPPORTED,
    check_sklearn_version,
    forest_draw_semantics,
    forest_inbag_draws,
    forest_tree_weights,
    gb_init_raw,
    gb_loss,
    hgb_apply_input,
    hgb_baseline,
    hgb_loss,
    hgb_node_id_predictor,
    hgb_predictors,
    hgb_sample_weight,
    hgb_split_seed,
    sklearn_version,
)

ROOT = Path(__file__).resolve().parent.parent
RNG = np.random.default_rng(0)
X = RNG.normal(size=(120, 4))
Y_REG = X @ np.array([1.0, -2.0, 0.5, 0.0]) + RNG.normal(scale=0.1, size=120)
Y_CLS = (X[:, 0] + 0.3 * RNG.normal(size=120) > 0.4).astype(int)
WEIGHTS = RNG.uniform(0.5, 2.0, size=120)


# --------------------------------------------------------------------------------------------- the version range
def test_the_stated_range_agrees_with_pyproject_and_the_constants():
    dependencies = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    (requirement,) = [d for d in dependencies if d.startswith("scikit-learn")]
    lower = re.search(r">=\s*([\d.]+)", requirement)
    assert lower is not None and tuple(int(p) for p in lower.group(1).split(".")[:2]) == OLDEST_SKLEARN
    newest = f"{NEWEST_TESTED_SKLEARN[0]}.{NEWEST_TESTED_SKLEARN[1] + 1}"
    assert SKLEARN_SUPPORTED == f">={OLDEST_SKLEARN[0]}.{OLDEST_SKLEARN[1]},<{newest}"


def test_the_installed_scikit_learn_is_in_the_supported_range():
    """A newer release than the newest tested fails here: run the tests, then raise NEWEST_TESTED_SKLEARN."""
    assert OLDEST_SKLEARN <= sklearn_version() <= NEWEST_TESTED_SKLEARN
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_sklearn_version()


def test_outside_the_range_refuses_below_and_warns_above():
    with pytest.raises(ImportError, match=r"scikit-learn >=1\.4,<1\.10, found 1\.3"):
        check_sklearn_version((1, 3))
    with pytest.warns(SklearnVersionWarning, match=r"scikit-learn 1\.10 is newer than the newest release"):
        check_sklearn_version((1, 10))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for version in [OLDEST_SKLEARN, NEWEST_TESTED_SKLEARN]:
            check_sklearn_version(version)


def test_the_accessors_warn_once_on_a_newer_release(monkeypatch):
    monkeypatch.setattr(adapter, "sklearn_version", lambda: (2, 0))
    adapter._checked_once.cache_clear()
    try:
        model = GradientBoostingRegressor(n_estimators=2).fit(X, Y_REG)
        with pytest.warns(SklearnVersionWarning) as caught:
            gb_loss(model)
            gb_init_raw(model, X)
        assert len(caught) == 1
    finally:
        adapter._checked_once.cache_clear()


def test_sklearn_version_reads_development_releases(monkeypatch):
    monkeypatch.setattr(adapter.sklearn, "__version__", "1.10.dev0")
    assert sklearn_version() == (1, 10)


# ------------------------------------------------------------------------------------------------------- forests
def test_draw_semantics_follow_the_release():
    assert forest_draw_semantics((1, 4)) == forest_draw_semantics((1, 8)) == ["multiplicative", "draw_probability"]
    assert forest_draw_semantics((1, 9)) == forest_draw_semantics((2, 0)) == ["draw_probability", "multiplicative"]
    assert forest_draw_semantics() == forest_draw_semantics(sklearn_version())


@pytest.mark.parametrize("chunk", [1, 3, 8, 100])
def test_inbag_draws_are_the_public_property_in_chunks(chunk):
    model = RandomForestRegressor(7, max_samples=0.7, random_state=0).fit(X, Y_REG)
    draws = list(forest_inbag_draws(model, chunk))
    assert len(draws) == 7 and all(np.array_equal(a, b) for a, b in zip(draws, model.estimators_samples_, strict=True))


FORESTS = {
    "regressor": (lambda: RandomForestRegressor(6, random_state=0), Y_REG, None),
    "regressor_sample_weight": (lambda: RandomForestRegressor(6, random_state=0), Y_REG, WEIGHTS),
    "classifier_balanced": (lambda: RandomForestClassifier(6, class_weight="balanced", random_state=0), Y_CLS, None),
    "classifier_balanced_weighted": (lambda: RandomForestClassifier(6, class_weight="balanced", random_state=0),
                                     Y_CLS, WEIGHTS),
    "classifier_subsample": (lambda: RandomForestClassifier(6, class_weight="balanced_subsample", random_state=0),
                             Y_CLS, None),
    "classifier_dict": (lambda: ExtraTreesClassifier(6, class_weight={0: 1.0, 1: 3.0}, bootstrap=True,
                                                     random_state=0), Y_CLS, WEIGHTS),
    "no_bootstrap": (lambda: ExtraTreesClassifier(4, bootstrap=False, random_state=0), Y_CLS, WEIGHTS),
}


@pytest.mark.parametrize("case", sorted(FORESTS))
def test_tree_weights_reproduce_every_trees_stored_weight(case):
    """Under the installed release's rule, each tree's weights sum, leaf by leaf, to what fit stored."""
    make, y, sample_weight = FORESTS[case]
    model = make().fit(X, y, sample_weight=sample_weight)
    classifier = hasattr(model, "classes_")
    y_raw = y[:, None]
    y_codes = np.searchsorted(model.classes_, y)[:, None] if classifier else y_raw
    weights, integral = forest_tree_weights(model, y_raw, y_codes, sample_weight, forest_draw_semantics()[0],
                                            classifier=classifier)
    draws = forest_inbag_draws(model) if model.bootstrap else (np.arange(len(y)) for _ in model.estimators_)
    for tree, drawn in zip(model.estimators_, draws, strict=True):
        counts, c = weights(np.asarray(drawn))
        leaves = tree.apply(X.astype(np.float32))
        total = np.bincount(leaves, weights=c, minlength=tree.tree_.node_count)
        is_leaf = tree.tree_.children_left == -1
        np.testing.assert_allclose(total[is_leaf], tree.tree_.weighted_n_node_samples[is_leaf], rtol=1e-9)
        assert np.array_equal(np.bincount(leaves, weights=counts > 0, minlength=tree.tree_.node_count)[is_leaf],
                              tree.tree_.n_node_samples[is_leaf])
        assert not integral or np.array_equal(c, counts)  # integral: the weights are the multiplicities


def test_tree_weights_refuse_draws_beyond_the_data():
    model = RandomForestRegressor(2, random_state=0).fit(X, Y_REG)
    weights, _ = forest_tree_weights(model, Y_REG[:10, None], Y_REG[:10, None], None, "draw_probability",
                                     classifier=False)
    with pytest.raises(ValueError, match="refers to row 119, but data has only 10 rows"):
        weights(np.array([0, 119]))


# ------------------------------------------------------------------------------------------------ GradientBoosting
def test_gb_loss_and_init_are_the_models():
    model = GradientBoostingRegressor(n_estimators=5, random_state=0).fit(X, Y_REG)
    raw = gb_init_raw(model, X)
    np.testing.assert_allclose(raw.ravel(), Y_REG.mean())
    trees = sum(model.learning_rate * tree.predict(X) for tree in model.estimators_[:, 0])
    np.testing.assert_allclose(raw.ravel() + trees, model.predict(X), rtol=1e-12)
    gradient = gb_loss(model).gradient(y_true=Y_REG, raw_prediction=raw.ravel())
    np.testing.assert_allclose(gradient, raw.ravel() - Y_REG)  # half squared error: prediction - target


def test_gb_classifier_init_is_the_prior_log_odds():
    model = GradientBoostingClassifier(n_estimators=3, random_state=0).fit(X, Y_CLS)
    prior = Y_CLS.mean()
    np.testing.assert_allclose(gb_init_raw(model, X[:3]).ravel(), np.log(prior / (1 - prior)))
    assert type(gb_loss(model)).__name__ == "HalfBinomialLoss"


# -------------------------------------------------------------------------------------------- HistGradientBoosting
@pytest.mark.parametrize("classifier", [False, True])
def test_hgb_trees_and_baseline_rebuild_the_raw_prediction(classifier):
    model = (HistGradientBoostingClassifier if classifier else HistGradientBoostingRegressor)(
        max_iter=6, random_state=0).fit(X, Y_CLS if classifier else Y_REG)
    predictors = hgb_predictors(model)
    assert len(predictors) == model.n_iter_ and all(len(it) == model.n_trees_per_iteration_ for it in predictors)
    X_model, bitsets, f_idx_map = hgb_apply_input(model, X)
    raw = np.asarray(hgb_baseline(model), dtype=np.float64).ravel() + np.zeros(len(X))
    for (predictor,) in predictors:
        nodes = hgb_node_id_predictor(predictor).predict(X_model, bitsets, f_idx_map, 1).astype(np.int64)
        assert predictor.nodes["is_leaf"][nodes].all()
        raw += predictor.nodes["value"][nodes]
        assert np.array_equal(np.bincount(nodes, minlength=len(predictor.nodes))[predictor.nodes["is_leaf"] == 1],
                              predictor.nodes["count"][predictor.nodes["is_leaf"] == 1])
    expected = model.decision_function(X) if classifier else model.predict(X)
    np.testing.assert_allclose(raw, expected, rtol=1e-6, atol=1e-6)
    assert hgb_loss(model).constant_hessian is (not classifier)


def test_hgb_node_id_predictor_leaves_the_model_untouched():
    model = HistGradientBoostingRegressor(max_iter=3, random_state=0).fit(X, Y_REG)
    before = model.predict(X)
    hgb_node_id_predictor(hgb_predictors(model)[0][0])
    assert np.array_equal(model.predict(X), before)


def test_hgb_sample_weight_applies_the_class_weights():
    model = HistGradientBoostingClassifier(max_iter=2, class_weight="balanced").fit(X, Y_CLS)
    y = Y_CLS.astype(np.float64)
    np.testing.assert_allclose(hgb_sample_weight(model, None, y), compute_sample_weight("balanced", Y_CLS))
    np.testing.assert_allclose(hgb_sample_weight(model, WEIGHTS, y),
                               WEIGHTS * compute_sample_weight("balanced", Y_CLS))
    plain = HistGradientBoostingRegressor(max_iter=2).fit(X, Y_REG)
    assert hgb_sample_weight(plain, None, Y_REG) is None


def test_hgb_split_seed_reproduces_the_early_stopping_split():
    model = HistGradientBoostingRegressor(max_iter=5, early_stopping=True, validation_fraction=0.25,
                                          n_iter_no_change=2, random_state=3).fit(X, Y_REG)
    train, _ = train_test_split(np.arange(len(X)), test_size=0.25, random_state=hgb_split_seed(model))
    assert int(hgb_predictors(model)[0][0].nodes["count"][0]) == train.size


@pytest.mark.parametrize("solver", ["lbfgs", "newton-cg", "newton-cholesky", "liblinear"])
def test_logistic_one_vs_rest_is_what_predict_proba_does(solver):
    """One-vs-rest normalises one sigmoid per class, multinomial takes a softmax: the model's own probabilities
    say which it fit (on scikit-learn < 1.6, newton-cholesky fits one-vs-rest; scripts/test_oldest_sklearn.sh)."""
    from scipy.special import expit, softmax
    from sklearn.datasets import load_iris
    from sklearn.linear_model import LogisticRegression

    from shap_instances.utils import logistic_one_vs_rest

    X, y = load_iris(return_X_y=True)
    try:
        model = LogisticRegression(solver=solver, max_iter=5000).fit(X, y)
    except ValueError as exc:  # scikit-learn >= 1.8 refuses liblinear on three classes
        pytest.skip(str(exc))
    scores = model.decision_function(X)
    sigmoids = expit(scores)
    ovr = np.allclose(model.predict_proba(X), sigmoids / sigmoids.sum(axis=1, keepdims=True))
    assert ovr != np.allclose(model.predict_proba(X), softmax(scores, axis=1))
    assert logistic_one_vs_rest(model) == ovr


def test_representer_reads_a_newton_cholesky_model_of_three_classes():
    """On scikit-learn < 1.6 this model is one-vs-rest; read as multinomial, its values missed by a factor of 186."""
    from sklearn.datasets import load_iris
    from sklearn.linear_model import LogisticRegression

    from shap_instances import RepresenterExplainer

    X, y = load_iris(return_X_y=True)
    model = LogisticRegression(solver="newton-cholesky", tol=1e-10, max_iter=1000).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no ReconstructionWarning
        explanation = RepresenterExplainer(model, X, y=y)(X[:5])
    margin = explanation.values.sum(axis=1) + explanation.base_values
    np.testing.assert_allclose(margin, model.decision_function(X[:5]), atol=1e-6)
