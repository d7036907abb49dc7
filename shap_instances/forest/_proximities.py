"""Sparse RF-GAP proximities of scikit-learn random forests (Rhodes, Cutler & Moon, 2023).

A fitted forest predicts a new point as an exact weighted sum of training targets. With ``c_i(t)`` the
weight tree ``t`` gave training point ``i`` when it computed its leaf values (the in-bag multiplicity,
times sample and class weights where they enter the tree), and ``leaf_t(x)`` the leaf of ``x`` in tree
``t``,

    k(x, i) = (1/T) sum_t c_i(t) [leaf_t(i) = leaf_t(x)] / sum_l c_l(t) [leaf_t(l) = leaf_t(x)]

and ``predict(x) = sum_i k(x, i) y_i``. For a training point the average runs over the trees where it is
out-of-bag only, which reproduces ``oob_prediction_`` / ``oob_decision_function_``.

This module builds the leaf index once (:class:`GapIndex`, verified against every leaf of every tree; about
``4 n T`` bytes for a bootstrap forest without weights, plus the out-of-bag points' leaves, about ``0.74 n T``
bytes, kept so that out-of-bag rows never apply the trees to the training data again)
and computes rows of proximities as a CSR matrix with a numba kernel
(:func:`shap_instances._kernels.proximity.gap_rows`). Only public scikit-learn attributes are used:
``apply``, ``estimators_samples_``, ``estimators_[t].tree_``; how ``fit`` weighted each bootstrap draw (which
changed in scikit-learn 1.9) comes from the scikit-learn adapter in :mod:`shap_instances.utils`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp
import sklearn
from joblib import Parallel, delayed
from numpy.typing import ArrayLike
from sklearn.ensemble import ExtraTreesClassifier, ExtraTreesRegressor, RandomForestClassifier, RandomForestRegressor

from ..exceptions import DataValidationError, UnsupportedModelError
from ..utils import (
    check_data,
    check_fitted,
    check_target,
    class_codes,
    forest_draw_semantics,
    forest_inbag_draws,
    forest_tree_weights,
    sklearn_version,
)
from ._bagging import BaggedTrees, as_forest
from ._kernels import gap_fill_rows, gap_row_counts

__all__ = ["GapIndex", "SUPPORTED_FORESTS", "build_gap_index", "check_forest", "encode_target", "forest_apply",
           "gap_proximities", "is_classifier_forest"]

#: The forests whose predictions are exact proximity-weighted sums of training targets.
SUPPORTED_FORESTS = (RandomForestRegressor, RandomForestClassifier, ExtraTreesRegressor, ExtraTreesClassifier)

#: The installed scikit-learn's ``(major, minor)`` (the adapter's reading; tests pretend to be another release).
_sklearn_version = sklearn_version


def is_classifier_forest(model: Any) -> bool:
    """Whether ``model`` is one of the supported forest classifiers (its proximities weight class targets).

    Examples
    --------
    >>> from sklearn.ensemble import ExtraTreesClassifier, RandomForestRegressor
    >>> from shap_instances.forest import is_classifier_forest
    >>> is_classifier_forest(ExtraTreesClassifier()), is_classifier_forest(RandomForestRegressor())
    (True, False)
    """
    if isinstance(model, BaggedTrees):
        return model.classifier
    return isinstance(model, RandomForestClassifier | ExtraTreesClassifier)


def check_forest(model: Any) -> None:
    """Refuse models whose leaves are not weighted means of in-bag targets (before any work).

    The model must be one of :data:`SUPPORTED_FORESTS`, fitted, and not use ``criterion="absolute_error"``
    (whose leaves hold weighted medians).

    Raises
    ------
    UnsupportedModelError
        For another model or the absolute-error criterion, saying what to use instead.
    NotFittedError
        For a forest that is not fitted.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.ensemble import RandomForestRegressor
    >>> from sklearn.linear_model import Ridge
    >>> from shap_instances.forest import check_forest
    >>> X, y = np.arange(20.0).reshape(10, 2), np.arange(10.0)
    >>> check_forest(RandomForestRegressor(n_estimators=3, random_state=0).fit(X, y))
    >>> try:
    ...     check_forest(Ridge())
    ... except TypeError as exc:
    ...     print(str(exc).split(",")[0])
    model must be one of ['RandomForestRegressor'
    """
    model = as_forest(model)  # bagged decision trees: a forest without per-split feature sampling
    if not isinstance(model, SUPPORTED_FORESTS + (BaggedTrees,)):
        raise UnsupportedModelError(
            f"model must be one of {[c.__name__ for c in SUPPORTED_FORESTS]} or a Bagging ensemble of decision "
            f"trees, got {type(model).__name__}. "
            "GapExplainer reconstructs random-forest predictions from leaf co-membership; for other models "
            "use another explainer (shap_instances.list_explainers())."
        )
    if not isinstance(model, BaggedTrees):  # a view is of a fitted ensemble
        check_fitted(model)
    if getattr(model, "criterion", None) == "absolute_error":
        raise UnsupportedModelError(
            "model.criterion='absolute_error': its leaves predict weighted medians, not weighted means, so the "
            "prediction is not a weighted sum of training targets. Refit with criterion='squared_error', "
            "'friedman_mse' or 'poisson'."
        )


def forest_apply(model: Any, X: Any) -> np.ndarray:
    """Leaf (node id) of every row of ``X`` in every tree, int32 (n, T), filled one tree at a time.

    ``X`` must already be validated as float32 (dense C-contiguous or CSR), as ``check_data`` returns it;
    the per-tree public ``apply`` then skips its own checks exactly as the forest's ``apply`` does, and no
    (n, T) int64 array is built.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.ensemble import RandomForestClassifier
    >>> from shap_instances.forest import forest_apply
    >>> X, y = load_iris(return_X_y=True)
    >>> forest = RandomForestClassifier(4, random_state=0).fit(X, y)
    >>> bool(np.array_equal(forest_apply(forest, X.astype(np.float32)), forest.apply(X)))
    True
    """
    trees = model.estimators_
    out = np.empty((X.shape[0], len(trees)), dtype=np.int32)
    fast = sp.issparse(X) or (isinstance(X, np.ndarray) and X.dtype == np.float32 and X.flags.c_contiguous)
    for t, tree in enumerate(trees):
        out[:, t] = tree.apply(X, check_input=not fast)
    return out


def encode_target(model: Any, y: Any, n_samples: int) -> tuple[np.ndarray, np.ndarray]:
    """Targets as the forest sees them: float (n, n_outputs) for regression, class codes for classifiers.

    Returns ``(y_raw, y_codes)`` where ``y_raw`` keeps the user's labels (2-D) and ``y_codes`` is float64
    (regression) or int64 class indices (classification), shape (n, n_outputs).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.ensemble import RandomForestClassifier
    >>> from shap_instances.forest import encode_target
    >>> forest = RandomForestClassifier(2, random_state=0).fit([[0], [1], [2]], ["b", "a", "b"])
    >>> encode_target(forest, ["b", "a", "b"], 3)[1].ravel().tolist()
    [1, 0, 1]
    """
    n_outputs = model.n_outputs_
    if is_classifier_forest(model):
        y_raw = np.asarray(check_target(y, n_samples, name="y", numeric=False))
        y_raw = y_raw.reshape(n_samples, -1)
        if y_raw.shape[1] != n_outputs:
            raise DataValidationError(f"y has {y_raw.shape[1]} columns but the forest has {n_outputs} outputs.")
        classes = [model.classes_] if n_outputs == 1 else list(model.classes_)
        codes = np.empty(y_raw.shape, dtype=np.int64)
        for k, cls in enumerate(classes):
            name = "y" if n_outputs == 1 else f"column {k} of y"
            codes[:, k] = class_codes(y_raw[:, k], n_samples, cls, name=name,
                                      classes_of="the classes the forest was fitted on")
        return y_raw, codes
    y_float = check_target(y, n_samples, name="y", numeric=True).reshape(n_samples, -1)
    if y_float.shape[1] != n_outputs:
        raise DataValidationError(f"y has {y_float.shape[1]} columns but the forest has {n_outputs} outputs.")
    return y_float, y_float


def _candidate_semantics() -> list[str]:
    """The bootstrap weighting rules to try, the installed scikit-learn's first (the adapter knows them)."""
    return forest_draw_semantics(_sklearn_version())


def _tree_weight_function(model: Any, y_raw: np.ndarray, y_codes: np.ndarray, sample_weight: np.ndarray | None,
                          semantics: str) -> tuple[Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]], bool]:
    """``(weights, integral)``: ``weights(indices_t) -> (counts, c)`` gives tree ``t``'s in-bag counts and leaf
    weights; ``integral`` is True when ``c`` is the multiplicity alone (stored as a small integer)."""
    return forest_tree_weights(model, y_raw, y_codes, sample_weight, semantics,
                               classifier=is_classifier_forest(model))


