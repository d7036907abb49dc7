"""``NaiveBayesExplainer``: exact Shapley values of naive Bayes models in linear time (Lemaire et al.)."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import scipy.sparse as sp
import shap
from sklearn.compose import ColumnTransformer
from sklearn.impute import SimpleImputer
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import (
    Binarizer,
    KBinsDiscretizer,
    MaxAbsScaler,
    MinMaxScaler,
    OrdinalEncoder,
    PowerTransformer,
    QuantileTransformer,
    RobustScaler,
    StandardScaler,
)

from .._base import InstanceExplainer
from .._explanation import build_explanation
from .._validation import check_data, check_fitted, check_memory, column_names, in_column_order, model_input
from ..exceptions import DataValidationError, EfficiencyError, UnsupportedModelError
from ._nb_terms import NB_TYPES, SPARSE_NB_TYPES, terms_for

__all__ = ["NaiveBayesExplainer"]

#: Entries (rows x features x outputs) computed per chunk: about 2 MB, so the in-place passes stay in cache.
_CHUNK_ENTRIES = 2**18
#: Rows checked against the model's own predict_joint_log_proba on every call.
_CHECK_ROWS = 2_000
#: Fitted transformers that map input column i to output column i and nothing else (KBinsDiscretizer and
#: SimpleImputer only with some settings, see _columnwise_step).
_COLUMNWISE = (OrdinalEncoder, StandardScaler, MinMaxScaler, MaxAbsScaler, RobustScaler, QuantileTransformer,
               PowerTransformer, Binarizer)


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
    model : fitted GaussianNB, BernoulliNB, MultinomialNB, ComplementNB, CategoricalNB, or a Pipeline
        ending in one whose earlier steps map input columns one to one onto the model's columns
        (KBinsDiscretizer, OrdinalEncoder, scalers, a ColumnTransformer of those, even one that reorders
        the columns): the attributions are then to the pipeline's input columns, in input order, and the
        pipeline takes whatever input it accepts (strings for an OrdinalEncoder, DataFrames, ...).
    data : array-like, optional
        Background data (needed with ``expectation="background"``), in the model's input format. A
        DataFrame (here and in ``__call__``) is put in the model's fitted column order (``feature_names_in_``)
        and refused if its columns differ. BernoulliNB, MultinomialNB and ComplementNB also take scipy.sparse
        matrices, densified a chunk of rows at a time. For a pipeline whose column mapping cannot be read
        from its fitted state and probes (an unknown transformer that refuses numbers, or columns that
        stay constant in every probe), also needed with ``expectation="training"``; the error says so.
    weights : array-like of shape (p,), optional
        Per-feature weights ``w_m`` (weighted / selective naive Bayes); the explained quantity becomes
        ``log prior ratio + sum_m w_m f_m(x_m)``.
    expectation : {"background", "training"}, default="background"
    woe : bool, default=False
        The weight-of-evidence variant of the paper: ``phi_m = w_m f_m(x_m)`` (reference 0), with the prior
        log-odds as base value.
    output : {"centered", "joint"} or class label, default="centered"
        The explained quantity for more than two classes.

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
    explained_quantity = "log-odds (two classes), centred log-probabilities per class (more classes)"

    def __init__(self, model, data=None, y=None, *, weights=None, expectation="background", woe=False,
                 output="centered", feature_names=None, silent=False):
        check_fitted(model)
        self.preprocessing, self.nb_ = _split_pipeline(model)
        super().__init__(model, data, silent=silent, feature_names=feature_names)
        self.n_features_ = model.n_features_in_
        self.classes_ = self.nb_.classes_
        if len(self.classes_) < 2:
            raise DataValidationError(
                f"the naive Bayes model was fitted on a single class ({self.classes_.tolist()}): it predicts that "
                "class for every row, and there are no log-odds to explain; refit it on at least two classes."
            )
        # the columns X and data must come in (a DataFrame in another order is put in this order)
        names_in = getattr(model, "feature_names_in_", None)
        self.fitted_names_ = None if names_in is None else [str(f) for f in names_in]
        if expectation not in ("background", "training"):
            raise ValueError(f"expectation must be 'background' or 'training', got {expectation!r}.")
        if expectation == "background" and data is None:
            raise DataValidationError("expectation='background' needs background data; pass data=X_background "
                                      "or use expectation='training'.")
        raw = None if data is None else self._raw_input(data, name="data")
        if feature_names is None:
            feature_names = (self.fitted_names_ or (column_names(data) if isinstance(data, pd.DataFrame) else None) or
                             [f"x{i}" for i in range(self.n_features_)])
        self.feature_names = [str(f) for f in feature_names]
        if len(self.feature_names) != self.n_features_:
            raise DataValidationError(f"feature_names has {len(self.feature_names)} names, but the model has "
                                      f"{self.n_features_} input columns.")
        self.terms_ = terms_for(self.nb_)
        self.weights = np.ones(self.n_features_) if weights is None else np.asarray(weights, dtype=np.float64)
        if self.weights.shape != (self.n_features_,) or not np.all(np.isfinite(self.weights)):
            raise DataValidationError(f"weights must be {self.n_features_} finite numbers, got shape "
                                      f"{self.weights.shape}.")
        # order_[j]: the naive Bayes column fed by input column j (the identity without preprocessing)
        self.order_ = (np.arange(self.n_features_) if self.preprocessing is None else
                       _columnwise_order(self.preprocessing, self.n_features_, raw))
        self.identity_order_ = bool(np.array_equal(self.order_, np.arange(self.n_features_)))
        self.nb_weights_ = np.empty(self.n_features_)
        self.nb_weights_[self.order_] = self.weights
        if expectation == "background":
            background = self._transform(raw, name="data")
            k = len(self.classes_)
            evaluate = self.terms_.evaluator(np.eye(k))
            total = np.zeros((self.n_features_, k))
            for chunk in _dense_chunks(background, self.n_features_ * k):
                total += evaluate(chunk, np.empty(chunk.shape + (k,))).sum(axis=0)
            self.expected_terms_ = total / background.shape[0]
        else:
            self.expected_terms_ = self.terms_.training_expectation()
        self.expectation, self.woe = expectation, woe
        self.contraction_, self.output_names_ = _contraction(self.classes_, output)
        # everything __call__ needs, in input-column order, folded into the model's coefficients once
        A = self.contraction_
        expected = self.expected_terms_ @ A  # (p, D), naive Bayes column order
        self.base_value_ = self.terms_.class_terms @ A + (0.0 if woe else (expected * self.nb_weights_[:, None]).sum(0))
        self.input_terms_ = self.terms_ if self.identity_order_ else self.terms_.permuted(self.order_)
        self.input_shift_ = None if woe else expected[self.order_]

    @classmethod
    def supports_model(cls, model, data=None) -> bool:
        """True for scikit-learn naive Bayes models and pipelines ending in one."""
        last = model.steps[-1][1] if isinstance(model, Pipeline) else model
        return isinstance(last, NB_TYPES)

    def _raw_input(self, X, *, name):
        """``X`` validated at the boundary, its columns in the fitted order: a float array (or CSR matrix, for
        the models linear in x) for a bare model; for a pipeline, the user's values (any dtype the pipeline
        accepts) checked for shape only, as the preprocessing expects them."""
        if self.preprocessing is None or sp.issparse(X):
            sparse_ok = self.preprocessing is None and isinstance(self.nb_, SPARSE_NB_TYPES)
            return check_data(X, name=name, n_features=self.n_features_, allow_sparse=sparse_ok,
                              feature_names=self.fitted_names_)
        if isinstance(X, pd.DataFrame):
            X = X if self.fitted_names_ is None else in_column_order(X, self.fitted_names_, name)
        else:
            X = np.asarray(X)
        if X.ndim != 2 or X.shape[0] == 0:
            raise DataValidationError(f"{name} must be a non-empty 2-D table (rows x {self.n_features_} columns), "
                                      f"got shape {X.shape}.")
        if X.shape[1] != self.n_features_:
            raise DataValidationError(f"{name} has {X.shape[1]} columns, but the model was fitted on "
                                      f"{self.n_features_}; pass data with the same columns as the training data.")
        return model_input(self.preprocessing, X)

    def _transform(self, raw, *, name="X"):
        """The naive Bayes model's input: the pipeline's preprocessing of ``raw``, checked to be finite."""
        if self.preprocessing is None:
            return raw
        try:
            transformed = _dense(self.preprocessing.transform(raw))
        except (ValueError, TypeError, KeyError) as exc:
            raise DataValidationError(f"{name}: the pipeline's preprocessing refused it ({exc}); pass data in the "
                                      "format the pipeline was fitted on.") from exc
        bad = ~np.isfinite(transformed).all(axis=0)
        if bad.any():
            inputs = np.flatnonzero(bad[self.order_]).tolist()
            raise DataValidationError(f"{name}: the pipeline's preprocessing gives NaN or infinite values for input "
                                      f"columns {inputs[:10]} (missing values?); impute them, e.g. with a "
                                      "SimpleImputer step in the pipeline.")
        return transformed

    def __call__(self, X) -> shap.Explanation:
        """Shapley values of the rows of ``X``: (n, p) for two classes, (n, p, k) for more."""
        raw = self._raw_input(X, name="X")
        transformed = self._transform(raw, name="X")
        n, p, D = transformed.shape[0], self.n_features_, self.contraction_.shape[1]
        sparse = sp.issparse(transformed)
        check_memory(8.0 * n * p * (D + sparse), "the Shapley values of X", instead="explain X in batches of rows.")
        # computed chunk by chunk in place, already in input-column order: no temporary of the size of X
        values = np.empty((n, p, D))
        data = np.empty((n, p)) if sparse else None
        evaluate = self.input_terms_.evaluator(self.contraction_, self.input_shift_, self.weights)
        rows = _chunk_rows(p * D)
        for start in range(0, n, rows):
            chunk = transformed[start:start + rows]
            if sparse:
                chunk = chunk.toarray()
                data[start:start + rows] = chunk
            if not self.identity_order_:
                chunk = chunk[:, self.order_]
            evaluate(chunk, values[start:start + rows])
        base = self.base_value_
        checked = min(n, _CHECK_ROWS)
        self._check_against_model(transformed[:checked], base + values[:checked].sum(axis=1))
        if not sparse:
            data, display_data = _display(raw, transformed, self.order_)
        else:
            display_data = None
        if D == 1:
            values, base, output_names = values[:, :, 0], base[0], None
        else:
            output_names = self.output_names_
        return build_explanation(values, base, feature_names=self.feature_names, data=data,
                                 display_data=display_data, output_names=output_names)

    def _check_against_model(self, transformed, explained) -> None:
        """Efficiency against the model's own joint log-likelihoods (unweighted models), on a sample of rows."""
        if not np.all(self.weights == 1.0):
            return
        jll = self.nb_.predict_joint_log_proba(model_input(self.nb_, transformed)) @ self.contraction_
        gap = np.max(np.abs(jll - explained) / np.maximum(1.0, np.abs(jll)), initial=0.0)
        if gap > 1e-9:
            raise EfficiencyError(f"base + sum of Shapley values departs from the model's log-odds by {gap:.3g}; "
                                  "this is a bug in shap_instances, please report it.")


