"""A PyTorch network seen as fixed features followed by its last linear layer.

``torch`` is imported only here and only when a network is passed: :func:`is_torch_module` answers without
importing it (an object cannot be a ``torch.nn.Module`` unless torch is already imported). The network is
never changed: :class:`NetworkFeatures` works on a float64 copy in evaluation mode.
"""

from __future__ import annotations

import copy
import sys
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin

from ..exceptions import DataValidationError, UnsupportedModelError
from ..utils import check_data

__all__ = ["NetworkFeatures", "is_torch_module", "last_linear_layer", "network_outputs"]


def is_torch_module(model: Any) -> bool:
    """Whether ``model`` is a ``torch.nn.Module``, without importing torch.

    Examples
    --------
    >>> from shap_instances.neural import is_torch_module
    >>> is_torch_module(object())
    False
    """
    torch = sys.modules.get("torch")
    try:
        return torch is not None and isinstance(model, torch.nn.Module)
    except Exception:  # noqa: BLE001 - an object whose __class__ raises is no network (supports_model never raises)
        return False


def last_linear_layer(module: Any, layer: str | None = None) -> tuple[str, Any]:
    """``(name, layer)``: the ``torch.nn.Linear`` named ``layer``, or else the network's last one.

    Examples
    --------
    >>> import torch
    >>> from shap_instances.neural import last_linear_layer
    >>> net = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 1))
    >>> last_linear_layer(net)[0]
    '2'
    """
    import torch

    layers = {name: m for name, m in module.named_modules() if isinstance(m, torch.nn.Linear)}
    if layer is not None:
        if layer not in layers:
            raise UnsupportedModelError(
                f"layer={layer!r} is not a torch.nn.Linear of {type(module).__name__}; its linear layers are "
                f"{sorted(layers)}. Pass the name (as named_modules() gives it) of the layer that makes the output.")
        return layer, layers[layer]
    if not layers:
        raise UnsupportedModelError(
            f"{type(module).__name__} has no torch.nn.Linear layer: the representer explains a network whose output "
            "is a linear layer of its penultimate features.")
    name = list(layers)[-1]
    return name, layers[name]


def _as_tensor(X: Any, name: str) -> Any:
    import torch

    arr = check_data(X, name=name)
    return torch.as_tensor(np.ascontiguousarray(arr, dtype=np.float64))


def network_outputs(module: Any, X: Any, layer: str | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``(features, outputs)`` of a float64 copy of ``module`` in evaluation mode on the rows of ``X``.

    ``features`` are the inputs of the last linear layer (:func:`last_linear_layer`), ``outputs`` the network's
    outputs, refused unless they are that layer's outputs (a network that transforms them further, e.g. by a
    sigmoid, is explained by its logits: drop the last transformation).

    Examples
    --------
    >>> import numpy as np, torch
    >>> from shap_instances.neural import network_outputs
    >>> net = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2))
    >>> f, out = network_outputs(net, np.ones((5, 3)))
    >>> f.shape, out.shape
    ((5, 4), (5, 2))
    """
    import torch

    copy_ = copy.deepcopy(module).double().eval()
    name, linear = last_linear_layer(copy_, layer)
    captured: dict[str, Any] = {}

    def hook(_m: Any, inputs: tuple, output: Any) -> None:
        captured["features"], captured["linear"] = inputs[0].detach(), output.detach()

    handle = linear.register_forward_hook(hook)
    try:
        with torch.no_grad():
            out = copy_(_as_tensor(X, "X"))
    finally:
        handle.remove()
    if "features" not in captured:
        raise UnsupportedModelError(f"The layer {name!r} of {type(module).__name__} is not used by forward().")
    outputs = out.detach().reshape(out.shape[0], -1).numpy()
    linear_out = captured["linear"].reshape(out.shape[0], -1).numpy()
    if outputs.shape != linear_out.shape or not np.array_equal(outputs, linear_out):
        raise UnsupportedModelError(
            f"The output of {type(module).__name__} is not the output of its last linear layer {name!r}: the "
            "representer decomposes that layer. Explain the network without its final transformation (a "
            "sigmoid or softmax: pass the logits), or name the output layer with layer=.")
    return captured["features"].reshape(out.shape[0], -1).numpy(), outputs


class NetworkFeatures(TransformerMixin, BaseEstimator):
    """The penultimate features of a network as a fitted scikit-learn transformer (the network is frozen).

    Parameters
    ----------
    module : torch.nn.Module
        The trained network (not modified: a float64 copy is used).
    layer : str, optional
        The name of its output ``torch.nn.Linear`` (default: the last one).

    Examples
    --------
    >>> import numpy as np, torch
    >>> from shap_instances.neural import NetworkFeatures
    >>> net = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 1))
    >>> NetworkFeatures(net).transform(np.zeros((2, 3))).shape
    (2, 4)
    """

    def __init__(self, module: Any, layer: str | None = None) -> None:
        self.module = module
        self.layer = layer

    def fit(self, X: Any = None, y: Any = None) -> NetworkFeatures:
        """Nothing to learn: the network is already trained."""
        return self

    def __sklearn_is_fitted__(self) -> bool:
        return True

    def transform(self, X: Any) -> np.ndarray:
        """The inputs of the output layer for the rows of ``X``, float64."""
        features, _ = network_outputs(self.module, X, self.layer)
        if not np.all(np.isfinite(features)):
            raise DataValidationError("X: the network's penultimate features are not finite for some rows; "
                                      "check the rows' scale.")
        return features
