"""Exact ridge / least-squares refits along permutations without refitting: running centred sums.

For the prefix of the first t training rows of a permutation, scikit-learn's Ridge (with intercept) solves
``(Xc^T Xc + alpha I) w = Xc^T yc`` on the prefix centred by its own means, then ``b = mean(y) - mean(x) w``.
The centred scatter matrices of all prefixes follow from one cumulative sum of Welford terms,
``M_t = sum_{s<=t} (x_s - mean_{s-1}) (x_s - mean_s)^T`` (no cancellation, unlike ``sum x x^T - n mean mean^T``),
and one batched solve gives every prefix's coefficients.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from sklearn.linear_model import LinearRegression, Ridge

__all__ = ["RidgePath", "RidgeProblem"]


class RidgeProblem(NamedTuple):
    """The penalised least-squares problem that every refit of a ridge residual game solves.

    ``f_S`` minimises ``sum_{i in S} (y_i - x_i w - b)^2 + alpha |w|^2`` (``b = 0`` without intercept), and the
    game's value is ``f_S(X_eval) - y_eval``. Estimators that exploit this structure
    (:class:`~shap_instances.estimators.RidgeInfluenceEstimator`) read it from
    :attr:`ResidualGame.ridge_problem <shap_instances.games.ResidualGame.ridge_problem>` instead of the model.

    Attributes
    ----------
    X : ndarray (n_train, p)
    y : ndarray of float64 (n_train,)
    X_eval : ndarray (n_eval, p)
    y_eval : ndarray (n_eval,)
    alpha : float
        The penalty (0 for LinearRegression).
    fit_intercept : bool

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import Ridge
    >>> from shap_instances.games import ResidualGame
    >>> X, y = np.arange(8.0).reshape(4, 2), np.array([1.0, 2.0, 2.0, 5.0])
    >>> problem = ResidualGame(Ridge(alpha=0.5), X, y).ridge_problem
    >>> problem.alpha, problem.fit_intercept, problem.X.shape
    (0.5, True, (4, 2))
    """

    X: np.ndarray
    y: np.ndarray
    X_eval: np.ndarray
    y_eval: np.ndarray
    alpha: float
    fit_intercept: bool


class RidgePath:
    """Exact refits of Ridge(alpha > 0) and LinearRegression on coalitions and on every permutation prefix.

    One of the :data:`~shap_instances.games.residual.FAST_PATHS` that :class:`~shap_instances.games.ResidualGame`
    picks by itself; a coalition costs one ``p x p`` solve instead of a refit, and all the prefixes of a
    permutation cost one batched solve (running centred sums).

    Parameters
    ----------
    model : Ridge or LinearRegression
        Only its hyper-parameters are read (it need not be fitted).
    X, y : ndarray
        Training rows (the players) and their targets.
    X_eval, y_eval : ndarray
        Explained rows and their targets.
    empty : ndarray, optional
        Unused: every coalition with at least one row can be fitted.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import Ridge
    >>> from shap_instances.games import RidgePath
    >>> X, y = np.arange(8.0).reshape(4, 2), np.array([1.0, 2.0, 2.0, 5.0])
    >>> path = RidgePath(Ridge(alpha=1.0), X, y, X, y)
    >>> refit = Ridge(alpha=1.0).fit(X, y).predict(X) - y
    >>> bool(np.allclose(path.residuals(np.ones(4, bool)), refit))
    True
    >>> RidgePath.supports(Ridge(alpha=0.0)), path.prefix_residuals(np.arange(4)).shape
    (False, (4, 4))
    """

    def __init__(self, model, X, y, X_eval, y_eval, empty=None):  # empty: unused, every fit has rows
        alpha, self.fit_intercept = self.penalty(model)
        # Work in units where |x| <= 1 and |y| <= 1, so the scatter matrices can neither overflow (data of
        # magnitude 1e300) nor swamp the penalty: with X = s Z and y = r u, the ridge problem on (X, y) with
        # penalty alpha is the one on (Z, u) with penalty alpha / s^2, and its residuals are r times those.
        self.x_scale = _scale(X, X_eval)
        self.y_scale = _scale(y, y_eval)
        self.alpha = alpha / self.x_scale / self.x_scale  # (not s**2: that overflows for s = 1e300)
        self.X, self.X_eval = X / self.x_scale, X_eval / self.x_scale
        self.y, self.y_eval = y / self.y_scale, y_eval / self.y_scale

    @classmethod
    def supports(cls, model) -> bool:
        """Ridge with a scalar ``alpha > 0`` and ``positive=False``, or LinearRegression with ``positive=False``."""
        if type(model) is Ridge:
            return np.ndim(model.alpha) == 0 and model.alpha > 0 and not getattr(model, "positive", False)
        return type(model) is LinearRegression and not model.positive

    @staticmethod
    def penalty(model) -> tuple[float, bool]:
        """``(alpha, fit_intercept)`` of a supported model (alpha 0 for LinearRegression)."""
        return (0.0 if isinstance(model, LinearRegression) else float(model.alpha)), bool(model.fit_intercept)

    def fits_all_rows(self) -> bool:
        """Always True: every non-empty coalition can be fitted."""
        return True

    def _solve(self, scatter, cross):
        """Coefficients of ``(scatter + alpha I) w = cross`` for one system or a stack of them.

        A Cholesky-free LU solve, as scikit-learn's "cholesky" ridge solver; where it finds the system
        singular to working precision, a least-squares solve of that system, as scikit-learn falls back to.
        """
        p = scatter.shape[-1]
        if self.alpha <= 0:
            return np.einsum("...ij,...j->...i", np.linalg.pinv(scatter, rcond=1e-12, hermitian=True), cross)
        system = scatter + self.alpha * np.eye(p)
        try:
            return np.linalg.solve(system, cross[..., None])[..., 0]
        except np.linalg.LinAlgError:
            if system.ndim == 2:
                return np.linalg.lstsq(system, cross, rcond=None)[0]
            return np.stack([np.linalg.lstsq(a, b, rcond=None)[0] for a, b in zip(system, cross, strict=True)])

    def coefficients(self, X, y):
        """(w (t, p), b (t,)) of the fits on every prefix X[:t], y[:t], t = 1..len(X), in scaled units."""
        t = np.arange(1, len(X) + 1, dtype=np.float64)[:, None]
        if self.fit_intercept:
            mean_x = np.cumsum(X, axis=0) / t
            mean_y = np.cumsum(y) / t[:, 0]
            previous_x = np.vstack([X[:1], mean_x[:-1]])  # mean before adding row s (row 1: any value)
            dx_before, dx_after = X - previous_x, X - mean_x
            scatter = np.cumsum(dx_before[:, :, None] * dx_after[:, None, :], axis=0)
            cross = np.cumsum(dx_before * (y - mean_y)[:, None], axis=0)
        else:
            scatter = np.cumsum(X[:, :, None] * X[:, None, :], axis=0)
            cross = np.cumsum(X * y[:, None], axis=0)
        w = self._solve(scatter, cross)
        b = mean_y - np.einsum("tp,tp->t", mean_x, w) if self.fit_intercept else np.zeros(len(X))
        return w, b

    def prefix_residuals(self, permutation):
        """Residuals on the evaluation rows of the fit on each prefix, shape (M, n_eval)."""
        w, b = self.coefficients(self.X[permutation], self.y[permutation])
        return (w @ self.X_eval.T + b[:, None] - self.y_eval[None, :]) * self.y_scale

    def residuals(self, mask):
        """Residuals on the evaluation rows of the fit on the rows in ``mask`` (non-empty): one solve."""
        X, y = self.X[mask], self.y[mask]
        if self.fit_intercept:
            mean_x, mean_y = X.mean(axis=0), y.mean()
            X, y = X - mean_x, y - mean_y
        w = self._solve(X.T @ X, X.T @ y)
        b = mean_y - mean_x @ w if self.fit_intercept else 0.0
        return (self.X_eval @ w + b - self.y_eval) * self.y_scale


def _scale(*arrays) -> float:
    """The largest magnitude in ``arrays`` (1 when all are zero): the unit the path computes in."""
    largest = max(float(np.max(np.abs(a))) if np.size(a) else 0.0 for a in arrays)
    return largest if largest > 0 and np.isfinite(largest) else 1.0
