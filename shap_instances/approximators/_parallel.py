"""Parallel evaluation of a game through joblib (so any joblib backend works, dask included).

When to use workers at all is decided here, from the game and the measured cost (:func:`plan_workers`):

* a game whose evaluations are cheap (``game.cheap``: the exact refit shortcuts) is always evaluated in the
  calling process, with BLAS limited to one thread (:func:`blas_single_thread`);
* otherwise the first batch runs in the calling process and is timed; a local process pool (loky,
  multiprocessing) is started only when the serial work left exceeds :data:`POOL_WORTH_SECONDS`, a few pool
  starts; threads and an already running dask cluster have no start cost;
* ``n_jobs`` beyond the machine's cores is capped to them for local backends, with a :class:`BudgetWarning`;
  under the dask backend it is passed on (the cluster decides).
"""

from __future__ import annotations

import contextlib
import copy
import time
import warnings
from collections.abc import Iterator
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

import numpy as np
from joblib import Parallel, delayed, effective_n_jobs, parallel_config
from joblib.parallel import get_active_backend
from threadpoolctl import ThreadpoolController
from tqdm.auto import tqdm

from ..exceptions import BudgetWarning
from ..utils import available_cores, dask_client
from ._budget import Throughput

if TYPE_CHECKING:
    from ..games import Game

__all__ = ["POOL_WORTH_SECONDS", "blas_single_thread", "dask_scheduler", "local_evaluation", "parallel_prefix_values",
           "parallel_values", "plan_workers"]

#: A local process pool is started only when the serial work left is estimated above this many seconds: starting
#: loky's workers and sending them the game took 0.5 to 2 s on the 2-core development machine under load.
POOL_WORTH_SECONDS = 4.0

_CONTROLLER: ThreadpoolController | None = None


def blas_single_thread() -> AbstractContextManager[Any]:
    """A context in which BLAS uses one thread (threadpoolctl; the controller is built once per process).

    Small products (a 442 x 10 by 10 x 442 one, say) ran 9x slower with two OpenBLAS threads on a loaded
    2-core machine; hot loops of cheap evaluations run inside this context.
    """
    global _CONTROLLER
    if _CONTROLLER is None:
        _CONTROLLER = ThreadpoolController()
    return _CONTROLLER.limit(limits=1, user_api="blas")


def local_evaluation() -> AbstractContextManager[Any]:
    """A context for evaluating a game in this process: a model's own joblib calls (a forest's trees) stay here.

    Under a distributed backend (dask), joblib would otherwise send every tree of every refit to the cluster as
    a task of its own; the estimators' batches are the unit of distributed work. Elsewhere it does nothing.
    """
    if _backend_name() == "DaskDistributedBackend":
        return parallel_config(backend="sequential")
    return contextlib.nullcontext()


def _backend_name() -> str:
    backend, _ = get_active_backend()
    return type(backend).__name__


def plan_workers(n_jobs: int | None, *, cheap: bool = False, seconds_left: float | None = None,
                 note: bool = True) -> int:
    """How many joblib workers to use: 1 means evaluate in the calling process.

    Parameters
    ----------
    n_jobs : int or None
        What the user asked for (joblib semantics: -1 all cores).
    cheap : bool
        The game's evaluations are cheap (no pool is ever worth it).
    seconds_left : float, optional
        Estimated serial seconds of the work left (measured on a first batch); None: unknown (use workers).
    note : bool, default=True
        Warn when ``n_jobs`` is capped to the cores.

    Examples
    --------
    >>> from shap_instances.approximators._parallel import plan_workers
    >>> plan_workers(2, cheap=True), plan_workers(None), plan_workers(2, seconds_left=0.01)
    (1, 1, 1)
    """
    if n_jobs in (None, 1) or cheap:
        return 1
    backend = _backend_name()
    n_workers = effective_n_jobs(n_jobs)
    if backend in ("LokyBackend", "MultiprocessingBackend", "ThreadingBackend"):
        cores = available_cores()
        if n_workers > cores and note:
            warnings.warn(f"n_jobs={n_jobs} asks for more workers than the {cores} cores of this machine; using "
                          f"{cores} (more workers than cores only adds start-up and switching costs).",
                          BudgetWarning, stacklevel=3)
        n_workers = min(n_workers, cores)
    if backend == "DaskDistributedBackend":  # a cluster the user asked for: use it, even with one worker
        return max(n_workers, 2)
    if n_workers <= 1:
        return 1
    start_cost = backend in ("LokyBackend", "MultiprocessingBackend")
    if start_cost and seconds_left is not None and seconds_left < POOL_WORTH_SECONDS:
        return 1
    return n_workers


