"""Discriminant analysis: exact refits of LDA (lsqr solver) and QDA (svd solver) along permutations.

* :class:`DiscriminantPath`: the refits of ``LinearDiscriminantAnalysis(solver="lsqr")`` on coalitions and
  permutation prefixes, from running class counts, means and scatter;
* :class:`QuadraticDiscriminantPath`, :func:`qda_convention`: the same for ``QuadraticDiscriminantAnalysis``, per
  class covariances, in the installed scikit-learn's convention.

Registered with the residual game on import (:func:`~shap_instances.games.register_fast_path`).
"""

from ._fast_discriminant import DiscriminantPath
from ._fast_qda import QuadraticDiscriminantPath, qda_convention

__all__ = ["DiscriminantPath", "QuadraticDiscriminantPath", "qda_convention"]