def _split_pipeline(model):
    if isinstance(model, Pipeline):
        last = model.steps[-1][1]
        if not isinstance(last, NB_TYPES):
            raise UnsupportedModelError(f"the pipeline ends in a {type(last).__name__}, not a naive Bayes model.")
        return (model[:-1] if len(model.steps) > 1 else None), last
    if not isinstance(model, NB_TYPES):
        raise UnsupportedModelError(
            f"NaiveBayesExplainer explains scikit-learn naive Bayes models (GaussianNB, BernoulliNB, MultinomialNB, "
            f"ComplementNB, CategoricalNB) and pipelines ending in one, not a {type(model).__name__}."
        )
    return None, model


def _columnwise_order(preprocessing, n_features, raw=None):
    """Which output column of ``preprocessing`` each input column feeds; refuse anything not one to one.

    Two sources, which must agree:

    * the fitted structure: a ColumnTransformer's column lists and ``output_indices_`` say which outputs each
      input column may reach, and the per-column transformers it knows (KBinsDiscretizer(encode="ordinal"),
      OrdinalEncoder, scalers, SimpleImputer, ...) map column i to column i; other steps may map anything;
    * probes: changing input column j may change at most one output column, and each output column may depend
      on at most one input column. The probe rows are synthetic numbers, values inside each column's fitted
      range (bin midpoints, categories, mean +- scale, ... read from the fitted transformers), and up to 64
      rows of ``raw`` (the user's data) when given.

    An input column that changed no output in any probe (a constant column) is paired through the structure;
    where the structure leaves more than one pairing possible, the mapping is refused.
    """
    rng = np.random.default_rng(0)
    probes = [rng.standard_normal((32, n_features)) * np.repeat([1e-2, 1.0, 1e2, 1e4], 8)[:, None],
              rng.integers(0, 11, size=(16, n_features)).astype(np.float64), rng.random((16, n_features))]
    probes = [model_input(preprocessing, probe) for probe in probes]
    fitted = _fitted_range_probe(preprocessing, n_features, rng)
    if fitted is not None:
        probes.append(fitted)
    if raw is not None:
        rows = rng.choice(raw.shape[0], min(raw.shape[0], 64), replace=False)
        probes.append(raw.iloc[rows] if isinstance(raw, pd.DataFrame) else raw[rows])
    depends, n_out = None, None
    for number, probe in enumerate(probes):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                out = _dense(preprocessing.transform(_perturbed(probe)), dtype=None)
        except Exception as exc:  # noqa: BLE001 - a probe the preprocessing refuses (numbers for string columns)
            if raw is not None and number == len(probes) - 1:
                raise DataValidationError(f"data: the pipeline's preprocessing refused it ({exc}); pass data in the "
                                          "format the pipeline was fitted on.") from exc
            continue
        n, n_out = probe.shape[0], out.shape[1]
        if n_out != n_features:
            raise UnsupportedModelError(
                f"the pipeline's preprocessing maps {n_features} columns to {n_out}; attributions to input columns "
                "need a column-by-column transform (e.g. KBinsDiscretizer(encode='ordinal'), OrdinalEncoder)."
            )
        blocks = out.reshape(n_features + 1, n, n_out)
        changed = np.array([_differs(block, blocks[0]).any(axis=0) for block in blocks[1:]])  # (inputs, outputs)
        depends = changed if depends is None else depends | changed
    if depends is None:
        raise DataValidationError(
            "the pipeline's preprocessing refuses numeric probe rows and values from its fitted state, so "
            "NaiveBayesExplainer cannot check that it works column by column without example input; pass "
            "data=<a few rows of the pipeline's input>."
        )
    mixed = np.flatnonzero(depends.sum(axis=0) > 1)
    if mixed.size:
        raise UnsupportedModelError(
            f"the pipeline's preprocessing mixes columns (its output column {mixed[0]} depends on input columns "
            f"{np.flatnonzero(depends[:, mixed[0]]).tolist()}); NaiveBayesExplainer needs column-by-column "
            "preprocessing (KBinsDiscretizer, OrdinalEncoder, scalers, a ColumnTransformer of those)."
        )
    split = np.flatnonzero(depends.sum(axis=1) > 1)
    if split.size:
        raise UnsupportedModelError(
            f"the pipeline's preprocessing spreads input column {split[0]} over output columns "
            f"{np.flatnonzero(depends[split[0]]).tolist()}; NaiveBayesExplainer needs a one-to-one mapping of "
            "input to output columns."
        )
    routes = _routes(preprocessing, n_features)
    if routes is None or routes.shape != depends.shape:
        routes = np.ones_like(depends)
    stray = np.argwhere(depends & ~routes)
    if stray.size:
        raise UnsupportedModelError(
            f"the pipeline's preprocessing sends input column {stray[0, 0]} to output column {stray[0, 1]}, which "
            "its fitted ColumnTransformer does not route there; NaiveBayesExplainer cannot tell which column feeds "
            "which and refuses to guess."
        )
    order = np.full(n_features, -1)
    inputs, outputs = np.nonzero(depends)
    order[inputs] = outputs
    return _pair_constant_columns(order, routes)


