"""``data_values`` and ``classwise_shapley``: semivalues of training rows under any scikit-learn score."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike
from sklearn.base import clone, is_classifier

from ..approximators import ExactApproximator, PermutationApproximator
from ..approximators.exact import all_coalitions
from ..exceptions import InvalidParameterError
from ..utils import RandomStateLike, check_data, check_random_state, check_target, row_names
from ._estimators import semivalue_approximator
from ._result import DataValues
from ._semivalues import Semivalue, check_semivalue
from ._utility import ClasswiseScorer, RestrictedGame, ScoreGame, check_scoring

__all__ = ["classwise_shapley", "data_values", "utility_game"]


def utility_game(model: Any, X_train: Any, y_train: ArrayLike, X_val: Any, y_val: ArrayLike, *,
                 scoring: str | Callable | None = None, default_score: float | None = None) -> ScoreGame:
    """The validated utility game ``v(S)`` = score on ``(X_val, y_val)`` of ``model`` refitted on rows S.

    Examples
    --------
    >>> from sklearn.linear_model import LogisticRegression
    >>> from sklearn.datasets import load_breast_cancer
    >>> from shap_instances.valuation import utility_game
    >>> X, y = load_breast_cancer(return_X_y=True)
    >>> game = utility_game(LogisticRegression(max_iter=500), X[:30], y[:30], X[300:], y[300:], scoring="roc_auc")
    >>> game.n_players, game.output_names
    (30, ['roc_auc'])
    """
    names = row_names(X_train, prefix="train")
    X_train, X_val = check_data(X_train, name="X_train"), check_data(X_val, name="X_val")
    numeric = not is_classifier(model)
    y_train = check_target(y_train, len(X_train), name="y_train", numeric=numeric)
    y_val = check_target(y_val, len(X_val), name="y_val", numeric=numeric)
    scorer, name = check_scoring(scoring, model)
    return ScoreGame(model, X_train, y_train, X_val, y_val, scorer, name, default_score=default_score,
                     player_names=names)


def data_values(model: Any, X_train: Any, y_train: ArrayLike, X_val: Any, y_val: ArrayLike, *,
                semivalue: str | Semivalue = "shapley", estimator: str = "auto", scoring: str | Callable | None = None,
                max_evals: int | None = None, alpha: float = 16.0, beta: float = 1.0,
                default_score: float | None = None, random_state: RandomStateLike = None) -> DataValues:
    """Semivalues of the training rows: Shapley, Banzhaf, Beta Shapley or leave-one-out, under any score.

    The utility of a set S of training rows is ``scoring`` (a scikit-learn scorer name or a callable
    ``scorer(estimator, X, y)``; default accuracy for classifiers, negated MSE for regressors) of ``model``
    refitted on S, on ``(X_val, y_val)``. Regressors with an exact refit shortcut (Ridge, LinearRegression,
    DummyRegressor, KNeighborsRegressor) never refit, whatever the semivalue.

    Parameters
    ----------
    model : scikit-learn estimator (cloned, never modified)
    X_train, y_train : the rows to value and their targets
    X_val, y_val : the validation set the utility is scored on
    semivalue : {"shapley", "banzhaf", "beta", "loo"} or Semivalue, default="shapley"
    estimator : {"auto", "exact", "permutation", "msr", "regression", "loo"}, default="auto"
        See :func:`semivalue_approximator`.
    scoring : str or callable, optional
    max_evals : int, optional
        Budget in utility evaluations (default: the estimator's).
    alpha, beta : float, default=(16, 1)
        Beta Shapley's parameters (Kwon & Zou's recommended Beta(16, 1)); read when ``semivalue="beta"``.
    default_score : float, optional
        ``v(empty)`` and the value of coalitions the model cannot be fitted on (default: the prior model's score).
    random_state : int, Generator or None

    Returns
    -------
    DataValues

    Examples
    --------
    >>> from sklearn.linear_model import Ridge
    >>> from shap_instances.datasets import load_diabetes
    >>> from shap_instances.valuation import data_values
    >>> X, y = load_diabetes()
    >>> dv = data_values(Ridge(), X[:40], y[:40], X[40:80], y[40:80], semivalue="banzhaf", max_evals=500,
    ...                  scoring="r2", random_state=0)
    >>> dv.method, dv.adds_up_to, dv.values.shape
    ('banzhaf/msr', None, (40,))
    >>> sh = data_values(Ridge(), X[:40], y[:40], X[40:80], y[40:80], max_evals=2000, random_state=0)
    >>> sh.adds_up_to, bool(abs(sh.values.sum() - sh.total) < 1e-9)
    ('v(all) - v(empty)', True)
    """
    semivalue = check_semivalue(semivalue, alpha, beta)
    if max_evals is not None and (not isinstance(max_evals, int | np.integer) or max_evals < 1):
        raise InvalidParameterError(f"max_evals must be a positive int, got {max_evals!r}.")
    game = utility_game(model, X_train, y_train, X_val, y_val, scoring=scoring, default_score=default_score)
    approximator = semivalue_approximator(semivalue, estimator, max_evals=max_evals, random_state=random_state,
                                          n_players=game.n_players)
    result = approximator.estimate(game)  # type: ignore[attr-defined]
    names = game.player_names
    errors = None if result.standard_errors is None else pd.Series(result.standard_errors[:, 0], index=names)
    total = float(result.full_value[0] - result.empty_value[0]) if semivalue.efficient else None
    info = dict(result.info)
    if total is not None:
        info["efficiency_gap"] = float(abs(result.values[:, 0].sum() - total))
    info["n_failed_fits"] = game.n_failed_fits
    return DataValues(pd.Series(result.values[:, 0], index=names, name=semivalue.label), errors,
                      f"{semivalue.label}/{result.approximator.replace(' ', '_')}", result.info["adds_up_to"], total,
                      result.n_evaluations, info)


def classwise_shapley(model: Any, X_train: Any, y_train: ArrayLike, X_val: Any, y_val: ArrayLike, *,
                      n_contexts: int = 8, n_permutations: int | None = None, exact: bool = False,
                      normalize: bool = True, random_state: RandomStateLike = None) -> DataValues:
    """Class-wise Shapley values (CS-Shapley, Schoch, Xu & Kwon 2022) of a classifier's training rows.

    For a row of class ``c``, the players are the training rows of class ``c`` and the utility of a set T of them,
    given a set ``S`` of rows of the other classes (the *context*), is ``u_c(T + S) = a_in * exp(a_out)``
    (:class:`ClasswiseScorer`: ``a_in`` the share of validation rows of class ``c`` predicted correctly, ``a_out``
    that of the other classes). The value is the row's Shapley value in that game, averaged over contexts drawn
    uniformly from the subsets of the other classes' rows:
    ``phi_i = 2^-|D_-c| sum_{S subset of D_-c} Shapley_i(T -> u_c(T + S))``.

    With ``normalize`` (the paper's last step, as pyDVL's default), the values of each class ``c`` are then
    rescaled to add up to the in-class accuracy ``a_in`` of the model fitted on all training rows:
    ``phi_i <- phi_i a_in(D) / sum_{j in D_c} phi_j`` (left as they are where that sum is 0). The rescaling is a
    positive multiple within a class as long as the class's values add up to a positive amount, so it keeps the
    ranking of rows within a class and puts the classes on the scale of their in-class accuracy; a class whose
    values add up to a negative amount (its rows hurt the model on the whole) has its values' signs flipped.

    Parameters
    ----------
    model : scikit-learn classifier (cloned)
    X_train, y_train, X_val, y_val : training rows to value, validation rows to score on
    n_contexts : int, default=8
        Contexts sampled per class (each row of the other classes in with probability 1/2).
    n_permutations : int, optional
        Permutations per context (default ``max(8, 2 * rows of the class)``).
    exact : bool, default=False
        Enumerate every context and every coalition (tiny problems: at most 10 rows per class and 12 others).
    normalize : bool, default=True
        Rescale each class's values to add up to its in-class accuracy (one more refit, on all rows).
    random_state : int, Generator or None

    Returns
    -------
    DataValues
        Standard errors from the spread of the per-context estimates (None when exact), multiplied by the class's
        rescaling factor when normalized (the factor's own sampling error is not included). When normalized,
        ``info`` holds each class's in-class accuracy (``"class_accuracy"``) and factor (``"class_scale"``).

    Examples
    --------
    >>> from sklearn.naive_bayes import GaussianNB
    >>> from sklearn.datasets import load_breast_cancer
    >>> from shap_instances.valuation import classwise_shapley
    >>> X, y = load_breast_cancer(return_X_y=True)
    >>> dv = classwise_shapley(GaussianNB(), X[:30], y[:30], X[300:400], y[300:400],
    ...                        n_contexts=2, n_permutations=4, random_state=0)
    >>> dv.method, dv.values.shape
    ('classwise_shapley', (30,))
    >>> accuracy = sum(dv.info["class_accuracy"].values())   # each class adds up to its in-class accuracy
    >>> bool(abs(dv.values.sum() - accuracy) < 1e-9)
    True
    """
    if not is_classifier(model):
        raise InvalidParameterError(f"class-wise Shapley values need a classifier, got {type(model).__name__}.")
    if not isinstance(n_contexts, int | np.integer) or n_contexts < 2:
        raise InvalidParameterError(f"n_contexts must be an int >= 2 (standard errors), got {n_contexts!r}.")
    base = utility_game(model, X_train, y_train, X_val, y_val)
    rng = check_random_state(random_state)
    values, errors, spent = np.zeros(base.n_players), np.zeros(base.n_players), 0
    fitted = clone(base.model).fit(base.X, base.y) if normalize else None
    info: dict[str, dict] = {"class_accuracy": {}, "class_scale": {}} if normalize else {}
    for label in np.unique(base.y):
        own, others = np.flatnonzero(base.y == label), np.flatnonzero(base.y != label)
        scorer = ClasswiseScorer(label)
        game = ScoreGame(base.model, base.X, base.y, base.X_val, base.y_val, scorer, default_score=0.0)
        samples = _class_samples(game, own, others, exact, n_contexts, n_permutations, rng)
        values[own] = samples.mean(axis=0)
        errors[own] = samples.std(axis=0, ddof=1) / np.sqrt(len(samples)) if not exact else np.nan
        spent += game.n_evaluations
        if fitted is not None:
            accuracy, total = scorer.accuracies(fitted, base.X_val, base.y_val)[0], values[own].sum()
            scale = accuracy / total if total != 0 else 1.0
            values[own] *= scale
            errors[own] *= abs(scale)
            info["class_accuracy"][label], info["class_scale"][label] = accuracy, scale
    return DataValues(pd.Series(values, index=base.player_names, name="classwise_shapley"),
                      None if exact else pd.Series(errors, index=base.player_names), "classwise_shapley",
                      n_evaluations=spent + int(normalize), info=info)


def _class_samples(game: ScoreGame, own: np.ndarray, others: np.ndarray, exact: bool, n_contexts: int,
                   n_permutations: int | None, rng: np.random.Generator) -> np.ndarray:
    """Shapley values of the rows ``own`` in each context, shape (n_contexts, len(own)); every context if exact."""
    if exact:
        if len(own) > 10 or len(others) > 12:
            raise InvalidParameterError(f"exact class-wise Shapley enumerates 2^{len(others)} contexts times "
                                        f"2^{len(own)} coalitions; use exact=False for more than 10 rows per class.")
        contexts = all_coalitions(len(others))
        approximator: Any = ExactApproximator(silent=True)
    else:
        contexts = rng.random((n_contexts, len(others))) < 0.5
        approximator = PermutationApproximator(n_permutations=n_permutations or max(8, 2 * len(own)),
                                               random_state=rng, silent=True)
    out = np.empty((len(contexts), len(own)))
    for k, chosen in enumerate(contexts):
        context = np.zeros(game.n_players, dtype=bool)
        context[others[chosen]] = True
        out[k] = approximator.estimate(RestrictedGame(game, own, context)).values[:, 0]
    return out
