"""The naive Bayes importance indicators that Lemaire, Clérot & Boullé compare with Shapley values (seed 003).

For an explained row ``x``, a class ``z`` and a variable ``j`` of a (weighted) naive Bayes model:

* IDI (information difference): ``log P(z | x) - log P(z | x without V_j)``;
* WOE (weight of evidence): ``logit P(z | x) - logit P(z | x without V_j)``;
* DOP (difference of probabilities): ``P(z | x) - P(z | x without V_j)``;
* KLD (the Kullback-Leibler term of class z): ``P(z | x) log(P(z | x) / P(z | x without V_j))``;
* MOP (modality probability): ``P(V_j = x_j | z) ** w_j``;
* LMOP (log modality probability): ``w_j log P(V_j = x_j | z)``;
* VPD (variable probability difference): ``MOP_j(z) - max_{q != z} MOP_j(q)``.

"Without V_j" is exact for a naive Bayes model: marginalising ``V_j`` out of ``P(c) prod_m P(x_m | c)``
removes its factor, so ``P(c | x without V_j)`` is the softmax of the joint log-likelihoods less variable
``j``'s term (``w_j = 0``). The derivations, and where the slides are garbled, are in
``docs/explainers/naive_bayes.md``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from scipy.special import logsumexp

from .._explanation import build_explanation
from ..exceptions import InvalidParameterError
from ..utils import check_fitted, row_names
from ._model import NaiveBayesModel

__all__ = ["nb_indicators", "NB_INDICATORS"]

#: The indicators :func:`nb_indicators` computes, in the order of the paper's slide.
NB_INDICATORS = ("IDI", "WOE", "MOP", "LMOP", "DOP", "KLD", "VPD")


def nb_indicators(model: Any, X: Any, *, indicators: Sequence[str] | None = None, target: Any = None,
                  weights: Any = None, feature_names: Sequence[str] | None = None) -> dict:
    """The per-variable importance indicators of a naive Bayes model, one Explanation per indicator.

    Parameters
    ----------
    model : fitted naive Bayes model, Pipeline ending in one, or WeightedNaiveBayes
        Anything :class:`~shap_instances.NaiveBayesExplainer` explains; a
        :class:`~shap_instances.naive_bayes.WeightedNaiveBayes` brings its weights.
    X : array-like or DataFrame of shape (n, p)
        The explained rows, in the model's input format.
    indicators : sequence of str, optional
        Any of ``"IDI", "WOE", "MOP", "LMOP", "DOP", "KLD", "VPD"`` (default all of them).
    target : class label, optional
        The class ``z`` the indicators are about. Default: the predicted class of each row.
    weights : array-like of shape (p,), optional
        Per-variable weights of a weighted naive Bayes model (as in ``NaiveBayesExplainer``).
    feature_names : sequence of str, optional

    Returns
    -------
    dict of str to shap.Explanation
        ``values`` of shape (n, p) for each indicator, in the model's input-column order. The indicators are
        not additive: ``base_values`` hold the reference each is measured against where there is one
        (``log P(z|x)`` for IDI, ``logit P(z|x)`` for WOE, ``P(z|x)`` for DOP and KLD) and 0 otherwise, and no
        efficiency is implied. ``explanation.target_class`` is the class ``z`` of each row.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import load_breast_cancer
    >>> from sklearn.naive_bayes import GaussianNB
    >>> from shap_instances.metrics import nb_indicators
    >>> X, y = load_breast_cancer(return_X_y=True)
    >>> model = GaussianNB().fit(X, y)
    >>> e = nb_indicators(model, X[:5], target=1)
    >>> e["IDI"].values.shape
    (5, 30)
    >>> p = model.predict_proba(X[:5])[:, 1]
    >>> bool(np.allclose(e["DOP"].values, p[:, None] - np.exp(np.log(p)[:, None] - e["IDI"].values)))
    True
    """
    wanted = NB_INDICATORS if indicators is None else tuple(str(i).upper() for i in np.atleast_1d(indicators))
    unknown = [i for i in wanted if i not in NB_INDICATORS]
    if unknown or not wanted:
        raise InvalidParameterError(f"nb_indicators: indicators must be some of {list(NB_INDICATORS)}; got "
                                    f"{indicators!r}.")
    # the model reader does the validation and the column bookkeeping (pipelines, names, weights)
    check_fitted(model)
    nb = NaiveBayesModel(model, weights=weights, feature_names=feature_names)
    raw = nb.raw_input(X, name="X")
    transformed = nb.transform(raw, name="X")
    if hasattr(transformed, "toarray"):
        transformed = transformed.toarray()
    transformed = np.asarray(transformed, dtype=np.float64)[:, nb.order]
    classes = nb.classes
    # terms[i, m, c] = w_m log P(x_im | c), input-column order
    terms = nb.input_terms.terms(transformed, np.eye(len(classes))) * nb.weights[None, :, None]
    jll = nb.terms.class_terms + terms.sum(axis=1)  # (n, k)
    z = _target_classes(classes, target, jll)
    data, names = _display_data(raw), row_names(X)
    results = {}
    for name, (values, base) in _indicator_values(wanted, jll, terms, z).items():
        explanation = build_explanation(np.array(values, dtype=np.float64), np.array(base, dtype=np.float64),
                                        feature_names=list(nb.feature_names), data=data, row_names=names)
        explanation.target_class = classes[z]
        explanation.indicator = name
        results[name] = explanation
    return results


def _target_classes(classes: np.ndarray, target: Any, jll: np.ndarray) -> np.ndarray:
    """The class index ``z`` of each row: ``target``'s, or the predicted class."""
    if target is None:
        return np.argmax(jll, axis=1)
    matches = [i for i, c in enumerate(classes) if c == target or str(c) == str(target)]
    if not matches:
        raise InvalidParameterError(f"nb_indicators: target must be one of the model's classes "
                                    f"{classes.tolist()}; got {target!r}.")
    return np.full(jll.shape[0], matches[0])


