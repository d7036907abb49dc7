"""The fixed-structure forest game: a named approximation of random-forest refits, with exact Shapley values.

A refit of a random forest on a coalition ``S`` of training rows grows new trees. This game keeps the trees that
the forest grew on all rows (their splits, and each tree's bootstrap multiplicities ``c_i(t)``) and recomputes
only the leaf values from the rows of ``S``. With ``L_t(x)`` the leaf of ``x`` in tree ``t``,
``M_g = {i : c_i(t) > 0, L_t(x_i) = g}`` the in-bag rows of leaf ``g`` and ``f_j`` the prediction that the
empty coalition stands for on explained row ``j`` (``y_j + v(empty)_j``),

``tree_t(S, x_j) = sum_{i in S, M_g} c_i y_i / sum_{i in S, M_g} c_i``  (``g = L_t(x_j)``) when ``S`` meets ``M_g``,
``tree_t(S, x_j) = f_j``                                                  when it does not (an empty leaf),

``v(S)_j = (1/T) sum_t tree_t(S, x_j) - y_j``.

*Empty leaves* fall back to the empty coalition's prediction ``f_j`` (``empty_prediction`` of the residual game:
the training mean, say; by default ``f_j = y_j``, the game's zero residual): that keeps ``v(empty)`` the game's,
keeps every tree a function of ``S`` alone (never of the targets outside ``S``), and makes the game a sum of
leaf games, so its Shapley values have a closed form. At ``S`` = all rows every leaf holds its in-bag rows, so
``v(all)`` is exactly the fitted forest's residual (checked when the path is built). For a classifier ``y`` is
the 0/1 indicator of the positive class and a leaf mean is the leaf's class share: ``predict_proba``'s rule.

*Closed form.* ``tree_t(S, x_j) = u_g(S cap M_g) + f_j [S cap M_g = empty]`` with ``u_g`` the weighted-mean game
of leaf ``g`` (``u_g(empty) = 0``). Players outside ``M_g`` are null in it, ``[S cap M_g = empty] = 1 -
[S cap M_g != empty]`` and the "meets ``M_g``" game is symmetric in ``M_g``, so by linearity and efficiency

``phi_i(v_j) = (1/T) sum_t [i in M_g] (phi_i(u_g) - f_j / |M_g|)``,  ``g = L_t(x_j)``.

``phi(u_g)`` depends on the leaf only: with equal multiplicities it is :class:`MeanPath`'s closed form, otherwise
a dynamic programme over the coalitions' sizes and masses (``forest/_forest_kernels.py``), O(|M_g|^4 c) per leaf:
cheap for fully grown trees (a few rows a leaf), slow for leaves of hundreds of rows (sample permutations then).

*Prefix update.* Along a permutation, adding row ``i`` changes one leaf per tree where ``c_i(t) > 0``; only the
explained rows in those leaves move, each by ``(new mean - old mean (or f_j)) / T``: O(sum_t |eval rows in
L_t(x_i)|) per row instead of a refit.

*When it approximates a refit.* The splits of a forest grown on ``S`` differ from those grown on all rows; this
game ignores that (each row moves leaf values, never splits). It is a named approximation: opt in with
``ResidualGame(..., refit="fixed_structure")``, never chosen by itself; docs/engine.md shows its agreement with
full refits.
"""

from __future__ import annotations

import copy
import warnings
from typing import Any, ClassVar, Self

import numpy as np
from numpy.typing import ArrayLike
from sklearn.base import clone, is_classifier
from sklearn.ensemble import (
    BaggingClassifier,
    BaggingRegressor,
    ExtraTreesClassifier,
    ExtraTreesRegressor,
    RandomForestClassifier,
    RandomForestRegressor,
)
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

from ..exceptions import UnsupportedModelError
from ..games import accumulate_prefix_units, register_fast_path
from ._forest_kernels import forest_leaf_shapley, forest_prefix_values, forest_units

__all__ = ["FixedForestPath"]

_FORESTS = (RandomForestRegressor, RandomForestClassifier, ExtraTreesRegressor, ExtraTreesClassifier)


