"""Random forests as proximity-weighted sums of training targets (RF-GAP, Rhodes et al., 2023).

* :func:`build_gap_index` / :class:`GapIndex`: the leaf index of a fitted forest over its training rows, in-bag
  counts and out-of-bag sets, from which every GAP proximity row is computed (numba kernels in ``_kernels``);
* :func:`gap_proximities`: the proximity matrix ``P[x, i]`` itself; :func:`oob_proximities_on`: the out-of-bag
  matrix on a dask cluster, the leaf index shared with the workers as mapped files;
* :class:`GapForest`: a forest with its index and target columns, computing proximities, out-of-bag predictions,
  explanation values and trust scores (what ``GapExplainer`` delegates to);
* :func:`gap_trust_scores`: proximity-based trust scores of the forest's predictions (Rosaler et al., 2023);
* :func:`as_forest` / :class:`BaggedTrees`: a bagging ensemble of decision trees seen as a forest;
* :func:`check_forest`, :func:`is_classifier_forest`, :func:`forest_apply`, :func:`encode_target`: the forest
  adapters, the only place that reads scikit-learn's forest internals.

The computations on rows of weights shared with gradient boosting (quantiles, outlier scores, the plots) live in
:mod:`shap_instances.weighted_targets`.

:class:`FixedForestPath` is the residual game's named approximation ``refit="fixed_structure"`` (the trees kept,
leaf values recomputed from each coalition), registered with :func:`~shap_instances.games.register_fast_path`.
"""

from ._bagging import BaggedTrees, as_forest, is_tree_bagging
from ._distributed import OOB_ARRAYS, oob_proximities_on
from ._fast_forest import FixedForestPath
from ._gap import GapForest, gap_target_columns
from ._proximities import (
    SUPPORTED_FORESTS,
    GapIndex,
    build_gap_index,
    check_forest,
    encode_target,
    forest_apply,
    gap_proximities,
    is_classifier_forest,
)
from ._trust import RUNNER_UP_RULES, gap_trust_scores

__all__ = [
    "FixedForestPath",
    "BaggedTrees",
    "OOB_ARRAYS",
    "RUNNER_UP_RULES",
    "SUPPORTED_FORESTS",
    "GapForest",
    "GapIndex",
    "as_forest",
    "build_gap_index",
    "check_forest",
    "encode_target",
    "forest_apply",
    "gap_proximities",
    "gap_target_columns",
    "gap_trust_scores",
    "is_classifier_forest",
    "is_tree_bagging",
    "oob_proximities_on",
]
