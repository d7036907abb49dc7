"""Parallel evaluation of a game through joblib (so any joblib backend works, dask included)."""

from __future__ import annotations

import numpy as np
from joblib import Parallel, delayed

__all__ = ["parallel_prefix_values", "parallel_values"]


def _prefix_values(game, permutations):
    return game.prefix_values(permutations)


def parallel_prefix_values(game, permutations: np.ndarray, n_jobs: int | None) -> np.ndarray:
    """``game.prefix_values(permutations)``, split over ``n_jobs`` joblib workers.

    Results are identical for every ``n_jobs``: the permutations are drawn in the caller and only their
    evaluation is distributed. Workers get copies of the game, so evaluation counts are kept by the caller.
    """
    if n_jobs in (None, 1) or len(permutations) < 2:
        return game.prefix_values(permutations)
    parallel = Parallel(n_jobs=n_jobs)
    n_chunks = min(len(permutations), max(2, 4 * abs(parallel.n_jobs if parallel.n_jobs else 1)))
    chunks = np.array_split(permutations, n_chunks)
    parts = parallel(delayed(_prefix_values)(game, chunk) for chunk in chunks if len(chunk))
    return np.concatenate(parts, axis=0)


def _values(game, masks):
    return game.value_function(masks)


def parallel_values(game, masks: np.ndarray, n_jobs: int | None) -> np.ndarray:
    """``game(masks)`` split over ``n_jobs`` joblib workers; the evaluation count is updated here."""
    if n_jobs in (None, 1) or len(masks) < 2:
        return game(masks)
    parallel = Parallel(n_jobs=n_jobs)
    n_chunks = min(len(masks), max(2, 4 * abs(parallel.n_jobs if parallel.n_jobs else 1)))
    chunks = [chunk for chunk in np.array_split(masks, n_chunks) if len(chunk)]
    parts = parallel(delayed(_values)(game, chunk) for chunk in chunks)
    game.n_evaluations += len(masks)
    return np.concatenate([game._checked(part, len(chunk)) for part, chunk in zip(parts, chunks)])
