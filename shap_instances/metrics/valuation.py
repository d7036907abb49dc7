"""Data valuation: Data Shapley on the engine, and the removal experiment of Liu & Barnard (figure 8)."""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike
from sklearn.base import clone, is_classifier

from ..approximators import PermutationApproximator
from ..utils import (
    Interval,
    check_data,
    check_labels,
    check_model_kind,
    check_target,
    fitted_columns,
    row_names,
    validate_params,
)
from ..valuation import utility_game

if TYPE_CHECKING:
    from ..utils import RandomStateLike

__all__ = ["data_shapley", "removal_curve"]


def data_shapley(model: Any, X_train: Any, y_train: ArrayLike, X_test: Any, y_test: ArrayLike, *,
                 n_permutations: int | None = None, random_state: RandomStateLike = None,
                 n_jobs: int | None = None, silent: bool = True,
                 truncation_tolerance: float | None = None) -> pd.Series:
    """Data Shapley values (Ghorbani & Zou) of the test mean squared error, sign flipped so that a positive
    value means the training row lowers the test loss. The model fitted on no rows predicts the training mean.

    For a classifier the loss is the Brier score of its predicted probability of the second class against that
    class's 0/1 indicator (the mean squared error of the probabilities; with three or more classes too), and the
    model fitted on no rows predicts the training share of that class.
    The game is :func:`shap_instances.valuation.utility_game` under the scorer ``"neg_mean_squared_error"``
    (``"neg_brier_score"`` for a classifier), so every exact refit shortcut of the data-valuation module serves it;
    :func:`shap_instances.valuation.data_values` gives the other semivalues and scores of the same game.

    ``truncation_tolerance`` gives their truncated Monte Carlo (TMC-Shapley): each permutation stops once the
    prefix's test MSE is within that fraction of ``|MSE(all rows) - MSE(no rows)|`` of the full set's (see
    :class:`~shap_instances.approximators.PermutationApproximator`); None (the default) samples plain permutations.

    Examples
    --------
    >>> from sklearn.linear_model import Ridge
    >>> from shap_instances.datasets import load_diabetes
    >>> from shap_instances.metrics import data_shapley
    >>> X, y = load_diabetes()
    >>> values = data_shapley(Ridge(), X[:40], y[:40], X[40:80], y[40:80], n_permutations=10, random_state=0)
    >>> values.shape
    (40,)
    """
    scoring: Any = "neg_mean_squared_error"
    if is_classifier(model):  # labels checked (one type, none missing) before they are sorted
        labels = np.unique(check_labels(y_train, len(row_names(X_train)), name="y_train"))
        scoring = _SecondClassBrier(labels[1]) if len(labels) > 2 else "neg_brier_score"
    game = utility_game(model, X_train, y_train, X_test, y_test, scoring=scoring)
    approximator = PermutationApproximator(n_permutations=n_permutations or 3 * game.n_players,
                                           random_state=random_state, n_jobs=n_jobs, silent=silent,
                                           truncation_tolerance=truncation_tolerance)
    return pd.Series(approximator.estimate(game).values[:, 0], index=game.player_names, name="data_shapley")


class _SecondClassBrier:
    """Negated Brier score of the probability of ``label`` against its 0/1 indicator, for any number of classes
    (scikit-learn's ``neg_brier_score`` is that of a binary classifier's second class, and refuses a validation set
    that lacks one of several classes); a model fitted without ``label`` gives it probability 0."""

    __name__ = "neg_brier_score"

    def __init__(self, label: Any) -> None:
        self.label = label

    def __call__(self, estimator: Any, X: Any, y: ArrayLike) -> float:
        classes = list(estimator.classes_)
        proba = estimator.predict_proba(X)[:, classes.index(self.label)] if self.label in classes else 0.0
        return -float(np.mean((proba - (np.asarray(y) == self.label)) ** 2))


def removal_curve(model: Any, X_train: Any, y_train: ArrayLike, X_test: Any, y_test: ArrayLike, scores: ArrayLike, *,
                  fractions: Sequence[float] = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5), highest_first: bool = True) -> pd.Series:
    """Test MSE after removing the highest- (or lowest-) scored training rows and refitting a clone.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import Ridge
    >>> from shap_instances.datasets import load_diabetes
    >>> from shap_instances.metrics import removal_curve
    >>> X, y = load_diabetes()
    >>> curve = removal_curve(Ridge(), X[:100], y[:100], X[100:], y[100:], np.arange(100.0), fractions=(0, 0.2))
    >>> curve.index.tolist()
    [0.0, 0.2]
    """
    check_model_kind(model, "removal_curve", kinds=("regressor", "classifier"))
    validate_params("removal_curve", {"fraction": [Interval(numbers.Real, 0, 1, closed="left")],
                                      "highest_first": ["boolean"]}, {"highest_first": highest_first})
    for fraction in fractions:
        validate_params("removal_curve", {"fraction": [Interval(numbers.Real, 0, 1, closed="left")]},
                        {"fraction": fraction})
    columns = fitted_columns(model, X_train)
    X_train = check_data(X_train, name="X_train", feature_names=columns)
    X_test = check_data(X_test, name="X_test", feature_names=columns, n_features=X_train.shape[1])
    y_train = check_target(y_train, len(X_train), name="y_train")
    y_test = check_target(y_test, len(X_test), name="y_test")
    scores = check_target(scores, len(X_train), name="scores")
    order = np.argsort(-scores if highest_first else scores, kind="stable")
    losses = {}
    for fraction in fractions:
        keep = np.sort(order[int(round(fraction * len(order))):])
        fitted = clone(model).fit(X_train[keep], y_train[keep])
        losses[float(fraction)] = float(np.mean((fitted.predict(X_test) - y_test) ** 2))
    return pd.Series(losses, name="test_mse")
