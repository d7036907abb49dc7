"""Issue 26's fault fuzzing: damaged saves and checkpoints, column layouts and targets that are not the model's,
over every registered explainer (plugins included); each case's outcome classified (docs/reliability.md).

Outcomes: ``right answer`` (checked independently: the values of the undamaged explainer, the model's own
explained quantity, an uninterrupted run), ``clear error`` (an exception of shap_instances.exceptions whose
message names the file where there is one), ``warning`` (explained, with a ShapInstancesWarning), and the
failures ``silently wrong``, ``data loss``, ``code execution``, ``obscure crash`` (anything else raised),
``hang`` and ``memory failure``. Run as a script for the full table::

    PYTHONPATH=. python -m tests.fuzz_faults [--cases-per-explainer N]
"""

from __future__ import annotations

import argparse
import io
import os
import pickle
import tempfile
import time
import warnings
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pandas as pd

import shap_instances as si
from shap_instances.exceptions import (
    CheckpointError,
    EfficiencyError,
    ShapInstancesError,
    ShapInstancesWarning,
)
from shap_instances.testing._common import build, call

from .test_fuzz import Hang, time_limit

FAILURES = ("silently wrong", "data loss", "code execution", "obscure crash", "hang", "memory failure")
OUTCOMES = ("right answer", "clear error", "warning", *FAILURES)
#: Seconds after which a case counts as a hang.
HANG_SECONDS = 60.0
#: The exceptions of the cases classified as obscure crashes, for their report.
CRASHES: list[str] = []


_time_limit = time_limit  # one time limit for both fuzz suites (tests/test_fuzz.py)


class _Payload:
    """Unpickling this creates the directory ``marker``: proof that code ran."""

    def __init__(self, marker: str) -> None:
        self.marker = marker

    def __reduce__(self):
        return os.makedirs, (self.marker,)


def classify(run: Callable[[], np.ndarray | None], expected: np.ndarray | None, *, names: str = "",
             marker: Path | None = None, atol: float = 1e-8) -> str:
    """Run one case; its outcome. ``run`` returns values (compared with ``expected``) or None (nothing to
    compare); an exception must be a ShapInstancesError (not EfficiencyError, which blames the package) and
    name ``names`` when given."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            with _time_limit(HANG_SECONDS):
                values = run()
        except Hang:
            return "hang"
        except MemoryError as exc:
            return "clear error" if isinstance(exc, ShapInstancesError) else "memory failure"
        except (ShapInstancesError, CheckpointError) as exc:
            ok = not isinstance(exc, EfficiencyError) and names in str(exc)
            outcome = "clear error" if ok else _crash(exc)
        except Exception as exc:  # noqa: BLE001 - everything else is an obscure crash
            outcome = _crash(exc)
        else:
            warned = any(issubclass(w.category, ShapInstancesWarning) for w in caught)
            if expected is None or values is None:
                outcome = "warning" if warned else "right answer"
            elif np.shape(values) == np.shape(expected) and np.allclose(values, expected, rtol=0,
                                                                        atol=atol * max(1.0, np.abs(expected).max())):
                outcome = "right answer"
            else:
                outcome = "warning" if warned else "silently wrong"
    if marker is not None and marker.exists():
        return "code execution"
    return outcome


def _crash(exc: BaseException) -> str:
    CRASHES.append(f"{type(exc).__name__}: {str(exc)[:300]}")
    return "obscure crash"


# ------------------------------------------------------------------------------------------ saved explainers
def _damaged_files(data: bytes, rng: np.random.Generator, n: int, marker: Path) -> Iterator[tuple[str, bytes]]:
    yield "empty", b""
    yield "garbage", b"definitely not a saved explainer"
    yield "crafted pickle", pickle.dumps(_Payload(str(marker)))
    yield "crafted pickle behind a class", pickle.dumps(si.InstanceExplainer) + pickle.dumps(_Payload(str(marker)))
    directory = data.rfind(b"PK\x01\x02")
    for k in range(n):
        kind = ("truncated", "flipped", "zeroed", "directory")[k % 4]
        damaged = bytearray(data)
        at = int(rng.integers(1, len(data)))
        if kind == "truncated":
            damaged = damaged[:at]
        elif kind == "flipped":
            damaged[at] ^= 1 << int(rng.integers(0, 8))
        elif kind == "zeroed":
            width = int(rng.integers(1, 64))
            damaged[at:at + width] = bytes(len(damaged[at:at + width]))
        else:
            spot = directory + int(rng.integers(4, 46))
            damaged[spot] = int(rng.integers(0, 256))
        yield kind, bytes(damaged)


def save_load_cases(cls: type, n: int, rng: np.random.Generator, folder: Path) -> Iterator[tuple[str, str]]:
    """(case, outcome) for ``n`` damaged saves of ``cls``'s conformance problem, and the crafted files."""
    problem = cls.conformance_problem()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        explainer = build(cls, problem)
        expected = np.asarray(call(explainer, problem).values)
        buffer = io.BytesIO()
        explainer.save(buffer)
    data = buffer.getvalue()
    for k, (kind, damaged) in enumerate(_damaged_files(data, rng, n, folder / f"ran-{cls.__name__}")):
        path = folder / f"saved-{k}.bin"
        path.write_bytes(damaged)
        marker = folder / f"ran-{cls.__name__}"

        def run(path=path):
            with open(path, "rb") as f:
                loaded = cls.load(f)
            return np.asarray(call(loaded, problem).values)

        yield f"save/load {kind}", classify(run, expected, names=path.name, marker=marker)
    yield "save/load path string", classify(lambda: cls.load(str(folder / "x.bin")), None, names="x.bin")


