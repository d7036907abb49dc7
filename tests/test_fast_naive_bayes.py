"""The naive Bayes refit path (all five scikit-learn types) against explicit scikit-learn refits of the same
subsets, the generic refit path and exact enumeration."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.naive_bayes import BernoulliNB, CategoricalNB, ComplementNB, GaussianNB, MultinomialNB

from shap_instances.approximators import ExactApproximator
from shap_instances.games import ResidualGame
from shap_instances.naive_bayes import NaiveBayesPath

from .refit_reference import check_prefixes


def _rows(kind, n, p, seed):
    rng = np.random.default_rng(seed)
    if kind == "gaussian":
        return rng.normal(size=(n, p)) * np.array([1.0, 10.0, 0.1, 3.0, 1.0])[:p] + 5.0
    if kind == "counts":
        return rng.poisson(2.0, size=(n, p)).astype(float)
    if kind == "binary":
        return rng.integers(0, 2, size=(n, p)).astype(float)
    return rng.integers(0, 3, size=(n, p)).astype(float)  # categories


def _targets(n, seed):
    return (np.random.default_rng(seed + 100).random(n) < 0.5).astype(float)


MODELS = [
    (GaussianNB(), "gaussian"), (GaussianNB(var_smoothing=0.5), "gaussian"),
    (GaussianNB(priors=[0.3, 0.7]), "gaussian"),
    (MultinomialNB(), "counts"), (MultinomialNB(alpha=0.3, fit_prior=False), "counts"),
    (MultinomialNB(class_prior=[0.2, 0.8]), "counts"), (MultinomialNB(alpha=0.0, force_alpha=False), "counts"),
    (BernoulliNB(), "gaussian"), (BernoulliNB(alpha=0.5, binarize=5.2), "gaussian"),
    (BernoulliNB(binarize=None), "binary"),
    (ComplementNB(), "counts"), (ComplementNB(norm=True, fit_prior=False), "counts"),
    (ComplementNB(alpha=np.array([0.1, 0.2, 0.3, 0.4])), "counts"),
    (CategoricalNB(), "categories"), (CategoricalNB(alpha=0.2, min_categories=4), "categories"),
]


def _check_prefixes(model, X, y, X_eval, y_eval, seeds=(0, 1, 2)):
    """Every prefix of a few permutations, and the same subsets as single coalitions, against refits."""
    path = NaiveBayesPath(model, X, y, X_eval, y_eval, np.full(len(y_eval), -0.25))
    assert path.usable
    return check_prefixes(path, model, X, y, X_eval, y_eval, seeds)


@pytest.mark.parametrize("model, rows", MODELS, ids=lambda v: repr(v) if not isinstance(v, str) else v)
def test_prefix_values_equal_scikit_learn_refits(model, rows):
    X, y = _rows(rows, 20, 4, 0), _targets(20, 0)
    X_eval = np.vstack([X[:5], _rows(rows, 3, 4, 9)])
    kinds = _check_prefixes(model, X, y, X_eval, np.r_[y[:5], 1.0, 0.0, 1.0], seeds=(0, 1))
    assert "fitted" in kinds


@pytest.mark.parametrize("model, rows", [(GaussianNB(priors=[0.4, 0.6]), "gaussian"), (GaussianNB(), "gaussian"),
                                         (CategoricalNB(), "categories"), (MultinomialNB(class_prior=[.5, .5]),
                                                                          "counts")])
def test_prefixes_scikit_learn_cannot_fit_get_the_failed_fit_value(model, rows):
    """User priors on one class, a zero variance (one row), a category the prefix has not seen: v(empty)."""
    X, y = _rows(rows, 12, 3, 4), np.r_[np.ones(4), np.zeros(8)]
    X_eval = np.vstack([X, np.full((1, 3), 2.0)])
    assert _check_prefixes(model, X, y, X_eval, np.r_[y, 1.0], seeds=range(6)) == {"empty", "fitted"}


def test_exact_shapley_values_equal_the_generic_refit_path():
    for model, rows in MODELS[::4]:
        X, y = _rows(rows, 7, 4, 2), _targets(7, 2)
        fast = ResidualGame(model, X, y, empty_prediction=0.5)
        slow = ResidualGame(model, X, y, empty_prediction=0.5, use_fast_path=False)
        assert isinstance(fast.fast_path, NaiveBayesPath) and slow.fast_path is None
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            expected = ExactApproximator().estimate(slow).values
        np.testing.assert_allclose(ExactApproximator().estimate(fast).values, expected, atol=1e-10)


def test_aggregate_is_the_weighted_sum_of_residuals():
    X, y = _rows("counts", 15, 4, 3), _targets(15, 3)
    game = ResidualGame(MultinomialNB(), X, y)
    weights = np.random.default_rng(0).random((15, 2))
    permutations = np.array([np.random.default_rng(s).permutation(15) for s in range(3)])
    np.testing.assert_allclose(game.aggregate(weights).prefix_values(permutations),
                               game.prefix_values(permutations) @ weights, atol=1e-12)


@pytest.mark.parametrize("model, X", [
    (MultinomialNB(), sp.csr_matrix(np.eye(6))),  # sparse rows
    (MultinomialNB(alpha=0.0), np.eye(6)),  # alpha 0 (force_alpha): log 0
    (CategoricalNB(), np.eye(6) * 1.5),  # categories that are not integers
])
def test_what_the_kernels_do_not_cover_is_refitted(model, X):
    y = np.r_[np.zeros(3), np.ones(3)]
    assert not NaiveBayesPath(model, X, y, X, y, np.zeros(6)).usable  # the game then refits clones


def test_a_model_that_cannot_fit_all_rows_is_refused():
    from shap_instances.exceptions import UnsupportedModelError

    X, y = _rows("gaussian", 10, 2, 0), _targets(10, 0)
    with pytest.raises(UnsupportedModelError, match="could not be fitted"):
        ResidualGame(GaussianNB(priors=[0.5, 0.6]), X, y)  # priors that do not sum to 1


@pytest.mark.slow  # random data: the fixed cases above run by default
@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10_000), kind=st.sampled_from(range(5)), n=st.integers(2, 12))
def test_random_data_prefixes_equal_refits(seed, kind, n):
    model, rows = [(GaussianNB(), "gaussian"), (MultinomialNB(alpha=0.7), "counts"), (BernoulliNB(binarize=5.0),
                   "gaussian"), (ComplementNB(), "counts"), (CategoricalNB(), "categories")][kind]
    X, y = _rows(rows, n, 3, seed), _targets(n, seed)
    _check_prefixes(model, X, y, np.vstack([X[:2], _rows(rows, 2, 3, seed + 1)]), np.r_[y[:2], 0.0, 1.0],
                    seeds=(seed,))


class _RefittedGaussianNB(GaussianNB):
    """Not ``type(model) is GaussianNB``: the game refits clones (the reference path)."""


def test_data_shapley_takes_the_path_and_matches_refits():
    from shap_instances.metrics import data_shapley

    X, y = _rows("gaussian", 14, 3, 7), _targets(14, 7)
    X_test, y_test = _rows("gaussian", 6, 3, 8), _targets(6, 8)
    fast = data_shapley(GaussianNB(), X, y, X_test, y_test, n_permutations=4, random_state=0)
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        slow = data_shapley(_RefittedGaussianNB(), X, y, X_test, y_test, n_permutations=4, random_state=0)
    np.testing.assert_allclose(fast.to_numpy(), slow.to_numpy(), atol=1e-10)
    assert np.abs(fast.to_numpy()).max() > 0
