"""``ShapleyResult``: what every approximator returns."""

from __future__ import annotations

from dataclasses import InitVar, dataclass, field

import numpy as np

from .._deprecated import renamed_attribute, warn_moved

__all__ = ["ShapleyResult", "standard_errors_of_means"]


@dataclass
class ShapleyResult:
    """Shapley values of a vector-valued game, with their uncertainty.

    Attributes
    ----------
    values : ndarray of shape (n_players, n_outputs)
    empty_value, full_value : ndarray of shape (n_outputs,)
        v(empty) and v(full); efficiency is ``empty_value + values.sum(0) == full_value``.
    standard_errors : ndarray of shape (n_players, n_outputs) or None
        None for exact methods.
    n_evaluations : int
        Value-function evaluations spent.
    approximator : str
        Name of the approximator that produced the values (``estimator`` before 0.2: deprecated).
    converged : bool
        Whether a stopping rule was met (always True for exact methods).
    info : dict
        Estimator-specific diagnostics (number of permutations, ...).

    Examples
    --------
    >>> import numpy as np
    >>> from shap_instances.approximators import ShapleyResult
    >>> r = ShapleyResult(np.ones((2, 1)), np.zeros(1), np.full(1, 2.0))
    >>> r.efficiency_gap()
    0.0
    """

    values: np.ndarray
    empty_value: np.ndarray
    full_value: np.ndarray
    standard_errors: np.ndarray | None = None
    n_evaluations: int = 0
    approximator: str = ""
    converged: bool = True
    info: dict = field(default_factory=dict)
    #: The 0.1 name of ``approximator`` as a constructor keyword, accepted with a warning until 0.3.
    estimator: InitVar[str | None] = None

    def __post_init__(self, estimator: str | None) -> None:
        if estimator is not None:
            warn_moved("ShapleyResult(estimator=...)", "ShapleyResult(approximator=...)", stacklevel=4)
            self.approximator = estimator

    def efficiency_gap(self) -> float:
        """Largest absolute violation of ``empty + sum(values) == full``."""
        return float(np.max(np.abs(self.empty_value + self.values.sum(axis=0) - self.full_value), initial=0.0))

    def of_semivalue(self, approximator: str, label: str, efficient: bool) -> ShapleyResult:
        """This result, named ``approximator``, with what its values are and what they add up to in ``info``.

        Examples
        --------
        >>> import numpy as np
        >>> from shap_instances.approximators import ShapleyResult
        >>> r = ShapleyResult(np.ones((2, 1)), np.zeros(1), np.full(1, 2.0)).of_semivalue("msr", "banzhaf", False)
        >>> r.approximator, r.info
        ('msr', {'semivalue': 'banzhaf', 'efficient': False, 'adds_up_to': None})
        """
        self.approximator = approximator
        self.info.update(semivalue=label, efficient=efficient, adds_up_to="v(all) - v(empty)" if efficient else None)
        return self


def standard_errors_of_means(total: np.ndarray, squares: np.ndarray, count: np.ndarray) -> np.ndarray:
    """Standard error of each mean from the sums of its samples and of their squares (``inf`` below two samples).

    Examples
    --------
    >>> import numpy as np
    >>> from shap_instances.approximators._result import standard_errors_of_means
    >>> samples = np.array([1.0, 2.0, 4.0])
    >>> bool(np.isclose(standard_errors_of_means(samples.sum(), (samples**2).sum(), 3), samples.std(ddof=1) / 3**0.5))
    True
    """
    count = np.asarray(count, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        mean = total / count
        variance = np.maximum(squares / count - mean**2, 0.0) * count / (count - 1)
        return np.where(count > 1, np.sqrt(variance / count), np.inf)


# read as an attribute, the 0.1 name warns too (set after the class: the dataclass keeps estimator= in __init__)
ShapleyResult.estimator = renamed_attribute("ShapleyResult", "estimator", "approximator")  # type: ignore[attr-defined]
