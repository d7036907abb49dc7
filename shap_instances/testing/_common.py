"""What every check shares: the rule decorator, building an explainer from a problem, comparing results.

Each check gets its own problem (the class's ``conformance_problem()``, or a deep copy of the one given) and
builds its own explainer: no check sees another's state.
"""

from __future__ import annotations

import copy
import functools
import inspect
import sys
import unittest
from collections.abc import Callable
from typing import Any, Protocol

import numpy as np
import pandas as pd
import shap

from .._base import ConformanceProblem

#: Raised by a check that does not apply to a class on its problem (pytest reports it as skipped).
SkipCheck = unittest.SkipTest


class Check(Protocol):
    """A conformance check: ``check(cls, problem=None)`` raises an ``AssertionError`` naming its rule."""

    __name__: str
    rule: str

    def __call__(self, cls: type, problem: ConformanceProblem | None = None) -> None: ...


def rule(wants: str) -> Callable[[Callable[[type, ConformanceProblem], None]], Check]:
    """Turn ``body(cls, problem)`` into a public check enforcing the rule ``wants`` (what the contract wants).

    The check resolves its own problem, runs the body, and turns any failure into one ``AssertionError``:
    ``"<Class> fails <check>: <what was seen>. The contract: <wants>"``; an exception other than an assertion
    (the explainer raising where it should not) is reported the same way, with its type.
    """

    def decorate(body: Callable[[type, ConformanceProblem], None]) -> Check:
        @functools.wraps(body)
        def check(cls: type, problem: ConformanceProblem | None = None) -> None:
            name = getattr(cls, "__name__", repr(cls))
            try:
                body(cls, own_problem(cls, problem))
            except SkipCheck:
                raise
            except AssertionError as exc:
                seen = str(exc).rstrip(".")
                raise AssertionError(f"{name} fails {body.__name__}: {seen}. The contract: {wants}") from exc
            except Exception as exc:
                seen = f"raised {type(exc).__name__}: {str(exc).rstrip('.')}"
                raise AssertionError(f"{name} fails {body.__name__}: {seen}. The contract: {wants}") from exc
            finally:
                _close_figures()

        check.rule = wants  # type: ignore[attr-defined]
        signature = inspect.signature(body)
        check.__signature__ = signature.replace(parameters=[  # type: ignore[attr-defined]
            signature.parameters["cls"],
            signature.parameters["problem"].replace(default=None, annotation="ConformanceProblem | None")])
        check.__annotations__ = {"cls": "type", "problem": "ConformanceProblem | None", "return": "None"}
        return check  # type: ignore[return-value]

    return decorate


def _close_figures() -> None:
    if "matplotlib.pyplot" in sys.modules:
        sys.modules["matplotlib.pyplot"].close("all")


def own_problem(cls: type, problem: ConformanceProblem | None) -> ConformanceProblem:
    """A problem no other check shares: the class's own (built anew), or a deep copy of the one given."""
    if problem is not None:
        return copy.deepcopy(problem)
    make = getattr(cls, "conformance_problem", None)
    if make is None:
        raise AssertionError(f"{getattr(cls, '__name__', cls)!r} has no conformance_problem(); pass a "
                             "ConformanceProblem")
    return make()


def accepted(cls: type) -> set[str]:
    """The constructor's parameter names."""
    return set(inspect.signature(cls.__init__).parameters)  # type: ignore[misc]


def build(cls: type, problem: ConformanceProblem, *, alias: bool = False, masker: Any = None, model: Any = None,
          y: Any = None, **extra: Any) -> Any:
    """``cls(problem.model, problem.masker, y=problem.y, **problem.options, **extra)`` (each part replaceable)."""
    kwargs = dict(problem.options)
    y = problem.y if y is None else y
    if y is not None:
        kwargs["y"] = y
    kwargs.update(extra)
    model = problem.model if model is None else model
    masker = problem.masker if masker is None else masker
    if alias:
        return cls(model, data=masker, **kwargs)
    return cls(model, masker, **kwargs)


def call(explainer: Any, problem: ConformanceProblem, X: Any = None, y: Any = None) -> shap.Explanation:
    """``explainer(X, y)`` with the problem's rows and targets by default (no ``y`` when the problem has none)."""
    X = problem.X if X is None else X
    y = problem.y_explained if y is None else y
    return explainer(X) if y is None else explainer(X, y)


def sampling(cls: type, problem: ConformanceProblem, seed: int | None = 0) -> dict[str, Any]:
    """Options that make a stochastic class sample, with ``random_state=seed``; ``{}`` for a deterministic one."""
    if not getattr(cls, "stochastic", False):
        return {}
    return {**(problem.sampling_options or {}), "random_state": seed}


def as_float(values: Any) -> np.ndarray:
    return np.asarray(values, dtype=np.float64)


def same(a: Any, b: Any, what: str, atol: float = 0.0) -> None:
    """Assert two arrays have one shape and agree within ``atol * max(1, |b|)``; NaN equals NaN."""
    a, b = as_float(a), as_float(b)
    assert a.shape == b.shape, f"{what}: shapes {a.shape} and {b.shape} differ"
    scale = max(1.0, float(np.nanmax(np.abs(b), initial=0.0)))
    close = np.isclose(a, b, atol=atol * scale, rtol=0, equal_nan=True)
    if not np.all(close):
        gap = float(np.nanmax(np.abs(a - b)))
        raise AssertionError(f"{what}: values differ by up to {gap:.3g} (tolerance {atol * scale:.3g})")


def differ(a: Any, b: Any) -> bool:
    a, b = as_float(a), as_float(b)
    return a.shape != b.shape or not np.array_equal(a, b, equal_nan=True)


def one_output(explanation: shap.Explanation) -> shap.Explanation:
    return explanation[..., 0] if np.ndim(explanation.values) == 3 else explanation


def first(value: Any) -> float:
    value = np.asarray(value)
    return float(value.ravel()[0]) if value.ndim else float(value)


def n_players_of(cls: type, problem: ConformanceProblem) -> int:
    """Training rows (instance players) or columns (feature players) of the problem."""
    if getattr(cls, "players", None) == "features":
        return int(np.shape(problem.X)[1])
    return int(np.shape(problem.masker)[0])


def training_targets(problem: ConformanceProblem, n: int) -> Any:
    """``n`` targets for the explained rows: the problem's, else the first training targets, else None."""
    if problem.y_explained is not None:
        return problem.y_explained
    if problem.y is not None and len(problem.y) >= n:
        y = problem.y
        return y.iloc[:n].to_numpy() if isinstance(y, pd.Series) else np.asarray(y)[:n]
    return None
