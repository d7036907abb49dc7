"""Checks of what a class declares: its base class, its signatures, its class attributes, its options."""

from __future__ import annotations

import inspect
import numbers

import shap

from .._base import ConformanceProblem
from ..exceptions import InvalidParameterError
from ._common import accepted, build, call, rule, same

__all__ = ["check_constructor_signature", "check_is_shap_explainer", "check_players_declaration",
           "check_refused_options"]

#: The allowed values of the declarations every explainer makes.
PLAYERS = ("instances", "features")
CALL_Y = ("none", "optional", "required")


@rule("an explainer is a shap.Explainer subclass (shap_instances.InstanceExplainer) with the classmethods "
      "supports_model(model, data) and conformance_problem()")
def check_is_shap_explainer(cls: type, problem: ConformanceProblem) -> None:
    """The class is a :class:`shap.Explainer` with ``supports_model`` and ``conformance_problem``.

    Examples
    --------
    >>> from shap_instances import NaiveBayesExplainer
    >>> from shap_instances.testing import check_is_shap_explainer
    >>> check_is_shap_explainer(NaiveBayesExplainer)
    """
    assert isinstance(cls, type) and issubclass(cls, shap.Explainer), (
        f"{cls!r} is not a shap.Explainer subclass (its bases: {[b.__name__ for b in getattr(cls, '__mro__', ())]})")
    for name in ("supports_model", "conformance_problem"):
        assert callable(getattr(cls, name, None)), f"it has no callable {name}"


@rule("Cls(model, masker=None, *, data=None, y=None, <options>): model and masker the only positional parameters, "
      "data= an alias of masker giving the same values, and __call__(X, y=None)")
def check_constructor_signature(cls: type, problem: ConformanceProblem) -> None:
    """``(model, masker)`` are the only positional parameters; ``data=`` is an alias; the call is ``(X, y)``.

    Examples
    --------
    >>> from shap_instances import NaiveBayesExplainer
    >>> from shap_instances.testing import check_constructor_signature
    >>> check_constructor_signature(NaiveBayesExplainer)
    """
    parameters = list(inspect.signature(cls.__init__).parameters.values())[1:]  # type: ignore[misc]
    positional = [p.name for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    assert positional == ["model", "masker"], f"the positional parameters are {positional}, not ['model', 'masker']"
    kinds = {p.name: p.kind for p in parameters}
    assert kinds.get("data") == inspect.Parameter.KEYWORD_ONLY, "there is no keyword-only data= alias of masker"
    assert kinds.get("y", inspect.Parameter.KEYWORD_ONLY) == inspect.Parameter.KEYWORD_ONLY, "y is not keyword-only"
    called = list(inspect.signature(cls.__call__).parameters)[1:3]
    assert called[:1] == ["X"] and (len(called) < 2 or called[1] == "y"), (
        f"__call__ starts with {called}, not (X, y=None)")
    same(call(build(cls, problem, alias=True), problem).values, call(build(cls, problem), problem).values,
         "data= alias against masker")


@rule("the class attributes say what the explainer does: players in ('instances', 'features'), call_y in "
      "('none', 'optional', 'required'), requires_y, efficient and stochastic booleans, auto_priority an int, "
      "explained_quantity a str")
def check_players_declaration(cls: type, problem: ConformanceProblem) -> None:
    """The declarations (``players``, ``call_y``, ``requires_y``, ``efficient``, ``stochastic``, ...) are valid.

    Examples
    --------
    >>> from shap_instances import NaiveBayesExplainer
    >>> from shap_instances.testing import check_players_declaration
    >>> check_players_declaration(NaiveBayesExplainer)
    """
    players = getattr(cls, "players", None)
    assert players in PLAYERS, f"players = {players!r}"
    call_y = getattr(cls, "call_y", None)
    assert call_y in CALL_Y, f"call_y = {call_y!r}"
    for name in ("requires_y", "efficient", "stochastic"):
        value = getattr(cls, name, None)
        assert isinstance(value, bool), f"{name} = {value!r}, not a bool"
    priority = getattr(cls, "auto_priority", None)
    assert isinstance(priority, numbers.Integral) and not isinstance(priority, bool), f"auto_priority = {priority!r}"
    assert isinstance(getattr(cls, "explained_quantity", None), str), "explained_quantity is not a str"


#: Invalid values of the shared options: each must be refused where the option is accepted.
_INVALID = (("random_state", -1), ("n_jobs", 0), ("max_memory", -5.0), ("batch_size", 0), ("max_evals", 0),
            ("silent", "yes"))


@rule("an option the class does not take is a TypeError, and an invalid value of a shared option is refused with "
      "InvalidParameterError (a ValueError and a TypeError)")
def check_refused_options(cls: type, problem: ConformanceProblem) -> None:
    """Unknown options and invalid values of the shared options are refused at construction.

    Examples
    --------
    >>> from shap_instances import NaiveBayesExplainer
    >>> from shap_instances.testing import check_refused_options
    >>> check_refused_options(NaiveBayesExplainer)
    """
    try:
        build(cls, problem, not_an_option_of_any_explainer=1)
    except TypeError:
        pass
    else:
        raise AssertionError("an unknown keyword option (not_an_option_of_any_explainer=1) was accepted")
    names = accepted(cls)
    for name, bad in _INVALID:
        if name not in names:
            continue
        try:
            build(cls, problem, **{name: bad})  # type: ignore[arg-type]  # an option, never alias=
        except (InvalidParameterError, ValueError, TypeError):
            continue
        raise AssertionError(f"{name}={bad!r} was accepted")
