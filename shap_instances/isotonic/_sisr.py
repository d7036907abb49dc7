"""Sparse Isotonic Shapley Regression (SISR): a monotone payoff transform T and sparse attributions gamma.

Solves, over gamma (||gamma||_0 <= s, ||gamma||_2 = 1) and a non-decreasing T with T(0) = 0,

    min  sum_A w(A) (T(v_A) - sum_{j in A} gamma_j)^2

by alternating a weighted isotonic regression for t = T(v) (PAVA on the coalitions sorted once by payoff,
ties in v pooled, since T is a function of v) with normalised iterative hard thresholding for gamma
(step 1/rho, rho >= ||Z^T W Z||_2). See docs/explainers/isotonic.md for the derivation and choices.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .._kernels.isotonic import coalition_sums, gradient_and_loss, shapley_from_codes, weighted_pava
from ..estimators._weights import kernel_weights, shapley_weights
from ..exceptions import GameTooLargeError

__all__ = ["sisr", "sisr_from_samples", "SISRResult", "MonotoneTransform", "gram_eigenvalue"]

MAX_EXACT_PLAYERS = 26


class MonotoneTransform:
    """The fitted transform T-hat as a callable: a monotone piecewise-linear interpolant and its inverse.

    ``T(v)`` interpolates linearly between the observed (distinct) payoffs and their fitted values, and is
    constant beyond the observed range; ``T.inverse(y)`` maps transformed values back to payoffs (where T is
    flat, the smallest payoff of the flat piece). ``knots`` are the (payoff, T) pairs.

    Examples
    --------
    >>> import numpy as np
    >>> from shap_instances.isotonic import MonotoneTransform
    >>> T = MonotoneTransform([0.0, 1.0, 4.0], [0.0, 1.0, 2.0])
    >>> float(T(2.5)), float(T.inverse(1.5))
    (1.5, 2.5)
    """

    def __init__(self, payoffs, values):
        payoffs, values = np.asarray(payoffs, dtype=np.float64), np.asarray(values, dtype=np.float64)
        order = np.argsort(payoffs, kind="stable")
        self.knots_payoffs, first = np.unique(payoffs[order], return_index=True)
        self.knots_values = values[order][first]
        if np.any(np.diff(self.knots_values) < -1e-9 * max(1.0, np.abs(self.knots_values).max(initial=0.0))):
            raise ValueError("the transform values must be non-decreasing in the payoffs.")

    @property
    def knots(self):
        """(payoffs, transformed values) of the interpolation knots, payoffs increasing."""
        return self.knots_payoffs, self.knots_values

    def __call__(self, payoffs):
        return np.interp(payoffs, self.knots_payoffs, self.knots_values)

    def inverse(self, transformed):
        """Payoffs from transformed values (the smallest payoff where T is flat)."""
        keep = np.concatenate([[True], np.diff(self.knots_values) > 0])
        return np.interp(transformed, self.knots_values[keep], self.knots_payoffs[keep])

    def __repr__(self) -> str:
        return f"MonotoneTransform({self.knots_payoffs.size} knots on [{self.knots_payoffs[0]:.4g}, " \
               f"{self.knots_payoffs[-1]:.4g}])"


@dataclass
class SISRResult:
    """Result of :func:`sisr`.

    Attributes
    ----------
    gamma : ndarray (p,)
        Sparse unit-norm attributions in the transformed domain: ``gamma_j = T(beta_j)``.
    transform_values : ndarray (n_coalitions,)
        The fitted monotone transform at every coalition's payoff, ``t_A = T(v_A)``.
    payoffs : ndarray (n_coalitions,)
        The (baseline-adjusted) payoffs ``v_A``; with ``codes``, the coalitions they belong to.
    codes : ndarray (n_coalitions,)
        Bit codes of the coalitions (bit j set = player j present).
    weights : ndarray (n_coalitions,)
        Regression weights of the coalitions.
    sparsity : int
        The support size used.
    n_iterations : int
        Alternations (T-step + gamma-block) performed.
    objective_history : list of float
        The objective after every block update; non-increasing for the squared loss.
    shapley_values : ndarray (p,)
        The plain Shapley values of the same payoffs (the initialisation).
    criterion : dict
        ``{s: RIC value}`` when ``sparsity="ric"`` chose s.
    """

    gamma: np.ndarray
    transform_values: np.ndarray
    payoffs: np.ndarray
    codes: np.ndarray
    weights: np.ndarray
    sparsity: int
    n_iterations: int
    objective_history: list = field(default_factory=list)
    shapley_values: np.ndarray | None = None
    criterion: dict = field(default_factory=dict)

    @property
    def objective(self) -> float:
        """The final value of the objective."""
        return self.objective_history[-1]

    @property
    def support(self) -> np.ndarray:
        """Indices of the players with non-zero gamma."""
        return np.flatnonzero(self.gamma)

    @property
    def transform_function(self) -> MonotoneTransform:
        """The fitted T as a callable :class:`MonotoneTransform` (with ``.inverse``)."""
        return MonotoneTransform(self.payoffs, self.transform_values)

    def transform(self, payoffs) -> np.ndarray:
        """The fitted monotone transform T, interpolated linearly between observed payoffs.

        Examples
        --------
        >>> import numpy as np
        >>> from shap_instances.isotonic import sisr
        >>> codes = np.arange(8)
        >>> v = ((codes[:, None] >> np.arange(3)) & 1) @ np.array([1.0, 2.0, 0.0])
        >>> result = sisr(v, sparsity=2)
        >>> bool(np.all(np.diff(result.transform(np.linspace(0, 3, 7))) >= 0))
        True
        """
        return self.transform_function(payoffs)

    def inverse_transform(self, transformed) -> np.ndarray:
        """The inverse of :meth:`transform` (where T is flat, the smallest payoff of the flat piece)."""
        return self.transform_function.inverse(transformed)


def gram_eigenvalue(n_players: int, full_weight: float = 0.0) -> float:
    """Largest eigenvalue of Z^T W Z for the Shapley kernel over 1 <= |A| <= p-1, plus the full coalition.

    ``Z^T W Z`` has diagonal ``a = (p-1) H_{p-1} / p`` and off-diagonal ``b = ((p-1) H_{p-2} - (p-2)) / p``
    (H_n the n-th harmonic number); its top eigenvector is the all-ones vector, with eigenvalue
    ``a + (p-1) b``. The full coalition, with weight ``full_weight``, adds ``full_weight * 1 1^T``, so ``p *
    full_weight`` to that eigenvalue.

    Examples
    --------
    >>> from shap_instances.isotonic import gram_eigenvalue
    >>> float(gram_eigenvalue(2))  # p = 2: one singleton each, weight 1/2
    0.5
    """
    p = n_players
    if p == 1:
        return full_weight
    harmonic = np.concatenate([[0.0], np.cumsum(1.0 / np.arange(1, p))])
    a = (p - 1) * harmonic[p - 1] / p
    b = ((p - 1) * harmonic[p - 2] - (p - 2)) / p
    return a + (p - 1) * b + p * full_weight


def _gram_matrix(n_players: int, full_weight: float) -> np.ndarray:
    """Z^T W Z in closed form: a on the diagonal, b off it, plus the full coalition's weight everywhere."""
    p = n_players
    if p == 1:
        return np.full((1, 1), full_weight)
    harmonic = np.concatenate([[0.0], np.cumsum(1.0 / np.arange(1, p))])
    a = (p - 1) * harmonic[p - 1] / p
    b = ((p - 1) * harmonic[p - 2] - (p - 2)) / p if p > 2 else 0.0
    return (a - b) * np.eye(p) + b + full_weight