# ------------------------------------------------------------------------------------------ column layouts
def column_cases(cls: type) -> Iterator[tuple[str, str]]:
    """Reordered, repeated and renamed columns; a model fitted on an array with a DataFrame masker."""
    problem = cls.conformance_problem()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = np.asarray(call(build(cls, problem), problem).values)
    X, masker = problem.X, problem.masker
    columns = list(X.columns)
    cases: dict[str, tuple[Callable[[], np.ndarray | None], np.ndarray | None]] = {
        "reordered": (lambda: call(build(cls, problem), problem, X[columns[::-1]]).values, expected),
        "repeated at construction": (lambda: call(build(cls, problem, masker=masker.set_axis(
            [columns[0]] * 2 + columns[2:], axis=1)), problem).values, None),
        "repeated in X": (lambda: call(build(cls, problem), problem, X.set_axis(
            [columns[0]] * 2 + columns[2:], axis=1)).values, None),
        "renamed": (lambda: call(build(cls, problem), problem, X.rename(columns={columns[0]: "zz"})).values, None),
        "one column short": (lambda: call(build(cls, problem), problem, X.iloc[:, 1:]).values, None),
    }
    for name, (run, reference) in cases.items():
        must_refuse = name != "reordered"
        outcome = classify(run, reference)
        if must_refuse and outcome == "right answer":
            outcome = "silently wrong"  # explained a DataFrame whose columns are not the model's
        yield f"columns {name}", outcome


def target_cases(cls: type, rng: np.random.Generator) -> Iterator[tuple[str, str]]:
    """Training targets that are not the model's own: shuffled, doubled, as strings."""
    problem = cls.conformance_problem()
    if problem.y is None or problem.explained is None or not _fitted(problem.model):
        return  # an explainer that refits the model on y explains that refit: any y is its own
    y = pd.Series(np.asarray(problem.y), index=problem.masker.index)
    variants = {"shuffled": y.iloc[rng.permutation(len(y))].set_axis(y.index),
                "doubled": y * 2 if y.dtype.kind in "if" else y, "as text": y.astype(str)}
    explained = np.asarray(problem.explained(problem.X), dtype=np.float64)
    for name, targets in variants.items():
        def run(targets=targets):
            explanation = call(build(cls, problem, y=targets), problem)
            total = np.asarray(explanation.base_values) + np.asarray(explanation.values).sum(axis=1)
            return total.reshape(explained.shape)

        yield f"targets {name}", classify(run, explained, atol=max(problem.atol, 1e-8))


