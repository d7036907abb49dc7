"""The numba helpers shared by the kernel families (``utils.kernels``): ``copy_into``, ``kth_smallest`` (against
numpy's own ``np.partition``) and ``on_threads`` (chunks, errors, a call from its own pool)."""

import os
import subprocess
import sys
import threading

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from shap_instances.utils.kernels import copy_into, kth_smallest, on_threads

#: Values with many ties (the zeros of a sparse vector), negatives, and spans of many magnitudes.
VALUES = hnp.arrays(np.float64, st.integers(1, 80),
                    elements=st.one_of(st.just(0.0), st.sampled_from([1.0, -1.0, 2.5]),
                                       st.floats(-1e6, 1e6, allow_nan=False, allow_subnormal=False)))


@given(VALUES, st.data())
def test_kth_smallest_is_numpys_partition_and_leaves_the_input_alone(values, data):
    k = data.draw(st.integers(0, len(values) - 1))
    before = values.copy()
    assert kth_smallest(values, k) == np.partition(values, k)[k]
    np.testing.assert_array_equal(values, before)


def test_kth_smallest_on_sorted_reversed_and_constant_input():
    for values in (np.arange(50.0), np.arange(50.0)[::-1].copy(), np.full(50, 3.0)):
        assert [kth_smallest(values, k) for k in range(50)] == list(np.sort(values))


def test_copy_into_copies_a_row_of_a_larger_array():
    target = np.zeros((3, 4))
    copy_into(target[1], np.arange(4.0))
    np.testing.assert_array_equal(target, [[0, 0, 0, 0], [0, 1, 2, 3], [0, 0, 0, 0]])


@pytest.mark.parametrize("count, threads", [(0, 2), (1, 2), (5, 1), (7, 2), (7, 3), (100, 4)])
def test_on_threads_covers_every_item_once_in_contiguous_chunks(count, threads):
    calls: list[tuple[int, int]] = []
    lock = threading.Lock()

    def task(start, stop):
        with lock:
            calls.append((start, stop))

    on_threads(task, count, threads)
    covered = sorted(i for start, stop in calls for i in range(start, stop))
    assert covered == list(range(count))
    assert len(calls) == max(1, min(threads, count))
    sizes = [stop - start for start, stop in calls]
    assert max(sizes) - min(sizes) <= 1


def test_on_threads_raises_a_chunks_error_after_every_chunk_has_ended():
    ended = []

    def task(start, stop):
        if start == 0:
            raise ValueError("chunk 0 failed")
        ended.append(start)

    with pytest.raises(ValueError, match="chunk 0 failed"):
        on_threads(task, 4, threads=4)
    assert sorted(ended) == [1, 2, 3]


#: A chunk that itself calls ``on_threads`` (a walk inside a walk), more chunks than the pool has threads: run in a
#: process of its own, so that a deadlock fails the test instead of hanging the run.
NESTED = """
import threading
from shap_instances.utils.kernels import on_threads
inner, lock = [], threading.Lock()
def add(a, b):
    with lock:
        inner.extend(range(a, b))
on_threads(lambda start, stop: on_threads(add, 3, threads=2), 8, threads=8)
assert sorted(inner) == sorted(list(range(3)) * 8), inner
print("done")
"""


def test_on_threads_called_from_its_own_pool_runs_in_turn_without_waiting_on_itself():
    done = subprocess.run([sys.executable, "-c", NESTED], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "NUMBA_NUM_THREADS": "2"})
    assert done.returncode == 0 and done.stdout.strip() == "done", done.stderr[-2000:]
