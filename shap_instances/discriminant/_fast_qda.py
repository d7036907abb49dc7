"""Exact refits of QuadraticDiscriminantAnalysis (its "svd" solver) on coalitions and permutation prefixes (0/1 target).

scikit-learn fits, per class ``c``, the mean ``m_c``, the covariance ``Sigma_c = (1 - r) W_c / d_c + r I``
(``W_c`` the class's scatter matrix, ``r`` = ``reg_param``; ``d_c = n_c`` from scikit-learn 1.9 on, ``n_c - 1``
before: :func:`qda_convention` asks the installed release) and the prior ``pi_c`` (``n_c / t``, or the user's), and
scores ``s_c(x) = -(x - m_c)^T Sigma_c^{-1} (x - m_c) / 2 - log det Sigma_c / 2 + log pi_c``; a binary model
predicts ``P(1 | x) = expit(s_1(x) - s_0(x))``.

Along a permutation, each class's mean and scatter grow by Welford's rank-one update (the statistics of
:class:`~shap_instances.discriminant.DiscriminantPath`), so every prefix's ``Sigma_c`` costs O(p^2) and one batched
eigendecomposition gives ``Sigma_c^{-1}``, ``log det`` and scikit-learn's rank test. The quadratic forms of the
explained rows are one matrix product per block of prefixes: with ``A = Sigma_c^{-1}``,
``(x - m)^T A (x - m) = phi(x) . vec(A) - 2 x . A m + m . A m``, ``phi(x)`` the products ``x_i x_j`` (``i <= j``), on
rows centred at the training mean (QDA is unchanged by a shift of every row, and the centring keeps the
expansion's cancellation small).

Prefixes scikit-learn cannot fit get v(empty), as on the refit path: one class only, a class with one row, and,
where scikit-learn refuses rank-deficient classes (1.9 on), a class with fewer than ``p`` rows or an eigenvalue of
``Sigma_c`` at most ``tol`` (its rank test: the ``min(n_c, p)`` scalings of the class are ``Sigma_c``'s eigenvalues
once ``n_c >= p``). Releases that do not refuse fit such classes anyway (in the subspace of their rows, or with
infinite scores): those prefixes (early ones, mostly) are refitted by scikit-learn itself.
The "eigen" solver (shrinkage, covariance estimators) and three classes or more are left to refits.
"""

from __future__ import annotations

import warnings
from functools import cache
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from scipy.special import expit
from sklearn.base import clone
from sklearn.discriminant_analysis import QuadraticDiscriminantAnalysis

from ..games import register_fast_path
from ._fast_discriminant import DiscriminantPath

__all__ = ["QuadraticDiscriminantPath", "qda_convention"]

#: Prefixes whose explained-row scores one matrix product computes.
BLOCK = 32


@cache
def qda_convention() -> tuple[int, bool]:
    """``(offset, refuses)`` of the installed scikit-learn's QDA: the class covariance is divided by
    ``n_c - offset``, and ``refuses`` says whether a rank-deficient class is refused (an error) rather than fitted
    in the subspace of its rows. Read from two tiny fits (scikit-learn 1.9: ``(0, True)``; 1.4: ``(1, False)``).

    Examples
    --------
    >>> from shap_instances.discriminant import qda_convention
    >>> qda_convention()[0] in (0, 1)
    True
    """
    X = np.array([[0.0, 0.0], [2.0, 1.0], [0.0, 2.0], [5.0, 5.0], [6.0, 5.0], [5.0, 7.0]])
    y = np.array([0, 0, 0, 1, 1, 1])
    covariance = QuadraticDiscriminantAnalysis(store_covariance=True).fit(X, y).covariance_[0]
    scatter = np.cov(X[:3].T, bias=True) * 3
    offset = 0 if np.allclose(covariance, scatter / 3) else 1
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            QuadraticDiscriminantAnalysis().fit(X[[0, 1, 3, 4, 5]], y[[0, 1, 3, 4, 5]])  # class 0: two rows in 2-d
    except Exception:  # noqa: BLE001 - scikit-learn 1.9's LinAlgError: the release refuses
        return offset, True
    return offset, False