def _fitted(model) -> bool:
    from sklearn.exceptions import NotFittedError
    from sklearn.utils.validation import check_is_fitted

    try:
        check_is_fitted(model)
    except (NotFittedError, TypeError):
        return False
    return True


# ------------------------------------------------------------------------------------------ checkpoints
def checkpoint_cases(n: int, rng: np.random.Generator, folder: Path) -> Iterator[tuple[str, str]]:
    """Checkpoints damaged after an interrupted run, resumed: the uninterrupted result, or the checkpoint error."""
    from shap_instances.approximators import PermutationApproximator
    from shap_instances.games import FunctionGame

    weights = np.random.default_rng(3).normal(size=(6, 2))
    settings = dict(n_permutations=24, batch_size=4, random_state=11, silent=True)

    def function(masks):
        return np.tanh(masks @ weights)

    def game():
        return FunctionGame(function, 6, 2)

    expected = PermutationApproximator(**settings).estimate(game()).values
    partial = folder / "partial.npz"
    _interrupted(partial, settings, function)
    data = partial.read_bytes()
    for k in range(n):
        path = folder / f"run-{k}.npz"
        kind = ("flipped", "truncated", "edited done", "edited mean")[k % 4]
        if kind in ("flipped", "truncated"):
            damaged = bytearray(data)
            at = int(rng.integers(1, len(data)))
            damaged = damaged[:at] if kind == "truncated" else _flip(damaged, at, rng)
            path.write_bytes(bytes(damaged))
        else:
            path.write_bytes(data)
            _edit(path, kind, rng)

        def run(path=path):
            return PermutationApproximator(**settings, checkpoint=path).estimate(game()).values

        yield f"checkpoint {kind}", classify(run, expected, names=path.name, atol=1e-12)


def _flip(damaged: bytearray, at: int, rng: np.random.Generator) -> bytearray:
    damaged[at] ^= 1 << int(rng.integers(0, 8))
    return damaged


def _interrupted(path: Path, settings: dict, function: Callable) -> None:
    """A run interrupted in its third batch, leaving the checkpoint of the two before."""
    from shap_instances.approximators import PermutationApproximator

    from .interrupting import Interrupt, interrupting_game

    try:
        PermutationApproximator(**settings, checkpoint=path).estimate(interrupting_game(function, 6, 2, 3))
    except Interrupt:
        pass


def _edit(path: Path, kind: str, rng: np.random.Generator) -> None:
    import json

    with np.load(path, allow_pickle=False) as archive:
        members = {name: archive[name] for name in archive.files}
    header = json.loads(members["header"].tobytes())
    if kind == "edited done":
        header["state"]["done"] = int(header["state"]["done"]) + 2 * int(rng.integers(1, 8))
    else:
        members["mean"] = members["mean"] + rng.normal(size=members["mean"].shape) * 0.1
    members["header"] = np.frombuffer(json.dumps(header).encode(), dtype=np.uint8)
    np.savez(path, **members)


# ------------------------------------------------------------------------------------------ the run
def run_all(cases_per_explainer: int, checkpoint_cases_n: int, seed: int = 0, *, cli: bool = True) -> Counter:
    """Every category over every registered explainer, and the command line: (category, outcome) -> cases."""
    from .fuzz_faults_cli import cli_cases

    rng = np.random.default_rng(seed)
    counts: Counter = Counter()
    compile_kernels()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for name, cls in sorted(si.list_explainers().items()):
            for case, outcome in [*save_load_cases(cls, cases_per_explainer, rng, folder), *column_cases(cls),
                                  *target_cases(cls, rng)]:
                tally(counts, case, outcome, name)
        for case, outcome in [*checkpoint_cases(checkpoint_cases_n, rng, folder),
                              *(cli_cases(folder / "cli", rng) if cli else ())]:
            tally(counts, case, outcome)
    return counts