@register_fast_path(refit="fixed_structure")
class FixedForestPath:
    """Random forests with their tree structure held fixed: leaf values recomputed from each coalition.

    A named approximation of full refits (the module docstring derives it), chosen only by
    ``ResidualGame(model, X, y, ..., refit="fixed_structure")``; never one of
    :data:`~shap_instances.games.exact_fast_paths`. The forest is fitted once on all rows (a clone of ``model``
    with its seeded ``random_state``); its trees' splits and bootstrap multiplicities are then fixed. Its exact
    Shapley values (:meth:`shapley_values`) make the game's ``closed_form`` ``"FixedForest"``.

    Parameters
    ----------
    model : RandomForest / ExtraTrees regressor or binary classifier, or Bagging of decision trees
        Unfitted or fitted: a clone is fitted on ``X, y``.
    X, y : ndarray
        Training rows (the players) and their targets (0/1 for a classifier).
    X_eval, y_eval : ndarray
        Explained rows and their targets.
    empty : ndarray (n_eval,)
        v(empty); a tree's empty leaf predicts ``y_eval + empty``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.ensemble import RandomForestRegressor
    >>> from shap_instances.forest import FixedForestPath
    >>> rng = np.random.default_rng(0)
    >>> X, y = rng.normal(size=(30, 2)), rng.normal(size=30)
    >>> model = RandomForestRegressor(n_estimators=5, random_state=0)
    >>> path = FixedForestPath(model, X, y, X[:4], y[:4], np.zeros(4))
    >>> forest = RandomForestRegressor(n_estimators=5, random_state=0).fit(X, y)
    >>> bool(np.allclose(path.residuals(np.ones(30, bool)), forest.predict(X[:4]) - y[:4]))
    True
    >>> phi = path.shapley_values()   # exact, (n_eval, n_train)
    >>> bool(np.allclose(phi.sum(axis=1), forest.predict(X[:4]) - y[:4]))   # efficiency: v(all) - v(empty)
    True
    """

    #: Prefix values along a permutation come from a fused numba kernel (no process pool is worth starting).
    fused: ClassVar[bool] = True
    #: Blocks of (n_train x n_eval) floats that :meth:`accumulate` holds beside the estimator's three (the batch's
    #: sum and sum of squares).
    extra_blocks: ClassVar[int] = 2
    #: A named approximation of refits: the residual game takes it only when asked (``refit="fixed_structure"``).
    approximation: ClassVar[str] = "fixed_structure"

    def __init__(self, model: Any, X: Any, y: ArrayLike, X_eval: Any, y_eval: ArrayLike, empty: ArrayLike) -> None:
        if not self.supports(model):
            raise UnsupportedModelError(
                f"refit='fixed_structure' needs a RandomForest or ExtraTrees regressor or classifier, or a Bagging "
                f"ensemble of decision trees on all columns, with leaves that are weighted means (not "
                f"criterion='absolute_error', no monotonic_cst, no class_weight); got {type(model).__name__}.")
        X, X_eval = np.asarray(X, dtype=np.float64), np.asarray(X_eval, dtype=np.float64)
        self.y = np.ascontiguousarray(y, dtype=np.float64)
        self.y_eval, self.empty = np.asarray(y_eval, dtype=np.float64), np.asarray(empty, dtype=np.float64)
        self.fallback = np.ascontiguousarray(self.y_eval + self.empty)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            self.forest = clone(model).fit(X, self.y)
        self._index(X, X_eval)
        self.W = np.zeros((len(self.y_eval), 0))  # (n_eval, K) weights of an aggregate game, else no column
        self._full: np.ndarray | None = None
        self._check_full(X_eval)

    def _index(self, X: np.ndarray, X_eval: np.ndarray) -> None:
        """Global leaves and in-bag multiplicities of the training rows, and the explained rows of each leaf."""
        trees, n = self.forest.estimators_, len(self.y)
        sizes = np.array([tree.tree_.node_count for tree in trees])
        offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]])
        self.n_nodes = int(sizes.sum())
        self.leaf = np.empty((n, len(trees)), dtype=np.int64)
        self.mass = np.empty((n, len(trees)), dtype=np.float64)
        self.eval_leaf = eval_leaf = np.empty((len(X_eval), len(trees)), dtype=np.int64)
        for t, (tree, drawn) in enumerate(zip(trees, self.forest.estimators_samples_, strict=True)):
            self.leaf[:, t] = tree.apply(X.astype(np.float32)) + offsets[t]
            self.mass[:, t] = np.bincount(np.asarray(drawn), minlength=n)
            eval_leaf[:, t] = tree.apply(X_eval.astype(np.float32)) + offsets[t]
        self.eval_ptr, self.eval_rows = _csr(eval_leaf, self.n_nodes)
        inbag = self.mass > 0
        self.member_ptr, self.members = _csr(np.where(inbag, self.leaf, -1), self.n_nodes)
        self.member_mass = np.ascontiguousarray(self.mass[self.members, _tree_of(self.member_ptr, offsets + sizes)])

    def _check_full(self, X_eval: np.ndarray) -> None:
        """Refuse a forest whose leaves are not the in-bag weighted means (v(all) must be the forest's residual)."""
        if is_classifier(self.forest):
            classes = list(self.forest.classes_)
            fitted = self.forest.predict_proba(X_eval)[:, classes.index(1.0)] if 1.0 in classes else 0.0
        else:
            fitted = self.forest.predict(X_eval)
        scale = max(1.0, float(np.abs(self.y).max(initial=0.0)))
        if not np.allclose(self.residuals(np.ones(len(self.y), dtype=bool)), fitted - self.y_eval, rtol=1e-9,
                           atol=1e-9 * scale):
            raise UnsupportedModelError(
                f"{type(self.forest).__name__}'s leaves are not the weighted means of their in-bag targets (a "
                "sample weighting or leaf rule this game does not model), so refit='fixed_structure' would not "
                "reproduce its predictions on all rows; use exact refits (refit='exact').")

    @classmethod
    def supports(cls, model: Any) -> bool:
        """RandomForest / ExtraTrees (or Bagging of decision trees on all columns) with weighted-mean leaves."""
        if isinstance(model, BaggingRegressor | BaggingClassifier):
            base = model.estimator
            return (isinstance(base, DecisionTreeRegressor | DecisionTreeClassifier) and model.max_features == 1.0
                    and not model.bootstrap_features and _mean_leaves(base))
        return type(model) in _FORESTS and _mean_leaves(model)

    def fits_all_rows(self) -> bool:
        """True: the forest was fitted on all rows when the path was built."""
        return True

    def aggregated(self, weights: ArrayLike) -> Self:
        """The path of the weighted sums ``weights^T residuals`` (weights of shape (n_eval, K))."""
        weights = np.asarray(weights, dtype=np.float64)
        new = copy.copy(self)
        new.W = np.ascontiguousarray(weights if self.W.shape[1] == 0 else self.W @ weights)
        new._full = None
        return new

    def equal_multiplicities(self) -> Self:
        """The same forest with every in-bag row counted once in its leaves: each leaf game becomes a plain mean, whose
        Shapley values take :class:`~shap_instances.linear.MeanPath`'s O(|M|) closed form instead of the O(|M|^4 c)
        programme. Close to this game (the same leaves, mostly the same weights), it is the control variate of
        :class:`~shap_instances.approximators.ControlVariateApproximator` where leaves are too large for the
        closed form (docs/engine.md, "Variance reduction")."""
        new = copy.copy(self)
        new.mass = (self.mass > 0).astype(np.float64)
        new.member_mass = np.ones_like(self.member_mass)
        new._full = None
        return new

    def control_path(self) -> Self:
        """The default control of this path's game (:func:`~shap_instances.approximators.control_game`):
        :meth:`equal_multiplicities`."""
        return self.equal_multiplicities()

    def _out(self, residuals: np.ndarray) -> np.ndarray:
        return residuals if self.W.shape[1] == 0 else residuals @ self.W

    def residuals(self, mask: np.ndarray) -> np.ndarray:
        """Residuals (or their weighted sums) of the fixed-structure forest on the rows in ``mask``."""
        weight = self.mass * mask[:, None]
        leaf_mass = np.bincount(self.leaf.ravel(), weights=weight.ravel(), minlength=self.n_nodes)
        leaf_sum = np.bincount(self.leaf.ravel(), weights=(weight * self.y[:, None]).ravel(), minlength=self.n_nodes)
        filled = leaf_mass[self.eval_leaf] > 0
        means = leaf_sum[self.eval_leaf] / np.where(filled, leaf_mass[self.eval_leaf], 1.0)
        trees = np.where(filled, means, self.fallback[:, None]).mean(axis=1)
        return self._out(trees - self.y_eval)

    def prefix_values_batch(self, permutations: np.ndarray) -> np.ndarray:
        """Values of every prefix of each permutation, shape (k, n + 1, n_outputs); threads over permutations."""
        permutations = np.ascontiguousarray(permutations, dtype=np.intp)
        if permutations.ndim != 2 or permutations.shape[1] != len(self.y):  # the kernel reads whole orders only
            raise ValueError(f"permutations must have shape (k, {len(self.y)}): whole orders of the training rows "
                             f"(the fixed-structure forest walks no cut order), got {permutations.shape}.")
        d = len(self.y_eval) if self.W.shape[1] == 0 else self.W.shape[1]
        out = np.empty((len(permutations), permutations.shape[1] + 1, d))
        weights = self.W if self.W.shape[1] else np.zeros((len(self.y_eval), 0))
        forest_prefix_values(self.leaf, self.mass, self.y, self.eval_ptr, self.eval_rows, self.fallback, self.y_eval,
                             weights, self.W.shape[1] > 0, self.n_nodes, permutations, out)
        return out

    def prefix_residuals(self, permutation: ArrayLike) -> np.ndarray:
        """Residuals on the evaluation rows of the fit on each prefix, shape (n, n_outputs)."""
        return self.prefix_values_batch(np.asarray(permutation)[None, :])[0, 1:]

    def accumulate(self, permutations: np.ndarray, per_unit: int, unit: np.ndarray, mean: np.ndarray, m2: np.ndarray,
                   count: int) -> tuple[int, np.ndarray]:
        """Shapley accumulators along ``permutations``; returns ``(count, full)`` as ``RidgePath.accumulate``.

        An aggregate game: the prefix values, then the accumulating kernel. Every explained row: the sparse kernel
        :func:`forest_units`, which touches only the explained rows that each joining row moves.
        """
        permutations = np.ascontiguousarray(permutations, dtype=np.intp)
        if self.W.shape[1]:
            prefixes = self.prefix_values_batch(permutations)
            return accumulate_prefix_units(prefixes, permutations, per_unit, unit, mean, m2, count), prefixes[0, -1]
        touches = int(np.diff(self.eval_ptr)[self.leaf][self.mass > 0].sum())  # per permutation, whatever its order
        touched = np.empty((2, per_unit * touches), dtype=np.int64)
        count = forest_units(np.ascontiguousarray(self.leaf.T), np.ascontiguousarray(self.mass.T), self.y,
                             self.eval_ptr, self.eval_rows, self.fallback, self.n_nodes, permutations, per_unit, unit,
                             mean, m2, count, touched)
        if self._full is None:  # v(all rows): the same for every batch
            self._full = self.residuals(np.ones(len(self.y), dtype=bool))
        return count, self._full

    def shapley_values(self) -> np.ndarray:
        """Exact Shapley values, shape (n_outputs, n), by the closed form of the module docstring."""
        aggregate = self.W.shape[1] > 0
        out = np.zeros((self.W.shape[1] if aggregate else len(self.y_eval), len(self.y)))
        forest_leaf_shapley(self.member_ptr, self.members, self.member_mass, self.y, self.eval_ptr, self.eval_rows,
                            self.fallback, self.W if aggregate else np.zeros((0, 0)), aggregate, self.mass.shape[1],
                            out)
        return out