@register_fast_path
class QuadraticDiscriminantPath(DiscriminantPath):
    """Exact refits of QuadraticDiscriminantAnalysis (``solver="svd"``), binary 0/1 target, on coalitions and prefixes.

    One of the :data:`~shap_instances.games.exact_fast_paths` (module docstring: the maths, the scikit-learn
    releases and what is left to refits). ``reg_param``, ``priors`` (None or two) and ``tol`` are read.

    Parameters
    ----------
    model : QuadraticDiscriminantAnalysis
        Only its hyper-parameters are read (it need not be fitted); cloned for the prefixes that releases before
        1.9 fit in a subspace.
    X, y : ndarray
        Training rows (the players) and their 0/1 targets.
    X_eval, y_eval : ndarray
        Explained rows and their 0/1 targets.
    empty : ndarray (n_eval,)
        v(empty).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.discriminant_analysis import QuadraticDiscriminantAnalysis as QDA
    >>> from shap_instances.discriminant import QuadraticDiscriminantPath
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(12, 2)); y = np.r_[np.zeros(6), np.ones(6)]; X[y == 1] += 1.0
    >>> path = QuadraticDiscriminantPath(QDA(reg_param=0.1), X, y, X, y, np.zeros(12))
    >>> refit = QDA(reg_param=0.1).fit(X, y).predict_proba(X)[:, 1] - y
    >>> bool(np.allclose(path.prefix_residuals(np.arange(12))[-1], refit))
    True
    """

    def __init__(self, model: Any, X: Any, y: ArrayLike, X_eval: Any, y_eval: ArrayLike, empty: ArrayLike) -> None:
        super().__init__(model, X, y, X_eval, y_eval, empty)
        self.model = model
        self.reg_param, self.tol = float(model.reg_param), float(model.tol)
        self.offset, self.refuses = qda_convention()
        #: The training rows' mean: the scores are computed on rows centred there.
        self.centre = self.X.mean(axis=0)
        centred_eval = self.X_eval - self.centre
        upper = np.triu_indices(self.X.shape[1])
        twice = np.where(upper[0] == upper[1], 1.0, 2.0)  # x_i x_j and x_j x_i share one coefficient
        #: ``[x_i x_j (i <= j, doubled off the diagonal), x]`` of each explained row, transposed: (p(p+1)/2 + p, m).
        self.features = np.vstack([(centred_eval[:, upper[0]] * centred_eval[:, upper[1]] * twice).T,
                                   centred_eval.T])
        self.upper = upper

    @classmethod
    def supports(cls, model: Any) -> bool:
        """QuadraticDiscriminantAnalysis with the "svd" solver (the only one before scikit-learn 1.8)."""
        return (type(model) is QuadraticDiscriminantAnalysis and getattr(model, "solver", "svd") == "svd"
                and getattr(model, "shrinkage", None) is None)

    def memory_bytes(self) -> float:
        """Bytes of one permutation's prefix statistics (two means and scatter matrices per prefix, and their
        eigendecompositions: ``6 n p^2`` floats) and its values (``n x n_outputs``)."""
        n, p = self.X.shape
        return 8.0 * n * (6 * p * p + len(self.empty))

    def _scores(self, counts: np.ndarray, means: np.ndarray, scatter: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(s_1 - s_0 on the explained rows (t, m), whether scikit-learn fits each prefix (t,))`` for prefixes
        with two rows of each class."""
        t, p = counts.shape[0], means.shape[-1]
        covariance = (1 - self.reg_param) * scatter / (counts - self.offset)[:, :, None, None]
        covariance += self.reg_param * np.eye(p)
        eigenvalues, vectors = np.linalg.eigh(covariance)
        # scikit-learn's rank test: p scalings (fewer with fewer rows than p) above tol; they are Sigma_c's eigenvalues
        fits = (eigenvalues > self.tol).all(axis=(1, 2)) & (counts >= p).all(axis=1)
        eigenvalues[~fits] = 1.0  # (such prefixes are not scored)
        inverse = (vectors / eigenvalues[:, :, None, :]) @ np.swapaxes(vectors, 2, 3)
        Am = np.einsum("tcij,tcj->tci", inverse, means)
        coefficients = np.concatenate([inverse[:, :, self.upper[0], self.upper[1]], -2.0 * Am], axis=2)
        constant = np.einsum("tci,tci->tc", means, Am) + np.log(eigenvalues).sum(axis=2)
        priors = counts / counts.sum(axis=1, keepdims=True) if self.priors is None else self.priors[None, :]
        sign = np.array([-1.0, 1.0])  # s_1 - s_0
        difference = np.empty((t, self.features.shape[1]))
        for start in range(0, t, BLOCK):
            block = slice(start, start + BLOCK)
            weights = np.einsum("c,bcf->bf", -0.5 * sign, coefficients[block])
            difference[block] = weights @ self.features
        difference += (-0.5 * constant + np.log(priors)) @ sign[:, None]
        return difference, fits

    def _values(self, rows: np.ndarray) -> np.ndarray:
        """Values of every prefix of ``rows``, (t, n_outputs)."""
        rows = np.asarray(rows, dtype=np.intp)
        counts, means, scatter = self._statistics(rows)
        means = means - self.centre
        residuals = np.empty((len(rows), len(self.y_eval)))
        both = (counts >= 2).all(axis=1)
        fits = np.zeros(len(rows), bool)
        if both.any():
            difference, fits[both] = self._scores(counts[both], means[both], scatter[both])
            residuals[both] = expit(difference) - self.y_eval
        out = residuals if self.W.shape[1] == 0 else residuals @ self.W
        out[~fits] = self.empty
        if not self.refuses:  # what 1.9 refuses, older releases fit (in a subspace, say): by scikit-learn itself
            for t in np.flatnonzero(both & ~fits):
                out[t] = self._refit(np.sort(rows[: t + 1]))  # in index order, as the game's masks
        return out

    def _refit(self, rows: np.ndarray) -> np.ndarray:
        """The refit path's value of ``rows``: scikit-learn's fit, or v(empty) where it fails or predicts non-finite
        values."""
        try:
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore")
                fitted = clone(self.model).fit(self.X[rows], self.y[rows])
                residuals = fitted.predict_proba(self.X_eval)[:, 1] - self.y_eval
        except (ValueError, np.linalg.LinAlgError):
            return self.empty
        if not np.all(np.isfinite(residuals)):
            return self.empty
        return residuals if self.W.shape[1] == 0 else residuals @ self.W
