"""Utility games of data valuation: ``v(S)`` = a scikit-learn score of the model refitted on the rows in S.

:class:`ScoreGame` scores refits on a validation set with any scorer (a name such as ``"accuracy"``,
``"neg_log_loss"``, ``"roc_auc"``, or a callable ``scorer(estimator, X, y)``). A regressor with an exact refit
shortcut (ridge, OLS, mean, KNN: :func:`~shap_instances.games.fast_path_for`) is evaluated through its
:class:`~shap_instances.games.ResidualGame`, so every semivalue estimator gets the shortcut; the squared, absolute
and R^2 scores are then computed for a whole batch at once. A binary l2 ``LogisticRegression`` is evaluated the
same way, through the logistic shortcut (:class:`~shap_instances.linear.LogisticPath`: the refit's probabilities to
1e-10 in the logits), its accuracy computed for a whole batch and any other scorer on the refit's probabilities.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin, clone, is_classifier
from sklearn.dummy import DummyClassifier, DummyRegressor

from ..exceptions import ShapInstancesWarning
from ..games import Game, ResidualGame
from ..linear import LogisticPath
from ..utils import check_finite_result, check_scoring

__all__ = ["ClasswiseScorer", "RestrictedGame", "ScoreGame", "check_scoring"]  # check_scoring: from utils

_CHUNK_FLOATS = 1 << 22

#: Regression scores computed from a batch of residual rows (m, n_val) at once, by scorer name.
BATCH_SCORES: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    "neg_mean_squared_error": lambda r, y: -np.mean(r**2, axis=1),
    "neg_root_mean_squared_error": lambda r, y: -np.sqrt(np.mean(r**2, axis=1)),
    "neg_mean_absolute_error": lambda r, y: -np.mean(np.abs(r), axis=1),
    "r2": lambda r, y: 1.0 - np.sum(r**2, axis=1) / np.sum((y - y.mean()) ** 2),
}


def _batch_accuracy(residuals: np.ndarray, targets: np.ndarray) -> np.ndarray:
    """Accuracy of a binary classifier from its residuals ``P(class 1) - targets`` (targets 0/1)."""
    return np.mean((residuals + targets > 0.5) == (targets > 0.5), axis=1)


#: Classification scores computed from a batch of residual rows of the logistic shortcut, by scorer name.
CLASSIFIER_BATCH_SCORES: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    "accuracy": _batch_accuracy, "neg_brier_score": lambda r, y: -np.mean(r**2, axis=1)}


class ClasswiseScorer:
    """Schoch et al.'s (2022) class-wise utility for the rows of class ``label``: ``a_in * exp(a_out)``.

    ``a_in`` is the number of validation rows of class ``label`` predicted correctly and ``a_out`` that of the
    other classes, both divided by the number of validation rows.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.dummy import DummyClassifier
    >>> from shap_instances.valuation import ClasswiseScorer
    >>> model = DummyClassifier(strategy="most_frequent").fit(np.zeros((3, 1)), [0, 0, 1])
    >>> round(ClasswiseScorer(0)(model, np.zeros((4, 1)), np.array([0, 0, 1, 1])), 6)   # 2/4 * exp(0)
    0.5
    """

    def __init__(self, label: Any) -> None:
        self.label = label
        self.__name__ = f"classwise[{label}]"

    def __call__(self, estimator: Any, X: Any, y: np.ndarray) -> float:
        in_class, out_of_class = self.accuracies(estimator, X, y)
        return in_class * float(np.exp(out_of_class))

    def accuracies(self, estimator: Any, X: Any, y: np.ndarray) -> tuple[float, float]:
        """``(a_in, a_out)``: rows of class ``label`` and of the other classes predicted correctly, over ``len(y)``."""
        correct = estimator.predict(X) == y
        own = y == self.label
        return float(np.sum(correct & own) / len(y)), float(np.sum(correct & ~own) / len(y))


class _Predictions(RegressorMixin, BaseEstimator):
    """A regressor that predicts fixed values: scores a row of residuals with any scorer."""

    def __init__(self, values: np.ndarray | None = None) -> None:
        self.values = values

    def predict(self, X: Any) -> np.ndarray:
        return self.values  # type: ignore[return-value]


class _Probabilities(ClassifierMixin, BaseEstimator):
    """A binary classifier with fixed probabilities of ``classes[1]``: scores a row of them with any scorer."""

    def __init__(self, proba: np.ndarray | None = None, classes: np.ndarray | None = None) -> None:
        self.proba = proba
        self.classes = classes

    @property
    def classes_(self) -> np.ndarray:
        """The two classes, as a fitted classifier has them."""
        return self.classes  # type: ignore[return-value]

    def predict_proba(self, X: Any) -> np.ndarray:
        proba = np.asarray(self.proba, dtype=np.float64)
        return np.column_stack([1.0 - proba, proba])

    def predict(self, X: Any) -> np.ndarray:
        return self.classes_[(np.asarray(self.proba, dtype=np.float64) > 0.5).astype(np.intp)]


def _shortcut_game(model: Any, X: Any, y: np.ndarray, X_val: Any, y_val: np.ndarray) -> ResidualGame | None:
    """The residual game of an exact refit shortcut of ``model`` (regressors; binary l2 logistic), else None.

    A classifier's game has the 0/1 indicators of its second class as targets (residuals of its probability).
    """
    if not is_classifier(model):
        game = ResidualGame(model, X, np.asarray(y, dtype=np.float64), X_val, np.asarray(y_val, dtype=np.float64),
                            empty_prediction=float(np.mean(y)))
        return game if game.fast_path is not None else None
    classes = np.unique(y)
    if len(classes) != 2 or not LogisticPath.supports(model) or not np.isin(y_val, classes).all():
        return None
    positive = (y == classes[1]).astype(np.float64)
    game = ResidualGame(model, X, positive, X_val, (y_val == classes[1]).astype(np.float64))
    return game if isinstance(game.fast_path, LogisticPath) else None


class ScoreGame(Game):
    """``v(S)`` = ``scorer(model refitted on the training rows in S, X_val, y_val)``, a scalar game.

    ``v(empty)``, and the value of a coalition the model cannot be fitted on (one class, too few rows: counted in
    ``n_failed_fits``, warned about once), is ``default_score``: by default the score of the model that predicts
    the training prior (``DummyClassifier(strategy="prior")``, ``DummyRegressor()``), which is what the mean
    shortcut predicts on no rows; pyDVL and OpenDataVal use 0. On the logistic shortcut a coalition of one class
    scores ``default_score`` too (as the refit that scikit-learn refuses), without being counted as a failed fit.

    Parameters
    ----------
    model : scikit-learn estimator (not fitted; cloned for every refit)
    X, y : training rows (the players) and targets, validated arrays
    X_val, y_val : validation rows and targets
    scorer : callable ``scorer(estimator, X, y) -> float``
    scoring_name : str, optional
        The scorer's name; a name in ``BATCH_SCORES`` scores a shortcut's residuals in batches.
    default_score : float, optional

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import Ridge
    >>> from sklearn.metrics import get_scorer
    >>> from shap_instances.valuation import ScoreGame
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(20, 2)); y = X @ [1.0, 2.0]
    >>> game = ScoreGame(Ridge(), X[:12], y[:12], X[12:], y[12:], get_scorer("r2"), "r2")
    >>> type(game.residual_game.fast_path).__name__, bool(game.full_value[0] > 0.9)
    ('RidgePath', True)
    """

    def __init__(self, model: Any, X: Any, y: np.ndarray, X_val: Any, y_val: np.ndarray, scorer: Callable,
                 scoring_name: str | None = None, *, default_score: float | None = None,
                 player_names: list[str] | None = None) -> None:
        super().__init__(len(y), 1, player_names=player_names, output_names=[scoring_name or "score"])
        self.model, self.X, self.y, self.X_val, self.y_val, self.scorer = model, X, y, X_val, y_val, scorer
        self.residual_game = _shortcut_game(model, X, y, X_val, y_val)
        self.classes = np.unique(y) if is_classifier(model) else None
        self.batch_score = (BATCH_SCORES if self.classes is None else CLASSIFIER_BATCH_SCORES).get(scoring_name or "")
        prior = DummyClassifier(strategy="prior") if is_classifier(model) else DummyRegressor()
        self.default_score = float(scorer(prior.fit(X, y), X_val, y_val) if default_score is None else default_score)
        self.n_failed_fits = 0
        self.first_failure: str | None = None

    @property
    def cheap(self) -> bool:  # type: ignore[override]  # a property here, a plain attribute on Game
        """True when an exact refit shortcut evaluates coalitions."""
        return self.residual_game is not None

    def _scores(self, residuals: np.ndarray) -> np.ndarray:
        """Scores of rows of validation residuals (m, n_val) of the shortcut's game."""
        assert self.residual_game is not None
        targets = self.residual_game.y_eval
        if self.batch_score is not None:
            return self.batch_score(residuals, targets)
        fake = (lambda row: _Predictions(row + targets)) if self.classes is None else (
            lambda row: _Probabilities(row + targets, self.classes))
        return np.array([self.scorer(fake(row), self.X_val, self.y_val) for row in residuals])

    def _unfittable(self, sizes: np.ndarray, positives: np.ndarray) -> np.ndarray:
        """Coalitions valued ``default_score`` on a shortcut: empty, or one class only for a classifier."""
        return (sizes == 0) if self.classes is None else (positives == 0) | (positives == sizes)

    def value_function(self, coalitions: np.ndarray) -> np.ndarray:
        if self.residual_game is None:
            out = np.array([self._refit_score(mask) for mask in coalitions])
            out[~coalitions.any(axis=1)] = self.default_score
            return self._finite(out[:, None])
        out = np.full((len(coalitions), 1), self.default_score)
        fits = ~self._unfittable(coalitions.sum(axis=1), coalitions @ self.residual_game.y)
        out[fits, 0] = self._scores(self.residual_game.value_function(coalitions[fits]))
        return self._finite(out)

    def _finite(self, scores: np.ndarray) -> np.ndarray:
        """The scores, refused when one is NaN or infinite (a value computed from it would be too)."""
        name = (self.output_names or ["score"])[0]
        return check_finite_result(scores, f"the scores of {name} of the refitted models",
                                   why="the score is undefined on a refit (e.g. roc_auc on a y_val of one class, a "
                                   "model that predicts one class), the scorer returned NaN or inf, or the targets "
                                   "are so large that it overflows; pass a scorer that returns finite numbers, or "
                                   "rescaled targets")

    def prefix_values(self, permutations: np.ndarray, first: int = 0) -> np.ndarray:
        if self.residual_game is None:
            return super().prefix_values(permutations, first)
        permutations = np.asarray(permutations, dtype=np.intp)
        k, n = permutations.shape
        out = np.empty((k, n + 1, 1))
        step = max(1, _CHUNK_FLOATS // ((n + 1) * len(self.y_val)))
        positives = np.zeros((k, n + 1))
        np.cumsum(np.asarray(self.residual_game.y, dtype=np.float64)[permutations], axis=1, out=positives[:, 1:])
        fits = ~np.broadcast_to(self._unfittable(np.arange(n + 1)[None, :], positives), (k, n + 1))
        out[..., 0] = self.default_score
        for begin in range(0, k, step):
            residuals = self.residual_game.prefix_values(permutations[begin:begin + step])
            chunk = fits[begin:begin + step]
            out[begin:begin + step, :, 0][chunk] = self._scores(residuals[chunk])
        self.n_evaluations += permutations.size + k
        return self._finite(out)[:, first:]

    def _refit_score(self, mask: np.ndarray) -> float:
        if not mask.any():
            return self.default_score
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                rows = self.X.iloc[np.flatnonzero(mask)] if isinstance(self.X, pd.DataFrame) else self.X[mask]
                return float(self.scorer(clone(self.model).fit(rows, self.y[mask]), self.X_val, self.y_val))
        except MemoryError:
            raise
        except Exception as exc:  # noqa: BLE001 - the documented policy: an unfittable subset gets default_score
            self.n_failed_fits += 1
            if self.n_failed_fits == 1:
                self.first_failure = f"{type(exc).__name__}: {exc}"
                warnings.warn(f"{type(self.model).__name__} could not be fitted and scored on a subset of "
                              f"{int(mask.sum())} training rows ({self.first_failure}); such subsets score "
                              f"default_score={self.default_score:g} (see n_failed_fits).", ShapInstancesWarning,
                              stacklevel=4)
            return self.default_score


class RestrictedGame(Game):
    """The game ``T -> v(T + context)`` on the players ``players`` of ``game``, the others fixed by ``context``.

    Examples
    --------
    >>> import numpy as np
    >>> from shap_instances.games import FunctionGame
    >>> from shap_instances.valuation import RestrictedGame
    >>> game = FunctionGame(lambda m: m.sum(1) * 1.0, 4)
    >>> sub = RestrictedGame(game, np.array([0, 2]), np.array([False, True, False, True]))
    >>> sub(np.array([[True, False]])).ravel().tolist()
    [3.0]
    """

    def __init__(self, game: Game, players: np.ndarray, context: np.ndarray) -> None:
        super().__init__(len(players), game.n_outputs,
                         player_names=[game.player_names[p] for p in players], output_names=game.output_names)
        self.game, self.players, self.context = game, np.asarray(players, dtype=np.intp), np.asarray(context, bool)

    @property
    def cheap(self) -> bool:  # type: ignore[override]  # a property here, a plain attribute on Game
        """As the full game's."""
        return bool(getattr(self.game, "cheap", False))

    def value_function(self, coalitions: np.ndarray) -> np.ndarray:
        masks = np.tile(self.context, (len(coalitions), 1))
        masks[:, self.players] = coalitions
        return self.game(masks)