def _popcount(codes: np.ndarray) -> np.ndarray:
    counts = np.zeros(codes.shape, dtype=np.int64)
    work = codes.copy()
    while np.any(work):
        counts += work & 1
        work >>= 1
    return counts


class _IsotonicStep:
    """Weighted isotonic regression of delta on the payoffs: T(0) = 0, ties in v pooled, slope >= min_slope.

    Writing ``T(v) = min_slope * v + U(v)`` with U non-decreasing turns the strictly increasing fit into a
    plain isotonic regression of ``delta - min_slope * v``, solved exactly by PAVA on each side of v = 0
    (clipping at 0 pins U(0) = 0: bounded isotonic regression is the clipped unbounded one).
    """

    def __init__(self, payoffs, min_slope=0.0):
        self.order = np.argsort(payoffs, kind="stable")
        v_sorted = payoffs[self.order]
        self.starts = np.flatnonzero(np.concatenate([[True], np.diff(v_sorted) != 0]))
        self.sizes = np.diff(np.concatenate([self.starts, [len(v_sorted)]]))
        group_v = v_sorted[self.starts]
        self.negative, self.positive = group_v < 0, group_v > 0
        self.linear = min_slope * payoffs

    def __call__(self, delta, weights):
        y = (delta - self.linear)[self.order]
        w = weights[self.order]
        group_w = np.add.reduceat(w, self.starts)
        group_y = np.add.reduceat(w * y, self.starts) / np.where(group_w > 0, group_w, 1.0)
        fit = np.zeros_like(group_y)  # the group of payoff 0 (the empty coalition) stays at T(0) = 0
        for side, clip in ((self.negative, np.minimum), (self.positive, np.maximum)):
            if side.any():
                fit[side] = clip(weighted_pava(group_y[side], group_w[side]), 0.0)
        t = np.empty_like(y)
        t[self.order] = np.repeat(fit, self.sizes)
        return t + self.linear


