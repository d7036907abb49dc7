"""Fine-tune a network's last layer to a stationary point of an explicitly regularised objective.

Yeh et al. (2018) explain a network through its last layer ``Theta`` fitted, with the penultimate features
``f_i`` frozen, to a stationary point of

.. math::

    \\frac{1}{n} \\sum_i L(y_i, \\Theta f_i + b) + \\lambda \\lVert \\Theta \\rVert^2

(``l1``: ``lambda ||Theta||_1``, the high-dimensional version of Tsai et al., 2023). With the features fixed this
is a regularised generalised linear model, so it is solved here to its optimum by scikit-learn's exact solvers
(``Ridge`` / ``Lasso`` for the squared loss ``L = ||y - Phi||^2 / 2``, ``LogisticRegression`` for the logistic
and softmax cross-entropies) with the strengths that make their objectives proportional to the one above. The
result is an ordinary fitted pipeline ``NetworkFeatures -> head`` that the linear representer and influence
maths read (``docs/explainers/representer.md`` derives the mapping).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from sklearn.linear_model import Lasso, LogisticRegression, Ridge
from sklearn.pipeline import Pipeline
from sklearn.utils.multiclass import type_of_target

from ..exceptions import DataValidationError, UnsupportedModelError
from ..utils import check_labels, check_target
from ._network import NetworkFeatures, network_outputs

__all__ = ["FineTunedLastLayer", "fine_tune_last_layer"]


@dataclass
class FineTunedLastLayer:
    """What :func:`fine_tune_last_layer` returns.

    Attributes
    ----------
    model : sklearn.pipeline.Pipeline
        ``NetworkFeatures(module) -> head``, the head fitted on the penultimate features.
    features : ndarray of shape (n_train, d)
        The training rows' penultimate features.
    task : str
        ``"squared"``, ``"logistic"`` (binary) or ``"multinomial"``.
    targets : ndarray
        The training targets the head was fitted on (class labels or numbers).
    fidelity : float
        ``max |head(f_i) - network(x_i)| / max |network(x_i)|`` on the training rows: how far fine-tuning moved
        the output (the explained quantity is the fine-tuned network's output).
    """

    model: Pipeline
    features: np.ndarray
    task: str
    targets: np.ndarray
    fidelity: float


def _task(y: np.ndarray, n_outputs: int) -> str:
    """Float targets are numbers (squared loss), whatever their values (ratings 1.0..5.0 too); others are labels."""
    if y.dtype.kind == "f":
        return "squared"
    kind = type_of_target(y)
    if kind == "binary" and n_outputs <= 2:
        return "logistic"
    if kind in ("binary", "multiclass"):
        return "multinomial"
    raise DataValidationError(f"y: targets of type {kind!r} are not supported; pass numbers (regression) or one "
                              "class label per row (classification).")


def _head(task: str, penalty: str, lam: float, n: int) -> Any:
    """The scikit-learn model whose objective is ``n / c`` times the fine-tuning objective (``c`` > 0)."""
    if task == "squared":  # (1/n) sum ||r||^2/2 + lam ||w||^2  <=>  sum ||r||^2/2 + (2 lam n)/2 ||w||^2
        if penalty == "l2":
            return Ridge(alpha=2.0 * lam * n, solver="cholesky")
        return Lasso(alpha=lam, tol=1e-14, max_iter=1_000_000)  # (1/2n) sum r^2 + lam ||w||_1
    if penalty == "l2":  # C sum L + ||w||^2/2 with C = 1 / (2 lam n)
        return LogisticRegression(C=1.0 / (2.0 * lam * n), solver="newton-cholesky", tol=1e-14, max_iter=1000)
    if task == "multinomial":
        raise UnsupportedModelError("penalty='l1' fine-tunes a single-output (regression or binary) last layer; "
                                    "use penalty='l2' for a network with several classes.")
    # liblinear penalises the intercept through a synthetic feature: the representer carries it exactly
    return LogisticRegression(C=1.0 / (lam * n), l1_ratio=1.0, solver="liblinear", tol=1e-12, max_iter=100_000)


def _original_decision(outputs: np.ndarray, task: str) -> np.ndarray:
    if task == "logistic" and outputs.shape[1] == 2:
        return outputs[:, 1:] - outputs[:, :1]  # a two-logit binary network: its log-odds
    return outputs


def fine_tune_last_layer(module: Any, X: Any, y: Any, *, lam: float = 1e-3, penalty: str = "l2",
                         layer: str | None = None) -> FineTunedLastLayer:
    """Fit the last layer of ``module`` on its frozen penultimate features to the regularised optimum.

    Parameters
    ----------
    module : torch.nn.Module
        The trained network, whose output is its last ``torch.nn.Linear`` (not modified).
    X : array-like of shape (n_train, ...)
        The training inputs.
    y : array-like of shape (n_train,) or (n_train, n_outputs)
        The training targets: floats are numbers (squared loss), whatever their values; integers, booleans and
        strings are class labels (binary: logistic loss on one logit, or on the difference of two; more classes:
        softmax cross-entropy, one output per class).
    lam : float, default=1e-3
        ``lambda`` of the fine-tuning objective (module docstring).
    penalty : {"l2", "l1"}, default="l2"
        ``"l2"``: Yeh et al.'s representer; ``"l1"``: Tsai et al.'s high-dimensional one (single output).
    layer : str, optional
        The output layer's name in ``module.named_modules()`` (default: the last ``torch.nn.Linear``).

    Returns
    -------
    FineTunedLastLayer

    Examples
    --------
    >>> import numpy as np, torch
    >>> from shap_instances.neural import fine_tune_last_layer
    >>> torch.manual_seed(0)  # doctest: +ELLIPSIS
    <torch._C.Generator object at ...>
    >>> net = torch.nn.Sequential(torch.nn.Linear(3, 8), torch.nn.Tanh(), torch.nn.Linear(8, 1))
    >>> X = np.random.default_rng(0).normal(size=(50, 3)); y = X[:, 0] - X[:, 1]
    >>> tuned = fine_tune_last_layer(net, X, y, lam=1e-2)
    >>> tuned.task, tuned.features.shape
    ('squared', (50, 8))
    """
    features, outputs = network_outputs(module, X, layer)
    n, n_outputs = outputs.shape
    y_arr = np.asarray(y)
    if y_arr.shape[0] != n:
        raise DataValidationError(f"y has {y_arr.shape[0]} rows, X has {n}; pass the training targets of X.")
    task = _task(y_arr, n_outputs)
    if task == "squared":
        targets = check_target(y_arr, n).reshape(y_arr.shape)
        if targets.reshape(n, -1).shape[1] != n_outputs:
            raise DataValidationError(f"y has {targets.reshape(n, -1).shape[1]} target columns, the network "
                                      f"{n_outputs} outputs.")
    else:
        targets = check_labels(y_arr, n)
        n_classes = np.unique(targets).size
        if task == "multinomial" and n_classes != n_outputs:
            raise DataValidationError(f"y has {n_classes} classes, the network {n_outputs} outputs: a classifier "
                                      "is explained through one logit per class.")
    head = _head(task, penalty, float(lam), n).fit(features, targets)
    model = Pipeline([("features", NetworkFeatures(module, layer)), ("head", head)])
    decision = np.asarray(head.decision_function(features) if task != "squared" else head.predict(features))
    original = _original_decision(outputs, task)
    fidelity = float(np.max(np.abs(decision.reshape(n, -1) - original)) / max(float(np.max(np.abs(original))), 1e-300))
    return FineTunedLastLayer(model, features, task, targets, fidelity)
