"""Exact ridge / least-squares refits along permutations without refitting: running centred sums.

For the prefix of the first t training rows of a permutation, scikit-learn's Ridge (with intercept) solves
``(Xc^T Xc + alpha I) w = Xc^T yc`` on the prefix centred by its own means, then ``b = mean(y) - mean(x) w``.
The centred scatter matrices of all prefixes follow from one cumulative sum of Welford terms,
``M_t = sum_{s<=t} (x_s - mean_{s-1}) (x_s - mean_s)^T`` (no cancellation, unlike ``sum x x^T - n mean mean^T``),
and one batched solve gives every prefix's coefficients.
"""

from __future__ import annotations

import numpy as np
from sklearn.linear_model import LinearRegression, Ridge

__all__ = ["RidgePath"]


class RidgePath:
    """Residuals of Ridge(alpha) / LinearRegression fits on coalitions and on every permutation prefix."""

    def __init__(self, model, X, y, X_eval, y_eval, empty=None):  # empty: unused, every fit has rows
        self.alpha = 0.0 if isinstance(model, LinearRegression) else float(model.alpha)
        self.fit_intercept = bool(model.fit_intercept)
        self.X, self.y, self.X_eval, self.y_eval = X, y, X_eval, y_eval

    @classmethod
    def supports(cls, model) -> bool:
        if type(model) is Ridge:
            return np.ndim(model.alpha) == 0 and model.alpha > 0 and not getattr(model, "positive", False)
        return type(model) is LinearRegression and not model.positive

    def _solve(self, scatter, cross):
        p = scatter.shape[-1]
        if self.alpha > 0:
            return np.linalg.solve(scatter + self.alpha * np.eye(p), cross[..., None])[..., 0]
        return np.einsum("...ij,...j->...i", np.linalg.pinv(scatter, rcond=1e-12, hermitian=True), cross)

    def coefficients(self, X, y):
        """(w (t, p), b (t,)) of the fits on every prefix X[:t], y[:t], t = 1..len(X)."""
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
        return w @ self.X_eval.T + b[:, None] - self.y_eval[None, :]

    def residuals(self, mask):
        """Residuals on the evaluation rows of the fit on the rows in ``mask`` (non-empty): one solve."""
        X, y = self.X[mask], self.y[mask]
        if self.fit_intercept:
            mean_x, mean_y = X.mean(axis=0), y.mean()
            X, y = X - mean_x, y - mean_y
        w = self._solve(X.T @ X, X.T @ y)
        b = mean_y - mean_x @ w if self.fit_intercept else 0.0
        return self.X_eval @ w + b - self.y_eval
