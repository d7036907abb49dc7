"""Engine benchmarks.

0. The headline: Kernel SHAP of a model with a background against ``shap.KernelExplainer(model, background)`` at
   equal error, M = 100 features. The model has one output and groups of 10 features,
   ``f(x) = sum_k tanh(x_Gk W_k + 0.5) v_k`` with ``H`` hidden units a group (cheap: H = 1; expensive: H = 100);
   its interventional Shapley values over the background are those of the group games, each enumerated over 2^10
   coalitions and every background row (exact). Our side is the game ``v(S) = mean_b f(x_S, b_rest)`` (one model
   call per batch of coalitions, the background average one reshape and mean) solved by ``KernelApproximator``;
   shap's side is its explainer on the same model and background. Both get shap's default budget 2M + 2048 with
   seeds 0-4; our budget is then matched to shap's error (relative RMSE against the exact values, the mean over
   the seeds): first the budget that the 1/budget law of the error predicts, raised in 5% steps while our error
   is larger. Times are CPU seconds (``process_time``, BLAS and OpenMP on one thread: the work, whatever else loads
   the machine) with wall seconds beside; the time inside the model is measured on both sides, so the table
   shows the split and the bound: shap's time over our time inside the model, the speed-up if our engine cost
   nothing. Rows: 1, 16 and 64 background rows with the cheap model, 16 with the expensive one.
1. The batched Kernel SHAP solve against stock ``shap.KernelExplainer(l1_reg=False)`` on one game with
   M = 100 and M = 400 players and D = 100 outputs, both timed directly on all 100 outputs (shap solves its
   regression once per output; nothing is extrapolated). The game is *not* quadratic, so both methods have
   sampling error: players form groups of 10 and ``v_d(S) = sum_k g(sum_{i in S & G_k} w_id)`` with
   ``g(x) = tanh(3x + 0.5)``, which has interactions of every order inside each group. The game is a sum of
   group games, so its exact Shapley values are the group games' (each enumerated over 2^10 coalitions):
   errors are measured against exact values. Both methods get shap's default budget ``2 M + 2048`` and the
   same budget four times larger. Each method runs with seeds 0, 1 and 2, the three (ours, ours with standard
   errors, shap) alternating within a seed; times are medians over the seeds, speed-ups the median of the
   per-seed ratios (with their range), errors the mean over the seeds. The time spent inside the value
   function (the same work for both) is measured too, so the engine's own time can be compared. Where our
   mean error exceeds shap's, our budget is raised in 5% steps until it no longer does, and that run's median
   time gives the speed-up at matched error. Both sides are warmed up on a small game first (first-call times
   reported separately). BLAS is limited to one thread by default (on a loaded 2-core machine two OpenBLAS
   threads made both methods 2 to 15 times slower and the timings erratic).
2. Error against evaluations for permutation and kernel sampling on a ridge residual game (n = 100
   training rows of diabetes, ``ResidualGame(Ridge(alpha=0.1))``, D = 100 outputs), against a reference
   from a long permutation run whose own standard error is printed; times are medians of three runs (seeds 0,
   1, 2), errors their mean.
3. The cost of the kernel estimator's standard errors (analytic, docs/engine.md): the same estimate with
   ``standard_errors=False`` and ``True`` at M = 100 and 400, D = 100, on the game of table 1, timed in
   alternation in the same run (9 pairs; 3 with ``--quick``): median CPU and wall times of each setting and
   the median of the paired ratios, in total and for the engine alone (the CPU time inside the value function
   excluded). CPU time (``time.process_time``, BLAS on one thread) measures the work whatever else loads the
   machine; wall time is what one waits at the run's load.
4. Coverage of the standard errors against exact values: nominal 95% and 68% intervals pooled over all
   players, outputs and seeds, (a) on the game of table 1 (M = 100 and 400, exact values by groups) and
   (b) on 20 games of each of four kinds with M = 9 to 12 (exact values by enumeration) at 10%, 25% and 50%
   of 2^M evaluations.

The load average is printed at the start and the end, with the thread setting (``benchmarks/_common.py``).

Usage: ``python benchmarks/bench_engine.py [--quick] [--threads N] [--markdown FILE]`` (``--quick``: M = 100
and the default budget only, a shorter reference, fewer coverage games; about a minute).
"""

