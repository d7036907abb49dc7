"""Exact refits of LinearDiscriminantAnalysis(solver="lsqr") on coalitions and permutation prefixes (0/1 target).

scikit-learn's lsqr solver fits the class means ``m_c``, the priors ``pi_c`` (``n_c / t``, or the user's, made to sum
to 1), the within-class covariance ``Sigma = sum_c pi_c C_c`` with ``C_c = W_c / n_c`` each class's biased
empirical covariance (``W_c`` its scatter matrix; with a float ``shrinkage`` s, ``C_c`` becomes
``(1 - s) C_c + s tr(C_c) / p I``), then ``coef_c = lstsq(Sigma, m_c)`` and ``b_c = -m_c . coef_c / 2 + log pi_c``; a
binary model predicts ``P(1 | x) = expit(x . (coef_1 - coef_0) + b_1 - b_0)``.

Along a permutation, each class's mean and scatter matrix grow by Welford's rank-one update
``W <- W + (x - m_old)(x - m_new)^T`` (a cumulative sum over the class's rows in permutation order, looked up at
each prefix), so all prefixes' ``Sigma`` come from O(n p^2) work and one batched ``p x p`` solve; a prefix whose
``Sigma`` is not well conditioned (fewer rows than features, say) is solved by scipy's ``lstsq`` as scikit-learn
does (the minimum-norm solution). Prefixes scikit-learn cannot fit or predict with get v(empty), as on the refit
path: a single row, two rows of two classes (no more samples than classes), or class 1 alone (its ``predict_proba``
fails on one class, unless the user gave two ``priors``: it then returns two columns whose first, the one the refit
path reads, is ``priors[0]``); class 0 alone (two rows or more) predicts P(1) = 0. The "svd" solver (a pooled covariance
divided by ``t - 2``, and a rank cut on the standardised data), the "eigen" solver (a generalised eigenproblem
that fails where lsqr takes the minimum-norm solution), ``shrinkage="auto"`` and covariance estimators are not
covered: such models are refitted.
"""

from __future__ import annotations

import copy
from typing import Any, ClassVar, Self

import numpy as np
from numpy.typing import ArrayLike
from scipy import linalg
from scipy.special import expit
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis

from ..games import register_fast_path

__all__ = ["DiscriminantPath"]