def compile_kernels() -> None:
    """Run every explainer once, untimed, before the timed cases: a first call compiles its numba kernels, which
    can take longer than :data:`HANG_SECONDS` on a loaded machine; the timer must measure the case, not the
    compiler (an alarm raised inside numba's compiler leaves the kernel half-built for the next case)."""
    from sklearn.linear_model import LogisticRegression

    for cls in si.list_explainers().values():
        problem = cls.conformance_problem()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            call(build(cls, problem), problem)
    X, y = si.datasets.load_breast_cancer()  # the logistic fast path of instance_kernel, which the CLI cases use
    model = LogisticRegression(max_iter=1000).fit(X.iloc[:40], y.iloc[:40])
    si.InstanceKernelExplainer(model, X.iloc[:40], y=y.iloc[:40], n_permutations=2, silent=True)(X.iloc[40:42],
                                                                                               y.iloc[40:42])


def tally(counts: Counter, case: str, outcome: str, explainer: str = "") -> None:
    """Count one case under its category, and a failure under its own name."""
    counts[(_category(case), outcome)] += 1
    if outcome in FAILURES:
        counts[("failure", f"{explainer + ': ' if explainer else ''}{case}: {outcome}")] += 1


def _category(case: str) -> str:
    """A case's row of the table: its first word, and the command line's by kind (``cli data``, ``cli output``)."""
    words = case.split()
    return " ".join(words[:2]) if words[0] == "cli" else words[0]


def table(counts: Counter, outcomes: tuple[str, ...] = OUTCOMES, categories: list[str] | None = None,
          heading: str = "category") -> str:
    """The count table (Markdown): one row per category (default: every one counted, sorted), one column per
    outcome."""
    if categories is None:
        categories = sorted({c for c, _ in counts if c != "failure"})
    lines = [f"| {heading} | " + " | ".join(outcomes) + " | cases |", "|---|" + "---|" * (len(outcomes) + 1)]
    for category in categories:
        row = [counts[(category, o)] for o in outcomes]
        lines.append(f"| {category} | " + " | ".join(map(str, row)) + f" | {sum(row)} |")
    totals = [sum(counts[(c, o)] for c in categories) for o in outcomes]
    lines.append("| **all** | " + " | ".join(map(str, totals)) + f" | {sum(totals)} |")
    return "\n".join(lines)


if __name__ == "__main__":  # pragma: no cover - the full run, for docs/reliability.md
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases-per-explainer", type=int, default=90)
    parser.add_argument("--checkpoint-cases", type=int, default=80)
    parser.add_argument("--hang-seconds", type=float, default=HANG_SECONDS)
    parser.add_argument("--no-cli", action="store_true", help="leave the command line's cases out")
    parser.add_argument("--only-cli", action="store_true", help="run the command line's cases only")
    args = parser.parse_args()
    from tests import fuzz_faults as imported  # the module tests.fuzz_faults_cli reads, not this __main__ copy

    imported.HANG_SECONDS = args.hang_seconds
    started = time.perf_counter()
    if args.only_cli:
        from tests.fuzz_faults_cli import cli_cases

        with tempfile.TemporaryDirectory() as tmp:
            result = Counter()
            for case, outcome in cli_cases(Path(tmp) / "cli", np.random.default_rng(0)):
                tally(result, case, outcome)
    else:
        result = imported.run_all(args.cases_per_explainer, args.checkpoint_cases, cli=not args.no_cli)
    CRASHES = imported.CRASHES
    print(table(result))
    for (category, what), count in sorted(result.items()):
        if category == "failure":
            print(f"FAILURE x{count}: {what}")
    for crash in CRASHES:
        print(f"CRASH: {crash}")
    print(f"{time.perf_counter() - started:.0f} s, load {os.getloadavg()[0]:.1f}")
