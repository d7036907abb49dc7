"""Case-deletion diagnostics DEL+ / DEL- and AUC-DEL (Tsai et al., 2023, Section 6.1; Yeh et al., 2022).

For an explained point ``x'`` and importance scores over the training set, DEL+(k) removes the ``k``
training points with the largest scores, refits a clone of the model and reports the change of the
prediction at ``x'``; DEL-(k) removes the ``k`` smallest (most negative). A good method makes DEL+
negative and DEL- positive. AUC-DEL is the mean over the removal sizes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from joblib import Parallel, delayed
from numpy.typing import ArrayLike
from sklearn.base import clone

from ..utils import check_data, check_fitted

__all__ = ["DeletionResult", "deletion_diagnostics"]


@dataclass
class DeletionResult:
    """DEL+ and DEL- per explained point and removal size.

    Attributes
    ----------
    del_plus, del_minus : ndarray of shape (n_explained, n_sizes)
    sizes : ndarray of int, the numbers of removed training points
    """

    del_plus: np.ndarray
    del_minus: np.ndarray
    sizes: np.ndarray

    @property
    def auc_del_plus(self) -> np.ndarray:
        """AUC-DEL+ per explained point (smaller is better)."""
        return self.del_plus.mean(axis=1)

    @property
    def auc_del_minus(self) -> np.ndarray:
        """AUC-DEL- per explained point (larger is better)."""
        return self.del_minus.mean(axis=1)


def _score(model: Any, Xq: Any, output: int | None) -> np.ndarray:
    if hasattr(model, "decision_function"):
        f = np.asarray(model.decision_function(Xq), dtype=np.float64)
    else:
        f = np.asarray(model.predict(Xq), dtype=np.float64)
    if f.ndim == 2:
        f = f[:, 0 if output is None else output]
    return f


def _one_point(model: Any, X_train: Any, y_train: np.ndarray, sample_weight: np.ndarray | None, xq: Any,
               order: np.ndarray, sizes: np.ndarray, base: np.ndarray, output: int | None) -> np.ndarray:
    out = np.empty((2, len(sizes)))
    n = X_train.shape[0]
    for side, idx_order in enumerate((order, order[::-1])):
        for col, k in enumerate(sizes):
            keep = np.ones(n, dtype=bool)
            keep[idx_order[:k]] = False
            fit_kw = {} if sample_weight is None else {"sample_weight": sample_weight[keep]}
            refit = clone(model).fit(X_train[keep], y_train[keep], **fit_kw)
            out[side, col] = _score(refit, xq, output)[0] - base
    return out


def deletion_diagnostics(model: Any, X_train: Any, y_train: ArrayLike, X: Any, scores: ArrayLike, *,
                         fractions: ArrayLike = (0.01, 0.02, 0.03, 0.04, 0.05), sizes: ArrayLike | None = None,
                         sample_weight: ArrayLike | None = None, output: int | None = None,
                         n_jobs: int | None = None) -> DeletionResult:
    """DEL+ / DEL- of ``scores`` for each row of ``X``, refitting clones of ``model`` (parallel over rows).

    Parameters
    ----------
    model : fitted scikit-learn estimator (refitted as clones, never modified); any estimator with ``fit`` and
        ``predict`` (or ``decision_function``), e.g. the factor models of :mod:`shap_instances.lowrank` on
        (n, 2) (user, item) pairs
    X_train, y_train : the data it was fitted on (sparse X stays sparse)
    X : array of shape (n, p), the explained points
    scores : array of shape (n, n_train), importance of each training point for each explained point
    fractions : sequence of float in (0, 1], default 1%..5%
        Removal sizes as fractions of the training set (at least one point each).
    sizes : sequence of int, optional
        Removal sizes as counts instead (e.g. 10..50 ratings, Tsai et al.'s Table 2); overrides ``fractions``.
    sample_weight : training sample weights passed to ``fit``
    output : int, column of a multi-output decision function
    n_jobs : joblib workers over explained points

    Returns
    -------
    DeletionResult

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import Ridge
    >>> from shap_instances.metrics import deletion_diagnostics, random_scores
    >>> rng = np.random.default_rng(0)
    >>> X, y = rng.normal(size=(60, 3)), rng.normal(size=60)
    >>> model = Ridge().fit(X, y)
    >>> res = deletion_diagnostics(model, X, y, X[:2], random_scores(2, 60, random_state=0))
    >>> res.del_plus.shape
    (2, 5)
    """
    check_fitted(model)
    Xt = check_data(X_train, name="X_train", allow_sparse=True)
    Xq = check_data(X, name="X", allow_sparse=True, n_features=Xt.shape[1])
    y_train = np.asarray(y_train)
    scores = np.asarray(scores, dtype=np.float64)
    n_train = Xt.shape[0]
    if scores.shape != (Xq.shape[0], n_train):
        raise ValueError(f"scores must have shape {(Xq.shape[0], n_train)} (explained x training), got {scores.shape}.")
    if sizes is not None:
        counts = np.asarray(sizes).reshape(-1)
        if counts.size == 0 or counts.dtype.kind not in "iu" or np.any(counts < 1) or np.any(counts > n_train):
            raise ValueError(f"sizes must be integers in [1, {n_train}], got {sizes!r}.")
        removed = counts.astype(int)
    else:
        fr = np.asarray(fractions, dtype=np.float64).reshape(-1)
        if fr.size == 0 or np.any(fr <= 0) or np.any(fr > 1):
            raise ValueError(f"fractions must lie in (0, 1], got {fractions!r}.")
        removed = np.maximum(1, np.round(fr * n_train).astype(int))
    sw = None if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
    base = _score(model, Xq, output)
    orders = np.argsort(-scores, axis=1, kind="stable")
    rows = [Xq[j:j + 1] for j in range(Xq.shape[0])]
    results = Parallel(n_jobs=n_jobs)(
        delayed(_one_point)(model, Xt, y_train, sw, rows[j], orders[j], removed, base[j], output)
        for j in range(Xq.shape[0])
    )
    stacked = np.stack(results) if results else np.empty((0, 2, len(removed)))
    return DeletionResult(stacked[:, 0], stacked[:, 1], removed)

