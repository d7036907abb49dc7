"""Checks on problems the suite makes itself from the plugin author's one, as scikit-learn's ``check_estimator``
makes its own data: one explained row, one training row, a duplicated training row, NaN cells, float32 tables,
relabelled and multi-class targets; and what a call must leave alone (NumPy's global random state, the working
directory) or keep (every constructor argument through ``save`` / ``load``)."""

from __future__ import annotations

import inspect
import io
import numbers
import os
import pickle
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from sklearn.base import clone, is_classifier

from .._base import ConformanceProblem
from ..exceptions import ShapInstancesError
from ..utils import Interval, Options
from ._common import Check, SkipCheck, as_float, build, call, n_players_of, rule, same, sampling
from ._output import _is_fitted, _refit

__all__ = ["GENERATED_CHECKS", "check_duplicated_rows", "check_float64_output", "check_global_random_state",
           "check_nan_handling", "check_one_row", "check_options_survive_save_load",
           "check_output_names_follow_classes", "check_working_directory"]

#: How much slower a call may be with one training row duplicated: a ratio and a floor, generous enough never to
#: flake on a loaded machine, tight enough to catch a cost that grows with the duplicates (a 443x slowdown).
COST_RATIO, COST_FLOOR_S = 20.0, 1.0


def _rows(y: Any, rows: Any) -> Any:
    """``y`` at the positions ``rows`` (a Series keeps its type), or None."""
    if y is None:
        return None
    return y.iloc[rows] if isinstance(y, pd.Series) else np.asarray(y)[rows]


def _explain(cls: type, problem: ConformanceProblem, *, X: Any = None, y_explained: Any = None,
             **parts: Any) -> Any:
    """The explanation of ``X`` (the problem's by default) by an explainer built from the problem and ``parts``."""
    explainer = build(cls, problem, **parts)
    X = problem.X if X is None else X
    y = problem.y_explained if y_explained is None else y_explained
    return explainer(X) if y is None else explainer(X, y)


def _refused_or(make: Any) -> Any:
    """``make()``, or None when it refused with the package's own error (a clear refusal is allowed)."""
    try:
        return make()
    except ShapInstancesError:
        return None


def _assert_rows_and_players(explanation: Any, n_rows: int, n_players: int | None, what: str) -> None:
    values = as_float(explanation.values)
    assert values.shape[0] == n_rows, f"{what}: values for {values.shape[0]} rows, not {n_rows}"
    if n_players is not None:
        assert values.shape[1] == n_players, f"{what}: values for {values.shape[1]} players, not {n_players}"
    assert np.all(np.isfinite(values)), f"{what}: values that are not finite"


@rule("one explained row is explained (values of shape (1, M[, D]) equal to that row's values in a larger call), "
      "and one training row is explained or refused with the package's error (ShapInstancesError)")
def check_one_row(cls: type, problem: ConformanceProblem) -> None:
    """A 1-row X, and a 1-row training set, as scikit-learn's ``check_fit2d_1sample``.

    Examples
    --------
    >>> from shap_instances import NaiveBayesExplainer
    >>> from shap_instances.testing import check_one_row
    >>> check_one_row(NaiveBayesExplainer)
    """
    full = as_float(_explain(cls, problem).values)
    y1 = _rows(problem.y_explained, [0])
    one = _explain(cls, problem, X=problem.X.iloc[:1], y_explained=y1)
    same(one.values, full[:1], "the values of a 1-row X against that row's values among all rows",
         atol=max(problem.atol, 1e-9))
    if getattr(cls, "players", None) == "features" or problem.y is None:
        return  # a fitted model and feature players: one background row is a masker like any other
    try:  # a fitted model is fitted anew on the one row, as it would be by a user with one training row
        _, one_row = _training_sets(problem, [0])
    except ValueError:  # the model itself cannot be fitted on one row: there is nothing to explain
        return
    explanation = _refused_or(lambda: _explain(cls, problem, **one_row))
    if explanation is not None:
        _assert_rows_and_players(explanation, len(problem.X), 1, "one training row")


