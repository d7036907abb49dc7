"""Neural networks (PyTorch) explained through their last layer and their training trajectory.

* :func:`is_torch_module`, :func:`last_linear_layer`, :func:`network_outputs`, :class:`NetworkFeatures`: a network
  as frozen penultimate features followed by its output layer (torch imported only when a network is passed);
* :func:`fine_tune_last_layer`: the last layer fitted to a stationary point of an explicitly regularised objective
  (Yeh et al., 2018), what ``RepresenterExplainer`` decomposes for a ``torch.nn.Module``;
* :func:`tracin_cp`: TracInCP over saved checkpoints (Pruthi et al., 2020), last layer or all parameters;
* :func:`last_layer_influence`: the influence function of the fine-tuned last layer (Koh and Liang, 2017);
* :class:`TwoTowerRepresenter`: a two-tower recommender's item embeddings as its fine-tuned output layer.
"""

from ._influence import last_layer_influence, loss_gradient, tracin_cp
from ._last_layer import FineTunedLastLayer, fine_tune_last_layer
from ._network import NetworkFeatures, is_torch_module, last_linear_layer, network_outputs
from ._two_tower import TwoTowerRepresenter

__all__ = [
    "FineTunedLastLayer",
    "NetworkFeatures",
    "TwoTowerRepresenter",
    "fine_tune_last_layer",
    "is_torch_module",
    "last_layer_influence",
    "last_linear_layer",
    "loss_gradient",
    "network_outputs",
    "tracin_cp",
]