def _mean_leaves(model: Any) -> bool:
    """Leaves that predict weighted means of in-bag targets: no absolute error, monotonic_cst or class_weight."""
    return (getattr(model, "criterion", None) != "absolute_error" and getattr(model, "monotonic_cst", None) is None
            and getattr(model, "class_weight", None) is None)


def _csr(groups: np.ndarray, n_groups: int) -> tuple[np.ndarray, np.ndarray]:
    """Row numbers grouped by ``groups`` (m, T) values (-1 left out): ``(ptr, rows)`` with rows ascending per group."""
    rows = np.broadcast_to(np.arange(groups.shape[0])[:, None], groups.shape).ravel()
    keys = groups.ravel()
    keep = keys >= 0
    order = np.argsort(keys[keep], kind="stable")
    ptr = np.concatenate([[0], np.cumsum(np.bincount(keys[keep], minlength=n_groups))]).astype(np.int64)
    return ptr, np.ascontiguousarray(rows[keep][order], dtype=np.int64)


def _tree_of(ptr: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """The tree of each entry grouped by global node by ``ptr`` (tree ``t``'s nodes end before ``ends[t]``)."""
    node = np.repeat(np.arange(len(ptr) - 1), np.diff(ptr))
    return np.searchsorted(ends, node, side="right")
