"""Residual decomposition against independent computations: sklearn refits, shap's Exact, closed forms."""

import itertools
import math
import warnings

import numpy as np
import pytest
import shap
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.dummy import DummyRegressor
from sklearn.ensemble import RandomForestRegressor
from sklearn.linear_model import LinearRegression, LogisticRegression, Ridge
from sklearn.neighbors import KNeighborsRegressor
from sklearn.svm import LinearSVC
from sklearn.tree import DecisionTreeRegressor

from shap_instances import InstanceKernelExplainer
from shap_instances.approximators import ExactApproximator
from shap_instances.datasets import load_diabetes
from shap_instances.exceptions import DataValidationError, ShapInstancesWarning, UnsupportedModelError
from shap_instances.games import ResidualGame
from shap_instances.linear import LogisticPath
from shap_instances.linear._fast_ridge import RidgePath
from shap_instances.metrics import cc_summary, instance_values, normalised_contributions
from shap_instances.neighbors._fast_knn import KNNPath, jia_knn_shapley


def diabetes(n, start=0):
    X, y = load_diabetes()
    return X.iloc[start:start + n].to_numpy(), y.iloc[start:start + n].to_numpy(dtype=float)


def brute_force(model, X, y, X_eval, y_eval, empty=None):
    """Shapley values by the permutation definition with scikit-learn refits (independent of the package)."""
    n = len(y)
    empty = np.zeros(len(y_eval)) if empty is None else empty
    values = np.zeros((len(y_eval), n))

    def v(members):
        if not members:
            return empty
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            refit = model.__class__(**model.get_params()).fit(X[list(members)], y[list(members)])
            return refit.predict(X_eval) - y_eval

    cache = {}
    for order in itertools.permutations(range(n)):
        members = ()
        previous = empty
        for player in order:
            members = tuple(sorted(members + (player,)))
            if members not in cache:
                cache[members] = v(members)
            values[:, player] += cache[members] - previous
            previous = cache[members]
    return values / math.factorial(n)


@pytest.mark.parametrize("model", [Ridge(alpha=0.3), DecisionTreeRegressor(max_depth=2, random_state=0)])
def test_exact_equals_brute_force_and_shap_exact(model):
    X, y = diabetes(6)
    X_eval, y_eval = diabetes(3, start=100)
    explanation = InstanceKernelExplainer(model, X, y=y, approximator="exact", silent=True)(X_eval, y_eval)
    np.testing.assert_allclose(explanation.values, brute_force(model, X, y, X_eval, y_eval), atol=1e-10)
    game = ResidualGame(model, X, y, X_eval, y_eval)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        reference = shap.explainers.Exact(lambda masks: game(masks > 0.5)[:, 0],
                                          shap.maskers.Independent(np.zeros((1, 6)), max_samples=1))(np.ones((1, 6)))
    np.testing.assert_allclose(explanation.values[0], reference.values[0], atol=1e-10)


@settings(max_examples=15)
@given(n_permutations=st.integers(2, 30), seed=st.integers(0, 1000), method=st.sampled_from(["permutation", "kernel"]))
def test_efficiency_for_any_budget(n_permutations, seed, method):
    X, y = diabetes(30)
    kwargs = {"n_permutations": n_permutations} if method == "permutation" else {"max_evals": 10 * n_permutations + 40}
    explainer = InstanceKernelExplainer(Ridge(alpha=0.2), X, y=y, approximator=method, random_state=seed, silent=True,
                                        **kwargs)
    explanation = explainer()
    full_fit = Ridge(alpha=0.2).fit(X, y).predict(X) - y
    np.testing.assert_allclose(explanation.base_values + explanation.values.sum(1), full_fit, atol=1e-10)


