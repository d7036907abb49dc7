"""``KNNShapleyExplainer``: exact KNN-Shapley values of the training instances (Jia et al., 2019).

This module uses only the public API of ``shap_instances``: it is the worked example of ``docs/plugins.md``.
"""

from __future__ import annotations

import os
import time
import warnings
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
import pandas as pd
import shap
from joblib import Parallel, delayed, effective_n_jobs
from numpy.typing import ArrayLike
from sklearn.base import clone
from sklearn.metrics import pairwise_distances
from sklearn.neighbors import KNeighborsClassifier, KNeighborsRegressor

from shap_instances import InstanceExplainer, build_explanation, training_row_data
from shap_instances.exceptions import (
    DataValidationError,
    InvalidParameterError,
    ReconstructionWarning,
    UnsupportedModelError,
)
from shap_instances.utils import (
    COMMON_CONSTRAINTS,
    Options,
    check_data,
    check_fitted,
    check_labels,
    check_memory,
    fitted_columns,
    model_input,
    row_names,
    training_names,
    unwrap_model,
)

from .values import (
    UTILITIES,
    _check_labels,
    _empty_utility,
    _encode,
    _knn_shapley_values,
    _knn_utility,
    _sorted_order,
)

if TYPE_CHECKING:
    from shap_instances.testing import ConformanceProblem

__all__ = ["KNNShapleyExplainer"]

_CLASSIFIER_UTILITIES = ("accuracy",)
_REGRESSOR_UTILITIES = ("neg_squared_error", "prediction")
#: Bytes of distances (float64) plus sorted indices (int64) held per chunk of explained rows.
_CHUNK_BYTES = 2**25