def _pair_constant_columns(order, routes):
    """Complete ``order`` (-1: an input column that changed nothing in any probe) where the structure
    ``routes`` leaves one choice; refuse where it leaves several."""
    order = order.copy()
    free = np.ones(len(order), dtype=bool)
    free[order[order >= 0]] = False
    while (order < 0).any():
        pending = np.flatnonzero(order < 0)
        options = routes[pending][:, free]  # (pending inputs, free outputs)
        unique_input = options.sum(axis=1) == 1
        if not unique_input.any():
            raise UnsupportedModelError(
                f"cannot tell which of the naive Bayes model's columns input columns {pending[:10].tolist()} feed: "
                "they changed no output of the pipeline's preprocessing in any probe (values inside the fitted "
                "ranges, and the rows of data when given) and its fitted structure allows more than one pairing. "
                "Pass data=<rows of the pipeline's input in which these columns vary>, or put the preprocessing in "
                "a ColumnTransformer of column-wise transformers (KBinsDiscretizer, OrdinalEncoder, scalers)."
            )
        j = pending[np.flatnonzero(unique_input)[0]]
        order[j] = np.flatnonzero(free)[np.flatnonzero(routes[j][free])[0]]
        free[order[j]] = False
    return order


def _columnwise_step(step):
    """Whether ``step`` is a fitted transformer known to map input column i to output column i only."""
    if step is None or (isinstance(step, str) and step == "passthrough"):
        return True
    if isinstance(step, KBinsDiscretizer):
        return step.encode == "ordinal"
    if isinstance(step, SimpleImputer):  # it drops all-missing columns unless keep_empty_features
        return not step.add_indicator and (step.keep_empty_features or not np.any(pd.isna(step.statistics_)))
    return isinstance(step, _COLUMNWISE)