def _leaf_ranks(tree: Any) -> np.ndarray:
    """Rank of every node of ``tree`` among its leaves (node order), int32; internal nodes get garbage."""
    return np.cumsum(tree.tree_.children_left == -1, dtype=np.int32) - 1


def _inbag_column(bits: np.ndarray, t: int) -> np.ndarray:
    """Column ``t`` of the bit-packed (n, ceil(T / 8)) in-bag matrix, as bool."""
    return ((bits[:, t >> 3] >> (7 - (t & 7))) & 1).astype(bool)


def _estimators_samples(model: Any, chunk: int = 8) -> Iterator[np.ndarray]:
    """The public ``estimators_samples_``, a few trees at a time (the adapter's :func:`forest_inbag_draws`)."""
    return forest_inbag_draws(model, chunk)


def csr_of(indptr: np.ndarray, indices: np.ndarray, data: np.ndarray, n_train: int) -> sp.csr_matrix:
    """The proximity matrix of ``indptr`` (int64), ``indices`` (int32) and ``data``: int32 ``indptr`` while the
    non-zeros fit, int64 ``indices`` past them (scipy's own index rule); the rows' indices are sorted."""
    if int(indptr[-1]) < np.iinfo(np.int32).max:
        indptr = indptr.astype(np.int32)
    else:
        indices = indices.astype(np.int64)
    matrix = sp.csr_matrix((data, indices, indptr), shape=(len(indptr) - 1, n_train), copy=False)
    matrix.has_sorted_indices = True
    return matrix