from __future__ import annotations

import statistics
import time
import warnings

import numpy as np
import shap
from _common import REPEATS, Bench, Timing, first_call, markdown_table, ratio, ratios, record
from sklearn.datasets import load_diabetes
from sklearn.linear_model import Ridge

from shap_instances.approximators import ExactApproximator, KernelApproximator, PermutationApproximator
from shap_instances.games import FunctionGame, ResidualGame

GROUP = 10


class GroupNonlinearGame:
    """``v_d(S) = sum_k g(S_k w_d)``, ``g(x) = tanh(3x + 0.5)``, over groups of GROUP players.

    Called on a 0/1 (or bool) matrix of shape (m, M); returns (m, D). ``seconds`` and ``cpu_seconds``
    accumulate the wall-clock and the CPU time spent in calls.
    """

    def __init__(self, m, d, seed=0):
        self.m, self.d = m, d
        self.w = np.random.default_rng(seed).normal(size=(m, d)) / np.sqrt(GROUP)
        self.seconds = self.cpu_seconds = 0.0

    @staticmethod
    def g(x):
        return np.tanh(3 * x + 0.5)

    def __call__(self, masks):
        start_time, start_cpu = time.perf_counter(), time.process_time()
        z = np.asarray(masks, dtype=np.float64)
        out = np.zeros((len(z), self.d))
        for start in range(0, self.m, GROUP):
            out += self.g(z[:, start:start + GROUP] @ self.w[start:start + GROUP])
        self.seconds += time.perf_counter() - start_time
        self.cpu_seconds += time.process_time() - start_cpu
        return out

    def shapley(self):
        """Exact values: the game is a sum of group games, each enumerated over its 2^GROUP coalitions."""
        phi = np.empty((self.m, self.d))
        for start in range(0, self.m, GROUP):
            w = self.w[start:start + GROUP]
            group = FunctionGame(lambda masks, w=w: self.g(masks @ w), len(w), self.d)
            phi[start:start + GROUP] = ExactApproximator(silent=True).estimate(group).values
        return phi


