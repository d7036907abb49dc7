"""``GapExplainer``: a random forest's prediction as an exact proximity-weighted sum of training targets.

RF-GAP proximities (Rhodes, Cutler & Moon, 2023) turn a fitted scikit-learn forest into an adaptive
nearest-neighbour model: ``predict(x) = sum_i k(x, i) y_i`` exactly, with ``k(x, .)`` a probability
vector over the training set. The explanation of ``x`` gives training instance ``i`` the value
``k(x, i) (y_i - base)``, so ``base + sum_i values[i] = predict(x)``. Trust scores (Rosaler et al., 2023)
and plots build on the same weights. The derivation is in ``docs/explainers/gap.md``.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar, cast

import numpy as np
import pandas as pd
import scipy.sparse as sp
import shap
from numpy.typing import ArrayLike

from .._base import InstanceExplainer
from .._deprecated import renamed_attribute
from .._explanation import build_explanation, training_row_data
from ..exceptions import DataValidationError
from ..forest import SUPPORTED_FORESTS, GapForest, check_forest, is_tree_bagging, oob_proximities_on
from ..utils import COMMON_CONSTRAINTS, dask_client, explain_partitions, row_names, training_names, unwrap_model

if TYPE_CHECKING:
    from .._base import ConformanceProblem

__all__ = ["GapExplainer"]


class GapExplainer(InstanceExplainer):
    """Explain random-forest predictions by the training instances they average (RF-GAP proximities).

    Parameters
    ----------
    model : RandomForestRegressor, RandomForestClassifier, ExtraTreesRegressor or ExtraTreesClassifier
        A fitted forest, single- or multi-output (or a ``BaggingRegressor`` / ``BaggingClassifier`` of decision
        trees on all columns, the same construction over its bootstrap draws), or a fitted pipeline /
        meta-estimator around one (see the supported-models page): the pipeline's fitted steps transform the
        training rows once and the explained rows on every call. ``criterion="absolute_error"`` (median leaves)
        is refused, and so is any forest whose leaves the training data does not reproduce (``monotonic_cst`` clipping).
    masker : array-like of shape (n_train, n_features)
        The training data ``X`` the forest (or its pipeline) was fitted on (same rows, same order); ``data=`` is
        an alias.
    y : array-like of shape (n_train,) or (n_train, n_outputs)
        The training targets (class labels for classifiers). Required.
    sample_weight : array-like of shape (n_train,), optional
        The ``sample_weight`` given to ``fit``. With scikit-learn >= 1.9 and ``bootstrap=True`` the weights
        only set the bootstrap draw probabilities, which ``estimators_samples_`` already reflects, so they are
        not needed; with ``bootstrap=False`` or older scikit-learn they multiply the leaf weights and must be
        passed. Every leaf of every tree is checked at construction, so a wrong ``data``, ``y`` or
        ``sample_weight`` raises :class:`~shap_instances.exceptions.DataValidationError`.
    max_memory : float, optional
        Byte budget for dense arrays (the ``(n, n_train[, k])`` Explanation values, dense proximities);
        default half the memory available.
    n_jobs : int, optional
        Threads for the proximity kernel.
    feature_names : sequence of str, optional
        Names of the training rows (the players); default the DataFrame index, else ``"train[i]"``.
    scheduler : str or distributed.Client, optional
        Explain the rows on a dask cluster, partition by partition: a scheduler address, a ``Client`` or
        ``"local"``; a dask array or DataFrame ``X`` is explained by partitions even without one (values bitwise
        those of the serial call; see :func:`~shap_instances.utils.explain_partitions`).

    Attributes
    ----------
    gap_ : shap_instances.forest.GapForest
        The forest's RF-GAP decomposition, which the methods below delegate to.
    index_ : shap_instances.forest.GapIndex
        The verified leaf index.
    y_train_ : ndarray of shape (n_train, n_outputs)
        The training targets as the forest sees them (float, or class indices for classifiers); was
        ``y_codes_``.
    target_columns_ : ndarray of shape (n_train, n_outputs_total)
        The explained targets: ``y`` (regression) or one-hot class indicators (classification, all outputs
        concatenated); was ``targets_``.
    base_values_ : ndarray of shape (n_outputs_total,)
        Mean training target (class priors for classifiers).
    output_names_ : list of str

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import load_diabetes
    >>> from sklearn.ensemble import RandomForestRegressor
    >>> from shap_instances import GapExplainer
    >>> X, y = load_diabetes(return_X_y=True)
    >>> forest = RandomForestRegressor(50, random_state=0).fit(X[:400], y[:400])
    >>> ex = GapExplainer(forest, X[:400], y=y[:400])
    >>> e = ex(X[400:])
    >>> e.values.shape
    (42, 400)
    >>> bool(np.allclose(e.base_values + e.values.sum(axis=1), forest.predict(X[400:]), atol=1e-10))
    True
    >>> P = ex.proximities(X[400:])          # sparse CSR, rows sum to one
    >>> bool(np.allclose(P.sum(axis=1), 1.0))
    True
    """

    explained_quantity = (
        "model.predict(X) for regressors, model.predict_proba(X) for classifiers (all outputs stacked); "
        "oob_explanation() explains oob_prediction_ / oob_decision_function_."
    )

    auto_priority = 20
    requires_y = True
    unwraps_models = True
    _parameter_constraints: ClassVar[dict] = {
        **COMMON_CONSTRAINTS,
        "y": [None, "array-like"],
        "sample_weight": [None, "array-like"],
    }

    def __init__(self, model: Any, masker: Any = None, *, data: Any = None, y: ArrayLike | None = None,
                 sample_weight: ArrayLike | None = None, max_memory: float | None = None, n_jobs: int | None = None,
                 feature_names: Sequence[str] | None = None, scheduler: Any = None) -> None:
        data = self._setup(locals())
        check_forest(unwrap_model(model).estimator)
        if data is None:
            raise DataValidationError("GapExplainer needs the training X the forest was fitted on: "
                                      "GapExplainer(forest, X_train, y=y_train).")
        raw, (model, data, y) = data, self._unwrap(data, y)
        self.gap_ = GapForest(model, data, cast(ArrayLike, y), sample_weight=sample_weight)  # y: _setup required it
        self.index_ = self.gap_.index
        self.columns_ = self.gap_.columns
        self.data_ = self._check_X(data)
        self.train_names_ = training_names(raw, feature_names)
        self.n_train_ = self.gap_.n_train
        self.is_classifier_ = self.gap_.is_classifier
        self.y_train_ = self.gap_.y_train
        self.target_columns_ = self.gap_.target_columns
        self.output_names_ = self.gap_.output_names
        self.colour_by_ = self.gap_.colour_by
        self.base_values_ = self.gap_.base_values

    targets_ = renamed_attribute("GapExplainer", "targets_", "target_columns_")
    y_codes_ = renamed_attribute("GapExplainer", "y_codes_", "y_train_")

    @classmethod
    def conformance_problem(cls) -> ConformanceProblem:
        """A 10-tree forest on 60 diabetes rows, 6 held-out rows; the explained quantity is ``predict``."""
        from sklearn.ensemble import RandomForestRegressor

        from .._base import ConformanceProblem
        from ..datasets import load_diabetes

        X, y = load_diabetes()
        forest = RandomForestRegressor(10, max_depth=4, random_state=0).fit(X.iloc[:60], y.iloc[:60])
        return ConformanceProblem(forest, X.iloc[:60], X.iloc[60:66], y=y.iloc[:60], explained=forest.predict,
                                  atol=1e-10)

    @classmethod
    def supports_model(cls, model: Any, data: Any = None) -> bool:
        """True for RandomForest / ExtraTrees regressors and classifiers, and Bagging ensembles of decision trees.

        Examples
        --------
        >>> from sklearn.ensemble import RandomForestRegressor
        >>> from shap_instances import GapExplainer
        >>> GapExplainer.supports_model(RandomForestRegressor())
        True
        """
        if is_tree_bagging(model):  # the criterion is its trees' (None: the default tree)
            return getattr(model.estimator, "criterion", None) != "absolute_error"
        return isinstance(model, SUPPORTED_FORESTS) and getattr(model, "criterion", None) != "absolute_error"

    # ------------------------------------------------------------------ proximities
    def _check_X(self, X: Any) -> Any:
        # a DataFrame is put in the column order the forest was fitted on (other columns are refused)
        return self.gap_.check_X(X)

    def proximities(self, X: Any = None, *, dense: bool = False) -> np.ndarray | sp.csr_matrix:
        """RF-GAP proximities: a CSR matrix of shape (m, n_train) whose rows sum to one.

        Parameters
        ----------
        X : array-like of shape (m, n_features), optional
            New points: every tree is used. ``None``: the out-of-bag proximities of the training points,
            each row averaging the trees where that point is out-of-bag (its weight on itself is 0); rows of
            points that are in-bag in every tree are empty.
        dense : bool, default=False
            Return a dense ndarray instead (checked against ``max_memory`` first). With a ``scheduler``, the
            sparse out-of-bag matrix (``X=None``) is computed by blocks of rows on its workers, which receive the
            leaf index only (:func:`~shap_instances.forest.oob_proximities_on`; the same matrix, bitwise).

        Returns
        -------
        scipy.sparse.csr_matrix or ndarray
            A new matrix that the caller owns: changing it changes nothing in the explainer. (The out-of-bag
            matrix that trust scores and ``oob_explanation`` cache is kept read-only and handed out as a copy.)

        Examples
        --------
        >>> import numpy as np
        >>> from sklearn.datasets import load_iris
        >>> from sklearn.ensemble import RandomForestClassifier
        >>> from shap_instances import GapExplainer
        >>> X, y = load_iris(return_X_y=True)
        >>> forest = RandomForestClassifier(30, oob_score=True, random_state=0).fit(X, y)
        >>> P = GapExplainer(forest, X, y=y).proximities()
        >>> Y = np.eye(3)[y]
        >>> bool(np.allclose(P @ Y, forest.oob_decision_function_, atol=1e-12)), float(P.diagonal().max())
        (True, 0.0)
        """
        if X is None and self.scheduler is not None and not dense:  # the out-of-bag rows split over the workers
            self.gap_.require_bootstrap()
            with dask_client(self.scheduler) as client:
                return oob_proximities_on(client, self.index_)
        return self.gap_.proximities(self._prepare(X), dense=dense, n_jobs=self.n_jobs, max_memory=self.max_memory)

    def oob_counts(self) -> np.ndarray:
        """Number of trees where each training point is out-of-bag (its OOB row averages those trees)."""
        return self.gap_.oob_counts()

    def oob_predictions(self) -> np.ndarray:
        """Out-of-bag predictions ``P_oob @ target_columns_`` (n_train, n_outputs_total); NaN where never out-of-bag."""
        return self.gap_.oob_predictions(n_jobs=self.n_jobs)

    # ------------------------------------------------------------------ explanations
    def _explanation(self, P: Any, explained: np.ndarray, names: list[str], t0: float) -> shap.Explanation:
        values, base, explained, three_d = self.gap_.values(P, explained, max_memory=self.max_memory)
        data, display = self._training_row_data(explained)
        return self._finish(build_explanation(
            values, base, feature_names=self.train_names_, data=data, display_data=display,
            row_names=names, output_names=self.output_names_ if three_d else None,
            explained=explained, atol=1e-10, compute_time=time.perf_counter() - t0,
        ))

    def _training_row_data(self, explained: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``data`` and ``display_data`` (``docs/pictures.md``) of the first output, from the explained rows'
        predictions (class probabilities for a classifier: the predicted label is their argmax)."""
        classes = getattr(self.model, "classes_", None)
        first = explained.reshape(len(explained), -1)
        if classes is None:
            return training_row_data(self.colour_by_, first[:, 0], classification=False)
        labels = classes[0] if isinstance(classes, list) else classes  # a multi-output forest: its first output's
        predicted = np.argmax(first[:, :len(labels)], axis=1)
        return training_row_data(self.colour_by_, predicted, classification=True, labels=labels)

    def _expected_value(self) -> float | np.ndarray:
        base = self.base_values_
        return float(base[0]) if len(base) == 1 else base.copy()

    def __call__(self, X: Any = None, y: ArrayLike | None = None) -> shap.Explanation:
        """Explain ``X``: ``values[j, i] = k(x_j, i) (y_i - base)``, ``base + values.sum(1) == predict``.

        Parameters
        ----------
        X : array-like of shape (n, n_features)

        Returns
        -------
        shap.Explanation
            ``values`` of shape (n, n_train) (single-output regression) or (n, n_train, k) (classifiers:
            one output per class; multi-output: outputs stacked). ``data`` compares each training row's target
            with the explained row's prediction (``y_i - prediction``, or 1.0 where the labels agree:
            ``docs/pictures.md``), what plots colour by; ``display_data`` holds the training targets as text
            (class labels, not codes).

        Examples
        --------
        >>> import numpy as np
        >>> from sklearn.datasets import load_breast_cancer
        >>> from sklearn.ensemble import RandomForestClassifier
        >>> from shap_instances import GapExplainer
        >>> X, y = load_breast_cancer(return_X_y=True)
        >>> forest = RandomForestClassifier(30, random_state=0).fit(X[:450], y[:450])
        >>> e = GapExplainer(forest, X[:450], y=y[:450])(X[450:460])
        >>> e.values.shape
        (10, 450, 2)
        >>> bool(np.allclose(e.base_values + e.values.sum(1), forest.predict_proba(X[450:460]), atol=1e-12))
        True
        """
        self._check_call_y(y)
        if (partitioned := self._explain_partitioned(X, y)) is not None:
            return partitioned
        if X is None:
            return self.oob_explanation()
        t0 = time.perf_counter()
        names = row_names(X)
        X = self._check_X(self._prepare(X))
        P = self.index_.rows_of(X, n_jobs=self.n_jobs)
        return self._explanation(P, self.gap_.model_output(X), names, t0)

    def oob_explanation(self, rows: ArrayLike | None = None) -> shap.Explanation:
        """Explain the out-of-bag predictions of the training points (``ex(None)`` does the same).

        Row ``i`` gives training instance ``j`` the value ``k_oob(i, j) (y_j - base)``, where ``k_oob`` averages
        the trees in which ``i`` is out-of-bag, so ``base + values.sum(1)`` equals ``oob_prediction_`` (regression)
        or ``oob_decision_function_`` (classification), and ``values[i, i] = 0``. Training points that are in-bag
        in every tree get zero values (their explained quantity is the base value; scikit-learn reports 0).

        Parameters
        ----------
        rows : array-like of int, optional
            Training rows to explain (default all of them; the values are dense, (n, n_train[, k])); with a
            ``scheduler`` they are split over its workers, each computing only its rows' proximities.

        Examples
        --------
        >>> import numpy as np
        >>> from sklearn.datasets import load_diabetes
        >>> from sklearn.ensemble import RandomForestRegressor
        >>> from shap_instances import GapExplainer
        >>> X, y = load_diabetes(return_X_y=True)
        >>> forest = RandomForestRegressor(40, oob_score=True, random_state=0).fit(X, y)
        >>> e = GapExplainer(forest, X, y=y).oob_explanation(rows=range(5))
        >>> bool(np.allclose(e.base_values + e.values.sum(1), forest.oob_prediction_[:5], atol=1e-10))
        True
        """
        if self.scheduler is not None:  # the training rows split over the workers
            chosen = np.arange(self.n_train_) if rows is None else np.asarray(rows, dtype=np.int64).ravel()
            return self._finish(explain_partitions(self, chosen, scheduler=self.scheduler, call=_oob_part))
        t0 = time.perf_counter()
        explained_rows, P, explained = self.gap_.oob_rows(rows, n_jobs=self.n_jobs)
        return self._explanation(P, explained, [self.train_names_[i] for i in explained_rows], t0)

    # ------------------------------------------------------------------ trust
    def trust_scores(self, X: Any, *, quantiles: Sequence[float] = (0.1, 0.5, 0.9), level: float = 0.9,
                     outlier_scale: str = "raw", runner_up: str = "outlier") -> pd.DataFrame:
        """Proximity-based trust scores of the predictions at ``X`` (Rosaler et al., 2023).

        See :func:`shap_instances.weighted_targets.gap_trust_scores` for the columns and the parameters
        (``outlier_scale="raw"`` is the paper's outlier score, ``"log"`` standardises its logarithm;
        ``runner_up`` picks the class compared with the predicted one). Classifiers get no target quantiles
        (their conditional distribution is ``predict_proba`` itself) and multi-output classifiers are refused.

        Examples
        --------
        >>> from sklearn.datasets import load_diabetes
        >>> from sklearn.ensemble import RandomForestRegressor
        >>> from shap_instances import GapExplainer
        >>> X, y = load_diabetes(return_X_y=True)
        >>> forest = RandomForestRegressor(40, random_state=0).fit(X[:400], y[:400])
        >>> scores = GapExplainer(forest, X[:400], y=y[:400]).trust_scores(X[400:])
        >>> list(scores.columns)[:3]
        ['prediction', 'weighted_oob_error', 'q10']
        """
        frame = self.gap_.trust_scores(self._prepare(X), quantiles=quantiles, level=level, outlier_scale=outlier_scale,
                                       runner_up=runner_up, n_jobs=self.n_jobs)
        frame.index = row_names(X)
        return frame

    # ------------------------------------------------------------------ what the weighted-target plots read
    def regression_targets(self) -> np.ndarray:
        """The training targets of a single-output regression forest, 1-D (others are refused).

        Examples
        --------
        >>> from sklearn.datasets import load_diabetes
        >>> from sklearn.ensemble import RandomForestRegressor
        >>> from shap_instances import GapExplainer
        >>> X, y = load_diabetes(return_X_y=True)
        >>> forest = RandomForestRegressor(5, random_state=0).fit(X, y)
        >>> GapExplainer(forest, X, y=y).regression_targets().shape
        (442,)
        """
        return self.gap_.regression_targets()

    def training_errors(self, kind: str = "oob") -> np.ndarray:
        """Absolute out-of-bag errors ``|y_i - oob_i|`` of the training rows (``kind="oob"``, the only one).

        Examples
        --------
        >>> from sklearn.datasets import load_diabetes
        >>> from sklearn.ensemble import RandomForestRegressor
        >>> from shap_instances import GapExplainer
        >>> X, y = load_diabetes(return_X_y=True)
        >>> forest = RandomForestRegressor(20, random_state=0).fit(X, y)
        >>> GapExplainer(forest, X, y=y).training_errors("oob").shape
        (442,)
        """
        return self.gap_.training_errors(kind, n_jobs=self.n_jobs)


def _oob_part(explainer: GapExplainer, rows: np.ndarray) -> shap.Explanation:
    """The out-of-bag explanation of some training rows, on a worker (``explain_partitions``' call)."""
    return explainer.oob_explanation(rows)
