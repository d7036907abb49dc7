"""Kernel SHAP against a time budget: a design that fits the time, evaluated in an order that can stop.

:func:`evaluate_design` first times a probe, one complementary pair of the design the budget asks for (a
block of 2,048 coalitions for a game with a refit shortcut), before any batch: a run estimated beyond the
default limit is refused and a long one warned about then. With ``max_time``, when the whole design would not
fit in the time, it draws the design of the budget that fits (about 90% of the time
left, at the measured cost), so the estimate is a proper Kernel SHAP design of a smaller budget. It then
evaluates in an order that can stop at any batch: the enumerated coalition sizes first, from the outside in
as the sampler enumerates them (each size's complementary pairs in a pseudo-random order), then the sampled
pairs in a pseudo-random order (the order is drawn from the design, so the estimator's generator is not
advanced). When the time still runs out, each stratum (an enumerated size, or the sampled part) shares its
kernel weight among its evaluated coalitions (:func:`truncated_design`); a cut size counts as sampled for the
bootstrap. A run whose design fits equals one without a time budget, bitwise.
"""

from __future__ import annotations

import hashlib
import math
import time
from typing import TYPE_CHECKING, cast

import numpy as np
from tqdm.auto import tqdm

from ..utils import check_random_state
from ._budget import RunClock, Throughput
from ._parallel import parallel_values, plan_workers
from .sampling import CoalitionDesign, KernelCoalitionSampler, random_permutations, unique_rows

if TYPE_CHECKING:
    from ..games import Game

__all__ = ["evaluate_design", "truncated_design"]

_HELPS = ("To shorten it: pass max_time= (seconds; the design is then sized to the time), lower max_evals, or, for "
          "means over the explained rows, explain one aggregate game instead of every row "
          "(InstanceKernelExplainer.aggregate, shap_instances.games.AggregateGame).")

#: Share of the time left that a re-planned design is sized to (the rest absorbs the noise of the estimate).
PLAN_MARGIN = 0.9


def _evaluation_order(design: CoalitionDesign, n_players: int) -> np.ndarray:
    """Rows in an order that can stop: enumerated strata in design order, then sampled; pairs shuffled within."""
    masks, _, sampled = design
    if not len(masks):
        return np.arange(0)
    packed, complement = np.packbits(masks, axis=1), np.packbits(~masks, axis=1)
    smaller = np.where(_less(packed, complement)[:, None], packed, complement)
    pair = unique_rows(smaller)[1]
    seed = int.from_bytes(hashlib.sha256(packed.tobytes()).digest()[:8], "little")
    shuffled = random_permutations(check_random_state(seed), 1, pair.max() + 1, by="shuffling")[0][pair]
    sizes = masks.sum(axis=1)
    stratum = np.where(sampled, n_players, np.minimum(sizes, n_players - sizes))  # outer sizes first
    return np.lexsort((shuffled, stratum))


