"""The refusal of a run whose first batch, timed, puts the rest above the default time limit."""

from __future__ import annotations

import time

from ._budget import DEFAULT_TIME_LIMIT, Throughput, format_seconds

__all__ = ["check_time_left"]


def check_time_left(started: float, done: int, total: int, what: str, instead: str) -> None:
    """Refuse a run whose first ``done`` of ``total`` items, begun at ``started`` (``time.perf_counter``), put the
    rest above :data:`~shap_instances.approximators.DEFAULT_TIME_LIMIT` (24 hours), with the estimate.

    Raises
    ------
    BudgetError
        Naming the estimate, the time spent on the first items and ``instead`` (what to do).

    Examples
    --------
    >>> import time
    >>> from shap_instances.approximators import check_time_left
    >>> check_time_left(time.perf_counter(), 8, 100, "permutations", "pass a smaller max_evals")  # quick: passes
    """
    spent = time.perf_counter() - started
    Throughput.measure(spent, done).check_fits(total - done, DEFAULT_TIME_LIMIT, refusal=lambda estimate: (
        f"refused before the rest of the work: the {total - done:,} remaining {what} are estimated to need about "
        f"{format_seconds(estimate)} ({format_seconds(spent)} for the first {done:,}), above the limit of "
        f"{format_seconds(DEFAULT_TIME_LIMIT)}; {instead}."))
