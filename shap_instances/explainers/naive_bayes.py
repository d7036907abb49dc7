"""``NaiveBayesExplainer``: exact Shapley values of naive Bayes models in linear time (Lemaire et al.)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
import pandas as pd
import scipy.sparse as sp
import shap
from numpy.typing import ArrayLike

from .._base import InstanceExplainer
from .._deprecated import renamed_attribute
from .._explanation import build_explanation, check_efficiency
from ..exceptions import DataValidationError, InvalidParameterError
from ..naive_bayes import NB_TYPES, NaiveBayesModel, WeightedNaiveBayes, chunk_rows, contract, dense, split_pipeline
from ..utils import COMMON_CONSTRAINTS, Options, check_fitted, check_memory, final_estimator, row_names

if TYPE_CHECKING:
    from .._base import ConformanceProblem

__all__ = ["NaiveBayesExplainer"]

#: Rows checked against the model's own predict_joint_log_proba on every call.
_CHECK_ROWS = 2_000


class NaiveBayesExplainer(InstanceExplainer):
    """Exact Shapley values of a naive Bayes model's log-odds, linear in the number of features.

    A naive Bayes model scores class c as ``jll_c(x) = log P(c) + sum_m L_m(x_m, c)``, a sum of one term
    per feature. Under the interventional (independent-masker) game a feature's Shapley value is then its
    own centred term: ``phi_m = w_m (f_m(x_m) - E[f_m(X_m)])``, with ``f_m`` the feature's contribution to
    the explained quantity and the expectation over the background data (shap's convention) or over the
    training marginal (``expectation="training"``, the convention of the paper and Khiops).

    Explained quantity: for two classes the log-odds ``log P(c1|x) - log P(c0|x)``; for more classes, by
    default the centred log-probabilities ``log P(c|x) - mean_k log P(k|x)`` (one output per class, whose
    softmax is ``predict_proba``), or ``output="joint"`` for the joint log-likelihoods, or a class label
    for log-ratios to that reference class.

    Parameters
    ----------
    model : fitted GaussianNB, BernoulliNB, MultinomialNB, ComplementNB, CategoricalNB, a Pipeline
        ending in one whose earlier steps map input columns one to one onto the model's columns
        (KBinsDiscretizer, OrdinalEncoder, scalers, a ColumnTransformer of those, even one that reorders
        the columns): the attributions are then to the pipeline's input columns, in input order, and the
        pipeline takes whatever input it accepts (strings for an OrdinalEncoder, DataFrames, ...); or a
        fitted :class:`~shap_instances.naive_bayes.WeightedNaiveBayes` wrapping either (its weights are used).
    masker : array-like, optional
        Background data (needed with ``expectation="background"``), in the model's input format; ``data=``
        is an alias. A
        DataFrame (here and in ``__call__``) is put in the model's fitted column order (``feature_names_in_``)
        and refused if its columns differ. BernoulliNB, MultinomialNB and ComplementNB also take scipy.sparse
        matrices, densified a chunk of rows at a time. For a pipeline whose column mapping cannot be read
        from its fitted state and probes (an unknown transformer that refuses numbers, or columns that
        stay constant in every probe), also needed with ``expectation="training"``; the error says so.
    weights : array-like of shape (p,), optional
        Per-feature weights ``w_m`` (weighted / selective naive Bayes); the explained quantity becomes
        ``log prior ratio + sum_m w_m f_m(x_m)``. A :class:`~shap_instances.naive_bayes.WeightedNaiveBayes` model
        carries its own (``model.weights_``, read automatically; passing ``weights=`` as well is refused).
    expectation : {"background", "training"}, default="background"
    woe : bool, default=False
        The weight-of-evidence variant of the paper: ``phi_m = w_m f_m(x_m)`` (reference 0), with the prior
        log-odds as base value.
    output : {"centered", "joint"} or class label, default="centered"
        The explained quantity for more than two classes.
    max_memory : float, optional
        Byte budget of the values of one call (``8 n p k`` bytes); default half the memory available.
    feature_names : sequence of str, optional
        Names of the input columns (default: the model's ``feature_names_in_``, the DataFrame's columns, or
        ``"x{i}"``).
    scheduler : str or distributed.Client, optional
        Explain the rows on a dask cluster, partition by partition: a scheduler address, a ``Client`` or
        ``"local"``; a dask array or DataFrame ``X`` is explained by partitions even without one (values bitwise
        those of the serial call; see :func:`~shap_instances.utils.explain_partitions`).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import load_breast_cancer
    >>> from sklearn.naive_bayes import GaussianNB
    >>> from shap_instances import NaiveBayesExplainer
    >>> X, y = load_breast_cancer(return_X_y=True)
    >>> model = GaussianNB().fit(X, y)
    >>> e = NaiveBayesExplainer(model, X[:100])(X[:3])
    >>> log_odds = np.diff(model.predict_joint_log_proba(X[:3]), axis=1)[:, 0]
    >>> bool(np.allclose(e.base_values + e.values.sum(1), log_odds))
    True
    """

    auto_priority = 10
    players = "features"
    model_kinds = ("classifier",)
    explained_quantity = "log-odds (two classes), centred log-probabilities per class (more classes)"
    _parameter_constraints: ClassVar[dict] = {
        **COMMON_CONSTRAINTS,
        "weights": [None, "array-like"],
        "expectation": [Options("background", "training")],
        "woe": ["boolean"],
    }

    def __init__(self, model: Any, masker: Any = None, *, data: Any = None, weights: ArrayLike | str | None = None,
                 expectation: str = "background", woe: bool = False, output: str = "centered",
                 max_memory: float | None = None, feature_names: Sequence[str] | None = None,
                 scheduler: Any = None) -> None:
        data = self._setup(locals())  # a class or a model of another kind is refused first
        check_fitted(model)
        split_pipeline(model)
        nb = NaiveBayesModel(model, weights=weights, feature_names=feature_names,
                             data=self._background(data, expectation))
        self.nb_model_ = nb
        self.preprocessing, self.nb_ = nb.preprocessing, nb.estimator
        self.n_features_, self.classes_, self.columns_, self.data_ = nb.n_features, nb.classes, nb.columns, nb.data
        self.feature_names_, self.terms_, self.weights_ = nb.feature_names, nb.terms, nb.weights
        self.order_, self.identity_order_, self.nb_weights_ = nb.order, nb.identity_order, nb.nb_weights
        self.input_terms_ = nb.input_terms
        self.expected_terms_ = nb.expected_terms(
            nb.transform(self.data_, name="data") if expectation == "background" else None)
        self.contraction_, self.output_names_ = _contraction(self.classes_, output)
        # everything __call__ needs, in input-column order, folded into the model's coefficients once
        expected = contract(self.expected_terms_, self.contraction_)  # (p, D), naive Bayes column order
        self.base_value_ = contract(self.terms_.class_terms, self.contraction_) + (
            0.0 if woe else (expected * self.nb_weights_[:, None]).sum(0))
        self.input_shift_ = None if woe else expected[self.order_]

    fitted_names_ = renamed_attribute("NaiveBayesExplainer", "fitted_names_", "columns_")

    @staticmethod
    def _background(data: Any, expectation: str) -> Any:
        if expectation == "background" and data is None:
            raise DataValidationError("expectation='background' needs background data; pass "
                                      "NaiveBayesExplainer(model, X_background) or use expectation='training'.")
        return data

    @classmethod
    def conformance_problem(cls) -> ConformanceProblem:
        """GaussianNB on iris (three classes); the explained quantity is the centred log-probabilities."""
        from sklearn.datasets import load_iris
        from sklearn.naive_bayes import GaussianNB

        from .._base import ConformanceProblem

        X, y = load_iris(return_X_y=True, as_frame=True)
        model = GaussianNB().fit(X, y)

        def centred(rows: Any) -> np.ndarray:
            log_proba = model.predict_log_proba(rows[X.columns])
            return log_proba - log_proba.mean(axis=1, keepdims=True)

        return ConformanceProblem(model, X.iloc[::5], X.iloc[1::25], explained=centred, atol=1e-9)

    @classmethod
    def supports_model(cls, model: Any, data: Any = None) -> bool:
        """True for scikit-learn naive Bayes models, pipelines ending in one, and ``WeightedNaiveBayes``."""
        if isinstance(model, WeightedNaiveBayes):
            return True
        return isinstance(final_estimator(model), NB_TYPES)

    def __call__(self, X: Any, y: ArrayLike | None = None) -> shap.Explanation:
        """Shapley values of the rows of ``X``: (n, p) for two classes, (n, p, k) for more.

        ``y`` is not used (the model's output is explained) and is refused when given.
        """
        self._check_call_y(y)
        if (partitioned := self._explain_partitioned(X, y)) is not None:
            return partitioned
        raw = self.nb_model_.raw_input(X, name="X")
        transformed = self.nb_model_.transform(raw, name="X")
        n, p, D = transformed.shape[0], self.n_features_, self.contraction_.shape[1]
        sparse = sp.issparse(transformed)
        check_memory(8.0 * n * p * (D + sparse), "the Shapley values of X", max_memory=self.max_memory,
                     instead="explain X in batches of rows.")
        # computed chunk by chunk in place, already in input-column order: no temporary of the size of X
        values = np.empty((n, p, D))
        data: Any = np.empty((n, p)) if sparse else None
        evaluate = self.input_terms_.evaluator(self.contraction_, self.input_shift_, self.weights_)
        rows = chunk_rows(p * D)
        with np.errstate(over="ignore", invalid="ignore"):  # overflowing rows are refused just below
            for start in range(0, n, rows):
                chunk = transformed[start:start + rows]
                if sparse:
                    chunk = chunk.toarray()
                    data[start:start + rows] = chunk
                if not self.identity_order_:
                    chunk = chunk[:, self.order_]
                evaluate(chunk, values[start:start + rows])
        base = self.base_value_
        overflow = np.flatnonzero(~np.isfinite(values).all(axis=(1, 2)))
        if overflow.size:
            raise _overflow(overflow)
        checked = min(n, _CHECK_ROWS)
        self._check_against_model(transformed[:checked], values[:checked], base)
        if not sparse:
            data, display_data = _display(raw, transformed, self.order_)
        else:
            display_data = None
        if D == 1:
            values, base, output_names = values[:, :, 0], base[0], None
        else:
            output_names = self.output_names_
        return self._finish(build_explanation(values, base, feature_names=self.feature_names_, data=data,
                                              display_data=display_data, output_names=output_names,
                                              row_names=row_names(X)))

    def _expected_value(self) -> float | np.ndarray:
        base = np.asarray(self.base_value_, dtype=np.float64)
        return float(base[0]) if base.size == 1 else base.copy()

    def player_vectors(self) -> tuple[Any, str]:
        """The features over the background rows as the model sees them (transformed), ``"features"``."""
        if self.data_ is None:
            return super().player_vectors()
        return np.asarray(dense(self.nb_model_.transform(self.data_, name="data")), dtype=np.float64).T, "features"

    def _check_against_model(self, transformed: Any, values: np.ndarray, base: np.ndarray) -> None:
        """Efficiency against the model's own joint log-likelihoods (unweighted models and WeightedNaiveBayes),
        on a sample of rows.

        A gap that only float64 rounding of values far larger than the log-odds explains (an outlying value
        in the data or the background) is refused as such, not reported as a bug."""
        with np.errstate(over="ignore", invalid="ignore"):
            jll = self.nb_model_.joint_log_proba(transformed)
        if jll is None:
            return
        overflow = np.flatnonzero(~np.isfinite(jll).all(axis=1))
        if overflow.size:  # a term the explanation cancels exactly (a null feature) can still overflow the model
            raise _overflow(overflow)
        # scikit-learn sums the p + 1 terms of each class: its own rounding grows with their size
        rounding = 8.0 * (self.n_features_ + 1) * np.finfo(np.float64).eps * np.abs(jll).max(axis=1, keepdims=True)
        check_efficiency(values, base, contract(jll, self.contraction_), atol=1e-9, reference_error=rounding,
                         what="the model's log-odds")


def _overflow(rows: Any) -> DataValidationError:
    return DataValidationError(
        f"X: rows {rows[:10].tolist()} have values so far from the training data that the model's "
        "log-likelihoods overflow (its own predict_joint_log_proba is infinite or NaN there), so their "
        "log-odds are undefined; check the units of those rows, or clip them to the training range.")


def _display(raw: Any, transformed: Any, order: np.ndarray) -> tuple[Any, Any]:
    """Explanation.data (the raw values, numeric; a string column shows the code the model sees) and
    display_data (the raw values, only when some column is not numeric)."""
    values = raw.to_numpy() if isinstance(raw, pd.DataFrame) else np.asarray(raw)
    if values.dtype.kind in "biuf":
        return np.asarray(values, dtype=np.float64), None
    data = np.empty(values.shape)
    for j in range(values.shape[1]):
        try:
            data[:, j] = values[:, j].astype(np.float64)
        except (TypeError, ValueError):
            data[:, j] = transformed[:, order[j]]
    return data, values


def _contraction(classes: np.ndarray, output: str) -> tuple[np.ndarray, list[str] | None]:
    """Matrix A (k, D) turning joint log-likelihoods into the explained outputs, and their names."""
    k = len(classes)
    names = [str(c) for c in classes]
    named = isinstance(output, str) and output in ("centered", "joint")
    matches = [] if named or np.ndim(output) else [i for i, c in enumerate(classes)
                                                   if c == output or str(c) == str(output)]
    if not (named or matches):  # two classes too: a misspelt output is not ignored
        raise InvalidParameterError(f"output must be 'centered', 'joint' or a class label {names}, got {output!r}.")
    if k == 2:
        return np.array([[-1.0], [1.0]]), None
    if output == "centered":
        return np.eye(k) - 1.0 / k, names
    if output == "joint":
        return np.eye(k), names
    A = np.eye(k)
    A[matches[0]] -= 1.0
    return A, names