@dataclass
class GapIndex:
    """Leaf index of a fitted forest: the in-bag members of every leaf and their in-bag weights.

    Built by :func:`build_gap_index`; see :mod:`shap_instances._kernels.proximity` for the layout. Only leaves
    are stored (no per-node array), members in the smallest integer type that holds a row number, in-bag
    weights as small integers when they are multiplicities, and the in-bag matrix bit-packed: for 20,000
    training points and 100 fully grown trees the index holds about 8 MB. The leaf ranks of the out-of-bag
    points (``oob_leaves``, tree by tree, rows ascending, delimited by ``oob_ptr``; uint16 when every tree has at
    most 65,536 leaves) are recorded while the index is built, so out-of-bag rows reuse them.

    Examples
    --------
    >>> from sklearn.datasets import load_diabetes
    >>> from sklearn.ensemble import RandomForestRegressor
    >>> from shap_instances.forest import build_gap_index
    >>> X, y = load_diabetes(return_X_y=True)
    >>> forest = RandomForestRegressor(10, random_state=0).fit(X, y)
    >>> index = build_gap_index(forest, X, y)
    >>> index.n_train, index.n_trees, index.semantics in ("draw_probability", "multiplicative")
    (442, 10, True)
    """

    leaf_offsets: np.ndarray
    leaf_ptr: np.ndarray
    members: np.ndarray
    mass: np.ndarray
    inbag_bits: np.ndarray
    n_train: int
    n_trees: int
    semantics: str
    bootstrap: bool
    model: Any = field(repr=False)
    train_X: Any = field(repr=False)
    oob_leaves: np.ndarray | None = field(default=None, repr=False)
    oob_ptr: np.ndarray | None = field(default=None, repr=False)

    @property
    def nbytes(self) -> int:
        """Bytes held by the index arrays (the training data it refers to excluded)."""
        arrays = (self.leaf_offsets, self.leaf_ptr, self.members, self.mass, self.inbag_bits, self.oob_leaves,
                  self.oob_ptr)
        return int(sum(a.nbytes for a in arrays if a is not None))

    @property
    def inbag(self) -> np.ndarray:
        """Bool (n_train, n_trees): training point ``i`` is in-bag in tree ``t`` (unpacked on each access)."""
        return np.unpackbits(self.inbag_bits, axis=1, count=self.n_trees).view(bool)

    @property
    def weights(self) -> np.ndarray:
        """Normalised leaf weights ``c_i(t) / sum_l c_l(t)``, aligned with ``members`` (float64, computed)."""
        mass = self.mass.astype(np.float64)
        sizes = np.diff(self.leaf_ptr)
        totals = np.add.reduceat(mass, self.leaf_ptr[:-1][sizes > 0]) if mass.size else mass
        return mass / np.repeat(totals, sizes[sizes > 0])

    def leaf_query(self, node_leaves: np.ndarray) -> np.ndarray:
        """Translate (m, T) node ids (as ``apply`` returns them; -1 skips) to the leaf ranks the kernels use."""
        node_leaves = np.asarray(node_leaves)
        out = np.empty(node_leaves.shape, dtype=np.int32)
        for t, tree in enumerate(self.model.estimators_):
            column = node_leaves[:, t]
            out[:, t] = np.where(column >= 0, _leaf_ranks(tree)[np.maximum(column, 0)], -1)
        return out

    def query(self, X: Any, *, oob: bool = False) -> np.ndarray:
        """Leaf ranks (m, T) int32 of validated float32 ``X`` in every tree, one tree at a time.

        ``oob=True`` (``X`` the training data): -1 where the point is in-bag, so its row averages the trees
        where it is out-of-bag.
        """
        trees = self.model.estimators_
        out = np.empty((X.shape[0], len(trees)), dtype=np.int32)
        fast = sp.issparse(X) or (isinstance(X, np.ndarray) and X.dtype == np.float32 and X.flags.c_contiguous)
        for t, tree in enumerate(trees):
            column = _leaf_ranks(tree)[tree.apply(X, check_input=not fast)]
            if oob:
                column[_inbag_column(self.inbag_bits, t)] = -1
            out[:, t] = column
        return out

    def rows(self, query_leaves: np.ndarray, *, n_jobs: int | None = None, block_size: int = 2048,
             leaf_ranks: bool = False) -> sp.csr_matrix:
        """CSR proximity rows for ``query_leaves`` (m, T) node ids; -1 skips a tree for that row.

        ``leaf_ranks=True``: ``query_leaves`` already holds leaf ranks (int32, from :meth:`query`). Two passes:
        the number of non-zeros of every row, then the rows written in place into arrays allocated once
        (blocks of rows run in threads when ``n_jobs`` asks for them; the kernels release the GIL).

        Examples
        --------
        >>> import numpy as np
        >>> from sklearn.datasets import load_diabetes
        >>> from sklearn.ensemble import RandomForestRegressor
        >>> from shap_instances.forest import build_gap_index, forest_apply
        >>> X, y = load_diabetes(return_X_y=True)
        >>> forest = RandomForestRegressor(10, random_state=0).fit(X, y)
        >>> index = build_gap_index(forest, X, y)
        >>> P = index.rows(forest_apply(forest, X[:5].astype(np.float32)))
        >>> bool(np.allclose(P @ y, forest.predict(X[:5])))
        True
        >>> P_oob = index.rows(index.oob_query())   # out-of-bag rows: each point skips its in-bag trees
        >>> float(P_oob.diagonal().max())
        0.0
        """
        if leaf_ranks:
            query_leaves = np.ascontiguousarray(query_leaves, dtype=np.int32)
        else:
            query_leaves = self.leaf_query(query_leaves)
        m = query_leaves.shape[0]
        starts = list(range(0, m, block_size))
        threaded = n_jobs not in (None, 1) and len(starts) > 1

        def run(function: Callable[..., Any], args: Callable[[int], tuple[Any, ...]]) -> list[Any]:
            if not threaded:
                return [function(query_leaves[s:s + block_size], *args(s)) for s in starts]
            return Parallel(n_jobs=n_jobs, prefer="threads")(
                delayed(function)(query_leaves[s:s + block_size], *args(s)) for s in starts)

        counts = run(self.row_counts, lambda s: ())
        indptr = np.zeros(m + 1, dtype=np.int64)
        if m:
            np.cumsum(np.concatenate(counts), out=indptr[1:])
        del counts
        nnz = int(indptr[-1])
        indices = np.empty(nnz, dtype=np.int32)
        data = np.empty(nnz, dtype=np.float64)
        run(self.fill_rows, lambda s: (indptr[s:s + block_size + 1], indices, data))
        return csr_of(indptr, indices, data, self.n_train)

    def row_counts(self, leaf_ranks: np.ndarray) -> np.ndarray:
        """Non-zeros (int64) of the proximity rows of ``leaf_ranks`` (m, T) int32 (-1 skips a tree)."""
        return gap_row_counts(leaf_ranks, self.leaf_offsets, self.leaf_ptr, self.members, self.n_train)

    def fill_rows(self, leaf_ranks: np.ndarray, indptr: np.ndarray, indices: np.ndarray, data: np.ndarray) -> None:
        """Write the proximity rows of ``leaf_ranks`` into ``indices`` / ``data`` at ``indptr`` (m + 1,), whose
        steps are :meth:`row_counts` (``indptr[0]``: where the block starts in a larger matrix)."""
        gap_fill_rows(leaf_ranks, self.leaf_offsets, self.leaf_ptr, self.members, self.mass, self.n_train, indptr,
                      indices, data)

    def oob_query(self) -> np.ndarray:
        """Training leaves (node ids) with -1 where the point is in-bag (its row then averages its OOB trees).

        Examples
        --------
        See :meth:`rows`.
        """
        ranks = self.oob_leaf_ranks()
        leaves = np.full(ranks.shape, -1, dtype=np.int32)
        for t, tree in enumerate(self.model.estimators_):
            known = ranks[:, t] >= 0
            leaves[known, t] = np.flatnonzero(tree.tree_.children_left == -1)[ranks[known, t]]
        return leaves

    def oob_leaf_ranks(self, rows: np.ndarray | None = None) -> np.ndarray:
        """Leaf ranks (n_train, T) int32 of the training points, -1 where in-bag: ``query(train_X, oob=True)``.

        Read from the out-of-bag leaves recorded while the index was built (no tree is applied again); an index
        without them (pickled by an earlier version) applies the trees. ``rows``: only those training rows'.
        """
        if self.oob_leaves is None or self.oob_ptr is None:
            ranks = self.query(self.train_X, oob=True)
            return ranks if rows is None else ranks[rows]
        if rows is None:
            return self.oob_block_ranks(0, self.n_train, np.zeros(self.n_trees, dtype=np.int64))
        out = np.full((len(rows), self.n_trees), -1, dtype=np.int32)
        for t in range(self.n_trees):
            oob = ~_inbag_column(self.inbag_bits, t)
            leaves = self.oob_leaves[self.oob_ptr[t]:self.oob_ptr[t + 1]]  # the out-of-bag rows', in row order
            keep = oob[rows]
            out[keep, t] = leaves[(np.cumsum(oob) - 1)[rows[keep]]]
        return out

    def oob_block_ranks(self, start: int, stop: int, before: np.ndarray) -> np.ndarray:
        """:meth:`oob_leaf_ranks` of the training rows ``start:stop``, read from the recorded out-of-bag leaves.

        ``before[t]``: the rows before ``start`` that are out-of-bag in tree ``t`` (:meth:`oob_before`), where
        the block's out-of-bag leaves of that tree start. Reads ``inbag_bits`` and ``oob_leaves`` only (no tree).
        """
        assert self.oob_leaves is not None and self.oob_ptr is not None
        out = np.full((stop - start, self.n_trees), -1, dtype=np.int32)
        bits = self.inbag_bits[start:stop]
        for t in range(self.n_trees):
            oob = ~_inbag_column(bits, t)
            first = int(self.oob_ptr[t] + before[t])
            out[oob, t] = self.oob_leaves[first:first + int(np.count_nonzero(oob))]
        return out

    def oob_before(self, starts: np.ndarray) -> np.ndarray:
        """(len(starts), T) int64: the training rows before each of the ascending ``starts`` that are out-of-bag in
        each tree (one pass over the bit-packed in-bag matrix, a block of rows at a time)."""
        out = np.zeros((len(starts), self.n_trees), dtype=np.int64)
        seen, counted = np.zeros(self.n_trees, dtype=np.int64), 0
        for k, start in enumerate(starts):
            for a in range(counted, int(start), 65536):
                b = min(a + 65536, int(start))
                inbag = np.unpackbits(self.inbag_bits[a:b], axis=1, count=self.n_trees)
                seen += (b - a) - inbag.sum(axis=0, dtype=np.int64)
            counted = max(counted, int(start))
            out[k] = seen
        return out

    def oob_rows(self, rows: np.ndarray | None = None, *, n_jobs: int | None = None) -> sp.csr_matrix:
        """Out-of-bag proximities of the training points (CSR, n_train x n_train), or of ``rows`` only."""
        return self.rows(self.oob_leaf_ranks(rows), n_jobs=n_jobs, leaf_ranks=True)

    def rows_of(self, X: Any, *, n_jobs: int | None = None) -> sp.csr_matrix:
        """Proximities of validated float32 points ``X`` (every tree used)."""
        return self.rows(self.query(X), n_jobs=n_jobs, leaf_ranks=True)


