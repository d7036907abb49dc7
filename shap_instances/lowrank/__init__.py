"""Low-rank models and their high-dimensional representers (Tsai et al., 2023, Section 5).

* :class:`SoftImpute`: nuclear-norm regularised matrix completion fitted on (user, item, rating) triples;
* :class:`MatrixFactorizationRepresenter`: user- and item-based training-interaction attributions of any
  user/item factor model (``rating ~ <U_user, V_item>``), two-tower models through their final embeddings;
* :func:`normalized_embeddings`: Algorithm 1's three small SVDs;
* :class:`MatrixFactorization`: rank-k factorisation by alternating least squares (Eq. 16);
* :func:`fia_scores`: fast influence analysis, the influence baseline of Table 2;
* :class:`TraceNormRegression` and :class:`TraceNormRepresenter`: Corollary 3 for general matrix inputs.
"""

from ._fia import fia_scores
from ._matrix_factorization import MatrixFactorization
from ._mf_representer import MatrixFactorizationRepresenter, normalized_embeddings
from ._soft_impute import SoftImpute
from ._trace_norm import TraceNormRegression, TraceNormRepresenter

__all__ = [
    "SoftImpute",
    "MatrixFactorization",
    "MatrixFactorizationRepresenter",
    "normalized_embeddings",
    "fia_scores",
    "TraceNormRegression",
    "TraceNormRepresenter",
]
