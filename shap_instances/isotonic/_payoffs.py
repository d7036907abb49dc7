"""The coalition payoffs SISR is fitted on: every coalition, or a Shapley-kernel sample beyond a size limit.

What ``IsotonicShapleyExplainer`` delegates to: the memory check before any evaluation, the batching of the
payoff calls, and the fit of one payoff column (:func:`sisr` on the full table, :func:`sisr_from_samples` on
a sample).
"""

from __future__ import annotations

import math
import time
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from ..approximators import KernelCoalitionSampler, RunClock, Throughput, format_seconds
from ..approximators.exact import all_coalitions
from ..exceptions import BudgetError, BudgetWarning, InvalidParameterError
from ..utils import check_memory, default_memory_budget
from ._sisr import SISRResult, sisr, sisr_from_samples

__all__ = ["check_payoff_memory", "coalition_payoffs", "coalitions_per_batch", "fit_payoffs", "plan_coalitions"]

#: Coalitions timed by :func:`plan_coalitions` before the work.
PROBE_COALITIONS = 8
#: The fewest sampled coalitions per feature a time budget may cut a row to (SISR's usable fit).
LEAST_COALITIONS_PER_FEATURE = 10
#: Share of ``max_time`` planned for the payoffs (the rest: the SISR fits and building the explanation).
PAYOFF_SHARE = 0.9


def check_payoff_memory(n_players: int, n_rows: int, *, max_exact_features: int, max_evals: int,
                        max_memory: float | None = None) -> None:
    """Refuse, before any evaluation, coalition tables that would not fit in ``max_memory``.

    Every coalition (2^p, or ``max_evals`` sampled) keeps its mask (p bytes), each explained row's payoff on
    it twice while the rows are gathered (16 bytes a row), and SISR's working vectors of one fit (32 bytes).

    Examples
    --------
    >>> from shap_instances.isotonic import check_payoff_memory
    >>> check_payoff_memory(10, 5, max_exact_features=20, max_evals=1000, max_memory=1e9)  # fits: no error
    """
    exact = n_players <= max_exact_features
    n_coalitions = 2.0**n_players if exact else float(max_evals)
    check_memory(n_coalitions * (n_players + 16 * n_rows + 32),
                 f"IsotonicShapleyExplainer's payoffs of {n_coalitions:,.0f} coalitions of {n_players} features "
                 f"for {n_rows} row(s)", max_memory=max_memory,
                 instead="Explain fewer rows at a time" + (
                     f", or set max_exact_features below {n_players} (SISR then samples max_evals coalitions)."
                     if exact else ", or lower max_evals."))


def coalitions_per_batch(n_players: int, n_masks: int, *, batch_size: int | None = None, n_background: int = 100,
                         max_memory: float | None = None) -> int:
    """``batch_size``, or as many coalitions as fit in an eighth of the memory budget.

    One coalition costs the masked background (``n_background x n_players`` floats) and its model outputs.

    Examples
    --------
    >>> from shap_instances.isotonic import coalitions_per_batch
    >>> coalitions_per_batch(4, 16, batch_size=5), coalitions_per_batch(4, 16, max_memory=1e9)
    (5, 16)
    """
    if batch_size is not None:
        return int(batch_size)
    budget = default_memory_budget() if max_memory is None else max_memory
    per_coalition = 8.0 * n_background * (n_players + 2) * 2
    return int(max(1, min(n_masks, budget / 8 / per_coalition)))


def coalition_payoffs(evaluate: Callable[[np.ndarray], Any], n_players: int, *, max_exact_features: int,
                      max_evals: int, batch: Callable[[int], int],
                      random_state: Any = None) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """(masks, payoffs (m, D) less the empty coalition's, weights): every coalition up to ``max_exact_features``
    players, else a Shapley-kernel sample of ``max_evals`` coalitions (weights None for the full table).

    ``batch(n_masks)`` gives the coalitions per call of ``evaluate`` (:func:`coalitions_per_batch`).

    Examples
    --------
    >>> import numpy as np
    >>> from shap_instances.isotonic import coalition_payoffs
    >>> masks, payoffs, weights = coalition_payoffs(lambda m: m.sum(1), 3, max_exact_features=10, max_evals=100,
    ...                                             batch=lambda n: n)
    >>> masks.shape, payoffs[:, 0].tolist()[-1], weights
    ((8, 3), 3.0, None)
    """
    if n_players <= max_exact_features:
        masks = all_coalitions(n_players)
        weights = None
    else:
        if max_evals < n_players + 2:
            raise InvalidParameterError(
                f"IsotonicShapleyExplainer: max_evals={max_evals} is too small to sample coalitions of "
                f"{n_players} features (the empty and full coalitions plus a design); use max_evals >= "
                f"{n_players + 2}, and at least {10 * n_players} for a usable fit.")
        design = KernelCoalitionSampler(n_players).sample(max_evals - 2, random_state=random_state)
        masks = np.vstack([np.zeros(n_players, bool), design[0], np.ones(n_players, bool)])
        weights = np.concatenate([[0.0], design[1], [design[1].max()]])
    size = batch(len(masks))
    values = np.concatenate([np.asarray(evaluate(masks[start:start + size]), dtype=np.float64).reshape(
        min(size, len(masks) - start), -1) for start in range(0, len(masks), size)])
    return masks, values - values[:1], weights


