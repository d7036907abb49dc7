"""A fitted forest's RF-GAP decomposition over its training rows: what ``GapExplainer`` delegates to.

:class:`GapForest` holds the verified leaf index, the target columns the proximities average, and computes
proximities, out-of-bag proximities (cached, read-only), out-of-bag predictions, the explanation values and
the trust scores. The explainer validates its arguments, builds one and wraps its results in an Explanation.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp
from numpy.typing import ArrayLike

from ..exceptions import DataValidationError, ReconstructionWarning, UnsupportedModelError
from ..utils import check_data, check_memory, fitted_columns, model_input
from ._bagging import as_forest
from ._proximities import GapIndex, build_gap_index, encode_target, is_classifier_forest

__all__ = ["GapForest", "gap_target_columns"]


def _no_sparse_nan(X: Any, name: str) -> Any:
    """Refuse a sparse matrix holding NaN: scikit-learn's forests route missing values in dense input only."""
    if sp.issparse(X) and np.isnan(X.data).any():
        raise DataValidationError(f"{name}: a sparse matrix with NaN values; scikit-learn's forests take missing "
                                  f"values in dense input only: pass {name} dense ({name}.toarray()), or impute them.")
    return X


def _read_only(matrix: Any) -> Any:
    """``matrix`` with its arrays made read-only, so a cached matrix cannot be changed in place by mistake."""
    for array in (matrix.data, matrix.indices, matrix.indptr):
        array.flags.writeable = False
    return matrix


def gap_target_columns(model: Any, y_train: np.ndarray) -> tuple[np.ndarray, list[str], np.ndarray]:
    """``(target_columns, output_names, colour_by)`` of a forest whose encoded training targets are ``y_train``.

    The target columns are what the proximities average: ``y`` itself (regression, one column per output) or
    one indicator column per class (classification, all outputs concatenated); ``colour_by`` is the first
    output's target (class index for classifiers), what plots colour training rows by.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.ensemble import RandomForestClassifier
    >>> from shap_instances.forest import encode_target, gap_target_columns
    >>> forest = RandomForestClassifier(2, random_state=0).fit([[0], [1], [2]], ["b", "a", "b"])
    >>> columns, names, _ = gap_target_columns(forest, encode_target(forest, ["b", "a", "b"], 3)[1])
    >>> columns.tolist(), names
    ([[0.0, 1.0], [1.0, 0.0], [0.0, 1.0]], ['a', 'b'])
    """
    if not is_classifier_forest(model):
        columns = np.asarray(y_train, dtype=np.float64)
        return columns, [f"y{k}" for k in range(columns.shape[1])], columns[:, 0]
    classes = [model.classes_] if model.n_outputs_ == 1 else list(model.classes_)
    blocks, out_names = [], []
    for k, cls in enumerate(classes):
        blocks.append((y_train[:, [k]] == np.arange(len(cls))[None, :]).astype(np.float64))
        prefix = "" if model.n_outputs_ == 1 else f"y{k}="
        out_names += [f"{prefix}{c}" for c in cls]
    return np.hstack(blocks), out_names, y_train[:, 0].astype(np.float64)


