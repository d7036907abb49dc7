"""Exact leave-one-out values of ridge and least-squares regression, without refits.

For the augmented design ``Z = [1, X]`` (or ``X`` without an intercept) and the penalty ``P = alpha * I``
(the intercept unpenalised, as in scikit-learn), the full fit solves ``A beta = Z' y`` with ``A = Z'Z + P``.
Removing row ``i`` changes ``A`` by the rank-one term ``z_i z_i'``, and the Sherman-Morrison formula gives

    f_{N \\ i}(x) = f_N(x) - (z_x' A^{-1} z_i) * r_i / (1 - h_i),

with the residual ``r_i = y_i - f_N(x_i)`` and the leverage ``h_i = z_i' A^{-1} z_i``. The leave-one-out value
``f_N(x) - f_{N \\ i}(x)`` is therefore one matrix product: no refit at all.
"""

from __future__ import annotations

import numbers

import numpy as np
import scipy.linalg
from numpy.typing import ArrayLike

from shap_instances.exceptions import DataValidationError
from shap_instances.utils import Interval, check_data, check_target, validate_params

__all__ = ["linear_loo_values"]

#: Leverages closer to 1 than this make ``1 - h_i`` meaningless: removing the row leaves the fit underdetermined.
_LEVERAGE_MARGIN = 1e-8
#: Condition numbers of ``Z'Z + P`` beyond this lose too many digits for the closed form: refit instead.
_MAX_CONDITION = 1e10


def linear_loo_values(X_train: ArrayLike, y: ArrayLike, X: ArrayLike, *, alpha: float = 0.0,
                      fit_intercept: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """Leave-one-out values of ridge (``alpha > 0``) or least-squares (``alpha = 0``) regression, in closed form.

    ``values[j, i] = f_N(X[j]) - f_{N \\ i}(X[j])``, where ``f_S`` is the model ``Ridge(alpha, fit_intercept)``
    (``LinearRegression`` for ``alpha = 0``) fitted on the training rows ``S``: the change in the prediction
    for ``X[j]`` that removing training row ``i`` causes.

    Parameters
    ----------
    X_train : array-like of shape (n_train, n_features)
    y : array-like of shape (n_train,)
    X : array-like of shape (n_explained, n_features)
    alpha : float, default=0.0
        The ridge penalty (the intercept is not penalised).
    fit_intercept : bool, default=True

    Returns
    -------
    values : ndarray of shape (n_explained, n_train)
    prediction : ndarray of shape (n_explained,)
        ``f_N(X)``, the prediction of the model fitted on every training row.

    Raises
    ------
    DataValidationError
        When the full fit is singular, or a training row has leverage 1 (without it the fit is
        underdetermined: refit instead).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import Ridge
    >>> from shap_instances_loo import linear_loo_values
    >>> rng = np.random.default_rng(0)
    >>> X, y = rng.normal(size=(20, 3)), rng.normal(size=20)
    >>> values, prediction = linear_loo_values(X, y, X[:2], alpha=1.0)
    >>> without_first = Ridge(alpha=1.0).fit(X[1:], y[1:]).predict(X[:2])
    >>> bool(np.allclose(values[:, 0], prediction - without_first))
    True
    """
    validate_params("linear_loo_values", {"alpha": [Interval(numbers.Real, 0, None)], "fit_intercept": ["boolean"]},
                    {"alpha": alpha, "fit_intercept": fit_intercept})
    train = check_data(X_train, name="X_train", min_rows=2)
    target = check_target(y, train.shape[0], name="y")
    if target.ndim != 1:
        raise DataValidationError(f"y must be one target per training row (1-D), got shape {target.shape}.")
    explained = check_data(X, name="X", n_features=train.shape[1])
    result = _linear_loo_values(train, target, explained, float(alpha), bool(fit_intercept))
    if result is None:
        raise DataValidationError("the linear system is singular, or a training row has leverage 1 (the fit "
                                  "without it is underdetermined): no closed form; refit instead, or use alpha > 0.")
    return result


def _linear_loo_values(X_train: np.ndarray, y: np.ndarray, X: np.ndarray, alpha: float,
                       fit_intercept: bool) -> tuple[np.ndarray, np.ndarray] | None:
    """The closed form on validated float64 arrays; ``None`` where it does not apply (singular, leverage 1)."""
    if fit_intercept:  # centre by the full-data means: the same fits (the intercept is free), better conditioned
        centre, offset = X_train.mean(axis=0), float(y.mean())
        Z = np.hstack([np.ones((len(X_train), 1)), X_train - centre])
        Zx = np.hstack([np.ones((len(X), 1)), X - centre])
    else:
        centre, offset, Z, Zx = np.zeros(X_train.shape[1]), 0.0, X_train, X
    penalty = np.full(Z.shape[1], alpha)
    if fit_intercept:
        penalty[0] = 0.0
    A = Z.T @ Z + np.diag(penalty)
    if not np.isfinite(A).all() or np.linalg.cond(A) > _MAX_CONDITION:
        return None
    try:
        factor = scipy.linalg.cho_factor(A, check_finite=False)
    except np.linalg.LinAlgError:
        return None
    solved = scipy.linalg.cho_solve(factor, Z.T, check_finite=False)  # A^{-1} Z', shape (p, n_train)
    beta = solved @ (y - offset)
    leverage = np.einsum("ij,ji->i", Z, solved)
    if not (np.all(np.isfinite(leverage)) and np.all(leverage < 1.0 - _LEVERAGE_MARGIN)):
        return None
    residual = (y - offset) - Z @ beta
    values = (Zx @ solved) * (residual / (1.0 - leverage))
    return values, Zx @ beta + offset
