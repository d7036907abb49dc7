"""Checks of how an explainer behaves: legacy API, serialisation, columns, bad input, y, the user's model,
random state and ``n_jobs``."""

from __future__ import annotations

import copy
import io
import pickle
from typing import Any

import numpy as np

from .._base import ConformanceProblem
from ..exceptions import DataValidationError, InvalidParameterError, ShapInstancesError
from ._common import accepted, build, call, differ, rule, same, sampling, training_targets

__all__ = ["check_bad_input_errors", "check_call_y", "check_column_handling", "check_legacy_api",
           "check_model_not_mutated", "check_n_jobs_invariance", "check_random_state_is_used",
           "check_random_state_reproduces", "check_serialisation"]


@rule("shap_values(X) returns explainer(X).values and expected_value the base values, as in shap")
def check_legacy_api(cls: type, problem: ConformanceProblem) -> None:
    """shap's legacy ``shap_values`` and ``expected_value`` agree with the call.

    Examples
    --------
    >>> from shap_instances import NaiveBayesExplainer
    >>> from shap_instances.testing import check_legacy_api
    >>> check_legacy_api(NaiveBayesExplainer)
    """
    explainer = build(cls, problem)
    explanation = call(explainer, problem)
    if problem.y_explained is not None:
        legacy = explainer.shap_values(problem.X, problem.y_explained)
    else:
        legacy = explainer.shap_values(problem.X)
    same(legacy, explanation.values, "shap_values(X) against explainer(X).values")
    base = np.asarray(explanation.base_values, dtype=np.float64)
    expected = np.asarray(explainer.expected_value, dtype=np.float64)
    same(np.broadcast_to(expected, base.shape) if expected.shape != base.shape else expected, base,
         "expected_value against base_values")


@rule("save / Cls.load, pickle and copy.deepcopy give an explainer of the same class with the same values")
def check_serialisation(cls: type, problem: ConformanceProblem) -> None:
    """Round trips through ``save`` / ``load``, pickle and deepcopy.

    Examples
    --------
    >>> from shap_instances import NaiveBayesExplainer
    >>> from shap_instances.testing import check_serialisation
    >>> check_serialisation(NaiveBayesExplainer)
    """
    explainer = build(cls, problem)
    values = call(explainer, problem).values
    buffer = io.BytesIO()
    explainer.save(buffer)
    buffer.seek(0)
    loaded = cls.load(buffer)  # type: ignore[attr-defined]
    assert type(loaded) is cls, f"load returned a {type(loaded).__name__}"
    same(call(loaded, problem).values, values, "save / load round trip")
    same(call(pickle.loads(pickle.dumps(explainer)), problem).values, values, "pickle round trip")
    same(call(copy.deepcopy(explainer), problem).values, values, "deepcopy")


@rule("DataFrame columns are matched by name: reordered columns of X and shuffled columns of the training data give "
      "the same values, renamed columns and an array one column short are refused with DataValidationError")
def check_column_handling(cls: type, problem: ConformanceProblem) -> None:
    """Columns by name, as ``shap_instances.utils.check_data`` does.

    Examples
    --------
    >>> from shap_instances import NaiveBayesExplainer
    >>> from shap_instances.testing import check_column_handling
    >>> check_column_handling(NaiveBayesExplainer)
    """
    explainer = build(cls, problem)
    X = problem.X
    values = call(explainer, problem).values
    same(call(explainer, problem, X[X.columns[::-1]]).values, values, "reordered DataFrame columns")
    shuffled = problem.masker.columns[np.random.default_rng(3).permutation(problem.masker.shape[1])]
    same(call(build(cls, problem, masker=problem.masker[shuffled]), problem).values, values,
         f"training data with its columns shuffled to {list(shuffled)[:6]}", atol=max(problem.atol, 1e-9))
    renamed = X.rename(columns={X.columns[0]: f"{X.columns[0]}_renamed"})
    for bad, what in ((renamed, "renamed columns"), (X.iloc[:, :-1].to_numpy(), "an array one column short")):
        try:
            call(explainer, problem, bad)
        except DataValidationError:
            continue
        raise AssertionError(f"{what} were accepted")


