"""``BoostingExplainer``: a gradient-boosted model's prediction as an exact sum over its training rows.

Two decompositions, derived in ``docs/explainers/boosting.md``:

* ``kind="weights"`` (squared error): ``predict(x) = sum_j w_j(x) y_j`` with ``sum_j w_j(x) = 1`` (AXIL's form),
  computed by a backward recursion over the trees in O(n) per tree and explained row, never an n x n matrix;
* ``kind="gradients"`` (any loss whose leaves are Newton steps): the raw margin is
  ``F_0(x) + sum_j sum_t c_tj(x) (-g_tj)``, each training row's negative gradients along the training
  trajectory times non-negative coefficients.

Every leaf value of the model is recomputed from the training data when the explainer is built and checked
against the model, so a wrong ``data``, ``y`` or ``sample_weight`` is refused rather than explained.
"""

from __future__ import annotations

import functools
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
from ..boosting import (
    boosting_library,
    boosting_trust_scores,
    boosting_values,
    check_boosted_model,
    decomposition_kind,
    loo_predictions,
    n_model_features,
    native_categorical_columns,
    read_boosted_model,
    reconstruction_tolerance,
    row_major_index,
    self_weights,
    target_weights,
    top_k_values,
)
from ..exceptions import DataValidationError, InvalidParameterError, NotFittedError, UnsupportedModelError
from ..utils import (
    COMMON_CONSTRAINTS,
    Options,
    check_data,
    check_memory,
    explain_partitions,
    fitted_columns,
    in_column_order,
    model_input,
    row_names,
    string_columns,
    training_names,
    unwrap_model,
)

if TYPE_CHECKING:
    from .._base import ConformanceProblem

__all__ = ["BoostingExplainer"]