class KNNShapleyExplainer(InstanceExplainer):
    """Exact Shapley values of the training instances of a k-nearest-neighbours model.

    The players are the training instances. For an explained point ``x`` with label ``y``, a coalition
    ``S`` of training instances is worth the utility of a KNN model (the model's ``n_neighbors = K`` and
    metric) that only has ``S`` as training data:

    * classification (``utility="accuracy"``): ``v(S) = (1/K) * #{K nearest points of S with label y}``,
      the unweighted KNN utility of Jia et al. (2019);
    * regression (``utility="neg_squared_error"``, the default): ``v(S) = -(A(S) - y)**2`` with
      ``A(S) = (1/K) * sum of the labels of the K nearest points of S``;
    * regression (``utility="prediction"``): ``v(S) = A(S)``, the KNN prediction itself (no ``y`` needed).

    When ``S`` has fewer than ``K`` points the sum is still divided by ``K`` (the paper's convention), so
    ``v(empty) = 0`` (``-y**2`` for the squared error). Exact values cost ``O(n_train log n_train)`` per
    explained point: one sort by distance (ties: the smaller label, then the lower training index, is
    nearer; so copies of a training point get equal values) and an ``O(n_train)`` recursion compiled
    with numba.

    ``explanation.values[j, i]`` is training instance ``i``'s share of explained point ``j``'s utility;
    ``base_values = v(empty)`` and ``base_values + values.sum(axis=1) = v(all training instances)``, which
    equals the model's ``predict_proba`` of the true class (classification) or ``predict`` (regression,
    ``"prediction"``) when there are no distance ties at the K-th neighbour.

    Parameters
    ----------
    model : KNeighborsClassifier or KNeighborsRegressor
        A fitted model with ``weights="uniform"``; it supplies ``K`` and the metric. Distance-weighted
        KNN (``weights="distance"`` or a callable) has no known closed form and is refused. A fitted pipeline
        or meta-estimator around one is accepted: its fitted steps transform the training rows once and the
        explained rows on every call.
    masker : array-like or sparse matrix of shape (n_train, n_features)
        The training instances to value (the players); ``data=`` is an alias. For ``metric="precomputed"``,
        any array with ``n_train`` rows. A DataFrame (or a model fitted on one) sets the column names that
        explained DataFrames are matched by. Sparse input works with the metrics that ``pairwise_distances``
        accepts sparse.
        Usually the data the model was fitted on; any other set is valued as the training set of a KNN
        with the model's ``K`` and metric.
    y : array-like of shape (n_train,)
        Their labels.
    utility : {"auto", "accuracy", "neg_squared_error", "prediction"}, default="auto"
        "auto" is "accuracy" for a classifier and "neg_squared_error" for a regressor.
    n_jobs : int or None, default=None
        Threads computing chunks of explained points in parallel (joblib semantics), at most one per core and
        per chunk.
    silent : bool, default=False
        Turn off the progress bar.
    max_memory : float, optional
        Byte budget of one call's dense values (default: half the memory available).
    feature_names : sequence of str, optional
        Names of the training rows (the players).
    scheduler : str or distributed.Client, optional
        Explain the rows on a dask cluster, partition by partition: a scheduler address, a ``Client`` or
        ``"local"``; a dask array or DataFrame ``X`` is explained by partitions even without one (values bitwise
        those of the serial call; see ``shap_instances.utils.explain_partitions``).

    Attributes
    ----------
    utility_ : str
        The utility in use.
    n_neighbors_ : int
        ``K``, from the model.
    metric_ : str or callable
        The model's effective metric; ``metric_params_`` holds its parameters.
    n_train_ : int
        Number of training instances (players).

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.neighbors import KNeighborsClassifier
    >>> from shap_instances_knn import KNNShapleyExplainer
    >>> X, y = load_iris(return_X_y=True)
    >>> model = KNeighborsClassifier(n_neighbors=5).fit(X[::2], y[::2])
    >>> explainer = KNNShapleyExplainer(model, X[::2], y=y[::2], silent=True)
    >>> explanation = explainer(X[1::2][:4], y[1::2][:4])
    >>> explanation.values.shape
    (4, 75)
    >>> bool(abs(explanation.values.sum(axis=1) - model.predict_proba(X[1::2][:4])[range(4), y[1::2][:4]]).max()
    ...      < 1e-12)
    True
    """

    auto_priority: ClassVar[int] = 50
    explained_quantity: ClassVar[str] = (
        "the KNN utility of the whole training set for each explained point: the fraction of the K nearest "
        "training points with the explained label (classification), minus the squared error of the KNN "
        "prediction (regression, default) or the KNN prediction itself (utility='prediction')"
    )

    requires_y = True
    unwraps_models = True
    call_y = "optional"
    _parameter_constraints: ClassVar[dict] = {
        **COMMON_CONSTRAINTS,
        "y": [None, "array-like"],
        "utility": [Options("auto", *sorted(UTILITIES))],
    }

    def __init__(self, model: Any, masker: Any = None, *, data: Any = None, y: ArrayLike | None = None,
                 utility: str = "auto", n_jobs: int | None = None, silent: bool = False,
                 max_memory: float | None = None, feature_names: Sequence[str] | None = None,
                 scheduler: Any = None) -> None:
        data = self._setup(locals())  # a class or a model of another kind is refused first
        _check_model(unwrap_model(model).estimator)
        raw, (model, data, y) = data, self._unwrap(data, y)
        self.metric_ = model.effective_metric_
        self.metric_params_ = dict(model.effective_metric_params_ or {})
        precomputed = self.metric_ == "precomputed"
        self.columns_ = None if precomputed else fitted_columns(model, data)
        self.data_ = check_data(data, name="masker", allow_sparse=True, feature_names=self.columns_,
                                n_features=None if precomputed else model.n_features_in_)
        self.utility_ = _check_utility(model, utility)
        self.y_train_, _, _ = _check_labels((0, self.data_.shape[0]), _as_array(y), np.zeros(0), model.n_neighbors,
                                            self.utility_)
        if self.utility_ == "accuracy" and hasattr(model, "classes_"):  # labels of the type the model was fitted on
            check_labels(self.y_train_, self.data_.shape[0], classes=model.classes_,
                         classes_of="the classes the model was fitted on")
        self._train_z, _, self._codes = _encode(self.y_train_, None, self.utility_)
        self.n_neighbors_ = int(model.n_neighbors)
        self.n_train_ = self.data_.shape[0]
        self.train_names_ = training_names(raw, feature_names)
        if not precomputed or self.data_.shape == (self.n_train_, self.n_train_):
            _warn_unless_own_data(model, self.data_, self.y_train_)

    @classmethod
    def conformance_problem(cls) -> ConformanceProblem:
        """A 5-neighbour regressor on 60 diabetes rows, 6 held-out rows valued with utility="prediction"."""
        from sklearn.datasets import load_diabetes

        from shap_instances.testing import ConformanceProblem

        X, y = load_diabetes(return_X_y=True, as_frame=True)
        model = KNeighborsRegressor(n_neighbors=5).fit(X.iloc[:60], y.iloc[:60])
        return ConformanceProblem(model, X.iloc[:60], X.iloc[60:66], y=y.iloc[:60],
                                  options={"utility": "prediction", "silent": True}, explained=model.predict)

    @classmethod
    def supports_model(cls, model: Any, data: Any = None) -> bool:
        """True for a fitted or unfitted uniform-weights ``KNeighborsClassifier`` / ``KNeighborsRegressor``.

        Examples
        --------
        >>> from sklearn.neighbors import KNeighborsRegressor
        >>> from shap_instances_knn import KNNShapleyExplainer
        >>> KNNShapleyExplainer.supports_model(KNeighborsRegressor()), KNNShapleyExplainer.supports_model(
        ...     KNeighborsRegressor(weights="distance"))
        (True, False)
        """
        return (
            isinstance(model, KNeighborsClassifier | KNeighborsRegressor)
            and isinstance(model.weights, str)
            and model.weights == "uniform"
            and not _multi_output(model)
        )

    def __call__(self, X: Any, y: ArrayLike | None = None) -> shap.Explanation:
        """Explain the utility of each row of ``X`` in terms of the training instances.

        Parameters
        ----------
        X : array-like of shape (n_explained, n_features)
            The explained points (for ``metric="precomputed"``: their distances to the training points,
            shape (n_explained, n_train)).
        y : array-like of shape (n_explained,), optional
            Their labels; required unless ``utility="prediction"``, which refuses them (InvalidParameterError).

        Returns
        -------
        shap.Explanation
            ``values`` (n_explained, n_train); ``base_values`` = v(empty); ``data`` is what plots colour
            by: 1 where the training label is the KNN's predicted label (classification), the training label
            minus the KNN prediction (regression); ``display_data`` the training labels as text.

        Examples
        --------
        >>> from sklearn.datasets import load_diabetes
        >>> from sklearn.neighbors import KNeighborsRegressor
        >>> from shap_instances_knn import KNNShapleyExplainer
        >>> X, y = load_diabetes(return_X_y=True)
        >>> model = KNeighborsRegressor(n_neighbors=10).fit(X[:300], y[:300])
        >>> ex = KNNShapleyExplainer(model, X[:300], y=y[:300], utility="prediction", silent=True)
        >>> e = ex(X[300:305])
        >>> bool(abs(e.base_values + e.values.sum(axis=1) - model.predict(X[300:305])).max() < 1e-9)
        True
        """
        if (partitioned := self._explain_partitioned(X, y)) is not None:
            return partitioned
        start = time.perf_counter()
        if y is not None and self.utility_ == "prediction":
            raise InvalidParameterError(
                "KNNShapleyExplainer: utility='prediction' explains the KNN prediction and takes no y when called; "
                "call explainer(X), or use utility='neg_squared_error' to value the training rows against y.")
        precomputed = self.metric_ == "precomputed"
        X_arr = check_data(self._prepare(X), name="X", allow_sparse=not precomputed, feature_names=self.columns_,
                           n_features=self.n_train_ if precomputed else self.data_.shape[1], min_rows=0)
        n = X_arr.shape[0]
        shape = (n, self.n_train_)
        _, y_explained, _ = _check_labels(shape, self.y_train_, _as_array(y), self.n_neighbors_, self.utility_)
        train_z = self._train_z
        _, explained_z, _ = _encode(self.y_train_[:0], y_explained, self.utility_, codes=self._codes)
        check_memory(3 * 8.0 * n * self.n_train_, f"the KNN-Shapley values of {n} points x {self.n_train_} training "
                     "instances", max_memory=self.max_memory, instead="Explain fewer points per call.")

        values = np.empty((n, self.n_train_))
        explained = np.empty(n)
        predicted = np.empty(n)  # the KNN prediction over (data_, y_train_): a code for "accuracy"
        ambiguous = np.zeros(n, dtype=bool)
        rows = max(1, _CHUNK_BYTES // (16 * self.n_train_))
        chunks = [slice(a, min(a + rows, n)) for a in range(0, n, rows)]

        def work(chunk):
            if precomputed:
                distances = X_arr[chunk]
            else:
                distances = pairwise_distances(X_arr[chunk], self.data_, metric=self.metric_, **self.metric_params_)
            if np.isnan(distances).any():
                raise DataValidationError(f"The metric {self.metric_!r} produced NaN distances; check the data.")
            order = _sorted_order(distances, train_z)
            ambiguous[chunk] = _tied_at_k(distances, order, train_z, self.n_neighbors_)
            z_chunk = None if explained_z is None else explained_z[chunk]
            predicted[chunk] = self._neighbour_prediction(order[:, :self.n_neighbors_])
            values[chunk] = _knn_shapley_values(order, train_z, z_chunk, self.n_neighbors_, self.utility_)
            with np.errstate(over="ignore", invalid="ignore"):  # an overflowing utility is refused below
                explained[chunk] = _knn_utility(order, train_z, z_chunk, self.n_neighbors_, self.utility_)

        # more threads than cores or chunks would only wait (and joblib refuses n_jobs near a million)
        workers = min(effective_n_jobs(self.n_jobs), len(chunks) or 1, os.cpu_count() or 1)
        jobs = Parallel(n_jobs=workers, prefer="threads", return_as="generator")(delayed(work)(c) for c in chunks)
        for _ in self._progress(jobs, total=len(chunks), desc="KNN-Shapley", unit="chunk"):
            pass

        if ambiguous.any():
            rows = np.flatnonzero(ambiguous)
            warnings.warn(
                f"{rows.size} of {n} explained rows (e.g. {rows[:5].tolist()}) have training points of different "
                f"labels at the same distance as the K-th nearest: the explained utility breaks such ties by label, "
                "then by training index (so copies of a point get equal values), and may differ there from the "
                "model's own prediction, which breaks them its own way.", ReconstructionWarning, stacklevel=2)
        with np.errstate(over="ignore"):
            empty = _empty_utility(y_explained, n, self.utility_)
        overflow = np.flatnonzero(~(np.isfinite(values).all(axis=1) & np.isfinite(explained) & np.isfinite(empty)))
        if overflow.size:
            labels = np.concatenate([np.abs(train_z), [] if y_explained is None else np.abs(y_explained)])
            raise DataValidationError(
                f"the {self.utility_} utility overflows float64 for explained rows {overflow[:10].tolist()}: the "
                f"labels reach {labels.max(initial=0.0):.3g} (squared errors of labels beyond about 1e154 are "
                "infinite); rescale y, e.g. divide it by its standard deviation.")
        accuracy = self.utility_ == "accuracy"
        colour, display = training_row_data(train_z if accuracy else self.y_train_, predicted,
                                            classification=accuracy, labels=list(self._codes) if accuracy else None)
        return self._finish(build_explanation(
            values,
            empty,
            feature_names=self.train_names_,
            data=colour,
            display_data=display,
            row_names=row_names(X),
            explained=explained,
            compute_time=time.perf_counter() - start,
        ))

    def _neighbour_prediction(self, nearest: np.ndarray) -> np.ndarray:
        """The KNN prediction from the K nearest training indices: their mean label (regression), or their most
        frequent label's code, a tie going to the smallest label as in scikit-learn's ``predict``."""
        labels = self._train_z[nearest]
        if self.utility_ != "accuracy":
            return labels.mean(axis=1)
        by_label = np.argsort(np.asarray(list(self._codes), dtype=object))  # codes in the labels' sorted order
        counts = np.zeros((len(labels), len(by_label)))
        np.add.at(counts, (np.arange(len(labels))[:, None], labels), 1.0)
        return by_label[counts[:, by_label].argmax(axis=1)].astype(np.float64)


def _tied_at_k(distances, order, labels, k):
    """Rows whose K-th and (K+1)-th nearest points are equally far and the tie mixes labels (the KNN model's
    own choice among them may then differ from the explainer's tie-break)."""
    n_train = order.shape[1]
    if n_train <= k:
        return np.zeros(order.shape[0], dtype=bool)
    boundary = np.take_along_axis(distances, order[:, k - 1:k + 1], axis=1)
    out = np.zeros(order.shape[0], dtype=bool)
    for row in np.flatnonzero(boundary[:, 0] == boundary[:, 1]):
        tied = labels[distances[row] == boundary[row, 0]]
        out[row] = bool(np.any(tied != tied[0]))
    return out


def _check_model(model):
    if not isinstance(model, KNeighborsClassifier | KNeighborsRegressor):
        raise UnsupportedModelError(
            f"KNNShapleyExplainer explains KNeighborsClassifier or KNeighborsRegressor models, got "
            f"{type(model).__name__}; use shap_instances.Explainer(model, data, y=...) to pick another explainer."
        )
    check_fitted(model)
    if not (isinstance(model.weights, str) and model.weights == "uniform"):
        raise UnsupportedModelError(
            f"KNNShapleyExplainer needs weights='uniform', got weights={model.weights!r}: distance-weighted "
            "KNN has no exact closed form. Refit with weights='uniform', or use the residual explainer "
            "(shap_instances.Explainer(model, data, algorithm='instance_kernel', y=...))."
        )
    if _multi_output(model):
        raise UnsupportedModelError(
            "KNNShapleyExplainer explains single-output models; the model was fitted on a 2-D target. "
            "Fit one model per output."
        )


#: Training rows on which the model and a copy refitted on the masker and y are compared.
_OWN_DATA_ROWS = 256


def _warn_unless_own_data(model, data, y):
    """Warn when ``(data, y)`` is not the model's training set: a copy of the model refitted on them predicts
    other values on (up to 256 of) those rows. The values then describe that refitted KNN, not ``model``."""
    if model.n_neighbors > min(data.shape[0], model.n_samples_fit_):
        return  # neither the model nor a refitted copy can predict: nothing to compare (the values are still exact)
    sparse = hasattr(data, "toarray")
    refit = clone(model).set_params(**({"algorithm": "brute"} if sparse else {})).fit(model_input(model, data), y)
    rows = data[np.linspace(0, data.shape[0] - 1, min(data.shape[0], _OWN_DATA_ROWS)).astype(int)]
    rows = model_input(model, rows.toarray() if sparse else rows)
    if isinstance(model, KNeighborsClassifier):
        same = (np.array_equal(refit.classes_, model.classes_)
                and np.allclose(refit.predict_proba(rows), model.predict_proba(rows), rtol=0.0, atol=1e-12))
    else:
        same = np.allclose(refit.predict(rows), model.predict(rows), rtol=1e-9, atol=0.0)
    if not same:
        warnings.warn(
            "KNNShapleyExplainer: the masker and y are not the data the model was fitted on (a copy of the model "
            "fitted on them predicts otherwise on their own rows: rows reordered apart from y, other or "
            "rescaled labels?). The values describe a KNN with the model's K and metric fitted on them, and "
            "do not add up to the model's own predictions; pass the X and y given to model.fit to explain it.",
            ReconstructionWarning, stacklevel=3)


def _multi_output(model) -> bool:
    """Whether a fitted KNN model has a 2-D target (public API only: one prediction on a dummy row)."""
    if isinstance(model, KNeighborsClassifier):
        return bool(getattr(model, "outputs_2d_", False))
    n_columns = getattr(model, "n_features_in_", None)
    if n_columns is None:  # not fitted
        return False
    if model.effective_metric_ == "precomputed":
        n_columns = model.n_samples_fit_
    try:
        return np.ndim(model.predict(model_input(model, np.zeros((1, n_columns))))) > 1
    except (ValueError, TypeError):  # n_neighbors > n_samples_fit, non-numeric labels: the labels passed to the
        return False                  # explainer decide


def _check_utility(model, utility):
    allowed = _CLASSIFIER_UTILITIES if isinstance(model, KNeighborsClassifier) else _REGRESSOR_UTILITIES
    if utility == "auto":
        return allowed[0]
    if utility not in allowed:
        kind = type(model).__name__
        raise ValueError(
            f"utility={utility!r} is not available for a {kind}; choose one of {['auto', *allowed]} "
            f"(all utilities: {sorted(UTILITIES)})."
        )
    return utility


def _as_array(y):
    if y is None:
        return None
    return y.to_numpy() if isinstance(y, pd.Series | pd.DataFrame) else np.asarray(y)
