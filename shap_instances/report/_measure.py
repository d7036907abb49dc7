"""The unit costs of the report's plan, measured here and now on the data: an antithetic pair of permutations of
the residual decomposition's games, the forest's first trees with their trust scores, and a figure.

Apart from :mod:`._plan`, which sizes the sections from these costs: the sections import the plan's constants and
this module imports the sections' probes, so the plan and the sections do not import each other.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from ._forest import time_forest
from ._plan import FIGURE_SECONDS, PROBE_TREES, Costs, time_figure
from ._residual import time_permutations

if TYPE_CHECKING:
    from ._context import Context

__all__ = ["measure"]


def measure(context: Context, start: float, *, residual: bool, sample_size: int, forest: bool = True) -> Costs:
    """Time an antithetic pair of permutations of the residual games (the aggregate game and ``sample_size``
    explained rows) and, when ``forest``, the first trees of the forest (kept for later)."""
    n_train = len(context.Z_train)
    per_aggregate, per_permutation = time_permutations(context, sample_size) if residual else (0.0, 0.0)
    per_tree, gap_fixed, gap_row = time_forest(context, PROBE_TREES) if forest else (0.0, 0.0, 0.0)
    per_figure = max(time_figure(n_train), FIGURE_SECONDS)
    return Costs(spent=time.perf_counter() - start, per_permutation=per_permutation, per_aggregate=per_aggregate,
                 per_tree=per_tree, gap_fixed_per_tree=gap_fixed, gap_per_row_tree=gap_row, n_train=n_train,
                 n_test=len(context.Z_test), n_explained=sample_size, n_features=context.Z_train.shape[1],
                 per_figure=per_figure)