def _check_tree(tree: Any, leaves: np.ndarray, c: np.ndarray, y_codes: np.ndarray, classifier: bool,
                n_classes: Any) -> str | None:
    """Reason the weights ``c`` do not reproduce this tree's leaves, or None when they do."""
    t = tree.tree_
    n_nodes = t.node_count
    is_leaf = t.children_left == -1
    in_bag = c > 0
    n_in = np.bincount(leaves[in_bag], minlength=n_nodes)
    if not np.array_equal(n_in[is_leaf], t.n_node_samples[is_leaf]):
        return "weights"
    w = np.bincount(leaves, weights=c, minlength=n_nodes)
    tree_w = t.weighted_n_node_samples
    if not np.allclose(w[is_leaf], tree_w[is_leaf], rtol=1e-9, atol=1e-12):
        return "weights"
    safe_w = np.where(w > 0, w, 1.0)[is_leaf]
    for k in range(y_codes.shape[1]):
        if classifier:
            value = t.value[is_leaf, k, : n_classes[k]]
            total = value.sum(axis=1, keepdims=True)
            value = value / np.where(total > 0, total, 1.0)
            for cls in range(n_classes[k]):
                mean = np.bincount(leaves, weights=c * (y_codes[:, k] == cls), minlength=n_nodes)[is_leaf] / safe_w
                if not np.allclose(mean, value[:, cls], rtol=1e-9, atol=1e-9):
                    return "values"
        else:
            mean = np.bincount(leaves, weights=c * y_codes[:, k], minlength=n_nodes)[is_leaf] / safe_w
            value = t.value[is_leaf, k, 0]
            scale = max(1.0, float(np.max(np.abs(y_codes[:, k]))))
            if not np.allclose(mean, value, rtol=1e-9, atol=1e-9 * scale):
                return "values"
    return None