@contextlib.contextmanager
def dask_scheduler(address: Any) -> Iterator[Any]:
    """Send the joblib work inside the block to a dask.distributed cluster (``None``: do nothing).

    Parameters
    ----------
    address : str, distributed.Client or None
        A scheduler address (``"tcp://10.0.0.5:8786"``), a running ``Client``, or ``"local"`` for a
        ``LocalCluster`` on this machine (one worker process per core, started and closed here).

    Examples
    --------
    >>> from shap_instances.approximators import dask_scheduler
    >>> with dask_scheduler(None):
    ...     pass
    """
    with dask_client(address) as client:
        if client is None:
            yield None
            return
        with parallel_config(backend="dask"):
            yield client


def _on_copy(game: Game, method: str, batch: np.ndarray) -> tuple[Any, dict]:
    """Run ``game.<method>(batch)`` on a copy and return the result with the counts the copy accumulated.

    Working on a copy makes every backend behave alike: process-based ones (loky, dask) copy the game
    anyway, and thread-based ones would otherwise race on the counters.
    """
    worker: Any = copy.copy(game)  # games that report failures have a `quiet` switch
    worker.quiet = True  # the caller reports failures once, after merging the counts
    before = worker.counters()
    # one task is one unit of parallelism: joblib calls inside the model (a forest's trees) run here, in
    # sequence, instead of going back to the backend (under dask each tree would become a task of its own)
    with parallel_config(backend="sequential"):
        result = getattr(worker, method)(batch)
    delta = {key: value - before[key] if isinstance(value, int | float) else value
             for key, value in worker.counters().items()}
    return result, delta


def _here(game: Game, method: str, batch: np.ndarray) -> tuple[Any, None]:
    """``game.<method>(batch)`` in this process (a model's own joblib calls kept here), with no counts to merge."""
    with local_evaluation():
        return getattr(game, method)(batch), None


def _distribute(game: Game, method: str, batches: np.ndarray, n_jobs: int | None, silent: bool, desc: str,
                chunk_size: int) -> tuple[list, list]:
    """``game.<method>`` over chunks of ``batches``, in order, merging the workers' counts into ``game``."""
    if n_jobs in (None, 1):
        parallel, n_workers = None, 1
    else:
        parallel = Parallel(n_jobs=n_jobs, return_as="generator")
        n_workers = max(1, abs(parallel.n_jobs or 1))
    n_chunks = min(len(batches), max(len(batches) // max(chunk_size, 1), 4 * n_workers if parallel else 1))
    chunks = [chunk for chunk in np.array_split(batches, max(n_chunks, 1)) if len(chunk)]
    if parallel is None:
        jobs = (_here(game, method, chunk) for chunk in chunks)
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


def parallel_prefix_values(game: Game, permutations: np.ndarray, n_jobs: int | None) -> np.ndarray:
    """``game.prefix_values(permutations)``, split over ``n_jobs`` joblib workers (as :func:`plan_workers` gives).

    Results are identical for every ``n_jobs``: the permutations are drawn in the caller and only their
    evaluation is distributed. The workers' evaluation and failure counts are added to ``game``.
    """
    if n_jobs in (None, 1) or len(permutations) < 2:
        return game.prefix_values(permutations)
    parts, _ = _distribute(game, "prefix_values", permutations, n_jobs, True, "permutations", 1)
    return np.concatenate(parts, axis=0)


def parallel_values(game: Game, masks: np.ndarray, n_jobs: int | None = None, *, silent: bool = True,
                    desc: str = "coalitions", chunk_size: int = 64) -> np.ndarray:
    """``game(masks)`` with the new coalitions evaluated in chunks over ``n_jobs`` joblib workers.

    The game's cache and evaluation counter work as in ``game(masks)``; a progress bar over the chunks
    shows unless ``silent``. Cheap games are evaluated in the calling process (BLAS on one thread); other
    games evaluate a first chunk there, timed, and use workers for the rest only when :func:`plan_workers`
    finds them worth starting.
    """
    def evaluator(coalitions: np.ndarray) -> np.ndarray:
        if getattr(game, "cheap", False):
            with blas_single_thread():
                return game.value_function(coalitions)
        if (n_jobs in (None, 1) and silent) or len(coalitions) < 2:
            with local_evaluation():
                return game.value_function(coalitions)
        parts, jobs = [], plan_workers(n_jobs)
        if jobs > 1 and len(coalitions) > chunk_size:  # time a first chunk here: is a pool worth its start?
            start = time.perf_counter()
            with local_evaluation():
                parts.append(game.value_function(coalitions[:chunk_size]))
            pace = Throughput.measure(time.perf_counter() - start, chunk_size)
            seconds_left = pace.seconds_for(len(coalitions) - chunk_size)
            jobs = plan_workers(n_jobs, seconds_left=seconds_left, note=False)
            coalitions = coalitions[chunk_size:]
        if jobs == 1 and silent:
            with local_evaluation():
                parts.append(game.value_function(coalitions))
        else:
            parts.extend(_distribute(game, "value_function", coalitions, jobs, silent, desc, chunk_size)[0])
        return np.concatenate([np.asarray(part, dtype=np.float64).reshape(len(part), -1) for part in parts])

    return game.evaluate(masks, evaluator)
