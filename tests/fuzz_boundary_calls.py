"""Issue 39's boundary fuzzing, the surfaces of calls and commands (tests/fuzz_boundary.py):

- **cli numbers**: every numeric option of ``explain`` and ``report`` given ``1e308``, ``1e309``, ``inf``, ``-inf``,
  ``nan``, ``1e-300``, ``0``, ``-0``, ``-1``, ``2.5``: a value the command cannot honour must be refused with one
  ``error:`` line (argparse's "expected one argument" for ``-inf`` is obscure: it blames the syntax);
- **budget**: ``explain`` with every explainer and ``report`` on a 20,000-row table under ``--time-budget``: a run
  (or a refusal) that ends past 110% of its budget is over budget;
- **idioms**: shap's idioms on every registered explainer's explanation (``e[:, name]``, ``e[0]``, ``e[:, 0]``,
  ``shap_values``, ``instance_names``, ``interactions=True``, ``shap_interaction_values``) against the
  explanation's own arrays, and a subclass of ``shap.Explainer`` defined after ``shap.Explainer = si.Explainer``.
"""

from __future__ import annotations

import itertools
import os
import resource
import subprocess
import sys
import time
import warnings
from collections.abc import Callable, Iterator
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .fuzz_boundary import isolated, refused_or_wrong
from .fuzz_faults import _crash, classify
from .fuzz_faults_cli import EXPLAINERS, _frame, _whole_report, _whole_table, run_command

# ------------------------------------------------------------------------------------------ CLI numbers
VALUES = ("1e308", "1e309", "inf", "-inf", "nan", "1e-300", "0", "-0", "-1", "2.5")
#: option -> (commands, the values it must accept (a right answer or a clear error both pass), extra arguments).
#: Every other value must be refused.
OPTIONS: dict[str, tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]] = {
    "--time-budget": (("explain", "report"), ("1e308", "1e309", "inf", "2.5"), ()),
    "--max-memory": (("explain", "report"), ("1e308", "1e309", "inf", "2.5"), ("--explain",)),
    "--max-evals": (("explain", "report"), ("1e308",), ("--explainer", "loo")),
    "--block-size": (("explain",), ("1e308", "1e309", "inf"), ("--explain",)),
    "--top-k": (("explain",), ("1e308",), ("--explain",)),
    "--seed": (("explain", "report"), ("1e308", "0", "-0", "-1"), ()),
    "--rows": (("explain",), ("1e308",), ()),
}
#: Values run through ``report`` (each accepted one costs a whole report).
REPORT_VALUES = ("1e308", "-inf", "nan", "1e-300", "-1")


def _number_argv(folder: Path, data: Path, command: str, option: str, value: str, k: int) -> tuple[list, Path]:
    extra = OPTIONS[option][2]
    if command == "report":
        out = folder / f"report-{k}"
        return ["report", "--data", str(data), "--target", "t", "--silent", "--out", str(out), option, value,
                *(["--time-budget", "5"] if option != "--time-budget" else [])], out
    out = folder / f"explained-{k}.csv"
    argv = ["explain", "--data", str(data), "--target", "t", "--out", str(out), option, value]
    if "--explain" in extra:
        argv += ["--explain", str(data)]
    if "--explainer" in extra:
        argv += ["--explainer", "loo"]
    if "--explain" not in extra and option != "--rows":
        argv += ["--rows", "2"]
    return argv, out


def cli_number_cases(folder: Path, rng: np.random.Generator) -> Iterator[tuple[str, str]]:
    """Every numeric option with every hostile number."""
    frame = _frame(rng).assign(t=lambda f: (f["t"] > 0).astype(int))
    data = folder / "numbers.csv"
    frame.to_csv(data, index=False)
    k = 0
    for option, (commands, accepted, _) in OPTIONS.items():
        for command, value in itertools.product(commands, VALUES):
            if command == "report" and value not in REPORT_VALUES:
                continue
            k += 1
            argv, out = _number_argv(folder, data, command, option, value, k)
            rows = 2 if "--rows" in argv and option != "--rows" else len(frame)
            check = _whole_report(out) if command == "report" else (
                out.is_file if "--explain" in argv else _whole_table(out, min(rows, len(frame))))
            messages: list[str] = []
            outcome = run_command(argv, kept=[data], check=check, must_refuse=value not in accepted,
                                  messages=messages)
            if outcome == "clear error" and any("expected one argument" in line for line in messages):
                outcome = "obscure crash"  # the value was taken for an option: the message blames the syntax
            yield f"{command} {option} {value}", outcome


# ------------------------------------------------------------------------------------------ budgets
BUDGET_ROWS = 20_000
BUDGET_SECONDS = 10.0


