"""``DataValues``: what every data-valuation function returns."""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from ..utils import precision_summary

__all__ = ["DataValues"]


@dataclass
class DataValues:
    """Values of training rows, with their standard errors and what they add up to.

    Attributes
    ----------
    values : pandas.Series
        One value per training row (indexed by row name); higher = more useful to the model.
    standard_errors : pandas.Series or None
        None for exact methods (leave-one-out, enumeration, Data-OOB).
    method : str
        The semivalue and estimator (``"banzhaf/msr"``, ``"beta(16, 1)/permutation"``, ``"data_oob"``, ...).
    adds_up_to : str or None
        What the values sum to (``"v(all) - v(empty)"`` for Shapley), None where they sum to nothing particular.
    total : float or None
        That quantity (``v(all) - v(empty)``) when ``adds_up_to`` is not None.
    n_evaluations : int
        Utility evaluations (refits) spent.
    info : dict
        The estimator's diagnostics (``efficiency_gap`` for Shapley: the largest ``|sum - total|``).

    Examples
    --------
    >>> import pandas as pd

from ..utils import precision_summary
    >>> from shap_instances.valuation import DataValues
    >>> dv = DataValues(pd.Series([0.5, -0.1], index=["a", "b"]), None, "loo")
    >>> dv.to_frame().columns.tolist()
    ['value', 'standard_error']
    >>> dv
    DataValues('loo', 2 rows: exact values (no sampling error))
    """

    values: pd.Series
    standard_errors: pd.Series | None
    method: str
    adds_up_to: str | None = None
    total: float | None = None
    n_evaluations: int = 0
    info: dict = field(default_factory=dict)

    @property
    def precision(self) -> str:
        """One line on how precise the values are (:func:`~shap_instances.utils.precision_summary`): their RMS
        standard error against their spread, the permutations when known, and whether the rows spread beyond their
        noise; "exact values" for exact methods."""
        errors = None if self.standard_errors is None else self.standard_errors.to_numpy()
        return precision_summary(self.values.to_numpy(), errors, permutations=self.info.get("n_permutations"))

    def __repr__(self) -> str:
        return f"DataValues({self.method!r}, {len(self.values):,} rows: {self.precision})"

    def to_frame(self) -> pd.DataFrame:
        """The values and standard errors as two columns."""
        errors = self.standard_errors if self.standard_errors is not None else pd.Series(float("nan"),
                                                                                        index=self.values.index)
        return pd.DataFrame({"value": self.values, "standard_error": errors})
