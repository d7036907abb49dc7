"""``ResidualGame``: players are training instances, the value of a coalition is a residual vector."""

from __future__ import annotations

import copy
import hashlib
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike
from sklearn.base import clone, is_classifier

from ..exceptions import InvalidParameterError, ShapInstancesWarning, UnsupportedModelError
from ._base import CoalitionMatrix, Game, GameValues
from ._fast_path import RidgeProblem, _LazyRegistry, exact_fast_paths, fast_path_for, named_refits

__all__ = ["ResidualGame", "REFITS"]

#: Named approximations of the refits, each chosen only by ``ResidualGame(..., refit=name)`` (never by itself):
#: ``"exact"`` (None) and those the families register (``"fixed_structure"``: the forest family's
#: :class:`~shap_instances.forest.FixedForestPath`). A read-only mapping that loads the families on first use.
REFITS: Mapping[str, Any] = _LazyRegistry(named_refits)


def __getattr__(name: str) -> Any:
    """``FAST_PATHS``: the registered exact shortcuts (:func:`~shap_instances.games.exact_fast_paths`)."""
    if name == "FAST_PATHS":
        return exact_fast_paths()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class ResidualGame(Game):
    """``v(S) = f_S(X_eval) - y_eval``: residuals of the model refitted on the training rows in S.

    For a classifier, ``y`` holds 0/1 indicators of the positive class and ``f_S`` is its predicted probability.

    ``v(empty)`` is the zero vector by default (so each explained row's values sum to its residual), or
    ``empty_prediction - y_eval``. A coalition on which the model cannot be fitted (an exception from
    ``fit``: too few rows, a single class, ...) gets ``v(empty)``; such coalitions are counted in
    ``n_failed_fits`` and reported once with a warning, so a long run never stops on one subset. The model
    must fit on all training rows: if it does not (a bad parameter, say), the game refuses at once.

    v(S) must be a function of S, so a model whose ``random_state`` parameters are None (a random forest,
    say) is cloned with them set to ``model_seed``; its refits are then reproducible, and every path through
    the game meets the same v(full).

    Ridge (alpha > 0), LinearRegression, DummyRegressor(strategy="mean"), uniform-weight KNeighborsRegressor, l2
    LogisticRegression, the five naive Bayes classifiers, KernelRidge, GaussianProcessRegressor(optimizer=None),
    LinearDiscriminantAnalysis(solver="lsqr") and QuadraticDiscriminantAnalysis (its svd solver) use exact
    shortcuts that their families register (``fast_path``: :func:`~shap_instances.games.fast_path_for`, the first
    registered one that supports the model); everything else refits clones. The KNN shortcut gives coalitions of
    fewer than ``n_neighbors`` rows v(empty), as the failure policy does, without counting them as failed fits. The
    mean and KNN models also have their Shapley values in closed form (:attr:`closed_form`, used by
    :class:`~shap_instances.approximators.ClosedFormApproximator`), and ridge models expose the least-squares
    problem of their refits (:attr:`ridge_problem`, used by
    :class:`~shap_instances.approximators.RidgeInfluenceApproximator`).

    ``refit`` names how a coalition's model is obtained: ``"exact"`` (the default: refits, or the exact shortcuts
    above) or a named approximation of :data:`REFITS`, taken only when asked for: ``"fixed_structure"`` keeps the
    trees of a random forest grown on all rows and recomputes their leaf values from the coalition
    (:class:`~shap_instances.forest.FixedForestPath`, exact Shapley values in closed form; docs/engine.md measures
    its agreement with refits). An unknown name raises :class:`~shap_instances.exceptions.InvalidParameterError`.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import Ridge
    >>> from shap_instances.games import ResidualGame
    >>> X, y = np.arange(8.0).reshape(4, 2), np.array([1.0, 2.0, 2.0, 5.0])
    >>> game = ResidualGame(Ridge(alpha=1.0), X, y)
    >>> game.full_value.shape, type(game.fast_path).__name__, game.closed_form
    ((4,), 'RidgePath', None)
    """

    def __init__(self, model: Any, X: Any, y: np.ndarray, X_eval: Any = None, y_eval: np.ndarray | None = None, *,
                 empty_prediction: float | None = None, player_names: Sequence[str] | None = None,
                 output_names: Sequence[str] | None = None, use_fast_path: bool = True, model_seed: int = 0,
                 refit: str = "exact") -> None:
        X_eval, y_eval = (X, y) if X_eval is None else (X_eval, y_eval)
        assert y_eval is not None
        super().__init__(len(y), len(y_eval), player_names=player_names, output_names=output_names)
        self.model, self.X, self.y, self.X_eval, self.y_eval = _seeded(model, model_seed), X, y, X_eval, y_eval
        self.empty = np.zeros(len(y_eval)) if empty_prediction is None else float(empty_prediction) - y_eval
        refits = named_refits()
        if refit not in refits:
            raise InvalidParameterError(f"refit must be one of {sorted(refits)}, got {refit!r}.")
        self.refit = refit
        path = fast_path_for(model) if use_fast_path else None
        if refit != "exact":  # a named approximation of the refits, taken only when asked for
            path = refits[refit]
            model = self.model  # seeded: the structure is the forest the full refit grows
        self.fast_path: Any = None if path is None else path(model, X, y, X_eval, y_eval, self.empty)
        if self.fast_path is not None and not getattr(self.fast_path, "usable", True):
            self.fast_path = None  # data outside the shortcut's numeric range: exact refits instead
        self.weights: np.ndarray | None = None  # (n_eval, K) for an aggregate game: values are residuals @ weights
        self.n_failed_fits = 0
        self.first_failure: str | None = None
        self.quiet = False  # parallel workers stay quiet; the caller warns once after merging their counts
        self.probability = is_classifier(model)  # y in {0, 1}: residuals of P(y = 1)
        fits = self.fast_path is not None and self.fast_path.fits_all_rows()
        self._full: np.ndarray | None = (
            None if fits else self._fit_all_rows())  # refuses a model that cannot fit all rows

    @property
    def cheap(self) -> bool:  # type: ignore[override]  # a property here, a plain attribute on Game
        """True when an exact refit shortcut evaluates coalitions (no process pool is worth starting)."""
        return self.fast_path is not None

    @property
    def cuts_walks(self) -> bool:  # type: ignore[override]  # a property here, a plain attribute on Game
        """As the refit shortcut's ``cuts_walks`` (``Game.cuts_walks``)."""
        return bool(getattr(self.fast_path, "cuts_walks", False))

    @property
    def starts_walks(self) -> bool:  # type: ignore[override]  # a property here, a plain attribute on Game
        """As the refit shortcut's ``starts_walks`` (``Game.starts_walks``: the logistic one)."""
        return bool(getattr(self.fast_path, "starts_walks", False))

    def aggregate(self, weights: ArrayLike, *, output_names: Sequence[str] | None = None) -> ResidualGame:
        """The game ``v_W(S) = v(S) @ weights``: K weighted sums of the explained rows' residuals.

        Shapley values are linear in the game, so the values of the aggregate game are ``phi @ weights``,
        with ``phi`` (n_players, n_eval) those of this game, for any estimator and the same random state (up to
        rounding); its standard errors are those of the weighted sums themselves. The exact refit shortcuts
        compute the aggregate directly: memory O(n + K), never the n x n_eval matrix.

        Parameters
        ----------
        weights : array-like of shape (n_outputs,) or (n_outputs, K)
            One weight per explained row (one output), or K columns of weights.
        output_names : sequence of str, optional
            Names of the K outputs (default ``"aggregate[k]"``).

        Returns
        -------
        ResidualGame
            With ``n_outputs = K``, the same players, model and failure policy.

        Examples
        --------
        >>> import numpy as np
        >>> from sklearn.linear_model import Ridge
        >>> from shap_instances.games import ResidualGame
        >>> X, y = np.arange(8.0).reshape(4, 2), np.array([1.0, 2.0, 2.0, 5.0])
        >>> game = ResidualGame(Ridge(alpha=1.0), X, y)
        >>> mean = game.aggregate(np.full(4, 0.25))
        >>> mean.n_outputs, bool(np.isclose(mean.full_value[0], game.full_value.mean()))
        (1, True)
        """
        weights = np.asarray(weights, dtype=np.float64)
        if weights.ndim == 1:
            weights = weights[:, None]
        if weights.ndim != 2 or weights.shape[0] != self.n_outputs or weights.shape[1] < 1:
            raise ValueError(f"weights must have shape ({self.n_outputs},) or ({self.n_outputs}, K), one row per "
                             f"explained row; got {weights.shape}.")
        if not np.all(np.isfinite(weights)):
            raise ValueError("weights must be finite.")
        names = output_names or [f"aggregate[{k}]" for k in range(weights.shape[1])]
        new = self._copy(None if self.fast_path is None else self.fast_path.aggregated(weights), weights.shape[1],
                         names)
        new.weights = weights if self.weights is None else self.weights @ weights
        new.empty = self.empty @ weights
        new._full = None if self._full is None else self._full @ weights
        return new

    def with_fast_path(self, fast_path: Any) -> ResidualGame:
        """This game with another refit shortcut ``fast_path`` (the same players, outputs and targets), with a
        cache and counters of its own: a control game that approximates this one
        (:func:`~shap_instances.approximators.control_game`)."""
        return self._copy(fast_path, self.n_outputs, self.output_names)

    def _copy(self, fast_path: Any, n_outputs: int, output_names: Sequence[str] | None) -> ResidualGame:
        """A shallow copy with ``fast_path`` and a fresh :class:`Game` state (cache, counters, names)."""
        new = copy.copy(self)
        Game.__init__(new, self.n_players, n_outputs, player_names=self.player_names, output_names=output_names,
                      cache=self.cache)
        new.fast_path = fast_path
        new.n_failed_fits, new.first_failure = 0, None
        return new

    @property
    def closed_form(self) -> str | None:
        """``"Mean"`` or ``"KNN"`` where the fast path has the Shapley values in closed form, else None."""
        if self.fast_path is None or not hasattr(self.fast_path, "shapley_values"):
            return None
        return type(self.fast_path).__name__.removesuffix("Path")

    def closed_form_values(self) -> np.ndarray:
        """Exact Shapley values from the fast path's closed form, shape (n_players, n_outputs)."""
        if self.closed_form is None:
            raise NotImplementedError(f"the residual game of {type(self.model).__name__} has no closed form; estimate "
                                      "its values (ExactApproximator, PermutationApproximator, KernelApproximator).")
        return self.fast_path.shapley_values().T

    @property
    def ridge_problem(self) -> RidgeProblem | None:
        """The least-squares problem of the refits for Ridge (alpha > 0) and LinearRegression, else None.

        Examples
        --------
        >>> import numpy as np
        >>> from sklearn.linear_model import LinearRegression
        >>> from shap_instances.games import ResidualGame
        >>> X, y = np.arange(8.0).reshape(4, 2), np.array([1.0, 2.0, 2.0, 5.0])
        >>> ResidualGame(LinearRegression(), X, y).ridge_problem.alpha
        0.0
        """
        build = getattr(fast_path_for(self.model), "ridge_problem", None)
        return None if build is None else build(self.model, self.X, self.y, self.X_eval, self.y_eval, self.weights)

    def _fit_all_rows(self) -> np.ndarray:
        try:
            return self._refit(np.ones(self.n_players, dtype=bool))
        except Exception as exc:  # noqa: BLE001 - re-raised with what to do
            raise UnsupportedModelError(
                f"{type(self.model).__name__} could not be fitted on all {self.n_players} training rows "
                f"({type(exc).__name__}: {exc}); fix the model or the data before decomposing its residuals."
            ) from exc

    def _refit(self, mask: np.ndarray) -> np.ndarray:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fitted = clone(self.model).fit(_rows(self.X, mask), self.y[mask])
        if not self.probability:
            residuals = fitted.predict(self.X_eval) - self.y_eval
        else:
            classes = list(fitted.classes_)  # a classifier that fits on one class predicts it with certainty
            positive = fitted.predict_proba(self.X_eval)[:, classes.index(1.0)] if 1.0 in classes else 0.0
            residuals = positive - self.y_eval
        if not np.all(np.isfinite(residuals)):  # a fit that predicts NaN / inf is a failed fit (the policy above)
            raise ValueError("the refitted model predicts NaN or infinite values")
        return residuals if self.weights is None else residuals @ self.weights

    def fingerprint(self) -> str:
        """A digest of the data, the targets, the model's parameters, v(empty) and a named approximation of the refits
        (see ``Game.fingerprint``)."""
        digest = hashlib.sha256(repr(sorted(self.model.get_params(deep=True).items())).encode())
        if self.refit != "exact":  # an approximation's values are not the refits' (exact games keep their digest)
            digest.update(self.refit.encode())
        arrays = (self.X, self.y, self.X_eval, self.y_eval, self.empty)
        for array in arrays if self.weights is None else (*arrays, self.weights):
            if isinstance(array, pd.DataFrame):  # raw rows a pipeline refits on (strings, categories)
                array = pd.util.hash_pandas_object(array, index=True).to_numpy()
            digest.update(np.ascontiguousarray(array).tobytes())
        return digest.hexdigest()

    def _fit_residuals(self, mask: np.ndarray) -> np.ndarray:
        if not mask.any():
            return self.empty
        if self.fast_path is not None:
            return self.fast_path.residuals(mask)
        if self._full is not None and mask.all():
            return self._full
        try:
            return self._refit(mask)
        except MemoryError:
            raise
        except Exception as exc:  # noqa: BLE001 - the documented policy: an unfittable subset gets v(empty)
            self.n_failed_fits += 1
            if self.first_failure is None:
                self.first_failure = (f"{type(self.model).__name__} could not be fitted on a subset of "
                                      f"{int(mask.sum())} training rows ({type(exc).__name__}: {exc})")
                self._warn_failure()
            return self.empty

    def _warn_failure(self) -> None:
        if not self.quiet:
            warnings.warn(f"{self.first_failure}; such subsets get the empty coalition's value (see "
                          "n_failed_fits).", ShapInstancesWarning, stacklevel=3)

    def counters(self) -> dict:
        return super().counters() | {"n_failed_fits": self.n_failed_fits, "first_failure": self.first_failure}

    def add_counters(self, delta: dict) -> None:
        super().add_counters(delta)
        self.n_failed_fits += delta.get("n_failed_fits", 0)
        if self.first_failure is None and delta.get("first_failure"):
            self.first_failure = delta["first_failure"]
            self._warn_failure()

    def value_function(self, coalitions: CoalitionMatrix) -> GameValues:
        out = np.empty((len(coalitions), self.n_outputs))  # filled in place: no list of rows beside the result
        for row, mask in enumerate(coalitions):
            out[row] = self._fit_residuals(mask)
        return out

    def accumulate_permutations(self, permutations: np.ndarray, per_unit: int, unit: np.ndarray, mean: np.ndarray,
                                m2: np.ndarray, count: int) -> tuple[int, np.ndarray, np.ndarray]:
        """The fused numba kernel of the ridge and mean shortcuts, else the default (see ``Game``)."""
        if not getattr(self.fast_path, "fused", False):
            return super().accumulate_permutations(permutations, per_unit, unit, mean, m2, count)
        permutations = np.asarray(permutations, dtype=np.intp)
        self.n_evaluations += permutations.size + len(permutations)
        count, full = self.fast_path.accumulate(permutations, per_unit, unit, mean, m2, count)
        return count, np.array(self.empty, dtype=np.float64), full

    def prefix_values(self, permutations: np.ndarray, first: int = 0) -> np.ndarray:
        """Values of the prefixes of ``first`` players and more of each permutation, shape (k, n + 1 - first,
        n_outputs); a fast path with ``starts_walks`` (the logistic one) neither fits nor values the shorter ones."""
        if first:
            if self.starts_walks:
                permutations = np.asarray(permutations, dtype=np.intp)
                self.n_evaluations += len(permutations) * (permutations.shape[1] + 1 - first)
                return self.fast_path.prefix_values_batch(permutations, first)
            return self.prefix_values(permutations)[:, first:]
        if self.fast_path is None:
            return super().prefix_values(permutations)
        permutations = np.asarray(permutations, dtype=np.intp)
        self.n_evaluations += permutations.size + len(permutations)
        if hasattr(self.fast_path, "prefix_values_batch"):
            return self.fast_path.prefix_values_batch(permutations)
        out = np.empty((len(permutations), self.n_players + 1, self.n_outputs))
        out[:, 0] = self.empty
        for r, permutation in enumerate(permutations):
            out[r, 1:] = self.fast_path.prefix_residuals(permutation)
        return out


def _rows(X: Any, mask: np.ndarray) -> Any:
    """The rows of ``X`` in ``mask`` (by position for a DataFrame, the raw rows a pipeline refits on)."""
    return X.iloc[np.flatnonzero(mask)] if isinstance(X, pd.DataFrame) else X[mask]


def _seeded(model: Any, seed: int) -> Any:
    """``model``, or a clone of it whose ``random_state`` parameters left at None are set to ``seed``."""
    unset = {key: seed for key, value in model.get_params(deep=True).items()
             if key.rsplit("__", 1)[-1] == "random_state" and value is None}
    return clone(model).set_params(**unset) if unset else model