def _routes(step, n_in):
    """(n_in, n_out) booleans: which output columns each input column of the fitted ``step`` may reach, from
    its structure alone; None where the structure says nothing (an unknown transformer)."""
    if _columnwise_step(step):
        return np.eye(n_in, dtype=bool)
    if isinstance(step, Pipeline):
        routes = np.eye(n_in, dtype=bool)
        for _, sub in step.steps:
            inner = _routes(sub, routes.shape[1])
            if inner is None:
                return None
            routes = (routes.astype(np.int64) @ inner.astype(np.int64)) > 0
        return routes
    if isinstance(step, ColumnTransformer):
        slices = getattr(step, "output_indices_", None)
        if not slices:
            return None
        routes = np.zeros((n_in, max(s.stop for s in slices.values())), dtype=bool)
        for name, transformer, columns in step.transformers_:
            if isinstance(transformer, str) and transformer == "drop":
                continue
            out = slices.get(name, slice(0, 0))
            inputs = _column_indices(step, columns, n_in)
            if out.stop == out.start:
                continue
            if inputs is None:
                return None
            inner = _routes(transformer, len(inputs))
            if inner is None or inner.shape != (len(inputs), out.stop - out.start):
                inner = np.ones((len(inputs), out.stop - out.start), dtype=bool)
            routes[np.ix_(inputs, np.arange(out.start, out.stop))] |= inner
        return routes
    return None


