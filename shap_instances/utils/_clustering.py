"""Groupings for shap's plots: a hierarchical clustering of the players, cohorts of the explained rows."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
import scipy.sparse as sp
from scipy.cluster.hierarchy import linkage
from sklearn.tree import DecisionTreeRegressor

from ..exceptions import DataValidationError
from ._validation import check_data, check_memory, column_names

if TYPE_CHECKING:  # pragma: no cover - annotations only, so that the command line's --help needs no shap
    import shap

__all__ = ["player_clustering", "row_cohorts"]


def player_clustering(explainer: Any, *, max_memory: float | None = None) -> np.ndarray:
    """A hierarchical clustering of an explainer's players, for ``shap.plots.bar(e, clustering=...)``.

    Training instances (instance explainers) are clustered by Ward linkage on their standardised feature
    vectors; features (naive Bayes, SISR) by average linkage on the distance ``1 - |correlation|`` over the
    background data, as shap's own feature clustering does. Merge heights are scaled to [0, 1], so shap's
    ``clustering_cutoff`` (default 0.5) reads as a fraction of the largest merge.

    Parameters
    ----------
    explainer : InstanceExplainer
        A constructed explainer of this package (or a plugin's).
    max_memory : float, optional
        Byte budget of the condensed distance matrix (``8 M (M - 1) / 2`` bytes for M players).

    Returns
    -------
    ndarray of shape (n_players - 1, 4)
        A scipy linkage matrix.

    Examples
    --------
    >>> import shap
    >>> from sklearn.ensemble import RandomForestRegressor
    >>> import shap_instances as si
    >>> from shap_instances.datasets import load_diabetes
    >>> X, y = load_diabetes()
    >>> forest = RandomForestRegressor(20, random_state=0).fit(X[:80], y[:80])
    >>> explainer = si.GapExplainer(forest, X[:80], y=y[:80])
    >>> si.utils.player_clustering(explainer).shape
    (79, 4)
    """
    vectors, kind = explainer.player_vectors()
    m = vectors.shape[0]
    if m < 2:
        raise DataValidationError(f"a clustering needs at least two players, the explainer has {m}.")
    check_memory(8.0 * m * (m - 1) / 2 + 8.0 * vectors.size, f"the pairwise distances of {m} players",
                 max_memory=max_memory, instead="Cluster a subset of the players, or plot without clustering.")
    vectors = vectors.toarray() if sp.issparse(vectors) else np.asarray(vectors, dtype=np.float64)
    if kind == "instances":
        scale = vectors.std(axis=0)
        standardised = (vectors - vectors.mean(axis=0)) / np.where(scale > 0, scale, 1.0)
        tree = linkage(standardised, method="ward")
    else:  # features: rows of `vectors` are features observed over the background rows
        with np.errstate(invalid="ignore", divide="ignore"):
            correlation = np.nan_to_num(np.corrcoef(vectors), nan=0.0)
        distance = np.clip(1.0 - np.abs(correlation), 0.0, 1.0)
        tree = linkage(distance[np.triu_indices(m, 1)], method="average")
    top = tree[:, 2].max()
    if top > 0:
        tree[:, 2] /= top
    return tree


def row_cohorts(explanation: shap.Explanation, X: Any, max_cohorts: int = 2) -> shap.Cohorts:
    """Split the explained rows into cohorts by *their own* features, as ``Explanation.cohorts(n)`` does for shap.

    ``explanation.cohorts(n)`` splits rows by ``explanation.data``; for an instance explanation that holds one
    value per training instance (its target) which does not vary across explained rows, so shap finds a
    single cohort. This fits the same kind of tree (at most ``max_cohorts`` leaves, predicting the values) on
    the explained rows' features ``X`` and names each cohort by its path, e.g. ``"bmi > 0.03 & s5 <= 0.01"``.

    Parameters
    ----------
    explanation : shap.Explanation
        Values of shape (n, M) (slice one output first for (n, M, k)).
    X : array-like of shape (n, p)
        The features of the explained rows (what was passed to the explainer).
    max_cohorts : int, default=2

    Returns
    -------
    shap.Cohorts
        Accepted by ``shap.plots.bar``.

    Examples
    --------
    >>> from sklearn.ensemble import RandomForestRegressor
    >>> import shap_instances as si
    >>> from shap_instances.datasets import load_diabetes
    >>> X, y = load_diabetes()
    >>> forest = RandomForestRegressor(20, random_state=0).fit(X[:200], y[:200])
    >>> e = si.GapExplainer(forest, X[:200], y=y[:200])(X[200:260])
    >>> len(si.utils.row_cohorts(e, X[200:260], 2).cohorts)
    2
    """
    values = np.asarray(explanation.values)
    if values.ndim != 2:
        raise DataValidationError(f"row_cohorts needs values of shape (n, M); got {values.shape}: slice one output "
                                  "first, e.g. explanation[..., 0].")
    names = column_names(X) if isinstance(X, pd.DataFrame) else [f"x{i}" for i in range(np.shape(X)[1])]
    features = check_data(X, name="X")
    if features.shape[0] != values.shape[0]:
        raise DataValidationError(f"X has {features.shape[0]} rows, the explanation {values.shape[0]}.")
    tree = DecisionTreeRegressor(max_leaf_nodes=max(2, int(max_cohorts)), random_state=0).fit(features, values)
    leaves = tree.apply(features)
    labels = np.array([_path_name(tree.tree_, leaf, names) for leaf in leaves], dtype=object)
    return explanation.cohorts(labels)


def _path_name(tree: Any, leaf: int, names: list[str]) -> str:
    """'a <= 1 & b > 2': the conditions on the way from the root to ``leaf``."""
    parent = {}
    for node in range(tree.node_count):
        for child, side in ((tree.children_left[node], "<="), (tree.children_right[node], ">")):
            if child >= 0:
                parent[child] = (node, side)
    conditions = []
    node = leaf
    while node in parent:
        node, side = parent[node]
        conditions.append(f"{names[tree.feature[node]]} {side} {tree.threshold[node]:.3g}")
    return " & ".join(reversed(conditions)) or "all"