@pytest.mark.parametrize("empty_prediction", [None, 150.0])
def test_mean_model_closed_form(empty_prediction):
    """The closed form the explainer uses equals the issue's formula and enumeration of scikit-learn refits."""
    X, y = diabetes(9)
    X_eval, y_eval = diabetes(4, start=20)
    explainer = InstanceKernelExplainer(DummyRegressor(), X, y=y, empty_prediction=empty_prediction, silent=True)
    explanation = explainer(X_eval, y_eval)
    assert explainer.result_.approximator == "closed form (Mean)"
    n = len(y)
    harmonic = sum(1 / k for k in range(1, n + 1))
    others = (y.sum() - y) / (n - 1)
    stands_for = y_eval if empty_prediction is None else np.full(len(y_eval), empty_prediction)
    closed = (y + (harmonic - 1) * (y - others))[None, :] / n - stands_for[:, None] / n
    np.testing.assert_allclose(explanation.values, closed, atol=1e-12)
    empty = None if empty_prediction is None else empty_prediction - y_eval
    refits = ExactApproximator(silent=True).estimate(
        ResidualGame(DummyRegressor(), X, y, X_eval, y_eval, empty_prediction=empty_prediction, use_fast_path=False))
    np.testing.assert_allclose(explanation.values, refits.values.T, atol=1e-10)
    np.testing.assert_allclose(explanation.base_values, 0.0 if empty is None else empty, atol=1e-12)


def test_mean_model_closed_form_beyond_enumeration():
    X, y = diabetes(40)
    explanation = InstanceKernelExplainer(DummyRegressor(), X, y=y, approximator="exact", silent=True)()
    sampled = InstanceKernelExplainer(DummyRegressor(), X, y=y, approximator="permutation", n_permutations=400,
                                      random_state=0, silent=True)()
    assert np.abs(explanation.values - sampled.values).max() < 6 * sampled.error_std.max()
    np.testing.assert_allclose(explanation.base_values + explanation.values.sum(1), y.mean() - y, atol=1e-10)


def test_model_without_a_seed_is_seeded_so_refits_are_a_function_of_the_coalition():
    X, y = diabetes(14)
    model = RandomForestRegressor(n_estimators=3)
    runs = [InstanceKernelExplainer(model, X, y=y, n_permutations=2, random_state=s, silent=True) for s in (5, 5)]
    first, second = (explainer() for explainer in runs)
    np.testing.assert_array_equal(first.values, second.values)
    assert model.random_state is None  # the user's model is untouched
    full = RandomForestRegressor(n_estimators=3, random_state=5).fit(X, y).predict(X) - y
    np.testing.assert_allclose(first.base_values + first.values.sum(1), full, atol=1e-10)


def test_a_model_that_cannot_fit_all_rows_is_refused_at_once():
    X, y = diabetes(8)
    with pytest.raises(UnsupportedModelError, match="could not be fitted on all 8 training rows"):
        InstanceKernelExplainer(DecisionTreeRegressor(max_depth=-1), X, y=y, silent=True)()


def test_checkpoint_of_another_run_is_refused(tmp_path):
    X, y = diabetes(20)
    path = tmp_path / "run.pkl"
    settings_ = dict(n_permutations=4, silent=True, checkpoint=path)
    InstanceKernelExplainer(Ridge(), X, y=y, random_state=0, **settings_)()
    for other in (dict(random_state=1), dict(random_state=0, y=3 * y), dict(random_state=0, model=Ridge(2.0))):
        arguments = dict(model=Ridge(), data=X, y=y, **settings_) | other
        with pytest.raises(ValueError, match="belongs to another run"):
            InstanceKernelExplainer(**arguments)()
    with pytest.raises(ValueError, match="checkpoint is supported by approximator='permutation' only"):
        InstanceKernelExplainer(Ridge(), X, y=y, approximator="kernel", checkpoint=path)