def _column_indices(transformer, columns, n_in):
    """The input indices a fitted ColumnTransformer selects with ``columns`` (None if it cannot tell)."""
    names = [str(f) for f in getattr(transformer, "feature_names_in_", [])]
    try:
        if isinstance(columns, slice):
            if isinstance(columns.start, str) or isinstance(columns.stop, str):  # labels: both ends included
                start = 0 if columns.start is None else names.index(columns.start)
                stop = n_in if columns.stop is None else names.index(columns.stop) + 1
                return list(range(start, stop))
            return list(range(n_in))[columns]
        selected = np.atleast_1d(np.asarray(columns))
        if selected.dtype.kind == "b":
            return np.flatnonzero(selected).tolist() if len(selected) == n_in else None
        if selected.size == 0:
            return []
        if selected.dtype.kind in "iu":
            return [int(i) % n_in for i in selected]
        return [names.index(str(c)) for c in selected]
    except (ValueError, TypeError, IndexError):
        return None


def _fitted_values(step, n_in):
    """Per input column of the fitted ``step``: a few distinct values inside its fitted range (bin midpoints
    and one value beyond each end, categories, mean +- 2 scales, ...), or None where its state says nothing."""
    if isinstance(step, Pipeline):
        found, earlier = [None] * n_in, []
        for _, sub in step.steps:
            if sub is None or (isinstance(sub, str) and sub == "passthrough"):
                continue
            if getattr(sub, "n_features_in_", n_in) != n_in:
                break
            found = _merged(found, _back_to_input(_fitted_values(sub, n_in), earlier))
            if not _columnwise_step(sub):
                break
            earlier.append(sub)
        return found
    if isinstance(step, ColumnTransformer):
        found = [None] * n_in
        for _, transformer, columns in getattr(step, "transformers_", []):
            inputs = _column_indices(step, columns, n_in)
            if isinstance(transformer, str) or not inputs:
                continue
            for i, values in zip(inputs, _fitted_values(transformer, len(inputs))):
                found[i] = _merged([found[i]], [values])[0]
        return found
    return _own_values(step, n_in)