def _indicator_values(wanted: Sequence[str], jll: np.ndarray, terms: np.ndarray, z: np.ndarray
                      ) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """``{indicator: (values (n, p), base (n,))}`` from the joint log-likelihoods and the weighted terms."""
    n, _, k = terms.shape
    log_post = jll - logsumexp(jll, axis=1, keepdims=True)
    reduced = jll[:, None, :] - terms  # (n, p, k): without variable j
    log_post_without = reduced - logsumexp(reduced, axis=2, keepdims=True)
    rows = np.arange(n)
    lp = log_post[rows, z]  # (n,)
    lpw = log_post_without[rows, :, z]  # (n, p)
    # log(1 - P(z | .)) as the log-sum of the other classes' posteriors: exact where P(z | .) rounds to 1
    others = np.arange(k)[None, :] == z[:, None]
    lq = logsumexp(np.where(others, -np.inf, log_post), axis=1)
    lqw = logsumexp(np.where(others[:, None, :], -np.inf, log_post_without), axis=2)
    own = terms[rows, :, z]  # (n, p): w_j log P(x_j | z)
    results = {}
    for name in wanted:
        if name == "IDI":
            results[name] = lp[:, None] - lpw, lp
        elif name == "WOE":
            results[name] = (lp - lq)[:, None] - (lpw - lqw), lp - lq
        elif name == "DOP":
            results[name] = np.exp(lp)[:, None] - np.exp(lpw), np.exp(lp)
        elif name == "KLD":
            results[name] = np.exp(lp)[:, None] * (lp[:, None] - lpw), np.exp(lp)
        elif name == "LMOP":
            results[name] = own, np.zeros(n)
        elif name == "MOP":
            results[name] = np.exp(own), np.zeros(n)
        else:  # VPD
            rest = np.where(np.arange(k)[None, None, :] == z[:, None, None], -np.inf, terms)
            results[name] = np.exp(own) - np.exp(rest.max(axis=2)), np.zeros(n)
    return results


def _display_data(raw: Any) -> np.ndarray | None:
    values = raw.to_numpy() if hasattr(raw, "to_numpy") else np.asarray(raw)
    if hasattr(values, "toarray"):
        values = values.toarray()
    try:
        return np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        return None