@register_fast_path
class DiscriminantPath:
    """Exact refits of LinearDiscriminantAnalysis(solver="lsqr"), binary 0/1 target, on coalitions and prefixes.

    One of the :data:`~shap_instances.games.exact_fast_paths` (module docstring: the maths, and what is left to
    refits). ``shrinkage`` None or a float, ``covariance_estimator`` None, ``priors`` None or given.

    Parameters
    ----------
    model : LinearDiscriminantAnalysis
        Only its hyper-parameters are read (it need not be fitted).
    X, y : ndarray
        Training rows (the players) and their 0/1 targets.
    X_eval, y_eval : ndarray
        Explained rows and their 0/1 targets.
    empty : ndarray (n_eval,)
        v(empty).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.discriminant_analysis import LinearDiscriminantAnalysis as LDA
    >>> from shap_instances.discriminant import DiscriminantPath
    >>> X = np.array([[0.0, 1.0], [1.0, 0.0], [2.0, 2.5], [3.0, 2.0], [0.5, 0.2]]); y = np.array([0.0, 0, 1, 1, 0])
    >>> path = DiscriminantPath(LDA(solver="lsqr"), X, y, X, y, np.zeros(5))
    >>> refit = LDA(solver="lsqr").fit(X, y).predict_proba(X)[:, 1] - y
    >>> bool(np.allclose(path.prefix_residuals(np.arange(5))[-1], refit))
    True
    """

    #: Prefix values come from batched NumPy solves, scattered by the generic accumulator.
    fused: ClassVar[bool] = False

    def __init__(self, model: Any, X: Any, y: ArrayLike, X_eval: Any, y_eval: ArrayLike, empty: ArrayLike) -> None:
        self.X, self.X_eval = np.asarray(X, dtype=np.float64), np.asarray(X_eval, dtype=np.float64)
        self.y = np.asarray(y, dtype=np.float64)
        self.y_eval, self.empty = np.asarray(y_eval, dtype=np.float64), np.asarray(empty, dtype=np.float64)
        self.W = np.zeros((len(self.y_eval), 0))  # (n_eval, K) weights of an aggregate game, else no column
        shrinkage = getattr(model, "shrinkage", None)  # (QDA before scikit-learn 1.8 has none)
        self.shrinkage = 0.0 if shrinkage is None else float(shrinkage)
        self.priors = None if model.priors is None else np.asarray(model.priors, dtype=np.float64)
        #: False for targets other than 0/1 or priors of other than two classes: the game then refits.
        self.usable = bool(np.isin(self.y, (0.0, 1.0)).all() and (self.priors is None or len(self.priors) == 2))
        if self.priors is not None and self.usable:
            self.priors = self.priors / self.priors.sum()

    @classmethod
    def supports(cls, model: Any) -> bool:
        """LinearDiscriminantAnalysis with ``solver="lsqr"``, ``shrinkage`` None or a float, no covariance estimator."""
        return (type(model) is LinearDiscriminantAnalysis and model.solver == "lsqr"
                and model.covariance_estimator is None and not isinstance(model.shrinkage, str))

    def aggregated(self, weights: ArrayLike) -> Self:
        """The path of the weighted sums ``weights^T residuals`` (weights of shape (n_eval, K))."""
        weights = np.asarray(weights, dtype=np.float64)
        new = copy.copy(self)
        new.W = weights if self.W.shape[1] == 0 else self.W @ weights
        new.empty = weights.T @ self.empty
        return new

    def fits_all_rows(self) -> bool:
        """False: the game fits the model once on all rows, so it refuses exactly what the refit path refuses."""
        return False

    def memory_bytes(self) -> float:
        """Bytes of one permutation's prefix statistics: two scatter matrices, the covariances and their sum per
        prefix (``4 n p^2`` floats), and its values (``n x n_outputs``)."""
        n, p = self.X.shape
        return 8.0 * n * (4 * p * p + len(self.empty))

    def _statistics(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per prefix of ``rows`` and class: counts (t, 2), means (t, 2, p) and scatter matrices (t, 2, p, p)."""
        t, p = len(rows), self.X.shape[1]
        counts, means, scatter = np.zeros((t, 2)), np.zeros((t, 2, p)), np.zeros((t, 2, p, p))
        for c in (0, 1):
            where = np.flatnonzero(self.y[rows] == c)
            Xc = self.X[rows[where]]
            k = np.arange(1, len(where) + 1, dtype=np.float64)[:, None]
            mean = np.cumsum(Xc, axis=0) / k
            before = Xc - np.vstack([Xc[:1], mean[:-1]])
            class_scatter = np.cumsum(before[:, :, None] * (Xc - mean)[:, None, :], axis=0)
            seen = np.cumsum(self.y[rows] == c)  # class-c rows among the first t
            counts[:, c] = seen
            has = seen > 0
            means[has, c] = mean[seen[has] - 1]
            scatter[has, c] = class_scatter[seen[has] - 1]
        return counts, means, scatter

    def _probabilities(self, counts: np.ndarray, means: np.ndarray, scatter: np.ndarray) -> np.ndarray:
        """P(1 | explained rows) of the fits with both classes, (t, n_eval)."""
        t = counts.sum(axis=1)
        priors = counts / t[:, None] if self.priors is None else np.broadcast_to(self.priors, counts.shape)
        covariances = scatter / counts[:, :, None, None]
        if self.shrinkage:
            p = means.shape[-1]
            trace = np.trace(covariances, axis1=2, axis2=3) / p
            covariances = (1 - self.shrinkage) * covariances + self.shrinkage * trace[:, :, None, None] * np.eye(p)
        sigma = np.einsum("tc,tcij->tij", priors, covariances)
        coef = np.empty_like(means)  # (t, 2, p)
        eigenvalues = np.linalg.eigvalsh(sigma)
        good = eigenvalues[:, 0] > 1e-10 * np.maximum(eigenvalues[:, -1], np.finfo(float).tiny)
        if good.any():
            coef[good] = np.linalg.solve(sigma[good], np.swapaxes(means[good], 1, 2)).swapaxes(1, 2)
        for s in np.flatnonzero(~good):  # below full rank: scikit-learn's minimum-norm least squares
            coef[s] = linalg.lstsq(sigma[s], means[s].T)[0].T
        with np.errstate(divide="ignore"):
            intercept = -0.5 * np.einsum("tcp,tcp->tc", means, coef) + np.log(priors)
        decision = (coef[:, 1] - coef[:, 0]) @ self.X_eval.T + (intercept[:, 1] - intercept[:, 0])[:, None]
        return expit(decision)

    def _values(self, rows: np.ndarray) -> np.ndarray:
        """Values of every prefix of ``rows``, (t, n_outputs)."""
        counts, means, scatter = self._statistics(rows)
        residuals = np.empty((len(rows), len(self.y_eval)))
        both = (counts > 0).all(axis=1) & (counts.sum(axis=1) > 2)
        if both.any():
            residuals[both] = self._probabilities(counts[both], means[both], scatter[both]) - self.y_eval
        residuals[counts[:, 1] == 0] = -self.y_eval  # class 0 alone: P(1) = 0
        alone = (counts[:, 0] == 0) & (counts[:, 1] > 1)
        if self.priors is not None:  # scikit-learn's two priors on class 1 alone: two columns, its own reads P = pi_0
            residuals[alone] = self.priors[0] - self.y_eval
        out = residuals if self.W.shape[1] == 0 else residuals @ self.W
        failed = (~both & (counts[:, 1] > 0) & ~(alone & (self.priors is not None))) | (counts.sum(axis=1) == 1)
        out[failed] = self.empty
        return out

    def residuals(self, mask: np.ndarray) -> np.ndarray:
        """Residuals (or their weighted sums) of the fit on the rows in ``mask`` (non-empty)."""
        return self._values(np.flatnonzero(mask))[-1]

    def prefix_values_batch(self, permutations: np.ndarray) -> np.ndarray:
        """Values of every prefix of each permutation, shape (k, n + 1, n_outputs), ``[:, 0]`` = v(empty)."""
        permutations = np.asarray(permutations, dtype=np.intp)
        out = np.empty((len(permutations), permutations.shape[1] + 1, len(self.empty)))
        out[:, 0] = self.empty
        for r, permutation in enumerate(permutations):
            out[r, 1:] = self._values(permutation)
        return out

    def prefix_residuals(self, permutation: ArrayLike) -> np.ndarray:
        """Residuals on the evaluation rows of the fit on each prefix, shape (n, n_outputs)."""
        return self._values(np.asarray(permutation, dtype=np.intp))