def _training_sets(problem: ConformanceProblem, order: list[int]) -> tuple[dict, dict]:
    """Constructor parts (model, masker, y) of the problem and of its training rows taken in ``order``: a fitted
    model is fitted anew on each (on ``y``, else on its own predictions), an explainer may need the very rows."""
    masker = problem.masker.iloc[order].reset_index(drop=True)
    y = _rows(problem.y, order)
    y = y.reset_index(drop=True) if isinstance(y, pd.Series) else y
    plain = {"model": problem.model, "masker": problem.masker, "y": problem.y}
    if not _is_fitted(problem.model):
        return plain, {"model": problem.model, "masker": masker, "y": y}
    target = problem.y if problem.y is not None else problem.model.predict(problem.masker)
    plain["model"] = _refit(problem.model, problem.masker, target)
    return plain, {"model": _refit(problem.model, masker, _rows(target, order)), "masker": masker, "y": y}


def _timed(make: Any) -> tuple[Any, float]:
    start = time.perf_counter()
    result = make()
    return result, time.perf_counter() - start


@rule(f"a training row given twice is explained (one more player, finite values) at a cost that does not explode: "
      f"not over {COST_RATIO:g} times the cost without the duplicate plus {COST_FLOOR_S:g} s")
def check_duplicated_rows(cls: type, problem: ConformanceProblem) -> None:
    """Duplicated training rows: explained, and not much slower.

    Examples
    --------
    >>> from shap_instances import GapExplainer
    >>> from shap_instances.testing import check_duplicated_rows
    >>> check_duplicated_rows(GapExplainer)
    """
    if getattr(cls, "players", None) == "features":
        players = None
    else:
        players = n_players_of(cls, problem) + 1
    plain_parts, doubled_parts = _training_sets(problem, [*range(len(problem.masker)), 0])
    _explain(cls, problem, **plain_parts)  # warm-up: compiled kernels and caches are no part of the cost
    _, plain = _timed(lambda: _explain(cls, problem, **plain_parts))
    explanation, doubled = _timed(lambda: _explain(cls, problem, **doubled_parts))
    _assert_rows_and_players(explanation, len(problem.X), players, "a duplicated training row")
    limit = COST_RATIO * plain + COST_FLOOR_S
    assert doubled <= limit, (f"with one training row duplicated the call took {doubled:.3g} s, {doubled / plain:.0f} "
                              f"times the {plain:.3g} s without it (limit {limit:.3g} s)")