def _robust_weights(weights, residual, huber_delta):
    """Huber IRLS weights: full weight inside the threshold, ``huber_delta / |r|`` beyond."""
    if huber_delta is None:
        return weights
    return weights * np.minimum(1.0, huber_delta / np.maximum(np.abs(residual), 1e-300))


def _hard_threshold(y: np.ndarray, s: int) -> np.ndarray:
    keep = np.argpartition(-np.abs(y), s - 1)[:s]
    out = np.zeros_like(y)
    out[keep] = y[keep]
    norm = np.linalg.norm(out)
    return out / norm if norm > 0 else out


def _sphere_minimum(gram, linear):
    """argmin of ``g' G g - 2 b' g`` over the unit sphere (the trust-region boundary problem, by bisection)."""
    eigenvalues, vectors = np.linalg.eigh(gram)
    c = vectors.T @ linear
    norm_c = np.linalg.norm(c)
    if norm_c == 0:
        return vectors[:, 0]

    def squared_norm(lam):
        return np.sum(c**2 / (eigenvalues - lam) ** 2)

    low, high = eigenvalues[0] - norm_c, eigenvalues[0]
    if squared_norm(high - 1e-12 * max(1.0, abs(high))) < 1.0:  # the "hard case": c has no weight on v_min
        coefficients = np.zeros_like(c)
        rest = eigenvalues > eigenvalues[0] + 1e-12
        coefficients[rest] = c[rest] / (eigenvalues[rest] - eigenvalues[0])
        coefficients[0] = np.sqrt(max(0.0, 1.0 - np.sum(coefficients**2)))
        return vectors @ coefficients
    for _ in range(200):
        middle = 0.5 * (low + high)
        if squared_norm(middle) > 1.0:
            high = middle
        else:
            low = middle
    gamma = vectors @ (c / (eigenvalues - low))
    return gamma / np.linalg.norm(gamma)