def plan_coalitions(evaluate: Callable[[np.ndarray], Any], n_players: int, n_calls: int, *, max_time: float,
                    max_exact_features: int, max_evals: int) -> int | None:
    """The coalitions per row that fit ``max_time`` seconds for ``n_calls`` rows, from a timed probe of
    :data:`PROBE_COALITIONS` coalitions of ``evaluate``: None when the planned ones (every coalition up to
    ``max_exact_features`` players, else ``max_evals``) fit in :data:`PAYOFF_SHARE` of it; else as many as fit
    (a :class:`~shap_instances.exceptions.BudgetWarning` says how many of how many), or, when fewer than
    :data:`LEAST_COALITIONS_PER_FEATURE` per feature fit, a :class:`~shap_instances.exceptions.BudgetError`
    naming the ``max_time`` that would work, before the work.

    The probe's masks come from a fixed seed: the user's random state is not drawn from.

    Examples
    --------
    >>> from shap_instances.isotonic import plan_coalitions
    >>> plan_coalitions(lambda m: m.sum(1), 4, 2, max_time=60, max_exact_features=20, max_evals=100) is None
    True
    """
    clock = RunClock(max_time, "coalition payoffs", "Pass a larger max_time, explain fewer rows, or give a smaller "
                     "background (masker: a sample of its rows; each coalition costs one model call on all of them).")
    planned = 2**n_players if n_players <= max_exact_features else max_evals
    probe = np.random.default_rng(0).random((PROBE_COALITIONS, n_players)) < 0.5
    evaluate(probe[:1])  # the first call also sets up (shap's masked model, the model's own first call)
    started = time.perf_counter()
    evaluate(probe)
    per_coalition = Throughput.measure(time.perf_counter() - started, PROBE_COALITIONS).per_unit
    how = f"measured on a probe of {PROBE_COALITIONS} coalitions"
    left = (clock.left() or 0.0) * PAYOFF_SHARE
    if planned * n_calls * per_coalition <= left:
        return None
    fitting = Throughput(n_calls * per_coalition).units_within(left)
    least = max(LEAST_COALITIONS_PER_FEATURE * n_players, n_players + 2)
    if fitting < least:
        needed = clock.elapsed + least * n_calls * per_coalition / PAYOFF_SHARE
        raise BudgetError(f"refused before the work: the fewest coalitions SISR can be fitted on, {least:,} per row "
                          f"({LEAST_COALITIONS_PER_FEATURE} per feature), take about {format_seconds(needed)} for "
                          f"{n_calls:,} row(s) ({per_coalition:.3g} s a coalition, {how}), more than max_time="
                          f"{max_time:g} s; pass max_time={math.ceil(needed)} or more. {clock.helps}", needed=needed)
    plan = "every coalition" if planned == 2**n_players and n_players <= max_exact_features else "max_evals"
    warnings.warn(f"max_time={max_time:g} s fits {fitting:,} coalition payoffs per row, not the {planned:,} planned "
                  f"({plan}; {per_coalition:.3g} s a coalition, {how}): each row's SISR is fitted on a Shapley-kernel "
                  f"sample of {fitting:,} of the {2.0**n_players:,.0f} coalitions, so its attributions are "
                  f"approximate. {clock.helps}", BudgetWarning, stacklevel=4)
    return fitting


def fit_payoffs(masks: np.ndarray, payoffs: np.ndarray, weights: np.ndarray | None, sparsity: int | str, *,
                random_state: Any = None, **options: Any) -> SISRResult:
    """SISR of one payoff column: :func:`sisr` on the full table (``weights`` None), else
    :func:`sisr_from_samples`.

    Examples
    --------
    >>> import numpy as np
    >>> from shap_instances.isotonic import coalition_payoffs, fit_payoffs
    >>> masks, payoffs, weights = coalition_payoffs(lambda m: m @ [3.0, 1.0, 0.0], 3, max_exact_features=10,
    ...                                             max_evals=100, batch=lambda n: n)
    >>> fit_payoffs(masks, payoffs[:, 0], weights, 2, random_state=0).gamma.shape
    (3,)
    """
    if weights is None:
        return sisr(payoffs, sparsity, random_state=random_state, **options)
    return sisr_from_samples(masks, payoffs, weights, sparsity, random_state=random_state, **options)
