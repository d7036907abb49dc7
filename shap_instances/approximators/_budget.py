"""Budgets in time: the clock of one estimate (``max_time``), the warning about runs estimated to be long, and
the refusal of runs that cannot fit (:class:`~shap_instances.exceptions.BudgetError`)."""

from __future__ import annotations

import time
import warnings

from ..exceptions import BudgetError, BudgetWarning

__all__ = ["DEFAULT_TIME_LIMIT", "LONG_RUN_SECONDS", "RunClock", "format_seconds"]

#: A run whose remaining work is estimated above this many seconds is warned about (once, after its first
#: timed batch), with the estimate and the options that shorten it.
LONG_RUN_SECONDS = 600.0

#: Without ``max_time``, a run whose remaining work is estimated above this many seconds (24 hours) is refused
#: with a :class:`~shap_instances.exceptions.BudgetError` before that work; pass ``max_time=`` to allow more.
DEFAULT_TIME_LIMIT = 86400.0


def format_seconds(seconds: float) -> str:
    """``"0.04 s"``, ``"42 s"``, ``"12 min"``, ``"3.4 h"`` or ``"5.1 days"``.

    Examples
    --------
    >>> from shap_instances.approximators._budget import format_seconds
    >>> format_seconds(0.0412), format_seconds(42.0), format_seconds(720.0), format_seconds(12240.0)
    ('0.041 s', '42 s', '12 min', '3.4 h')
    """
    if seconds < 1:
        return f"{seconds:.2g} s"
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

    def check_long(self, seconds_per_item: float, items_left: int, measured_on: int | str) -> float:
        """Refuse or warn about ``items_left`` at ``seconds_per_item``; returns the estimate in seconds.

        Without ``max_time``, an estimate above :data:`DEFAULT_TIME_LIMIT` raises
        :class:`~shap_instances.exceptions.BudgetError`; one above :data:`LONG_RUN_SECONDS` is warned about
        once (not when ``max_time`` bounds the run below that). ``measured_on`` is the number of items timed,
        or a phrase saying how the time was measured.
        """
        estimate = seconds_per_item * items_left
        how = f"the first {measured_on:,}" if isinstance(measured_on, int) else measured_on
        said = (f"{format_seconds(estimate)} for its {items_left:,} remaining {self.what} "
                f"({seconds_per_item:.3g} s each, measured on {how})")
        if self.max_time is None and estimate > DEFAULT_TIME_LIMIT:
            raise BudgetError(f"refused before the work: this run is estimated to need about {said}, above the "
                              f"default limit of {format_seconds(DEFAULT_TIME_LIMIT)} for a run without max_time. "
                              f"{self.helps}")
        bounded = self.max_time is not None and self.max_time <= LONG_RUN_SECONDS
        if not self.warned and not bounded and estimate > LONG_RUN_SECONDS:
            self.warned = True
            warnings.warn(f"this run is estimated to need about {said}. {self.helps}", BudgetWarning, stacklevel=4)
        return estimate

    def check_unit(self, seconds_per_unit: float, unit: str, how: str) -> None:
        """Refuse (:class:`~shap_instances.exceptions.BudgetError`) when one unit of work, the least a run can
        return, is estimated to take longer than the time left before ``max_time``."""
        left = self.left()
        if left is not None and seconds_per_unit > left:
            raise BudgetError(f"refused before the work: one {unit} is estimated to need about "
                              f"{format_seconds(seconds_per_unit)} ({how}), more than the max_time={self.max_time:g} s "
                              f"allowed, so no estimate could be returned in time. {self.helps}")
