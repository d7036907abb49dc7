"""Permutation sampling of Shapley values, with antithetic pairs, truncation, a stopping rule and checkpoints."""

from __future__ import annotations

import contextlib
import numbers
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from os import PathLike
from typing import TYPE_CHECKING, Any, cast

import numpy as np
from tqdm.auto import tqdm

from ..games import accumulate_prefix_units
from ..utils import RandomStateLike, check_random_state
from ._budget import LONG_RUN_SECONDS, RunClock, Throughput, format_seconds
from ._checkpoint import CheckpointFile
from ._parallel import blas_single_thread, local_evaluation, parallel_prefix_values, plan_workers
from ._result import ShapleyResult
from .sampling import random_permutations

#: A cheap game's probe walks the prefixes of one part in this many of its players (:meth:`_probe_walk`).
WALK_PROBE_PARTS = 16

if TYPE_CHECKING:
    from ..games import Game

__all__ = ["PermutationApproximator", "stratified_permutations"]


class PermutationApproximator:
    """Monte-Carlo Shapley values from random permutations of the players.

    Along one permutation the marginal contributions ``v(prefix + i) - v(prefix)`` telescope to
    ``v(full) - v(empty)``, so every single permutation, and hence every estimate whatever the budget,
    satisfies efficiency exactly. With ``antithetic=True`` each permutation is paired with its reverse
    (a negatively correlated pair); the sampling unit is then the pair's average. Standard errors are the
    sample standard deviation of the units divided by the square root of their number.

    Each batch's marginal contributions go straight into running sums (Welford's mean and sum of squared
    deviations) through ``game.accumulate_permutations``; games with a fused numba kernel (the ridge and mean
    refit shortcuts) never hold more than one unit's (n_players x n_outputs) block besides the two sums, so
    the peak memory is about three times that of the values. The run is *anytime*: with ``max_time`` it
    stops before a batch that would end past it (once a sampling unit is done and timed) and reports the
    standard errors reached (efficiency still holds exactly). A run estimated (from its first batch) to need
    more than ten minutes is warned about with the estimate and the options that shorten it.

    Parameters
    ----------
    n_permutations : int, optional
        Number of permutations (rounded up to whole sampling units: pairs when antithetic). Default: as many as
        ``max_evals`` allows (rounded down, so the budget is never exceeded), else ``max(32, 2 * n_players)``.
    max_evals : int, optional
        Budget in value-function evaluations; one permutation costs ``n_players + 1``.
    antithetic : bool, default=True
        Pair each permutation with its reverse.
    strata : int, default=1
        Stratify the place at which each player joins: a sampling unit is ``strata`` cyclic shifts of one random
        permutation, evenly spaced, so each player joins once in each of ``strata`` blocks of consecutive places
        (with ``antithetic``, each shift is followed by its reverse: ``2 * strata`` permutations a unit). Unbiased;
        the standard errors are over whole units, so they stay honest (:func:`random_permutations`,
        docs/engine.md, "Variance reduction"). 1 (the default) does not stratify.
    max_standard_error : float, optional
        Stop early once every standard error is below this (checked after each batch).
    batch_size : int, optional
        Permutations per batch (a batch is the unit of parallel work, progress and checkpointing).
        Default: 16.
    random_state : None, int, numpy.random.Generator, numpy.random.BitGenerator or numpy.random.RandomState
        Read by :func:`shap_instances.utils.check_random_state` at every :meth:`estimate`: an int makes
        results bitwise reproducible, on every call and for every ``n_jobs``; a Generator (or a BitGenerator,
        or a RandomState) advances, so two calls differ; -1, a string or a float raise
        :class:`~shap_instances.exceptions.InvalidParameterError`.
    n_jobs : int or None
        joblib workers evaluating a batch (any joblib backend, dask included). Games with cheap evaluations
        (``game.cheap``: the exact refit shortcuts) always run in the calling process; otherwise the first
        batch runs there and is timed, and a local process pool is started only when the work left is worth it.
        More workers than cores are capped to the cores (with a :class:`~shap_instances.exceptions.BudgetWarning`).
    silent : bool, default=False
        No progress bar (the bar shows the permutations done and a moving estimate of the time left).
    max_time : float, optional
        Seconds: stop before a batch (at least one unit) that would end past this, with the standard errors
        reached (``info`` records
        ``n_permutations`` done and ``stopped_by="max_time"``; ``converged`` is then False).
    truncation_tolerance : float, optional
        Truncated Monte Carlo (TMC, Ghorbani & Zou's Data Shapley): along each permutation, once a prefix's value
        is within ``truncation_tolerance * |v(all) - v(empty)|`` of v(all) (strictly, per output), the marginal
        contributions of the players after it are set to 0 and, when every output is truncated, no longer
        evaluated. Biased: the truncated contributions are dropped, so the values sum to ``v(truncation prefix)
        - v(empty)`` instead of ``v(all) - v(empty)``; each permutation misses less than ``truncation_tolerance *
        |v(all) - v(empty)|`` of the total (``info["efficiency_gap"]`` is the largest miss), and for a game whose
        values never decrease (or never increase) along supersets each player's bias is below that bound too.
        It is exact when every marginal contribution after a truncation point is 0 (docs/explainers/residual.md,
        "Truncated Monte Carlo"). 0 never truncates (the rule is a strict inequality) and gives plain permutation
        sampling, bitwise. v(empty) and v(all) are evaluated once per run; truncating runs evaluate in the
        calling process (the prefixes of a permutation are sequential), and games with an exact refit shortcut
        (``game.cheap``) evaluate every prefix and truncate afterwards (same values, no saving). ``info`` then
        records ``efficiency_gap`` and ``truncated_fraction``, the share of the ``n_players - 1`` intermediate
        prefixes per permutation that come after every output's truncation point. Default None.
    checkpoint : str or Path, optional
        A file (``.npz`` by convention) where the state is saved after every batch. If it exists, the run
        resumes from it, and the result equals that of an uninterrupted run with the same settings and seed,
        bitwise, even after a ``SIGKILL``. A resumed run continues from the generator state saved in the file
        (a Generator passed as ``random_state`` is set to it when it has the same kind of bit generator, so it
        ends where an uninterrupted run would leave it). The file holds arrays and JSON, never a pickle; it is
        replaced atomically and durably after each batch; its directory is checked and ``<checkpoint>.lock``
        taken before any work, so a second run on the same file is refused while the first is alive. A
        missing directory, a lock held by a live run, or a file that is damaged, of another format or of
        another run raise :class:`~shap_instances.exceptions.CheckpointError` (a ``ValueError``) naming the
        file (docs/reliability.md, "Checkpoint format").

    Examples
    --------
    >>> import numpy as np
    >>> from shap_instances.games import FunctionGame
    >>> from shap_instances.approximators import PermutationApproximator
    >>> game = FunctionGame(lambda m: (m @ np.arange(1.0, 5.0)) ** 2, 4)
    >>> r = PermutationApproximator(n_permutations=64, random_state=0, silent=True).estimate(game)
    >>> bool(abs(r.values.sum() - 100.0) < 1e-9)
    True
    >>> saturating = FunctionGame(lambda m: np.minimum(m.sum(1), 3.0), 8)   # nothing changes after 3 players
    >>> plain = PermutationApproximator(n_permutations=64, random_state=0, silent=True).estimate(saturating)
    >>> tmc = PermutationApproximator(n_permutations=64, truncation_tolerance=0.01, random_state=0, silent=True)
    >>> r = tmc.estimate(saturating)         # each permutation stops after its third player: exact here
    >>> bool(np.array_equal(r.values, plain.values)), r.n_evaluations < plain.n_evaluations
    (True, True)
    >>> quick = PermutationApproximator(n_permutations=10**9, max_time=0.5, random_state=0, silent=True).estimate(game)
    >>> quick.info["stopped_by"], quick.info["n_permutations"] < 10**9, bool(abs(quick.values.sum() - 100.0) < 1e-9)
    ('max_time', True, True)
    """

    def __init__(self, n_permutations: int | None = None, max_evals: int | None = None, antithetic: bool = True,
                 max_standard_error: float | None = None, batch_size: int | None = None,
                 random_state: RandomStateLike = None, n_jobs: int | None = None, silent: bool = False,
                 checkpoint: str | PathLike[str] | None = None, max_time: float | None = None,
                 truncation_tolerance: float | None = None, strata: int = 1) -> None:
        self.n_permutations = n_permutations
        self.max_evals = max_evals
        self.antithetic = antithetic
        self.max_standard_error = max_standard_error
        self.batch_size = batch_size
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.silent = silent
        self.checkpoint = checkpoint
        self.max_time = max_time
        self.truncation_tolerance = truncation_tolerance
        self.strata = strata

    def _plan(self, m: int) -> tuple[int, int]:
        for name in ("n_permutations", "max_evals"):
            value = getattr(self, name)
            if value is not None and int(value) < 1:
                raise ValueError(f"{name} must be a positive integer, got {value!r}.")
        if self.max_time is not None and not (isinstance(self.max_time, numbers.Real) and self.max_time > 0):
            raise ValueError(f"max_time must be a positive number of seconds, got {self.max_time!r}.")
        tolerance = self.truncation_tolerance
        if tolerance is not None and not (isinstance(tolerance, numbers.Real) and not isinstance(tolerance, bool)
                                          and 0 <= tolerance < np.inf):
            raise ValueError(f"truncation_tolerance must be a number >= 0 (a fraction of |v(all) - v(empty)|), or "
                             f"None for no truncation; got {tolerance!r}.")
        per_unit = self._per_unit(m)
        batch = _round_up(int(self.batch_size or 16), per_unit)
        if self.n_permutations is not None:
            total = _round_up(int(self.n_permutations), per_unit)
        elif self.max_evals is not None:
            total = int(self.max_evals) // (m + 1)
            total -= total % per_unit  # never exceed the budget
        else:
            total = _round_up(max(32, 2 * m), per_unit)
        if total < per_unit:  # only a max_evals below one sampling unit gets here
            raise ValueError(
                f"the budget max_evals={self.max_evals} allows {total} permutation(s) of {m} players (each costs "
                f"{m + 1} evaluations, in units of {per_unit}: {_unit_name(per_unit, self.antithetic)}); raise "
                f"max_evals to at least {per_unit * (m + 1)}."
            )
        return total, min(batch, total)

    def _per_unit(self, m: int) -> int:
        """Permutations per sampling unit: ``strata`` cyclic shifts, each with its reverse when antithetic."""
        strata = self.strata
        if not (isinstance(strata, numbers.Integral) and not isinstance(strata, bool) and 1 <= strata <= max(m, 1)):
            raise ValueError(f"strata must be an integer from 1 to the number of players ({m}), got {strata!r}.")
        return int(strata) * (2 if self.antithetic else 1)

    def _draw(self, rng: np.random.Generator, k: int, m: int) -> np.ndarray:
        """``k`` permutations (whole sampling units), one per row: see :func:`random_permutations`."""
        return random_permutations(rng, k // self._per_unit(m), m, int(self.strata), bool(self.antithetic))

    def estimate(self, game: Game) -> ShapleyResult:
        """Shapley values of ``game`` with standard errors."""
        if self.checkpoint is None:
            return self._estimate(game)
        self._checkpoint_file = CheckpointFile(self.checkpoint)
        try:  # the directory is checked and the file locked before any work; the lock goes however the run ends
            with self._checkpoint_file:
                return self._estimate(game)
        finally:
            self._checkpoint_file = None

    def _estimate(self, game: Game) -> ShapleyResult:
        m = game.n_players
        total, batch = self._plan(m)
        rng = check_random_state(self.random_state)  # validated before any work; a Generator is used as is
        clock = RunClock(self.max_time, "permutations", _HELPS)
        counters_before = game.counters()
        state, rng = self._start(game, rng, self._fingerprint(game, total, batch))  # a bad checkpoint: refused here
        probed = game.counters()
        probe = self._probe(game, clock, total - state.done)  # not part of the run: its counts are left out
        counters_before = _shifted(counters_before, _counts_since(probed, game.counters()))
        if probe is not None:
            self._check_plan(clock, *probe, m, total - state.done)
        elif not self.silent:  # timed by its first batches, after which the ETA follows (or the refusal)
            print(f"plan: {total - state.done:,} permutations of {m:,} players (ETA after the first batches)",
                  file=sys.stderr)
        ends = self._ends(game, state)
        loop = _Loop(cheap=bool(getattr(game, "cheap", False)), done_before=state.done, per_unit=self._per_unit(m),
                     probed=probe[0] if probe is not None else 0.0)
        unit = np.empty((m, game.n_outputs))  # the one work block of a unit's contributions
        with tqdm(total=total, initial=state.done, desc="permutations", unit="perm", disable=self.silent,
                  leave=False) as bar, (blas_single_thread() if loop.cheap else contextlib.nullcontext()):
            while state.done < total:
                loop.stopped_by = self._stopping_reason(state, clock, loop)
                if loop.stopped_by is not None:
                    break
                k = self._next_batch_length(loop, batch, total - state.done, clock.left())
                seconds = self._run_batch(game, self._draw(rng, k, m), state, unit, ends, loop, counters_before)
                state.rng = rng.bit_generator.state
                self._save_state(state)
                bar.update(k)
                loop.batches += 1
                loop.recent.observe(seconds, k)
                self._after_first_batch(loop, clock, seconds, k, total - state.done, ends is not None)
                if clock.max_time is not None:
                    bar.set_postfix_str(f"time budget: {format_seconds(cast(float, clock.left()))} left", refresh=False)
        del unit
        return self._result(state, loop, clock, m)

    def _probe(self, game: Game, clock: RunClock, left: int) -> tuple[float, str] | None:
        """Seconds of one permutation and how they were measured, timed before the run to plan it: one evaluation
        on half of the players (the mean prefix size) times ``n_players + 1``, or, for a cheap game that can cut
        its walks (``game.cuts_walks``), a short walk (:meth:`_probe_walk`). None for the other cheap games
        (their fused kernels are timed by the first batches instead) and truncating runs (their cost depends on
        where the permutations truncate). A time that would refuse the ``left`` permutations, or call them long,
        is measured again (:meth:`_timed`)."""
        m = game.n_players
        if self.truncation_tolerance is not None or m < 2:
            return None
        if getattr(game, "cheap", False):
            return self._probe_walk(game, clock, left) if getattr(game, "cuts_walks", False) else None

        def evaluation(start: int) -> tuple[float, str]:
            mask = np.zeros((1, m), dtype=bool)
            mask[0, start::2] = True  # every other player: the first half, then the other
            started = time.perf_counter()
            with local_evaluation():
                game.value_function(mask)  # uncounted and uncached: the run's evaluations stay those of the run
            seconds = time.perf_counter() - started
            return seconds * (m + 1), (f"one evaluation of {m // 2:,} of the {m:,} players timed at {seconds:.3g} "
                                       f"s, times {m + 1:,}")

        return self._timed(clock, m, left, evaluation)

    def _probe_walk(self, game: Game, clock: RunClock, left: int) -> tuple[float, str]:
        """A cheap game's permutation timed on the walk of the prefixes of one part in :data:`WALK_PROBE_PARTS`
        of its players (a fixed random order: the run's random state is not touched), times the parts. Bounded
        where the run's first antithetic pair is not: at a sixteenth of one permutation, a budget that cannot
        hold the pair is refused after a thirty-second of the pair's time, not after the pair.

        The part is the first places, or, for a game whose walks can start at a prefix (``game.starts_walks``:
        the logistic refits, whose steps cost more the longer the prefix), the middle ones: a step's cost that
        grows linearly with the prefix's length averages, over a whole walk, to its cost at the middle (the first
        places' put a permutation below its time, and the run's first pair past its budget). The cold fit a
        started walk begins with is left in: it costs a few steps, and errs on the side of the budget."""
        m = game.n_players
        length = min(m, max(2, -(-m // WALK_PROBE_PARTS)))
        first = (m - length) // 2 if game.starts_walks else 0
        order = np.random.default_rng(0).permutation(m)[None, :first + length]
        where = f"places {first + 1:,} to {first + length:,}" if first else f"the first {length:,} places"

        def walk(_: int) -> tuple[float, str]:
            started = time.perf_counter()
            with blas_single_thread():  # a Game subclass of its own may take no ``first``: passed only if it starts
                game.prefix_values(order, first) if first else game.prefix_values(order)
            seconds = time.perf_counter() - started
            return seconds * m / length, (f"a walk through {where} of an order of the {m:,} players timed at "
                                          f"{seconds:.3g} s, times {m / length:.3g}")

        return self._timed(clock, m, left, walk)

    def _timed(self, clock: RunClock, m: int, left: int,
               measure: Callable[[int], tuple[float, str]]) -> tuple[float, str]:
        """``measure(attempt)``: seconds of one permutation and how they were measured; measured again
        (``attempt`` 1) when the first would refuse or warn: one sampling unit above the time the run has, or the
        ``left`` permutations above :data:`LONG_RUN_SECONDS`. So a first call's set-up (compiling, loading compiled
        kernels) is not taken for the cost of every evaluation. Before: only the unit was compared, and a ridge
        walk's first call in a process, timed with its kernels' loading, put 20,000 permutations at 30 hours
        (about 2 s measured) and refused them."""
        first = measure(0)
        fits = first[0] * self._per_unit(m) <= (clock.left() or LONG_RUN_SECONDS)
        return first if fits and first[0] * left <= LONG_RUN_SECONDS else measure(1)

    def _check_plan(self, clock: RunClock, per_permutation: float, how: str, m: int, left: int) -> None:
        """Refuse, before any permutation, a run that cannot fit: one sampling unit above ``max_time``, or
        without it the whole run above the default limit (24 h); warn about a long one; show the plan."""
        per_unit = self._per_unit(m)
        clock.check_unit(per_unit * per_permutation, _unit_name(per_unit, self.antithetic), how)
        self._say_plan(clock, per_permutation, left, clock.check_long(per_permutation, left, how))

    def _say_plan(self, clock: RunClock, per_permutation: float, left: int, estimate: float) -> None:
        """The plan and its ETA on stderr (unless ``silent``)."""
        if self.silent:
            return
        limit = clock.max_time
        print(f"plan: {left:,} permutations (left), about {format_seconds(estimate)} ({per_permutation:.3g} s each)"
              + (f"; max_time={limit:g} s stops it after about {Throughput(per_permutation).units_within(limit):,}"
                 if limit is not None and estimate > limit else ""), file=sys.stderr)

    def _fingerprint(self, game: Game, total: int, batch: int) -> dict[str, Any]:
        """What defines the run: a checkpoint saved with another fingerprint is refused."""
        seed = self.random_state if isinstance(self.random_state, numbers.Integral) else None
        fingerprint: dict[str, Any] = {"players": game.n_players, "outputs": game.n_outputs, "permutations": total,
                                       "batch": batch, "antithetic": bool(self.antithetic), "seed": seed,
                                       "game": game.fingerprint()}
        if self.truncation_tolerance is not None:
            fingerprint["truncation_tolerance"] = float(self.truncation_tolerance)
        if self.strata != 1:  # absent for unstratified runs: their checkpoints stay as they were
            fingerprint["strata"] = int(self.strata)
        return fingerprint

    def _start(self, game: Game, rng: np.random.Generator,
               fingerprint: dict[str, Any]) -> tuple[_RunState, np.random.Generator]:
        """A fresh state, or the checkpoint's (a file of another run is refused) with its generator state."""
        saved = self._load_state(fingerprint)
        if saved is None:
            return _RunState.fresh(rng.bit_generator.state, game.n_players, game.n_outputs, fingerprint), rng
        state = _RunState.from_checkpoint(saved)
        problem = _disagreement(state, fingerprint)
        if problem is not None:  # a file edited by hand or damaged in a way its checksums cannot see
            raise cast(CheckpointFile, self._checkpoint_file).damaged(problem)
        # the counts of the interrupted run (failed fits, ...) carry over, and its generator state
        game.add_counters({k: v for k, v in state.counters.items() if k != "n_evaluations"})
        return state, _restored(rng, state.rng)

    def _ends(self, game: Game, state: _RunState) -> tuple[np.ndarray, np.ndarray] | None:
        """v(empty) and v(all), once, when truncating (the rule compares every prefix with v(all)); else None."""
        if self.truncation_tolerance is None:
            return None
        before = game.n_evaluations
        ends = (np.array(game.empty_value, dtype=np.float64), np.array(game.full_value, dtype=np.float64))
        state.evals += game.n_evaluations - before
        return ends

    def _stopping_reason(self, state: _RunState, clock: RunClock, loop: _Loop) -> str | None:
        """Why the run stops before its next batch (``"max_standard_error"``, ``"max_time"``), or None: past
        ``max_time``, or when one more unit would end past it at the latest batch's pace (a unit of a large game
        can take seconds: running it would overrun the budget by that much). After the first batch, whose time may
        hold one-off costs, only where the probe's pace says so too (the smaller of the two); without a probe, from
        the second batch on."""
        if self._stop(state):
            return "max_standard_error"
        if clock.expired():
            return "max_time"
        left = clock.left()
        if left is None or loop.batches == 0:
            return None
        unit_seconds = loop.recent.seconds_for(loop.per_unit) / max(loop.jobs, 1)
        if loop.batches == 1:  # the first batch may hold one-off costs: trusted only as far as the probe agrees
            if not loop.probed:
                return None
            unit_seconds = min(unit_seconds, loop.probed * loop.per_unit)
        return "max_time" if unit_seconds > left else None

    def _next_batch_length(self, loop: _Loop, batch: int, left: int, seconds_left: float | None) -> int:
        """Permutations in the next batch; a first unit alone when it is timed to plan the rest; with
        ``max_time``, no more than fit in the time left (at least one unit), once their time is known."""
        k = min(batch, left)
        per_unit = loop.per_unit
        if loop.batches < (2 if loop.cheap else 1):  # timed to plan the rest (a cheap game's first: compiling)
            k = min(k, per_unit)
        if seconds_left is not None and loop.planned is not None and loop.planned.per_unit:
            fit = loop.planned.units_within(seconds_left, max(loop.jobs, 1))
            k = min(k, max(per_unit, fit - fit % per_unit))
        return k

    def _run_batch(self, game: Game, permutations: np.ndarray, state: _RunState, unit: np.ndarray,
                   ends: tuple[np.ndarray, np.ndarray] | None, loop: _Loop, counters_before: dict) -> float:
        """Evaluate one batch of permutations into ``state``'s running sums; the seconds it took."""
        evaluations_before = game.n_evaluations
        started = time.perf_counter()
        empty, full = self._accumulate(game, permutations, state, unit, ends, loop)
        seconds = time.perf_counter() - started
        if state.empty is None:
            state.empty, state.full = np.array(empty, dtype=np.float64), np.array(full, dtype=np.float64)
        state.done += len(permutations)
        state.evals += game.n_evaluations - evaluations_before  # fewer than k (m + 1) when cached
        state.counters = _counts_since(counters_before, game.counters())
        return seconds

    def _accumulate(self, game: Game, permutations: np.ndarray, state: _RunState, unit: np.ndarray,
                    ends: tuple[np.ndarray, np.ndarray] | None, loop: _Loop) -> tuple[np.ndarray, np.ndarray]:
        """Add the batch's units to ``state.mean`` and ``state.m2``; v(empty) and v(all) as evaluated.

        Truncating runs evaluate prefix by prefix in this process; otherwise the game's fused path runs here
        (one worker) or the prefixes are evaluated by ``loop.jobs`` joblib workers.
        """
        per_unit = loop.per_unit
        if ends is not None:
            with local_evaluation():
                prefixes, cut = _truncated_prefixes(game, permutations, *ends, cast(float, self.truncation_tolerance))
            loop.skipped += cut
            empty, full = ends
        elif loop.jobs == 1:
            with local_evaluation():
                state.units, empty, full = game.accumulate_permutations(permutations, per_unit, unit, state.mean,
                                                                        state.m2, state.units)
            return empty, full
        else:
            prefixes = np.ascontiguousarray(parallel_prefix_values(game, permutations, loop.jobs))
            empty, full = prefixes[0, 0], prefixes[0, -1]
        state.units = accumulate_prefix_units(prefixes, np.ascontiguousarray(permutations), per_unit, unit,
                                              state.mean, state.m2, state.units)
        return empty, full

    def _after_first_batch(self, loop: _Loop, clock: RunClock, seconds: float, k: int, left: int,
                           truncating: bool) -> None:
        """From the first batch's time (the second's for cheap games, whose first may include loading compiled
        kernels): warn about a long run, and decide whether workers are worth it."""
        if left and loop.batches == (2 if loop.cheap else 1):
            loop.planned = Throughput.measure(seconds, k)
            estimate = clock.check_long(loop.planned.per_unit, left, k)
            if loop.cheap:  # the others' plan came from the probe, before the first batch
                self._say_plan(clock, loop.planned.per_unit, left, estimate)
            if not loop.cheap and not truncating:
                loop.jobs = plan_workers(self.n_jobs, seconds_left=estimate)

    def _result(self, state: _RunState, loop: _Loop, clock: RunClock, m: int) -> ShapleyResult:
        """The estimate, its standard errors (in place of the sums of squares) and the run's ``info``."""
        n = state.units
        if n > 1:  # in place: the peak stays at the two running sums
            standard_errors = state.m2
            standard_errors /= (n - 1) * n
            np.sqrt(standard_errors, out=standard_errors)
        else:
            standard_errors = np.full(state.mean.shape, np.inf)
        info = {"n_permutations": state.done, "antithetic": self.antithetic, "strata": self.strata,
                "stopped_by": loop.stopped_by,
                "seconds": clock.elapsed, "n_jobs_used": loop.jobs}
        if self.truncation_tolerance is not None:
            gap = state.empty + state.mean.sum(axis=0) - state.full
            info.update(truncation_tolerance=float(self.truncation_tolerance),
                        efficiency_gap=float(np.max(np.abs(gap), initial=0.0)),
                        truncated_fraction=loop.skipped / max(1, (state.done - loop.done_before) * (m - 1)))
        converged = (loop.stopped_by == "max_standard_error"
                     or (self.max_standard_error is None and loop.stopped_by is None))
        return ShapleyResult(
            values=state.mean, empty_value=cast(np.ndarray, state.empty), full_value=cast(np.ndarray, state.full),
            standard_errors=standard_errors, n_evaluations=state.evals, approximator="permutation", converged=converged,
            info=info,
        )

    def _stop(self, state: _RunState) -> bool:
        if self.max_standard_error is None or state.units < 2:
            return False
        se = np.sqrt(state.m2 / (state.units - 1) / state.units)
        return bool(np.max(se) <= self.max_standard_error)

    _checkpoint_file: CheckpointFile | None = None  # the open CheckpointFile during a checkpointed estimate

    def _load_state(self, fingerprint: dict | None) -> dict | None:
        return None if self._checkpoint_file is None else self._checkpoint_file.load(fingerprint)

    def _save_state(self, state: _RunState) -> None:
        if self._checkpoint_file is not None:  # atomic and durable: a kill never leaves a half-written file
            self._checkpoint_file.save(state.to_checkpoint())


@dataclass
class _RunState:
    """What a run has accumulated: the state a checkpoint saves after each batch and a resumed run starts from.

    ``rng`` is the bit-generator state after the last batch, ``done`` the permutations drawn, ``units`` the
    sampling units (permutations, or antithetic pairs) in the running ``mean`` and ``m2`` (Welford's sum of
    squared deviations), ``empty`` and ``full`` v(empty) and v(all) (None before the first batch), ``evals``
    the evaluations spent, ``counters`` the game's counters since the start.
    """

    rng: Mapping[str, Any]
    done: int
    units: int
    mean: np.ndarray
    m2: np.ndarray
    empty: np.ndarray | None
    full: np.ndarray | None
    evals: int
    fingerprint: dict
    counters: dict

    @classmethod
    def fresh(cls, rng: Mapping[str, Any], m: int, d: int, fingerprint: dict) -> _RunState:
        return cls(rng=rng, done=0, units=0, mean=np.zeros((m, d)), m2=np.zeros((m, d)), empty=None, full=None,
                   evals=0, fingerprint=fingerprint, counters={})

    @classmethod
    def from_checkpoint(cls, saved: dict) -> _RunState:
        return cls(**{field.name: saved[field.name] for field in fields(cls)})

    def to_checkpoint(self) -> dict[str, Any]:
        """The dict :class:`CheckpointFile` saves (the fields in order, not copied)."""
        return {field.name: getattr(self, field.name) for field in fields(self)}


@dataclass
class _Loop:
    """The bookkeeping of one call's batch loop (not saved: a resumed run starts it afresh)."""

    cheap: bool  # the game's exact refit shortcuts: evaluated in this process, BLAS on one thread
    done_before: int  # permutations done by an interrupted run this one resumes
    per_unit: int  # permutations per sampling unit
    jobs: int = 1
    batches: int = 0
    skipped: int = 0  # intermediate prefixes after every output's truncation point
    planned: Throughput | None = None  # seconds per permutation of the first timed batch (None: not known yet)
    recent: Throughput = field(default_factory=lambda: Throughput(0.0))  # of the latest batch: the next one's pace
    probed: float = 0.0  # seconds per permutation the probe estimated before the run (0: no probe)
    stopped_by: str | None = None


_HELPS = ("To shorten it: pass max_time= (seconds; the run stops before a batch that would end past it, once "
          "one sampling unit is done, with the standard errors reached), ask for fewer permutations "
          "(n_permutations= or max_evals=), explain fewer rows, use a model with a fast refit path (ridge, logistic "
          "regression, KNN, the mean: docs/engine.md), or, for means over the explained rows (CC plot means, data "
          "values), explain one aggregate game instead of every row (InstanceKernelExplainer.aggregate, "
          "shap_instances.games.AggregateGame).")


def _disagreement(state: _RunState, fingerprint: dict[str, Any]) -> str | None:
    """What in a saved state contradicts itself or its run, or None: counts that a run cannot have reached
    (``done`` beyond the run's permutations; ``units`` not ``done`` per sampling unit; v(empty) missing after a
    batch), non-finite or negative sums, or a mean that breaks efficiency (each permutation's contributions sum
    to v(all) - v(empty), so their mean does, up to rounding, or to the truncation tolerance)."""
    per_unit = fingerprint.get("strata", 1) * (2 if fingerprint.get("antithetic") else 1)
    if state.done > fingerprint["permutations"] or state.done % per_unit or state.units != state.done // per_unit:
        return (f"its counters disagree ('done' {state.done} permutations in 'units' {state.units} sampling units "
                f"of {per_unit}, of {fingerprint['permutations']} permutations in all)")
    if (state.empty is None) != (state.done == 0):
        return f"'done' is {state.done} but v(empty) and v(all) are {'missing' if state.empty is None else 'saved'}"
    if not (np.isfinite(state.mean).all() and np.isfinite(state.m2).all() and (state.m2 >= 0).all()):
        return "its running sums hold NaN, infinite or negative sums of squares"
    if state.empty is None or state.full is None:
        return None
    if not (np.isfinite(state.empty).all() and np.isfinite(state.full).all()):
        return "v(empty) or v(all) is NaN or infinite"
    return _efficiency_disagreement(state.mean, state.empty, state.full, fingerprint.get("truncation_tolerance"))


def _efficiency_disagreement(mean: np.ndarray, empty: np.ndarray, full: np.ndarray,
                             tolerance: float | None) -> str | None:
    """Where the saved ``mean`` contributions do not sum to ``full - empty`` (up to rounding, or to the truncation
    ``tolerance`` of the run), what they sum to; else None."""
    total = full - empty
    gap = np.abs(mean.sum(axis=0) - total)
    allowed = 1e-9 * (np.abs(mean).sum(axis=0) + np.abs(full) + np.abs(empty)) + 1e-12
    if tolerance is not None:
        allowed = allowed + tolerance * np.abs(total)
    if np.any(gap > allowed):
        return (f"its mean contributions sum to {mean.sum(axis=0).tolist()}, not v(all) - v(empty) = "
                f"{total.tolist()} (edited?)")
    return None


def _truncated_prefixes(game: Any, permutations: np.ndarray, empty: np.ndarray, full: np.ndarray,
                        tolerance: float) -> tuple[np.ndarray, int]:
    """Prefix values of each permutation under Ghorbani & Zou's truncation, and the evaluations it saved.

    ``out[r, t]`` is v(first t players of permutation r) until, for an output, a prefix comes strictly within
    ``tolerance * |full - empty|`` of ``full``; from there on that output keeps the prefix's value, so the
    marginal contributions of the players after it are 0. A cheap game's prefixes are all evaluated at once
    (its fused path costs less than stopping); otherwise the prefixes are evaluated one by one, v(all) is never
    evaluated again, and a permutation stops being evaluated once every output is truncated.
    """
    permutations = np.asarray(permutations, dtype=np.intp)
    k, m = permutations.shape
    threshold = tolerance * np.abs(full - empty)
    if getattr(game, "cheap", False):
        prefixes = np.require(game.prefix_values(permutations), dtype=np.float64, requirements=["C", "W"])
        return _freeze(prefixes, full, threshold)
    prefixes = np.full((k, m + 1, full.shape[0]), np.nan)
    prefixes[:, 0], prefixes[:, m] = empty, full
    for r in range(k):
        mask = np.zeros(m, dtype=bool)
        for t in range(m - 1):  # prefix t + 1; the full prefix (t = m - 1) is v(all), known
            if np.all(np.abs(full - prefixes[r, t]) < threshold):
                break
            mask[permutations[r, t]] = True
            prefixes[r, t + 1] = game(mask[None, :])[0]
    return _freeze(prefixes, full, threshold)


def _freeze(prefixes: np.ndarray, full: np.ndarray, threshold: np.ndarray) -> tuple[np.ndarray, int]:
    """``prefixes`` with every output held at its first prefix strictly within ``threshold`` of ``full``, and
    the number of prefixes (besides the full one) after every output's truncation point: those a sequential run
    does not evaluate. In place, one permutation at a time: the temporaries are one permutation's prefixes."""
    k, length, d = prefixes.shape
    steps, outputs = np.arange(length)[:, None], np.arange(d)
    gap = np.empty((length, d))
    skipped = 0
    for r in range(k):
        np.abs(np.subtract(full, prefixes[r], out=gap), out=gap)
        close = gap < threshold  # (length, d); NaN (never evaluated) compares False
        first = np.where(close.any(axis=0), close.argmax(axis=0), length)  # (d,)
        held = prefixes[r, np.minimum(first, length - 1), outputs]  # the value at each output's truncation point
        np.copyto(prefixes[r], held[None, :], where=steps > first[None, :])
        skipped += max(0, length - 2 - int(first.max()))
    return prefixes, skipped


def _restored(rng: np.random.Generator, saved: Mapping[str, Any]) -> np.random.Generator:
    """``rng`` set to the saved bit-generator state, or a new Generator of the saved kind when ``rng`` differs."""
    if rng.bit_generator.state["bit_generator"] != saved["bit_generator"]:
        rng = np.random.Generator(getattr(np.random, saved["bit_generator"])())
    rng.bit_generator.state = saved
    return rng


def _counts_since(before: dict, now: dict) -> dict:
    """Numeric counters as increments since ``before``; other entries (a first failure message) as they are."""
    return {key: value - before.get(key, 0) if isinstance(value, numbers.Number) else value
            for key, value in now.items()}


def _shifted(before: dict, increments: dict) -> dict:
    """``before`` with the numeric ``increments`` added: counts taken since then leave those increments out."""
    return {**before, **{key: before.get(key, 0) + value for key, value in increments.items()
                         if isinstance(value, numbers.Number)}}


#: The 0.2 name of :func:`~shap_instances.approximators.random_permutations` (the package's one sampler), kept.
stratified_permutations = random_permutations


def _round_up(count: int, per_unit: int) -> int:
    return count + (-count) % per_unit


def _unit_name(per_unit: int, antithetic: bool) -> str:
    """The sampling unit in words, for messages."""
    if per_unit == 1:
        return "permutation"
    if per_unit == 2 and antithetic:
        return "antithetic pair of permutations"
    return f"{per_unit} permutations (stratified{', with their reverses' if antithetic else ''})"
