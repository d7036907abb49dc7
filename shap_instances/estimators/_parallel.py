"""Parallel evaluation of a game through joblib (so any joblib backend works, dask included)."""

from __future__ import annotations

import copy

import numpy as np
from joblib import Parallel, delayed
from tqdm.auto import tqdm

__all__ = ["parallel_prefix_values", "parallel_values"]


def _on_copy(game, method: str, batch):
    """Run ``game.<method>(batch)`` on a copy and return the result with the counts the copy accumulated.

    Working on a copy makes every backend behave alike: process-based ones (loky, dask) copy the game
    anyway, and thread-based ones would otherwise race on the counters.
    """
    worker = copy.copy(game)
    worker.quiet = True  # the caller reports failures once, after merging the counts
    before = worker.counters()
    result = getattr(worker, method)(batch)
    delta = {key: value - before[key] if isinstance(value, int | float) else value
             for key, value in worker.counters().items()}
    return result, delta


def _distribute(game, method: str, batches: np.ndarray, n_jobs, silent: bool, desc: str, chunk_size: int):
    """``game.<method>`` over chunks of ``batches``, in order, merging the workers' counts into ``game``."""
    if n_jobs in (None, 1):
        parallel, n_workers = None, 1
    else:
        parallel = Parallel(n_jobs=n_jobs, return_as="generator")
        n_workers = max(1, abs(parallel.n_jobs or 1))
    n_chunks = min(len(batches), max(len(batches) // max(chunk_size, 1), 4 * n_workers if parallel else 1))
    chunks = [chunk for chunk in np.array_split(batches, max(n_chunks, 1)) if len(chunk)]
    if parallel is None:
        jobs = ((getattr(game, method)(chunk), None) for chunk in chunks)
    else:
        jobs = parallel(delayed(_on_copy)(game, method, chunk) for chunk in chunks)
    parts = []
    with tqdm(total=len(batches), desc=desc, disable=silent or len(chunks) < 2, leave=False) as bar:
        for chunk, (part, delta) in zip(chunks, jobs):
            if delta is not None:
                game.add_counters(delta)
            parts.append(part)
            bar.update(len(chunk))
    return parts, chunks


def parallel_prefix_values(game, permutations: np.ndarray, n_jobs: int | None) -> np.ndarray:
    """``game.prefix_values(permutations)``, split over ``n_jobs`` joblib workers.

    Results are identical for every ``n_jobs``: the permutations are drawn in the caller and only their
    evaluation is distributed. The workers' evaluation and failure counts are added to ``game``.
    """
    if n_jobs in (None, 1) or len(permutations) < 2:
        return game.prefix_values(permutations)
    parts, _ = _distribute(game, "prefix_values", permutations, n_jobs, True, "permutations", 1)
    return np.concatenate(parts, axis=0)


def parallel_values(game, masks: np.ndarray, n_jobs: int | None = None, *, silent: bool = True,
                    desc: str = "coalitions", chunk_size: int = 64) -> np.ndarray:
    """``game(masks)`` with the new coalitions evaluated in chunks over ``n_jobs`` joblib workers.

    The game's cache and evaluation counter work as in ``game(masks)``; a progress bar over the chunks
    shows unless ``silent``.
    """
    def evaluator(coalitions):
        if (n_jobs in (None, 1) and silent) or len(coalitions) < 2:
            return game.value_function(coalitions)
        parts, _ = _distribute(game, "value_function", coalitions, n_jobs, silent, desc, chunk_size)
        return np.concatenate([np.asarray(part, dtype=np.float64).reshape(len(part), -1) for part in parts])

    return game.evaluate(masks, evaluator)