@pytest.mark.slow  # about 12 s: three runs of 32 permutations of distance-weighted KNN refits
def test_checkpoint_resume_keeps_the_failed_fit_count(tmp_path, monkeypatch):
    X, y = diabetes(16)
    model = KNeighborsRegressor(n_neighbors=3, weights="distance")  # no fast path; fails below 3 rows
    settings_ = dict(n_permutations=32, random_state=2, silent=True)  # two batches of 16
    with pytest.warns(ShapInstancesWarning):
        reference = InstanceKernelExplainer(model, X, y=y, **settings_)
        reference_values = reference().values
    path = tmp_path / "run.pkl"
    original = ResidualGame.prefix_values
    calls = {"n": 0}

    def interrupted(self, permutations):
        calls["n"] += 1
        if calls["n"] == 2:
            raise KeyboardInterrupt
        return original(self, permutations)

    monkeypatch.setattr(ResidualGame, "prefix_values", interrupted)
    with pytest.warns(ShapInstancesWarning), pytest.raises(KeyboardInterrupt):
        InstanceKernelExplainer(model, X, y=y, checkpoint=path, **settings_)()
    monkeypatch.setattr(ResidualGame, "prefix_values", original)
    with pytest.warns(ShapInstancesWarning):
        resumed = InstanceKernelExplainer(model, X, y=y, checkpoint=path, **settings_)
        np.testing.assert_array_equal(resumed().values, reference_values)
    assert resumed.n_failed_fits_ == reference.n_failed_fits_ > 0


@pytest.mark.parametrize("model", [Ridge(alpha=0.5), Ridge(alpha=2.0, fit_intercept=False), LinearRegression()])
def test_fast_path_equals_refits_at_every_prefix(model):
    X, y = diabetes(25)
    X_eval, y_eval = diabetes(5, start=200)
    permutation = np.random.default_rng(0).permutation(25)
    fast = RidgePath(model, X, y, X_eval, y_eval).prefix_residuals(permutation)
    tolerance = 1e-10 if isinstance(model, Ridge) else 1e-8  # least squares below rank: min-norm via pinv
    for t in range(1, 26):  # includes prefixes with fewer rows than the 10 features
        refit = model.__class__(**model.get_params()).fit(X[permutation[:t]], y[permutation[:t]])
        np.testing.assert_allclose(fast[t - 1], refit.predict(X_eval) - y_eval, atol=tolerance)


def test_symmetry_invariance_and_seeds():
    X, y = (a.copy() for a in diabetes(7))
    X[3], y[3] = X[1], y[1]  # a duplicated training row
    values = InstanceKernelExplainer(Ridge(alpha=0.5), X, y=y, approximator="exact", silent=True)().values
    np.testing.assert_allclose(values[:, 1], values[:, 3], atol=1e-10)
    order = np.array([6, 2, 0, 5, 1, 4, 3])
    reordered = InstanceKernelExplainer(Ridge(alpha=0.5), X[order], y=y[order], approximator="exact", silent=True)(X,
                                                                                                                y).values
    np.testing.assert_allclose(reordered, values[:, order], atol=1e-10)
    Xl, yl = diabetes(40)
    runs = [InstanceKernelExplainer(Ridge(), Xl, y=yl, n_permutations=10, random_state=seed, silent=True)().values
            for seed in (1, 1, 2)]
    np.testing.assert_array_equal(runs[0], runs[1])
    assert not np.array_equal(runs[0], runs[2])


@pytest.mark.usefixtures("one_thread")  # scikit-learn KNN refits
def test_unfittable_subsets_get_the_empty_value():
    X, y = diabetes(6)
    model = KNeighborsRegressor(n_neighbors=3, weights="distance")  # no fast path: refits that can fail
    explainer = InstanceKernelExplainer(model, X, y=y, approximator="exact", silent=True)
    with pytest.warns(ShapInstancesWarning, match="could not be fitted"):
        explanation = explainer()
    assert explainer.n_failed_fits_ == 6 + 15  # every subset of 1 or 2 rows
    full_fit = model.fit(X, y).predict(X) - y
    np.testing.assert_allclose(explanation.base_values + explanation.values.sum(1), full_fit, atol=1e-10)