def _with_nan(frame: pd.DataFrame) -> pd.DataFrame:
    frame = frame.astype(np.float64)
    frame.iloc[len(frame) // 2, 0] = np.nan
    return frame


@rule("a NaN cell in X or in the training data is refused with the package's error (DataValidationError) or "
      "explained: never a row or a training row silently dropped (values for every row and every player)")
def check_nan_handling(cls: type, problem: ConformanceProblem) -> None:
    """NaN in X and in the masker, as scikit-learn's ``check_estimators_nan_inf``.

    Examples
    --------
    >>> from shap_instances import NaiveBayesExplainer
    >>> from shap_instances.testing import check_nan_handling
    >>> check_nan_handling(NaiveBayesExplainer)
    """
    players = n_players_of(cls, problem)
    explanation = _refused_or(lambda: _explain(cls, problem, X=_with_nan(problem.X)))
    if explanation is not None:
        _assert_rows_and_players(explanation, len(problem.X), players, "X with a NaN cell")
    explanation = _refused_or(lambda: _explain(cls, problem, masker=_with_nan(problem.masker)))
    if explanation is not None:
        _assert_rows_and_players(explanation, len(problem.X), players, "training data with a NaN cell")


@rule("values and base_values are float64, also for float32 input, which is computed in float64: float32 tables "
      "give the values of the same numbers as float64 (within 1e-9 relative)")
def check_float64_output(cls: type, problem: ConformanceProblem) -> None:
    """The output's dtype, and float32 input.

    Examples
    --------
    >>> from shap_instances import NaiveBayesExplainer
    >>> from shap_instances.testing import check_float64_output
    >>> check_float64_output(NaiveBayesExplainer)
    """
    explanation = _explain(cls, problem)
    for name in ("values", "base_values"):
        dtype = np.asarray(getattr(explanation, name)).dtype
        assert dtype == np.float64, f"{name} are {dtype}"
    masker32, X32 = problem.masker.astype(np.float32), problem.X.astype(np.float32)
    single = _explain(cls, problem, masker=masker32, X=X32)
    assert np.asarray(single.values).dtype == np.float64, f"values of float32 input are {single.values.dtype}"
    double = _explain(cls, problem, masker=masker32.astype(np.float64), X=X32.astype(np.float64))
    same(single.values, double.values, "values of float32 tables against the same numbers as float64", atol=1e-9)


def _relabelled(target: np.ndarray) -> list[tuple[str, np.ndarray]]:
    """Targets with other labels: words in the reverse order of the classes, non-contiguous integers, and three
    classes when there are fewer."""
    classes, codes = np.unique(target, return_inverse=True)
    words = np.array([f"class {chr(ord('z') - i)}" for i in range(len(classes))], dtype=object)
    gaps = np.array([3 + 17 * i for i in range(len(classes))])
    found = [("string labels", words[codes]), ("non-contiguous integer labels", gaps[codes])]
    if len(classes) < 3:
        thirds = np.array(["low", "middle", "high"], dtype=object)[np.arange(len(target)) % 3]
        found.append(("three classes", thirds))
    return found


@rule("a classifier's explanation follows its classes_: output_names equal the model's classes_, in their order, "
      "for string, non-contiguous and multi-class labels (values of shape (n, M, D) with D = len(classes_), or "
      "(n, M) for two classes)")
def check_output_names_follow_classes(cls: type, problem: ConformanceProblem) -> None:
    """Labels other than the author's, as scikit-learn's ``check_classifiers_classes``.

    Examples
    --------
    >>> from shap_instances import NaiveBayesExplainer
    >>> from shap_instances.testing import check_output_names_follow_classes
    >>> check_output_names_follow_classes(NaiveBayesExplainer)
    """
    model = problem.model
    if not is_classifier(model) or not hasattr(model, "classes_"):
        raise SkipCheck(f"the problem's model ({type(model).__name__}) is not a fitted classifier")
    target = np.asarray(problem.y) if problem.y is not None else np.asarray(model.predict(problem.masker))
    for what, labels in _relabelled(target):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            refitted = clone(model).fit(problem.masker, labels)
        y = None if problem.y is None else pd.Series(labels, index=problem.masker.index)
        explanation = _explain(cls, problem, model=refitted, y=y)
        values, classes = as_float(explanation.values), [str(c) for c in refitted.classes_]
        if values.ndim == 2:
            assert len(classes) == 2, f"{what}: values of shape {values.shape} for {len(classes)} classes"
            continue
        names = None if explanation.output_names is None else [str(n) for n in explanation.output_names]
        assert names == classes, f"{what}: output_names {names}, not the model's classes_ {classes}"
        assert values.shape[2] == len(classes), f"{what}: {values.shape[2]} outputs for {len(classes)} classes"


@rule("NumPy's global random state is left alone: np.random.get_state() is the same before and after building "
      "and calling the explainer, sampling with random_state=0 and with random_state=None (randomness comes from "
      "random_state, and None means fresh entropy, not NumPy's global generator)")
def check_global_random_state(cls: type, problem: ConformanceProblem) -> None:
    """No draw from, or seeding of, NumPy's global generator.

    Examples
    --------
    >>> from shap_instances import NaiveBayesExplainer
    >>> from shap_instances.testing import check_global_random_state
    >>> check_global_random_state(NaiveBayesExplainer)
    """
    original = np.random.get_state()  # noqa: NPY002 - the global state is what the check watches
    np.random.set_state(np.random.RandomState().get_state())  # noqa: NPY002 - fresh entropy: seeding cannot match it
    before = np.random.get_state()  # noqa: NPY002
    try:
        for seed in (0, None):
            call(build(cls, problem, **sampling(cls, problem, seed)), problem)
        after = np.random.get_state()  # noqa: NPY002
    finally:
        np.random.set_state(original)  # noqa: NPY002 - the caller's state, whatever the explainer did
    assert pickle.dumps(before) == pickle.dumps(after), (
        "np.random.get_state() changed: the explainer drew from or seeded NumPy's global generator")


def _listing(folder: Path) -> list[str]:
    return sorted(str(path.relative_to(folder)) for path in folder.rglob("*"))


@rule("nothing is written to the working directory: building, calling and saving (to a stream) leave it as it "
      "was")
def check_working_directory(cls: type, problem: ConformanceProblem) -> None:
    """The check runs in an empty temporary working directory and lists it afterwards.

    Examples
    --------
    >>> from shap_instances import NaiveBayesExplainer
    >>> from shap_instances.testing import check_working_directory
    >>> check_working_directory(NaiveBayesExplainer)
    """
    here = os.getcwd()
    with tempfile.TemporaryDirectory() as folder:
        os.chdir(folder)
        try:
            explainer = build(cls, problem)
            call(explainer, problem)
            explainer.save(io.BytesIO())
            written = _listing(Path(folder))
        finally:
            os.chdir(here)
    assert not written, f"the working directory gained {written[:5]}"


#: Constructor parameters that are data or names, not options: the other checks cover them.
_NOT_OPTIONS = frozenset({"self", "model", "masker", "data", "y", "feature_names", "scheduler"})


def _interval_values(interval: Any) -> list[Any]:
    left, right = interval.left, interval.right
    if interval.kind is not numbers.Integral:
        if left is not None and right is not None:
            return [left + (right - left) / 4, left + (right - left) / 2]
        if left is None and right is None:
            return [0.5, 2.5]
        return [left + 0.5, left + 2.5] if left is not None else [right - 0.5, right - 2.5]
    if left is not None:
        return [int(left) + 1, int(left) + 2]
    return [int(right) - 1, int(right) - 2] if right is not None else [2, 3]


def _candidate_values(cls: type, problem: ConformanceProblem, name: str, default: Any) -> list[Any]:
    """Values of option ``name`` to try, other than its default: the problem's, then some its constraints allow."""
    found = [options[name] for options in (problem.options, problem.sampling_options or {}) if name in options]
    for constraint in getattr(cls, "_parameter_constraints", {}).get(name, ()):
        if isinstance(constraint, Interval):
            found += _interval_values(constraint)
        elif isinstance(constraint, Options):
            found += list(constraint.values)
        elif constraint == "boolean":
            found += [True, False]
        elif constraint == "random_state":
            found.append(5)
    found += _values_like(default)
    return [value for value in found if not _equal(value, default)]


def _values_like(default: Any) -> list[Any]:
    """Values of the type of an option's default, for an option without constraints."""
    if isinstance(default, bool):
        return [not default]
    if isinstance(default, numbers.Integral):
        return [int(default) + 1, int(default) + 2]
    if isinstance(default, numbers.Real):
        return [float(default) * 2 + 0.5]
    return []


def _equal(a: Any, b: Any) -> bool:
    try:
        return bool(np.all(a == b)) and type(a) is type(b)
    except Exception:  # noqa: BLE001 - objects that do not compare are compared by their pickle
        return pickle.dumps(a) == pickle.dumps(b)


def _unpickled(explainer: Any) -> Any:
    try:
        return pickle.loads(pickle.dumps(explainer))
    except Exception:  # noqa: BLE001 - check_serialisation reports it
        return None


def _built_with_other_value(cls: type, problem: ConformanceProblem, name: str, default: Any) -> tuple[Any, Any]:
    """An explainer built with a valid non-default value of ``name``, and the value; (None, None) if none is found."""
    for value in _candidate_values(cls, problem, name, default):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                return build(cls, problem, **{name: value}), value
            except (ShapInstancesError, ValueError, TypeError):
                continue
    return None, None


@rule("every constructor argument survives save / Cls.load and pickle: an explainer built with a non-default value of "
      "each option (from the problem's options, the class's _parameter_constraints, or the default's type) loads "
      "with that value")
def check_options_survive_save_load(cls: type, problem: ConformanceProblem) -> None:
    """Each option, set to a value other than its default, is the same after a round trip through ``save``.

    Examples
    --------
    >>> from shap_instances import NaiveBayesExplainer
    >>> from shap_instances.testing import check_options_survive_save_load
    >>> check_options_survive_save_load(NaiveBayesExplainer)
    """
    lost = []
    for parameter in inspect.signature(cls.__init__).parameters.values():  # type: ignore[misc]
        if parameter.name in _NOT_OPTIONS or parameter.kind in (parameter.VAR_KEYWORD, parameter.VAR_POSITIONAL):
            continue
        explainer, value = _built_with_other_value(cls, problem, parameter.name, parameter.default)
        if explainer is None:
            continue
        buffer = io.BytesIO()
        explainer.save(buffer)
        buffer.seek(0)
        for how, loaded in (("save / load", cls.load(buffer)),  # type: ignore[attr-defined]
                            ("pickle", _unpickled(explainer))):
            if loaded is None:  # an explainer that does not pickle fails check_serialisation
                continue
            got = getattr(loaded, parameter.name, "<missing>")
            if not _equal(got, value):
                lost.append(f"{parameter.name}={value!r} comes back from {how} as {got!r}")
    assert not lost, "; ".join(lost)


#: The checks on generated problems and on what a call leaves alone, in the order they run.
GENERATED_CHECKS: tuple[Check, ...] = (
    check_one_row, check_duplicated_rows, check_nan_handling, check_float64_output, check_output_names_follow_classes,
    check_global_random_state, check_working_directory, check_options_survive_save_load,
)
