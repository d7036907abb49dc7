"""Refits of l2 LogisticRegression on coalitions and permutation prefixes, to a tolerance finer than its own.

The maths (warm-started chord Newton along the prefix, the stopping rule) and the numba kernels are in
``_logistic_kernels.py``, the package's one logistic fit; this module maps the residual game onto them. A prefix (or
coalition) holding one class only, or no row, is one scikit-learn refuses to fit: it gets v(empty), as the
game's failure policy gives it on the refit path, without counting it as a failed fit.

Targets with other labels than 0/1 (three classes or more, say) get what the refit path computes: the
probability of label 1 (0 where the model has no such class) minus the target. scikit-learn fits the classes
present in the rows: two of them, the binary model, which gives label 1 the probability it gives it as the
target ``y == 1`` (the loss and penalty are symmetric); three or more, the multinomial model.
"""

from __future__ import annotations

import copy
from typing import Any, ClassVar, Self

import numba
import numpy as np
from numpy.typing import ArrayLike
from scipy.special import expit, softmax
from sklearn.linear_model import LogisticRegression

from ..games import accumulate_prefix_units, register_fast_path
from ..utils import announce_compile, kernel_array, logistic_one_vs_rest
from ._logistic_kernels import (
    FIT_KERNELS,
    logistic_fit,
    logistic_prefix_values,
    logistic_units,
    logistic_walk,
    softmax_fit,
)

__all__ = ["FIRST_ORDER_TOL", "LogisticPath"]

#: The stopping rule (:mod:`._logistic_kernels`) of the fit on all rows behind :meth:`LogisticPath.first_order_pieces`:
#: finer than :attr:`LogisticPath.tol`, the control game's values are then those of the exact optimum to rounding.
FIRST_ORDER_TOL = 1e-12
#: Cold compile seconds of a binary model's first call (``benchmarks/bench_compile.py``: the residual explainer's and
#: ``data_values``' first logistic calls took 9.7 s and 9.9 s of CPU; a multinomial model compiles its own kernels
#: besides, the whole family 29.2 s), the estimate the first call's notice gives
#: (:func:`~shap_instances.utils.announce_compile`).
COMPILE_SECONDS = 10.0