def test_checkpoint_resume_through_the_explainer(tmp_path, monkeypatch):
    X, y = diabetes(30)
    settings_ = dict(n_permutations=32, random_state=4, silent=True)
    reference = InstanceKernelExplainer(Ridge(), X, y=y, **settings_)().values
    path = tmp_path / "run.pkl"
    original = RidgePath.accumulate  # the fused kernel: one call per batch of 16 permutations
    calls = {"n": 0}

    def interrupted(self, *args):
        calls["n"] += 1
        if calls["n"] == 2:  # the second batch
            raise KeyboardInterrupt
        return original(self, *args)

    monkeypatch.setattr(RidgePath, "accumulate", interrupted)
    with pytest.raises(KeyboardInterrupt):
        InstanceKernelExplainer(Ridge(), X, y=y, checkpoint=path, **settings_)()
    monkeypatch.setattr(RidgePath, "accumulate", original)
    assert path.exists()
    resumed = InstanceKernelExplainer(Ridge(), X, y=y, checkpoint=path, **settings_)().values
    np.testing.assert_array_equal(resumed, reference)


def test_metrics():
    X, y = diabetes(20)
    explanation = InstanceKernelExplainer(Ridge(alpha=0.5), X, y=y, n_permutations=20, random_state=0, silent=True)()
    summary = cc_summary(explanation)
    np.testing.assert_allclose(summary["composition_mean"] * 20, summary["residual"], atol=1e-10)
    normalised = normalised_contributions(explanation)
    np.testing.assert_allclose(normalised.sum(1), -np.abs(summary["residual"]), atol=1e-10)  # eq. 5 on a row
    np.testing.assert_allclose(instance_values(explanation), explanation.values.mean(0) ** 2)


def test_bad_input():
    X, y = diabetes(10)
    with pytest.raises(UnsupportedModelError, match="is neither"):
        InstanceKernelExplainer(LinearSVC(), X, y=y > 100)  # a classifier without predict_proba
    with pytest.raises(DataValidationError, match="needs y, the training targets"):
        InstanceKernelExplainer(Ridge(), X)
    with pytest.raises(DataValidationError, match="y is required with X"):
        InstanceKernelExplainer(Ridge(), X, y=y)(X)
    with pytest.raises(ValueError, match="approximator must be one of"):
        InstanceKernelExplainer(Ridge(), X, y=y, approximator="magic")
    with pytest.raises(DataValidationError, match="NaN"):
        InstanceKernelExplainer(Ridge(), np.where(X > 0, np.nan, X), y=y)
    with pytest.raises(DataValidationError, match="1-D"):
        InstanceKernelExplainer(Ridge(), X, y=np.column_stack([y, y]))
    for bad in ("mean", np.nan):
        with pytest.raises(ValueError, match="empty_prediction must be None or a finite number"):
            InstanceKernelExplainer(Ridge(), X, y=y, empty_prediction=bad)
    for name in ("n_permutations", "max_evals", "n_rounds"):
        with pytest.raises(ValueError, match=rf"{name} must be (None or )?an int in \[1, inf\]"):
            InstanceKernelExplainer(Ridge(), X, y=y, **{name: 0})


def test_evaluation_columns_are_matched_by_name():
    X, y = load_diabetes()
    explainer = InstanceKernelExplainer(Ridge(), X[:15], y=y[:15], random_state=0, n_permutations=4, silent=True)
    reference = explainer(X[20:23], y[20:23]).values
    np.testing.assert_array_equal(explainer(X[20:23][X.columns[::-1]], y[20:23]).values, reference)
    with pytest.raises(DataValidationError, match="other columns"):
        explainer(X[20:23].rename(columns={"bmi": "BMI"}), y[20:23])


@pytest.mark.slow
def test_data_shapley_equals_brute_force_mse_game():
    from shap_instances.approximators import ExactApproximator
    from shap_instances.games import LossGame
    from shap_instances.metrics import data_shapley

    X, y = diabetes(6)
    X_test, y_test = diabetes(20, start=300)
    game = LossGame(ResidualGame(Ridge(alpha=0.5), X, y, X_test, y_test, empty_prediction=y.mean()))
    exact = ExactApproximator().estimate(game).values[:, 0]
    values = np.zeros(6)
    for order in itertools.permutations(range(6)):
        previous = np.mean((y.mean() - y_test) ** 2)
        for t, player in enumerate(order):
            members = list(order[: t + 1])
            current = np.mean((Ridge(alpha=0.5).fit(X[members], y[members]).predict(X_test) - y_test) ** 2)
            values[player] += current - previous
            previous = current
    np.testing.assert_allclose(exact, values / math.factorial(6), atol=1e-8)
    sampled = data_shapley(Ridge(alpha=0.5), X, y, X_test, y_test, n_permutations=400, random_state=0)
    np.testing.assert_allclose(sampled.sum(), -exact.sum(), atol=1e-8)  # efficiency, sign flipped


