"""Exact ridge / least-squares refits along permutations without refitting: running centred sums.

For the prefix of the first t training rows of a permutation, scikit-learn's Ridge (with intercept) solves
``(Xc^T Xc + alpha I) w = Xc^T yc`` on the prefix centred by its own means, then ``b = mean(y) - mean(x) w``.
The centred scatter matrices of all prefixes follow from one cumulative sum of Welford terms,
``M_t = sum_{s<=t} (x_s - mean_{s-1}) (x_s - mean_s)^T`` (no cancellation, unlike ``sum x x^T - n mean mean^T``),
and one batched solve gives every prefix's coefficients (:meth:`RidgePath.coefficients`, the NumPy reference).

Along permutations the path runs the numba kernels of :mod:`shap_instances._kernels.prefix_shapley`: the same
fits, as a factorisation of the least-squares problem with an unpenalised intercept column updated one row at a
time (Gentleman's square-root-free Givens rotations, O(p^2) per prefix), fused with the prefix values, their
differences and the scatter into the Shapley accumulators. Single coalitions (:meth:`RidgePath.residuals`) are
one centred solve.

*Aggregates.* Every value is linear in the explained rows: the fit on S predicts ``X_eval w_S + b_S``, so a
weighted sum of residuals ``W^T (X_eval w_S + b_S - y_eval)`` equals ``(W^T X_eval) w_S + (W^T 1) b_S - W^T y_eval``,
the same formula with ``K`` rows ``W^T X_eval``, intercept multipliers ``W^T 1`` and targets ``W^T y_eval``.
:meth:`RidgePath.aggregated` returns that path: O(p^2 + K p) per prefix instead of O(p^2 + m p), nothing of
size n x m.
"""

from __future__ import annotations

import copy
from typing import Any, ClassVar, Self

import numpy as np
from numpy.typing import ArrayLike
from sklearn.linear_model import LinearRegression, Ridge

from ..games import RidgeProblem, accumulate_prefix_units, register_fast_path
from ._ridge_kernels import ridge_prefix_values, ridge_units, uses_u

__all__ = ["RidgePath"]


