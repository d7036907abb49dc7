"""Plot of the fitted SISR transform T-hat against the coalition payoffs."""

from __future__ import annotations

from typing import TYPE_CHECKING

import matplotlib.pyplot as plt
import numpy as np

from ..utils import check_random_state
from ._kernels import coalition_sums

if TYPE_CHECKING:
    from matplotlib.axes import Axes

    from ..utils import RandomStateLike
    from ._sisr import SISRResult

__all__ = ["isotonic_transform"]


def isotonic_transform(result: SISRResult, *, ax: Axes | None = None, show: bool = True, max_points: int = 5000,
                       random_state: RandomStateLike = 0) -> Axes | None:
    """Scatter of the additive surrogate ``sum_{j in A} gamma_j`` against the payoff ``v_A``, with T-hat.

    Parameters
    ----------
    result : SISRResult
        From :func:`shap_instances.isotonic.sisr` or ``IsotonicShapleyExplainer(...).results_[i]``.
    ax : matplotlib Axes, optional
    show : bool, default=True
        Call ``plt.show()``; with ``show=False`` the Axes is returned.
    max_points : int, default=5000
        Coalitions drawn (a random subset beyond this). Only the drawn coalitions' surrogates are computed, so
        the plot needs no 2^p x p bit matrix (p = 25 would need 6.7 GB for it).

    Examples
    --------
    >>> import numpy as np, matplotlib
    >>> matplotlib.use("Agg")
    >>> from shap_instances.isotonic import sisr
    >>> from shap_instances.plots import isotonic_transform
    >>> v = np.sqrt(((np.arange(16)[:, None] >> np.arange(4)) & 1) @ np.array([3.0, 1.0, 0, 0]))
    >>> ax = isotonic_transform(sisr(v, 2), show=False)
    """
    if ax is None:
        _, ax = plt.subplots(figsize=(5, 4))
    payoffs = result.payoffs
    keep = np.arange(payoffs.size)
    if payoffs.size > max_points:  # subsample first: the surrogate is computed for the drawn coalitions only
        keep = check_random_state(random_state).choice(payoffs.size, max_points, replace=False)
    gamma = np.asarray(result.gamma, dtype=np.float64)
    codes = np.ascontiguousarray(result.codes[keep], dtype=np.int64)
    surrogate = coalition_sums(codes, gamma)  # sum_{j in A} gamma_j from the bit codes
    ax.scatter(payoffs[keep], surrogate, s=8, alpha=0.4, color="#1e88e5", label=r"$\sum_{j\in A}\gamma_j$")
    grid = np.linspace(payoffs.min(), payoffs.max(), 400)
    ax.plot(grid, result.transform(grid), color="#ff0d57", lw=2, label=r"$\hat T(v)$")
    ax.set_xlabel("coalition payoff $v_A$")
    ax.set_ylabel("transformed payoff")
    ax.legend(frameon=False)
    if show:
        plt.show()
        return None
    return ax
