"""The registry of refit shortcuts (games/_fast_path.py): families register, games and approximators ask it."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import expit
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis, QuadraticDiscriminantAnalysis
from sklearn.dummy import DummyRegressor
from sklearn.ensemble import RandomForestRegressor
from sklearn.gaussian_process import GaussianProcessRegressor
from sklearn.kernel_ridge import KernelRidge
from sklearn.linear_model import Lasso, LinearRegression, LogisticRegression, Ridge
from sklearn.naive_bayes import GaussianNB
from sklearn.neighbors import KNeighborsRegressor

from shap_instances.approximators import ControlVariateApproximator, control_game, cuts_walks, first_order_game
from shap_instances.games import FastPath, ResidualGame, exact_fast_paths, fast_path_for, named_refits
from shap_instances.games import _fast_path as registry

#: (model, the family package that owns its shortcut, the shortcut's name)
OWNERS = [
    (Ridge(alpha=1.0), "linear", "RidgePath"),
    (LinearRegression(), "linear", "RidgePath"),
    (DummyRegressor(), "linear", "MeanPath"),
    (LogisticRegression(), "linear", "LogisticPath"),
    (KernelRidge(alpha=1.0), "linear", "KernelRidgePath"),
    (GaussianProcessRegressor(optimizer=None), "linear", "KernelRidgePath"),
    (KNeighborsRegressor(n_neighbors=3), "neighbors", "KNNPath"),
    (GaussianNB(), "naive_bayes", "NaiveBayesPath"),
    (LinearDiscriminantAnalysis(solver="lsqr"), "discriminant", "DiscriminantPath"),
    (QuadraticDiscriminantAnalysis(), "discriminant", "QuadraticDiscriminantPath"),
]


@pytest.mark.parametrize(("model", "family", "name"), OWNERS, ids=lambda v: getattr(v, "__name__", str(v)))
def test_each_model_is_refitted_by_its_familys_shortcut(model, family, name):
    path = fast_path_for(model)
    assert path is not None and path.__name__ == name
    assert path.__module__.startswith(f"shap_instances.{family}._"), path.__module__
    assert isinstance(path, type) and issubclass(path, FastPath)  # the protocol's methods, checked at run time


def test_no_shortcut_lives_in_games_and_none_answers_an_unsupported_model():
    modules = {path.__module__ for path in exact_fast_paths()} | {
        path.__module__ for path in named_refits().values() if path is not None}
    assert len(exact_fast_paths()) == 8 and not any(module.startswith("shap_instances.games") for module in modules)
    assert fast_path_for(Lasso()) is None and fast_path_for(RandomForestRegressor()) is None
    assert named_refits()["fixed_structure"].__module__.startswith("shap_instances.forest.")


class _Halves(RegressorMixin, BaseEstimator):
    """A model outside every family: predicts the mean target of its training rows (a plain mean)."""

    def fit(self, X, y):
        self.mean_ = float(np.mean(y))
        return self

    def predict(self, X):
        return np.full(len(X), self.mean_)


class _HalvesPath:
    """A third-party shortcut for ``_Halves``: the mean of the coalition's targets, as refits give it."""

    cuts_walks = True
    calls = 0

    def __init__(self, model, X, y, X_eval, y_eval, empty):
        self.y, self.y_eval, self.empty = np.asarray(y, dtype=float), np.asarray(y_eval, dtype=float), empty

    @classmethod
    def supports(cls, model):
        return type(model) is _Halves

    def fits_all_rows(self):
        return True

    def residuals(self, mask):
        type(self).calls += 1
        return self.y[mask].mean() - self.y_eval

    def prefix_residuals(self, permutation):
        return np.array([self.residuals(np.isin(np.arange(len(self.y)), permutation[: t + 1]))
                         for t in range(len(permutation))])

    def aggregated(self, weights):
        raise NotImplementedError

    def control_path(self):
        return self


def test_a_registered_third_party_shortcut_is_asked_by_the_game_and_the_approximators(monkeypatch):
    monkeypatch.setattr(registry, "_EXACT", list(registry._EXACT))
    assert fast_path_for(_Halves()) is None
    registry.register_fast_path(_HalvesPath)
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(6, 2)), rng.normal(size=6)
    game = ResidualGame(_Halves(), X, y)
    masks = rng.random((20, 6)) < 0.5
    masks[:, 0] = True
    refits = ResidualGame(_Halves(), X, y, use_fast_path=False)(masks)
    assert isinstance(game.fast_path, _HalvesPath)
    np.testing.assert_allclose(game(masks), refits, rtol=0, atol=1e-12)
    assert _HalvesPath.calls > 0
    assert cuts_walks(_Halves())  # stratified.py reads the registered path's cuts_walks, not a list of classes
    control = control_game(game)  # control_variate asks the path's control_path(), not its class name
    assert control is not None and control.fast_path is game.fast_path and control is not game
    assert ControlVariateApproximator.supports(game)


def _numpy_newton(Z, y, penalty):
    """The logistic fit on all rows by Newton's method from 0 in plain NumPy (the control variate's own fit before
    issue 41), and its Hessian: an independent reference for the one fit the package keeps."""
    w = np.zeros(Z.shape[1])
    for _ in range(100):
        p = expit(Z @ w)
        hessian = (Z * (p * (1 - p))[:, None]).T @ Z + np.diag(penalty)
        step = np.linalg.solve(hessian, Z.T @ (p - y) + penalty * w)
        w -= step
        if np.max(np.abs(step)) < 1e-12 * (1 + np.max(np.abs(w))):
            break
    p = expit(Z @ w)
    return w, (Z * (p * (1 - p))[:, None]).T @ Z + np.diag(penalty)


@pytest.mark.parametrize("C", [0.1, 1.0, 20.0])
@pytest.mark.parametrize("aggregate", [False, True])
def test_the_first_order_game_of_a_logistic_game_uses_the_one_logistic_fit(C, aggregate):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(40, 3))
    y = (X @ [1.0, -0.5, 0.3] + rng.normal(size=40) > 0).astype(float)
    game = ResidualGame(LogisticRegression(C=C), X, y)
    if aggregate:
        game = game.aggregate(rng.random((40, 2)))
    Z, ZE = np.column_stack([np.ones(40), X]), np.column_stack([np.ones(40), X])
    penalty = np.r_[0.0, np.full(3, 1.0 / C)]
    w, hessian = _numpy_newton(Z, y, penalty)
    p, pe = expit(Z @ w), expit(ZE @ w)
    slopes = (ZE * (pe * (1 - pe))[:, None]).T
    if aggregate:
        slopes = slopes @ game.weights
    expected = 40 * (Z @ np.linalg.solve(hessian, slopes)) * (y - p)[:, None]
    pieces = game.fast_path.first_order_pieces()
    np.testing.assert_allclose(pieces, expected, rtol=1e-9, atol=1e-12)
    control = first_order_game(game)
    np.testing.assert_allclose(control.full_value, game.full_value, rtol=0, atol=1e-12)


def test_a_multinomial_logistic_game_has_no_first_order_control():
    X = np.arange(12.0).reshape(-1, 1)
    labels = ResidualGame(LogisticRegression(), X, np.repeat([0.0, 1.0, 2.0], 4))
    assert type(labels.fast_path).__name__ == "LogisticPath"
    assert labels.fast_path.first_order_pieces() is None and labels.fast_path.label_shares() is None
    assert first_order_game(labels) is None and not ControlVariateApproximator.supports(labels)
