"""One form for every supported boosted ensemble, the replay of its training, and the two decompositions.

A library adapter (``_sklearn``, ``_xgboost``, ``_lightgbm``) reads a fitted model into a
:class:`BoostedTrees`: the leaves of the training rows in every tree, the stored leaf values, the row weights,
the initial raw prediction of the training rows, and a :class:`Replay` that recomputes the training gradients
exactly as the library did. :func:`replay_training` then walks the trees in training order, recomputes every
leaf value from the gradients (``-eta * sum g / (sum h + lambda)``, the Newton step), checks it against the
stored value, and keeps each training row's share of it: the gradient decomposition. The target-weight
decomposition (squared error) needs only the leaves and the row weights. The derivations are in
``docs/explainers/boosting.md``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

import numpy as np

from .._deprecated import warn_moved
from ..exceptions import DataValidationError, UnsupportedModelError
from ._kernels import (
    gradient_contribution_rows,
    maxscore_top_k_rows,
    place_by_bound,
    pruned_top_k_rows,
    target_weight_rows,
)

__all__ = ["BoostedTrees", "Replay", "replay_training", "target_weights", "gradient_contributions", "leaf_ranks",
           "row_major_contributions", "top_gradient_contributions"]


def leaf_ranks(is_leaf: np.ndarray) -> np.ndarray:
    """Map node ids to leaf ranks (0 .. n_leaves - 1 in node order); -1 for internal nodes.

    Examples
    --------
    >>> import numpy as np
    >>> from shap_instances.boosting import leaf_ranks
    >>> leaf_ranks(np.array([False, True, False, True, True])).tolist()
    [-1, 0, -1, 1, 2]
    """
    ranks = np.cumsum(is_leaf) - 1
    return np.where(is_leaf, ranks, -1).astype(np.int32)


@dataclass
class Replay:
    """How the library computed its training gradients (supplied by an adapter).

    Attributes
    ----------
    raw : ndarray of shape (n_used, K)
        The initial raw predictions of the used training rows, in the library's precision.
    gradients : callable
        ``gradients(raw) -> (neg_grad, hess)``: float64 arrays (n_used, K) holding the library's own
        (sample-weighted) negative gradients and hessians at ``raw``, rounded as the library rounds them.
    add_tree : callable
        ``add_tree(raw, t)``: add tree ``t``'s stored leaf values to ``raw`` in place, as the library did.
    numerator_factor : float
        Factor of the leaf numerator (scikit-learn's multinomial ``(K - 1) / K``; 1 elsewhere).
    zero_denominator_is_zero : bool
        Leaves whose hessian sum is 0 get the value 0 (scikit-learn's ``_safe_divide``).
    max_step : float or None
        The library clips each leaf step (before the learning rate) to ``[-max_step, max_step]``: the
        decomposition holds only while no leaf reaches the bound, which the replay checks.
    shares : callable or None
        ``shares(raw, i) -> (n_used, K)``: each used row's share of its leaf value in the ``K`` trees of iteration
        ``i`` (learning rate included), for libraries whose leaf value is not one diagonal Newton step (CatBoost's
        several leaf-estimation steps and its multi-class hessian); None for the one step above.
    """

    raw: np.ndarray
    gradients: Callable
    add_tree: Callable
    numerator_factor: float = 1.0
    zero_denominator_is_zero: bool = False
    max_step: float | None = None
    shares: Callable | None = None

    def __repr__(self) -> str:
        return f"Replay(n_used={self.raw.shape[0]}, K={self.raw.shape[1]})"


@dataclass
class BoostedTrees:
    """A fitted boosted ensemble read into one form (built by :func:`shap_instances.boosting.read_boosted_model`).

    Trees are numbered in training order, ``t = i * K + k`` for iteration ``i`` and margin ``k``.

    Attributes
    ----------
    library, loss : str
        E.g. ``"scikit-learn"`` / ``"squared_error"``.
    n_outputs : int
        Number of raw margins ``K`` (1 for regression and binary classification).
    learning_rate : float
    l2 : float or ndarray (T, max leaves)
        What the library adds to a leaf's hessian sum (its L2 penalty, plus any epsilon it adds); per leaf where
        it differs between leaves (LightGBM adds ``cat_l2`` to the leaves of many-vs-many categorical splits).
    tree_output : ndarray (T,) int64
        The margin each tree adds to.
    n_leaves : ndarray (T,) int64
    train_leaves : ndarray (T, n) int32
        Leaf rank of every training row in every tree (0 for rows that took no part in training).
    leaf_values : ndarray (T, L) float64
        What each leaf adds to the raw margin, as stored by the library (learning rate included; a constant
        initial score folded into the first trees, as LightGBM does, is taken out).
    row_weight : ndarray (n,) float64
        The weight of each training row in its leaves (sample weights, class weights; 0 for rows left out of
        training, such as an early-stopping validation split).
    used : ndarray (n,) bool
        Rows that took part in training.
    init : {"mean", "constant", "other"}
        The initial prediction: the weighted mean of the targets, a constant that does not depend on them, or
        anything else (an init estimator).
    init_constant : ndarray (K,) or None
        The initial raw prediction when it is the same for every row.
    targets : ndarray (n,) float64
        The targets as the model saw them (class indices for classifiers; float32-rounded labels in LightGBM).
    view : object
        The library adapter's view of the model (picklable), with ``apply(X) -> (m, T) int32`` leaf ranks of
        validated rows, ``init_raw(X) -> (m, K)`` initial raw predictions and ``margin(X) -> (m, K)`` the
        model's own raw margin from its prediction API; :class:`BoostedTrees` forwards the three.
    float32 : bool
        Whether the library stores leaf values or computes gradients in float32 (the reconstruction then
        holds to float32 rounding).
    replay : Replay or None
    members, coef, leaf_ptr, leaf_offsets : ndarray
        The gradient decomposition, filled by :func:`replay_training`: the used rows of each leaf, each row's
        share of that leaf value, the CSR pointers and each tree's first global leaf.
    max_leaf_error : float
        Largest gap between a recomputed and a stored leaf value, relative to the largest leaf value of this tree
        and the trees before it.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.ensemble import GradientBoostingClassifier
    >>> from shap_instances.boosting import read_boosted_model
    >>> X, y = load_iris(return_X_y=True)
    >>> trees = read_boosted_model(GradientBoostingClassifier(n_estimators=4, max_depth=2).fit(X, y), X, y)
    >>> trees.n_outputs, trees.n_trees, trees.tree_output[:6].tolist(), trees.max_leaf_error < 1e-12
    (3, 12, [0, 1, 2, 0, 1, 2], True)
    """

    library: str
    loss: str
    n_outputs: int
    learning_rate: float
    l2: float | np.ndarray
    tree_output: np.ndarray
    n_leaves: np.ndarray
    train_leaves: np.ndarray
    leaf_values: np.ndarray
    row_weight: np.ndarray
    used: np.ndarray
    init: str
    init_constant: np.ndarray | None
    targets: np.ndarray
    view: Any
    float32: bool = False
    replay: Replay | None = None
    members: np.ndarray | None = field(default=None, repr=False)
    coef: np.ndarray | None = field(default=None, repr=False)
    leaf_ptr: np.ndarray | None = field(default=None, repr=False)
    leaf_offsets: np.ndarray | None = field(default=None, repr=False)
    max_leaf_error: float = 0.0

    def apply(self, X: Any) -> np.ndarray:
        """Leaf ranks (m, T) int32 of validated rows ``X`` in every tree."""
        return self.view.apply(X)

    def init_raw(self, X: Any) -> np.ndarray:
        """Initial raw predictions (m, K) of ``X``."""
        return self.view.init_raw(X)

    def margin(self, X: Any) -> np.ndarray:
        """The model's own raw margin (m, K) at ``X``, from its prediction API."""
        return self.view.margin(X)

    @property
    def n_trees(self) -> int:
        return len(self.tree_output)

    @property
    def n_train(self) -> int:
        return self.train_leaves.shape[1]


def replay_training(trees: BoostedTrees, *, rtol: float) -> None:
    """Recompute every leaf value from the replayed gradients, check it, and store each row's share.

    Fills ``members``, ``coef``, ``leaf_ptr``, ``leaf_offsets`` and ``max_leaf_error`` of ``trees`` and drops
    the replay. A leaf whose recomputed value departs from the stored one by more than ``rtol`` times the
    tree's largest leaf value means the data, targets or weights are not those the model was fitted on (or a
    setting changes the leaves), and raises :class:`~shap_instances.exceptions.DataValidationError`.
    :func:`~shap_instances.boosting.read_boosted_model` calls it.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import load_diabetes
    >>> from sklearn.ensemble import GradientBoostingRegressor
    >>> from shap_instances.boosting import read_boosted_model
    >>> X, y = load_diabetes(return_X_y=True)
    >>> model = GradientBoostingRegressor(n_estimators=10).fit(X, y)
    >>> trees = read_boosted_model(model, X, y)   # replayed: every leaf recomputed and checked
    >>> float(trees.max_leaf_error) < 1e-12, trees.replay is None
    (True, True)
    >>> try:
    ...     read_boosted_model(model, X, y + 1.0)
    ... except ValueError as exc:
    ...     print(type(exc).__name__)
    DataValidationError
    """
    replay = cast(Replay, trees.replay)  # set by the readers until the replay has run
    used = np.flatnonzero(trees.used)
    n_used, K = used.size, trees.n_outputs
    T = trees.n_trees
    eta = trees.learning_rate
    n_iter = T // K
    leaf_offsets = np.zeros(T, dtype=np.int64)
    leaf_offsets[1:] = np.cumsum(trees.n_leaves)[:-1]
    members = np.empty(T * n_used, dtype=np.int32)
    coef = np.empty(T * n_used, dtype=np.float64)
    leaf_ptr = np.zeros(int(trees.n_leaves.sum()) + 1, dtype=np.int64)
    raw = replay.raw
    worst = 0.0
    largest = float(np.finfo(np.float64).tiny)
    for i in range(n_iter):
        shares = replay.shares(raw, i) if replay.shares is not None else _newton_shares(trees, replay, raw, i)
        for k in range(K):
            t = i * K + k
            leaves = trees.train_leaves[t, used]
            n_l = int(trees.n_leaves[t])
            share = shares[:, k]
            recomputed = np.bincount(leaves, weights=share, minlength=n_l)
            if replay.max_step is not None and np.any(np.abs(recomputed) >= eta * replay.max_step * (1 - 1e-6)):
                raise UnsupportedModelError(
                    f"max_delta_step={replay.max_step:g} clips a leaf step of tree {t} of the {trees.library} model, "
                    "so that leaf is no longer a sum of its rows' gradients; refit with max_delta_step=0.")
            stored = trees.leaf_values[t, :n_l]
            # relative to the largest leaf value so far: a late tree fitting round-off has no scale of its own
            largest = max(largest, float(np.max(np.abs(stored))))
            gap = float(np.max(np.abs(recomputed - stored))) / largest
            if not gap <= rtol:
                raise DataValidationError(
                    f"The leaf values of tree {t} of the {trees.library} model are not reproduced from the training "
                    f"data (largest gap {gap:.3g} of the largest leaf value so far, tolerance {rtol:.3g}): pass "
                    "exactly the X, y and sample_weight given to fit (same rows, same order).")
            worst = max(worst, gap)
            order = np.argsort(leaves, kind="stable")
            start = t * n_used
            members[start:start + n_used] = used[order]
            coef[start:start + n_used] = share[order]
            counts = np.bincount(leaves, minlength=n_l)
            leaf_ptr[leaf_offsets[t] + 1:leaf_offsets[t] + n_l + 1] = start + np.cumsum(counts)
        for k in range(K):
            replay.add_tree(raw, i * K + k)
    trees.members, trees.coef, trees.leaf_ptr, trees.leaf_offsets = members, coef, leaf_ptr, leaf_offsets
    trees.max_leaf_error = worst
    trees.replay = None


def _newton_shares(trees: BoostedTrees, replay: Replay, raw: np.ndarray, i: int) -> np.ndarray:
    """Each used row's share (n_used, K) of its leaf in the trees of iteration ``i``: one diagonal Newton step."""
    neg_grad, hess = replay.gradients(raw)
    used = np.flatnonzero(trees.used)
    shares = np.empty_like(neg_grad)
    for k in range(trees.n_outputs):
        t = i * trees.n_outputs + k
        leaves = trees.train_leaves[t, used]
        n_l = int(trees.n_leaves[t])
        denominator = np.bincount(leaves, weights=hess[:, k], minlength=n_l) + leaf_l2(trees, t, n_l)
        safe = np.where(denominator != 0, denominator, 1.0)
        shares[:, k] = trees.learning_rate * replay.numerator_factor * neg_grad[:, k] / safe[leaves]
        if replay.zero_denominator_is_zero:
            shares[denominator[leaves] == 0, k] = 0.0
    return shares


def _chunks(m: int, n_jobs: int | None, minimum: int = 8) -> list[tuple[int, int]]:
    # joblib's semantics: -1 every core, -2 all but one, ...
    parts = 1 if n_jobs in (None, 1) else (int(n_jobs) if n_jobs > 0 else max(1, _cpu_count() + 1 + int(n_jobs)))
    parts = max(1, min(parts, m // minimum))
    edges = np.linspace(0, m, parts + 1).astype(int)
    return [(int(a), int(b)) for a, b in zip(edges[:-1], edges[1:]) if b > a]


def _cpu_count() -> int:
    import os

    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def _run(function: Callable[..., Any], chunks: Sequence[Any]) -> None:
    if len(chunks) <= 1:
        for a, b in chunks:
            function(a, b)
        return
    from joblib import Parallel, delayed

    Parallel(n_jobs=len(chunks), prefer="threads")(delayed(function)(a, b) for a, b in chunks)


def target_weights(trees: BoostedTrees, query_leaves: np.ndarray, *, out: np.ndarray | None = None,
                   n_jobs: int | None = None, block: int = 16) -> np.ndarray:
    """Target weights ``W`` (m, n) with ``predict = W @ targets`` (+ the constant part, see the docs).

    ``query_leaves`` (m, T) int32 from ``trees.apply``. The kernels release the GIL: ``n_jobs`` splits the rows
    over threads. With the default initial prediction (the weighted mean) the rows sum to one; with a constant
    ``c``, ``predict = c (1 - W.sum(1)) + W @ targets``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import load_diabetes
    >>> from sklearn.ensemble import GradientBoostingRegressor
    >>> from shap_instances.boosting import read_boosted_model, target_weights
    >>> X, y = load_diabetes(return_X_y=True)
    >>> model = GradientBoostingRegressor(n_estimators=10, init="zero").fit(X, y)
    >>> trees = read_boosted_model(model, X, y)
    >>> W = target_weights(trees, trees.apply(X[:4]))
    >>> bool(np.allclose(W @ y, model.predict(X[:4]))), bool(np.allclose(W.sum(1), 1 - 0.9 ** 10))
    (True, True)
    """
    query_leaves = np.ascontiguousarray(query_leaves, dtype=np.int32)
    m = query_leaves.shape[0]
    out = np.empty((m, trees.n_train)) if out is None else out
    eta = trees.learning_rate
    width = int(trees.n_leaves.max()) if trees.n_trees else 1
    scale = np.zeros((trees.n_trees, width))
    row_weight = np.where(trees.used, trees.row_weight, 0.0)
    for t in range(trees.n_trees):
        leaves = trees.train_leaves[t]
        total = np.bincount(leaves, weights=row_weight, minlength=int(trees.n_leaves[t])) + leaf_l2(
            trees, t, int(trees.n_leaves[t]))
        scale[t, :total.size] = np.where(total > 0, eta / np.where(total > 0, total, 1.0), 0.0)
    if trees.init == "mean":
        init_share = row_weight / row_weight.sum()
    else:
        init_share = np.zeros(trees.n_train)
    exact = bool(np.all(np.asarray(trees.l2) == 0.0))
    factor = (1.0 - eta) ** trees.n_trees
    n_leaves = trees.n_leaves.astype(np.int64)
    train_leaves = np.ascontiguousarray(trees.train_leaves, dtype=np.int32)

    def work(a: int, b: int) -> None:
        target_weight_rows(query_leaves[a:b], train_leaves, n_leaves, row_weight, scale, init_share, factor,
                           exact, out[a:b], block)

    _run(work, _chunks(m, n_jobs))
    return out


def gradient_contributions(trees: BoostedTrees, query_leaves: np.ndarray, *, out: np.ndarray | None = None,
                           n_jobs: int | None = None) -> np.ndarray:
    """Contributions (m, n, K) of the training rows to the raw margins through their gradients.

    Requires the replay (:func:`replay_training`, done by :func:`read_boosted_model`).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import load_breast_cancer
    >>> from sklearn.ensemble import GradientBoostingClassifier
    >>> from shap_instances.boosting import gradient_contributions, read_boosted_model
    >>> X, y = load_breast_cancer(return_X_y=True)
    >>> model = GradientBoostingClassifier(n_estimators=10).fit(X, y)
    >>> trees = read_boosted_model(model, X, y)
    >>> C = gradient_contributions(trees, trees.apply(X[:3]))
    >>> margin = trees.init_raw(X[:3]) + C.sum(axis=1)
    >>> bool(np.allclose(margin[:, 0], model.decision_function(X[:3])))
    True
    """
    query_leaves = np.ascontiguousarray(query_leaves, dtype=np.int32)
    m = query_leaves.shape[0]
    out = np.empty((m, trees.n_train, trees.n_outputs)) if out is None else out
    tree_output = trees.tree_output.astype(np.int64)
    index = (trees.leaf_offsets, trees.leaf_ptr, trees.members, trees.coef)  # set by the replay (read_boosted_model)
    offsets, ptr, members, coef = cast("tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]", index)

    def work(a: int, b: int) -> None:
        gradient_contribution_rows(query_leaves[a:b], tree_output, offsets, ptr, members, coef, out[a:b])

    _run(work, _chunks(m, n_jobs))
    return out


def row_major_contributions(trees: BoostedTrees,
                            output: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(trees of margin ``output`` (T_k,), their leaves (n, T_k) int32, each row's share (n, T_k) float64, and
    every leaf's largest ``|share|`` (n_leaves_total,), 0 for empty leaves and the other margins' trees).

    Row ``j`` of the two arrays holds training row ``j``'s leaf and its coefficient in every tree of the margin,
    contiguous, for :func:`top_gradient_contributions`: ``12 n T_k`` bytes. Rows left out of training get 0.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import load_diabetes
    >>> from sklearn.ensemble import GradientBoostingRegressor
    >>> from shap_instances.boosting import gradient_contributions, read_boosted_model, row_major_contributions
    >>> X, y = load_diabetes(return_X_y=True)
    >>> trees = read_boosted_model(GradientBoostingRegressor(n_estimators=5).fit(X, y), X, y)
    >>> chosen, leaves, shares, _ = row_major_contributions(trees, 0)
    >>> query = trees.apply(X[:1])[0]
    >>> C = gradient_contributions(trees, query[None, :])[0, :, 0]
    >>> bool(np.allclose(((leaves == query[chosen]) * shares).sum(1), C))
    True
    """
    offsets, ptr, members, coef = cast("tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]",
                                       (trees.leaf_offsets, trees.leaf_ptr, trees.members, trees.coef))
    chosen = np.flatnonzero(trees.tree_output == output).astype(np.int64)
    leaves = np.ascontiguousarray(trees.train_leaves[chosen].T, dtype=np.int32)
    shares = np.zeros((trees.n_train, chosen.size))
    bound = np.zeros(ptr.size - 1)
    for c, t in enumerate(chosen):
        first = offsets[t]
        a, b = ptr[first], ptr[first + trees.n_leaves[t]]
        shares[members[a:b], c] = coef[a:b]
        filled = np.flatnonzero(np.diff(ptr[first:first + trees.n_leaves[t] + 1]) > 0)
        if filled.size:  # the filled leaves' slices follow each other: reduceat reads each one
            bound[first + filled] = np.maximum.reduceat(np.abs(coef[a:b]), ptr[first + filled] - a)
    return chosen, leaves, shares, bound


def top_gradient_contributions(trees: BoostedTrees, query_leaves: np.ndarray, *args: Any,
                               n_jobs: int | None = None) -> tuple[np.ndarray, np.ndarray, int]:
    """The ``k`` largest gradient contributions (absolute value) to one margin, by bounded pruning.

    Called as ``top_gradient_contributions(trees, query_leaves, k, leaf_size, index, n_jobs=None)``: ``index``
    (:func:`row_major_contributions` of a margin) fixes the margin. With ``leaf_size=None`` (what ``top_k``
    uses), MaxScore: each explained row's leaves are scattered in decreasing order of their largest
    coefficient, each leaf's rows in decreasing order of their total ``|coefficient|``, until the bound left
    rules out every row not seen (kernel ``maxscore_top_k_rows``): the cost per row is the leaves it scatters,
    not the ``n`` training rows. With an integer ``leaf_size``, leaves with more than ``leaf_size`` members
    are not scattered; their largest coefficients bound what they can add, and every training row is tested
    against that bound (``pruned_top_k_rows``, O(n) per row). Either way the candidates get their exact
    values from ``index``; see ``boosting/_kernels.py``.
    The values equal the dense ones (:func:`gradient_contributions`) bit for bit. The former third argument,
    ``output`` (the margin, unused: ``index`` already holds it), is deprecated: passing it warns.

    Returns
    -------
    indices : int64 array (m, k), ascending in each row
    values : float64 array (m, k)
    fallbacks : int
        Explained rows that needed an O(n) step: with ``leaf_size``, rows whose bound was too loose (computed by
        the full scatter); with ``leaf_size=None``, rows with fewer than ``k`` non-zero values (every row tested).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import load_diabetes
    >>> from sklearn.ensemble import GradientBoostingRegressor
    >>> from shap_instances.boosting import (gradient_contributions, read_boosted_model, row_major_contributions,
    ...                                      top_gradient_contributions)
    >>> X, y = load_diabetes(return_X_y=True)
    >>> trees = read_boosted_model(GradientBoostingRegressor(n_estimators=20).fit(X, y), X, y)
    >>> query = trees.apply(X[:3])
    >>> index, values, _ = top_gradient_contributions(trees, query, 5, 40, row_major_contributions(trees, 0))
    >>> dense = gradient_contributions(trees, query)[:, :, 0]
    >>> bool(np.array_equal(np.take_along_axis(dense, index, 1), values))
    True
    """
    if len(args) == 4:  # (output, k, leaf_size, index): the margin is the one ``index`` was built for
        warn_moved("top_gradient_contributions(trees, query_leaves, output, k, leaf_size, index)",
                   "top_gradient_contributions(trees, query_leaves, k, leaf_size, index)")
        args = args[1:]
    if len(args) != 3:
        raise TypeError("top_gradient_contributions(trees, query_leaves, k, leaf_size, index, *, n_jobs=None) takes "
                        f"5 positional arguments, got {2 + len(args)}.")
    k, leaf_size, index = cast("tuple[int, int | None, tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]]", args)
    query_leaves = np.ascontiguousarray(query_leaves, dtype=np.int32)
    m = query_leaves.shape[0]
    offsets, ptr, members, coef = cast("tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]",
                                       (trees.leaf_offsets, trees.leaf_ptr, trees.members, trees.coef))
    chosen, leaves, shares, bound = index
    indices = np.empty((m, k), dtype=np.int64)
    values = np.empty((m, k))
    fallbacks = np.zeros(m, dtype=np.int64)
    if leaf_size is None:
        lists = _maxscore_lists(trees, leaves, shares, n_jobs)
        # explained rows in the locality order: each row's threshold starts from the previous row's top k
        queue = np.lexsort(query_leaves[:, chosen[:_LOCALITY_TREES]].T[::-1])
        query_leaves = query_leaves[queue]
    else:
        big = np.diff(ptr) > leaf_size

    def work(a: int, b: int) -> None:
        if leaf_size is None:
            fallbacks[a] = maxscore_top_k_rows(query_leaves[a:b], chosen, offsets, ptr, *lists, bound, leaves, shares,
                                               indices[a:b], values[a:b])
        else:
            fallbacks[a] = pruned_top_k_rows(query_leaves[a:b], chosen, offsets, ptr, members, coef, big, bound,
                                             leaves, shares, indices[a:b], values[a:b])

    _run(work, _chunks(m, n_jobs))
    if leaf_size is None:  # back to the caller's order
        indices[queue], values[queue] = indices.copy(), values.copy()
    return indices, values, int(fallbacks.sum())


def _maxscore_lists(trees: BoostedTrees, leaves: np.ndarray, shares: np.ndarray,
                    n_jobs: int | None) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The leaves' lists of the MaxScore kernel: rows renumbered, each leaf's by decreasing total ``|share|``.

    Rows are renumbered in the order of their leaves in the first :data:`_LOCALITY_TREES` trees (rows that share
    leaves get near numbers, so a leaf's scatter stays in few cache lines). Returns the renumbered ``members``
    (int32), their ``coef`` (float32), each entry's row bound ``A_j`` rounded up to float32 (decreasing within a
    leaf, ties by row), ``A`` by new number (float64), and the training row of each new number. The trees are
    split over ``n_jobs`` threads (kernel ``place_by_bound``).
    """
    row_bound = np.abs(shares).sum(1)
    original = np.lexsort(leaves[:, :_LOCALITY_TREES].T[::-1]).astype(np.int64)
    renumber = np.empty_like(original)
    renumber[original] = np.arange(original.size)
    by_rank = np.argsort(-row_bound, kind="stable")
    rank = np.empty_like(by_rank)
    rank[by_rank] = np.arange(by_rank.size)
    rounded = row_bound.astype(np.float32)
    low = rounded < row_bound
    rounded[low] = np.nextafter(rounded[low], np.float32(np.inf))  # never below A_j: the scatter may stop at it
    offsets, ptr, entries, shares_of = cast("tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]",
                                            (trees.leaf_offsets, trees.leaf_ptr, trees.members, trees.coef))
    n_leaves, size = trees.n_leaves.astype(np.int64), ptr[-1]
    members, coef, entry_bound = np.empty(size, np.int32), np.empty(size, np.float32), np.empty(size, np.float32)
    new_by_rank, bound_by_rank = renumber[by_rank].astype(np.int32), rounded[by_rank]

    def work(a: int, b: int) -> None:
        place_by_bound(a, b, offsets, n_leaves, ptr, entries, shares_of, rank, new_by_rank, bound_by_rank,
                       members, coef, entry_bound)

    _run(work, _chunks(trees.n_trees, n_jobs, minimum=1))
    return members, coef, entry_bound, row_bound[original], original


#: rows are renumbered by their leaves in this many (first) trees of the margin, for locality
_LOCALITY_TREES = 8


def leaf_l2(trees: BoostedTrees, t: int, n_leaves: int) -> float | np.ndarray:
    """The L2 term added to the hessian sums of tree ``t``'s ``n_leaves`` leaves (a scalar when all share it)."""
    return trees.l2 if np.ndim(trees.l2) == 0 else np.asarray(trees.l2)[t, :n_leaves]