@register_fast_path
class RidgePath:
    """Exact refits of Ridge(alpha > 0) and LinearRegression on coalitions and on every permutation prefix.

    One of the :data:`~shap_instances.games.exact_fast_paths` that :class:`~shap_instances.games.ResidualGame`
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
        v(empty) (default zeros): the value of the empty prefix along permutations.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import Ridge
    >>> from shap_instances.linear import RidgePath
    >>> X, y = np.arange(8.0).reshape(4, 2), np.array([1.0, 2.0, 2.0, 5.0])
    >>> path = RidgePath(Ridge(alpha=1.0), X, y, X, y)
    >>> refit = Ridge(alpha=1.0).fit(X, y).predict(X) - y
    >>> bool(np.allclose(path.residuals(np.ones(4, bool)), refit))
    True
    >>> RidgePath.supports(Ridge(alpha=0.0)), path.prefix_residuals(np.arange(4)).shape
    (False, (4, 4))
    """

    #: Prefix values along a permutation come from a fused numba kernel (no process pool is worth starting).
    fused: ClassVar[bool] = True
    #: ``prefix_values`` of an order cut after its first places walks those places only (a cut walk costs its
    #: length; :class:`~shap_instances.approximators.PlaceStratifiedApproximator` relies on it).
    cuts_walks: ClassVar[bool] = True

    def __init__(self, model: Any, X: np.ndarray, y: np.ndarray, X_eval: np.ndarray, y_eval: np.ndarray,
                 empty: ArrayLike | None = None) -> None:
        alpha, self.fit_intercept = self.penalty(model)
        # Work in units where |x| <= 1 and |y| <= 1, so the scatter matrices can neither overflow (data of
        # magnitude 1e300) nor swamp the penalty: with X = s Z and y = r u, the ridge problem on (X, y) with
        # penalty alpha is the one on (Z, u) with penalty alpha / s^2, and its residuals are r times those.
        # Scale down only (|x| > 1), by the training rows only: the fit depends on them alone; explained rows far
        # outside them (1e300) must not shrink the training data to underflow, and tiny data (1e-300) must not
        # blow the penalty alpha / s^2 up to infinity (unscaled, its scatter underflows harmlessly: the penalty
        # dominates it anyway).
        self.x_scale = max(_scale(X), 1.0)
        self.y_scale = max(_scale(y), 1.0)
        self.alpha = alpha / self.x_scale / self.x_scale  # (not s**2: that overflows for s = 1e300)
        #: False when the penalty underflows in scaled units (features beyond ~1e150): the game then refits.
        self.usable = not (alpha > 0 and self.alpha < 1e-280)
        self.X, self.X_eval = X / self.x_scale, X_eval / self.x_scale
        self.y, self.y_eval = y / self.y_scale, y_eval / self.y_scale
        self.ones = np.ones(len(self.y_eval))  # intercept multiplier of each output (W^T 1 when aggregated)
        self.empty = np.zeros(len(self.y_eval)) if empty is None else np.asarray(empty, dtype=np.float64)
        self._kernel_arrays: tuple[np.ndarray, ...] | None = None

    def aggregated(self, weights: ArrayLike) -> Self:
        """The path of the weighted sums ``weights^T residuals`` (K outputs): same fits, K rows to evaluate.

        Parameters
        ----------
        weights : ndarray of shape (n_eval, K)

        Examples
        --------
        >>> import numpy as np
        >>> from sklearn.linear_model import Ridge
        >>> from shap_instances.linear import RidgePath
        >>> X, y = np.arange(8.0).reshape(4, 2), np.array([1.0, 2.0, 2.0, 5.0])
        >>> path, w = RidgePath(Ridge(alpha=1.0), X, y, X, y), np.full((4, 1), 0.25)
        >>> mask = np.array([True, False, True, True])
        >>> bool(np.isclose(path.aggregated(w).residuals(mask)[0], path.residuals(mask).mean()))
        True
        """
        weights = np.asarray(weights, dtype=np.float64)
        new = copy.copy(self)
        new.X_eval = weights.T @ self.X_eval
        new.y_eval = weights.T @ self.y_eval
        new.ones = weights.T @ self.ones
        new.empty = weights.T @ self.empty
        new._kernel_arrays = None
        return new

    @classmethod
    def supports(cls, model: Any) -> bool:
        """Ridge with a scalar ``alpha > 0`` and ``positive=False``, or LinearRegression with ``positive=False``."""
        if type(model) is Ridge:
            return np.ndim(model.alpha) == 0 and model.alpha > 0 and not getattr(model, "positive", False)
        return type(model) is LinearRegression and not model.positive

    @staticmethod
    def penalty(model: Any) -> tuple[float, bool]:
        """``(alpha, fit_intercept)`` of a supported model (alpha 0 for LinearRegression)."""
        return (0.0 if isinstance(model, LinearRegression) else float(model.alpha)), bool(model.fit_intercept)

    @classmethod
    def ridge_problem(cls, model: Any, X: Any, y: np.ndarray, X_eval: Any, y_eval: np.ndarray,
                      weights: np.ndarray | None) -> RidgeProblem:
        """The least-squares problem of the refits of a supported ``model``: of the residuals of the explained rows,
        or of their weighted sums (``weights`` (n_eval, K), an aggregate game)."""
        alpha, fit_intercept = cls.penalty(model)
        y = np.asarray(y, dtype=np.float64)
        if weights is None:
            return RidgeProblem(X, y, X_eval, y_eval, alpha, fit_intercept)
        return RidgeProblem(X, y, weights.T @ X_eval, weights.T @ y_eval, alpha, fit_intercept, weights.sum(axis=0))

    def fits_all_rows(self) -> bool:
        """Always True: every non-empty coalition can be fitted."""
        return True

    def memory_bytes(self) -> float:
        """Bytes the permutation kernels hold at once: a ``p x p`` scatter and its factor per permutation, one
        permutation per numba thread (and at least the one ``p x p`` system of a single coalition).

        Examples
        --------
        >>> import numpy as np, numba
        >>> from sklearn.linear_model import Ridge
        >>> from shap_instances.linear import RidgePath
        >>> X, y = np.ones((4, 3)), np.arange(4.0)
        >>> RidgePath(Ridge(), X, y, X, y).memory_bytes() == 16 * 3 * 3 * numba.get_num_threads()
        True
        """
        import numba

        p = self.X.shape[1]
        return 16.0 * p * p * max(int(numba.get_num_threads()), 1)

    def _solve(self, scatter: np.ndarray, cross: np.ndarray) -> np.ndarray:
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

    def coefficients(self, X: np.ndarray, y: np.ndarray, with_scatter: bool = False) -> tuple[Any, ...]:
        """(w (t, p), b (t,)) of the fits on every prefix X[:t], y[:t], t = 1..len(X), in scaled units.

        The NumPy reference of the kernels: one batched solve of all prefix systems (memory O(t p^2)). With
        ``with_scatter`` the scatter matrices (t, p, p) and cross products (t, p) are returned too.
        """
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
        return (w, b, scatter, cross) if with_scatter else (w, b)

    def _arrays(self) -> tuple[np.ndarray, ...]:
        """Contiguous arrays the kernels read (built once): X, y, ``[ones | X_eval]^T``, y_eval, v(empty)."""
        if self._kernel_arrays is None:
            X_eval = np.asarray(self.X_eval, dtype=np.float64)
            design = np.column_stack([self.ones, X_eval]) if self.fit_intercept else X_eval
            self._kernel_arrays = (np.ascontiguousarray(self.X, dtype=np.float64),
                                   np.ascontiguousarray(self.y, dtype=np.float64),
                                   np.ascontiguousarray(design.T),
                                   np.ascontiguousarray(self.y_eval, dtype=np.float64),
                                   np.ascontiguousarray(self.empty, dtype=np.float64))
        return self._kernel_arrays

    def _starts(self, permutations: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(heads_w, heads_b, t0s)``: from how many rows on the kernels read the fit off their factor.

        Ridge: from the first row with an intercept (``t0 = 1``), from the start without (``t0 = 0``). Least
        squares is singular below full rank: the prefixes up to the first one whose scatter is well
        conditioned (condition number below 1e10, where the pseudo-inverse and a factor solve agree) are solved
        here, with the pseudo-inverse (scikit-learn's minimum-norm solution), for the first ``2 p + 32`` rows;
        a permutation with no such prefix among them is solved here entirely.
        """
        p = self.X.shape[1]
        k = len(permutations)
        if self.alpha > 0:
            t0 = 1 if self.fit_intercept else 0
            return np.zeros((k, 1, p)), np.zeros((k, 1)), np.full(k, t0, dtype=np.int64)
        starts = [self._least_squares_start(permutation) for permutation in permutations]
        return _stack([w for w, _, _ in starts]), _stack([b for _, b, _ in starts]), np.array(
            [t0 for _, _, t0 in starts], dtype=np.int64)

    def _least_squares_start(self, permutation: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
        p, n = self.X.shape[1], len(permutation)
        head = min(n, 2 * p + 32)
        rows = permutation[:head]
        w, b, scatter, _ = self.coefficients(self.X[rows], self.y[rows], with_scatter=True)
        first = p + 1 if self.fit_intercept else p
        if first <= head:
            eigenvalues = np.linalg.eigvalsh(scatter[first - 1:])
            good = eigenvalues[:, 0] > 1e-10 * np.maximum(eigenvalues[:, -1], np.finfo(float).tiny)
            if good.any():
                t0 = first + int(np.argmax(good))
                return w[: t0 - 1], b[: t0 - 1], t0
        w, b = self.coefficients(self.X[permutation], self.y[permutation])
        return w, b, n + 1

    def prefix_values_batch(self, permutations: np.ndarray) -> np.ndarray:
        """Values of every prefix of each permutation, shape (k, n + 1, n_outputs), ``[:, 0]`` = v(empty).

        One numba kernel, threads over the permutations.
        """
        X, y, XaT, yE, empty = self._arrays()
        permutations = np.ascontiguousarray(permutations, dtype=np.intp)
        heads_w, heads_b, t0s = self._starts(permutations)
        out = np.empty((len(permutations), len(permutations[0]) + 1, len(yE)))
        ridge_prefix_values(X, y, XaT, yE, empty, permutations, self.fit_intercept, float(self.y_scale),
                            float(max(self.alpha, 0.0)), heads_w, heads_b, t0s, out)
        return out

    def prefix_residuals(self, permutation: ArrayLike) -> np.ndarray:
        """Residuals on the evaluation rows of the fit on each prefix, shape (M, n_eval)."""
        return self.prefix_values_batch(np.asarray(permutation)[None, :])[0, 1:]

    def accumulate(self, permutations: np.ndarray, per_unit: int, unit: np.ndarray, mean: np.ndarray, m2: np.ndarray,
                   count: int) -> tuple[int, np.ndarray]:
        """Shapley accumulators along ``permutations``: returns ``(count, full)``.

        Few outputs (an aggregate game): the prefix values of the batch (threads over permutations) and the
        accumulating kernel. Many outputs (every explained row): one fused serial kernel, prefix fits,
        differences, scatter and Welford update, that never holds more than one unit's block.
        """
        X, y, XaT, yE, empty = self._arrays()
        permutations = np.ascontiguousarray(permutations, dtype=np.intp)
        if uses_u(XaT.shape[1], XaT.shape[0]):
            prefixes = self.prefix_values_batch(permutations)
            count = accumulate_prefix_units(prefixes, permutations, per_unit, unit, mean, m2, count)
            return count, prefixes[0, -1].copy()
        heads_w, heads_b, t0s = self._starts(permutations)
        full = np.empty(len(yE))
        count = ridge_units(X, y, XaT, yE, empty, permutations, per_unit, self.fit_intercept, float(self.y_scale),
                            float(max(self.alpha, 0.0)), heads_w, heads_b, t0s, unit, mean, m2, count, full)
        return count, full

    def residuals(self, mask: np.ndarray) -> np.ndarray:
        """Residuals on the evaluation rows of the fit on the rows in ``mask`` (non-empty): one solve."""
        X, y = self.X[mask], self.y[mask]
        if self.fit_intercept:
            mean_x, mean_y = X.mean(axis=0), y.mean()
            X, y = X - mean_x, y - mean_y
        w = self._solve(X.T @ X, X.T @ y)
        b = mean_y - mean_x @ w if self.fit_intercept else 0.0
        return (self.X_eval @ w + b * self.ones - self.y_eval) * self.y_scale


def _stack(arrays: list[np.ndarray]) -> np.ndarray:
    """Ragged 2-D (or 1-D) arrays stacked into one zero-padded array along a new first axis."""
    longest = max(len(a) for a in arrays)
    out = np.zeros((len(arrays), longest, *arrays[0].shape[1:]))
    for r, a in enumerate(arrays):
        out[r, : len(a)] = a
    return out


def _scale(*arrays: ArrayLike) -> float:
    """The largest magnitude in ``arrays`` (1 when all are zero): the unit the path computes in."""
    largest = max(float(np.max(np.abs(a))) if np.size(a) else 0.0 for a in arrays)
    return largest if largest > 0 and np.isfinite(largest) else 1.0
