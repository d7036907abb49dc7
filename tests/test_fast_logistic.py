"""The l2 LogisticRegression refit path against scikit-learn refits, the generic refit path and enumeration."""

import warnings

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression

from shap_instances.approximators import ExactApproximator, PermutationApproximator
from shap_instances.games import ResidualGame
from shap_instances.linear import LogisticPath
from shap_instances.metrics import data_shapley

#: The path's promise: probabilities within a quarter of its tolerance of the exact refit's (a bound with room 4).
TOL = LogisticPath.tol


class _Refitted(LogisticRegression):
    """Not ``type(model) is LogisticRegression``: the game refits clones (the reference path)."""


def _data(n=30, p=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p)) * np.array([1.0, 10.0, 0.1, 3.0])[:p]
    y = (X @ np.array([1.0, 0.1, 5.0, -0.3])[:p] + rng.normal(size=n) > 0).astype(float)
    return X, y


def _reference(C, fit_intercept=True):  # scikit-learn to its own solver tolerance, far below ours
    return _Refitted(C=C, fit_intercept=fit_intercept, tol=1e-12, max_iter=1000, solver="newton-cholesky")


@pytest.mark.parametrize("C, fit_intercept", [(1.0, True), (0.05, True), (20.0, True), (1.0, False)])
def test_prefix_values_equal_scikit_learn_refits(C, fit_intercept):
    X, y = _data()
    X_eval, y_eval = X[:7] + 0.3, y[:7]
    model = LogisticRegression(C=C, fit_intercept=fit_intercept)
    path = ResidualGame(model, X, y, X_eval, y_eval).fast_path
    assert isinstance(path, LogisticPath)
    permutation = np.random.default_rng(1).permutation(len(y))
    fast = path.prefix_residuals(permutation)
    one_class = 0
    for t in range(1, len(y) + 1):
        rows = permutation[:t]
        if len(np.unique(y[rows])) < 2:  # scikit-learn refuses one class: v(empty), the failure policy
            one_class += 1
            np.testing.assert_array_equal(fast[t - 1], 0.0)
            continue
        refit = _reference(C, fit_intercept).fit(X[rows], y[rows]).predict_proba(X_eval)[:, 1] - y_eval
        np.testing.assert_allclose(fast[t - 1], refit, atol=TOL, err_msg=f"prefix {t}")
        mask = np.zeros(len(y), bool)
        mask[rows] = True
        np.testing.assert_allclose(path.residuals(mask), refit, atol=TOL)
    assert one_class >= 1  # the policy was exercised


def test_fast_and_generic_paths_agree_on_estimates_and_exact_values():
    X, y = _data(n=9, p=3, seed=2)
    fast = ResidualGame(LogisticRegression(C=0.5), X, y, empty_prediction=0.5)
    slow = ResidualGame(_reference(0.5), X, y, empty_prediction=0.5)
    assert fast.fast_path is not None and slow.fast_path is None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the refit path warns about its one-class subsets
        exact_slow = ExactApproximator().estimate(slow).values
    np.testing.assert_allclose(ExactApproximator().estimate(fast).values, exact_slow, atol=TOL)
    _assert_sampled_values_agree(fast, slow)


def _assert_sampled_values_agree(fast, slow, n_permutations=6):
    """Permutation estimates of the fast game (the fused kernel), and of an aggregate of it (prefix values in
    parallel, then the accumulator), equal those of the refit path with the same permutations."""
    def sampled(game):
        return PermutationApproximator(n_permutations=n_permutations, random_state=3, silent=True).estimate(game).values

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the refit path warns about its one-class subsets
        sampled_slow = sampled(slow)
    np.testing.assert_allclose(sampled(fast), sampled_slow, atol=TOL)
    weights = np.random.default_rng(0).normal(size=(fast.n_players, 2))
    np.testing.assert_allclose(sampled(fast.aggregate(weights)), sampled_slow @ weights, atol=TOL)


