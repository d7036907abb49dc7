"""How precise sampled values are: whether they spread across rows beyond their noise, and one sentence saying so.

Sampled values ``v_i = t_i + e_i`` (true value plus an error of standard error ``se_i``) spread across rows with
observed variance ``s^2 = var(t) + var(e) + (cross term)``; with no true spread, ``s^2`` is about the mean
squared standard error ``e^2``, and ``(n - 1) s^2 / e^2`` follows a chi-square law of ``n - 1`` degrees of freedom
(equal errors; unequal ones get Satterthwaite's ``(sum se^2)^2 / sum se^4`` scaled by ``(n - 1) / n``). With a
true spread ``tau`` (the standard deviation of the ``t_i``) it follows the non-central law of non-centrality
``(n - 1) tau^2 / e^2``. :func:`spread_test` reads three things from it: whether the observed spread exceeds the
noise at a level, the smallest true spread detected with a given power (what the run *resolves*), and an upper
confidence bound of the true spread. The error falls as one over the square root of the permutations while the
degrees of freedom stay, so the spread resolved does too: :meth:`SpreadTest.permutations_to_resolve`.
:func:`precision_summary` writes the one sentence every sampled result carries (``DataValues.precision``, an
explanation's ``precision``, the last line of ``shap-instances explain``, the report).
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import optimize, stats

from ..exceptions import DataValidationError
from ._params import Interval, validate_params

__all__ = ["SpreadTest", "beyond_noise", "precision_summary", "ranking_z", "spread_test"]


@dataclass(frozen=True)
class SpreadTest:
    """The observed spread of sampled values across rows against their noise (see :func:`spread_test`).

    Attributes
    ----------
    error : float
        Root mean square of the standard errors.
    spread : float
        Standard deviation of the values across rows (``ddof=1``).
    ratio : float
        ``spread**2 / error**2``: about 1 when the rows do not differ beyond their noise.
    critical : float
        The ratio above which a spread is detected at ``level``.
    detected : bool
        ``ratio > critical``.
    resolved : float
        The smallest true spread detected with probability ``power``: what this run resolves.
    upper : float
        An upper confidence bound (``1 - level``) of the true spread, never below ``resolved``.
    level, power : float
    """

    error: float
    spread: float
    ratio: float
    critical: float
    detected: bool
    resolved: float
    upper: float
    level: float
    power: float

    def permutations_to_resolve(self, spread: float, permutations: int) -> int:
        """The permutations that would resolve a true ``spread``, this run having made ``permutations``: the
        error, and so the spread resolved, falls as one over their square root."""
        return math.ceil(permutations * (self.resolved / spread) ** 2)


_TEST_CONSTRAINTS = {"level": [Interval(numbers.Real, 0, 0.5, closed="neither")],
                     "power": [Interval(numbers.Real, 0, 1, closed="neither")]}


def _degrees(errors: np.ndarray) -> float:
    """Satterthwaite's degrees of freedom of the sample variance of values with these standard errors."""
    squares = errors**2
    n = errors.size
    return float((n - 1) / n * squares.sum() ** 2 / np.sum(squares**2))


def _detection(df: float, critical: float, tau_over_error: float) -> float:
    """The probability that the ratio exceeds ``critical`` when the true spread is ``tau_over_error`` errors."""
    return float(stats.ncx2.sf(critical * df, df, df * tau_over_error**2))


def spread_test(values: Any, standard_errors: Any, *, level: float = 0.05, power: float = 0.8) -> SpreadTest:
    """Test whether sampled values spread across rows beyond their standard errors, and what the run resolves.

    Parameters
    ----------
    values : array-like of shape (n,)
        One sampled value per row (any shape is flattened); at least two.
    standard_errors : array-like shaped like ``values``
        Their standard errors: finite, not all 0.
    level : float, default=0.05
        The false-detection rate when the rows do not differ (and ``1 -`` the confidence of ``upper``).
    power : float, default=0.8
        The detection rate that defines the spread resolved.

    Returns
    -------
    SpreadTest

    Raises
    ------
    DataValidationError
        Fewer than two values, standard errors of another size, or not finite and positive somewhere.

    Examples
    --------
    >>> import numpy as np
    >>> from shap_instances.utils import spread_test
    >>> rng = np.random.default_rng(0)
    >>> noise = spread_test(rng.normal(0, 0.1, 400), np.full(400, 0.1))   # no true spread
    >>> noise.detected, round(noise.resolved, 3)
    (False, 0.044)
    >>> real = spread_test(rng.normal(0, 0.1, 400) + np.linspace(-0.2, 0.2, 400), np.full(400, 0.1))
    >>> real.detected
    True
    """
    validate_params("spread_test", _TEST_CONSTRAINTS, {"level": level, "power": power})
    values = np.ravel(np.asarray(values, dtype=np.float64))
    errors = np.ravel(np.asarray(standard_errors, dtype=np.float64))
    if values.size < 2 or errors.shape != values.shape or not (np.isfinite(errors).all() and np.any(errors > 0)):
        raise DataValidationError(
            f"spread_test needs at least two values and as many finite standard errors, not all 0; got {values.size} "
            f"values and {errors.size} standard errors ({int(np.sum(~np.isfinite(errors)))} not finite). Leave out "
            "the rows without a standard error, and call exact values exact (precision_summary does both).")
    df = _degrees(errors)
    error = float(np.sqrt(np.mean(errors**2)))
    spread = float(np.std(values, ddof=1))
    ratio = spread**2 / error**2
    critical = float(stats.chi2.isf(level, df) / df)
    resolved = error * _solve(lambda tau: _detection(df, critical, tau) - power)
    # the spread whose chance of an observed ratio at most this one is ``level``: nothing larger is plausible
    below = float(stats.chi2.cdf(ratio * df, df))
    bound = 0.0 if below <= level else error * _solve(
        lambda tau: float(stats.ncx2.cdf(ratio * df, df, df * tau**2)) - level)
    return SpreadTest(error, spread, ratio, critical, ratio > critical, resolved, max(bound, resolved), level, power)


