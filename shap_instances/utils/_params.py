"""Declarative parameter constraints, checked in one place (scikit-learn's ``_parameter_constraints`` model).

Each explainer declares ``_parameter_constraints = {"name": [constraint, ...]}``; a value is valid when it
satisfies any constraint of its list. :func:`validate_params` checks them all and raises one
:class:`~shap_instances.exceptions.InvalidParameterError` naming the parameter, the value and what is allowed.
"""

from __future__ import annotations

import numbers
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..exceptions import InvalidParameterError

__all__ = ["COMMON_CONSTRAINTS", "RUN_OPTIONS", "HasMethods", "Interval", "NumericOption", "Options",
           "check_min_evals", "parse_number", "validate_params"]


@dataclass(frozen=True)
class Interval:
    """Numbers of ``kind`` (``numbers.Integral`` or ``numbers.Real``) in ``[left, right]`` (None: unbounded).

    Booleans are never numbers here. ``closed`` is "both", "left", "right" or "neither".

    Examples
    --------
    >>> import numbers
    >>> from shap_instances.utils import Interval
    >>> Interval(numbers.Integral, 1, None).is_satisfied_by(3), Interval(numbers.Real, 0, 1).is_satisfied_by(2.0)
    (True, False)
    """

    kind: type
    left: float | None
    right: float | None
    closed: str = "both"

    def is_satisfied_by(self, value: Any) -> bool:
        if isinstance(value, bool | np.bool_) or not isinstance(value, self.kind):
            return False
        number = float(value)  # type: ignore[arg-type]  # an instance of self.kind, a number
        if not np.isfinite(number):
            return False
        if self.left is not None and (number < self.left or (number == self.left and self.closed in ("right",
                                                                                                      "neither"))):
            return False
        return not (self.right is not None and (number > self.right or (number == self.right and self.closed in (
            "left", "neither"))))

    def __str__(self) -> str:
        kind = "an int" if self.kind is numbers.Integral else "a finite number"
        if self.left is None and self.right is None:
            return kind
        lo = "-inf" if self.left is None else self.left
        hi = "inf" if self.right is None else self.right
        brackets = {"both": "[]", "left": "[)", "right": "(]", "neither": "()"}[self.closed]
        return f"{kind} in {brackets[0]}{lo}, {hi}{brackets[1]}"


@dataclass(frozen=True)
class Options:
    """One of a fixed set of values (strings are compared exactly).

    Examples
    --------
    >>> from shap_instances.utils import Options
    >>> Options("auto", "exact").is_satisfied_by("exact")
    True
    """

    values: tuple

    def __init__(self, *values: Any) -> None:
        object.__setattr__(self, "values", tuple(values))

    def is_satisfied_by(self, value: Any) -> bool:
        return isinstance(value, str | bool | numbers.Number) and any(
            type(value) is type(v) and value == v for v in self.values)

    def __str__(self) -> str:
        return "one of " + ", ".join(repr(v) for v in self.values)


@dataclass(frozen=True)
class HasMethods:
    """An object with the named methods (e.g. an estimator object with ``estimate``).

    Examples
    --------
    >>> from shap_instances.utils import HasMethods
    >>> HasMethods("append").is_satisfied_by([])
    True
    """

    methods: tuple

    def __init__(self, *methods: str) -> None:
        object.__setattr__(self, "methods", tuple(methods))

    def is_satisfied_by(self, value: Any) -> bool:
        return all(callable(getattr(value, m, None)) for m in self.methods)

    def __str__(self) -> str:
        return "an object with " + ", ".join(f"{m}()" for m in self.methods)


def _random_state(value: Any) -> bool:
    return (value is None or isinstance(value, np.random.Generator | np.random.BitGenerator | np.random.RandomState)
            or (isinstance(value, numbers.Integral) and not isinstance(value, bool | np.bool_) and int(value) >= 0))


def _array_like(value: Any) -> bool:
    return hasattr(value, "shape") or hasattr(value, "__array__") or isinstance(value, list | tuple)