class GapForest:
    """A fitted forest as exact proximity-weighted sums of its training targets (RF-GAP).

    Parameters
    ----------
    model : RandomForestRegressor, RandomForestClassifier, ExtraTreesRegressor or ExtraTreesClassifier
        The fitted forest.
    data : array-like of shape (n_train, n_features)
        The training data it was fitted on.
    y : array-like of shape (n_train,) or (n_train, n_outputs)
        The training targets (class labels for classifiers).
    sample_weight : array-like of shape (n_train,), optional
        The ``sample_weight`` given to ``fit`` (see :func:`build_gap_index`).

    Attributes
    ----------
    index : GapIndex
        The verified leaf index.
    y_train : ndarray of shape (n_train, n_outputs)
        The training targets as the forest sees them (float, or class indices for classifiers).
    target_columns : ndarray of shape (n_train, n_outputs_total)
        The explained targets: ``y`` (regression) or one-hot class indicators (classification).
    base_values : ndarray of shape (n_outputs_total,)
        Mean target column (class priors for classifiers).
    output_names : list of str
    colour_by : ndarray of shape (n_train,)
    is_classifier : bool
    n_train : int

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import load_diabetes
    >>> from sklearn.ensemble import RandomForestRegressor
    >>> from shap_instances.forest import GapForest
    >>> X, y = load_diabetes(return_X_y=True)
    >>> forest = RandomForestRegressor(20, random_state=0).fit(X, y)
    >>> gap = GapForest(forest, X, y)
    >>> bool(np.allclose(gap.proximities(X[:3]) @ y, forest.predict(X[:3])))
    True
    """

    def __init__(self, model: Any, data: Any, y: ArrayLike, *, sample_weight: ArrayLike | None = None) -> None:
        self.model = model = as_forest(model)
        # the columns later inputs are matched by: the forest's feature_names_in_, else a training DataFrame's
        self.columns = fitted_columns(model, data)
        self.index: GapIndex = build_gap_index(model, _no_sparse_nan(data, "data"), y, sample_weight=sample_weight)
        self.n_train = self.index.n_train
        self.is_classifier = is_classifier_forest(model)
        self.y_train = encode_target(model, y, self.n_train)[1]
        self.target_columns, self.output_names, self.colour_by = gap_target_columns(model, self.y_train)
        self.base_values = self.target_columns.mean(axis=0)
        self.oob_cache: Any = None  # the out-of-bag proximities (sparse, read-only), once computed

    # ------------------------------------------------------------------ proximities
    def check_X(self, X: Any) -> Any:
        """``X`` validated for the forest: float32, a DataFrame put in the fitted column order."""
        return _no_sparse_nan(check_data(X, allow_sparse=True, allow_nan=True, dtype=np.float32,
                                        n_features=self.model.n_features_in_,
                                        feature_names=self.columns), "X")

    def require_bootstrap(self) -> None:
        """Refuse out-of-bag quantities of a forest fitted with ``bootstrap=False``."""
        if not self.index.bootstrap:
            raise DataValidationError(
                "The forest was fitted with bootstrap=False, so no training point is out-of-bag and there are "
                "no out-of-bag proximities; pass X (proximities(X_train) gives the in-sample ones)."
            )

    def oob_proximities(self, *, n_jobs: int | None = None) -> Any:
        """The cached out-of-bag proximities, arrays read-only: never hand them out (``proximities()`` copies)."""
        self.require_bootstrap()
        if self.oob_cache is None:
            self.oob_cache = _read_only(self.index.oob_rows(n_jobs=n_jobs))
        return self.oob_cache

    def proximities(self, X: Any = None, *, dense: bool = False, n_jobs: int | None = None,
                    max_memory: float | None = None) -> np.ndarray | sp.csr_matrix:
        """Proximities of ``X`` (``None``: the out-of-bag ones), a new matrix the caller owns.

        See :meth:`shap_instances.GapExplainer.proximities`.
        """
        if X is None:
            self.require_bootstrap()
            # the caller owns what it gets: a copy of the cache when there is one, else a fresh matrix (not
            # cached, so the first call holds the matrix only once)
            cached = self.oob_cache is not None
            matrix = self.oob_cache if cached else self.index.oob_rows(n_jobs=n_jobs)
        else:
            cached = False
            matrix = self.index.rows_of(self.check_X(X), n_jobs=n_jobs)
        if dense:
            check_memory(matrix.shape[0] * matrix.shape[1] * 8.0, "A dense proximity matrix",
                         max_memory=max_memory, instead="Use dense=False (sparse CSR) instead.")
            return matrix.toarray()
        return matrix.copy() if cached else matrix

    def oob_counts(self) -> np.ndarray:
        """Number of trees where each training point is out-of-bag (its OOB row averages those trees)."""
        inbag = np.unpackbits(self.index.inbag_bits, axis=1, count=self.index.n_trees).sum(axis=1)
        return self.index.n_trees - inbag.astype(np.int64)

    # ------------------------------------------------------------------ predictions
    def model_output(self, X: Any) -> np.ndarray:
        """``predict_proba`` (classifiers, outputs stacked) or ``predict`` of validated ``X``, (m, n_outputs)."""
        if self.is_classifier:
            proba = self.model.predict_proba(model_input(self.model, X))
            return np.hstack(proba) if isinstance(proba, list) else proba
        return self.model.predict(model_input(self.model, X)).reshape(X.shape[0], -1)

    def oob_predictions(self, *, n_jobs: int | None = None) -> np.ndarray:
        """Out-of-bag predictions ``P_oob @ target_columns``; NaN where never out-of-bag."""
        out = np.asarray(self.oob_proximities(n_jobs=n_jobs) @ self.target_columns)
        out[self.oob_counts() == 0] = np.nan
        return out

    def sklearn_oob(self) -> np.ndarray | None:
        """``oob_prediction_`` / ``oob_decision_function_`` as (n_train, n_outputs_total), or None."""
        attribute = "oob_decision_function_" if self.is_classifier else "oob_prediction_"
        reference = getattr(self.model, attribute, None)
        if reference is None:
            return None
        reference = np.asarray(reference, dtype=np.float64)
        if reference.ndim == 3:  # (n, n_classes, n_outputs) of multi-output classifiers
            reference = reference.transpose(0, 2, 1)
        reference = reference.reshape(reference.shape[0], -1)
        return reference if reference.shape == self.target_columns.shape else None

    # ------------------------------------------------------------------ explanations
    def oob_rows(self, rows: ArrayLike | None = None, *, n_jobs: int | None = None) -> tuple[np.ndarray, Any,
                                                                                               np.ndarray]:
        """``(row numbers, their out-of-bag proximities, their explained out-of-bag predictions)``.

        The explained quantity is scikit-learn's own out-of-bag prediction when the forest stored it; rows
        in-bag in every tree explain the base value (with a :class:`ReconstructionWarning`). Given rows with no
        cached out-of-bag matrix, only their proximities are computed (and not cached).
        """
        chosen = np.arange(self.n_train) if rows is None else np.asarray(rows, dtype=np.int64).ravel()
        if chosen.size and (chosen.min() < 0 or chosen.max() >= self.n_train):
            raise DataValidationError(f"rows must be training row numbers in [0, {self.n_train}), got {chosen}.")
        if rows is not None and self.oob_cache is None:  # some rows, no cache: only theirs (row-parallel OOB)
            self.require_bootstrap()
            P = self.index.oob_rows(chosen, n_jobs=n_jobs)
        else:
            P = self.oob_proximities(n_jobs=n_jobs)[chosen]
        reference = self.sklearn_oob()
        # check against scikit-learn's own out-of-bag predictions when the forest stored them
        explained = np.asarray(P @ self.target_columns) if reference is None else reference[chosen].copy()
        never_oob = self.oob_counts()[chosen] == 0
        if never_oob.any():
            warnings.warn(
                f"{int(never_oob.sum())} training points are in-bag in every tree, so they have no out-of-bag "
                "prediction (scikit-learn reports 0); their explanation is empty and explains the base value. "
                "Use more trees.", ReconstructionWarning, stacklevel=3)
            explained[never_oob] = self.base_values
        return chosen, P, explained

    def values(self, P: Any, explained: np.ndarray, *, max_memory: float | None = None) -> tuple[
            np.ndarray, np.ndarray, np.ndarray, bool]:
        """``(values, base, explained, three_d)`` of proximity rows ``P``: ``values[j, i] = P[j, i] (y_i - base)``.

        ``three_d``: classifiers and multi-output forests get (m, n_train, k) values, the others (m, n_train).
        """
        n = P.shape[0]
        k = self.target_columns.shape[1]
        three_d = self.is_classifier or k > 1
        n_bytes = 8.0 * n * self.n_train * (k + 1)
        shape = f"({n}, {self.n_train}, {k})" if three_d else f"({n}, {self.n_train})"
        check_memory(n_bytes, f"The Explanation values of shape {shape}", max_memory=max_memory,
                     instead="Explain fewer rows at a time, or use ex.proximities(X), the sparse weights.")
        dense = P.toarray()
        centred = self.target_columns - self.base_values
        if three_d:
            values = dense[:, :, None] * centred[None, :, :]
            return values, np.broadcast_to(self.base_values, (n, k)), explained.reshape(n, k), True
        values = dense * centred[:, 0][None, :]
        return values, np.full(n, self.base_values[0]), explained.reshape(n), False

    # ------------------------------------------------------------------ what the weighted-target plots read
    def regression_targets(self) -> np.ndarray:
        """The training targets of a single-output regression forest, 1-D (others are refused)."""
        if self.is_classifier or self.target_columns.shape[1] != 1:
            raise UnsupportedModelError(
                "gap_predictive_distribution draws the weighted distribution of a single regression target; for a "
                "classifier that distribution is predict_proba itself (and multi-output forests: pass one output's "
                "targets and weights)."
            )
        return self.target_columns[:, 0]

    def training_errors(self, kind: str, *, n_jobs: int | None = None) -> np.ndarray:
        """Absolute out-of-bag errors ``|y_i - oob_i|`` of the training rows (``kind="oob"``)."""
        if kind != "oob":
            raise DataValidationError('errors="oob" needs a GapExplainer and errors="loo" a BoostingExplainer as '
                                      "first argument; otherwise pass an array of absolute training errors.")
        return np.abs(self.regression_targets() - self.oob_predictions(n_jobs=n_jobs)[:, 0])

    def trust_scores(self, X: Any, *, quantiles: Sequence[float] = (0.1, 0.5, 0.9), level: float = 0.9,
                     outlier_scale: str = "raw", runner_up: str = "outlier", n_jobs: int | None = None
                     ) -> pd.DataFrame:
        """:func:`~shap_instances.forest.gap_trust_scores` of this forest, refused without bootstrap."""
        from ._trust import gap_trust_scores

        if not self.index.bootstrap:
            raise UnsupportedModelError(
                "Trust scores use out-of-bag errors of the training points, which need a forest fitted with "
                "bootstrap=True."
            )
        return gap_trust_scores(self, X, quantiles=quantiles, level=level, outlier_scale=outlier_scale,
                                runner_up=runner_up, n_jobs=n_jobs)
