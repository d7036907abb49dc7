"""How a naive Bayes pipeline's preprocessing maps input columns to model columns.

Attributions go to the pipeline's input columns when the preprocessing works column by column. The mapping is
read from the fitted transformers (a ColumnTransformer's column lists, transformers known to map column i to
column i) and confirmed by probing each input column inside its fitted range; ambiguous mappings are refused.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp
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

from ..exceptions import DataValidationError, UnsupportedModelError
from ..utils import model_input

__all__ = ["columnwise_order", "dense"]

#: Fitted transformers that map input column i to output column i and nothing else (KBinsDiscretizer and
#: SimpleImputer only with some settings, see _columnwise_step).
_COLUMNWISE = (OrdinalEncoder, StandardScaler, MinMaxScaler, MaxAbsScaler, RobustScaler, QuantileTransformer,
               PowerTransformer, Binarizer)


def columnwise_order(preprocessing: Any, n_features: int, raw: Any = None) -> np.ndarray:
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
    depends = _dependence(preprocessing, _probes(preprocessing, n_features, raw), n_features, raw)
    _check_one_to_one(depends)
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


def _probes(preprocessing, n_features, raw):
    """Probe tables: synthetic numbers, values from the fitted state, rows of ``raw`` (last, when given)."""
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
    return probes


def _dependence(preprocessing, probes, n_features, raw):
    """(inputs, outputs) bool: which output columns changed when an input column changed, in any probe."""
    depends, n_out = None, None
    for number, probe in enumerate(probes):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                out = dense(preprocessing.transform(_perturbed(probe)), dtype=None)
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
    return depends


def _check_one_to_one(depends):
    """Refuse an output column fed by several input columns, or an input column spread over several outputs."""
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


def _per_column(values, n_in):
    """``values`` (one number, or one per column) as ``n_in`` float64 numbers, or None when it is neither (a
    state fitted on other columns, or not numeric): then the step's state says nothing usable."""
    array = np.asarray(values)
    if array.dtype.kind not in "biuf" or array.shape not in ((), (1,), (n_in,)):
        return None
    return np.broadcast_to(array.astype(np.float64), (n_in,))


def _bin_values(bin_edges):
    """Per column of a fitted discretiser: a value beyond each end and every bin's midpoint (None: no bins);
    None overall when some column's edges are not numbers."""
    found = []
    for edges in bin_edges:
        edges = np.asarray(edges)
        if edges.dtype.kind not in "biuf":
            return None
        edges = edges.astype(np.float64)
        edges = edges[np.isfinite(edges)]
        if len(edges) < 2:
            found.append(None)
            continue
        width = max(edges[-1] - edges[0], 1e-12 * max(1.0, abs(edges[0])))
        found.append(np.concatenate([[edges[0] - width], (edges[1:] + edges[:-1]) / 2, [edges[-1] + width]]))
    return found


def _sized(values, n_in):
    """Whether ``values`` holds one entry per input column."""
    return hasattr(values, "__len__") and len(values) == n_in


def _own_values(step, n_in):
    """Per input column of a fitted step that is not a container: values its fitted state marks as typical
    (bins, categories, quantiles, ranges, centre and scale, imputed values), or None where it says nothing."""
    unknown = [None] * n_in
    for read in (_discrete_values, _range_values, _centred_values):
        found = read(step, n_in, unknown)
        if found is not None:
            return found
    return unknown


#: Multiples of a column's scale around its centre (or of half its largest magnitude) that probe a fitted scaler.
_SPREAD = np.array([-2.0, -1.0, -0.5, 0.0, 0.5, 1.0, 2.0])


def _discrete_values(step, n_in, unknown):
    """Bin midpoints, categories or quantiles of a fitted step; None when it has none of them."""
    if _sized(getattr(step, "bin_edges_", None), n_in):
        return _bin_values(step.bin_edges_) or unknown
    if _sized(getattr(step, "categories_", None), n_in):
        return [np.asarray(c) for c in step.categories_]
    quantiles = getattr(step, "quantiles_", None)
    if quantiles is not None and np.ndim(quantiles) == 2 and np.shape(quantiles)[1] == n_in:
        q = np.asarray(quantiles)
        if len(q) == 0:
            return unknown
        return [q[np.linspace(0, len(q) - 1, 9).astype(int), j] for j in range(n_in)]
    return None


def _range_values(step, n_in, unknown):
    """Values across a fitted step's range (min to max, or +- its largest magnitude); None when it has none."""
    if getattr(step, "data_min_", None) is not None and getattr(step, "data_max_", None) is not None:
        low, high = _per_column(step.data_min_, n_in), _per_column(step.data_max_, n_in)
        return unknown if low is None or high is None else [np.linspace(a, b, 7) for a, b in zip(low, high)]
    if getattr(step, "max_abs_", None) is not None:
        top = _per_column(step.max_abs_, n_in)
        return unknown if top is None else [t * _SPREAD / 2 for t in top]
    return None


def _centred_values(step, n_in, unknown):
    """Centre +- scale of a fitted scaler, or an imputer's statistics; None when it has neither."""
    centre = next((getattr(step, a) for a in ("mean_", "center_") if getattr(step, a, None) is not None), None)
    scale = getattr(step, "scale_", None)
    if centre is not None or scale is not None:
        centre = _per_column(0.0 if centre is None else centre, n_in)
        scale = _per_column(1.0 if scale is None else scale, n_in)
        return unknown if centre is None or scale is None else [c + s * _SPREAD for c, s in zip(centre, scale)]
    if _sized(getattr(step, "statistics_", None), n_in):
        return [np.asarray([v]) for v in step.statistics_]
    return None


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
    try:  # fitted values that are not numbers (an imputer's string categories) have no numeric inverse either
        table = np.column_stack([np.zeros(length) if v is None else
                                 np.resize(np.asarray(v, dtype=np.float64), length) for v in values])
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
    distinct = [_distinct(v) for v in values]
    length = int(np.clip(max(len(v) for v in distinct if v is not None), 8, 256))
    columns = [rng.standard_normal(length) if v is None else np.resize(v, length) for v in distinct]
    columns = [c if c.dtype.kind in "biuf" or any(isinstance(x, str) for x in c) else c.astype(np.float64)
               for c in columns]
    return _probe_table(columns, getattr(preprocessing, "feature_names_in_", None), n_features, length)


def _distinct(values):
    """The distinct values that are not missing, in order of appearance; None for none."""
    if values is None:
        return None
    values = np.asarray(pd.unique(pd.Series(np.asarray(values)).dropna()))
    return values if len(values) else None


def _probe_table(columns, names, n_features, length):
    """The probe columns as the preprocessing takes them: a DataFrame where it was fitted on names, else an array
    (float, or object for strings)."""
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


def dense(out: Any, dtype: Any = np.float64) -> np.ndarray:
    out = out.toarray() if sp.issparse(out) else out
    return np.asarray(out, dtype=dtype)