def test_removal_curve_and_outliers():
    from shap_instances.metrics import behaviour_outliers, removal_curve

    X, y = diabetes(60)
    X_test, y_test = diabetes(40, start=300)
    scores = np.arange(60.0)
    curve = removal_curve(Ridge(), X, y, X_test, y_test, scores, fractions=(0.0, 0.25))
    full = np.mean((Ridge().fit(X, y).predict(X_test) - y_test) ** 2)
    kept = np.mean((Ridge().fit(X[:45], y[:45]).predict(X_test) - y_test) ** 2)  # the 15 highest scores removed
    np.testing.assert_allclose(curve.to_numpy(), [full, kept])
    explanation = InstanceKernelExplainer(Ridge(), X, y=y, n_permutations=10, random_state=0, silent=True)()
    flags = behaviour_outliers(explanation, X)
    assert flags.shape == (60, 2) and flags.dtypes.eq(bool).all()


@pytest.mark.parametrize("empty_prediction", [None, 150.0])
def test_empty_prediction_sets_the_base_values(empty_prediction):
    X, y = diabetes(8)
    X_eval, y_eval = diabetes(4, start=100)
    explanation = InstanceKernelExplainer(Ridge(alpha=0.5), X, y=y, approximator="exact",
                                          empty_prediction=empty_prediction,
                                          silent=True)(X_eval, y_eval)
    c = 0.0 if empty_prediction is None else empty_prediction
    expected_base = np.zeros(4) if empty_prediction is None else c - y_eval
    np.testing.assert_allclose(explanation.base_values, expected_base, atol=1e-12)
    residual = Ridge(alpha=0.5).fit(X, y).predict(X_eval) - y_eval
    np.testing.assert_allclose(explanation.base_values + explanation.values.sum(1), residual, atol=1e-10)
    if empty_prediction is not None:
        reference = brute_force(Ridge(alpha=0.5), X, y, X_eval, y_eval, empty=c - y_eval)
        np.testing.assert_allclose(explanation.values, reference, atol=1e-10)


def _knn_data(n, n_eval=4, seed=0):
    rng = np.random.default_rng(seed)  # continuous features: no ties in distance
    return rng.normal(size=(n, 3)), rng.normal(size=n) * 10, rng.normal(size=(n_eval, 3)), rng.normal(size=n_eval)


def knn_refit(k, X, y, X_eval, y_eval, members, empty):
    """The refit game by hand: scikit-learn's KNN on the rows in members, v(empty) below k rows."""
    if len(members) < k:
        return empty
    return KNeighborsRegressor(n_neighbors=k).fit(X[members], y[members]).predict(X_eval) - y_eval


@pytest.mark.usefixtures("one_thread")  # scikit-learn KNN refits
@pytest.mark.parametrize("k", [1, pytest.param(3, marks=pytest.mark.slow)])  # k=3: 15 s of refits
def test_knn_fast_path_equals_refits_on_prefixes_and_coalitions(k):
    X, y, X_eval, y_eval = _knn_data(12)
    empty = 5.0 - y_eval
    path = KNNPath(KNeighborsRegressor(n_neighbors=k), X, y, X_eval, y_eval, empty=empty)
    rng = np.random.default_rng(1)
    for permutation in (rng.permutation(12), rng.permutation(12)):
        fast = path.prefix_residuals(permutation)
        for t in range(1, 13):
            expected = knn_refit(k, X, y, X_eval, y_eval, permutation[:t], empty)
            np.testing.assert_allclose(fast[t - 1], expected, atol=1e-12)
    for code in range(1, 2**12, 7):  # a spread of coalitions
        mask = (code >> np.arange(12)) & 1 == 1
        expected = knn_refit(k, X, y, X_eval, y_eval, np.flatnonzero(mask), empty)
        np.testing.assert_allclose(path.residuals(mask), expected, atol=1e-12)


