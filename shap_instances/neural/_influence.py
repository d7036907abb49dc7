"""Influence baselines for networks: TracInCP over checkpoints and the last layer's influence function.

TracInCP (Pruthi et al., 2020) with the prediction in place of the test loss, as Tsai et al. (2023, Appendix G)
use it: a gradient step of size ``eta_t`` on training point ``z_i`` moves the output ``f(x')`` by about
``-eta_t grad L(z_i, theta_t) . grad f(x', theta_t)``, so

.. math::

    \\mathrm{TracInCP}(z_i, x') =
    -\\sum_t \\eta_t \\, \\nabla_\\theta L(z_i, \\theta_t) \\cdot \\nabla_\\theta f(x', \\theta_t)

(positive: training on ``z_i`` raised the output). On the last layer ``(W, b)`` the gradients factor:
``grad_W L_i = dL/dPhi_i f_i^T`` and ``grad_W f_k(x') = e_k f(x')^T``, so the score of output ``k`` is
``-eta_t (dL/dPhi_i)_k (<f_i, f(x')> + 1)``. With ``params="all"`` the per-example gradients of every parameter
come from ``torch.func``. The training loss ``L`` is the one of the targets: ``||y - Phi||^2 / 2`` for numbers,
binary cross-entropy on a single logit, softmax cross-entropy on several.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from ..exceptions import DataValidationError, InvalidParameterError
from ..linear import InfluenceFunction
from ..utils import check_data, check_labels, check_memory, check_target
from ._last_layer import _task, fine_tune_last_layer
from ._network import last_linear_layer, network_outputs

__all__ = ["last_layer_influence", "loss_gradient", "tracin_cp"]


def loss_gradient(outputs: np.ndarray, y: np.ndarray, task: str) -> np.ndarray:
    """``dL/dPhi`` (n, K) of the training loss at the network's outputs ``Phi`` (n, K).

    Examples
    --------
    >>> import numpy as np
    >>> from shap_instances.neural import loss_gradient
    >>> loss_gradient(np.array([[0.5]]), np.array([1.0]), "squared").tolist()
    [[-0.5]]
    """
    if task == "squared":
        return outputs - y.reshape(outputs.shape)
    if outputs.shape[1] == 1:  # binary cross-entropy on one logit
        return 1.0 / (1.0 + np.exp(-outputs)) - y.reshape(-1, 1)
    shifted = np.exp(outputs - outputs.max(axis=1, keepdims=True))
    onehot = np.zeros_like(outputs)
    onehot[np.arange(len(y)), y.astype(np.intp)] = 1.0
    return shifted / shifted.sum(axis=1, keepdims=True) - onehot


def _targets(y: ArrayLike, n: int, n_outputs: int) -> tuple[np.ndarray, str]:
    y_arr = np.asarray(y)
    if y_arr.shape[0] != n:
        raise DataValidationError(f"y_train has {y_arr.shape[0]} rows, X_train has {n}; pass one target per row.")
    task = _task(y_arr, n_outputs)
    if task == "squared":
        return check_target(y_arr, n).reshape(n, -1).astype(np.float64), task
    labels = check_labels(y_arr, n)
    classes, codes = np.unique(labels, return_inverse=True)
    if n_outputs > 1 and classes.size > n_outputs:
        raise DataValidationError(f"y_train has {classes.size} classes, the network {n_outputs} outputs.")
    return codes.astype(np.float64), task


def _last_layer_scores(checkpoints: Sequence[Any], rates: np.ndarray, Xt: np.ndarray, yt: np.ndarray,
                       Xq: np.ndarray, task: str, layer: str | None) -> np.ndarray:
    """``-sum_t eta_t (dL/dPhi_i)_k (<f_i, f(x')> + 1)`` at every checkpoint, as one product: the checkpoints'
    features side by side, ``[f^1(x') ... f^T(x')] @ [eta_1 dL^1_k f^1_i ... eta_T dL^T_k f^T_i]^T``."""
    query, train = [], []
    bias = np.zeros((Xt.shape[0], 1))
    for eta, net in zip(rates, checkpoints, strict=True):
        f_train, out_train = network_outputs(net, Xt, layer)
        query.append(network_outputs(net, Xq, layer)[0])
        dL = eta * loss_gradient(out_train, yt, task)  # (n_train, K)
        train.append(dL.T[:, :, None] * f_train[None, :, :])  # (K, n_train, d)
        bias = bias + dL
    A, B = np.hstack(query), np.concatenate(train, axis=2)  # (n, T d), (K, n_train, T d)
    out = np.empty((Xq.shape[0], Xt.shape[0], B.shape[0]))
    for k in range(B.shape[0]):
        np.matmul(A, B[k].T, out=out[:, :, k])
        out[:, :, k] += bias[None, :, k]
    return np.negative(out, out=out)


def _all_parameter_scores(module: Any, Xt: np.ndarray, yt: np.ndarray, Xq: np.ndarray, task: str) -> np.ndarray:
    import copy

    import torch
    from torch.func import functional_call, grad, jacrev, vmap

    net = copy.deepcopy(module).double().eval()
    params = {k: v.detach() for k, v in net.named_parameters()}

    def output(p: dict, x: Any) -> Any:
        return functional_call(net, p, (x.unsqueeze(0),)).reshape(-1)

    def loss(p: dict, x: Any, target: Any) -> Any:
        out = output(p, x)
        if task == "squared":
            return 0.5 * torch.sum((out - target) ** 2)
        if out.shape[0] == 1:
            return torch.nn.functional.binary_cross_entropy_with_logits(out, target.reshape(1))
        return torch.nn.functional.cross_entropy(out.unsqueeze(0), target.long().reshape(1))

    xt, xq = torch.as_tensor(Xt), torch.as_tensor(Xq)
    target = torch.as_tensor(yt)
    g_train = vmap(grad(loss), in_dims=(None, 0, 0))(params, xt, target)
    j_query = vmap(jacrev(output), in_dims=(None, 0))(params, xq)
    scores = sum(torch.einsum("qk...,t...->qtk", j_query[name], g_train[name]) for name in params)
    return -scores.numpy()  # type: ignore[union-attr]


def tracin_cp(checkpoints: Sequence[Any], X_train: Any, y_train: ArrayLike, X: Any, *,
              learning_rates: float | Sequence[float] = 1.0, params: str = "last", layer: str | None = None,
              max_memory: float | None = None) -> np.ndarray:
    """TracInCP scores of every training row for each explained row, summed over checkpoints.

    Parameters
    ----------
    checkpoints : sequence of torch.nn.Module
        The network saved along its training (same architecture; not modified).
    X_train, y_train : the training inputs and targets (numbers, or class labels)
    X : array-like, the explained rows
    learning_rates : float or sequence of float, default=1.0
        ``eta_t`` per checkpoint (one value: the same for all).
    params : {"last", "all"}, default="last"
        The parameters whose gradients meet: the output layer's, or every parameter (a small network:
        the per-example gradients of all parameters are held in memory).
    layer : str, optional
        The output layer's name (``params="last"``; default the last ``torch.nn.Linear``).
    max_memory : float, optional
        Byte budget of the scores and gradients held at once.

    Returns
    -------
    ndarray of shape (n, n_train) or (n, n_train, K)
        Positive: the steps on the training row raised the output. ``K`` the network's outputs (squeezed when 1).

    Examples
    --------
    >>> import numpy as np, torch
    >>> from shap_instances.neural import tracin_cp
    >>> nets = [torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 1)) for _ in range(2)]
    >>> X, y = np.random.default_rng(0).normal(size=(20, 3)), np.arange(20.0)
    >>> tracin_cp(nets, X, y, X[:2], learning_rates=0.1).shape
    (2, 20)
    """
    if params not in ("last", "all"):
        raise InvalidParameterError(f"params must be 'last' or 'all', got {params!r}.")
    if len(checkpoints) == 0:
        raise InvalidParameterError("checkpoints is empty: pass the networks saved along the training run.")
    rates = np.broadcast_to(np.asarray(learning_rates, dtype=np.float64), (len(checkpoints),))
    Xt = check_data(X_train, name="X_train")
    Xq = check_data(X, name="X", n_features=Xt.shape[1])
    _, out = network_outputs(checkpoints[0], Xt[:1], layer)
    K = out.shape[1]
    yt, task = _targets(y_train, Xt.shape[0], K)
    n_params = sum(p.numel() for p in checkpoints[0].parameters()) if params == "all" else 1
    check_memory(8.0 * (Xq.shape[0] * Xt.shape[0] * K * 2 + (Xt.shape[0] + Xq.shape[0] * K) * n_params),
                 f"TracInCP of {Xq.shape[0]} x {Xt.shape[0]} rows", max_memory=max_memory,
                 instead="Explain fewer rows at once, or use params='last'.")
    for net in checkpoints:
        last_linear_layer(net, layer)  # the same checks for every checkpoint
    if params == "last":
        total = _last_layer_scores(checkpoints, rates, Xt, yt, Xq, task, layer)
    else:
        total = np.zeros((Xq.shape[0], Xt.shape[0], K))
        for eta, net in zip(rates, checkpoints, strict=True):
            total += eta * _all_parameter_scores(net, Xt, yt, Xq, task)
    return total[:, :, 0] if K == 1 else total


def last_layer_influence(module: Any, X_train: Any, y_train: ArrayLike, X: Any, *, lam: float = 1e-3,
                         penalty: str = "l2", layer: str | None = None, output: int | str | None = None) -> np.ndarray:
    """Influence function of the fine-tuned last layer (Koh and Liang, 2017): ``g_i z'^T H^{-1} z_i``.

    The last layer is fine-tuned as :class:`~shap_instances.RepresenterExplainer` does
    (:func:`fine_tune_last_layer`); removing training row ``i`` moves it by one Newton step, which changes the
    explained output by about minus the score (positive: removing the row lowers the output).

    Parameters
    ----------
    module, X_train, y_train, lam, penalty, layer : as :func:`fine_tune_last_layer`
    X : array-like, the explained rows
    output : class label or index, for a network with several outputs

    Returns
    -------
    ndarray of shape (n, n_train)

    Examples
    --------
    >>> import numpy as np, torch
    >>> from shap_instances.neural import last_layer_influence
    >>> net = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 1))
    >>> X, y = np.random.default_rng(0).normal(size=(20, 3)), np.arange(20.0)
    >>> last_layer_influence(net, X, y, X[:2]).shape
    (2, 20)
    """
    tuned = fine_tune_last_layer(module, X_train, y_train, lam=lam, penalty=penalty, layer=layer)
    head = tuned.model[-1]
    influence = InfluenceFunction(head, tuned.features, tuned.targets, output=output)
    return influence.scores(tuned.model[0].transform(X))