def test_data_shapley_takes_the_path_and_matches_refits():
    X, y = _data(n=20, p=3, seed=4)
    fast = data_shapley(LogisticRegression(C=2.0), X, y, X[:8], y[:8], n_permutations=4, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        slow = data_shapley(_reference(2.0), X, y, X[:8], y[:8], n_permutations=4, random_state=0)
    np.testing.assert_allclose(fast.to_numpy(), slow.to_numpy(), atol=TOL)


@pytest.mark.parametrize("model", [LogisticRegression(solver="liblinear"), LogisticRegression(class_weight="balanced"),
                                   LogisticRegression(penalty="elasticnet", l1_ratio=1.0, solver="saga"),
                                   LogisticRegression(C=np.inf),
                                   _Refitted()])
def test_models_the_path_does_not_serve(model):
    assert not LogisticPath.supports(model)


def _classes(n=36, seed=0, labels=(0.0, 1.0, 2.0)):
    """Rows of len(labels) classes told apart by the first feature, the targets as the given labels."""
    rng = np.random.default_rng(seed)
    index = rng.integers(0, len(labels), n)
    X = rng.normal(size=(n, 3)) * np.array([1.0, 10.0, 0.1]) + np.outer(index, [1.0, 0.0, -0.1])
    return X, np.asarray(labels)[index]


def _refit_label_1(model, X, y, X_eval):  # the refit path's value: P(label 1), 0 when the fit has no label 1
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # newton-cg's line search at tol=1e-12 meets rounding: converged
        fitted = model.fit(X, y)
    classes = list(fitted.classes_)
    return fitted.predict_proba(X_eval)[:, classes.index(1.0)] if 1.0 in classes else np.zeros(len(X_eval))


@pytest.mark.parametrize("labels, C, fit_intercept", [((0.0, 1.0, 2.0), 1.0, True), ((2.0, 1.0, 7.0, 5.0), 5.0, True),
                                                     ((0.0, 1.0, 2.0), 0.3, False), ((0.0, 3.0, 2.0), 1.0, True)])
def test_multinomial_prefix_values_equal_scikit_learn_refits(labels, C, fit_intercept):
    X, y = _classes(labels=labels)
    X_eval, y_eval = X[:6] + 0.2, y[:6]
    path = ResidualGame(LogisticRegression(C=C, fit_intercept=fit_intercept), X, y, X_eval, y_eval).fast_path
    assert isinstance(path, LogisticPath) and path.n_classes == len(labels)
    later = ~np.isin(y, (labels[0], 1.0))  # the other labels mostly come later: a long two-class stretch first
    permutation = np.argsort(np.random.default_rng(1).random(len(y)) + 0.5 * later)
    fast = path.prefix_residuals(permutation)
    seen = set()
    for t in range(1, len(y) + 1):
        rows = permutation[:t]
        present = tuple(np.unique(y[rows]))
        seen.add((len(present), 1.0 in present))
        if len(present) < 2:  # scikit-learn refuses one class: v(empty)
            np.testing.assert_array_equal(fast[t - 1], 0.0)
            continue
        reference = _Refitted(C=C, fit_intercept=fit_intercept, tol=1e-12, max_iter=1000, solver="newton-cg")
        refit = _refit_label_1(reference, X[rows], y[rows], X_eval) - y_eval
        np.testing.assert_allclose(fast[t - 1], refit, atol=TOL, err_msg=f"prefix {t}, classes {present}")
        mask = np.zeros(len(y), bool)
        mask[rows] = True
        np.testing.assert_allclose(path.residuals(mask), refit, atol=TOL)
    assert seen >= {(2, 1.0 in labels), (len(labels), 1.0 in labels)}  # binary and multinomial prefixes


def test_multinomial_fast_and_generic_paths_agree():
    X, y = _classes(n=14, seed=3)
    fast = ResidualGame(LogisticRegression(C=0.5), X, y, empty_prediction=0.5)
    slow = ResidualGame(_Refitted(C=0.5, tol=1e-12, solver="newton-cg"), X, y, empty_prediction=0.5)
    assert fast.fast_path is not None and slow.fast_path is None
    _assert_sampled_values_agree(fast, slow, n_permutations=4)


def test_multiclass_data_shapley_adds_up_to_the_brier_gain_of_the_second_class():
    """data_shapley of a three-class model (scikit-learn refits; the validation rows lack a class) adds up to the
    Brier-score gain of the full model's probability of the second class over the prior's."""
    X, y = _classes(n=14, seed=3)
    model = _Refitted(tol=1e-12, solver="newton-cg")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the refit path warns about its one-class subsets
        values = data_shapley(model, X, y, X[:5], y[:5], n_permutations=3, random_state=0)
    label = np.unique(y)[1]
    indicator = (y[:5] == label).astype(float)
    full = model.fit(X, y).predict_proba(X[:5])[:, list(model.classes_).index(label)]
    prior = np.mean(y == label)
    gain = np.mean((prior - indicator) ** 2) - np.mean((full - indicator) ** 2)
    assert set(np.unique(y[:5])) != set(np.unique(y)) and values.sum() == pytest.approx(gain, abs=1e-12)


def test_one_vs_rest_and_odd_targets_fall_back_to_refits():
    X, y = _classes(n=12)
    ovr = LogisticRegression()
    ovr.multi_class = "ovr"  # (deprecated in scikit-learn 1.5, gone later: set as an attribute to test the guard)
    assert ResidualGame(ovr, X, y).fast_path is None
    assert ResidualGame(LogisticRegression(), X, y).fast_path is not None
    odd = np.where(y == 0, np.nan, y)
    assert not LogisticPath(LogisticRegression(), X, odd, X, odd, np.zeros(len(y))).usable


@pytest.mark.parametrize("case", ["separable", "collinear"])
def test_hard_prefixes_equal_scikit_learn_refits(case):
    """Every prefix of three permutations, on a separable table with a weak penalty (C = 1,000: large,
    nearly flat optima) and on nearly collinear columns (a Hessian with condition number ~1e8)."""
    rng = np.random.default_rng(5)
    X = rng.normal(size=(24, 3))
    if case == "separable":
        y, C = (X[:, 0] + 0.5 * X[:, 1] > 0).astype(float), 1000.0
    else:
        X[:, 2] = X[:, 1] + 1e-4 * rng.normal(size=24)
        y, C = (X[:, 0] + rng.normal(size=24) > 0).astype(float), 50.0
    path = ResidualGame(LogisticRegression(C=C), X, y).fast_path
    for seed in range(3):
        permutation = np.random.default_rng(seed).permutation(len(y))
        fast = path.prefix_residuals(permutation)
        for t in range(2, len(y) + 1):
            rows = permutation[:t]
            if len(np.unique(y[rows])) == 2:
                refit = _reference(C).fit(X[rows], y[rows]).predict_proba(X)[:, 1] - y
                np.testing.assert_allclose(fast[t - 1], refit, atol=1e-7, err_msg=f"prefix {t}")


def test_fused_kernel_gives_the_same_estimates_on_one_thread_and_two():
    """The fused kernel walks units in parallel; its Welford updates follow in unit order, so the estimates and
    their standard errors do not depend on the number of threads (bit for bit)."""
    numba = pytest.importorskip("numba")
    X, y = _data(n=16, p=3, seed=6)
    game = ResidualGame(LogisticRegression(C=0.5), X, y)
    threads = numba.get_num_threads()
    results = []
    for count in (1, min(2, numba.config.NUMBA_NUM_THREADS)):
        numba.set_num_threads(count)
        try:
            results.append(PermutationApproximator(n_permutations=8, random_state=1, silent=True).estimate(game))
        finally:
            numba.set_num_threads(threads)
    np.testing.assert_array_equal(results[0].values, results[1].values)
    np.testing.assert_array_equal(results[0].standard_errors, results[1].standard_errors)


def test_vectorised_sigmoids_equal_scipy_expit():
    """The kernels' own exp (range reduction, Taylor polynomial, exponent bits) against scipy's expit, over the
    whole range of logits, the clipped tails beyond +-708 and exact zeros included."""
    from scipy.special import expit

    from shap_instances.linear._logistic_kernels import _sigmoids

    rng = np.random.default_rng(0)
    m = np.r_[rng.normal(size=20_000) * 30, np.linspace(-750, 750, 3001), 0.0, -0.0, 1e-300, 36.7, -745.0]
    out = m.copy()
    _sigmoids(out)
    np.testing.assert_allclose(out, expit(m), rtol=1e-14, atol=3e-16)


def test_the_explainer_checks_efficiency_to_the_paths_tolerance():
    """The values add up to the walk's v(all rows) (a warm-started fit), the explained residuals are a fit from
    zero: both within the path's tolerance of the exact refit, so they may differ by more than 1e-9 (2.8e-9 here;
    the command line stopped on it on AER's HMDA), and the explainer's efficiency check allows the tolerance."""
    from sklearn.datasets import load_breast_cancer
    from sklearn.preprocessing import StandardScaler

    from shap_instances import InstanceKernelExplainer
    from shap_instances._explanation import efficiency_gap

    X, y = load_breast_cancer(return_X_y=True)
    X = StandardScaler().fit_transform(X)[:300, :8]
    explainer = InstanceKernelExplainer(LogisticRegression(), X, y=y[:300], n_permutations=8, random_state=0,
                                        silent=True)
    gap = efficiency_gap(explainer(), explainer.result_.full_value)
    assert 1e-9 < gap <= TOL


@pytest.mark.parametrize("labels", [(0.0, 1.0), (0.0, 1.0, 2.0)])
@pytest.mark.parametrize("aggregate", [False, True])
def test_walks_started_at_a_place_equal_the_whole_walks_values_there(labels, aggregate):
    """``prefix_values(orders, first=lo)`` (a cold fit on the first ``lo`` rows, then the walk) gives the values
    of the prefixes ``lo..hi`` of the whole walk, within the path's tolerance, and counts only those."""
    X, _ = _data(n=40)
    y = np.random.default_rng(2).choice(np.array(labels), size=40)
    game = ResidualGame(LogisticRegression(C=1.0), X, y, X[:9] + 0.2, y[:9])
    if aggregate:
        game = game.aggregate(np.random.default_rng(3).normal(size=(9, 2)))
    orders = np.argsort(np.random.default_rng(4).random((6, 40)), axis=1)[:, :24]
    whole = game.prefix_values(orders)
    for first in (0, 1, 2, 5, 16, 24):
        before = game.n_evaluations
        started = game.prefix_values(orders, first=first)
        assert started.shape == (6, 25 - first, game.n_outputs)
        assert game.n_evaluations - before == 6 * (25 - first)
        np.testing.assert_allclose(started, whole[:, first:], rtol=0, atol=TOL)
    with pytest.raises(ValueError, match="first must be"):
        game.fast_path.prefix_values_batch(orders, 25)
