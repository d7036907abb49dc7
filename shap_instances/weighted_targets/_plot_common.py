"""Helpers shared by the weighted-targets plots (GapExplainer's proximities, BoostingExplainer's signed weights):
turning inputs into weight rows and columns (validation at the boundary), drawing a signed weighted histogram."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
import scipy.sparse as sp
import shap

from ..exceptions import DataValidationError
from ._targets import as_weight_rows, signed_histogram

if TYPE_CHECKING:
    from matplotlib.axes import Axes


def weight_matrix(explanation_or_data: Any) -> sp.csr_matrix:
    """Rows of finite weights (any sign): a weight matrix as given, or an Explanation's normalised |values|."""
    if isinstance(explanation_or_data, shap.Explanation):
        values = np.abs(np.asarray(explanation_or_data.values, dtype=np.float64))
        if values.ndim == 1:
            values = values[None, :]
        if values.ndim == 3:
            values = values.sum(axis=2)
        sums = values.sum(axis=1, keepdims=True)
        return sp.csr_matrix(values / np.where(sums > 0, sums, 1.0))
    return as_weight_rows(explanation_or_data)


def weight_row(weights: Any, n: int) -> np.ndarray:
    """One dense row of ``n`` weights (any sign) from a 1-D array or a one-row (sparse) matrix."""
    matrix = weight_matrix(weights)
    if matrix.shape[0] != 1:
        raise DataValidationError(
            f"weights must be one row (the weights of one point), got {matrix.shape[0]} rows; pass W[j] for row j."
        )
    if matrix.shape[1] != n:
        raise DataValidationError(f"weights has {matrix.shape[1]} entries but data has {n} rows.")
    return matrix.toarray().ravel()


def draw_weighted_histogram(ax: Axes, values: np.ndarray, w: np.ndarray, edges: Any, *, color: Any,
                            label: str, negative_color: Any = "#D81B60") -> None:
    """Draw the weighted density of ``values`` on ``ax``: the positive part up (``label``) and, for signed
    weights, the negative part down; both per unit of ``sum w`` (:func:`~shap_instances.weighted_targets.
    signed_histogram`)."""
    up, down = signed_histogram(values, w, edges)
    ax.hist(edges[:-1], bins=edges, weights=up, color=color, alpha=0.75, label=label)
    if down.any():
        ax.hist(edges[:-1], bins=edges, weights=-down, color=negative_color, alpha=0.75,
                label="negative weights (drawn below 0)")
        ax.axhline(0.0, color="black", linewidth=0.6)


def column(data: Any, feature: int | str) -> tuple[np.ndarray, str]:
    """(values, name) of one feature of ``data`` (DataFrame column name or integer position)."""
    if isinstance(data, pd.DataFrame):
        if isinstance(feature, str):
            if feature not in data.columns:
                raise DataValidationError(f"feature {feature!r} is not a column of data: {list(data.columns)[:10]}.")
            return data[feature].to_numpy(dtype=np.float64), feature
        return data.iloc[:, int(feature)].to_numpy(dtype=np.float64), str(data.columns[int(feature)])
    array = np.asarray(data, dtype=np.float64)
    if array.ndim != 2:
        raise DataValidationError(f"data must be 2-D (n_train, n_features), got shape {array.shape}.")
    if isinstance(feature, str) or not -array.shape[1] <= int(feature) < array.shape[1]:
        raise DataValidationError(f"feature must be a column position in [0, {array.shape[1]}), got {feature!r}.")
    return array[:, int(feature)], f"x{int(feature)}"


def point_value(point: Any, data: Any, feature: int | str) -> float | None:
    """The value of ``feature`` at the explained point (Series, 1-D array or one-row DataFrame)."""
    if point is None:
        return None
    if isinstance(point, pd.DataFrame):
        point = point.iloc[0]
    if isinstance(point, pd.Series):
        return float(point[feature] if isinstance(feature, str) else point.iloc[int(feature)])
    array = np.asarray(point, dtype=np.float64).ravel()
    if isinstance(feature, str):
        feature = list(data.columns).index(feature)
    return float(array[int(feature)])