def _bad_inputs(problem: ConformanceProblem) -> list[tuple[str, Any]]:
    X = problem.X
    nan, inf = X.astype(np.float64), X.astype(np.float64)
    nan.iloc[0, 0], inf.iloc[0, 0] = np.nan, np.inf
    words = X.astype(object)
    words.iloc[:, 0] = "a word"
    return [("a NaN cell", nan), ("an infinite cell", inf), ("a column of words", words),
            ("a string instead of a table", "not a table"), ("a dict", {"a": 1}),
            ("a 1-D array", X.iloc[0].to_numpy()), ("an array one column wide too many",
                                                    np.column_stack([X.to_numpy(), X.to_numpy()[:, :1]]))]


def _outcome(explainer: Any, problem: ConformanceProblem, X: Any, y: Any = None) -> str | None:
    """None when the call refused the input with the package's error or explained it into finite values."""
    try:
        explanation = call(explainer, problem, X, y)
    except ShapInstancesError:
        return None
    except Exception as exc:  # noqa: BLE001 - what the check is about
        return f"raised {type(exc).__name__} ({str(exc)[:120]})"
    if not np.all(np.isfinite(np.asarray(explanation.values, dtype=np.float64))):
        return "returned values that are not finite"
    return None


@rule("bad input (NaN, inf, words, a string, a dict, a 1-D array, a wrong width, a target of the wrong length) "
      "is explained into finite values or refused with the package's errors (ShapInstancesError subclasses: "
      "DataValidationError, InvalidParameterError), never a raw NumPy, pandas, IndexError or KeyError")
def check_bad_input_errors(cls: type, problem: ConformanceProblem) -> None:
    """Bad input meets the package's errors.

    Examples
    --------
    >>> from shap_instances import NaiveBayesExplainer
    >>> from shap_instances.testing import check_bad_input_errors
    >>> check_bad_input_errors(NaiveBayesExplainer)
    """
    explainer = build(cls, problem)
    failures = [f"{what}: {outcome}" for what, X in _bad_inputs(problem)
                if (outcome := _outcome(explainer, problem, X)) is not None]
    y = training_targets(problem, len(problem.X))
    if getattr(cls, "call_y", "none") != "none" and y is not None:
        outcome = _outcome(explainer, problem, problem.X, np.asarray(y)[:-1])
        if outcome is not None:
            failures.append(f"a target one row short: {outcome}")
    assert not failures, "; ".join(failures)


def _other_targets(y: Any) -> Any:
    y = np.asarray(y)
    rolled = np.roll(y, 1)
    if not np.array_equal(rolled, y):
        return rolled
    return y + 1.0 if y.dtype.kind in "fiu" else y


@rule("call_y says what the call does with y: 'none' refuses it (InvalidParameterError), 'required' refuses a "
      "call without it, 'optional' uses it (other targets give other values) or refuses it where the "
      "configuration has no use for it")
def check_call_y(cls: type, problem: ConformanceProblem) -> None:
    """The call's ``y`` is used as ``call_y`` declares.

    Examples
    --------
    >>> from shap_instances import NaiveBayesExplainer
    >>> from shap_instances.testing import check_call_y
    >>> check_call_y(NaiveBayesExplainer)
    """
    explainer, X = build(cls, problem), problem.X
    y = training_targets(problem, len(X))
    y = np.zeros(len(X)) if y is None else y
    policy = getattr(cls, "call_y", "none")
    if policy == "none":
        try:
            explainer(X, y)
        except InvalidParameterError:
            return
        raise AssertionError("call_y = 'none' and explainer(X, y) accepted y")
    if policy == "required":
        try:
            explainer(X)
        except ShapInstancesError:
            pass
        else:
            raise AssertionError("call_y = 'required' and explainer(X) ran without y")
    try:
        first = explainer(X, y).values
    except InvalidParameterError:
        assert policy == "optional", "call_y = 'required' and explainer(X, y) refused y"
        return
    other = explainer(X, _other_targets(y)).values
    assert differ(first, other), f"call_y = {policy!r} and other targets y give the same values: y is ignored"


def _attributes(model: Any) -> dict[str, Any]:
    """Every attribute name of the model, with the pickle of the public ones (parameters and fitted ``foo_``).

    Private attributes are compared by name only: scikit-learn's own ``predict`` updates some (the query counters
    of a KNN model's tree), which is the model's business, not the explainer's.
    """
    found: dict[str, Any] = {}
    for name, value in getattr(model, "__dict__", {}).items():
        if name.startswith("_"):
            found[name] = None
            continue
        try:
            found[name] = pickle.dumps(value)
        except Exception:  # noqa: BLE001 - an unpicklable attribute is compared by identity
            found[name] = id(value)
    return found


