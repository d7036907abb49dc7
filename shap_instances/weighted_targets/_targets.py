"""Weighted training targets: what GapExplainer and BoostingExplainer compute from rows of weights.

Both explainers write a prediction as a weighted sum of training targets, ``predict(x) = sum_j w_j(x) y_j``.
RF-GAP weights are a probability vector over the training rows; boosting weights (``kind="weights"``) are
signed and sum to one. This module holds, once, what is read off such weight rows whatever their sign (the
derivations are in ``docs/explainers/boosting.md``, section "Trust scores with signed weights"):

* :func:`weight_parts`: ``W = W+ - W-``, the positive and negative parts;
* :func:`weighted_quantiles`: quantiles of the targets under the **positive part**, normalised (for
  non-negative weights: the weights themselves);
* :func:`weighted_error`: the mean training error under ``|w|`` normalised; ``sum_j |w_j| |e_j|`` bounds how far
  errors ``e_j`` in the targets move the prediction;
* :func:`neighbours_for_weight` and :func:`cumulative_weight`: how many rows, largest ``|w|`` first, carry a
  share of ``sum_j |w_j|``;
* :func:`weight_concentration`: ``sum_j |w_j|``, the negative share, the effective number of rows;
* :func:`class_outlier_scores`: Rosaler et al.'s class-wise outlier scores (squares of weights: sign-free);
* :func:`trust_columns`: the regression trust-score columns both explainers report;
* :func:`signed_histogram`: the weighted histograms that the plots draw (positive part up, negative part down).

For non-negative weights every function gives what it gave before signed weights were considered, bit for bit.
All take a sparse matrix or a dense array of shape (m, n) (a 1-D array is one row) and never densify a sparse
one.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike

from ..exceptions import DataValidationError

__all__ = [
    "as_weight_rows",
    "class_outlier_scores",
    "cumulative_weight",
    "neighbours_for_weight",
    "signed_histogram",
    "trust_columns",
    "weight_concentration",
    "weight_parts",
    "weighted_error",
    "weighted_quantiles",
]

OUTLIER_SCALES = ("raw", "log")


def as_weight_rows(weights: Any, n: int | None = None, *, name: str = "weights") -> sp.csr_matrix:
    """Rows of finite weights (any sign) as a float64 CSR matrix without stored zeros; a 1-D array is one row.

    Parameters
    ----------
    weights : sparse matrix, ndarray of shape (m, n) or (n,)
    n : int, optional
        The number of training rows the weights must have.
    name : str
        Named in error messages.

    Examples
    --------
    >>> import numpy as np
    >>> from shap_instances.weighted_targets import as_weight_rows
    >>> as_weight_rows(np.array([0.5, -0.25, 0.75])).shape
    (1, 3)
    """
    if not sp.issparse(weights):
        weights = np.asarray(weights, dtype=np.float64)
        if weights.ndim == 1:
            weights = weights[None, :]
        if weights.ndim != 2:
            raise DataValidationError(f"{name} must be a 1-D row or a 2-D matrix, got shape {weights.shape}.")
    matrix = sp.csr_matrix(weights, dtype=np.float64)
    if matrix.nnz and not np.all(np.isfinite(matrix.data)):
        raise DataValidationError(f"{name} must be finite.")
    if matrix.nnz and not matrix.data.all():  # stored zeros are no weight: drop them, on a copy (the caller's
        matrix = matrix.copy()                # matrix may share its arrays with this one)
        matrix.eliminate_zeros()
    if n is not None and matrix.shape[1] != n:
        raise DataValidationError(f"{name} has {matrix.shape[1]} columns but there are {n} training rows.")
    return matrix


def _signed(P: sp.csr_matrix) -> bool:
    return bool(P.nnz) and float(P.data.min()) < 0


def weight_parts(weights: Any) -> tuple[sp.csr_matrix, sp.csr_matrix]:
    """``(W+, W-)``: the positive and negative parts, both non-negative, with ``W = W+ - W-``.

    Examples
    --------
    >>> import numpy as np
    >>> from shap_instances.weighted_targets import weight_parts
    >>> plus, minus = weight_parts(np.array([[0.75, -0.25, 0.5]]))
    >>> plus.toarray().tolist(), minus.toarray().tolist()
    ([[0.75, 0.0, 0.5]], [[0.0, 0.25, 0.0]])
    """
    P = as_weight_rows(weights)
    plus, minus = P.copy(), P.copy()
    plus.data = np.maximum(plus.data, 0.0)
    minus.data = np.maximum(-minus.data, 0.0)
    plus.eliminate_zeros()
    minus.eliminate_zeros()
    return plus, minus


def _absolute(P: sp.csr_matrix) -> sp.csr_matrix:
    if not _signed(P):
        return P
    A = P.copy()
    A.data = np.abs(A.data)
    return A


def _row_ids(P: sp.csr_matrix) -> np.ndarray:
    return np.repeat(np.arange(P.shape[0]), np.diff(P.indptr))


def weighted_quantiles(weights: Any, values: ArrayLike, quantiles: ArrayLike) -> np.ndarray:
    """Quantiles of ``values`` under each row's positive part: the smallest v with cumulative weight >= q.

    For non-negative weights (RF-GAP proximities) these are the quantiles of the weighted distribution of the
    targets. For signed weights, rows are first replaced by their positive parts ``w+`` and normalised: the
    distribution of the targets the prediction is pulled *towards* (see the docs for why not ``|w|``).

    Parameters
    ----------
    weights : sparse matrix or ndarray of shape (m, n)
    values : array-like of shape (n,)
    quantiles : sequence of float in (0, 1]

    Returns
    -------
    ndarray of shape (m, len(quantiles)); NaN for rows without positive weight.

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp
    >>> from shap_instances.weighted_targets import weighted_quantiles
    >>> P = sp.csr_matrix(np.array([[0.5, 0.25, 0.25], [0.0, 0.0, 1.0]]))
    >>> weighted_quantiles(P, np.array([1.0, 2.0, 3.0]), [0.5, 0.9]).tolist()
    [[1.0, 3.0], [3.0, 3.0]]
    >>> weighted_quantiles(np.array([[1.5, -1.0, 0.5]]), np.array([1.0, 2.0, 3.0]), [0.5, 0.9]).tolist()
    [[1.0, 3.0]]
    """
    P = as_weight_rows(weights)
    if _signed(P):
        P = weight_parts(P)[0]
    values = np.asarray(values, dtype=np.float64)
    qs = np.asarray(quantiles, dtype=np.float64)
    if not np.all((qs > 0) & (qs <= 1)):  # NaN refused too
        raise DataValidationError(f"quantiles must lie in (0, 1], got {qs.tolist()}.")
    m = P.shape[0]
    out = np.full((m, qs.size), np.nan)
    if P.nnz == 0:
        return out
    rows = _row_ids(P)
    v = values[P.indices]
    order = np.lexsort((v, rows))
    rows, v, w = rows[order], v[order], P.data[order]
    totals = np.bincount(rows, weights=w, minlength=m)
    cum = np.cumsum(w)
    starts = P.indptr[:-1]
    before = np.concatenate([[0.0], cum])[starts]
    frac = (cum - before[rows]) / np.where(totals > 0, totals, 1.0)[rows]
    key = rows + np.minimum(frac, 1.0)
    nonempty = (np.diff(P.indptr) > 0) & (totals > 0)
    ends = P.indptr[1:] - 1
    for a, q in enumerate(qs):
        pos = np.searchsorted(key, np.arange(m) + q - 1e-12, side="left")
        pos = np.minimum(pos, ends)
        out[nonempty, a] = v[pos[nonempty]]
    return out


def cumulative_weight(weights: Any, max_width: int | None = None) -> np.ndarray:
    """Per row, the share of ``sum_j |w_j|`` carried by its ``k`` largest ``|w_j|``, for ``k = 1, 2, ...``.

    Returns
    -------
    ndarray of shape (m, width)
        ``width`` is the largest number of non-zero weights in a row (at most ``max_width``); a row with fewer
        stays at 1 after its last one, and an all-zero row is NaN.

    Examples
    --------
    >>> import numpy as np
    >>> from shap_instances.weighted_targets import cumulative_weight
    >>> cumulative_weight(np.array([[0.5, -0.25, 0.75]])).round(3).tolist()
    [[0.5, 0.833, 1.0]]
    """
    A = _absolute(as_weight_rows(weights))
    width = max(1, int(np.diff(A.indptr).max(initial=1)))
    if max_width is not None:
        width = min(width, max(1, int(max_width)))
    curves = np.ones((A.shape[0], width))
    for j in range(A.shape[0]):
        row = np.sort(A.data[A.indptr[j]:A.indptr[j + 1]])[::-1]
        total = row.sum()
        if total == 0:
            curves[j] = np.nan
            continue
        cum = np.cumsum(row)[:width] / total
        curves[j, : cum.size] = cum
    return curves


def neighbours_for_weight(weights: Any, level: float = 0.9) -> np.ndarray:
    """Smallest number of rows (largest ``|w|`` first) carrying at least ``level`` of each row's ``sum |w|``.

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp
    >>> from shap_instances.weighted_targets import neighbours_for_weight
    >>> neighbours_for_weight(sp.csr_matrix(np.array([[0.7, 0.2, 0.1], [0.3, 0.3, 0.4]])), 0.9).tolist()
    [2, 3]
    """
    if not 0 < level <= 1:
        raise DataValidationError(f"level must lie in (0, 1], got {level}.")
    P = _absolute(as_weight_rows(weights))
    m = P.shape[0]
    if P.nnz == 0:
        return np.zeros(m, dtype=np.int64)
    rows = _row_ids(P)
    order = np.lexsort((-P.data, rows))
    w = P.data[order]
    totals = np.bincount(rows, weights=w, minlength=m)
    cum = np.cumsum(w)
    before = np.concatenate([[0.0], cum])[P.indptr[:-1]]
    frac = (cum - before[rows[order]]) / np.where(totals > 0, totals, 1.0)[rows[order]]
    reached = frac >= level - 1e-12
    first = np.full(m, -1, dtype=np.int64)
    positions = np.flatnonzero(reached)
    # first reaching position per row: positions are sorted, so take the first of each row
    r = rows[order][positions]
    keep = np.concatenate([[True], r[1:] != r[:-1]]) if r.size else np.zeros(0, bool)
    first[r[keep]] = positions[keep]
    counts = np.where(first >= 0, first - P.indptr[:-1] + 1, np.diff(P.indptr))
    return counts.astype(np.int64)


def weighted_error(weights: Any, errors: ArrayLike) -> np.ndarray:
    """``sum_j |w_j| e_j / sum_{j valid} |w_j|``: the mean of ``errors`` under the absolute weights.

    ``errors`` of shape (n,) or (n, k); NaN entries (rows without a reference error, such as points that are
    never out-of-bag) are left out and the weights renormalised over the others.

    Returns
    -------
    ndarray of shape (m, k) (NaN for rows with no weight on a valid error)

    Examples
    --------
    >>> import numpy as np
    >>> from shap_instances.weighted_targets import weighted_error
    >>> weighted_error(np.array([[0.5, -0.25, 0.75]]), np.array([1.0, 2.0, np.nan])).round(4).tolist()
    [[1.3333]]
    """
    A = _absolute(as_weight_rows(weights))
    errors = np.asarray(errors, dtype=np.float64)
    errors = errors[:, None] if errors.ndim == 1 else errors
    valid = ~np.isnan(errors).any(axis=1)
    denominator = np.asarray(A @ valid.astype(np.float64)).ravel()
    denominator = np.where(denominator > 0, denominator, np.nan)
    numerator = np.asarray(A @ np.where(valid[:, None], np.nan_to_num(errors), 0.0))
    return numerator / denominator[:, None]


def weight_concentration(weights: Any) -> dict[str, np.ndarray]:
    """How a row's weight is spread: ``total_abs_weight``, ``negative_share``, ``effective_rows``, ``largest``.

    ``total_abs_weight = sum |w_j|`` (1 for a probability vector; for signed weights summing to one,
    ``1 + 2 sum w-``); ``negative_share = sum w- / sum |w|``; ``effective_rows = (sum |w|)^2 / sum w^2`` (the number
    of equal weights with the same spread); ``largest = max |w_j|``.

    Examples
    --------
    >>> import numpy as np
    >>> from shap_instances.weighted_targets import weight_concentration
    >>> {k: round(float(v[0]), 4) for k, v in weight_concentration(np.array([[0.75, -0.25, 0.5]])).items()}
    {'total_abs_weight': 1.5, 'negative_share': 0.1667, 'effective_rows': 2.5714, 'largest': 0.75}
    """
    P = as_weight_rows(weights)
    A = _absolute(P)
    total = np.asarray(A.sum(axis=1)).ravel()
    negative = (total - np.asarray(P.sum(axis=1)).ravel()) / 2.0
    squares = np.asarray(P.multiply(P).sum(axis=1)).ravel()
    with np.errstate(invalid="ignore", divide="ignore"):
        return {
            "total_abs_weight": total,
            "negative_share": np.where(total > 0, negative / np.where(total > 0, total, 1.0), np.nan),
            "effective_rows": np.where(squares > 0, total**2 / np.where(squares > 0, squares, 1.0), 0.0),
            "largest": np.asarray(A.max(axis=1).todense()).ravel() if A.shape[1] else np.zeros(A.shape[0]),
        }


def class_outlier_scores(P: Any, P_reference: Any, reference_classes: ArrayLike, n_classes: int,
                         reference_valid: ArrayLike | None = None, *, scale: str = "raw") -> np.ndarray:
    """Class-wise outlier scores: median/MAD z-scores of ``n_J / sum_{j in J} w(x, j)^2`` (Rosaler et al.).

    The raw score of Rosaler et al. (their eq. 6), ``O_raw^J(x) = n_J / P^J(x)`` with
    ``P^J(x) = sum_{j in J} Prox(x, j)^2``, is the inverse of the mean squared proximity of ``x`` to the
    ``n_J`` training points of class ``J``. It is standardised with the median and the median absolute
    deviation (MAD) of the raw scores of the training points of class ``J`` (rows of ``P_reference``, their
    out-of-bag proximities): ``O^J(x) = (s(x) - med_J) / MAD_J`` (eq. 7). The squares make it independent of
    the weights' signs.

    ``scale`` says what ``s`` is:

    * ``"raw"`` (default): ``s = O_raw``, the paper's definition. Eq. (7) applies the median and the MAD to
      the raw score itself ("a median-based z-score of the raw outlier score"), and the paper mentions no
      transformation, so this is the default.
    * ``"log"``: ``s = log O_raw``. The raw score spans orders of magnitude (it is the inverse of a sum of
      squared weights), so on the raw scale isolated points get very large z-scores; the log scale
      compresses them and makes the z-score depend on ratios of raw scores. Not in the paper; an option.
      (In five-fold runs with 100 trees on breast cancer, iris, wine and digits, the margins of the two
      scales ranked test correctness alike: Spearman correlations within 0.03 of each other.)

    Reference points whose raw score is infinite (no out-of-bag proximity to their own class) are kept:
    they are the most outlying, and the median and MAD are order statistics that handle them. A class whose
    median is infinite (over half its points isolated) gets NaN scores; a MAD of 0 is replaced by 1. A point
    with no proximity at all to class ``J`` gets ``+inf``: it shares no leaf with any training point of that
    class.

    Parameters
    ----------
    P : sparse matrix (m, n_train)
    P_reference : sparse matrix (n_train, n_train)
    reference_classes : int array (n_train,)
        Class index of every training point.
    n_classes : int
    reference_valid : bool array (n_train,), optional
        Training points whose reference row is usable (those with at least one out-of-bag tree).
    scale : {"raw", "log"}, default="raw"

    Returns
    -------
    ndarray of shape (m, n_classes)

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp
    >>> from shap_instances.weighted_targets import class_outlier_scores
    >>> ref = sp.csr_matrix(np.array([[0, .5, .5, 0], [.5, 0, .5, 0], [0, 0, 0, 1.], [0, 0, 1., 0]]))
    >>> class_outlier_scores(sp.csr_matrix(np.array([[.5, .5, 0, 0]])), ref, np.array([0, 0, 1, 1]), 2).shape
    (1, 2)
    """
    if scale not in OUTLIER_SCALES:
        raise DataValidationError(f"scale must be one of {OUTLIER_SCALES}, got {scale!r}.")
    codes = np.asarray(reference_classes, dtype=np.int64)
    onehot = sp.csr_matrix((np.ones(codes.size), (np.arange(codes.size), codes)), shape=(codes.size, n_classes))
    n_j = np.asarray(onehot.sum(axis=0)).ravel()

    def score(matrix: Any) -> np.ndarray:
        matrix = sp.csr_matrix(matrix)
        s = np.asarray((matrix.multiply(matrix) @ onehot).todense())
        with np.errstate(divide="ignore"):
            if scale == "log":
                return np.log(n_j)[None, :] - np.log(s)
            return n_j[None, :] / s

    raw_x = score(P)
    raw_ref = score(P_reference)
    valid = np.ones(codes.size, bool) if reference_valid is None else np.asarray(reference_valid, bool)
    z = np.full(raw_x.shape, np.nan)
    for c in range(n_classes):
        ref = raw_ref[(codes == c) & valid, c]
        if ref.size == 0:
            continue
        med = np.median(ref)
        if not np.isfinite(med):
            continue
        mad = np.median(np.abs(ref - med))
        z[:, c] = (raw_x[:, c] - med) / (mad if 0 < mad < np.inf else 1.0)
    return z


def trust_columns(weights: Any, targets: ArrayLike, predictions: ArrayLike, errors: ArrayLike, *,
                  output_names: Sequence[str] | None = None, quantiles: Sequence[float] = (0.1, 0.5, 0.9),
                  level: float = 0.9, error_name: str = "weighted_error",
                  concentration: bool = False) -> dict[str, np.ndarray]:
    """The regression trust-score columns of a weighted-targets model, in order.

    ``prediction``, ``<error_name>`` (:func:`weighted_error` of the training rows' absolute reference errors),
    ``q10`` ... (:func:`weighted_quantiles` of the targets), ``n_neighbours_<level>``
    (:func:`neighbours_for_weight`) and, with ``concentration``, ``total_abs_weight`` and ``negative_share``
    (:func:`weight_concentration`). With several outputs every column but the last three gets the suffix
    ``_<output name>``.

    Parameters
    ----------
    weights : sparse matrix or ndarray (m, n)
    targets : ndarray (n, k)
    predictions : ndarray (m, k)
    errors : ndarray (n, k)
        Absolute reference errors of the training rows (NaN where a row has none).
    output_names : list of str, optional
        One per output, used as suffixes when ``k > 1`` (default: the outputs' positions).
    quantiles, level : see :func:`weighted_quantiles`, :func:`neighbours_for_weight`
    error_name : str
    concentration : bool

    Examples
    --------
    >>> import numpy as np
    >>> from shap_instances.weighted_targets import trust_columns
    >>> W = np.array([[0.75, -0.25, 0.5]])
    >>> y = np.array([[1.0], [2.0], [3.0]])
    >>> cols = trust_columns(W, y, W @ y, np.ones((3, 1)), quantiles=(0.5,), concentration=True)
    >>> list(cols), float(cols["q50"][0])
    (['prediction', 'weighted_error', 'q50', 'n_neighbours_90', 'total_abs_weight', 'negative_share'], 1.0)
    """
    P = as_weight_rows(weights)
    targets = np.asarray(targets, dtype=np.float64).reshape(P.shape[1], -1)
    predictions = np.asarray(predictions, dtype=np.float64).reshape(P.shape[0], -1)
    k = targets.shape[1]
    names = [str(a) for a in range(k)] if output_names is None else [str(name) for name in output_names]
    if k > 1 and len(names) != k:
        raise DataValidationError(f"output_names must name the {k} outputs, got {len(names)} names.")
    suffix = [""] if k == 1 else [f"_{name}" for name in names]
    columns = {}
    for a in range(k):
        columns[f"prediction{suffix[a]}"] = predictions[:, a]
    weighted = weighted_error(P, np.asarray(errors, dtype=np.float64).reshape(P.shape[1], -1))
    for a in range(k):
        columns[f"{error_name}{suffix[a]}"] = weighted[:, a]
    for a in range(k):
        qv = weighted_quantiles(P, targets[:, a], quantiles)
        for b, q in enumerate(quantiles):
            columns[f"q{round(100 * q):02d}{suffix[a]}"] = qv[:, b]
    columns[f"n_neighbours_{round(100 * level)}"] = neighbours_for_weight(P, level)
    if concentration:
        spread = weight_concentration(P)
        columns["total_abs_weight"] = spread["total_abs_weight"]
        columns["negative_share"] = spread["negative_share"]
    return columns


def signed_histogram(values: ArrayLike, weights: ArrayLike, edges: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """Densities of the positive and negative parts of one weight row over ``edges``, per unit of ``sum w``.

    Returns ``(up, down)``, both non-negative, one entry per bin: ``up - down`` integrates to one and its mean
    is ``sum_j w_j v_j / sum_j w_j`` (the prediction, for ``v`` the targets). For non-negative weights ``down``
    is zero and ``up`` is the weighted density (``numpy.histogram(..., density=True)``).

    Examples
    --------
    >>> import numpy as np
    >>> from shap_instances.weighted_targets import signed_histogram
    >>> up, down = signed_histogram(np.array([0.5, 1.5, 2.5]), np.array([0.75, -0.25, 0.5]), np.array([0.0, 1, 2, 3]))
    >>> up.tolist(), down.tolist()
    ([0.75, 0.0, 0.5], [0.0, 0.25, 0.0])
    """
    values = np.asarray(values, dtype=np.float64)
    w = np.asarray(weights, dtype=np.float64)
    total = w.sum()
    if not total > 0:
        raise DataValidationError(f"the weights sum to {total:.4g}: there is no distribution to draw (the sum must "
                                  "be positive).")
    widths = np.diff(edges)
    up = np.histogram(values, bins=edges, weights=np.maximum(w, 0.0))[0] / (total * widths)
    down = np.histogram(values, bins=edges, weights=np.maximum(-w, 0.0))[0] / (total * widths)
    return up, down