def _less(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Row-wise lexicographic ``a <= b`` of two uint8 arrays of the same shape."""
    differ = a != b
    first = np.argmax(differ, axis=1)
    rows = np.arange(len(a))
    return ~differ.any(axis=1) | (a[rows, first] < b[rows, first])


def evaluate_design(game: Game, sampler: KernelCoalitionSampler, budget: int, rng: np.random.Generator,
                    n_jobs: int | None, *, silent: bool,
                    max_time: float | None) -> tuple[CoalitionDesign, np.ndarray, str | None]:
    """Draw the design of ``budget`` coalitions and evaluate it, within ``max_time`` seconds if given.

    Returns ``(design, values, stopped_by)``: the design actually used (re-planned or truncated when the time
    asks for it), the values of its rows, and None, ``"max_time (re-planned)"`` or ``"max_time"``.
    """
    clock = RunClock(max_time, "coalitions", _HELPS)
    cheap = bool(getattr(game, "cheap", False))
    design = sampler.sample(budget, rng)
    order = _evaluation_order(design, sampler.n_players)
    # the probe: a costly game times one complementary pair (adjacent in the order) before any batch, so the plan
    # (re-planned design, refusal, warning) exists before the work; a cheap one (a refit shortcut) a block of
    # pairs, its per-call cost spread
    first = order[: min(len(order), 2048 if cheap else 2)]
    started = time.perf_counter()
    first_values = parallel_values(game, design.masks[first], 1, silent=True)
    per_coalition = Throughput.measure(time.perf_counter() - started, len(first)).per_unit
    stopped_by = None
    left = len(order) - len(first)
    if left:
        clock.check_long(per_coalition, left, len(first))
    affordable = None if clock.max_time is None else Throughput(max(per_coalition, 1e-12)).units_within(
        PLAN_MARGIN * cast(float, clock.left()))
    if affordable is not None and left > affordable and budget > affordable + len(first):
        design, values, reuse, todo = _replanned(game, sampler, max(affordable + len(first), 4), rng,
                                                 design.masks[first], first_values)
        stopped_by = "max_time (re-planned)"
    else:
        values = np.empty((len(design.masks), game.n_outputs))
        values[first] = first_values
        reuse = np.zeros(len(design.masks), dtype=bool)
        reuse[first] = True
        todo = order[len(first):]
    step = 4096 if cheap else 256
    jobs = 1 if cheap else plan_workers(n_jobs, seconds_left=per_coalition * len(todo))
    done = _evaluate_in_order(game, design, values, todo, step, jobs, clock, silent=silent)
    evaluated = reuse.copy()
    evaluated[todo[:done]] = True
    if evaluated.all():
        return design, values, stopped_by
    return truncated_design(design, evaluated, sampler.n_players), values[evaluated], "max_time"


def _replanned(game: Game, sampler: KernelCoalitionSampler, budget: int, rng: np.random.Generator,
               probed: np.ndarray, probed_values: np.ndarray) -> tuple[CoalitionDesign, np.ndarray, np.ndarray,
                                                                       np.ndarray]:
    """The design of ``budget`` coalitions drawn anew, with the probe's values reused where it drew them again.

    Returns ``(design, values, reused, todo)``: ``values`` filled on the ``reused`` rows, ``todo`` the other rows
    in evaluation order.
    """
    known = dict(zip([row.tobytes() for row in np.packbits(probed, axis=1)], probed_values))
    design = sampler.sample(budget, rng)
    order = _evaluation_order(design, sampler.n_players)
    keys = [row.tobytes() for row in np.packbits(design.masks, axis=1)]
    reuse = np.array([key in known for key in keys], dtype=bool)
    values = np.empty((len(design.masks), game.n_outputs))
    if reuse.any():
        values[reuse] = [known[key] for key, hit in zip(keys, reuse) if hit]
    return design, values, reuse, order[~reuse[order]]


def _evaluate_in_order(game: Game, design: CoalitionDesign, values: np.ndarray, todo: np.ndarray, step: int,
                       jobs: int, clock: RunClock, *, silent: bool) -> int:
    """Evaluate the rows ``todo`` of ``design`` into ``values``, ``step`` at a time, until done or ``clock``
    expires; returns how many of ``todo`` were evaluated."""
    done = 0
    with tqdm(total=len(todo), desc="kernel coalitions", unit="coalition", disable=silent or len(todo) <= step,
              leave=False) as bar:
        while done < len(todo):
            if clock.expired():
                break
            rows = todo[done:done + step]
            values[rows] = parallel_values(game, design.masks[rows], jobs, silent=True)
            done += len(rows)
            bar.update(len(rows))
    return done


def truncated_design(design: CoalitionDesign, evaluated: np.ndarray, n_players: int) -> CoalitionDesign:
    """The design restricted to the ``evaluated`` rows, each stratum keeping its kernel mass.

    A stratum is one enumerated coalition size, or the sampled part. Its weight is shared among its evaluated
    rows in proportion to their weights; the rows of a stratum with rows missing are marked sampled.
    """
    masks, weights, sampled = design
    sizes = masks.sum(axis=1)
    stratum = np.where(sampled, -1, sizes)
    new_weights = weights.astype(np.float64).copy()
    new_sampled = sampled.copy()
    for label in np.unique(stratum):
        rows = stratum == label
        kept = rows & evaluated
        if not kept.any():
            continue
        new_weights[kept] *= weights[rows].sum() / weights[kept].sum()
        if label >= 0 and kept.sum() < math.comb(n_players, int(label)):
            new_sampled[kept] = True
    return CoalitionDesign(masks[evaluated], new_weights[evaluated], new_sampled[evaluated])