def _names(value: Any) -> bool:
    return isinstance(value, list | tuple | np.ndarray) or hasattr(value, "tolist")


#: Named constraints that need more than a type check.
_NAMED: Mapping[str, tuple[Callable[[Any], bool], str]] = {
    "boolean": (lambda v: isinstance(v, bool | np.bool_), "a bool"),
    "random_state": (_random_state, "None, a non-negative int, a numpy Generator, BitGenerator or RandomState"),
    "array-like": (_array_like, "an array-like"),
    "names": (_names, "a sequence of names"),
    "callable": (callable, "a callable"),
    "path": (lambda v: isinstance(v, str | os.PathLike), "a path (str or os.PathLike)"),
}


def _satisfied(constraint: Any, value: Any) -> bool:
    if constraint is None:
        return value is None
    if isinstance(constraint, str):
        return _NAMED[constraint][0](value)
    if isinstance(constraint, type):
        return isinstance(value, constraint)
    return constraint.is_satisfied_by(value)


def _describe(constraint: Any) -> str:
    if constraint is None:
        return "None"
    if isinstance(constraint, str):
        return _NAMED[constraint][1]
    if isinstance(constraint, type):
        return f"an instance of {constraint.__name__}"
    return str(constraint)


def validate_params(owner: str, constraints: Mapping[str, list], params: Mapping[str, Any]) -> None:
    """Check ``params`` against ``constraints``; raise one clear error for the first invalid value.

    Parameters missing from ``constraints`` are not checked (explainer-specific objects such as the model).

    Raises
    ------
    InvalidParameterError
        ``"{owner}: {name} must be ...; got {value!r}."``.

    Examples
    --------
    >>> import numbers
    >>> from shap_instances.utils import Interval, validate_params
    >>> validate_params("Demo", {"n": [Interval(numbers.Integral, 1, None)]}, {"n": 3})
    >>> try:
    ...     validate_params("Demo", {"n": [Interval(numbers.Integral, 1, None)]}, {"n": 0})
    ... except ValueError as exc:
    ...     print(exc)
    Demo: n must be an int in [1, inf]; got 0.
    """
    for name, value in params.items():
        allowed = constraints.get(name)
        if allowed is None or any(_satisfied(c, value) for c in allowed):
            continue
        wanted = " or ".join(_describe(c) for c in allowed)
        raise InvalidParameterError(f"{owner}: {name} must be {wanted}; got {value!r}.")


def check_min_evals(max_evals: int | None, minimum: int, what: str, option: str = "max_evals") -> None:
    """Refuse a budget ``max_evals`` below ``minimum``, the fewest evaluations ``what`` can spend, with that number.

    A budget too small for one sample would otherwise be overspent without a word (the command line refuses the
    same budget with the same rule).

    Examples
    --------
    >>> from shap_instances.utils import check_min_evals
    >>> check_min_evals(None, 21, "one permutation of 20 rows")
    >>> try:
    ...     check_min_evals(1, 21, "one permutation of 20 rows")
    ... except ValueError as exc:
    ...     print(exc)
    max_evals=1 is too small: one permutation of 20 rows needs at least 21 evaluations; pass max_evals >= 21.
    """
    if max_evals is not None and max_evals < minimum:
        raise InvalidParameterError(f"{option}={max_evals} is too small: {what} needs at least {minimum} evaluations; "
                                    f"pass {option} >= {minimum}.")


def parse_number(text: str, name: str, allowed: Interval, means: str = "") -> Any:
    """``text`` (a command-line option's value) read as ``allowed.kind`` and checked against ``allowed``.

    One reader for every number of the command line: an int for ``numbers.Integral``, else a float; NaN,
    infinities, overflows, words and values outside ``allowed`` raise one
    :class:`~shap_instances.exceptions.InvalidParameterError` naming the option, what it means and the range.

    Examples
    --------
    >>> import numbers
    >>> from shap_instances.utils import Interval, parse_number
    >>> parse_number("60", "--time-budget", Interval(numbers.Real, 1, 86400), "seconds")
    60.0
    >>> try:
    ...     parse_number("1e308", "--time-budget", Interval(numbers.Real, 1, 86400), "seconds")
    ... except ValueError as exc:
    ...     print(exc)
    --time-budget must be a finite number in [1, 86400] (seconds); got '1e308'.
    """
    integral = allowed.kind is numbers.Integral
    try:
        value: Any = int(text) if integral else float(text)
    except (TypeError, ValueError, OverflowError):
        value = None
    if value is None or not allowed.is_satisfied_by(value):
        said = f" ({means})" if means else ""
        raise InvalidParameterError(f"{name} must be {allowed}{said}; got {text!r}.")
    return value


