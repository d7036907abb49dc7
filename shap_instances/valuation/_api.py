"""``data_values`` and ``classwise_shapley``: semivalues of training rows under any scikit-learn score."""

from __future__ import annotations

import numbers
import time
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike
from sklearn.base import clone
from sklearn.dummy import DummyClassifier, DummyRegressor
from sklearn.pipeline import Pipeline

from .._deprecated import renamed_keyword
from ..approximators import ExactApproximator, PermutationApproximator, check_time_left, random_coalitions
from ..approximators.exact import all_coalitions
from ..exceptions import DataValidationError, InvalidParameterError, UnsupportedModelError
from ..utils import (
    Interval,
    Options,
    RandomStateLike,
    check_finite_result,
    check_labels,
    check_memory,
    check_model_kind,
    check_model_rows,
    check_random_state,
    check_row_order,
    check_scoring,
    check_target,
    fitted_columns,
    row_names,
    validate_params,
)
from ._chooser import APPROXIMATORS, semivalue_approximator
from ._result import DataValues
from ._semivalues import SEMIVALUES, Semivalue, check_semivalue
from ._utility import ClasswiseScorer, RestrictedGame, ScoreGame

__all__ = ["classwise_shapley", "data_values", "utility_game"]

_POSITIVE = Interval(numbers.Real, 0, None, closed="neither")
#: The options of :func:`data_values`, checked in one place (``default_score`` is :func:`utility_game`'s too).
DATA_VALUES_CONSTRAINTS: dict[str, list] = {
    "semivalue": [Options(*SEMIVALUES), Semivalue],
    "approximator": [Options(*APPROXIMATORS)],
    "scoring": [None, str, "callable"],
    "max_evals": [None, Interval(numbers.Integral, 1, None)],
    "alpha": [_POSITIVE],
    "beta": [_POSITIVE],
    "default_score": [None, Interval(numbers.Real, None, None)],
    "random_state": ["random_state"],
}
#: The options of :func:`classwise_shapley`.
CLASSWISE_CONSTRAINTS: dict[str, list] = {
    "n_contexts": [Interval(numbers.Integral, 2, None)],
    "n_permutations": [None, Interval(numbers.Integral, 1, None)],
    "exact": ["boolean"],
    "normalize": ["boolean"],
    "random_state": ["random_state"],
}
#: Why a score can fail to be a finite number, and what to change.
_NON_FINITE_SCORE = ("the score is undefined there (e.g. roc_auc or another ranking score on a y_val of one class), "
                     "the scorer returned NaN or inf, or the targets are so large that the score overflows; pass "
                     "validation rows of every class, a scorer that returns finite numbers, or rescaled targets")


def _validated_rows(model: Any, X_train: Any, X_val: Any) -> tuple[Any, Any]:
    """``X_train`` and ``X_val`` as the refitted model takes them, DataFrames matched to one set of columns by name.

    A whole pipeline gets the rows as they are (strings, categories: its preprocessing is refitted with it), any
    other model float arrays.
    """
    raw = isinstance(model, Pipeline)
    columns = fitted_columns(model, X_train)
    X = check_model_rows(X_train, name="X_train", columns=columns, raw=raw)
    if raw and columns is None:
        columns = [str(c) for c in X.columns]
    return X, check_model_rows(X_val, name="X_val", columns=columns, raw=raw, n_features=X.shape[1])