def build_gap_index(model: Any, X: Any, y: ArrayLike, *, sample_weight: ArrayLike | None = None) -> GapIndex:
    """Build and verify the leaf index of ``model`` fitted on ``(X, y, sample_weight)``.

    Every leaf of every tree is checked: its in-bag count (``tree_.n_node_samples``), its total weight
    (``tree_.weighted_n_node_samples``) and its value (``tree_.value``) must be reproduced from ``X``,
    ``y`` and the weights; otherwise the data is not the training data, or a setting (such as
    ``monotonic_cst`` clipping) breaks the identity, and this function raises.

    Parameters
    ----------
    model : RandomForestRegressor, RandomForestClassifier, ExtraTreesRegressor or ExtraTreesClassifier
        Fitted forest.
    X : array-like of shape (n_train, n_features)
        The training data the forest was fitted on (a DataFrame's columns are matched to the fitted
        ``feature_names_in_`` by name).
    y : array-like of shape (n_train,) or (n_train, n_outputs)
        The training targets (class labels for classifiers).
    sample_weight : array-like of shape (n_train,), optional
        The ``sample_weight`` passed to ``fit``.

    Returns
    -------
    GapIndex

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.ensemble import RandomForestClassifier
    >>> from shap_instances.forest import build_gap_index
    >>> X, y = load_iris(return_X_y=True)
    >>> forest = RandomForestClassifier(5, random_state=0).fit(X, y)
    >>> build_gap_index(forest, X, y).n_trees
    5
    """
    check_forest(model)
    model = as_forest(model)
    if isinstance(model, BaggedTrees) and sample_weight is not None:
        raise UnsupportedModelError("sample_weight with a Bagging ensemble is not supported (it sets the draw "
                                    "probabilities of each tree's rows); explain a model fitted without it.")
    given = X
    X = check_data(X, name="data", allow_sparse=True, allow_nan=True, dtype=np.float32,
                   n_features=model.n_features_in_, feature_names=getattr(model, "feature_names_in_", None))
    if X is given:  # the index keeps the data for out-of-bag queries: never alias the user's array
        X = X.copy()
    n = X.shape[0]
    y_raw, y_codes = encode_target(model, y, n)
    if sample_weight is not None:
        sample_weight = check_target(sample_weight, n, name="sample_weight").astype(np.float64)
        if sample_weight.ndim != 1 or np.any(sample_weight < 0):
            raise DataValidationError("sample_weight must be a 1-D array of non-negative weights, one per row.")
    layout = _IndexLayout.of(model.estimators_, n)
    failures = {}
    for semantics in _candidate_semantics():
        weight_of, integral = _tree_weight_function(model, y_raw, y_codes, sample_weight, semantics)
        index, failure = _index_trees(model, X, y_codes, weight_of, integral, layout)
        if failure is None:
            break
        failures[semantics] = failure
    else:
        has_nan = bool(np.isnan(X.data if sp.issparse(X) else X).any())
        raise _explain_failure(model, failures, sample_weight, has_nan)
    return GapIndex(**index, n_train=n, n_trees=layout.n_trees, semantics=semantics, bootstrap=bool(model.bootstrap),
                    model=model, train_X=X)


