"""Engine benchmarks.

1. The batched Kernel SHAP solve against stock ``shap.KernelExplainer(l1_reg=False)`` on one game with
   M = 100 and M = 400 players and D = 100 outputs, both timed directly on all 100 outputs (shap solves its
   regression once per output; nothing is extrapolated). The game is *not* quadratic, so both methods have
   sampling error: players form groups of 10 and ``v_d(S) = sum_k g(sum_{i in S & G_k} w_id)`` with
   ``g(x) = tanh(3x + 0.5)``, which has interactions of every order inside each group. The game is a sum of
   group games, so its exact Shapley values are the group games' (each enumerated over 2^10 coalitions):
   errors are measured against exact values. Both methods get shap's default budget ``2 M + 2048`` and the
   same budget four times larger. Each method runs with seeds 0, 1 and 2, the three methods alternating
   within a seed; times are medians over the seeds, speed-ups the median of the per-seed ratios (with their
   range), errors the mean over the seeds. The time spent inside the value function (the same work for both)
   is measured too, so the engine's own time can be compared. Where our mean error exceeds shap's, our budget
   is raised in 5% steps until it no longer does, and that run's median time gives the speed-up at matched
   error. Both sides are warmed up on a small game first (first-call times reported separately). BLAS is
   limited to one thread by default (on a loaded 2-core machine two OpenBLAS threads made both methods 2 to
   15 times slower and the timings erratic).
2. Error against evaluations for permutation and kernel sampling on a ridge residual game (n = 100
   training rows of diabetes, ``ResidualGame(Ridge(alpha=0.1))``, D = 100 outputs), against a reference
   from a long permutation run whose own standard error is printed; times are medians of three runs (seeds 0,
   1, 2), errors their mean.

Usage: ``python benchmarks/bench_engine.py [--quick] [--threads N] [--markdown FILE]`` (``--quick``: M = 100
and the default budget only, a shorter reference; under a minute).
"""

from __future__ import annotations

import statistics
import time
import warnings

import numpy as np
import shap
from _common import REPEATS, Bench, Timing, first_call, markdown_table, ratio, ratios
from sklearn.datasets import load_diabetes
from sklearn.linear_model import Ridge

from shap_instances.estimators import ExactEstimator, KernelEstimator, PermutationEstimator
from shap_instances.games import FunctionGame, ResidualGame

GROUP = 10


class GroupNonlinearGame:
    """``v_d(S) = sum_k g(S_k w_d)``, ``g(x) = tanh(3x + 0.5)``, over groups of GROUP players.

    Called on a 0/1 (or bool) matrix of shape (m, M); returns (m, D). ``seconds`` accumulates the time spent
    in calls.
    """

    def __init__(self, m, d, seed=0):
        self.m, self.d = m, d
        self.w = np.random.default_rng(seed).normal(size=(m, d)) / np.sqrt(GROUP)
        self.seconds = 0.0

    @staticmethod
    def g(x):
        return np.tanh(3 * x + 0.5)

    def __call__(self, masks):
        start_time = time.perf_counter()
        z = np.asarray(masks, dtype=np.float64)
        out = np.zeros((len(z), self.d))
        for start in range(0, self.m, GROUP):
            out += self.g(z[:, start:start + GROUP] @ self.w[start:start + GROUP])
        self.seconds += time.perf_counter() - start_time
        return out

    def shapley(self):
        """Exact values: the game is a sum of group games, each enumerated over its 2^GROUP coalitions."""
        phi = np.empty((self.m, self.d))
        for start in range(0, self.m, GROUP):
            w = self.w[start:start + GROUP]
            group = FunctionGame(lambda masks, w=w: self.g(masks @ w), len(w), self.d)
            phi[start:start + GROUP] = ExactEstimator(silent=True).estimate(group).values
        return phi


