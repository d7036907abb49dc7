"""Budgets in time: the clock of one estimate (``max_time``) and the warning about runs estimated to be long."""

from __future__ import annotations

import time
import warnings

from ..exceptions import BudgetWarning

__all__ = ["LONG_RUN_SECONDS", "RunClock", "format_seconds"]

#: A run whose remaining work is estimated above this many seconds is warned about (once, after its first
#: timed batch), with the estimate and the options that shorten it.
LONG_RUN_SECONDS = 600.0


def format_seconds(seconds: float) -> str:
    """``"42 s"``, ``"12 min"``, ``"3.4 h"`` or ``"5.1 days"``.

    Examples
    --------
    >>> from shap_instances.approximators._budget import format_seconds
    >>> format_seconds(42.0), format_seconds(720.0), format_seconds(12240.0)
    ('42 s', '12 min', '3.4 h')
    """
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    if seconds < 3 * 86400:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 86400:.3g} days"


class RunClock:
    """Time spent by one ``estimate`` call, against its ``max_time``, and the long-run warning.

    Parameters
    ----------
    max_time : float or None
        Seconds after which the estimator stops at the end of the current batch (None: no limit).
    what : str
        What the estimator computes, for the warning ("permutations", "coalitions").
    helps : str
        The options that shorten the run, for the warning.
    """

    def __init__(self, max_time: float | None, what: str, helps: str) -> None:
        self.max_time = None if max_time is None else float(max_time)
        self.what, self.helps = what, helps
        self.start = time.perf_counter()
        self.warned = False

    @property
    def elapsed(self) -> float:
        """Seconds since the clock started."""
        return time.perf_counter() - self.start

    def expired(self) -> bool:
        """Whether ``max_time`` has passed (never without one)."""
        return self.max_time is not None and self.elapsed >= self.max_time

    def left(self) -> float | None:
        """Seconds left before ``max_time`` (None without one)."""
        return None if self.max_time is None else max(0.0, self.max_time - self.elapsed)

    def check_long(self, seconds_per_item: float, items_left: int, measured_on: int) -> float:
        """Warn once when ``items_left`` at ``seconds_per_item`` would run past :data:`LONG_RUN_SECONDS`.

        No warning when ``max_time`` bounds the run below that. Returns the estimate in seconds.
        """
        estimate = seconds_per_item * items_left
        bounded = self.max_time is not None and self.max_time <= LONG_RUN_SECONDS
        if not self.warned and not bounded and estimate > LONG_RUN_SECONDS:
            self.warned = True
            warnings.warn(
                f"this run is estimated to need about {format_seconds(estimate)} more for its {items_left:,} "
                f"remaining {self.what} ({seconds_per_item:.3g} s each, measured on the first {measured_on:,}). "
                f"{self.helps}", BudgetWarning, stacklevel=4)
        return estimate