def _solve(falls_through_zero: Any) -> float:
    """The root in ``(0, inf)`` of a function of the true spread (in errors) that changes sign once."""
    high = 1.0
    while falls_through_zero(high) * falls_through_zero(0.0) > 0 and high < 1e6:
        high *= 2
    return float(optimize.brentq(falls_through_zero, 0.0, high, xtol=1e-10))


def ranking_z(n_rows: int, level: float = 0.05) -> float:
    """The normal quantile that keeps ``level`` for the whole ranking of ``n_rows`` rows (Bonferroni's two-sided
    ``1 - level / (2 n)``): a row picked as the most helpful of many is an extreme one, so 1.96 would let about
    ``level * n`` rows of pure noise through.

    Examples
    --------
    >>> from shap_instances.utils import ranking_z
    >>> round(ranking_z(1), 2), round(ranking_z(400), 2)
    (1.96, 3.84)
    """
    return float(stats.norm.isf(level / (2 * max(n_rows, 1))))


def beyond_noise(values: Any, standard_errors: Any, *, level: float = 0.05) -> np.ndarray:
    """The sign of each row's value where it is away from 0 beyond its error, else 0: ``+1`` where
    ``value - z se > 0``, ``-1`` where ``value + z se < 0``, ``z`` :func:`ranking_z` of the rows' number (so among
    rows with no true value, the chance that any is called helpful or harmful is at most ``level``). Lists of
    "most helpful" and "most harmful" rows take their rows from these only. Rows with no standard error (infinite
    or NaN) are never beyond their noise; exact values (``standard_errors`` None) are, wherever they are not 0.

    Examples
    --------
    >>> import numpy as np
    >>> from shap_instances.utils import beyond_noise
    >>> beyond_noise(np.array([0.5, 0.01, -0.4, -0.02]), np.full(4, 0.1)).tolist()
    [1, 0, -1, 0]
    """
    values = np.asarray(values, dtype=np.float64)
    if standard_errors is None:
        return np.sign(values).astype(int)
    margin = ranking_z(values.size, level) * np.asarray(standard_errors, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        return np.where(values - margin > 0, 1, np.where(values + margin < 0, -1, 0))


def precision_summary(values: Any, standard_errors: Any, *, permutations: int | None = None,
                      sampling: str | None = None) -> str:
    """One line on how precise sampled values are: their RMS standard error against their spread, in words.

    Parameters
    ----------
    values : array-like
        The sampled values (flattened: rows, or rows x players of an explanation).
    standard_errors : array-like shaped like ``values``, or None
        None, or all 0, for exact values; infinite or NaN where a value has no standard error (one permutation).
    permutations : int, optional
        The permutations made, named when given.
    sampling : str, optional
        What was sampled, for values that carry no standard errors although they come from a sample (SISR on
        sampled coalitions: ``explanation.sampling``); the line then says so instead of "exact values".

    Returns
    -------
    str
        Never "inf" or "nan": exact values are called exact, missing standard errors are counted in words.

    Examples
    --------
    >>> import numpy as np
    >>> from shap_instances.utils import precision_summary
    >>> print(precision_summary(np.array([0.1, -0.1, 0.05, -0.05]), np.full(4, 0.012), permutations=300))
    ... # doctest: +NORMALIZE_WHITESPACE
    RMS standard error 0.012 = 13% of the values' spread (0.0913); 300 permutations; the values spread beyond
    their noise
    >>> print(precision_summary(np.array([0.01, -0.01, 0.0, 0.005]), np.full(4, 0.012)))
    ... # doctest: +NORMALIZE_WHITESPACE
    RMS standard error 0.012 = 141% of the values' spread (0.00854); their spread is within their noise: the true
    spread is below 0.0229, which this budget resolves
    >>> precision_summary(np.ones(3), None)
    'exact values (no sampling error)'
    >>> print(precision_summary(np.ones(3), None, sampling="100 of 1,024 coalitions a row"))
    ... # doctest: +NORMALIZE_WHITESPACE
    values from a sample (100 of 1,024 coalitions a row) with no standard errors: rerun with another random_state
    (--seed) to see how far they move
    """
    values = np.ravel(np.asarray(values, dtype=np.float64))
    errors = None if standard_errors is None else np.ravel(np.asarray(standard_errors, dtype=np.float64))
    if errors is None or (errors.size and not np.any(errors)):
        if sampling:
            return (f"values from a sample ({sampling}) with no standard errors: rerun with another random_state "
                    "(--seed) to see how far they move")
        return "exact values (no sampling error)"
    made = "" if permutations is None else f"; {permutations:,} permutations"
    known = np.isfinite(errors)
    if known.sum() < 2 or not np.any(errors[known]):
        return (f"standard errors not estimated (too few permutations: one per row){made}; a larger budget "
                "(time or evaluations) gives them")
    test = spread_test(values[known], errors[known])
    missing = "" if known.all() else (f"; {errors.size - int(known.sum()):,} of {errors.size:,} values have no "
                                      "standard error (one permutation of their row)")
    against = (f" = {test.error / test.spread:.0%} of the values' spread ({test.spread:.3g})" if test.spread > 0
               else " (the values do not spread at all)")
    verdict = ("the values spread beyond their noise" if test.detected else
               f"their spread is within their noise: the true spread is below {test.upper:.3g}, which this budget "
               "resolves")
    return f"RMS standard error {test.error:.3g}{against}{made}; {verdict}{missing}"
