"""Whether a part of the report is precise enough to show, and the budget that would make it so.

A sampled quantity shown across training rows (the contribution means, the data values' plain means, the
contribution variances) is readable when its error is small against its spread across rows. The observed spread
``s`` is that of the true values plus that of the errors, so the true spread is ``t = sqrt(s^2 - e^2)``. The part
is *precise* when ``e <= PRECISE_SHARE * s``. The error of a permutation estimate falls as ``1 / sqrt(m)`` in the
permutations ``m``, so reaching ``e' <= PRECISE_SHARE * sqrt(t^2 + e'^2)``, i.e. ``e' <= t * PRECISE_SHARE /
sqrt(1 - PRECISE_SHARE^2)``, takes ``(e / e')^2`` times the permutations. Whether the rows differ beyond the noise
at all is a test (:func:`~shap_instances.utils.spread_test`: the observed variance against the mean squared
standard error), not ``t > 0``: when it finds no spread, the part says how large a true spread could still be, the
spread this budget resolves and the permutations that would resolve half of it; an observed spread equal to the
noise says the true spread is below what the budget resolves, never that no budget would make it readable.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

import numpy as np

from ..approximators import format_seconds
from ..utils import SpreadTest, spread_test
from ._plan import PRECISE_SHARE

__all__ = ["Precision"]


@dataclass
class Precision:
    """The error of a sampled quantity against its spread across training rows, and what more work would buy.

    Examples
    --------
    >>> import numpy as np
    >>> from shap_instances.report._precision import Precision
    >>> p = Precision.of("the contribution means", np.array([0.1, -0.1, 0.3, -0.3]), np.full(4, 0.2),
    ...                  permutations=100, seconds=2.0, n_players=50)
    >>> round(p.share, 2), p.precise
    (0.77, False)
    >>> round(p.factor(), 1)       # times the permutations that bring the error to 30% of the spread
    15.2
    """

    what: str
    error: float  # root mean square of the standard errors
    spread: float  # standard deviation of the estimates across training rows
    permutations: int
    seconds: float
    n_players: int
    test: SpreadTest | None = None  # whether the rows spread beyond the noise; None for pooled variances

    @classmethod
    def of(cls, what: str, values: np.ndarray, errors: np.ndarray, *, permutations: int, seconds: float,
           n_players: int) -> Precision:
        values, errors = np.asarray(values, dtype=np.float64), np.asarray(errors, dtype=np.float64)
        testable = values.size > 1 and bool(np.isfinite(errors).all()) and bool(np.any(errors))
        return cls(what, float(np.sqrt(np.mean(errors**2))), float(np.std(values, ddof=1)) if values.size > 1
                   else 0.0, permutations, seconds, n_players, spread_test(values, errors) if testable else None)

    @classmethod
    def pooled(cls, what: str, variances: np.ndarray, noises: np.ndarray, *, permutations: int, seconds: float,
               n_players: int) -> Precision:
        """The share of the contribution variances that is permutation noise, pooled over training rows.

        ``variances[i]`` is a training row's variance across the explained rows of its estimated contributions,
        ``noises[i]`` the mean of their squared standard errors: the expected inflation of that variance by the
        permutations' noise. The error is ``sqrt(mean noises)`` and the spread ``sqrt(mean variances)``, so that
        ``share ** 2`` is the part of the variances that is noise. Means, not medians: a row's marginal
        contributions are heavy-tailed (large only where it joins a small coalition, which ``m`` permutations of
        ``n`` rows give it about ``m / n`` times), so below ``m = n`` most rows' sample variances miss the tail.
        Each row's noise estimate is unbiased, so their mean is, but their median falls far below the truth
        (measured on 400 diabetes rows against 30 repeated runs: 1% of it at ``m = 8``, 6% at ``m = 40``, 94%
        at ``m = 400``; the mean 94% to 103%), and it rose with ``m`` where the truth falls.

        Examples
        --------
        >>> import numpy as np
        >>> from shap_instances.report._precision import Precision
        >>> p = Precision.pooled("the variances", np.array([1.0, 2.0, 3.0]), np.array([0.0, 0.0, 0.36]),
        ...                      permutations=100, seconds=2.0, n_players=50)
        >>> round(p.share, 2), p.precise     # 6% of the variance is noise: its square root, 0.24
        (0.24, True)
        """
        variances, noises = np.asarray(variances, dtype=np.float64), np.asarray(noises, dtype=np.float64)
        return cls(what, float(np.sqrt(np.mean(noises))), float(np.sqrt(np.mean(variances))), permutations, seconds,
                   n_players)

    @property
    def share(self) -> float:
        """The error as a share of the spread (0 when both are 0, inf when only the spread is)."""
        if self.spread > 0:
            return self.error / self.spread
        return 0.0 if self.error == 0 else float("inf")

    @property
    def precise(self) -> bool:
        return self.share <= PRECISE_SHARE

    @property
    def true_spread(self) -> float:
        return float(np.sqrt(max(self.spread**2 - self.error**2, 0.0)))

    def factor(self) -> float:
        """How many times the permutations made would make the part precise (inf: none would)."""
        target = self.true_spread * PRECISE_SHARE / np.sqrt(1 - PRECISE_SHARE**2)
        if self.precise:
            return 1.0
        return float((self.error / target) ** 2) if target > 0 else float("inf")

    def sentence(self) -> str:
        """One sentence: the error against the spread, and whether that is precise."""
        verdict = ("precise" if self.precise else "not enough precision: shown below the precise sections, "
                   "not as results")
        if not np.isfinite(self.error):
            return (f"{self.what[0].upper()}{self.what[1:]} have no standard error yet (too few permutations in the "
                    f"time: {self.permutations:,}); {verdict}.")
        within = ("" if self.test is None or self.test.detected else
                  f"; the rows do not spread beyond this noise: their true spread is below {self.test.upper:.3g}, "
                  "which this budget resolves")
        return (f"The error of {self.what} is {self.share:.0%} of their spread across training rows "
                f"({self.error:.3g} against {self.spread:.3g}; {verdict}, the report's threshold being "
                f"{PRECISE_SHARE:.0%}{within}).")

    def needs(self, budget: float) -> str:
        """What the part lacks, for the "Not enough precision" section: the budget that would make it precise."""
        head = (f"{self.what[0].upper()}{self.what[1:]}: the error is {self.share:.0%} of the spread across "
                f"training rows after {self.permutations:,} permutations in {self.seconds:.1f} s (the report shows a "
                f"part only when its error is at most {PRECISE_SHARE:.0%}).")
        if not np.isfinite(self.error):
            return (f"{self.what[0].upper()}{self.what[1:]}: {self.permutations:,} permutations in "
                    f"{self.seconds:.1f} s were too few for a standard error, so their precision is unknown; rerun "
                    "with a larger --time-budget (time_budget= in Python).")
        if self.test is not None and not self.test.detected:
            return head + " " + self._within_noise(budget)
        factor = self.factor()
        if not np.isfinite(factor):  # pooled variances no larger than their noise
            return (head + " The variances are what the permutation noise alone gives, so this run does not resolve "
                    "how much the rows' contributions vary across explained rows (which does not say they do not "
                    "vary); the noise falls as one over the square root of the permutations, and halving it would "
                    f"take {self._rerun(4.0, budget)}. Its values are in instances.csv.")
        return (head + f" About {factor:.1f} times the permutations would make it precise: "
                f"{self._rerun(factor, budget)}. Its values, with their standard errors, are in instances.csv.")

    def _within_noise(self, budget: float) -> str:
        """The rows' spread is within the noise: how large a true spread could be, and what would resolve less."""
        test = cast("SpreadTest", self.test)
        smaller = test.resolved / 2
        factor = test.permutations_to_resolve(smaller, self.permutations) / max(self.permutations, 1)
        return (f"The values' observed variance across training rows is {test.ratio:.2f} times what the "
                f"standard errors alone give ({test.critical:.2f} or more would show a real spread at the "
                f"{test.level:.0%} level), so the rows do not differ detectably at this budget. That does not say "
                f"they are alike: their true spread is below {test.upper:.3g} (a {1 - test.level:.0%} upper bound), "
                f"and this budget resolves a true spread of {test.resolved:.3g} (detected {test.power:.0%} of the "
                f"time); resolving half that, {smaller:.3g}, would take {self._rerun(factor, budget)}. Its values, "
                "with their standard errors, are in instances.csv.")

    def _rerun(self, factor: float, budget: float) -> str:
        """``factor`` times the permutations made: how many, their evaluations, their time, the budget to pass."""
        permutations = int(np.ceil(factor * self.permutations))
        seconds = factor * self.seconds
        return (f"{permutations:,} permutations ({permutations * (self.n_players + 1):,} evaluations), about "
                f"{format_seconds(seconds)} at the speed measured here; rerun with --time-budget "
                f"{budget + seconds - self.seconds:.0f} or more (time_budget= in Python)")