def budget_cases(folder: Path, rng: np.random.Generator) -> Iterator[tuple[str, str]]:
    """``explain`` with each explainer and ``report`` on a 20,000-row table, under ``--time-budget``."""
    frame = pd.DataFrame(rng.normal(size=(BUDGET_ROWS, 4)), columns=["a", "b", "c", "d"])
    frame["t"] = 2 * frame["a"] - frame["b"] + rng.normal(scale=0.5, size=BUDGET_ROWS)
    classes = frame.assign(t=(frame["t"] > 0).astype(int))
    files = {"regression": folder / "budget-regression.csv", "classes": folder / "budget-classes.csv"}
    frame.to_csv(files["regression"], index=False)
    classes.to_csv(files["classes"], index=False)
    runs = [("explain", name, explainer) for name, explainer in itertools.product(files, EXPLAINERS)]
    runs += [("report", name, None) for name in files]
    for k, (command, name, explainer) in enumerate(runs):
        out = folder / f"budget-{k}{'.csv' if command == 'explain' else ''}"
        argv = [command, "--data", str(files[name]), "--target", "t", "--out", str(out),
                "--time-budget", f"{BUDGET_SECONDS:g}"]
        argv += ["--explainer", explainer, "--rows", "5"] if command == "explain" else ["--silent"]
        yield f"{command}{' --explainer ' + explainer if explainer else ''} on {BUDGET_ROWS:,} rows ({name}) " \
              f"--time-budget {BUDGET_SECONDS:g}", _timed(argv, files[name], out, command)


def _timed(argv: list[str], data: Path, out: Path, command: str) -> str:
    """A budget case's outcome, the command run in a fresh interpreter (numba's OpenMP layer refuses a fork) and
    killed at 110% of its budget plus 5 s: over budget when it ends, even refused, past 110% of the budget counted
    from after the interpreter's start-up (:func:`_start_up`, measured)."""
    command_line = [sys.executable, "-m", "shap_instances", *argv]
    started, cpu = time.perf_counter(), _children_cpu()
    try:
        done = subprocess.run(command_line, capture_output=True, text=True, env=_environment(),
                              timeout=_start_up() + 1.1 * BUDGET_SECONDS + 5.0)
    except subprocess.TimeoutExpired:
        NOTES.append(f"{' '.join(argv[:1] + argv[-4:])}: killed after {time.perf_counter() - started:.1f} s")
        return "over budget"
    wall = time.perf_counter() - started - _start_up()
    NOTES.append(f"{' '.join(argv[:1] + argv[-4:])}: {wall:.1f} s after start-up, {_children_cpu() - cpu:.1f} s of "
                 f"CPU, exit {done.returncode}, load {os.getloadavg()[0]:.1f}")
    check = _whole_report(out) if command == "report" else _whole_table(out, 5)
    errors = [line for line in done.stderr.splitlines() if "error:" in line]
    if wall > 1.1 * BUDGET_SECONDS:
        return "over budget"
    if done.returncode == 0:
        return "right answer" if check() else "silently wrong"
    if done.returncode == 2 and errors and "internal error" not in errors[-1]:
        return "clear error"
    return _crash(RuntimeError(f"exit {done.returncode}: {done.stderr.strip()[-300:]}"))


#: One line per budget run (wall, CPU, exit, load), printed by the script: tells a slow machine from a slow run.
NOTES: list[str] = []


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _environment() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(__file__).parents[1]),
                                                         os.environ.get("PYTHONPATH", "")])}


@cache
def _start_up() -> float:
    """Seconds a fresh interpreter takes to import the command line (not part of the command's budget)."""
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import shap_instances.cli"], check=True, env=_environment())
    return time.perf_counter() - started


# ------------------------------------------------------------------------------------------ shap idioms
def _explained(cls: type):
    import shap_instances as si  # noqa: F401 - registers the explainers
    from shap_instances.testing._common import build, call

    problem = cls.conformance_problem()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        explainer = build(cls, problem)
        X = problem.X.set_axis([f"row-{i}" for i in range(len(problem.X))]) \
            if isinstance(problem.X, pd.DataFrame) else problem.X
        return explainer, problem, X, call(explainer, problem, X)


def _idioms(explanation: Any) -> dict[str, tuple[Callable[[Any], Any], np.ndarray | None, bool]]:
    """name -> (the idiom on an explanation, its expected values from the explanation's own arrays, must refuse)."""
    values, names = np.asarray(explanation.values), list(explanation.feature_names)
    return {
        "e[:, first player's name]": (lambda e: e[:, names[0]].values, values[:, 0], False),
        "e[:, last player's name]": (lambda e: e[:, names[-1]].values, values[:, -1], False),
        "e[:, 0]": (lambda e: e[:, 0].values, values[:, 0], False),
        "e[0]": (lambda e: e[0].values, values[0], False),
        "e[1:3]": (lambda e: e[1:3].values, values[1:3], False),
        "e[:, 'no such player']": (lambda e: e[:, "no such player"].values, None, True),
        "e[:, a feature's name on instance players]": (lambda e: e[:, "age-of-the-row"].values, None, True),
        "e.abs.mean(0)": (lambda e: e.abs.mean(0).values, np.abs(values).mean(0), False),
        "e.instance_names are the rows' names": (
            lambda e: np.zeros(1) if list(e.instance_names or ()) == list(getattr(e, "row_names", None) or ())
            and e.instance_names is not None else np.ones(1), np.zeros(1), False),
    }