@pytest.mark.usefixtures("one_thread")  # scikit-learn KNN refits
@pytest.mark.parametrize("k,empty_prediction", [(1, None), pytest.param(3, None, marks=pytest.mark.slow),
                                                 pytest.param(3, 2.5, marks=pytest.mark.slow), (9, None)])
def test_knn_closed_form_equals_exact_enumeration_of_refits(k, empty_prediction):
    from shap_instances.approximators import ExactApproximator

    X, y, X_eval, y_eval = _knn_data(9)
    explainer = InstanceKernelExplainer(KNeighborsRegressor(n_neighbors=k), X, y=y, empty_prediction=empty_prediction,
                                        silent=True)
    explanation = explainer(X_eval, y_eval)
    assert explainer.result_.approximator == "closed form (KNN)"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        game = ResidualGame(KNeighborsRegressor(n_neighbors=k), X, y, X_eval, y_eval, empty_prediction=empty_prediction,
                            use_fast_path=False)
        reference = ExactApproximator().estimate(game).values.T
    np.testing.assert_allclose(explanation.values, reference, atol=1e-10)


@pytest.mark.usefixtures("one_thread")  # scikit-learn KNN refits
def test_knn_closed_form_equals_the_permutation_definition_with_sklearn_refits():
    X, y, X_eval, y_eval = _knn_data(6, n_eval=3, seed=3)
    values = InstanceKernelExplainer(KNeighborsRegressor(n_neighbors=2), X, y=y, silent=True)(X_eval, y_eval).values
    reference = np.zeros_like(values)
    refits = {}  # one scikit-learn refit per subset: 64 subsets instead of 720 x 6 prefixes
    for order in itertools.permutations(range(6)):
        previous = np.zeros(3)
        for t, player in enumerate(order):
            members = tuple(sorted(order[: t + 1]))
            if members not in refits:
                refits[members] = knn_refit(2, X, y, X_eval, y_eval, list(members), np.zeros(3))
            current = refits[members]
            reference[:, player] += current - previous
            previous = current
    np.testing.assert_allclose(values, reference / math.factorial(6), atol=1e-10)


@pytest.mark.parametrize("k", [1, 2, 4])
def test_jia_recursion_with_labels_equals_enumeration_of_its_utility(k):
    """Jia et al.'s U(S) = (1/K) * sum of the min(K, |S|) nearest labels, enumerated by hand."""
    X, y, X_eval, _ = _knn_data(7, n_eval=3, seed=2)
    distances = np.linalg.norm(X_eval[:, None, :] - X[None, :, :], axis=2)
    order = np.argsort(distances, axis=1)
    reference = np.zeros((3, 7))
    for j in range(3):
        def utility(members, j=j):
            nearest = sorted(members, key=lambda i: distances[j, i])[:k]
            return sum(y[i] for i in nearest) / k
        for i in range(7):
            others = [p for p in range(7) if p != i]
            for size in range(7):
                for subset in itertools.combinations(others, size):
                    weight = math.factorial(size) * math.factorial(6 - size) / math.factorial(7)
                    reference[j, i] += weight * (utility(list(subset) + [i]) - utility(list(subset)))
    np.testing.assert_allclose(jia_knn_shapley(order, y, k), reference, atol=1e-12)


