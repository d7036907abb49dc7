"""What ``BoostingExplainer`` computes from a read model: the decomposition kind, the explanation values, the
leave-self-out predictions, the trust scores, ``top_k`` and the reconstruction tolerance.

Every function takes validated inputs (the explainer checks them once) and the read model
(:class:`~shap_instances.boosting.BoostedTrees`); the explainer wraps the results in an Explanation.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, cast

import numpy as np
import pandas as pd
import scipy.sparse as sp

from ..exceptions import UnsupportedModelError
from ..utils import check_memory
from ..weighted_targets import trust_columns
from ._ensemble import (
    BoostedTrees,
    gradient_contributions,
    row_major_contributions,
    target_weights,
    top_gradient_contributions,
)

__all__ = ["boosting_trust_scores", "boosting_values", "decomposition_kind", "loo_predictions",
           "reconstruction_tolerance", "row_chunk", "row_major_index", "self_weights", "top_k_values"]

#: Relative reconstruction tolerance of libraries whose gradients and leaf values are float64.
ATOL = 1e-9
#: ``top_k`` of ``kind="gradients"`` prunes (see ``docs/explainers/boosting.md``) from this many training rows on;
#: below it the dense scatter per row is cheap.
PRUNE_MIN_ROWS = 20_000

RowMajorIndex = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]


def decomposition_kind(trees: BoostedTrees, kind: str) -> str:
    """The decomposition ``kind`` resolves to for ``trees`` (``"auto"``: weights where they hold), or raise.

    Examples
    --------
    >>> from sklearn.datasets import load_diabetes
    >>> from sklearn.ensemble import GradientBoostingRegressor
    >>> from shap_instances.boosting import decomposition_kind, read_boosted_model
    >>> X, y = load_diabetes(return_X_y=True)
    >>> trees = read_boosted_model(GradientBoostingRegressor(n_estimators=5).fit(X, y), X, y)
    >>> decomposition_kind(trees, "auto")
    'weights'
    """
    weights_ok = trees.loss == "squared_error" and trees.n_outputs == 1 and trees.init in ("mean", "constant")
    if kind == "auto":
        return "weights" if weights_ok else "gradients"
    if kind == "weights" and not weights_ok:
        reason = (f"the model's loss is {trees.loss!r}" if trees.loss != "squared_error"
                  else "its initial prediction is an estimator that is not the mean of y or a constant")
        raise UnsupportedModelError(
            f"kind='weights' writes the prediction as a weighted sum of training targets, which holds for "
            f"squared-error regression only, and {reason}; use kind='gradients' (contributions through the "
            "training gradients, exact for this model).")
    return kind


def row_chunk(bytes_per_row: float, max_memory: float | None) -> int:
    """Explained rows per chunk so that a chunk's temporaries fit in ``max_memory`` (default 256 MiB)."""
    budget = 256 * 2**20 if max_memory is None else max_memory
    return max(1, int(budget // bytes_per_row))


def boosting_values(trees: BoostedTrees, kind: str, y_train: np.ndarray, leaves: np.ndarray, *,
                    n_jobs: int | None = None) -> np.ndarray:
    """The explanation values (m, n_train, K) of validated leaf ranks, as a new array.

    ``kind="weights"``: ``w_j(x) (y_j - F_0)``; ``"gradients"``: :func:`gradient_contributions`.
    """
    if kind == "weights":
        values = target_weights(trees, leaves, n_jobs=n_jobs)
        init = cast(np.ndarray, trees.init_constant)  # weights need a constant start
        values *= (y_train - init[0])[None, :]  # in place: the weights become the values
        return values[:, :, None]
    return gradient_contributions(trees, leaves, n_jobs=n_jobs)


def self_weights(trees: BoostedTrees, *, n_jobs: int | None = None, max_memory: float | None = None) -> np.ndarray:
    """``w_jj``: the weight of every training row on its own in-sample prediction, in chunks (read-only)."""
    decomposition_kind(trees, "weights")
    leaves = trees.train_leaves
    n = leaves.shape[1]
    diagonal = np.empty(n)
    chunk = row_chunk(8.0 * n, max_memory)
    for a in range(0, n, chunk):
        rows = np.arange(a, min(n, a + chunk))
        W = target_weights(trees, np.ascontiguousarray(leaves[:, rows].T), n_jobs=n_jobs)
        diagonal[rows] = W[np.arange(rows.size), rows]
        del W
    diagonal.flags.writeable = False
    return diagonal


def loo_predictions(trees: BoostedTrees, data: Any, y_train: np.ndarray, diagonal: np.ndarray) -> np.ndarray:
    """Leave-self-out predictions ``y_j - (y_j - F(x_j)) / (1 - w_jj)``; NaN where ``w_jj >= 1 - 1e-9``.

    ``diagonal`` holds the self weights ``w_jj`` (:func:`self_weights`); see
    :meth:`shap_instances.BoostingExplainer.loo_predictions`.
    """
    fitted = trees.margin(data)[:, 0]
    with np.errstate(invalid="ignore", divide="ignore"):
        out = y_train - (y_train - fitted) / (1.0 - diagonal)
    out[~(diagonal < 1.0 - 1e-9)] = np.nan
    return out


def boosting_trust_scores(trees: BoostedTrees, leaves: np.ndarray, X: Any, y_train: np.ndarray,
                          loo: np.ndarray, *, quantiles: Sequence[float] = (0.1, 0.5, 0.9), level: float = 0.9,
                          n_jobs: int | None = None, max_memory: float | None = None) -> pd.DataFrame:
    """Trust scores from the signed target weights of validated rows ``X`` (leaf ranks ``leaves``), in chunks.

    ``loo`` holds the leave-self-out predictions of the training rows; see
    :meth:`shap_instances.BoostingExplainer.trust_scores` for the columns.
    """
    predictions = trees.margin(X)[:, 0]
    errors = np.abs(y_train - loo)
    frames = []
    chunk = row_chunk(64.0 * y_train.shape[0], max_memory)  # dense weights, their CSR copy and the quantiles' sorts
    for a in range(0, leaves.shape[0], chunk):
        W = target_weights(trees, leaves[a:a + chunk], n_jobs=n_jobs)
        frames.append(pd.DataFrame(trust_columns(
            W, y_train, predictions[a:a + chunk], errors, quantiles=quantiles, level=level,
            error_name="weighted_loo_error", concentration=True)))
        del W
    return pd.concat(frames, ignore_index=True)


def top_k_values(trees: BoostedTrees, kind: str, y_train: np.ndarray, leaves: np.ndarray, column: int, k: int, *,
                 row_major: Callable[[], RowMajorIndex | None] | None = None, n_jobs: int | None = None,
                 max_memory: float | None = None) -> sp.csr_matrix:
    """The ``k`` values of largest absolute value of margin ``column`` in each explained row, as CSR (m, n_train).

    With ``kind="gradients"`` and :data:`PRUNE_MIN_ROWS` training rows or more, ``row_major()`` is asked for the
    row-major index of ``column`` (:func:`row_major_index`; None when it does not fit) and the rows are pruned;
    otherwise they are explained in chunks under ``max_memory`` (default 256 MiB). See
    :meth:`shap_instances.BoostingExplainer.top_k`.
    """
    m, n, K = leaves.shape[0], y_train.shape[0], trees.n_outputs
    indptr = np.arange(0, m * k + 1, k, dtype=np.int64)
    if kind == "gradients" and n >= PRUNE_MIN_ROWS and row_major is not None:
        index = row_major()
        if index is not None:
            indices, data, _ = top_gradient_contributions(
                trees, leaves, int(k), None, index, n_jobs=n_jobs)
            return sp.csr_matrix((data.ravel(), indices.ravel(), indptr), shape=(m, n))
    budget = 256 * 2**20 if max_memory is None else max_memory
    check_memory(8.0 * n * K + 12.0 * m * k, f"top_k's result ({m} x {k}) and one row of values",
                 max_memory=budget, instead="Raise max_memory, or ask for fewer rows or a smaller k.")
    chunk = max(1, min(m, int((budget - 12.0 * m * k) // (8.0 * n * K))))
    indices = np.empty((m, k), dtype=np.int64)
    data = np.empty((m, k))
    for a in range(0, m, chunk):
        values = boosting_values(trees, kind, y_train, leaves[a:a + chunk], n_jobs=n_jobs)[:, :, column]
        for i, row in enumerate(values, start=a):  # one row at a time: O(n) temporaries
            keep = np.sort(np.argpartition(-np.abs(row), k - 1)[:k]) if k < n else np.arange(n)
            indices[i], data[i] = keep, row[keep]
        del values, row  # the row is a view: it would keep the chunk alive while the next one is computed
    return sp.csr_matrix((data.ravel(), indices.ravel(), indptr), shape=(m, n))


def row_major_index(trees: BoostedTrees, column: int, *, max_memory: float | None = None) -> RowMajorIndex | None:
    """:func:`row_major_contributions` of margin ``column``, or None when its ``12 n T_k`` bytes exceed the budget."""
    n_k = int(np.sum(trees.tree_output == column))
    try:
        check_memory(12.0 * trees.train_leaves.shape[1] * n_k, "top_k's row-major index", max_memory=max_memory)
    except MemoryError:
        return None
    return row_major_contributions(trees, column)


def reconstruction_tolerance(trees: BoostedTrees, kind: str, y_train: np.ndarray, leaves: np.ndarray) -> float:
    """Tolerance of the reconstruction check: 1e-9 where the replay is exact, else a float32 bound.

    XGBoost stores leaf values and sums margins in float32: ``(T + 2) 2^-23 (|F_0| + sum_t |v_t(x)|)``.
    Target weights use exact residuals where HistGradientBoosting, XGBoost and LightGBM fitted their trees
    on float32-rounded gradients: ``(T + 2) 2^-23 max_j |y_j - F_0|``. (Both are absolute bounds, hence also
    bounds of the relative gap the check measures.)
    """
    T, unit = trees.n_trees, 2.0 ** -23
    bound = ATOL
    init = cast(np.ndarray, trees.init_constant)  # xgboost and the weights kind start from a constant
    if trees.library == "xgboost":
        stored = np.abs(trees.leaf_values[np.arange(T)[None, :], leaves]).sum(axis=1)
        bound += (T + 2) * unit * float(np.max(np.abs(init)) + np.max(stored, initial=0.0))
    if trees.float32 and kind == "weights":
        bound += (T + 2) * unit * float(np.max(np.abs(y_train - init[0])))
    return bound