def run_ours(game_fn, m, d, budget, seed, n_bootstrap):
    """(seconds, seconds inside the value function, values)."""
    game_fn.seconds = 0.0
    start = time.perf_counter()
    result = KernelEstimator(max_evals=budget, n_bootstrap=n_bootstrap, random_state=seed, silent=True).estimate(
        FunctionGame(game_fn, m, d))
    return time.perf_counter() - start, game_fn.seconds, result.values


def run_stock(game_fn, m, d, budget, seed):
    """shap.KernelExplainer on the 0/1 game (background: the empty coalition; explained point: the full one)."""
    explainer = shap.KernelExplainer(game_fn, np.zeros((1, m)))
    np.random.seed(seed)  # noqa: NPY002 - shap's sampler reads the global state
    game_fn.seconds = 0.0  # not counting the constructor's call on the background
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        values = np.asarray(explainer.shap_values(np.ones((1, m)), nsamples=budget, l1_reg=False, silent=True))
    seconds = time.perf_counter() - start
    return seconds, game_fn.seconds, values.reshape(m, d) if values.ndim == 3 else values.reshape(d, m).T


def kernel_vs_shap(m, d, budget, seeds=REPEATS):
    """Per method (ours, ours with 20 bootstrap SEs, shap): a Timing of the total seconds per seed, a Timing of
    the seconds outside the value function, and the mean relative RMSE against the exact values; plus the
    matched-error run of ours."""
    game_fn = GroupNonlinearGame(m, d)
    truth = game_fn.shapley()
    scale = np.sqrt(np.mean(truth**2))
    runs = {name: (Timing([]), Timing([]), []) for name in ("ours", "ours_se", "shap")}
    for seed in range(seeds):
        for name, (run, extra) in (("ours", (run_ours, (0,))), ("ours_se", (run_ours, (20,))),
                                   ("shap", (run_stock, ()))):
            seconds, in_game, values = run(game_fn, m, d, budget, seed, *extra)
            total, engine, errors = runs[name]
            total.seconds.append(seconds)
            engine.seconds.append(seconds - in_game)
            errors.append(np.sqrt(np.mean((values - truth) ** 2)) / scale)
    out = {name: (total, engine, float(np.mean(errors))) for name, (total, engine, errors) in runs.items()}
    # matched error: raise our budget in 5% steps until our mean error is no larger than shap's
    matched_budget, matched, matched_error = budget, out["ours"][0], out["ours"][2]
    while matched_error > out["shap"][2] and matched_budget < 4 * budget:
        matched_budget = int(matched_budget * 1.05)
        rows = [run_ours(game_fn, m, d, matched_budget, seed, 0) for seed in range(seeds)]
        matched = Timing([r[0] for r in rows])
        matched_error = np.mean([np.sqrt(np.mean((r[2] - truth) ** 2)) / scale for r in rows])
    out["matched"] = (matched_budget, matched, matched_error)
    return out


def warm_up():
    """First calls of both sides on a small game (imports, caches), timed on their own."""
    game_fn = GroupNonlinearGame(20, 5, seed=99)
    ours = first_call(lambda: run_ours(game_fn, 20, 5, 300, 0, 0))
    theirs = first_call(lambda: run_stock(game_fn, 20, 5, 300, 0))
    return ours, theirs