def _validated_targets(kind: str, y_train: ArrayLike, y_val: ArrayLike, n_train: int, n_val: int
                       ) -> tuple[np.ndarray, np.ndarray]:
    """Numbers for a regressor; for a classifier labels of one type, two classes at least, ``y_val``'s among them."""
    if kind != "classifier":
        targets = check_target(y_train, n_train, name="y_train"), check_target(y_val, n_val, name="y_val")
        if targets[0].ndim != 1 or targets[1].ndim != 1:
            raise DataValidationError(f"y_train and y_val must hold one target per row (1-D), got shapes "
                                      f"{targets[0].shape} and {targets[1].shape}; value the rows for one target at "
                                      "a time.")
        return targets
    y = check_labels(y_train, n_train, name="y_train")
    classes = np.unique(y)
    if len(classes) < 2:
        raise DataValidationError(f"y_train holds one class ({classes.tolist()}): a classifier's rows are valued by "
                                  "refits that need at least two classes; pass training rows of two classes or more.")
    return y, check_labels(y_val, n_val, name="y_val", classes=classes, classes_of="the classes of y_train")


def _prior_score(scorer: Callable, name: str, kind: str, X: Any, y: np.ndarray, X_val: Any, y_val: np.ndarray
                 ) -> float:
    """The score of the model that predicts the training prior: the default ``v(empty)``, and the scorer's trial on
    the validation rows (a scorer that fails or returns no finite number is refused here, before any refit)."""
    prior = DummyClassifier(strategy="prior") if kind == "classifier" else DummyRegressor()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            score = float(scorer(prior.fit(X, y), X_val, y_val))
    except MemoryError:
        raise
    except Exception as exc:  # noqa: BLE001 - the user's scorer: any failure is refused with its reason
        raise InvalidParameterError(f"scoring={name!r} failed on the validation rows ({type(exc).__name__}: {exc}); "
                                    f"pass a scorer(estimator, X, y) that scores a fitted {kind} on X_val, y_val."
                                    ) from exc
    return float(check_finite_result([score], f"the scores of scoring={name!r} on (X_val, y_val) of the model that "
                                              "predicts the training prior", why=_NON_FINITE_SCORE)[0])


def utility_game(model: Any, X_train: Any, y_train: ArrayLike, X_val: Any, y_val: ArrayLike, *,
                 scoring: str | Callable | None = None, default_score: float | None = None) -> ScoreGame:
    """The validated utility game ``v(S)`` = score on ``(X_val, y_val)`` of ``model`` refitted on rows S.

    Inputs are checked as :func:`data_values` says (columns by name, raw rows for a pipeline, labels, model kind,
    scorer, a finite score of the prior model, a fit on all rows); ``default_score`` must be finite.

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
    validate_params("utility_game", DATA_VALUES_CONSTRAINTS, {"scoring": scoring, "default_score": default_score})
    kind = check_model_kind(model, "data valuation")
    scorer, name = check_scoring(scoring, model)
    names = row_names(X_train, prefix="train")
    check_row_order(X_train, y_train, name="y_train", rows_name="X_train")
    check_row_order(X_val, y_val, name="y_val", rows_name="X_val")
    X_train, X_val = _validated_rows(model, X_train, X_val)
    y_train, y_val = _validated_targets(kind, y_train, y_val, len(X_train), len(X_val))
    prior = _prior_score(scorer, name, kind, X_train, y_train, X_val, y_val)
    game = ScoreGame(model, X_train, y_train, X_val, y_val, scorer, name,
                     default_score=prior if default_score is None else float(default_score), player_names=names)
    if game.residual_game is None:  # a shortcut's game has fitted every row already
        _check_fits_all_rows(game)
    return game


def _check_fits_all_rows(game: ScoreGame) -> None:
    """Refuse a model that cannot be fitted and scored on every training row: each value would be a default."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        game._refit_score(np.ones(game.n_players, dtype=bool))
    if game.n_failed_fits:
        raise UnsupportedModelError(f"{type(game.model).__name__} could not be fitted on all {game.n_players} training "
                                    f"rows and scored on the validation rows ({game.first_failure}); fix the model or "
                                    "the data (the rows of X_val must be ones the fitted model takes).")