def test_binary_classifier_residuals_equal_brute_force_with_single_class_subsets():
    """P_S(positive) - indicator, single-class subsets following the failure policy, vs enumeration."""
    from sklearn.datasets import load_breast_cancer
    from sklearn.tree import DecisionTreeClassifier

    X, labels = load_breast_cancer(return_X_y=True)
    rows = np.r_[np.flatnonzero(labels == 0)[:4], np.flatnonzero(labels == 1)[:3]]
    X, labels = X[rows, :3], np.array(["malignant", "benign"])[labels[rows]]  # scikit-learn: 0 is malignant
    X = (X - X.mean(0)) / X.std(0)
    assert len(set(labels)) == 2
    indicator = (labels == "malignant").astype(float)

    def refit_residual(model, members):
        fitted = model.__class__(**model.get_params()).fit(X[list(members)], labels[list(members)])
        classes = list(fitted.classes_)
        p = fitted.predict_proba(X)[:, classes.index("malignant")] if "malignant" in classes else np.zeros(7)
        return p - indicator

    class RefittedLogistic(LogisticRegression):  # not type LogisticRegression: the refit path, which counts failures
        pass

    tight = {"tol": 1e-12, "solver": "newton-cholesky"}  # both paths to the exact optimum
    # LogisticRegression's fast path values one-class subsets v(empty) too, by convention: no failed fit counted
    for model, fails in ((LogisticRegression(**tight), False), (RefittedLogistic(**tight), True),
                         (DecisionTreeClassifier(random_state=0), False)):
        def v(members, model=model):
            if not members:
                return np.zeros(7)
            try:
                return refit_residual(model, members)
            except ValueError:  # LogisticRegression refuses a single class
                return np.zeros(7)

        values = {members: v(members) for size in range(8) for members in itertools.combinations(range(7), size)}
        expected = np.zeros((7, 7))
        for order in itertools.permutations(range(7)):
            members = ()
            for player in order:
                grown = tuple(sorted(members + (player,)))
                expected[:, player] += values[grown] - values[members]
                members = grown
        expected /= math.factorial(7)
        explainer = InstanceKernelExplainer(model, X, y=labels, approximator="exact", silent=True)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            explanation = explainer()
        assert (explainer.n_failed_fits_ > 0) == fails
        assert any("could not be fitted" in str(w.message) for w in caught) == fails
        # the fast path (LogisticRegression itself) solves to its tolerance: values within a quarter of it
        atol = LogisticPath.tol if type(model) is LogisticRegression else 1e-9
        np.testing.assert_allclose(explanation.values, expected, atol=atol)
        np.testing.assert_allclose(explanation.base_values + explanation.values.sum(1),
                                   refit_residual(model, range(7)), atol=atol / 10)
    with pytest.raises(DataValidationError, match="two classes"):
        InstanceKernelExplainer(LogisticRegression(), X, y=np.arange(7) % 3)
    with pytest.raises(DataValidationError, match="not among the classes"):
        InstanceKernelExplainer(LogisticRegression(), X, y=labels)(X[:2], ["benign", "other"])


def test_data_compares_training_targets_with_the_models_own_predictions():
    """data (what plots colour by) against the model refitted on all rows by scikit-learn (docs/pictures.md)."""
    X, y = diabetes(10)
    X_eval, y_eval = diabetes(6, start=50)
    explainer = InstanceKernelExplainer(Ridge(1.0), X, y=y, silent=True)
    predicted = Ridge(1.0).fit(X, y).predict(X_eval)
    e = explainer(X_eval, y_eval)
    np.testing.assert_allclose(e.data, y[None] - predicted[:, None], rtol=0, atol=1e-3)
    assert e.data.dtype == np.float32 and e.display_data[3, 2] == f"{y[2]:.4g}"
    means = explainer.aggregate(X_eval, y_eval, weights=["sign", "mean"])  # a weighting: the mean prediction
    np.testing.assert_allclose(means.data, np.tile(y - predicted.mean(), (2, 1)), rtol=0, atol=1e-3)
    labels = np.where(y > np.median(y), "high", "low")  # a classifier: 1 where y_i is the predicted label
    model = LogisticRegression(solver="newton-cholesky")
    # coalitions holding one class are valued v(empty) by the logistic fast path (no failed fits counted)
    e = InstanceKernelExplainer(model, X[:6], y=labels[:6], silent=True)(X_eval, np.where(y_eval > 150, "high", "low"))
    predicted = LogisticRegression(solver="newton-cholesky").fit(X[:6], labels[:6]).predict(X_eval)
    assert len(set(predicted)) == 2  # both labels predicted: the check below is not of a constant
    np.testing.assert_array_equal(e.data, labels[None, :6] == predicted[:, None])
    assert list(e.display_data[0]) == list(labels[:6])
