"""Low-rank models and their high-dimensional representers (Tsai et al., 2023, Section 5).

* :class:`SoftImpute`: nuclear-norm regularised matrix completion fitted on (user, item, rating) triples;
* :class:`MatrixFactorizationRepresenter`: user- and item-based training-interaction attributions of any
  user/item factor model (``rating ~ <U_user, V_item>``), two-tower models through their final embeddings;
* :func:`normalized_embeddings`: Algorithm 1's three small SVDs.
"""

from ._mf_representer import MatrixFactorizationRepresenter, normalized_embeddings
from ._soft_impute import SoftImpute

__all__ = ["SoftImpute", "MatrixFactorizationRepresenter", "normalized_embeddings"]
