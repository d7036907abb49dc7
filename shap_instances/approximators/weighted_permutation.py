"""Any semivalue of a vector-valued game from random permutations, each contribution weighted by its position."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

import numpy as np

from ..utils import RandomStateLike, check_random_state
from ._budget import check_time_left
from ._result import ShapleyResult, standard_errors_of_means
from .permutation import PermutationApproximator
from .sampling import random_permutations

if TYPE_CHECKING:
    from ..games import Game
    from ._protocol import SemivalueWeights

__all__ = ["WeightedPermutationApproximator"]

_BATCH_FLOATS = 1 << 22  # floats of prefix values held per batch


class WeightedPermutationApproximator:
    """Any semivalue from random permutations: contributions at position ``s`` weighted by ``n C(n-1, s) p(s)``.

    A uniform permutation puts player ``i`` after a uniform set of ``s`` others, ``s`` uniform on ``0..n-1``, so
    the weighted contribution is an unbiased sample of the semivalue; one permutation gives one sample for every
    player (standard errors from the spread of the samples). For Shapley the weights are all 1 and
    :class:`~shap_instances.approximators.PermutationApproximator` is used instead (same estimator, plus
    antithetic pairs, truncation and checkpoints).

    Parameters
    ----------
    semivalue : shap_instances.valuation.Semivalue
        Or any object with its ``label``, ``efficient`` and ``size_weights(n)`` (:class:`SemivalueWeights`).
    n_permutations : int, optional
        Default: as many as ``max_evals`` allows (one permutation costs ``n + 1`` evaluations), else ``max(32, 2n)``.
    max_evals : int, optional
    random_state : int, Generator or None

    Examples
    --------
    >>> import numpy as np
    >>> from shap_instances.games import FunctionGame
    >>> from shap_instances.approximators import WeightedPermutationApproximator
    >>> from shap_instances.valuation import Semivalue
    >>> game = FunctionGame(lambda m: m @ np.arange(1.0, 5.0), 4)          # additive: every semivalue is the weight
    >>> r = WeightedPermutationApproximator(Semivalue("banzhaf"), 2000, random_state=0).estimate(game)
    >>> bool(np.all(np.abs(r.values.ravel() - [1, 2, 3, 4]) < 4 * r.standard_errors.ravel())), r.info["efficient"]
    (True, False)
    """

    def __init__(self, semivalue: SemivalueWeights, n_permutations: int | None = None, max_evals: int | None = None,
                 random_state: RandomStateLike = None) -> None:
        self.semivalue = semivalue
        self.n_permutations = n_permutations
        self.max_evals = max_evals
        self.random_state = random_state

    def estimate(self, game: Game) -> ShapleyResult:
        """The semivalue of every player of ``game``, with standard errors."""
        n, d = game.n_players, game.n_outputs
        k = self.n_permutations or (max(1, self.max_evals // (n + 1)) if self.max_evals else max(32, 2 * n))
        if self.semivalue.efficient:
            approximator = PermutationApproximator(n_permutations=k, antithetic=False, random_state=self.random_state,
                                                   silent=True)
            return approximator.estimate(game).of_semivalue("permutation", self.semivalue.label, True)
        rng, weights = check_random_state(self.random_state), self.semivalue.size_weights(n)
        total, squares = np.zeros((n, d)), np.zeros((n, d))
        start, done, rows, started = game.n_evaluations, 0, np.arange(n), time.perf_counter()
        empty = full = np.zeros(d)
        while done < k:
            batch = min(k - done, max(1, _BATCH_FLOATS // ((n + 1) * d)), k if done else 8)  # a first batch timed
            permutations = random_permutations(rng, batch, n, by="shuffling")
            prefixes = game.prefix_values(permutations)
            empty, full = prefixes[0, 0], prefixes[0, -1]
            contributions = np.diff(prefixes, axis=1) * weights[None, :, None]  # (batch, n, d) by position
            for r in range(batch):
                sample = np.empty((n, d))
                sample[permutations[r]] = contributions[r, rows]
                total += sample
                squares += sample**2
            if done == 0 and batch < k:
                check_time_left(started, batch, k, "permutations", "pass a smaller max_evals")
            done += batch
        result = ShapleyResult(total / k, np.asarray(empty, dtype=np.float64), np.asarray(full, dtype=np.float64),
                               standard_errors=standard_errors_of_means(total, squares, np.full((n, 1), k)),
                               n_evaluations=game.n_evaluations - start, info={"n_permutations": k})
        return result.of_semivalue("weighted permutation", self.semivalue.label, self.semivalue.efficient)