#: The shared options of every explainer: the same name means the same thing wherever it is accepted.
COMMON_CONSTRAINTS: dict[str, list] = {
    "random_state": ["random_state"],
    "n_jobs": [None, Interval(numbers.Integral, None, -1), Interval(numbers.Integral, 1, None)],
    "silent": ["boolean"],
    "max_memory": [None, Interval(numbers.Real, 0, None, closed="neither")],
    "feature_names": [None, "names"],
    "batch_size": [None, Interval(numbers.Integral, 1, None)],
    "max_evals": [None, Interval(numbers.Integral, 1, None)],
    "scheduler": [None, str, HasMethods("submit", "scheduler_info")],
}


@dataclass(frozen=True)
class NumericOption:
    """A number the report and the command line take: the values allowed (in Python's unit), what the number
    counts on the command line (said in its errors), whether None is allowed too in Python (the option's default,
    "no limit"), and how many of Python's units one of the command line's is (``max_memory``: GiB, ``2**30``
    bytes).

    Examples
    --------
    >>> from shap_instances.utils import RUN_OPTIONS
    >>> memory = RUN_OPTIONS["max_memory"]
    >>> str(memory.command_line()), memory.constraints()[0] is None
    ('a finite number in [1e-06, 1048576]', True)
    """

    allowed: Interval
    means: str
    nullable: bool = False
    unit: float = 1.0

    def constraints(self) -> list:
        """The option as a :func:`validate_params` constraint list."""
        return [None, self.allowed] if self.nullable else [self.allowed]

    def command_line(self) -> Interval:
        """The values allowed, in the command line's unit."""
        if self.unit == 1.0:
            return self.allowed
        left, right = (None if bound is None else _whole(bound / self.unit) for bound in (self.allowed.left,
                                                                                          self.allowed.right))
        return Interval(self.allowed.kind, left, right, closed=self.allowed.closed)


def _whole(number: float) -> float:
    """``number`` as an int when it is a whole number (``2**20`` is said as 1048576, not 1048576.0)."""
    return int(number) if float(number).is_integer() else number


#: The numeric options of :func:`~shap_instances.report.run_report` and of the command line, declared once: the
#: report checks them with :func:`validate_params`, the command line reads them with :func:`parse_number` (option
#: ``--time-budget`` is ``time_budget`` here; ``--top-k`` counts ``rows``).
RUN_OPTIONS: dict[str, NumericOption] = {
    "time_budget": NumericOption(Interval(numbers.Real, 1, 30 * 86400), "seconds, from 1 s to 30 days"),
    "max_memory": NumericOption(Interval(numbers.Real, 1e-6 * 2**30, 2**50), "GiB, from 1e-6 (1 KiB) to 1 PiB",
                                True, unit=2**30),  # bytes in Python, GiB on the command line
    "max_evals": NumericOption(Interval(numbers.Integral, 1, 10**15), "a number of evaluations", True),
    "rows": NumericOption(Interval(numbers.Integral, 1, 10**12), "a number of rows", True),
    "block_size": NumericOption(Interval(numbers.Integral, 1, 2**40), "bytes, from 1 to 1 TiB"),
    "seed": NumericOption(Interval(numbers.Integral, 0, 2**32 - 1),
                          "a random seed, a whole number from 0 to 2**32 - 1"),
    "startup": NumericOption(Interval(numbers.Real, 0, None, closed="left"), "seconds"),
}