@dataclass
class _IndexLayout:
    """Sizes and dtypes of a forest's leaf index over ``n`` training rows, fixed before any tree is read."""

    n: int
    n_trees: int
    leaf_counts: np.ndarray
    leaf_offsets: np.ndarray
    n_entries: int
    ptr_dtype: Any
    member_dtype: Any
    oob_dtype: Any

    @classmethod
    def of(cls, trees: Any, n: int) -> _IndexLayout:
        leaf_counts = np.array([int(np.count_nonzero(tree.tree_.children_left == -1)) for tree in trees],
                               dtype=np.int64)
        # every in-bag point with positive weight sits in exactly one leaf; the root counts them
        n_entries = int(sum(int(tree.tree_.n_node_samples[0]) for tree in trees))
        return cls(
            n=n, n_trees=len(trees), leaf_counts=leaf_counts,
            leaf_offsets=np.concatenate([[0], np.cumsum(leaf_counts)[:-1]]).astype(np.int64), n_entries=n_entries,
            ptr_dtype=np.int32 if n_entries < np.iinfo(np.int32).max else np.int64,
            member_dtype=np.uint16 if n <= np.iinfo(np.uint16).max + 1 else np.int32,
            oob_dtype=np.uint16 if leaf_counts.max(initial=0) <= np.iinfo(np.uint16).max + 1 else np.int32,
        )