def error_vs_evaluations(quick):
    X, y = load_diabetes(return_X_y=True)
    X, y = X[:100], y[:100]
    game = ResidualGame(Ridge(alpha=0.1), X, y)
    n_reference = 2_000 if quick else 20_000
    start = time.perf_counter()
    reference = PermutationEstimator(n_permutations=n_reference, random_state=123, silent=True).estimate(game)
    reference_seconds = time.perf_counter() - start
    scale = np.sqrt(np.mean(reference.values**2))
    reference_error = np.sqrt(np.mean(reference.standard_errors**2)) / scale
    rows = []
    for evaluations in ((2_000, 8_000) if quick else (2_000, 8_000, 32_000)):
        for name, make in (
            ("permutation", lambda seed, e=evaluations: PermutationEstimator(max_evals=e, random_state=seed,
                                                                             silent=True)),
            ("kernel", lambda seed, e=evaluations: KernelEstimator(max_evals=e, n_bootstrap=0, random_state=seed,
                                                                   silent=True)),
        ):
            timing, errors, used = Timing([]), [], []
            for seed in range(REPEATS):
                start = time.perf_counter()
                result = make(seed).estimate(game)
                timing.seconds.append(time.perf_counter() - start)
                errors.append(np.sqrt(np.mean((result.values - reference.values) ** 2)) / scale)
                used.append(result.n_evaluations)
            rows.append((evaluations, name, int(np.median(used)), float(np.mean(errors)), timing))
    return n_reference, reference_seconds, reference_error, rows


def main(bench: Bench) -> None:
    d = 100
    warm_ours, warm_shap = warm_up()
    cases = [(100, 2 * 100 + 2048)] if bench.quick else [
        (100, 2 * 100 + 2048), (100, 4 * (2 * 100 + 2048)), (400, 2 * 400 + 2048), (400, 4 * (2 * 400 + 2048))]
    rows = []
    for m, budget in cases:
        r = kernel_vs_shap(m, d, budget)
        (t_ours, e_ours, err_ours), (t_se, _, _), (t_shap, e_shap, err_shap) = r["ours"], r["ours_se"], r["shap"]
        b_match, t_match, _ = r["matched"]
        rows.append([m, f"{budget:,}", f"{t_ours.median:.3f}", f"{t_se.median:.2f}",
                     f"{statistics.median(ratios(t_se, t_ours)):.1f}x", f"{t_shap.median:.2f}", ratio(t_shap, t_ours),
                     f"{e_ours.median:.3f} / {e_shap.median:.2f}", ratio(e_shap, e_ours), f"{err_ours:.3f}",
                     f"{err_shap:.3f}", f"{b_match:,}, {t_match.median:.3f}, {ratio(t_shap, t_match, spread=False)}"])
    bench.print(
        f"### Batched kernel solve vs shap.KernelExplainer(l1_reg=False), D = {d} outputs",
        f"Game: groups of {GROUP} players, g(x) = tanh(3x + 0.5) of each group's weighted sum; shap timed on all {d} "
        f"outputs. Seeds 0-{REPEATS - 1}: times are medians (s), speed-ups the median of the per-seed ratios "
        "(range in brackets), errors the mean (RMSE against the exact values / RMS of the exact values). 'engine' = "
        "total minus the time inside the value function. First calls (small game, excluded): ours "
        f"{warm_ours:.2f} s, shap {warm_shap:.2f} s.",
        markdown_table(["players M", "budget", "ours (s)", "ours + 20 bootstrap SEs (s)", "SE cost / values",
                        "shap (s)", "speed-up", "engine: ours / shap (s)", "engine speed-up", "rel. RMSE ours",
                        "rel. RMSE shap", "ours at shap's error: budget, s, speed-up"], rows), part="kernel")
    n_reference, reference_seconds, reference_error, rows = error_vs_evaluations(bench.quick)
    bench.print(
        "### Error against evaluations on a ridge residual game (n = 100 players, D = 100 outputs)",
        f"Reference: {n_reference:,} antithetic permutations ({reference_seconds:.1f} s), its own relative "
        f"standard error {reference_error:.4f}. Seeds 0-{REPEATS - 1}: seconds are medians, errors means. "
        "Permutation sampling uses the ridge game's incremental prefix path; kernel sampling refits each coalition.",
        markdown_table(["budget", "estimator", "evaluations used", "relative RMSE vs reference", "seconds"],
                       [[f"{e:,}", name, f"{used:,}", f"{error:.3f}", f"{t.median:.2f}"]
                        for e, name, used, error, t in rows]), part="errors")


if __name__ == "__main__":
    Bench(__doc__).run(main)
