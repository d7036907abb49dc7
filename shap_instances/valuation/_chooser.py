"""The approximator of a semivalue by name: :func:`semivalue_approximator`, the chooser of :func:`data_values`.

The approximators themselves live in :mod:`shap_instances.approximators` (exact enumeration, weighted
permutations, maximum sample reuse, least-squares Banzhaf, leave-one-out). They call the game through
``game(masks)`` and ``game.prefix_values(permutations)`` only, so every exact refit shortcut of
:class:`~shap_instances.games.ResidualGame` (ridge, OLS, mean, KNN) serves every semivalue.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .._deprecated import renamed_keyword
from ..approximators import (
    ExactApproximator,
    LeaveOneOutApproximator,
    MSRBanzhafApproximator,
    RegressionBanzhafApproximator,
    WeightedPermutationApproximator,
)
from ..exceptions import InvalidParameterError
from ..utils import RandomStateLike, check_finite_result, check_min_evals
from ._semivalues import Semivalue

if TYPE_CHECKING:
    from ..approximators import ShapleyResult
    from ..games import Game

__all__ = ["APPROXIMATORS", "semivalue_approximator"]

#: The approximators by name, as ``semivalue_approximator(approximator=...)`` and ``data_values`` accept them.
APPROXIMATORS = ("auto", "exact", "permutation", "msr", "regression", "loo")

#: The fewest utility evaluations each approximator spends on ``n`` players (one permutation, two coalitions and
#: v(empty), v(all), every coalition...): a smaller ``max_evals`` is refused with this number.
MIN_EVALS: dict[str, Callable[[int], int]] = {
    "exact": lambda n: 2**n,
    "loo": lambda n: n + 2,
    "permutation": lambda n: n + 1,
    "msr": lambda n: 4,
    "regression": lambda n: 2 * (n + 1) + 2,
}

#: The semivalue each approximator that serves one only estimates.
_ONLY_FOR = {"msr": "banzhaf", "regression": "banzhaf", "loo": "loo"}


class _ExactSemivalue:
    """Exact enumeration of any semivalue (``ExactApproximator`` with the semivalue's coalition weights)."""

    def __init__(self, semivalue: Semivalue) -> None:
        self.semivalue = semivalue

    def estimate(self, game: Game) -> ShapleyResult:
        exact = ExactApproximator(silent=True, coalition_weights=self.semivalue.coalition_weights)
        return exact.estimate(game).of_semivalue("exact", self.semivalue.label, self.semivalue.efficient)


#: How each approximator is made: (semivalue, max_evals, random_state) -> an object with ``estimate(game)``.
_MAKE: dict[str, Callable[[Semivalue, int | None, RandomStateLike], Any]] = {
    "exact": lambda semivalue, max_evals, random_state: _ExactSemivalue(semivalue),
    "loo": lambda semivalue, max_evals, random_state: LeaveOneOutApproximator(),
    "msr": lambda semivalue, max_evals, random_state: MSRBanzhafApproximator(max_evals=max_evals,
                                                                             random_state=random_state),
    "regression": lambda semivalue, max_evals, random_state: RegressionBanzhafApproximator(
        max_evals=max_evals, random_state=random_state),
    "permutation": lambda semivalue, max_evals, random_state: WeightedPermutationApproximator(
        semivalue, max_evals=max_evals, random_state=random_state),
}


def semivalue_approximator(semivalue: Semivalue, approximator: str = "auto", *, max_evals: int | None = None,
                           random_state: RandomStateLike = None, n_players: int | None = None,
                           estimator: str | None = None) -> Any:
    """The approximator of ``semivalue`` named by ``approximator`` (an object with ``estimate(game)``).

    ``"auto"``: leave-one-out exactly; every coalition for games of at most 10 players (``n_players``); MSR for
    Banzhaf; weighted permutations otherwise. ``"msr"`` and ``"regression"`` serve Banzhaf only, ``"loo"``
    leave-one-out only. ``estimator=`` is the deprecated name of ``approximator=`` (it warns until 0.3).

    Parameters
    ----------
    semivalue : Semivalue
    approximator : {"auto", "exact", "permutation", "msr", "regression", "loo"}, default="auto"
    max_evals : int, optional
        Budget in evaluations; refused below what one sample of the approximator costs (when ``n_players`` is given).
    random_state : int, Generator or None
    n_players : int, optional
        Players of the game, for the choice of ``"auto"`` and the budget checks.

    Returns
    -------
    object with ``estimate(game) -> ShapleyResult``

    Examples
    --------
    >>> from shap_instances.valuation import Semivalue, semivalue_approximator
    >>> type(semivalue_approximator(Semivalue("banzhaf"), n_players=100)).__name__
    'MSRBanzhafApproximator'
    """
    approximator = renamed_keyword("semivalue_approximator", "estimator", "approximator", estimator, approximator,
                                   "auto")
    if approximator not in APPROXIMATORS:
        raise InvalidParameterError(f"approximator must be one of {list(APPROXIMATORS)}, got {approximator!r}.")
    if approximator == "auto":
        approximator = _auto(semivalue, max_evals, n_players)
    if n_players is not None:
        if approximator == "exact" and n_players > ExactApproximator().max_players:  # refused below, with the reason
            return _ExactSemivalue(semivalue)
        _check_budget(semivalue, approximator, max_evals, n_players)
    only = _ONLY_FOR.get(approximator)
    if only is not None and semivalue.name != only:
        raise InvalidParameterError(f"approximator={approximator!r} estimates "
                                    f"{'leave-one-out' if only == 'loo' else 'Banzhaf'} values only, not "
                                    f"{semivalue.label}; use 'permutation' or 'exact'.")
    return _MAKE[approximator](semivalue, max_evals, random_state)


def _auto(semivalue: Semivalue, max_evals: int | None, n_players: int | None) -> str:
    """What ``approximator="auto"`` means for ``semivalue`` on ``n_players`` within ``max_evals``."""
    enumerable = n_players is not None and n_players <= 10 and (max_evals is None or max_evals >= 2**n_players)
    if semivalue.name == "loo":
        return "loo"
    if enumerable:
        return "exact"
    return "msr" if semivalue.name == "banzhaf" else "permutation"


def _check_budget(semivalue: Semivalue, approximator: str, max_evals: int | None, n_players: int) -> None:
    """Refuse a ``max_evals`` below one sample of ``approximator``, or weights that overflow."""
    check_min_evals(max_evals, MIN_EVALS[approximator](n_players),
                    f"approximator={approximator!r} of {semivalue.label} values of {n_players} players")
    check_finite_result(semivalue.size_weights(n_players), f"the {semivalue.label} weights of {n_players} "
                        "players", why="Beta Shapley's weights overflow at these parameters; pass alpha and beta "
                        "of a size the Beta function can be evaluated at (Kwon & Zou use 16 and 1)")