def _own_values(step, n_in):
    def per_column(*arrays):
        arrays = [np.broadcast_to(np.asarray(a, dtype=np.float64), (n_in,)) for a in arrays]
        return arrays

    spread = np.array([-2.0, -1.0, -0.5, 0.0, 0.5, 1.0, 2.0])
    try:
        if hasattr(step, "bin_edges_") and len(step.bin_edges_) == n_in:
            found = []
            for edges in step.bin_edges_:
                edges = np.asarray(edges, dtype=np.float64)
                edges = edges[np.isfinite(edges)]
                if len(edges) < 2:
                    found.append(None)
                    continue
                width = max(edges[-1] - edges[0], 1e-12 * max(1.0, abs(edges[0])))
                found.append(np.concatenate([[edges[0] - width], (edges[1:] + edges[:-1]) / 2, [edges[-1] + width]]))
            return found
        if hasattr(step, "categories_") and len(step.categories_) == n_in:
            return [np.asarray(c) for c in step.categories_]
        if hasattr(step, "quantiles_") and np.shape(step.quantiles_)[1:] == (n_in,):
            q = np.asarray(step.quantiles_)
            return [q[np.linspace(0, len(q) - 1, 9).astype(int), j] for j in range(n_in)]
        if getattr(step, "data_min_", None) is not None and getattr(step, "data_max_", None) is not None:
            low, high = per_column(step.data_min_, step.data_max_)
            return [np.linspace(a, b, 7) for a, b in zip(low, high)]
        if getattr(step, "max_abs_", None) is not None:
            (top,) = per_column(step.max_abs_)
            return [t * spread / 2 for t in top]
        centre = next((getattr(step, a) for a in ("mean_", "center_") if getattr(step, a, None) is not None), None)
        scale = getattr(step, "scale_", None)
        if centre is not None or scale is not None:
            centre, scale = per_column(0.0 if centre is None else centre, 1.0 if scale is None else scale)
            return [c + s * spread for c, s in zip(centre, scale)]
        if getattr(step, "statistics_", None) is not None and len(step.statistics_) == n_in:
            return [np.asarray([v]) for v in step.statistics_]
    except (TypeError, ValueError, IndexError):
        pass
    return [None] * n_in


def _merged(found, more):
    """Per column, the values of ``found`` and ``more`` together (None: none known)."""
    merged = []
    for a, b in zip(found, more):
        if a is None or b is None:
            merged.append(b if a is None else a)
            continue
        a, b = np.asarray(a), np.asarray(b)
        numeric = a.dtype.kind in "biuf" and b.dtype.kind in "biuf"
        merged.append(np.concatenate([a, b]) if numeric else np.concatenate([a.astype(object), b.astype(object)]))
    return merged


