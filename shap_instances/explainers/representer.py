"""High-dimensional representer points for l1, elastic-net and l2 regularised linear models.

``values[j, i] = alpha_i * k(x_i, x'_j)`` with the global importance ``alpha_i`` (the scaled negative loss
derivative of training point ``i`` at the optimum) and the kernel ``k(x, x') = <d * x, x'>``, where ``d``
is the inverse of the regulariser's subdifferential on the active set (``|w|`` for the lasso, ``1`` for
ridge). At the optimum ``base_values + values.sum(1)`` is the model's decision function exactly
(Tsai et al., 2023, Corollary 2; Yeh et al., 2018). Derivations: ``docs/explainers/representer.md``.
"""

from __future__ import annotations

import numbers
import time
import warnings
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, BinaryIO, ClassVar

import numpy as np
import shap
from numpy.typing import ArrayLike
from sklearn.base import is_classifier

from .._base import InstanceExplainer
from .._explanation import build_explanation, training_row_data
from ..exceptions import (
    DataValidationError,
    InvalidParameterError,
    ReconstructionWarning,
    UnsupportedOperationError,
)
from ..linear import LinearRepresenter, TopK, check_supported, is_supported, largest_magnitude, linear_objective
from ..neural import fine_tune_last_layer, is_torch_module
from ..utils import (
    COMMON_CONSTRAINTS,
    Interval,
    Options,
    check_data,
    check_fitted,
    check_memory,
    check_target,
    fitted_columns,
    row_names,
    training_names,
    unwrap_model,
)

if TYPE_CHECKING:
    from .._base import ConformanceProblem

__all__ = ["RepresenterExplainer", "TopK"]