def _explainer_idioms(explainer: Any, problem: Any, X: Any, explanation: Any) -> dict[str, tuple]:
    from shap_instances.testing._common import call

    extra = () if problem.y_explained is None else (problem.y_explained,)
    return {
        "shap_values equals the explanation's values": (
            lambda: explainer.shap_values(X, *extra), np.asarray(explanation.values), False),
        "explainer(X, interactions=True)": (lambda: explainer(X, *extra, interactions=True).values, None, True),
        "explainer.shap_interaction_values(X)": (lambda: explainer.shap_interaction_values(X, *extra), None, True),
        "explainer(X, silent=True) equals": (lambda: call(explainer, problem, X).values,
                                             np.asarray(explanation.values), False),
    }


def idiom_cases(folder: Path, rng: np.random.Generator) -> Iterator[tuple[str, str]]:
    """shap's idioms on each registered explainer, and shap's custom-explainer idiom after patching."""
    import shap_instances as si

    for name, cls in sorted(si.list_explainers().items()):
        try:
            explainer, problem, X, explanation = _explained(cls)
        except Exception as exc:  # noqa: BLE001 - a named row index the explainer cannot take
            yield f"{name}: explaining rows with a named index", classify(lambda exc=exc: _raise(exc), None)
            continue
        for idiom, (run, expected, refuse) in _idioms(explanation).items():
            outcome = classify(lambda run=run, e=explanation: np.asarray(run(e)), expected)
            yield f"{name}: {idiom}", refused_or_wrong(outcome) if refuse else outcome
        for idiom, (run, expected, refuse) in _explainer_idioms(explainer, problem, X, explanation).items():
            outcome = classify(lambda run=run: np.asarray(run()), expected)
            yield f"{name}: {idiom}", refused_or_wrong(outcome) if refuse else outcome
    yield from _subclass_cases()


def _raise(exc: BaseException) -> None:
    raise exc


def _subclass_cases() -> Iterator[tuple[str, str]]:
    """shap's documented custom explainer (a subclass of ``shap.Explainer``) defined after
    ``shap.Explainer = si.Explainer``: its ``__init__`` and ``__call__`` must run (each case forked: the patch
    and the class stay in the child)."""
    from sklearn.datasets import load_diabetes
    from sklearn.linear_model import Ridge

    X, y = load_diabetes(return_X_y=True, as_frame=True)
    X, y = X.iloc[:40, :4], y.iloc[:40]
    model = Ridge().fit(X, y)
    models = {"model.predict": model.predict, "the model": model}
    for (name, f), algorithm, patched in itertools.product(models.items(), (None, "exact", "permutation"),
                                                           (True, False)):
        if name == "the model" and algorithm is not None:
            continue  # shap's own explainers take a function there, not an estimator

        def case(f=f, algorithm=algorithm, patched=patched) -> str:
            return classify(lambda: _custom_explainer(f, X, algorithm, patched), np.ones(3))

        yield f"a subclass of {'shap.Explainer patched to si.Explainer' if patched else 'si.Explainer'} on " \
              f"{name}{', algorithm=' + repr(algorithm) if algorithm else ''}", isolated(case, 60.0)


def _custom_explainer(f: Any, X: pd.DataFrame, algorithm: str | None, patched: bool) -> np.ndarray:
    """[its type, its __init__ ran, its __call__ ran] as 1.0 each when true."""
    import shap

    import shap_instances as si

    if patched:
        shap.Explainer = si.Explainer
    base = shap.Explainer if patched else si.Explainer

    class MyExplainer(base):  # type: ignore[valid-type, misc]
        def __init__(self, model, masker, **options):
            self.ran_init = True
            super().__init__(model, masker, **options)

        def __call__(self, *args, **options):
            return "mine"

    options = {} if algorithm is None else {"algorithm": algorithm}
    explainer = MyExplainer(f, X, **options)
    if not isinstance(explainer, MyExplainer):
        return np.zeros(3)  # bypassed: its __call__ would not run either
    return np.array([1.0, getattr(explainer, "ran_init", False), explainer(X.iloc[:2]) == "mine"], dtype=float)
