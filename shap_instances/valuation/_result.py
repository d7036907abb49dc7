"""``DataValues``: what every data-valuation function returns."""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

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
    >>> from shap_instances.valuation import DataValues
    >>> dv = DataValues(pd.Series([0.5, -0.1], index=["a", "b"]), None, "loo")
    >>> dv.to_frame().columns.tolist()
    ['value', 'standard_error']
    """

    values: pd.Series
    standard_errors: pd.Series | None
    method: str
    adds_up_to: str | None = None
    total: float | None = None
    n_evaluations: int = 0
    info: dict = field(default_factory=dict)

    def to_frame(self) -> pd.DataFrame:
        """The values and standard errors as two columns."""
        errors = self.standard_errors if self.standard_errors is not None else pd.Series(float("nan"),
                                                                                        index=self.values.index)
        return pd.DataFrame({"value": self.values, "standard_error": errors})
