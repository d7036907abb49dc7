"""Exact Shapley values by enumerating every coalition (M up to about 16 players)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np
from tqdm.auto import tqdm

from ..exceptions import GameTooLargeError
from ._parallel import parallel_values
from ._result import ShapleyResult
from ._weights import shapley_weights

if TYPE_CHECKING:
    from ..games import Game

__all__ = ["ExactApproximator", "all_coalitions"]


def all_coalitions(n_players: int, start: int = 0, stop: int | None = None) -> np.ndarray:
    """Masks of the coalitions with bitmask ``start..stop-1`` (bit j set = player j present), shape (k, M).

    Examples
    --------
    >>> from shap_instances.approximators.exact import all_coalitions
    >>> all_coalitions(2).astype(int).tolist()
    [[0, 0], [1, 0], [0, 1], [1, 1]]
    """
    stop = 2**n_players if stop is None else stop
    codes = np.arange(start, stop, dtype=np.int64)
    return ((codes[:, None] >> np.arange(n_players, dtype=np.int64)[None, :]) & 1).astype(bool)


class ExactApproximator:
    """Exact Shapley values of a vector-valued game by full enumeration of the 2^M coalitions.

    ``phi_i = sum_S w(|S|) (v(S + i) - v(S))`` is evaluated as one weighted sum over coalitions, in chunks
    of ``chunk_size`` coalitions so memory stays bounded.

    Parameters
    ----------
    max_players : int, default=16
        Refuse larger games (2^M evaluations): use :class:`PermutationApproximator` or
        :class:`KernelApproximator` instead (``approximator="permutation"`` or ``approximator="kernel"`` in
        :class:`~shap_instances.InstanceKernelExplainer`).
    chunk_size : int, default=8192
        Coalitions evaluated per call of the game.
    n_jobs : int or None
        joblib workers evaluating each chunk (any joblib backend, dask included).
    silent : bool, default=False
        No progress bar.
    coalition_weights : callable, optional
        ``n_players -> (w_in, w_out)``, the weights by coalition size of the sum over coalitions (default
        :func:`shapley_weights`); another semivalue's (``Semivalue.coalition_weights`` of
        :mod:`shap_instances.valuation`) gives that semivalue exactly.

    Examples
    --------
    >>> import numpy as np
    >>> from shap_instances.games import FunctionGame
    >>> from shap_instances.approximators import ExactApproximator
    >>> glove = FunctionGame(lambda m: np.minimum(m[:, :1].sum(1), m[:, 1:].sum(1)).astype(float), 3)
    >>> ExactApproximator().estimate(glove).values.ravel().round(4).tolist()
    [0.6667, 0.1667, 0.1667]
    """

    def __init__(self, max_players: int = 16, chunk_size: int = 8192, n_jobs: int | None = None,
                 silent: bool = False, coalition_weights: Callable[[int], tuple[np.ndarray, np.ndarray]] | None = None
                 ) -> None:
        self.max_players = max_players
        self.coalition_weights = coalition_weights
        self.chunk_size = chunk_size
        self.n_jobs = n_jobs
        self.silent = silent

    def estimate(self, game: Game) -> ShapleyResult:
        """Shapley values of ``game`` (a :class:`~shap_instances.games.Game`)."""
        m = game.n_players
        if m > self.max_players:
            raise GameTooLargeError(
                f"exact enumeration of a game with {m} players needs 2^{m} = {2**m:,} evaluations (max_players="
                f"{self.max_players}); use PermutationApproximator or KernelApproximator (in InstanceKernelExplainer: "
                "approximator='permutation' or approximator='kernel'), or raise max_players."
            )
        w_in, w_out = (self.coalition_weights or shapley_weights)(m)
        phi = np.zeros((m, game.n_outputs))
        empty = full = None
        start_evals = game.n_evaluations
        starts = range(0, 2**m, self.chunk_size)
        for start in tqdm(starts, desc="coalition chunks", disable=self.silent or len(starts) < 2, leave=False):
            masks = all_coalitions(m, start, min(2**m, start + self.chunk_size))
            values = parallel_values(game, masks, self.n_jobs, silent=self.silent or len(starts) > 1,
                                     desc="coalitions")
            sizes = masks.sum(axis=1)
            coefficients = np.where(masks, w_in[sizes][:, None], -w_out[sizes][:, None])
            phi += coefficients.T @ values
            if start == 0:
                empty = values[0]
            full = values[-1]
        assert empty is not None and full is not None  # the first chunk sets both
        return ShapleyResult(
            values=phi, empty_value=empty, full_value=full, n_evaluations=game.n_evaluations - start_evals,
            approximator="exact",
        )
