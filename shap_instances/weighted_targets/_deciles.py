"""Decile tables of a trust score against the realised error: does a higher score mean a smaller error?"""

from __future__ import annotations

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from ..exceptions import DataValidationError
from ..utils import check_target

__all__ = ["trust_decile_table"]


def trust_decile_table(score: ArrayLike, error: ArrayLike, *, n_bins: int = 10) -> pd.DataFrame:
    """Mean out-of-sample error (or accuracy) in each quantile bin of a trust score.

    Parameters
    ----------
    score : array-like of shape (n,)
        A trust score, e.g. ``weighted_oob_error`` or ``class_probability``.
    error : array-like of shape (n,)
        The realised out-of-sample error (absolute error, or 0/1 correctness) of the same points.
    n_bins : int, default=10
        Number of bins of equal size (deciles), formed by rank so that ties and infinite scores are kept;
        each bin is labelled by the range of scores it holds.

    Returns
    -------
    pandas.DataFrame
        One row per bin: ``bin`` (the score interval), ``n``, ``score_mean``, ``error_mean``, ``error_sem``.

    Examples
    --------
    >>> import numpy as np
    >>> from shap_instances.weighted_targets import trust_decile_table
    >>> table = trust_decile_table(np.arange(100.0), np.arange(100.0) / 10)
    >>> len(table), bool(table["error_mean"].is_monotonic_increasing)
    (10, True)
    """
    score = np.asarray(score, dtype=np.float64)
    if score.ndim != 1 or score.size == 0:
        raise DataValidationError(f"score must be a non-empty 1-D array, got shape {score.shape}.")
    error = check_target(error, score.shape[0], name="error")
    if error.ndim != 1:
        raise DataValidationError("score and error must be 1-D arrays of the same length.")
    if n_bins < 2:
        raise DataValidationError(f"n_bins must be at least 2, got {n_bins}.")
    if np.isnan(score).any():
        raise DataValidationError("score contains NaN; drop those points first.")
    n_bins = min(int(n_bins), score.size)
    order = np.argsort(score, kind="stable")
    bin_of = np.empty(score.size, dtype=np.int64)
    bin_of[order] = np.arange(score.size) * n_bins // score.size
    frame = pd.DataFrame({"bin": bin_of, "score": score, "error": error})
    grouped = frame.groupby("bin")
    table = pd.DataFrame({
        "bin": [f"[{lo:.4g}, {hi:.4g}]" for lo, hi in zip(grouped["score"].min(), grouped["score"].max())],
        "n": grouped["error"].size(),
        "score_mean": grouped["score"].mean(),
        "error_mean": grouped["error"].mean(),
        "error_sem": grouped["error"].std(ddof=1) / np.sqrt(grouped["error"].size()),
    })
    return table.reset_index(drop=True)