def _index_trees(model: Any, X: Any, y_codes: np.ndarray, weight_of: Callable[[np.ndarray], Any], integral: bool,
                 layout: _IndexLayout) -> tuple[dict[str, Any], tuple[int, str] | None]:
    """The index arrays of every tree under one weight semantics, or ``(partial, (tree, reason))`` on a mismatch."""
    classifier = is_classifier_forest(model)
    n_classes = np.atleast_1d(model.n_classes_) if classifier else None
    fast = sp.issparse(X) or (X.dtype == np.float32 and X.flags.c_contiguous)
    n, n_trees = layout.n, layout.n_trees
    inbag_bits = np.zeros((n, (n_trees + 7) // 8), dtype=np.uint8)
    members = np.empty(layout.n_entries, dtype=layout.member_dtype)
    mass = np.empty(layout.n_entries, dtype=np.uint8 if integral else np.float64)
    leaf_ptr = np.zeros(int(layout.leaf_counts.sum()) + 1, dtype=layout.ptr_dtype)
    oob_parts, oob_ptr = [], np.zeros(n_trees + 1, dtype=np.int64)
    position = 0
    for t, (tree, drawn) in enumerate(zip(model.estimators_, _estimators_samples(model), strict=True)):
        leaves = tree.apply(X, check_input=not fast)
        counts, c = weight_of(np.asarray(drawn))
        reason = _check_tree(tree, leaves, c, y_codes, classifier, n_classes)
        if reason is not None:
            return {}, (t, reason)
        inbag_bits[:, t >> 3] |= (counts > 0).astype(np.uint8) << np.uint8(7 - (t & 7))
        oob_parts.append(_leaf_ranks(tree)[leaves[counts == 0]].astype(layout.oob_dtype))
        oob_ptr[t + 1] = oob_ptr[t] + oob_parts[-1].size
        idx = np.flatnonzero(c > 0)
        ranks = _leaf_ranks(tree)[leaves[idx]]
        order = np.argsort(ranks, kind="stable")
        idx, ranks = idx[order], ranks[order]
        stop = position + idx.size
        if mass.dtype != np.float64 and idx.size and c[idx].max() > np.iinfo(np.uint8).max:
            mass = mass.astype(np.float64)  # a multiplicity above 255: exact in float64 too
        members[position:stop] = idx
        mass[position:stop] = c[idx]
        offset = layout.leaf_offsets[t]
        leaf_ptr[offset + 1: offset + layout.leaf_counts[t] + 1] = position + np.cumsum(
            np.bincount(ranks, minlength=layout.leaf_counts[t]))
        position = stop
    oob_leaves = np.concatenate(oob_parts) if oob_parts else np.empty(0, dtype=layout.oob_dtype)
    return dict(leaf_offsets=layout.leaf_offsets, leaf_ptr=leaf_ptr, members=members, mass=mass,
                inbag_bits=inbag_bits, oob_leaves=oob_leaves, oob_ptr=oob_ptr), None


def _explain_failure(model: Any, failures: dict[Any, tuple[Any, str]], sample_weight: ArrayLike | None,
                     has_nan: bool = False) -> Exception:
    reasons = {reason for _, reason in failures.values()}
    if has_nan and "values" not in reasons:
        return UnsupportedModelError(
            "The training data contains missing values and the forest's leaves are not reproduced by applying it "
            f"to that data: this scikit-learn ({sklearn.__version__}) routes some training points with missing "
            "values to another leaf at predict time than during fit, so its predictions are not a "
            "proximity-weighted sum of training targets. Impute the missing values before fitting, or use "
            "scikit-learn >= 1.9. (If the data or sample_weight differ from the fit, fix that first.)"
        )
    if "values" in reasons:
        if getattr(model, "monotonic_cst", None) is not None:
            return UnsupportedModelError(
                "The forest's leaf values are not weighted means of its in-bag training targets: monotonic_cst "
                f"= {model.monotonic_cst!r} clipped some leaves, so no proximity-weighted sum reproduces its "
                "predictions. Refit without monotonic_cst to use GapExplainer."
            )
        return DataValidationError(
            "The training targets y do not reproduce the forest's leaf values (tree_.value): pass the exact y the "
            "forest was fitted on (same rows, same order)."
        )
    hint = "" if sample_weight is not None else " If the forest was fitted with sample_weight, pass it too."
    return DataValidationError(
        "The data and weights do not reproduce the forest's leaf sizes (tree_.n_node_samples / "
        "weighted_n_node_samples): pass the exact training data X the forest was fitted on (same rows, same "
        f"order) and the same sample_weight.{hint}"
    )


def gap_proximities(model: Any, data: Any, y: ArrayLike, X: Any = None, *, sample_weight: ArrayLike | None = None,
                    n_jobs: int | None = None) -> sp.csr_matrix:
    """RF-GAP proximities of ``X`` (or out-of-bag proximities of the training data) as a CSR matrix.

    Parameters
    ----------
    model : fitted RandomForest/ExtraTrees regressor or classifier
    data : array-like of shape (n_train, n_features)
        The training data the forest was fitted on.
    y : array-like of shape (n_train,) or (n_train, n_outputs)
        The training targets.
    X : array-like of shape (m, n_features), optional
        Points to compute proximities for. ``None``: out-of-bag proximities of the training points. When the
        forest was fitted on a DataFrame, DataFrame columns (of ``data`` and ``X``) are matched by name, not by
        position: they are put in the fitted order, and other columns are refused.
    sample_weight : array-like of shape (n_train,), optional
        The ``sample_weight`` passed to ``fit``.
    n_jobs : int, optional
        Threads (the kernel releases the GIL).

    Returns
    -------
    scipy.sparse.csr_matrix of shape (m, n_train)
        Rows sum to one, and ``P @ y`` equals ``model.predict(X)``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import load_diabetes
    >>> from sklearn.ensemble import RandomForestRegressor
    >>> from shap_instances.forest import gap_proximities
    >>> X, y = load_diabetes(return_X_y=True)
    >>> forest = RandomForestRegressor(20, random_state=0).fit(X[:300], y[:300])
    >>> P = gap_proximities(forest, X[:300], y[:300], X[300:])
    >>> bool(np.max(np.abs(P @ y[:300] - forest.predict(X[300:]))) < 1e-10)
    True
    """
    index = build_gap_index(model, data, y, sample_weight=sample_weight)
    if X is None:
        return index.oob_rows(n_jobs=n_jobs)
    X = check_data(X, allow_sparse=True, allow_nan=True, dtype=np.float32, n_features=model.n_features_in_,
                   feature_names=getattr(model, "feature_names_in_", None))
    return index.rows_of(X, n_jobs=n_jobs)

