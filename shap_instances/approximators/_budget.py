"""Budgets in time: the one estimator of what work costs (:class:`Throughput`: seconds per unit, measured), the
clock of one estimate (``max_time``), the warning about runs estimated to be long, and the refusal of runs that
cannot fit (:class:`~shap_instances.exceptions.BudgetError`).

Every plan in the package (approximators, the report, the command line) turns a measured time into seconds per
unit of work, and a budget into units, here and nowhere else."""

from __future__ import annotations

import threading
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..exceptions import BudgetError, BudgetWarning

__all__ = ["DEFAULT_TIME_LIMIT", "LONG_RUN_SECONDS", "RunClock", "StagePace", "Throughput", "bounded_probe",
           "check_time_left", "format_seconds"]

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


@dataclass
class Throughput:
    """What work costs here: the line ``seconds = anchor_seconds + per_unit * (units - anchor_units)``.

    Made by a probe (:meth:`measure`: ``seconds`` for ``units``, no fixed part), by two probes (:meth:`through`:
    a fixed part and a per-unit part, the line through both) or from a known rate (``Throughput(per_unit)``);
    :meth:`observe` replaces the rate by a fresh measurement, so that a plan follows the speed of the run.

    Parameters
    ----------
    per_unit : float
        Seconds per unit of work (a permutation, a row, a tree).
    anchor_units, anchor_seconds : float
        A point of the line (0 units, 0 seconds: no fixed part).

    Examples
    --------
    >>> from shap_instances.approximators import Throughput
    >>> pace = Throughput.through(1_000, 2.0, 2_000, 3.0)   # 1 s fixed + 1 ms per unit
    >>> pace.seconds_for(10_000), pace.units_within(11.0)
    (11.0, 10000)
    >>> Throughput.measure(0.5, 4).seconds_for(100)
    12.5
    """

    per_unit: float
    anchor_units: float = 0
    anchor_seconds: float = 0.0

    @classmethod
    def measure(cls, seconds: float, units: float) -> Throughput:
        """The pace of ``units`` done in ``seconds`` (at least one unit counted)."""
        return cls(seconds / max(units, 1))

    @classmethod
    def through(cls, units_a: float, seconds_a: float, units_b: float, seconds_b: float) -> Throughput:
        """The line through two timed probes (``units_b > units_a``), never falling: a fixed part and a per-unit
        part, anchored at the larger probe."""
        return cls(max(seconds_b - seconds_a, 0.0) / (units_b - units_a), units_b, seconds_b)

    @property
    def fixed(self) -> float:
        """Seconds at zero units (the fixed part)."""
        return self.anchor_seconds - self.per_unit * self.anchor_units

    def observe(self, seconds: float, units: float) -> None:
        """Take the pace of the latest ``units`` done in ``seconds`` as the rate of what comes next (the fixed
        part, paid, is dropped)."""
        self.per_unit, self.anchor_units, self.anchor_seconds = seconds / max(units, 1), 0, 0.0

    def seconds_for(self, units: float) -> float:
        """Seconds that ``units`` units of work are estimated to take."""
        return self.anchor_seconds + self.per_unit * (units - self.anchor_units)

    def units_within(self, seconds: float, workers: int = 1) -> int:
        """Whole units that fit in ``seconds`` (run by ``workers`` in parallel); a very large number at no
        measured cost. The inverse of :meth:`seconds_for`, rounded down."""
        if self.per_unit <= 0:
            return 10**18
        return int((seconds - self.anchor_seconds) / self.per_unit * workers + self.anchor_units)

    def check_fits(self, units: float, seconds_left: float, *, refusal: Callable[[float], str],
                   needed: Callable[[float], float] | None = None) -> float:
        """The seconds of ``units``, or a refusal when they exceed ``seconds_left``: :class:`BudgetError` with the
        message ``refusal(estimate)`` and, with ``needed``, the budget that would work, ``needed(estimate)``.

        Examples
        --------
        >>> import math
        >>> from shap_instances.approximators import Throughput
        >>> from shap_instances.exceptions import BudgetError
        >>> Throughput(2.0).check_fits(3, 10.0, refusal=str)
        6.0
        >>> try:
        ...     Throughput(2.0).check_fits(3, 5.0, refusal=lambda s: f"needs {s:g} s", needed=math.ceil)
        ... except BudgetError as error:
        ...     print(error, error.needed)
        needs 6 s 6
        """
        estimate = self.seconds_for(units)
        if estimate > seconds_left:
            raise BudgetError(refusal(estimate), needed=None if needed is None else needed(estimate))
        return estimate


