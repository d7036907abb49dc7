"""Numba helpers that the kernels of several families call, and the threads that run a kernel over chunks of its
work (imported by kernel modules only: importing :mod:`shap_instances.utils` does not import numba)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, wait

import numba
import numpy as np
from numba import njit

from ._numba import JIT_OPTIONS

__all__ = ["copy_into", "kth_smallest", "on_threads"]


#: The threads that :func:`on_threads` hands chunks to, made on first use and kept (a pool made per call cost
#: more than a small walk itself); its threads' names start with this prefix.
_POOL_PREFIX = "shap_instances_kernel"
_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


def on_threads(task: Callable[[int, int], object], count: int, threads: int | None = None) -> None:
    """``task(start, stop)`` over ``range(count)`` cut into up to ``threads`` contiguous chunks of (nearly) equal
    size, the first on the calling thread and each other on a thread of a pool kept for the process.

    The kernels release the GIL (``nogil``), so the chunks run in parallel. This replaces numba's ``prange``: a
    ``parallel=True`` kernel compiles its loop body into a gufunc and links the whole walk below it once more,
    which cost about a third of the refit family's compilation (``docs/engine.md``, "Compilation"). A call from
    one of the pool's own threads runs its chunks in turn (no pool thread waits on another). The first exception a
    chunk raises is raised here, after every chunk has ended.

    Parameters
    ----------
    task : callable
        ``task(start, stop)`` does the items ``start <= i < stop``; the chunks must be independent.
    count : int
        Items in all.
    threads : int, optional
        Chunks at most; default numba's number of threads (``numba.get_num_threads()``, which the package's
        thread limits set).

    Examples
    --------
    >>> out = [0] * 5
    >>> def square(start, stop):
    ...     for i in range(start, stop):
    ...         out[i] = i * i
    >>> on_threads(square, 5, threads=2); out
    [0, 1, 4, 9, 16]
    """
    width = max(1, min(numba.get_num_threads() if threads is None else threads, count))
    bounds = [count * part // width for part in range(width + 1)]
    if width == 1 or threading.current_thread().name.startswith(_POOL_PREFIX):
        for part in range(width):
            task(bounds[part], bounds[part + 1])
        return
    others = [_the_pool().submit(task, bounds[part], bounds[part + 1]) for part in range(1, width)]
    try:
        task(bounds[0], bounds[1])
    finally:
        wait(others)
    for future in others:
        future.result()


def _the_pool() -> ThreadPoolExecutor:
    """The pool of :func:`on_threads`, as many threads as numba may use (``NUMBA_NUM_THREADS``), made once."""
    global _pool
    with _pool_lock:
        if _pool is None:
            threads = numba.config.NUMBA_NUM_THREADS  # type: ignore[attr-defined]  # set at import from the environment
            _pool = ThreadPoolExecutor(max(1, threads), thread_name_prefix=_POOL_PREFIX)
        return _pool


@njit(**JIT_OPTIONS)
def copy_into(target: np.ndarray, source: np.ndarray) -> None:
    """``target[:] = source`` for two 1-d arrays of one length, element by element.

    Inside a kernel, numba compiles a slice assignment from an array with a shape check whose error message needs
    numba's string formatting. That formatting code is linked into the kernel, and into every kernel above it,
    each of which LLVM optimises again: in the logistic family it was about half of a first call's compilation
    (``docs/engine.md``, "Compilation"). Nothing is checked here: every caller passes equal lengths.

    Examples
    --------
    >>> import numpy as np
    >>> target = np.zeros(3)
    >>> copy_into(target, np.array([1.0, 2.0, 3.0])); target
    array([1., 2., 3.])
    """
    for i in range(target.shape[0]):
        target[i] = source[i]


@njit(**JIT_OPTIONS)
def kth_smallest(values: np.ndarray, k: int) -> float:
    """The ``k``-th smallest of the finite 1-d ``values`` (``k`` from 0), as ``np.partition(values, k)[k]`` gives it,
    in O(n) expected time on a copy (``values`` is left as it is).

    Quickselect with a three-way partition (ties, as the many zeros of a sparse vector, are settled in one pass) on
    the median of the first, middle and last values of the range. numba's ``np.partition`` computes the same
    number, but its compilation (a slice assignment's shape check with its error message, and the partition of
    every axis) took about a third of the boosting family's (``docs/engine.md``, "Compilation").

    Examples
    --------
    >>> import numpy as np
    >>> kth_smallest(np.array([3.0, 1.0, 2.0, 1.0]), 2)
    2.0
    """
    work = values.copy()
    lo, hi = 0, work.shape[0] - 1
    while lo < hi:
        a, b, c = work[lo], work[(lo + hi) // 2], work[hi]
        pivot = max(min(a, b), min(max(a, b), c))  # the median of the three
        below, i, above = lo, lo, hi  # [lo, below) < pivot, [below, i) == pivot, (above, hi] > pivot
        while i <= above:
            value = work[i]
            if value < pivot:
                work[i], work[below] = work[below], value
                below += 1
                i += 1
            elif value > pivot:
                work[i], work[above] = work[above], value
                above -= 1
            else:
                i += 1
        if k < below:
            hi = below - 1
        elif k > above:
            lo = above + 1
        else:
            return pivot
    return work[k]
