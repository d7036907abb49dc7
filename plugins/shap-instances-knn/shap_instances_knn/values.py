"""Exact KNN-Shapley values from a distance matrix: the validated public function and its unchecked twin.

:func:`knn_shapley_values` validates its inputs, then :func:`_knn_shapley_values` sorts every row of the
distance matrix (ties broken by label, then by training index) and runs the numba recursion of
:mod:`shap_instances_knn._kernels`. :func:`knn_utility` evaluates the same utility directly from the
sorted order, without the recursion: the explainer uses it as the explained quantity of the efficiency
check.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from shap_instances.exceptions import DataValidationError, InvalidParameterError
from shap_instances.utils import check_labels, check_target

from . import _kernels

__all__ = ["UTILITIES", "knn_shapley_values", "knn_utility"]

#: The utilities with an exact recursion: name -> one-line definition.
UTILITIES = {
    "accuracy": "(1/K) * number of the K nearest points of S whose label equals the explained label",
    "prediction": "(1/K) * sum of the labels of the K nearest points of S (the KNN regression prediction)",
    "neg_squared_error": "-((1/K) * sum of the labels of the K nearest points of S - explained label)^2",
}


def knn_shapley_values(distances: ArrayLike, y_train: ArrayLike, y_explained: ArrayLike | None = None, *,
                       n_neighbors: int, utility: str = "accuracy") -> np.ndarray:
    """Exact Shapley values of the training points in the unweighted KNN utility (Jia et al., 2019).

    ``values[j, i]`` is the Shapley value of training point ``i`` in the game whose players are the
    training points and whose value of a coalition ``S`` is the KNN utility of ``S`` for explained point
    ``j`` (see :data:`UTILITIES`; when ``S`` has fewer than ``K`` points the sum is still divided by ``K``,
    the paper's convention, so the empty coalition is worth 0, or ``-y_j**2`` for ``neg_squared_error``).
    Points are ordered by distance; among equal distances the smaller label counts as nearer (for
    ``"accuracy"``: the label seen first in ``y_train``), then the lower training index, so the values
    are deterministic and two copies of a training point (same features, same label) get equal values.
    Cost: ``O(n_train log n_train)`` per explained point.

    Parameters
    ----------
    distances : array-like of shape (n_explained, n_train)
        Distance from each explained point to each training point.
    y_train : array-like of shape (n_train,)
        Training labels (any comparable values for ``"accuracy"``, numbers otherwise).
    y_explained : array-like of shape (n_explained,), optional
        Labels of the explained points; required by ``"accuracy"`` and ``"neg_squared_error"``.
    n_neighbors : int
        ``K``, the number of neighbours (at least 1).
    utility : {"accuracy", "prediction", "neg_squared_error"}, default="accuracy"
        The utility whose Shapley values are computed.

    Returns
    -------
    numpy.ndarray of shape (n_explained, n_train)

    Examples
    --------
    >>> import numpy as np
    >>> from shap_instances_knn import knn_shapley_values
    >>> d = np.array([[0.1, 0.2, 0.3]])
    >>> knn_shapley_values(d, [1, 0, 1], [1], n_neighbors=1).round(4).tolist()
    [[0.8333, -0.1667, 0.3333]]
    """
    distances, y_train, y_explained, n_neighbors = _check_inputs(distances, y_train, y_explained, n_neighbors, utility)
    train, explained, _ = _encode(y_train, y_explained, utility)
    return _knn_shapley_values(_sorted_order(distances, train), train, explained, n_neighbors, utility)


def knn_utility(distances: ArrayLike, y_train: ArrayLike, y_explained: ArrayLike | None = None, *, n_neighbors: int,
                utility: str = "accuracy") -> np.ndarray:
    """The KNN utility of the full training set for each explained point (no recursion involved).

    Parameters are those of :func:`knn_shapley_values`.

    Returns
    -------
    numpy.ndarray of shape (n_explained,)

    Examples
    --------
    >>> import numpy as np
    >>> from shap_instances_knn import knn_utility
    >>> knn_utility(np.array([[0.1, 0.2, 0.3]]), [1, 0, 1], [1], n_neighbors=2).tolist()
    [0.5]
    """
    distances, y_train, y_explained, n_neighbors = _check_inputs(distances, y_train, y_explained, n_neighbors, utility)
    train, explained, _ = _encode(y_train, y_explained, utility)
    return _knn_utility(_sorted_order(distances, train), train, explained, n_neighbors, utility)


def _check_inputs(distances, y_train, y_explained, n_neighbors, utility):
    """Validate the arguments of the public functions; returns them as arrays."""
    distances = np.asarray(distances, dtype=np.float64)
    if distances.ndim != 2 or distances.shape[1] == 0:
        raise DataValidationError(
            f"distances must have shape (n_explained, n_train) with n_train >= 1, got {distances.shape}."
        )
    if np.isnan(distances).any():
        raise DataValidationError("distances contains NaN; check the data and the metric.")
    y_train, y_explained, n_neighbors = _check_labels(distances.shape, y_train, y_explained, n_neighbors, utility)
    return distances, y_train, y_explained, n_neighbors


def _check_labels(shape, y_train, y_explained, n_neighbors, utility):
    """Validate labels, K and the utility for ``shape = (n_explained, n_train)``."""
    if utility not in UTILITIES:
        raise InvalidParameterError(f"utility must be one of {sorted(UTILITIES)}, got {utility!r}.")
    if isinstance(n_neighbors, bool) or not isinstance(n_neighbors, int | np.integer) or n_neighbors < 1:
        raise InvalidParameterError(f"n_neighbors must be an integer >= 1, got {n_neighbors!r}.")
    n_explained, n_train = shape
    if np.shape(y_train) != (n_train,):
        raise DataValidationError(
            f"y_train must have shape ({n_train},), one label per training point, got {np.shape(y_train)}."
        )
    if utility == "prediction":
        y_explained = None
    elif y_explained is None:
        raise DataValidationError(f"utility={utility!r} needs the labels of the explained points: pass y_explained "
                                  "(or y=).")
    elif np.shape(y_explained) != (n_explained,):
        raise DataValidationError(f"y_explained must have shape ({n_explained},), one label per explained point, "
                                  f"got {np.shape(y_explained)}.")
    if utility == "accuracy":  # an explained label no training point has is allowed: its values are 0
        y_train = check_labels(y_train, n_train, name="y_train")
        if y_explained is not None:
            y_explained = check_labels(y_explained, n_explained, name="y_explained", allow_unknown=True,
                                       classes=np.unique(y_train), classes_of="the labels of y_train")
    else:
        y_train = check_target(y_train, n_train, name="y_train")
        if y_explained is not None:
            y_explained = check_target(y_explained, n_explained, name="y_explained")
    return y_train, y_explained, int(n_neighbors)


def _encode(y_train, y_explained, utility, codes=None):
    """The numbers the kernels work on: label codes for "accuracy", float labels otherwise.

    For "accuracy", equal labels get equal codes, numbered by first appearance in ``y_train`` (or taken
    from ``codes``, a label -> code dict built earlier); an explained label never seen in training gets -1.
    Returns ``(train, explained, codes)``; ``explained`` is None when ``y_explained`` is.
    """
    if utility != "accuracy":
        explained = None if y_explained is None else np.ascontiguousarray(y_explained, dtype=np.float64)
        return np.ascontiguousarray(y_train, dtype=np.float64), explained, None
    if codes is None:
        codes = {}
        train = np.array([codes.setdefault(label, len(codes)) for label in y_train.tolist()], dtype=np.int64)
    else:
        train = np.array([codes[label] for label in y_train.tolist()], dtype=np.int64)
    explained = None
    if y_explained is not None:
        explained = np.array([codes.get(label, -1) for label in np.asarray(y_explained).tolist()], dtype=np.int64)
    return train, explained, codes


def _sorted_order(distances, tie_key):
    """Training indices sorted by distance, closest first; ties broken by ``tie_key``, then by training index.

    ``tie_key`` is the encoded training label (see :func:`_encode`). Breaking ties by label first makes two
    copies of a training point (equal features, equal label) adjacent in every order, so they are
    symmetric players of the game and get equal values. Rows without ties have one order, so a fast
    unstable sort is enough for them; rows with ties are re-sorted by (distance, label, index).
    """
    order = np.argsort(distances, axis=1)
    sorted_distances = np.take_along_axis(distances, order, axis=1)
    tied = np.flatnonzero((np.diff(sorted_distances, axis=1) == 0).any(axis=1))
    if tied.size:  # np.lexsort is stable: the training index decides what label and distance leave tied
        rows = distances[tied]
        order[tied] = np.lexsort((np.broadcast_to(tie_key, rows.shape), rows), axis=1)
    return np.ascontiguousarray(order, dtype=np.int64)


def _knn_shapley_values(order, train, explained, n_neighbors, utility):
    """Unchecked twin of :func:`knn_shapley_values`: sorted order (contiguous int64), encoded labels."""
    out = np.empty(order.shape, dtype=np.float64)
    if order.shape[0] == 0:
        return out
    if utility == "accuracy":
        _kernels.knn_shapley_match(order, train, explained, n_neighbors, out)
    elif utility == "prediction":
        _kernels.knn_shapley_linear(order, train, n_neighbors, out)
    else:
        _kernels.knn_shapley_squared_error(order, train, explained, n_neighbors, out)
    return out


def _knn_utility(order, train, explained, n_neighbors, utility):
    """v(full training set) straight from the definition (no recursion), for the efficiency check."""
    nearest = order[:, :n_neighbors]
    if utility == "accuracy":
        return (train[nearest] == explained[:, None]).sum(axis=1) / n_neighbors
    prediction = train[nearest].sum(axis=1) / n_neighbors
    if utility == "prediction":
        return prediction
    return -((prediction - explained) ** 2)


def _empty_utility(y_explained, n_explained, utility):
    """v(empty set): 0, or -y**2 for the squared error."""
    if utility == "neg_squared_error":
        return -(np.asarray(y_explained, dtype=np.float64) ** 2)
    return np.zeros(n_explained)