class RepresenterExplainer(InstanceExplainer):
    """Explain a regularised linear model's decision function by its training instances.

    Parameters
    ----------
    model : Lasso, ElasticNet, Ridge or LogisticRegression (or a CV variant), fitted; or a torch.nn.Module
        A PyTorch network (the ``torch`` extra) is explained through its last linear layer, fine-tuned on the
        frozen penultimate features to the optimum of ``(1/n) sum_i L(y_i, Theta f_i + b) + lam ||Theta||^2``
        (Yeh et al., 2018; ``penalty="l1"``: ``lam ||Theta||_1``, Tsai et al., 2023): the explained quantity is
        the fine-tuned network's output (its logit for a classifier), and ``fine_tuning_fidelity_`` says how far
        fine-tuning moved it from the network's own. Otherwise the model; l1 and elastic-net models use the
        high-dimensional representer (Tsai et al., 2023), l2 models the representer of Yeh et al. (2018).
        ``LinearRegression`` is unregularised and refused,
        and so are ``MultiTaskLasso`` / ``MultiTaskElasticNet`` (and their CV variants), whose group penalty
        couples the outputs. A fitted pipeline or meta-estimator around one is accepted (see the
        supported-models page): its fitted steps transform the training rows once and the explained rows on
        every call.
    masker : array-like or scipy.sparse matrix of shape (n_train, p)
        The training data the model was fitted on (sparse stays sparse); ``data=`` is an alias. A DataFrame
        sets the column names that explained DataFrames are matched by.
    y : array-like of shape (n_train,) or (n_train, n_targets)
        The training targets the model was fitted on (required: the global importances depend on them).
    sample_weight : array-like of shape (n_train,), optional
        The sample weights passed to ``fit``, if any.
    penalised_intercept : {"base", "instances"}, default="base"
        For liblinear (whose intercept is penalised and therefore itself a representer sum): keep the
        intercept as ``base_values`` ("base"), or spread it over the training instances ("instances",
        then ``base_values`` is 0).
    atol : float, default=1e-6
        Relative reconstruction gap above which a :class:`~shap_instances.exceptions.ReconstructionWarning`
        is issued (the solver stopped far from the optimum: refit with a smaller ``tol``).
    lam : float, optional
        A network only: the fine-tuning strength ``lam`` (default 1e-3); refused for other models.
    penalty : {"l2", "l1"}, optional
        A network only: the fine-tuning penalty (default "l2").
    layer : str, optional
        A network only: the name of its output ``torch.nn.Linear`` in ``named_modules()`` (default: the last one).
    max_memory : float, optional
        Byte budget of the dense values of one call (default: half the memory available).
    feature_names : sequence of str, optional
        Names of the training rows (the players); default the DataFrame index, else ``"train[i]"``.
    scheduler : str or distributed.Client, optional
        Explain the rows on a dask cluster, partition by partition: a scheduler address, a ``Client`` or
        ``"local"``; a dask array or DataFrame ``X`` is explained by partitions even without one (values bitwise
        those of the serial call; see :func:`~shap_instances.utils.explain_partitions`).

    Attributes
    ----------
    representer_ : shap_instances.linear.LinearRepresenter
        The decomposition the methods delegate to.
    y_train_ : ndarray of shape (n_train,) or (n_train, n_outputs)
        The training targets, as given (the name every explainer uses).
    global_importance_ : ndarray of shape (n_train, K)
        ``alpha_i`` per output.
    kernel_weights_ : ndarray of shape (K, p)
        ``d`` per output: ``k(x, x') = <d * x, x'>``.
    optimality_violation_ : float
        ``max |w_rep - w| / max |w|`` where ``w_rep = d * sum_i alpha_i x_i``: zero at the exact optimum.
    reconstruction_gap_ : float
        The relative efficiency gap of the last explanation (``nan`` before the first call).
    fine_tuned_ : shap_instances.neural.FineTunedLastLayer or None
        A network's fine-tuned last layer (features, task, the fitted pipeline); None for other models.
    fine_tuning_fidelity_ : float
        A network only: ``max |fine-tuned output - network output| / max |network output|`` on the training rows
        (``nan`` for other models).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import load_diabetes
    >>> from sklearn.linear_model import Lasso
    >>> from shap_instances.explainers.representer import RepresenterExplainer
    >>> X, y = load_diabetes(return_X_y=True)
    >>> model = Lasso(alpha=0.01, tol=1e-12, max_iter=100_000).fit(X, y)
    >>> ex = RepresenterExplainer(model, X, y=y)
    >>> e = ex(X[:3])
    >>> e.values.shape
    (3, 442)
    >>> bool(np.allclose(e.base_values + e.values.sum(1), model.predict(X[:3])))
    True
    """

    auto_priority: ClassVar[int] = 30
    explained_quantity: ClassVar[str] = "the decision function (log-odds for logistic models, prediction otherwise)"

    requires_y = True
    unwraps_models = True
    _parameter_constraints: ClassVar[dict] = {
        **COMMON_CONSTRAINTS,
        "y": [None, "array-like"],
        "sample_weight": [None, "array-like"],
        "penalised_intercept": [Options("base", "instances")],
        "atol": [Interval(numbers.Real, 0, None, closed="neither")],
        "lam": [None, Interval(numbers.Real, 0, None, closed="neither")],
        "penalty": [None, Options("l2", "l1")],
        "layer": [None, str],
    }

    def __init__(self, model: Any, masker: Any = None, *, data: Any = None, y: ArrayLike | None = None,
                 sample_weight: ArrayLike | None = None, penalised_intercept: str = "base", atol: float = 1e-6,
                 lam: float | None = None, penalty: str | None = None, layer: str | None = None,
                 max_memory: float | None = None, feature_names: Sequence[str] | None = None,
                 scheduler: Any = None) -> None:
        data = self._setup(locals())  # a class or a model of another kind is refused first
        model = self._fine_tune_network(model, data, y)
        check_fitted(model)
        check_supported(unwrap_model(model).estimator)
        if data is None:
            raise DataValidationError("RepresenterExplainer needs the training data the model was fitted on: "
                                      "RepresenterExplainer(model, X_train, y=y_train).")
        raw, (model, data, y) = data, self._unwrap(data, y)
        n_features = np.asarray(model.coef_).shape[-1]
        self.columns_ = fitted_columns(model, data)
        self.data_ = check_data(data, name="masker", allow_sparse=True, n_features=n_features,
                                feature_names=self.columns_)
        n = self.data_.shape[0]
        y_arr = np.asarray(y)
        if y_arr.shape[0] != n:
            raise DataValidationError(f"y has {y_arr.shape[0]} rows, data has {n}; pass the targets of data.")
        if y_arr.dtype.kind in "fc" or not is_classifier(model):  # regression targets must be numbers: kept as
            y_arr = check_target(y_arr, n).reshape(y_arr.shape)  # numbers (text "1.5" once crashed the data)
        self.penalised_intercept = penalised_intercept
        self.atol = float(atol)
        self.y_train_ = y_arr.copy()  # never a view of the caller's array
        self.objective_ = obj = linear_objective(model, y_arr, sample_weight)
        self.train_names_ = training_names(raw, feature_names)
        self.output_names_ = obj.output_names

        rep = self.representer_ = LinearRepresenter(obj, self.data_)
        self.kernel_weights_, self.global_importance_ = rep.kernel_weights, rep.global_importance
        self.coef_reconstruction_, self.optimality_violation_ = rep.coef_reconstruction, rep.optimality_violation
        self.intercept_weights_, self.intercept_reconstruction_ = rep.intercept_weights, rep.intercept_reconstruction
        self.active_features_, self.data_a = rep.active_features, rep.data_active
        self.reconstruction_gap_ = float("nan")
        if self.fine_tuned_ is not None and self.optimality_violation_ > self.atol:
            warnings.warn(
                f"The fine-tuned last layer is not at a stationary point (optimality violation "
                f"{self.optimality_violation_:.3g} > atol={self.atol:g}), so the representer identity holds only "
                "approximately; use a larger lam, or penalty='l2'.", ReconstructionWarning, stacklevel=2)

    def _fine_tune_network(self, model: Any, data: Any, y: Any) -> Any:
        """A torch network: its last layer fine-tuned (``fine_tuned_``), returned as a fitted pipeline."""
        self.fine_tuned_, self.fine_tuning_fidelity_ = None, float("nan")
        options = {"lam": self.lam, "penalty": self.penalty, "layer": self.layer}
        if not is_torch_module(model):
            given = [name for name, value in options.items() if value is not None]
            if given:
                raise InvalidParameterError(
                    f"RepresenterExplainer: {', '.join(given)} fine-tune a PyTorch network's last layer; "
                    f"{type(model).__name__} is explained as fitted: drop {', '.join(given)}.")
            return model
        if data is None or y is None:
            raise DataValidationError("RepresenterExplainer needs a network's training inputs and targets: "
                                      "RepresenterExplainer(net, X_train, y=y_train).")
        tuned = self.fine_tuned_ = fine_tune_last_layer(
            model, data, y, lam=1e-3 if self.lam is None else self.lam, penalty=self.penalty or "l2",
            layer=self.layer)
        self.fine_tuning_fidelity_ = tuned.fidelity
        self.model = tuned.model
        return tuned.model

    def save(self, out_file: BinaryIO, model_saver: Any = ".save", masker_saver: Any = ".save") -> None:
        """Write the explainer (see :meth:`InstanceExplainer.save`); a PyTorch network's is refused.

        Examples
        --------
        >>> import io
        >>> import numpy as np
        >>> from sklearn.linear_model import Ridge
        >>> X, y = np.random.default_rng(0).normal(size=(20, 3)), np.arange(20.0)
        >>> ex = RepresenterExplainer(Ridge().fit(X, y), X, y=y)
        >>> ex.save(io.BytesIO())
        """
        if self.fine_tuned_ is not None:
            raise UnsupportedOperationError(
                "RepresenterExplainer.save does not store a PyTorch network (its format loads only the fitted "
                "estimators the package writes). Save the network with torch.save(net.state_dict(), path) and "
                "rebuild the explainer after loading it: the fine-tuning is deterministic, so the values are the same.")
        super().save(out_file)

    @classmethod
    def conformance_problem(cls) -> ConformanceProblem:
        """Ridge on 60 diabetes rows, 6 held-out rows; the explained quantity is ``predict``."""
        from sklearn.linear_model import Ridge

        from .._base import ConformanceProblem
        from ..datasets import load_diabetes

        X, y = load_diabetes()
        model = Ridge(alpha=1.0).fit(X.iloc[:60], y.iloc[:60])
        return ConformanceProblem(model, X.iloc[:60], X.iloc[60:66], y=y.iloc[:60], explained=model.predict)

    @classmethod
    def supports_model(cls, model: Any, data: Any = None) -> bool:
        """Regularised linear scikit-learn models: Lasso, ElasticNet, Ridge, LogisticRegression.

        Their CV variants too, and PyTorch networks (``torch.nn.Module``, explained through the last layer); not
        LinearRegression nor the multi-task (group-penalised) models. A settings check (e.g. ``alpha=0``) happens
        at construction. Never raises.

        Examples
        --------
        >>> from sklearn.linear_model import Lasso, LinearRegression, MultiTaskLasso
        >>> [RepresenterExplainer.supports_model(m) for m in (Lasso(), LinearRegression(), MultiTaskLasso())]
        [True, False, False]
        """
        return is_supported(model) or is_torch_module(model)

    def _validate_X(self, X: Any) -> Any:
        return check_data(self._prepare(X), name="X", allow_sparse=True, n_features=self.objective_.coef.shape[1],
                          feature_names=self.columns_)

    def _training_row_data(self, decision: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``data`` and ``display_data`` (``docs/pictures.md``) of the first output: a classifier's predicted class
        from its decision function (binary: ``decision > 0``), a regressor's prediction (its decision)."""
        classes = getattr(self.model, "classes_", None) if is_classifier(self.model) else None
        if classes is None:
            y = self.y_train_.reshape(len(self.y_train_), -1)[:, 0]
            return training_row_data(y, decision[:, 0], classification=False)
        codes = (decision[:, 0] > 0).astype(np.intp) if decision.shape[1] == 1 else np.argmax(decision, axis=1)
        return training_row_data(np.searchsorted(classes, self.y_train_), codes, classification=True, labels=classes)

    def __call__(self, X: Any, y: ArrayLike | None = None) -> shap.Explanation:
        """Explain the rows of ``X``: an Explanation of shape (n, n_train) or (n, n_train, K).

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n, p)
        y : None
            Not used (the decision function needs no target); refused when given.

        Returns
        -------
        shap.Explanation
            ``values[j, i] = alpha_i k(x_i, x'_j)``, ``base_values`` the intercept, ``data`` each training
            target compared with the explained row's prediction (``y_i - prediction``, or 1.0 where the labels
            agree: ``docs/pictures.md``), what plots colour by; ``display_data`` the targets as text.

        Examples
        --------
        >>> import numpy as np
        >>> from sklearn.linear_model import Ridge
        >>> rng = np.random.default_rng(0)
        >>> X, y = rng.normal(size=(30, 3)), rng.normal(size=30)
        >>> model = Ridge(alpha=1.0).fit(X, y)
        >>> e = RepresenterExplainer(model, X, y=y)(X[:2])
        >>> bool(np.allclose(e.base_values + e.values.sum(1), model.predict(X[:2])))
        True
        """
        start = time.perf_counter()
        self._check_call_y(y)
        if (partitioned := self._explain_partitioned(X, y)) is not None:
            return partitioned
        Xq = self._validate_X(X)
        obj = self.objective_
        n, n_train, K = Xq.shape[0], self.data_.shape[0], obj.coef.shape[0]
        check_memory(8.0 * n * n_train * K * 2, f"representer values of {n} x {n_train} x {K}",
                     max_memory=self.max_memory,
                     instead="Use explainer.top_k(X, k), which works in chunks, or explain fewer rows at once.")
        with np.errstate(over="ignore", invalid="ignore"):  # overflowing rows are refused just below
            values = self.representer_.values(Xq, penalised_intercept=self.penalised_intercept)
            explained = obj.decision(Xq)
        overflow = np.flatnonzero(~(np.isfinite(values).reshape(n, -1).all(axis=1) & np.isfinite(explained).all(1)))
        if overflow.size:
            raise DataValidationError(
                f"X: rows {overflow[:10].tolist()} have values so large (up to "
                f"{largest_magnitude(Xq[overflow]):.3g}) that their decision function or their kernel with the "
                "training rows overflows float64; rescale X (and refit the model on the rescaled training data).")
        base = np.broadcast_to(self.representer_.base(self.penalised_intercept), (n, K))
        colour, display = self._training_row_data(explained)
        if obj.squeeze:
            values, explained, base = values[:, :, 0], explained[:, 0], base[:, 0]
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", ReconstructionWarning)
            explanation = build_explanation(
                values, base, feature_names=self.train_names_, data=colour, display_data=display,
                row_names=row_names(X), output_names=None if obj.squeeze
                else self.output_names_, explained=explained, atol=self.atol, on_violation="warn",
                compute_time=time.perf_counter() - start,
            )
        total = base + values.sum(axis=1)
        self.reconstruction_gap_ = float(np.max(np.abs(total - explained) / np.maximum(1.0, np.abs(explained))))
        for w in caught:
            if issubclass(w.category, ReconstructionWarning):
                warnings.warn(
                    f"{w.message} The solver of {type(self.model).__name__} stopped before the optimum "
                    f"(optimality violation {self.optimality_violation_:.3g}); refit with a smaller tol "
                    "(and a larger max_iter) for an exact decomposition, and check that data, y and sample_weight "
                    "are those the model was fitted on.",
                    ReconstructionWarning, stacklevel=2,
                )
            else:  # pragma: no cover - pass other warnings through
                warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
        return self._finish(explanation)

    def _expected_value(self) -> float | np.ndarray:
        base = np.asarray(self.representer_.base(self.penalised_intercept), dtype=np.float64)
        return float(base[0]) if self.objective_.squeeze else base.copy()

    def top_k(self, X: Any, k: int = 5, *, output: int | str | None = None, chunk_size: int = 256) -> TopK:
        """The ``k`` most positive and most negative training instances for each row of ``X``.

        Works in chunks of ``chunk_size`` explained rows with ``np.argpartition`` (no full sort), so memory
        stays ``chunk_size x n_train``.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n, p)
        k : int, default=5
        output : int or class label, optional
            Which output of a multi-output model (required when there are several).
        chunk_size : int, default=256

        Returns
        -------
        TopK

        Examples
        --------
        >>> import numpy as np
        >>> from sklearn.linear_model import Ridge
        >>> rng = np.random.default_rng(0)
        >>> X, y = rng.normal(size=(50, 4)), rng.normal(size=50)
        >>> ex = RepresenterExplainer(Ridge(alpha=1.0).fit(X, y), X, y=y)
        >>> top = ex.top_k(X[:2], k=3)
        >>> top.positive_indices.shape
        (2, 3)
        """
        Xq = self._validate_X(X)
        n_train = self.data_.shape[0]
        K = self.objective_.coef.shape[0]
        if not (isinstance(k, int | np.integer) and 1 <= k <= n_train):
            raise DataValidationError(f"k must be an integer in [1, {n_train}], got {k!r}.")
        if not (isinstance(chunk_size, int | np.integer) and chunk_size >= 1):
            raise DataValidationError(f"chunk_size must be a positive integer (explained rows per chunk), got "
                                      f"{chunk_size!r}.")
        if K == 1:
            out_index = 0
        elif output is None:
            raise DataValidationError(f"The model has {K} outputs {self.output_names_}; pass output=.")
        elif self.output_names_ is not None and str(output) in self.output_names_:
            out_index = self.output_names_.index(str(output))
        elif isinstance(output, int | np.integer) and 0 <= output < K:
            out_index = int(output)
        else:
            raise DataValidationError(f"output={output!r} is not one of {self.output_names_} nor an index < {K}.")
        return self.representer_.top_k(Xq, int(k), out_index, chunk_size=int(chunk_size),
                                       penalised_intercept=self.penalised_intercept)
