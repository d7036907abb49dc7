"""Nearest-neighbour models: exact refits of uniform-weight KNN regression along permutations.

* :class:`KNNPath`: the refits of ``KNeighborsRegressor(weights="uniform")`` on coalitions and permutation
  prefixes (numba kernels in ``_knn_kernels``), and their Shapley values in closed form;
* :func:`jia_knn_shapley`: the recursion of Jia et al. (2019) behind that closed form.

Registered with the residual game on import (:func:`~shap_instances.games.register_fast_path`).
"""

from ._fast_knn import KNNPath, jia_knn_shapley

__all__ = ["KNNPath", "jia_knn_shapley"]