class GroupModel:
    """A one-output model over groups of GROUP features, ``f(x) = sum_k tanh(x_Gk W_k + 0.5) v_k`` with ``hidden``
    units a group; ``seconds`` and ``cpu_seconds`` accumulate the time spent in calls (on both sides)."""

    def __init__(self, m, hidden, seed=0):
        rng = np.random.default_rng(seed)
        self.m = m
        self.w = rng.normal(size=(m // GROUP, GROUP, hidden)) / np.sqrt(GROUP)
        self.v = rng.normal(size=(m // GROUP, hidden)) / np.sqrt(hidden)
        self.seconds = self.cpu_seconds = 0.0

    def group(self, k, X):
        return np.tanh(X @ self.w[k] + 0.5) @ self.v[k]

    def __call__(self, X):
        start_time, start_cpu = time.perf_counter(), time.process_time()
        X = np.asarray(X, dtype=np.float64)
        out = np.zeros(len(X))
        for k in range(self.m // GROUP):
            out += self.group(k, X[:, k * GROUP:(k + 1) * GROUP])
        self.seconds += time.perf_counter() - start_time
        self.cpu_seconds += time.process_time() - start_cpu
        return out

    def shapley(self, x, background):
        """Exact interventional values: each group's game (features of the group from x, the rest of the group
        from a background row, averaged over the rows) enumerated over its 2^GROUP coalitions."""
        phi = np.empty(self.m)
        for k in range(self.m // GROUP):
            columns = slice(k * GROUP, (k + 1) * GROUP)
            game = FunctionGame(MaskedMean(lambda X, k=k: self.group(k, X), x[columns], background[:, columns]),
                                GROUP)
            phi[columns] = ExactApproximator(silent=True).estimate(game).values[:, 0]
        return phi


class MaskedMean:
    """``v(S) = mean over the background rows b of model(x on S, b elsewhere)``: one model call per batch of
    coalitions (coalitions x background rows), the mean one reshape."""

    def __init__(self, model, x, background):
        self.model, self.x, self.background = model, x, background

    def __call__(self, masks):
        rows = np.where(masks[:, None, :], self.x, self.background[None])
        out = np.asarray(self.model(rows.reshape(-1, len(self.x))), dtype=np.float64)
        return out.reshape(len(masks), len(self.background), -1).mean(axis=1)


def _timed_run(model, call):
    """(CPU s, wall s, CPU s inside the model, wall s inside the model, values) of ``call()``."""
    model.seconds = model.cpu_seconds = 0.0
    wall, cpu = time.perf_counter(), time.process_time()
    values = call()
    return time.process_time() - cpu, time.perf_counter() - wall, model.cpu_seconds, model.seconds, values


def masked_ours(model, x, background, budget, seed):
    game = FunctionGame(MaskedMean(model, x, background), len(x))
    return _timed_run(model, lambda: KernelApproximator(max_evals=budget, standard_errors=False, random_state=seed,
                                                        silent=True).estimate(game).values[:, 0])


def masked_shap(model, x, background, budget, seed):
    explainer = shap.KernelExplainer(model, background)

    def call():
        np.random.seed(seed)  # noqa: NPY002 - shap's sampler reads the global state
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return np.asarray(explainer.shap_values(x[None], nsamples=budget, l1_reg=False, silent=True)).ravel()

    return _timed_run(model, call)


def _masked_runs(run, model, x, background, budget, seeds, truth):
    """Per seed (CPU s, wall s, model CPU s, model wall s), and the mean relative RMSE over the seeds."""
    rows, errors = [], []
    for seed in seeds:
        *times, values = run(model, x, background, budget, seed)
        rows.append(times)
        errors.append(np.sqrt(np.mean((values - truth) ** 2)) / np.sqrt(np.mean(truth**2)))
    return np.array(rows), float(np.mean(errors))


def masked_vs_shap(n_background, hidden, m=100, seeds=range(5)):
    """One row of the headline table: both sides at shap's default budget, then ours at shap's error."""
    rng = np.random.default_rng(n_background)
    background, x = rng.normal(size=(n_background, m)), rng.normal(size=m)
    model = GroupModel(m, hidden)
    truth = model.shapley(x, background)
    budget = 2 * m + 2048
    masked_ours(model, x, background, 300, 0), masked_shap(model, x, background, 300, 0)  # first calls
    theirs, shap_error = _masked_runs(masked_shap, model, x, background, budget, seeds, truth)
    same_budget, same_error = _masked_runs(masked_ours, model, x, background, budget, seeds, truth)
    matched = max(2 * m + 4, int(budget * (same_error / shap_error) ** 2))  # the error's 1/budget law
    ours, error = _masked_runs(masked_ours, model, x, background, matched, seeds, truth)
    while error > shap_error and matched < 4 * budget:
        matched = int(matched * 1.05)
        ours, error = _masked_runs(masked_ours, model, x, background, matched, seeds, truth)
    return {"budget": budget, "shap": theirs, "shap_error": shap_error, "same": same_budget, "same_error": same_error,
            "matched": matched, "ours": ours, "error": error}


MASKED_CASES = ((1, 1), (16, 1), (64, 1), (16, 100))


def masked_table(bench):
    rows = []
    for n_background, hidden in MASKED_CASES:
        r = masked_vs_shap(n_background, hidden)
        theirs, ours = r["shap"], r["ours"]
        speedup = float(np.median(theirs[:, 0] / ours[:, 0]))
        wall_speedup = float(np.median(theirs[:, 1] / ours[:, 1]))
        bound = float(np.median(theirs[:, 0] / ours[:, 2]))
        key = f"bg{n_background}_{'cheap' if hidden == 1 else 'expensive'}"
        record(**{f"kernel_masked_speedup_{key}": round(speedup, 1), f"kernel_masked_bound_{key}": round(bound, 1),
                  f"kernel_masked_wall_speedup_{key}": round(wall_speedup, 1),
                  f"kernel_masked_budget_{key}": r["matched"]})
        med = np.median
        rows.append([n_background, "cheap (H = 1)" if hidden == 1 else f"expensive (H = {hidden})",
                     f"{r['shap_error']:.4f} / {r['same_error']:.4f}", f"{r['matched']:,} ({r['error']:.4f})",
                     f"{med(theirs[:, 0]):.3f} ({med(theirs[:, 1]):.3f})",
                     f"{med(theirs[:, 2]):.3f} / {med(theirs[:, 0] - theirs[:, 2]):.3f}",
                     f"{med(ours[:, 0]):.3f} ({med(ours[:, 1]):.3f})",
                     f"{med(ours[:, 2]):.3f} / {med(ours[:, 0] - ours[:, 2]):.3f}",
                     f"**{speedup:.1f}x** ({wall_speedup:.1f}x)", f"{bound:.1f}x"])
    bench.print(
        "### Kernel SHAP of a model with a background vs shap.KernelExplainer at equal error, M = 100",
        "One-output model over groups of 10 features, f(x) = sum_k tanh(x_Gk W_k + 0.5) v_k with H hidden units a "
        "group; exact interventional values by groups. Error: relative RMSE against them, mean over seeds 0-4. "
        "shap: its default budget 2M + 2048 = 2,248; ours: the budget that matches shap's error. Times: medians over "
        "the seeds, CPU seconds (wall in brackets); speed-ups: medians of the per-seed ratios of CPU time (wall in "
        "brackets). Bound: shap's CPU time over ours inside the model, the speed-up if our engine cost nothing.",
        markdown_table(["background rows", "model", "rel. RMSE at 2,248: shap / ours", "ours at shap's error: "
                        "budget (rel. RMSE)", "shap: CPU s (wall s)", "shap: model / engine CPU s",
                        "ours: CPU s (wall s)", "ours: model / engine CPU s", "speed-up at equal error",
                        "bound"], rows), part="masked")


def run_ours(game_fn, m, d, budget, seed, standard_errors, full=False):
    """(seconds, seconds inside the value function, values); with ``full``, the result too."""
    game_fn.seconds = 0.0
    start = time.perf_counter()
    result = KernelApproximator(max_evals=budget, standard_errors=standard_errors, random_state=seed,
                             silent=True).estimate(FunctionGame(game_fn, m, d))
    out = (time.perf_counter() - start, game_fn.seconds, result.values)
    return (*out, result) if full else out


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
    """Per method (ours, ours with standard errors, shap): a Timing of the total seconds per seed, a Timing of
    the seconds outside the value function, and the mean relative RMSE against the exact values; plus the
    matched-error run of ours."""
    game_fn = GroupNonlinearGame(m, d)
    truth = game_fn.shapley()
    scale = np.sqrt(np.mean(truth**2))
    runs = {name: (Timing([]), Timing([]), []) for name in ("ours", "ours_se", "shap")}
    for seed in range(seeds):
        for name, (run, extra) in (("ours", (run_ours, (False,))), ("ours_se", (run_ours, (True,))),
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
        rows = [run_ours(game_fn, m, d, matched_budget, seed, False) for seed in range(seeds)]
        matched = Timing([r[0] for r in rows])
        matched_error = np.mean([np.sqrt(np.mean((r[2] - truth) ** 2)) / scale for r in rows])
    out["matched"] = (matched_budget, matched, matched_error)
    return out


def warm_up():
    """First calls of both sides on a small game (imports, caches), timed on their own."""
    game_fn = GroupNonlinearGame(20, 5, seed=99)
    ours = first_call(lambda: run_ours(game_fn, 20, 5, 300, 0, True))
    theirs = first_call(lambda: run_stock(game_fn, 20, 5, 300, 0))
    return ours, theirs


def error_vs_evaluations(quick):
    X, y = load_diabetes(return_X_y=True)
    X, y = X[:100], y[:100]
    game = ResidualGame(Ridge(alpha=0.1), X, y)
    n_reference = 2_000 if quick else 20_000
    start = time.perf_counter()
    reference = PermutationApproximator(n_permutations=n_reference, random_state=123, silent=True).estimate(game)
    reference_seconds = time.perf_counter() - start
    scale = np.sqrt(np.mean(reference.values**2))
    reference_error = np.sqrt(np.mean(reference.standard_errors**2)) / scale
    rows = []
    for evaluations in ((2_000, 8_000) if quick else (2_000, 8_000, 32_000)):
        for name, make in (
            ("permutation", lambda seed, e=evaluations: PermutationApproximator(max_evals=e, random_state=seed,
                                                                             silent=True)),
            ("kernel", lambda seed, e=evaluations: KernelApproximator(max_evals=e, standard_errors=False,
                                                                   random_state=seed, silent=True)),
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


def standard_error_cost(m, d, budget, repeats):
    """Standard errors off and on, the two runs of a pair back to back in alternating order: per setting the
    medians (CPU s, wall s, engine CPU s), and the medians of the pairs' ratios on / off (CPU, wall, engine CPU).

    CPU time (``time.process_time``; BLAS runs one thread) is what the work costs whatever else loads the
    machine; wall time is what a user waits on this machine as loaded at that moment.
    """
    game_fn = GroupNonlinearGame(m, d)
    runs = {False: [], True: []}
    pair_ratios = []
    for rep in range(repeats):
        pair = {}
        for standard_errors in ((False, True) if rep % 2 == 0 else (True, False)):
            game_fn.seconds = game_fn.cpu_seconds = 0.0
            wall, cpu = time.perf_counter(), time.process_time()
            KernelApproximator(max_evals=budget, standard_errors=standard_errors, random_state=rep,
                            silent=True).estimate(FunctionGame(game_fn, m, d))
            cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
            pair[standard_errors] = (cpu, wall, cpu - game_fn.cpu_seconds)
            runs[standard_errors].append(pair[standard_errors])
        pair_ratios.append([on / off for on, off in zip(pair[True], pair[False])])
    medians = {key: tuple(np.median(rows, axis=0)) for key, rows in runs.items()}
    return medians[False], medians[True], tuple(np.median(pair_ratios, axis=0))


def _coverage(z):
    z = np.concatenate([np.ravel(a) for a in z])
    return np.mean(np.abs(z) <= 1.96), np.mean(np.abs(z) <= 1.0), np.std(z), z.size


def coverage_large(m, d, budget, seeds):
    """Coverage on the group game of table 1, whose exact values are known (pooled over M x D x seeds)."""
    game_fn = GroupNonlinearGame(m, d)
    truth = game_fn.shapley()
    z = []
    for seed in range(seeds):
        *_, result = run_ours(game_fn, m, d, budget, seed, True, full=True)
        z.append((result.values - truth) / result.standard_errors)
    return _coverage(z)


def _table_game(m, d, seed):
    table = np.random.default_rng(seed).normal(size=(2**m, d))
    codes = 1 << np.arange(m)
    return FunctionGame(lambda masks: table[masks.astype(np.int64) @ codes], m, d)


def _tanh_sine_game(m, d, seed):
    rng = np.random.default_rng(seed)
    w1, w2 = rng.normal(size=(2, m, d)) * 2 / np.sqrt(m)
    return FunctionGame(lambda masks: np.tanh(masks @ w1) + np.sin(masks @ w2), m, d)


def _ridge_residual_game(seed):
    X, y = load_diabetes(return_X_y=True)
    rows = np.random.default_rng(seed).choice(len(X), 24, replace=False)
    return ResidualGame(Ridge(alpha=0.1), X[rows[:12], :4], y[rows[:12]], X[rows[12:], :4], y[rows[12:]])


SMALL_GAMES = {
    "random table, M = 9": lambda seed: _table_game(9, 20, 100 + seed),
    "random table, M = 11": lambda seed: _table_game(11, 20, 200 + seed),
    "tanh + sin of weighted sums, M = 12": lambda seed: _tanh_sine_game(12, 20, seed),
    "ridge residual (12 diabetes rows, 4 features), M = 12": _ridge_residual_game,
}


def coverage_small(n_games):
    """(kind, share of 2^M, budget, 95% coverage, 68% coverage, sd of error / SE, number of values) rows."""
    rows = []
    for kind, make in SMALL_GAMES.items():
        games = [make(seed) for seed in range(n_games)]
        truths = [ExactApproximator(silent=True).estimate(game).values for game in games]
        m = games[0].n_players
        for share in (0.1, 0.25, 0.5):
            budget = int(share * 2**m)
            z = []
            for seed, (game, truth) in enumerate(zip(games, truths)):
                result = KernelApproximator(max_evals=budget, random_state=seed, silent=True).estimate(game)
                z.append((result.values - truth) / result.standard_errors)
            rows.append((kind, share, budget, *_coverage(z)))
    return rows


def main(bench: Bench) -> None:
    masked_table(bench)
    d = 100
    warm_ours, warm_shap = warm_up()
    cases = [(100, 2 * 100 + 2048)] if bench.quick else [
        (100, 2 * 100 + 2048), (100, 4 * (2 * 100 + 2048)), (400, 2 * 400 + 2048), (400, 4 * (2 * 400 + 2048))]
    rows = []
    for m, budget in cases:
        r = kernel_vs_shap(m, d, budget)
        (t_ours, e_ours, err_ours), (t_se, _, _), (t_shap, e_shap, err_shap) = r["ours"], r["ours_se"], r["shap"]
        b_match, t_match, _ = r["matched"]
        rows.append([m, f"{budget:,}", f"{t_ours.median:.3f}", f"{t_se.median:.3f}",
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
        markdown_table(["players M", "budget", "ours (s)", "ours + standard errors (s)", "SE cost / values",
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

    repeats = 3 if bench.quick else 9
    cost_cases = [(100, 2 * 100 + 2048), (400, 2 * 400 + 2048)] if bench.quick else [
        (100, 2 * 100 + 2048), (100, 4 * (2 * 100 + 2048)), (400, 2 * 400 + 2048), (400, 4 * (2 * 400 + 2048))]
    rows = []
    for m, budget in cost_cases:
        off, on, (cpu_ratio, wall_ratio, engine_ratio) = standard_error_cost(m, d, budget, repeats)
        rows.append([m, f"{budget:,}", f"{off[0]:.3f} ({off[1]:.3f})", f"{on[0]:.3f} ({on[1]:.3f})",
                     f"{cpu_ratio:.2f}x", f"{wall_ratio:.2f}x", f"{off[2]:.3f} / {on[2]:.3f}", f"{engine_ratio:.2f}x"])
    bench.print(
        f"### Cost of the kernel standard errors (analytic), D = {d} outputs",
        f"The game of the first table; `standard_errors=False` and `True` timed back to back in alternating order, "
        f"{repeats} pairs. Times are medians of each setting, ratios the medians of the pairs' ratios. CPU time "
        "(process_time) measures the work whatever else loads the machine; wall time is what one waits here at "
        "this load. 'Engine' is the CPU time outside the value function.",
        markdown_table(["players M", "budget", "values only: CPU s (wall s)", "values + SEs: CPU s (wall s)",
                        "ratio, CPU", "ratio, wall", "engine CPU s: values only / + SEs", "engine ratio, CPU"], rows),
        part="se_cost")

    coverage_seeds = 3 if bench.quick else 10
    large = []
    for m, budget in cost_cases:
        c95, c68, sd, n = coverage_large(m, d, budget, coverage_seeds)
        large.append([m, f"{budget:,}", f"{n:,}", f"{c95:.3f}", f"{c68:.3f}", f"{sd:.2f}"])
    n_games = 5 if bench.quick else 20
    small = [[kind, f"{share:.0%} of 2^M ({budget:,})", f"{n:,}", f"{c95:.3f}", f"{c68:.3f}", f"{sd:.2f}"]
             for kind, share, budget, c95, c68, sd, n in coverage_small(n_games)]
    header = ["95% coverage", "68% coverage (within 1 SE)", "sd of error / SE"]
    bench.print(
        "### Coverage of the kernel standard errors against exact values",
        f"The game of the first table (exact values by groups), {coverage_seeds} seeds, pooled over players, outputs "
        "and seeds:",
        markdown_table(["players M", "budget", "values", *header], large),
        f"{n_games} games of each kind (seeds 0 to {n_games - 1}; D = 20 outputs, ridge: D = 12), exact values by "
        "enumeration:",
        markdown_table(["game", "budget", "values", *header], small), part="coverage")


if __name__ == "__main__":
    Bench(__doc__).run(main)