def _gamma_block(codes, weights, t, gamma, p, s, rho, gram, inner_max_iter, tol):
    """Hard-thresholding steps choose the support; each is followed by the exact minimum on that support.

    A normalised IHT step does not increase the loss (the poster's theorem), and the exact minimum over
    unit vectors supported on the chosen set is at least as good as that step, so the loss still never
    increases; in practice the support settles in one or two gradient passes instead of tens.
    """
    for _ in range(inner_max_iter):
        gradient, _loss = gradient_and_loss(codes, weights, t, gamma, np.flatnonzero(gamma), p)
        support = np.flatnonzero(_hard_threshold(gamma - gradient / rho, s))
        if support.size == 0:
            break
        linear = gram @ gamma - gradient  # Z^T W t
        new = np.zeros(p)
        new[support] = _sphere_minimum(gram[np.ix_(support, support)], linear[support])
        change = np.linalg.norm(new - gamma)
        gamma = new
        if change < tol:
            break
    return gamma


def _alternate(codes, payoffs, weights, p, s, gamma0, rho, gram, max_iter, inner_max_iter, tol, isotonic,
               huber_delta):
    """The two-block alternation from gamma0; returns (gamma, t, history, iterations).

    With a Huber loss (``huber_delta`` set), both blocks use the IRLS weights of the current residuals;
    they never exceed the original weights, so ``rho`` stays a valid step bound (the exact support step then
    uses the unweighted Gram matrix as a surrogate, so monotonicity is only claimed for the squared loss).
    """
    gamma = gamma0.copy()
    delta = coalition_sums(codes, gamma, np.flatnonzero(gamma))
    t = isotonic(delta, weights)
    active = _robust_weights(weights, t - delta, huber_delta)
    history = [float(np.sum(active * (t - delta) ** 2))]
    iterations = 0
    while iterations < max_iter:
        iterations += 1
        gamma = _gamma_block(codes, active, t, gamma, p, s, rho, gram, inner_max_iter, tol)
        delta = coalition_sums(codes, gamma, np.flatnonzero(gamma))
        history.append(float(np.sum(active * (t - delta) ** 2)))
        t = isotonic(delta, active)
        history.append(float(np.sum(active * (t - delta) ** 2)))
        if history[-3] - history[-1] <= tol * history[-3]:  # relative decrease of one alternation
            break
        active = _robust_weights(weights, t - delta, huber_delta)
    return gamma, t, history, iterations


def _fit(codes, payoffs, weights, p, sparsity, shapley, rho, gram, *, max_iter, inner_max_iter, tol, n_restarts,
         init, loss, huber_delta, min_slope, random_state):
    scale = np.linalg.norm(shapley)
    isotonic = _IsotonicStep(payoffs, min_slope / scale if scale > 0 else 0.0)
    if sparsity == "ric":
        effective_n = weights.sum() ** 2 / np.sum(weights**2)
        results = {}
        for s in range(1, p + 1):
            results[s] = _fit(codes, payoffs, weights, p, s, shapley, rho, gram, max_iter=max_iter,
                              inner_max_iter=inner_max_iter, tol=tol, n_restarts=n_restarts, init=init, loss=loss,
                              huber_delta=huber_delta, min_slope=min_slope, random_state=random_state)
        criterion = {
            s: effective_n * np.log(max(r.objective, 1e-300) / weights.sum()) + 2 * s * np.log(p)
            for s, r in results.items()
        }
        best = min(criterion, key=criterion.get)
        results[best].criterion = criterion
        return results[best]
    s = int(sparsity)
    if not 1 <= s <= p:
        raise ValueError(f"sparsity must be an integer in [1, {p}] or 'ric', got {sparsity!r}.")
    rng = np.random.default_rng(random_state)
    starts = [_hard_threshold(shapley, s) if init == "shapley" else np.zeros(p)]
    if init == "zero":  # the poster's start: gamma = 0, t = v; the first step is a thresholded Z^T W v
        starts[0] = _hard_threshold(-gradient_and_loss(codes, weights, payoffs, np.zeros(p),
                                                       np.zeros(0, dtype=np.int64), p)[0], s)
    for _ in range(n_restarts):
        starts.append(_hard_threshold(shapley + rng.normal(scale=np.abs(shapley).max() + 1e-12, size=p), s))
    best = None
    for gamma0 in starts:
        if not gamma0.any():
            continue
        gamma, t, history, iterations = _alternate(codes, payoffs, weights, p, s, gamma0, rho, gram, max_iter,
                                                   inner_max_iter, tol, isotonic,
                                                   huber_delta if loss == "huber" else None)
        if best is None or history[-1] < best.objective_history[-1]:
            best = SISRResult(gamma=gamma, transform_values=t, payoffs=payoffs, codes=codes, weights=weights,
                              sparsity=s, n_iterations=iterations, objective_history=history,
                              shapley_values=shapley)
    if best is None:  # every payoff is zero: nothing to attribute
        return SISRResult(gamma=np.zeros(p), transform_values=np.zeros_like(payoffs), payoffs=payoffs, codes=codes,
                          weights=weights, sparsity=s, n_iterations=0, objective_history=[0.0],
                          shapley_values=shapley)
    return best


