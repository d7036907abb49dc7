"""The registry of refit shortcuts: each model family declares which models it refits exactly, and how.

A *fast path* reproduces the refits of a residual game (:class:`~shap_instances.games.ResidualGame`) of the
models it ``supports`` without calling ``fit``: the family that owns the model's maths (``linear/``,
``neighbors/``, ``naive_bayes/``, ``discriminant/``, ``forest/``) implements it beside its numba kernels and
registers it here on import, with :func:`register_fast_path`. The game engine and the approximators ask this
registry (:func:`fast_path_for`, :func:`named_refits`) and the path's own methods (:class:`FastPath`), never a
class name or an attribute layout. ``games`` sits above the families in the layers, so the registry imports the
family packages of :data:`FAST_PATH_FAMILIES` by name, once, the first time it is asked.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator, Mapping
from typing import Any, NamedTuple, Protocol, runtime_checkable

import numpy as np

__all__ = ["FAST_PATH_FAMILIES", "FastPath", "RidgeProblem", "exact_fast_paths", "fast_path_for", "named_refits",
           "register_fast_path"]

#: The family packages that register fast paths on import, imported in this order the first time the registry
#: is read (a third-party package registers by calling :func:`register_fast_path` when it is imported).
FAST_PATH_FAMILIES = ("shap_instances.linear", "shap_instances.neighbors", "shap_instances.naive_bayes",
                      "shap_instances.discriminant", "shap_instances.forest")


@runtime_checkable
class FastPath(Protocol):
    """What :class:`~shap_instances.games.ResidualGame` asks of a refit shortcut.

    Built as ``path(model, X, y, X_eval, y_eval, empty)`` (``empty``: v(empty) per explained row). Optional
    capabilities, asked for with ``getattr`` by whoever uses them: ``usable`` (False: data outside the path's
    numeric range, exact refits instead), ``shapley_values()`` (closed form, (n_eval, n_train)),
    ``prefix_values_batch(permutations[, first])``, ``fused`` with ``accumulate(...)`` (a numba kernel along
    permutations), ``starts_walks``, ``cuts_walks`` (class attributes: how it walks prefixes),
    ``first_order_pieces()`` and ``label_shares()`` (the control games of
    :mod:`~shap_instances.approximators.control_variate`) and ``control_path()`` (a path of the same players whose
    Shapley values are in closed form, the default control of its game).
    """

    @classmethod
    def supports(cls, model: Any) -> bool:
        """Whether the path reproduces ``model``'s refits."""

    def fits_all_rows(self) -> bool:
        """Whether the model fits on all training rows (else the game refits once to report why not)."""

    def residuals(self, mask: np.ndarray) -> np.ndarray:
        """v(S) for the coalition ``mask`` (bool, (n_train,)), shape (n_outputs,)."""

    def prefix_residuals(self, permutation: np.ndarray) -> np.ndarray:
        """v of every non-empty prefix of ``permutation``, shape (n_train, n_outputs)."""

    def aggregated(self, weights: np.ndarray) -> FastPath:
        """The path of the weighted sums ``residuals @ weights`` (weights (n_eval, K))."""


class RidgeProblem(NamedTuple):
    """The penalised least-squares problem that every refit of a ridge residual game solves.

    ``f_S`` minimises ``sum_{i in S} (y_i - x_i w - b)^2 + alpha |w|^2`` (``b = 0`` without intercept), and the
    game's value is ``X_eval w + ones * b - y_eval``: the residuals of the explained rows (``ones`` = 1, the
    default None), or, for an aggregate game, their weighted sums (``X_eval = W^T X``, ``ones = W^T 1``,
    ``y_eval = W^T y``). Estimators that exploit this structure
    (:class:`~shap_instances.approximators.RidgeInfluenceApproximator`) read it from
    :attr:`ResidualGame.ridge_problem <shap_instances.games.ResidualGame.ridge_problem>` instead of the model.

    Attributes
    ----------
    X : ndarray (n_train, p)
    y : ndarray of float64 (n_train,)
    X_eval : ndarray (n_eval, p)
    y_eval : ndarray (n_eval,)
    alpha : float
        The penalty (0 for LinearRegression).
    fit_intercept : bool
    ones : ndarray (n_eval,) or None
        Multiplier of the intercept in each output (None: 1).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import Ridge
    >>> from shap_instances.games import ResidualGame
    >>> X, y = np.arange(8.0).reshape(4, 2), np.array([1.0, 2.0, 2.0, 5.0])
    >>> problem = ResidualGame(Ridge(alpha=0.5), X, y).ridge_problem
    >>> problem.alpha, problem.fit_intercept, problem.X.shape
    (0.5, True, (4, 2))
    """

    X: np.ndarray
    y: np.ndarray
    X_eval: np.ndarray
    y_eval: np.ndarray
    alpha: float
    fit_intercept: bool
    ones: np.ndarray | None = None


_EXACT: list[Any] = []  # FastPath classes (Any: mypy reads a protocol's classmethods on instances only)
_NAMED: dict[str, type] = {}
_loaded: list[bool] = []


def register_fast_path(path: type | None = None, *, refit: str = "exact") -> Any:
    """Register ``path`` (a :class:`FastPath` class): an exact shortcut (``refit="exact"``), tried in the order
    of registration by every residual game, or a named approximation of the refits that a game takes only when
    asked for it by name (``ResidualGame(..., refit=name)``). Usable as a class decorator.

    Examples
    --------
    >>> from shap_instances.games import fast_path_for, register_fast_path
    >>> from sklearn.linear_model import Ridge
    >>> fast_path_for(Ridge()).__name__
    'RidgePath'
    """
    def register(cls: type) -> type:
        if refit == "exact":
            if cls not in _EXACT:
                _EXACT.append(cls)
        else:
            _NAMED[refit] = cls
        return cls

    return register if path is None else register(path)


def _load_families() -> None:
    """Import the family packages of :data:`FAST_PATH_FAMILIES` once: each registers its paths on import."""
    if not _loaded:
        _loaded.append(True)
        for family in FAST_PATH_FAMILIES:
            importlib.import_module(family)


def exact_fast_paths() -> tuple[Any, ...]:
    """The registered exact shortcuts, in the order a residual game tries them."""
    _load_families()
    return tuple(_EXACT)


def fast_path_for(model: Any) -> Any:
    """The first registered exact shortcut that supports ``model``, else None."""
    return next((path for path in exact_fast_paths() if path.supports(model)), None)


def named_refits() -> dict[str, type | None]:
    """The refits a residual game takes by name: ``"exact"`` (None: refits or the exact shortcuts) and the
    registered approximations (``"fixed_structure"``: the forest family's fixed-structure path)."""
    _load_families()
    return {"exact": None, **_NAMED}


class _LazyRegistry(Mapping):
    """A read-only view of :func:`named_refits` that loads the families on first use (``REFITS``)."""

    def __init__(self, read: Callable[[], dict[str, type | None]]) -> None:
        self._read = read

    def __getitem__(self, key: str) -> type | None:
        return self._read()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._read())

    def __len__(self) -> int:
        return len(self._read())

    def __repr__(self) -> str:
        return repr(self._read())