def bounded_probe(call: Callable[[], Any], max_seconds: float | None) -> tuple[bool, float]:
    """``(ended, seconds)``: run ``call()`` (a timed probe: its result is not kept) and wait for it at most
    ``max_seconds``; past that, stop waiting (``ended`` False, ``seconds`` the time waited) and leave it to finish
    in a daemon thread, whose work no longer matters: the plan it would have timed is refused or cut. An error of
    ``call`` is raised here. Without ``max_seconds`` the call runs in this thread.

    Examples
    --------
    >>> import time
    >>> from shap_instances.approximators import bounded_probe
    >>> bounded_probe(lambda: time.sleep(0.01), 5.0)[0], bounded_probe(lambda: time.sleep(1.0), 0.05)[0]
    (True, False)
    """
    start = time.perf_counter()
    if max_seconds is None:
        call()
        return True, time.perf_counter() - start
    failed: list[BaseException] = []

    def run() -> None:
        try:
            call()
        except BaseException as error:  # raised again in the caller's thread
            failed.append(error)

    worker = threading.Thread(target=run, name="shap-instances probe", daemon=True)
    worker.start()
    worker.join(max(max_seconds, 0.0))
    if failed:
        raise failed[0]
    return not worker.is_alive(), time.perf_counter() - start


class StagePace:
    """How the stages of a plan run against the plan: the seconds they took per second planned for them, which
    re-plans the stages still to come (a busier machine than when the plan was measured: each planned second
    takes longer, and a stage whose least no longer fits is cut before it runs).

    Before any stage has ended the pace is the plan's (one second per planned second); :meth:`seconds_for` never
    goes below the plan, so that a stage that ran faster than planned does not make the next cheaper than its own
    estimate.

    Examples
    --------
    >>> from shap_instances.approximators import StagePace
    >>> pace = StagePace()
    >>> pace.observe(planned=10.0, taken=30.0)   # the first stage took three times its plan
    >>> pace.ratio, pace.seconds_for(20.0), pace.fits(20.0, seconds_left=45.0)
    (3.0, 60.0, False)
    """

    def __init__(self) -> None:
        self.planned = 0.0
        self.taken = 0.0

    def observe(self, planned: float, taken: float) -> None:
        """A stage planned at ``planned`` seconds took ``taken`` seconds."""
        self.planned += max(planned, 0.0)
        self.taken += max(taken, 0.0)

    @property
    def ratio(self) -> float:
        """Seconds taken per second planned, over the stages ended so far (1 before any)."""
        return self.taken / self.planned if self.planned > 0 else 1.0

    def seconds_for(self, planned: float) -> float:
        """Seconds that work planned at ``planned`` seconds is now expected to take (at least ``planned``)."""
        return planned * max(self.ratio, 1.0)

    def fits(self, planned: float, seconds_left: float) -> bool:
        """Whether work planned at ``planned`` seconds is expected to end within ``seconds_left``."""
        return self.seconds_for(planned) <= seconds_left


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
        how = f"the first {measured_on:,}" if isinstance(measured_on, int) else measured_on

        def said(estimate: float) -> str:
            return (f"{format_seconds(estimate)} for its {items_left:,} remaining {self.what} "
                    f"({seconds_per_item:.3g} s each, measured on {how})")

        pace = Throughput(seconds_per_item)
        estimate = pace.seconds_for(items_left)
        if self.max_time is None:
            pace.check_fits(items_left, DEFAULT_TIME_LIMIT, refusal=lambda estimate: (
                f"refused before the work: this run is estimated to need about {said(estimate)}, above the default "
                f"limit of {format_seconds(DEFAULT_TIME_LIMIT)} for a run without max_time. {self.helps}"))
        bounded = self.max_time is not None and self.max_time <= LONG_RUN_SECONDS
        if not self.warned and not bounded and estimate > LONG_RUN_SECONDS:
            self.warned = True
            warnings.warn(f"this run is estimated to need about {said(estimate)}. {self.helps}", BudgetWarning,
                          stacklevel=4)
        return estimate

    def check_unit(self, seconds_per_unit: float, unit: str, how: str) -> None:
        """Refuse (:class:`~shap_instances.exceptions.BudgetError`) when one unit of work, the least a run can
        return, is estimated to take longer than the time left before ``max_time``."""
        left = self.left()
        if left is not None:
            Throughput(seconds_per_unit).check_fits(1, left, refusal=lambda estimate: (
                f"refused before the work: one {unit} is estimated to need about {format_seconds(estimate)} ({how}), "
                f"more than the max_time={self.max_time:g} s allowed, so no estimate could be returned in time. "
                f"{self.helps}"))


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