def sisr(coalition_values, sparsity, *, full_weight=None, min_slope=1e-2, max_iter=100, inner_max_iter=20, tol=1e-4,
         n_restarts=0, init="shapley", loss="squared", huber_delta=None, random_state=None) -> SISRResult:
    """Sparse Isotonic Shapley Regression on the full table of coalition payoffs.

    Parameters
    ----------
    coalition_values : array-like of length 2^p
        ``coalition_values[code]`` is the payoff of the coalition with bit code ``code`` (bit j set = player
        j present), baseline-adjusted so that the empty coalition is 0 (it is subtracted if not).
    sparsity : int or "ric"
        Support size s, or "ric" to choose it by the risk-inflation criterion.
    full_weight : float, optional
        Weight of the full coalition (whose Shapley-kernel weight is infinite). Default: the weight of a
        singleton, ``1/p``. The empty coalition is pinned exactly: T(0) = 0.
    min_slope : float, default=1e-2
        T is strictly increasing, with slope at least ``min_slope / ||phi||`` (phi the plain Shapley
        values, so 1e-2 is 1% of the slope of the additive fit). Without it (0, the poster's formulation),
        a flat step of T lets a smaller support reach zero loss: the degenerate solutions of the docs.
    max_iter, inner_max_iter, tol : int, int, float
        Outer alternations, inner support steps per alternation, and the tolerance: stop when one alternation
        lowers the objective by less than ``tol`` relatively (the support step stops when gamma moves less than
        ``tol``). In our runs, tighter tolerances cost time without improving the recovered gamma.
    n_restarts : int, default=0
        Extra starts (perturbed Shapley values); the fit with the smallest objective is kept.
    init : {"shapley", "zero"}, default="shapley"
        Start from the hard-thresholded plain Shapley values (default), or from the poster's gamma = 0,
        t = v (kept to reproduce the degenerate-solution analysis of the docs).
    loss : {"squared", "huber"}, default="squared"
        "huber" makes the T-step robust to outlying payoffs (iteratively reweighted PAVA).
    huber_delta : float, optional
        Huber threshold in units of the transformed payoffs, whose scale is fixed by ||gamma|| = 1
        (default 0.05).
    random_state : int or None
        Seed of the restarts.

    Returns
    -------
    SISRResult

    Examples
    --------
    >>> import numpy as np
    >>> from shap_instances.isotonic import sisr
    >>> p = 5
    >>> bits = (np.arange(2**p)[:, None] >> np.arange(p)) & 1
    >>> v = np.sqrt(bits @ np.array([4.0, 0.0, 1.0, 0.0, 0.0]))  # a sparse game seen through sqrt
    >>> result = sisr(v, sparsity=2)
    >>> result.support.tolist(), bool(np.isclose(np.linalg.norm(result.gamma), 1.0))
    ([0, 2], True)
    """
    values = np.asarray(coalition_values, dtype=np.float64).ravel()
    p = int(round(np.log2(values.size)))
    if values.size < 2 or 2**p != values.size:
        raise ValueError(f"coalition_values must have length 2^p (p >= 1), got {values.size}.")
    if p > MAX_EXACT_PLAYERS:
        raise GameTooLargeError(f"p = {p} players need 2^{p} payoffs; use sisr_from_samples (sampled coalitions).")
    if not np.all(np.isfinite(values)):
        raise ValueError("coalition_values contains NaN or infinite payoffs.")
    values = values - values[0]
    codes = np.arange(2**p, dtype=np.int64)
    sizes = _popcount(codes)
    weights = kernel_weights(p)[sizes]
    full_weight = kernel_weights(p)[1] if full_weight is None and p > 1 else (full_weight or 1.0)
    weights[-1] = full_weight
    w_in, w_out = shapley_weights(p)
    shapley = shapley_from_codes(values, p, w_in, w_out)
    return _fit(codes, values, weights, p, sparsity, shapley, gram_eigenvalue(p, full_weight),
                _gram_matrix(p, full_weight),
                max_iter=max_iter, inner_max_iter=inner_max_iter, tol=tol, n_restarts=n_restarts, init=init,
                loss=loss, huber_delta=_huber(loss, huber_delta), min_slope=min_slope, random_state=random_state)


