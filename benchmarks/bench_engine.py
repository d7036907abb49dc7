"""Engine benchmarks.

1. The batched Kernel SHAP solve against stock ``shap.KernelExplainer(l1_reg=False)`` on a quadratic game with
   M = 100 and 400 players and D = 100 outputs, at the same budget: the reference values are the quadratic
   game's closed form. Paired sampling makes Kernel SHAP exact on games of order two, so our error is
   rounding; shap's sampler is not paired.
2. Error against evaluations for permutation and kernel sampling on a ridge residual game (n = 100
   training instances; reference from a long permutation run).

Usage: ``python benchmarks/bench_engine.py [--quick]``.
"""

from __future__ import annotations

import sys
import time
import warnings

import numpy as np
import shap
from sklearn.datasets import load_diabetes

from shap_instances.estimators import KernelEstimator, PermutationEstimator
from shap_instances.games import FunctionGame, Game


class QuadraticGame:
    """v_d(S) = S a_d + (S u_d)^2: pairwise interactions 2 u_i u_j, closed form phi_i = a_i + u_i sum_j u_j."""

    def __init__(self, m, d, seed=0):
        rng = np.random.default_rng(seed)
        self.a = rng.normal(size=(m, d))
        self.u = rng.normal(size=(m, d)) / np.sqrt(m)

    def __call__(self, x):
        x = np.asarray(x, dtype=np.float64)
        return x @ self.a + (x @ self.u) ** 2

    def shapley(self):
        return self.a + self.u * self.u.sum(axis=0)


def kernel_vs_shap(m, d, budget, stock_outputs):
    game_fn = QuadraticGame(m, d)
    truth = game_fn.shapley()
    start = time.perf_counter()
    ours = KernelEstimator(max_evals=budget, n_bootstrap=0, random_state=0).estimate(
        FunctionGame(game_fn, m, d))
    t_ours = time.perf_counter() - start
    # stock shap on the first `stock_outputs` outputs (its cost is per output); extrapolated to D
    model = lambda x: game_fn(x)[:, :stock_outputs]  # noqa: E731
    explainer = shap.KernelExplainer(model, np.zeros((1, m)))
    np.random.seed(0)  # noqa: NPY002 - shap's sampler reads the global state
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        stock = np.asarray(explainer.shap_values(np.ones((1, m)), nsamples=budget, l1_reg=False, silent=True))
    t_stock = (time.perf_counter() - start) * d / stock_outputs
    stock = stock.reshape(m, stock_outputs) if stock.ndim == 3 else stock.reshape(stock_outputs, m).T
    err_ours = np.sqrt(np.mean((ours.values[:, :stock_outputs] - truth[:, :stock_outputs]) ** 2))
    err_stock = np.sqrt(np.mean((stock - truth[:, :stock_outputs]) ** 2))
    return t_ours, t_stock, err_ours, err_stock


class RidgeResidualGame(Game):
    """v(S) = residuals on all n training rows of a ridge fitted on S (v(empty) = 0)."""

    def __init__(self, X, y, alpha=1.0):
        super().__init__(len(y), len(y))
        self.X, self.y, self.alpha = X, y, alpha

    def value_function(self, coalitions):
        out = np.zeros((len(coalitions), self.n_outputs))
        for k, mask in enumerate(coalitions):
            if not mask.any():
                continue
            Xs, ys = self.X[mask], self.y[mask]
            xm, ym = Xs.mean(0), ys.mean()
            Xc = Xs - xm
            w = np.linalg.solve(Xc.T @ Xc + self.alpha * np.eye(Xs.shape[1]), Xc.T @ (ys - ym))
            out[k] = (self.X - xm) @ w + ym - self.y
        return out


def error_vs_evaluations(quick):
    X, y = load_diabetes(return_X_y=True)
    X, y = X[:100], y[:100]
    game = RidgeResidualGame(X, y, alpha=0.1)
    reference = PermutationEstimator(n_permutations=200 if quick else 2000, random_state=123,
                                     silent=True).estimate(game).values
    scale = np.sqrt(np.mean(reference**2))
    rows = []
    for evaluations in ((2_000, 8_000) if quick else (2_000, 8_000, 32_000)):
        for name, estimator in (
            ("permutation", PermutationEstimator(max_evals=evaluations, random_state=0, silent=True)),
            ("kernel", KernelEstimator(max_evals=evaluations, n_bootstrap=0, random_state=0)),
        ):
            start = time.perf_counter()
            result = estimator.estimate(game)
            seconds = time.perf_counter() - start
            error = np.sqrt(np.mean((result.values - reference) ** 2)) / scale
            rows.append((evaluations, name, result.n_evaluations, error, seconds))
    return rows


def main(quick: bool = False) -> None:
    print("### Batched kernel solve vs shap.KernelExplainer(l1_reg=False), D = 100 outputs\n")
    print("| players M | budget | ours (s) | stock shap (s, per-output cost x 100) | speed-up "
          "| RMSE ours | RMSE shap |")
    print("|---|---|---|---|---|---|---|")
    cases = [(100, 2 * 100 + 2048, 5)] if quick else [(100, 2 * 100 + 2048, 20), (400, 2 * 400 + 2048, 5)]
    for m, budget, stock_outputs in cases:
        t_ours, t_stock, e_ours, e_stock = kernel_vs_shap(m, 100, budget, stock_outputs)
        print(f"| {m} | {budget} | {t_ours:.2f} | {t_stock:.1f} (timed on {stock_outputs} outputs) | "
              f"{t_stock / t_ours:.0f}x | {e_ours:.3g} | {e_stock:.3g} |")
    print("\n### Error against evaluations on a ridge residual game (n = 100 players, D = 100 outputs)\n")
    print("| budget | estimator | evaluations used | relative RMSE vs reference | seconds |")
    print("|---|---|---|---|---|")
    for evaluations, name, used, error, seconds in error_vs_evaluations(quick):
        print(f"| {evaluations} | {name} | {used} | {error:.3f} | {seconds:.2f} |")


if __name__ == "__main__":
    main(quick="--quick" in sys.argv)