class BoostingExplainer(InstanceExplainer):
    """Explain a gradient-boosted model's predictions exactly by its training rows.

    Parameters
    ----------
    model : fitted boosted model
        scikit-learn ``GradientBoostingRegressor`` / ``GradientBoostingClassifier`` (``subsample=1``;
        losses ``squared_error``, ``log_loss``, ``exponential``) or ``HistGradientBoostingRegressor`` /
        ``HistGradientBoostingClassifier`` (losses ``squared_error``, ``poisson``, ``gamma``, ``log_loss``;
        no ``monotonic_cst``; missing values, categorical splits and the early-stopping validation split are
        reproduced); XGBoost, LightGBM and CatBoost models when those libraries are installed (see the docs for
        the settings each supports). Anything else is refused with a message naming the setting. A fitted pipeline
        or meta-estimator around one is accepted (see the supported-models page): its fitted steps transform the
        training rows once and the explained rows on every call.
    masker : array-like of shape (n_train, n_features)
        The training data ``X`` given to ``fit`` (same rows, same order); ``data=`` is an alias.
    y : array-like of shape (n_train,)
        The training targets given to ``fit`` (class labels for classifiers). Required.
    kind : {"auto", "weights", "gradients"}, default="auto"
        ``"weights"``: target weights, ``values[i, j] = w_j(x_i) (y_j - F_0)`` with base ``F_0`` (the initial
        prediction), for squared-error regression. ``"gradients"``: contributions through the training
        gradients to the raw margin, ``values[i, j] = sum_t c_tj(x_i) (-g_tj)`` with base ``F_0(x_i)``; positive
        values push the margin up. ``"auto"``: ``"weights"`` for squared-error regression, else
        ``"gradients"``.
    sample_weight : array-like of shape (n_train,), optional
        The ``sample_weight`` given to ``fit``.
    max_memory : float, optional
        Byte budget of the Explanation values (default half the memory available).
    n_jobs : int, optional
        Threads over explained rows (the kernels release the GIL).
    feature_names : sequence of str, optional
        Names of the training rows (the players); default the DataFrame index, else ``"train[i]"``.
    scheduler : str or distributed.Client, optional
        Explain the rows on a dask cluster, partition by partition: a scheduler address, a ``Client`` or
        ``"local"``; a dask array or DataFrame ``X`` is explained by partitions even without one (values bitwise
        those of the serial call; see :func:`~shap_instances.utils.explain_partitions`).

    Attributes
    ----------
    trees_ : shap_instances.boosting.BoostedTrees
        The model read into one form, with the replayed training (``trees_.max_leaf_error`` is the largest
        gap between a recomputed and a stored leaf value, relative to the largest leaf value so far).
    kind_ : str
        The decomposition used.
    y_train_ : ndarray of shape (n_train,)
        The training targets as the model saw them (class indices for classifiers); was ``targets_``.
    output_names_ : list of str or None
        Class labels of a multi-class model (one margin each).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import load_diabetes
    >>> from sklearn.ensemble import GradientBoostingRegressor
    >>> from shap_instances import BoostingExplainer
    >>> X, y = load_diabetes(return_X_y=True)
    >>> model = GradientBoostingRegressor(n_estimators=50, random_state=0).fit(X[:400], y[:400])
    >>> explainer = BoostingExplainer(model, X[:400], y=y[:400])
    >>> e = explainer(X[400:])
    >>> e.values.shape
    (42, 400)
    >>> bool(np.allclose(e.base_values + e.values.sum(axis=1), model.predict(X[400:]), rtol=1e-12))
    True
    >>> W = explainer.weights(X[400:])       # predict = W @ y, rows sum to one
    >>> bool(np.allclose(W @ y[:400], model.predict(X[400:]))), bool(np.allclose(W.sum(axis=1), 1.0))
    (True, True)
    """

    explained_quantity = (
        "kind='weights': model.predict(X). kind='gradients': the raw margin (predict for squared error, "
        "decision_function for classifiers, log(predict) for Poisson / gamma, XGBoost's output_margin, "
        "LightGBM's raw_score)."
    )
    auto_priority = 25
    requires_y = True
    unwraps_models = True
    _parameter_constraints: ClassVar[dict] = {
        **COMMON_CONSTRAINTS,
        "y": [None, "array-like"],
        "kind": [Options("auto", "weights", "gradients")],
        "sample_weight": [None, "array-like"],
    }

    def __init__(self, model: Any, masker: Any = None, *, data: Any = None, y: ArrayLike | None = None,
                 kind: str = "auto", sample_weight: ArrayLike | None = None, max_memory: float | None = None,
                 n_jobs: int | None = None, feature_names: Sequence[str] | None = None,
                 scheduler: Any = None) -> None:
        data = self._setup(locals())
        check_boosted_model(unwrap_model(model).estimator)
        if data is None:
            raise DataValidationError("BoostingExplainer needs the training X the model was fitted on: "
                                      "BoostingExplainer(model, X_train, y=y_train).")
        raw, (model, data, y) = data, self._unwrap(data, y)
        self.columns_ = fitted_columns(model, data)
        self.data_ = self._check_X(data, name="masker")
        self.train_names_ = training_names(raw, feature_names)
        self.trees_ = read_boosted_model(model, self.data_, cast(ArrayLike, y), sample_weight)  # y: _setup required it
        self.kind_ = decomposition_kind(self.trees_, kind)
        self.y_train_ = self.trees_.targets
        self.n_train_ = self.data_.shape[0]
        classes = getattr(model, "classes_", None)
        K = self.trees_.n_outputs
        self.output_names_ = [str(c) for c in classes] if K > 1 and classes is not None else (
            [f"margin[{k}]" for k in range(K)] if K > 1 else None)

    targets_ = renamed_attribute("BoostingExplainer", "targets_", "y_train_")

    # ------------------------------------------------------------------ set-up helpers
    def _check_X(self, X: Any, name: str = "X") -> Any:
        X = self._strings_as_categories(X)
        if isinstance(X, pd.DataFrame) and any(isinstance(t, pd.CategoricalDtype) for t in X.dtypes):
            return self._categorical_frame(X, name)
        library = boosting_library(self.model)
        hist = type(self.model).__name__.startswith("HistGradientBoosting")
        gb = library == "scikit-learn" and not hist
        X = check_data(X, name=name, allow_sparse=not hist, allow_nan=not gb,
                       n_features=n_model_features(self.model), feature_names=self.columns_)
        stored = X.data if sp.issparse(X) else X
        with np.errstate(invalid="ignore"):
            too_large = np.abs(stored) > np.finfo(np.float32).max
        if too_large.any():
            rows = np.unique(X.nonzero()[0][too_large]) if sp.issparse(X) else np.flatnonzero(too_large.any(axis=1))
            raise DataValidationError(
                f"{name}: rows {rows[:10].tolist()} hold values beyond float32's range (3.4e38); tree models compare "
                "features in float32, so those rows have no prediction to explain: rescale those columns.")
        return X

    def _strings_as_categories(self, X: Any) -> Any:
        """A DataFrame's string columns as pandas categoricals (a converted copy), for a model that splits
        categories natively: HistGradientBoosting and LightGBM read a category by its value (its code is the
        library's own), so the strings of the column the model was fitted on as a categorical mean the same;
        they refuse the strings themselves."""
        native = (boosting_library(self.model) == "lightgbm"
                  or type(self.model).__name__.startswith("HistGradientBoosting"))
        if not native or not isinstance(X, pd.DataFrame):
            return X
        native_columns = native_categorical_columns(self.model, [str(c) for c in X.columns])
        strings = [column for column in string_columns(X) if str(column) in native_columns]
        return X.astype({column: "category" for column in strings}) if strings else X

    def _categorical_frame(self, X: pd.DataFrame, name: str) -> pd.DataFrame:
        """A DataFrame with pandas categorical columns, kept as one: the model's library routes its categories.

        HistGradientBoosting (``categorical_features="from_dtype"``), LightGBM and XGBoost
        (``enable_categorical=True``) read the categories from the DataFrame itself; the leaves of the training rows
        are then checked against the model like any others.
        """
        if self.columns_ is not None:
            X = in_column_order(X, self.columns_, name)
        if X.shape[1] != n_model_features(self.model):
            raise DataValidationError(f"{name} has {X.shape[1]} columns, but the model was fitted on "
                                      f"{n_model_features(self.model)}; pass the training columns.")
        return X.copy() if name == "masker" else X  # the explainer keeps its training rows: never alias them

    @classmethod
    def supports_model(cls, model: Any, data: Any = None) -> bool:
        """True for the supported boosted models whose settings allow an exact decomposition.

        Examples
        --------
        >>> from sklearn.ensemble import GradientBoostingRegressor, RandomForestRegressor
        >>> from shap_instances import BoostingExplainer
        >>> BoostingExplainer.supports_model(GradientBoostingRegressor())
        True
        >>> BoostingExplainer.supports_model(GradientBoostingRegressor(subsample=0.5))
        False
        >>> BoostingExplainer.supports_model(RandomForestRegressor())
        False
        """
        return boosting_library(model) is not None and cls.unsupported_reason(model) is None

    @classmethod
    def unsupported_reason(cls, model: Any, data: Any = None) -> str | None:
        """The setting of a boosted model that forbids an exact decomposition, and what to do (None if none).

        Examples
        --------
        >>> from sklearn.ensemble import GradientBoostingRegressor
        >>> from shap_instances import BoostingExplainer
        >>> print(BoostingExplainer.unsupported_reason(GradientBoostingRegressor(subsample=0.5)))  # doctest: +ELLIPSIS
        subsample=0.5 fits each tree on a random subsample of the rows ... refit with subsample=1.0.
        """
        if boosting_library(model) is None:
            return None
        try:
            check_boosted_model(model)
        except NotFittedError:
            return None  # the settings were checked first
        except UnsupportedModelError as exc:
            return str(exc)
        return None

    @classmethod
    def conformance_problem(cls) -> ConformanceProblem:
        """A 30-tree GradientBoostingRegressor on 60 diabetes rows, 6 held-out rows; explained: ``predict``."""
        from sklearn.ensemble import GradientBoostingRegressor

        from .._base import ConformanceProblem
        from ..datasets import load_diabetes

        X, y = load_diabetes()
        model = GradientBoostingRegressor(n_estimators=30, max_depth=3, random_state=0).fit(X.iloc[:60], y.iloc[:60])
        return ConformanceProblem(model, X.iloc[:60], X.iloc[60:66], y=y.iloc[:60], explained=model.predict,
                                  atol=1e-10)

    def _expected_value(self) -> float | np.ndarray:
        constant = self.trees_.init_constant
        if constant is None:
            return super()._expected_value()
        return float(constant[0]) if constant.size == 1 else constant.copy()

    # ------------------------------------------------------------------ the decompositions
    def _query(self, X: Any) -> tuple[np.ndarray, Any, list[str]]:
        """(leaf ranks (m, T), validated rows, names) of ``X``; ``None`` gives the training rows."""
        if X is None:
            return np.ascontiguousarray(self.trees_.train_leaves.T), self.data_, list(self.train_names_)
        names = row_names(X)
        X = self._check_X(self._prepare(X))
        return self.trees_.apply(X), X, names

    def weights(self, X: Any = None) -> np.ndarray:
        """Target weights ``W`` (m, n_train): ``predict(X) = F_0 (1 - W.sum(1)) + W @ y`` (squared error).

        With the default initial prediction (the weighted mean of ``y``) the rows of ``W`` sum to one and
        ``predict(X) = W @ y``. ``X=None`` gives the weights of the training rows (in-sample).

        Examples
        --------
        >>> import numpy as np
        >>> from sklearn.datasets import load_diabetes
        >>> from sklearn.ensemble import GradientBoostingRegressor
        >>> from shap_instances import BoostingExplainer
        >>> X, y = load_diabetes(return_X_y=True)
        >>> model = GradientBoostingRegressor(n_estimators=30, random_state=0).fit(X, y)
        >>> W = BoostingExplainer(model, X, y=y).weights(X[:5])
        >>> bool(np.allclose(W @ y, model.predict(X[:5])))
        True
        """
        if self.trees_.loss != "squared_error" or self.trees_.n_outputs != 1 or self.trees_.init == "other":
            decomposition_kind(self.trees_, "weights")  # raises, naming why
        leaves, _, _ = self._query(X)
        check_memory(8.0 * leaves.shape[0] * self.n_train_, f"The weights of shape ({leaves.shape[0]}, "
                     f"{self.n_train_})", max_memory=self.max_memory, instead="Explain fewer rows at a time.")
        return target_weights(self.trees_, leaves, n_jobs=self.n_jobs)

    def _self_weights(self) -> np.ndarray:
        """``w_jj``: the weight of every training row on its own in-sample prediction (cached)."""
        if getattr(self, "_self_weights_cache", None) is None:
            self._self_weights_cache = self_weights(self.trees_, n_jobs=self.n_jobs, max_memory=self.max_memory)
        return self._self_weights_cache

    def loo_predictions(self) -> np.ndarray:
        """Leave-self-out predictions of the training rows (squared error, ``kind="weights"``).

        Row ``j``'s in-sample prediction is ``F(x_j) = c + sum_i w_i(x_j) (y_i - c)`` (``c`` the initial
        prediction). Dropping its own weight ``w_jj = w_j(x_j)`` and renormalising the rest gives
        ``loo_j = y_j - (y_j - F(x_j)) / (1 - w_jj)``, the prediction of row ``j`` from the other rows' targets
        with the trees held fixed (the linear-smoother identity; not a refit). It plays the part of a forest's
        out-of-bag prediction in the trust scores. NaN where ``w_jj >= 1 - 1e-9``; rows left out of training (an
        early-stopping split) have ``w_jj = 0`` and get their held-out prediction. Computing ``w_jj`` costs the
        in-sample weights of every training row, ``O(n^2 T)``, in chunks under ``max_memory``; it is cached.

        Examples
        --------
        >>> import numpy as np
        >>> from sklearn.datasets import load_diabetes
        >>> from sklearn.ensemble import GradientBoostingRegressor
        >>> from shap_instances import BoostingExplainer
        >>> X, y = load_diabetes(return_X_y=True)
        >>> model = GradientBoostingRegressor(n_estimators=30, random_state=0).fit(X[:200], y[:200])
        >>> ex = BoostingExplainer(model, X[:200], y=y[:200])
        >>> W = ex.weights()                                   # in-sample weights of the training rows
        >>> d = np.diag(W).copy(); np.fill_diagonal(W, 0.0)
        >>> bool(np.allclose(ex.loo_predictions(), W @ y[:200] / (1 - d)))
        True
        """
        return loo_predictions(self.trees_, self.data_, self.y_train_, self._self_weights())

    def regression_targets(self) -> np.ndarray:
        """The training targets, 1-D float, of a ``kind="weights"`` model (the others are refused).

        Examples
        --------
        >>> from sklearn.datasets import load_diabetes
        >>> from sklearn.ensemble import GradientBoostingRegressor
        >>> from shap_instances import BoostingExplainer
        >>> X, y = load_diabetes(return_X_y=True)
        >>> model = GradientBoostingRegressor(n_estimators=5, random_state=0).fit(X, y)
        >>> BoostingExplainer(model, X, y=y).regression_targets().shape
        (442,)
        """
        if self.kind_ != "weights":
            raise UnsupportedModelError(
                "gap_predictive_distribution draws the training targets weighted by a squared-error model's target "
                "weights; this BoostingExplainer uses kind='gradients' (a classifier or another loss), whose values "
                "are not weights on the targets.")
        return np.asarray(self.y_train_, dtype=np.float64)

    def training_errors(self, kind: str = "loo") -> np.ndarray:
        """Absolute leave-self-out errors ``|y_j - loo_j|`` of the training rows (``kind="loo"``, the only one).

        Examples
        --------
        >>> from sklearn.datasets import load_diabetes
        >>> from sklearn.ensemble import GradientBoostingRegressor
        >>> from shap_instances import BoostingExplainer
        >>> X, y = load_diabetes(return_X_y=True)
        >>> model = GradientBoostingRegressor(n_estimators=5, random_state=0).fit(X[:100], y[:100])
        >>> BoostingExplainer(model, X[:100], y=y[:100]).training_errors("loo").shape
        (100,)
        """
        if kind != "loo":
            raise DataValidationError('errors="oob" needs a GapExplainer and errors="loo" a BoostingExplainer as '
                                      "first argument; otherwise pass an array of absolute training errors.")
        return np.abs(self.regression_targets() - self.loo_predictions())

    def trust_scores(self, X: Any, *, quantiles: Sequence[float] = (0.1, 0.5, 0.9),
                     level: float = 0.9) -> pd.DataFrame:
        """Trust scores of the predictions at ``X`` from the signed target weights (squared error).

        The regression columns of :class:`~shap_instances.explainers.gap.GapExplainer`'s trust scores, computed
        by the same functions (:func:`shap_instances.weighted_targets.trust_columns`) and adapted to signed
        weights as derived in the docs:

        * ``prediction``;
        * ``weighted_loo_error``: ``sum_j |w_j(x)| |y_j - loo_j| / sum_j |w_j(x)|``, the mean leave-self-out
          error (:meth:`loo_predictions`) of the training rows under the absolute weights;
        * ``q10``, ``q50``, ``q90`` (``quantiles``): quantiles of the targets under the positive part of the
          weights, normalised;
        * ``n_neighbours_90``: rows (largest ``|w|`` first) carrying ``level`` of ``sum_j |w_j(x)|``;
        * ``total_abs_weight`` (``sum_j |w_j(x)|``, 1 for a forest) and ``negative_share``
          (``sum_j w_j(x)^- / sum_j |w_j(x)|``).

        Rows are computed in chunks under ``max_memory``. Models explained with ``kind="gradients"`` (classifiers,
        other losses) are refused: their values are not weights on the targets.

        Examples
        --------
        >>> from sklearn.datasets import load_diabetes
        >>> from sklearn.ensemble import GradientBoostingRegressor
        >>> from shap_instances import BoostingExplainer
        >>> X, y = load_diabetes(return_X_y=True)
        >>> model = GradientBoostingRegressor(n_estimators=30, random_state=0).fit(X[:300], y[:300])
        >>> scores = BoostingExplainer(model, X[:300], y=y[:300]).trust_scores(X[300:310])
        >>> list(scores.columns)[:2], list(scores.columns)[-2:]
        (['prediction', 'weighted_loo_error'], ['total_abs_weight', 'negative_share'])
        """
        if self.kind_ != "weights":
            raise UnsupportedModelError(
                "Trust scores read the prediction as a weighted sum of training targets, which needs kind='weights' "
                f"(squared-error regression); this explainer uses kind={self.kind_!r}, whose values are contributions "
                "through gradients, not weights on the targets.")
        index = row_names(X)
        leaves, X, _ = self._query(X)
        frame = boosting_trust_scores(self.trees_, leaves, X, self.y_train_, self.loo_predictions(),
                                      quantiles=quantiles, level=level, n_jobs=self.n_jobs, max_memory=self.max_memory)
        frame.index = index
        return frame

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state.pop("_row_major_cache", None)  # top_k's index (12 n T bytes) is rebuilt on demand, not pickled
        return state

    def _row_major_index(self, column: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None:
        """The row-major leaves and shares of margin ``column``'s trees (cached), or None if over ``max_memory``."""
        cache = self.__dict__.setdefault("_row_major_cache", {})
        if column not in cache:
            index = row_major_index(self.trees_, column, max_memory=self.max_memory)
            if index is None:
                return None
            cache[column] = index
        return cache[column]

    def top_k(self, X: Any = None, k: int = 10, *, output: int | str | None = None) -> sp.csr_matrix:
        """The ``k`` largest values (in absolute value) of each explained row, without the dense (m, n) values.

        With a ``scheduler``, the explained rows (the training rows for ``X=None``) are split over its workers.

        Rows are explained in chunks whose values fit in ``max_memory`` (default 256 MiB), so memory stays
        O(chunk x n_train + m x k) whatever the number of explained rows. With ``kind="gradients"`` and at
        least 20,000 training rows, each row's largest leaves are bounded instead of scattered and only the rows
        the bound cannot rule out get their (exact, bit-identical) values, from a row-major copy of the leaves
        and shares of ``12 n_train T`` bytes (``T`` the trees of the margin) built on the first call and
        counted against ``max_memory`` (default there: half the memory available); see the docs.

        Parameters
        ----------
        X : array-like of shape (m, n_features), optional
            ``None``: the training rows.
        k : int, default=10
        output : int or class label, optional
            The margin to rank, for a multi-class model (required there).

        Returns
        -------
        scipy.sparse.csr_matrix of shape (m, n_train)
            Row ``i`` holds the values of ``explainer(X)`` at its ``k`` training rows of largest absolute value
            (ties broken arbitrarily), sorted by training row. The values left out of row ``i``
            sum to ``explained_i - base_i - row sum``.

        Examples
        --------
        >>> import numpy as np
        >>> from sklearn.datasets import load_diabetes
        >>> from sklearn.ensemble import GradientBoostingRegressor
        >>> from shap_instances import BoostingExplainer
        >>> X, y = load_diabetes(return_X_y=True)
        >>> explainer = BoostingExplainer(GradientBoostingRegressor(n_estimators=20).fit(X, y), X, y=y)
        >>> top = explainer.top_k(X[:3], k=5)
        >>> top.shape, top.nnz
        ((3, 442), 15)
        >>> dense = explainer(X[:3]).values
        >>> bool(np.allclose(np.sort(np.abs(top.toarray()), 1)[:, -5:], np.sort(np.abs(dense), 1)[:, -5:]))
        True
        """
        column = self._top_k_column(k, output)
        if self.scheduler is not None:  # the explained rows (None: the training rows) split over the workers
            rows = np.arange(self.n_train_) if X is None else X
            return explain_partitions(self, rows, scheduler=self.scheduler,
                                      call=functools.partial(_top_k_part, training=X is None, k=int(k), output=output),
                                      sparse=True)
        leaves, _, _ = self._query(X)
        return self._top_k_of(leaves, column, int(k))

    def _top_k_column(self, k: Any, output: int | str | None) -> int:
        """The margin ``top_k`` ranks (``k`` and ``output`` checked)."""
        K, n = self.trees_.n_outputs, self.n_train_
        if isinstance(k, bool) or not isinstance(k, int | np.integer) or not 1 <= k <= n:
            raise InvalidParameterError(f"BoostingExplainer.top_k: k must be an int in [1, {n}]; got {k!r}.")
        if K == 1:
            return 0
        if output is None:
            raise InvalidParameterError(f"BoostingExplainer.top_k: the model has {K} margins; pass output= one of "
                                        f"{self.output_names_} (or its position).")
        names = list(cast(list[str], self.output_names_))  # K > 1: the margins are named
        return names.index(str(output)) if str(output) in names else int(output)

    def _top_k_of(self, leaves: np.ndarray, column: int, k: int) -> sp.csr_matrix:
        """``top_k`` of the rows whose leaf ranks are ``leaves`` (m, T)."""
        return top_k_values(self.trees_, self.kind_, self.y_train_, leaves, column, k,
                            row_major=lambda: self._row_major_index(column), n_jobs=self.n_jobs,
                            max_memory=self.max_memory)

    def _training_row_data(self, X: Any, margin: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``data`` and ``display_data`` (``docs/pictures.md``): a classifier's predicted class from the margins
        (binary: ``margin > 0``), a regressor's prediction from its scikit-learn ``predict`` (a native booster's
        margin, the prediction for the squared error)."""
        classes = getattr(self.model, "classes_", None)
        if classes is None or len(classes) == 0:  # a regressor (CatBoostRegressor has an empty classes_)
            predicted = (np.asarray(self.model.predict(model_input(self.model, X)), dtype=np.float64)
                         if hasattr(self.model, "get_params") else margin[:, 0])
            return training_row_data(self.y_train_, predicted, classification=False)
        codes = (margin[:, 0] > 0).astype(np.intp) if margin.shape[1] == 1 else np.argmax(margin, axis=1)
        return training_row_data(self.y_train_, codes, classification=True, labels=classes)

    def __call__(self, X: Any = None, y: ArrayLike | None = None) -> shap.Explanation:
        """Explain ``X`` (``None``: the training rows, in-sample).

        Parameters
        ----------
        X : array-like of shape (n, n_features), optional

        Returns
        -------
        shap.Explanation
            ``values`` of shape (n, n_train) (regression, binary classification: the log-odds of
            ``classes_[1]``) or (n, n_train, n_classes) (multi-class: one raw margin per class). ``data`` compares
            each training row's target with the explained row's prediction (``y_i - prediction``, or 1.0 where the
            labels agree: ``docs/pictures.md``), what plots colour by; ``display_data`` holds the targets as text.

        Examples
        --------
        >>> import numpy as np
        >>> from sklearn.datasets import load_breast_cancer
        >>> from sklearn.ensemble import GradientBoostingClassifier
        >>> from shap_instances import BoostingExplainer
        >>> X, y = load_breast_cancer(return_X_y=True)
        >>> model = GradientBoostingClassifier(n_estimators=30, random_state=0).fit(X[:450], y[:450])
        >>> e = BoostingExplainer(model, X[:450], y=y[:450])(X[450:460])
        >>> e.values.shape
        (10, 450)
        >>> bool(np.allclose(e.base_values + e.values.sum(1), model.decision_function(X[450:460]), rtol=1e-12))
        True
        """
        self._check_call_y(y)
        if (partitioned := self._explain_partitioned(X, y)) is not None:
            return partitioned
        t0 = time.perf_counter()
        leaves, X, names = self._query(X)
        trees = self.trees_
        m, n, K = leaves.shape[0], self.n_train_, trees.n_outputs
        check_memory(8.0 * m * n * K, f"The Explanation values of shape ({m}, {n}{', ' + str(K) if K > 1 else ''})",
                     max_memory=self.max_memory, instead="Explain fewer rows at a time, or keep the largest values "
                     "of each row with explainer.top_k(X, k), which works in chunks.")
        explained = trees.margin(X)
        data, display = self._training_row_data(X, explained)
        values = boosting_values(trees, self.kind_, self.y_train_, leaves, n_jobs=self.n_jobs)
        if self.kind_ == "weights":
            base, explained = np.full(m, cast(np.ndarray, trees.init_constant)[0]), explained[:, 0]
        else:
            base = trees.init_raw(X)
        if K == 1:
            values = values[:, :, 0]
            if self.kind_ != "weights":
                base, explained = base[:, 0], explained[:, 0]
        return self._finish(build_explanation(
            values, base, feature_names=self.train_names_, data=data, display_data=display, row_names=names,
            output_names=self.output_names_ if K > 1 else None, explained=explained,
            atol=reconstruction_tolerance(trees, self.kind_, self.y_train_, leaves),
            compute_time=time.perf_counter() - t0,
        ))


def _top_k_part(explainer: BoostingExplainer, rows: Any, *, training: bool, k: int,
                output: int | str | None) -> sp.csr_matrix:
    """``top_k`` of a partition on a worker: rows of ``X``, or training row numbers (``training``)."""
    if not training:
        return explainer.top_k(rows, k, output=output)
    leaves = np.ascontiguousarray(explainer.trees_.train_leaves.T[rows])
    return explainer._top_k_of(leaves, explainer._top_k_column(k, output), k)