def sisr_from_samples(masks, payoffs, weights, sparsity, **kwargs) -> SISRResult:
    """SISR on a sample of coalitions (p beyond exact enumeration); an approximation.

    ``masks`` (m, p) bool, ``payoffs`` (m,) baseline-adjusted (empty = 0), ``weights`` (m,) regression
    weights, e.g. the Shapley-kernel design of :class:`~shap_instances.estimators.KernelEstimator`. The
    initial attributions are the weighted least-squares (Kernel SHAP) solution on the sample, and rho is
    the top eigenvalue of the sample's Z^T W Z. Other keywords as in :func:`sisr`.

    Examples
    --------
    >>> import numpy as np
    >>> from shap_instances.isotonic import sisr_from_samples
    >>> rng = np.random.default_rng(0)
    >>> masks = rng.random((400, 30)) < 0.5
    >>> payoffs = (masks[:, 0] * 3.0 + masks[:, 1] * 1.0) ** 3
    >>> result = sisr_from_samples(masks, payoffs, np.ones(400), sparsity=2)
    >>> sorted(result.support.tolist())
    [0, 1]
    """
    masks = np.asarray(masks, dtype=bool)
    m, p = masks.shape
    if p > 62:
        raise ValueError(f"sisr_from_samples supports up to 62 players, got {p}.")
    payoffs = np.asarray(payoffs, dtype=np.float64)
    weights = np.asarray(weights, dtype=np.float64)
    codes = masks.astype(np.int64) @ (np.int64(1) << np.arange(p, dtype=np.int64))
    z = masks.astype(np.float64)
    gram = z.T @ (weights[:, None] * z)
    shapley = np.linalg.lstsq(gram, z.T @ (weights * payoffs), rcond=None)[0]
    rho = float(np.linalg.eigvalsh(gram)[-1])
    options = dict(max_iter=100, inner_max_iter=20, tol=1e-4, n_restarts=0, init="shapley", loss="squared",
                   huber_delta=None, min_slope=1e-2, random_state=None)
    options.update(kwargs)
    options["huber_delta"] = _huber(options["loss"], options["huber_delta"])
    return _fit(codes, payoffs, weights, p, sparsity, shapley, rho, gram, **options)


def _huber(loss, huber_delta):
    if loss not in ("squared", "huber"):
        raise ValueError(f"loss must be 'squared' or 'huber', got {loss!r}.")
    if loss == "huber" and huber_delta is None:
        return 0.05
    return huber_delta