@rule("the user's model and data are never modified: no attribute set or removed, no parameter or fitted "
      "attribute changed, masker and X unchanged (clone the model to refit it)")
def check_model_not_mutated(cls: type, problem: ConformanceProblem) -> None:
    """Construction and call leave the model (its attributes, its public ones by value) and the data as they were.

    Examples
    --------
    >>> from shap_instances import NaiveBayesExplainer
    >>> from shap_instances.testing import check_model_not_mutated
    >>> check_model_not_mutated(NaiveBayesExplainer)
    """
    before = _attributes(problem.model)
    masker, X = problem.masker.copy(deep=True), problem.X.copy(deep=True)
    call(build(cls, problem), problem)
    after = _attributes(problem.model)
    added, removed = sorted(set(after) - set(before)), sorted(set(before) - set(after))
    assert not added and not removed, f"attributes {added} were set and {removed} removed on the user's model"
    changed = sorted(name for name in before if name in after and before[name] != after[name])
    assert not changed, f"the user's model's attributes {changed} were changed"
    assert problem.masker.equals(masker), "the masker (training data) was modified"
    assert problem.X.equals(X), "the explained rows X were modified"


@rule("an int random_state gives identical values on two explainers and on two calls of one explainer")
def check_random_state_reproduces(cls: type, problem: ConformanceProblem) -> None:
    """``random_state=3`` reproduces, with the problem's ``sampling_options`` (a class that takes no
    ``random_state`` passes).

    Examples
    --------
    >>> from shap_instances import InstanceKernelExplainer
    >>> from shap_instances.testing import check_random_state_reproduces
    >>> check_random_state_reproduces(InstanceKernelExplainer)
    """
    if "random_state" not in accepted(cls):
        return
    options = {**(problem.sampling_options or {}), "random_state": 3}
    first = call(build(cls, problem, **options), problem).values
    again = build(cls, problem, **options)
    same(call(again, problem).values, first, "two explainers with random_state=3")
    same(call(again, problem).values, first, "two calls with random_state=3")


@rule("random_state is accepted exactly by stochastic classes (stochastic = True), and used: with the problem's "
      "sampling_options, random_state=0 and random_state=1 give different values")
def check_random_state_is_used(cls: type, problem: ConformanceProblem) -> None:
    """A class that takes ``random_state`` samples with it.

    Examples
    --------
    >>> from shap_instances import InstanceKernelExplainer
    >>> from shap_instances.testing import check_random_state_is_used
    >>> check_random_state_is_used(InstanceKernelExplainer)
    """
    takes = "random_state" in accepted(cls)
    stochastic = getattr(cls, "stochastic", False)
    assert takes == stochastic, (f"stochastic = {stochastic} and random_state is {'' if takes else 'not '}accepted "
                                 "(a deterministic class must not take the option)")
    if not stochastic:
        return
    values = [call(build(cls, problem, **sampling(cls, problem, seed)), problem).values for seed in (0, 1)]
    assert differ(*values), (f"random_state=0 and random_state=1 give identical values with sampling_options="
                             f"{problem.sampling_options}: random_state is unused")


@rule("results do not depend on n_jobs: n_jobs=1 and n_jobs=2 give identical values and base values (seeds are "
      "drawn once, in task order)")
def check_n_jobs_invariance(cls: type, problem: ConformanceProblem) -> None:
    """``n_jobs`` changes the speed, never the result (with the problem's ``sampling_options`` and a seed).

    Examples
    --------
    >>> from shap_instances import GapExplainer
    >>> from shap_instances.testing import check_n_jobs_invariance
    >>> check_n_jobs_invariance(GapExplainer)
    """
    if "n_jobs" not in accepted(cls):
        return
    results = [call(build(cls, problem, n_jobs=n_jobs, **sampling(cls, problem)), problem) for n_jobs in (1, 2)]
    same(results[1].values, results[0].values, "values with n_jobs=2 against n_jobs=1")
    same(results[1].base_values, results[0].base_values, "base values with n_jobs=2 against n_jobs=1")