@register_fast_path
class LogisticPath:
    """Refits of an l2 LogisticRegression (binary or multinomial) on coalitions and on every permutation prefix.

    Registered with the residual game (:func:`~shap_instances.games.register_fast_path`), which picks it by itself for a
    ``LogisticRegression`` with an l2 penalty (``l1_ratio=0``), a finite ``C``, no ``class_weight`` and a solver
    other than liblinear (which penalises the intercept). Every solver reaches the same optimum; this path solves to
    :attr:`tol` on the logits (the stopping rule of ``linear/_logistic_kernels.py``), so it agrees with scikit-learn
    refits to their own tolerance (``tol``, ``max_iter`` of the model are not used). Targets other than 0/1 are class
    labels: each prefix's model is the one scikit-learn fits on its classes (binary for two, multinomial for three
    or more; see the module docstring), and the value is the probability of label 1 minus the target, as on the
    refit path. Multinomial refits need a model that fits them so (``usable`` False, the game refits clones, for
    ``multi_class="ovr"`` and for the newton-cholesky solver before scikit-learn 1.6, which fit one-vs-rest).

    Parameters
    ----------
    model : LogisticRegression
        Only ``C`` and ``fit_intercept`` are read (it need not be fitted).
    X, y : ndarray
        Training rows (the players) and their 0/1 targets (or class labels).
    X_eval, y_eval : ndarray
        Explained rows and their targets.
    empty : ndarray (n_eval,)
        v(empty): the value of the empty prefix and of any one-class prefix.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import LogisticRegression
    >>> from shap_instances.linear import LogisticPath
    >>> X = np.array([[0.0], [1.0], [2.0], [3.0]]); y = np.array([0.0, 0.0, 1.0, 1.0])
    >>> path = LogisticPath(LogisticRegression(C=1.0), X, y, X, y, np.zeros(4))
    >>> refit = LogisticRegression(C=1.0, tol=1e-12).fit(X, y).predict_proba(X)[:, 1] - y
    >>> bool(np.allclose(path.residuals(np.ones(4, bool)), refit, atol=1e-8))
    True
    >>> path.prefix_residuals(np.array([0, 1, 2, 3]))[1].tolist()   # rows 0 and 1: one class, v(empty)
    [0.0, 0.0, 0.0, 0.0]
    """

    #: Prefix values along a permutation come from a fused numba kernel (no process pool is worth starting).
    fused: ClassVar[bool] = True
    #: ``prefix_values`` of an order cut after its first places walks those places only (a cut walk costs its
    #: length; :class:`~shap_instances.approximators.PlaceStratifiedApproximator` relies on it).
    cuts_walks: ClassVar[bool] = True
    #: ``prefix_values_batch(orders, first)`` starts a walk at its prefix of ``first`` rows with one cold fit,
    #: without fitting or valuing the shorter prefixes (a place stratum ``[lo, hi)`` needs prefixes ``lo`` to ``hi``).
    starts_walks: ClassVar[bool] = True
    #: The stopping rule: no logit moves by more than this at the next Newton step, so the logits are within about
    #: this of the exact refit's, the probabilities within a quarter of it (measured: 1.1e-7 at most over every
    #: prefix of a permutation, 2,000 rows x 20 features). 1e-7 keeps the values 30 times finer than 1e-6, and far
    #: finer than scikit-learn's own refits at their default ``tol=1e-4``; 1e-10 would cost 1.5 times the time.
    tol: ClassVar[float] = 1e-7

    @property
    def value_tolerance(self) -> float:
        """How far two values of one prefix (a probability minus a target) may be apart when reached by different
        fits (warm-started along a walk, or from zero): :attr:`tol`. Each is within a quarter of it of the exact
        refit's, so they are within half of it: this leaves room of 2 (the explainers' efficiency checks use it)."""
        return self.tol

    def __init__(self, model: Any, X: Any, y: ArrayLike, X_eval: Any, y_eval: ArrayLike, empty: ArrayLike) -> None:
        X, X_eval = np.asarray(X, dtype=np.float64), np.asarray(X_eval, dtype=np.float64)
        # every array the kernels take in one form (C-contiguous, writable): one signature per kernel
        self.y, self.y_eval, self.empty = kernel_array(y), kernel_array(y_eval), kernel_array(empty)
        self.Z, self.ZE = (_design(rows, model.fit_intercept) for rows in (X, X_eval))
        self.penalty = np.full(self.Z.shape[1], 1.0 / float(model.C))
        self.penalty[: int(model.fit_intercept)] = 0.0  # the intercept is not penalised
        self.scale = np.maximum(np.abs(np.vstack([self.Z, self.ZE])).max(axis=0, initial=0.0), 1e-300)
        self.W = np.zeros((len(self.y_eval), 0))  # (n_eval, K) weights of an aggregate game, else no column
        labels = np.unique(self.y)
        #: 0 for 0/1 targets (the binary kernels), else the number of class labels (``y`` holds their indices).
        self.n_classes = 0 if np.isin(labels, (0.0, 1.0)).all() else len(labels)
        #: The index of label 1 among the labels (-1: none); unused for 0/1 targets.
        self.one = int(np.searchsorted(labels, 1.0)) if 1.0 in labels else -1
        if self.n_classes:
            self.y = np.searchsorted(labels, self.y).astype(np.float64)
        multinomial = not logistic_one_vs_rest(model)
        #: False for data beyond ~1e100 (overflowing logits), or class labels the model fits one-vs-rest: the game
        #: then refits.
        self.usable = bool(np.all(np.isfinite(self.scale)) and self.scale.max() < 1e100 and np.isfinite(labels).all()
                           and (self.n_classes == 0 or multinomial))

    @classmethod
    def supports(cls, model: Any) -> bool:
        """An l2 LogisticRegression with a finite ``C > 0``, no ``class_weight`` and a solver but liblinear."""
        if type(model) is not LogisticRegression:
            return False
        penalty, l1_ratio = getattr(model, "penalty", "deprecated"), getattr(model, "l1_ratio", None)
        l2 = penalty == "l2" or (penalty in ("deprecated", "elasticnet") and not l1_ratio)
        return (l2 and model.solver != "liblinear" and model.class_weight is None
                and bool(np.isfinite(model.C)) and float(model.C) > 0)

    def aggregated(self, weights: ArrayLike) -> Self:
        """The path of the weighted sums ``weights^T residuals`` (weights of shape (n_eval, K))."""
        weights = np.asarray(weights, dtype=np.float64)
        new = copy.copy(self)
        new.W = kernel_array(weights if self.W.shape[1] == 0 else self.W @ weights)
        new.empty = kernel_array(weights.T @ self.empty)
        return new

    def fits_all_rows(self) -> bool:
        """True when the training targets hold two classes at least."""
        return bool(0.0 < self.y.sum() < len(self.y)) if self.n_classes == 0 else self.n_classes >= 2

    def _out(self, residuals: np.ndarray) -> np.ndarray:
        return residuals if self.W.shape[1] == 0 else residuals @ self.W

    def _weights(self) -> np.ndarray:
        """The weights of the outputs over the explained rows, (n_eval, n_outputs): the identity when not aggregated."""
        return np.eye(len(self.y_eval)) if self.W.shape[1] == 0 else self.W

    def first_order_pieces(self) -> np.ndarray | None:
        """``a_ij`` (n_train, n_outputs) of the first-order control game
        (:func:`~shap_instances.approximators.first_order_game`): ``n s_j z_j^T H^{-1} z_i r_i`` at the fit on all
        rows, ``H`` its Hessian, ``s_j`` the slope of the probability at explained row j, ``r_i = y_i - p_i``.

        The fit is this path's own (:func:`logistic_fit`, at :data:`FIRST_ORDER_TOL`); None for class labels (the
        multinomial model has no such game here) or when the training rows hold one class.
        """
        if self.n_classes or not self.fits_all_rows():
            return None
        Z, y = self.Z, self.y
        _announce(list(FIT_KERNELS))
        w = logistic_fit(Z, y, np.arange(len(y)), self.penalty, self.scale, FIRST_ORDER_TOL)
        p, pe = expit(Z @ w), expit(self.ZE @ w)
        hessian = (Z * (p * (1 - p))[:, None]).T @ Z + np.diag(self.penalty)
        slopes = (self.ZE * (pe * (1 - pe))[:, None]).T  # (P, n_eval)
        if self.W.shape[1]:  # aggregated: sum over the explained rows first, O(n P) instead of the n x n_eval kernel
            slopes = slopes @ self.W
        return len(y) * (Z @ np.linalg.solve(hessian, slopes)) * (y - p)[:, None]

    def label_shares(self) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """``(y, weight totals, weighted targets)`` of the label-share control game
        (:func:`~shap_instances.approximators.label_share_game`): the 0/1 training targets, each output's sum of
        weights over the explained rows and its weighted sum of their targets; None for class labels or one class."""
        if self.n_classes or not self.fits_all_rows():
            return None
        weights = self._weights()
        return self.y, weights.sum(axis=0), self.y_eval @ weights

    def residuals(self, mask: np.ndarray) -> np.ndarray:
        """Residuals (or their weighted sums) of the fit on the rows in ``mask``; v(empty) for one class."""
        rows = np.flatnonzero(mask)
        _announce([softmax_fit] if self.n_classes else list(FIT_KERNELS))
        if self.n_classes:
            return self._multinomial_residuals(rows)
        if not 0.0 < self.y[rows].sum() < len(rows):
            return self.empty
        w = logistic_fit(self.Z, self.y, rows, self.penalty, self.scale, self.tol)
        return self._out(expit(self.ZE @ w) - self.y_eval)

    def _multinomial_residuals(self, rows: np.ndarray) -> np.ndarray:
        coefficients, active = softmax_fit(self.Z, self.y, rows, self.n_classes, self.one, self.penalty, self.scale,
                                           self.tol)
        if active.sum() < 2:  # one class: v(empty)
            return self.empty
        if self.one < 0 or not active[self.one]:  # no label 1 in the model: its probability is 0
            return self._out(-self.y_eval)
        logits = np.where(active.astype(bool), self.ZE @ coefficients.T, -np.inf)
        return self._out(softmax(logits, axis=1)[:, self.one] - self.y_eval)

    def _arguments(self, permutations: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray,
                                                           np.ndarray, np.ndarray, np.ndarray, np.ndarray,
                                                           np.ndarray, float, int, int]:
        """The kernels' leading arguments (as :func:`logistic_prefix_values` takes them), after the notice of a
        first compilation."""
        _announce([logistic_walk])
        return (self.Z, self.y, self.ZE, self.y_eval, self.W, self.empty, permutations, self.penalty, self.scale,
                self.tol, self.n_classes, self.one)

    def prefix_values_batch(self, permutations: np.ndarray, first: int = 0) -> np.ndarray:
        """Values of the prefixes of ``first`` rows and more of each permutation, shape (k, n + 1 - first,
        n_outputs) (``first`` 0: every prefix); threads over permutations. The shorter prefixes are not fitted:
        the walk starts with a cold fit on the first ``first`` rows (:attr:`starts_walks`)."""
        permutations = kernel_array(permutations, np.intp)
        if not 0 <= first <= permutations.shape[1]:
            raise ValueError(f"first must be from 0 to the walk's length {permutations.shape[1]}, got {first}.")
        out = np.empty((len(permutations), permutations.shape[1] + 1 - first, len(self.empty)))
        logistic_prefix_values(*self._arguments(permutations), int(first), out)
        return out

    def prefix_residuals(self, permutation: ArrayLike) -> np.ndarray:
        """Residuals on the evaluation rows of the fit on each prefix, shape (n, n_outputs)."""
        return self.prefix_values_batch(np.asarray(permutation)[None, :])[0, 1:]

    def accumulate(self, permutations: np.ndarray, per_unit: int, unit: np.ndarray, mean: np.ndarray, m2: np.ndarray,
                   count: int) -> tuple[int, np.ndarray]:
        """Shapley accumulators along ``permutations``; returns ``(count, full)`` as ``RidgePath.accumulate``.

        Few outputs (an aggregate game): the prefix values in parallel, then the accumulating kernel; many (every
        explained row): one fused kernel that walks as many units at a time as numba has threads, each in a block of
        its own (``unit`` and one more block of its size per extra thread).
        """
        permutations = kernel_array(permutations, np.intp)
        if len(self.empty) <= self.Z.shape[1]:
            prefixes = self.prefix_values_batch(permutations)
            return accumulate_prefix_units(prefixes, permutations, per_unit, unit, mean, m2, count), prefixes[0, -1]
        full = np.empty(len(self.empty))
        count = logistic_units(*self._arguments(permutations), per_unit, unit, mean, m2, count, full,
                               numba.get_num_threads())
        return count, full


def _announce(kernels: list[Any]) -> None:
    """The notice before the logistic kernels compile on first use (:func:`~shap_instances.utils.announce_compile`)."""
    announce_compile("logistic", kernels, COMPILE_SECONDS)


def _design(X: np.ndarray, fit_intercept: bool) -> np.ndarray:
    """``[1 | X]`` (``X`` without an intercept) in the kernels' form (:func:`~shap_instances.utils.kernel_array`)."""
    return kernel_array(np.column_stack([np.ones(len(X)), X]) if fit_intercept else X)