def _back_to_input(values, earlier):
    """Values in the input space of a step after the column-wise steps ``earlier``, mapped back to the input
    space of the first (inverse_transform; SimpleImputer leaves values as they are); None where that fails."""
    if not earlier or all(v is None for v in values):
        return values
    length = max(len(v) for v in values if v is not None)
    table = np.column_stack([np.zeros(length) if v is None else np.resize(np.asarray(v, dtype=np.float64), length)
                             for v in values])
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for step in reversed(earlier):
                if isinstance(step, SimpleImputer) or step is None or isinstance(step, str):
                    continue
                table = np.asarray(step.inverse_transform(table))
    except Exception:  # noqa: BLE001 - no inverse: those values are not used
        return [None] * len(values)
    return [None if v is None else table[:len(v), j] for j, v in enumerate(values)]


def _fitted_range_probe(preprocessing, n_features, rng):
    """Probe rows whose column j runs through the fitted values of input column j (None: no fitted state)."""
    values = _fitted_values(preprocessing, n_features)
    if all(v is None for v in values):
        return None
    distinct = []
    for v in values:
        if v is not None:
            v = np.asarray(pd.unique(pd.Series(np.asarray(v)).dropna()))
        distinct.append(v if v is not None and len(v) else None)
    length = int(np.clip(max(len(v) for v in distinct if v is not None), 8, 256))
    columns = [rng.standard_normal(length) if v is None else np.resize(v, length) for v in distinct]
    columns = [c if c.dtype.kind in "biuf" or any(isinstance(x, str) for x in c) else c.astype(np.float64)
               for c in columns]
    names = getattr(preprocessing, "feature_names_in_", None)
    if names is not None and len(names) == n_features:
        return pd.DataFrame({name: column for name, column in zip(names, columns)})
    if all(c.dtype.kind in "biuf" for c in columns):
        return np.column_stack(columns).astype(np.float64)
    table = np.empty((length, n_features), dtype=object)
    for j, column in enumerate(columns):
        table[:, j] = column
    return table


def _perturbed(probe):
    """``probe`` stacked p + 1 times: as is, then with column j cyclically shifted by one row in copy j + 1."""
    n, p = probe.shape
    if isinstance(probe, pd.DataFrame):
        blocks = [probe]
        for j in range(p):
            block = probe.copy()
            block.iloc[:, j] = np.roll(probe.iloc[:, j].to_numpy(), 1)
            blocks.append(block)
        return pd.concat(blocks, ignore_index=True)
    stacked = np.tile(probe, (p + 1, 1))
    for j in range(p):
        stacked[(j + 1) * n:(j + 2) * n, j] = np.roll(probe[:, j], 1)
    return stacked


def _differs(a, b):
    """Elementwise a != b, with NaN equal to NaN."""
    try:
        return ~((a == b) | (np.isnan(a.astype(np.float64)) & np.isnan(b.astype(np.float64))))
    except (TypeError, ValueError):
        return a != b


def _dense(out, dtype=np.float64):
    out = out.toarray() if sp.issparse(out) else out
    return np.asarray(out, dtype=dtype)


def _display(raw, transformed, order):
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


def _contraction(classes, output):
    """Matrix A (k, D) turning joint log-likelihoods into the explained outputs, and their names."""
    k = len(classes)
    names = [str(c) for c in classes]
    if k == 2:
        return np.array([[-1.0], [1.0]]), None
    if output == "centered":
        return np.eye(k) - 1.0 / k, names
    if output == "joint":
        return np.eye(k), names
    matches = [i for i, c in enumerate(classes) if c == output or str(c) == str(output)]
    if not matches:
        raise ValueError(f"output must be 'centered', 'joint' or a class label {names}, got {output!r}.")
    A = np.eye(k)
    A[matches[0]] -= 1.0
    return A, names


def _chunk_rows(width):
    return max(1, _CHUNK_ENTRIES // max(1, width))


def _dense_chunks(X, width):
    """Row chunks of ``X`` as dense arrays (a sparse matrix is densified one chunk at a time)."""
    rows = _chunk_rows(width)
    for start in range(0, X.shape[0], rows):
        chunk = X[start:start + rows]
        yield chunk.toarray() if sp.issparse(chunk) else chunk