def data_values(model: Any, X_train: Any, y_train: ArrayLike, X_val: Any, y_val: ArrayLike, *,
                semivalue: str | Semivalue = "shapley", approximator: str = "auto",
                scoring: str | Callable | None = None,
                max_evals: int | None = None, alpha: float = 16.0, beta: float = 1.0,
                default_score: float | None = None, random_state: RandomStateLike = None,
                estimator: str | None = None) -> DataValues:
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
    approximator : {"auto", "exact", "permutation", "msr", "regression", "loo"}, default="auto"
        See :func:`semivalue_approximator` (``estimator=``, its name before 0.2, warns until 0.3).
    scoring : str or callable, optional
    max_evals : int, optional
        Budget in utility evaluations (default: the approximator's).
    alpha, beta : float, default=(16, 1)
        Beta Shapley's parameters (Kwon & Zou's recommended Beta(16, 1)); read when ``semivalue="beta"``.
    default_score : float, optional
        ``v(empty)`` and the value of coalitions the model cannot be fitted on (default: the prior model's score).
    random_state : int, Generator or None

    Returns
    -------
    DataValues

    Raises
    ------
    DataValidationError
        Columns other than the training ones (DataFrames are matched by name), text columns for a model that is
        not a pipeline, labels of another type, unknown, mixed or missing, targets that are not one finite
        number per row; ``NonFiniteResultError`` (one of these) for a score, weight or value that is NaN or inf.
    UnsupportedModelError
        A clusterer, outlier detector, transformer or non-estimator; a model that cannot be fitted on all rows.
    InvalidParameterError
        An option outside its table, a metric function or a score of the other task as ``scoring``, a scorer that
        fails on the validation rows, ``max_evals`` below what one sample of the approximator costs.
    BudgetError, MemoryBudgetError
        A budget estimated above 24 hours, or a design above the memory budget, before the work.

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
    approximator = renamed_keyword("data_values", "estimator", "approximator", estimator, approximator, "auto")
    validate_params("data_values", DATA_VALUES_CONSTRAINTS, {
        "semivalue": semivalue, "approximator": approximator, "max_evals": max_evals, "alpha": alpha, "beta": beta,
        "random_state": random_state})
    semivalue = check_semivalue(semivalue, alpha, beta)
    game = utility_game(model, X_train, y_train, X_val, y_val, scoring=scoring, default_score=default_score)
    chosen = semivalue_approximator(semivalue, approximator, max_evals=max_evals, random_state=random_state,
                                    n_players=game.n_players)
    result = chosen.estimate(game)
    check_finite_result(result.values, f"the {semivalue.label} values", why=f"the {semivalue.label} weights or the "
                        f"scores' differences overflow; {_NON_FINITE_SCORE}")
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
    validate_params("classwise_shapley", CLASSWISE_CONSTRAINTS, {
        "n_contexts": n_contexts, "n_permutations": n_permutations, "exact": exact, "normalize": normalize,
        "random_state": random_state})
    check_model_kind(model, "class-wise Shapley values", kinds=("classifier",))
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
    check_finite_result(values, "the class-wise Shapley values", why="a class's values add up to almost 0, so "
                        "rescaling them to its in-class accuracy overflows; pass normalize=False")
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
        check_memory(n_contexts * (9.0 * len(others) + 8.0 * len(own)), f"{n_contexts} contexts of class-wise "
                     "Shapley values", instead="Pass a smaller n_contexts.")
        contexts = random_coalitions(rng, n_contexts, len(others))
        approximator = PermutationApproximator(n_permutations=n_permutations or max(8, 2 * len(own)),
                                               random_state=rng, silent=True)
    out = np.empty((len(contexts), len(own)))
    started = time.perf_counter()
    for k, chosen in enumerate(contexts):
        context = np.zeros(game.n_players, dtype=bool)
        context[others[chosen]] = True
        out[k] = approximator.estimate(RestrictedGame(game, own, context)).values[:, 0]
        if k == 0:
            check_time_left(started, 1, len(contexts), "contexts of one class",
                            "pass a smaller n_contexts or n_permutations")
    return out
