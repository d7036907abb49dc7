"""The unit costs of the report's plan, measured here and now on the data: an antithetic pair of permutations of
the residual decomposition's games, the forest's first trees with their trust scores, and a figure.

Apart from :mod:`._plan`, which sizes the sections from these costs: the sections import the plan's constants and
this module imports the sections' probes, so the plan and the sections do not import each other.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from ._forest import time_forest
from ._plan import FIGURE_SECONDS, PROBE_TREES, RESERVE, Costs, time_figure
from ._residual import time_permutations

if TYPE_CHECKING:
    from ._context import Context

__all__ = ["measure"]


def measure(context: Context, start: float, *, residual: bool, sample_size: int, forest: bool = True,
            time_budget: float = float("inf")) -> tuple[Costs, dict[str, str]]:
    """Time an antithetic pair of permutations of the residual games (the aggregate game and ``sample_size``
    explained rows) and, when ``forest``, the first trees of the forest (kept for later); ``(costs, cut)``.

    The probes are bounded by what is left of ``time_budget`` (counted from ``start``, less the reserve): the
    forest's stops after its first tree when the least forest cannot fit, and the residual games' before their pair
    when one evaluation shows that the least residual section (two pairs of each game) cannot; the section is
    then cut (``cut``: key -> the sentence saying why), its costs left at 0."""
    from ..approximators import format_seconds
    from ..exceptions import BudgetError

    n_train, cut = len(context.Z_train), {}
    per_figure = max(time_figure(n_train), FIGURE_SECONDS)
    per_tree, gap_fixed, gap_row = 0.0, 0.0, 0.0
    if forest:
        probed = time_forest(context, PROBE_TREES, seconds_left=_left(start, time_budget))
        if isinstance(probed, str):
            cut["forest"] = probed
        else:
            per_tree, gap_fixed, gap_row = probed
    per_aggregate, per_permutation = 0.0, 0.0
    if residual:
        left = _left(start, time_budget)
        try:  # the least section: two antithetic pairs of each game, so a pair may take a quarter of what is left
            per_aggregate, per_permutation = time_permutations(context, sample_size, max_time=max(left / 4, 1e-3))
        except BudgetError as exc:
            cut["residual"] = (f"residual decomposition: its probe stopped before the work, with "
                               f"{format_seconds(max(left, 0.0))} of the time budget left: {exc}")
    costs = Costs(spent=time.perf_counter() - start, per_permutation=per_permutation, per_aggregate=per_aggregate,
                  per_tree=per_tree, gap_fixed_per_tree=gap_fixed, gap_per_row_tree=gap_row, n_train=n_train,
                  n_test=len(context.Z_test), n_explained=sample_size, n_features=context.Z_train.shape[1],
                  per_figure=per_figure)
    return costs, cut


def _left(start: float, time_budget: float) -> float:
    """Seconds left of ``time_budget`` from ``start``, the reserve kept."""
    return start + time_budget * (1 - RESERVE) - time.perf_counter()
