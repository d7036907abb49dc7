"""``check_explainer`` (every check, every failure reported at once) and ``parametrize_with_checks``."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from .._base import ConformanceProblem
from ._behaviour import (
    check_bad_input_errors,
    check_call_y,
    check_column_handling,
    check_legacy_api,
    check_model_not_mutated,
    check_n_jobs_invariance,
    check_random_state_is_used,
    check_random_state_reproduces,
    check_serialisation,
)
from ._common import Check, SkipCheck
from ._conventions import check_shap_conventions
from ._declarations import (
    check_constructor_signature,
    check_is_shap_explainer,
    check_players_declaration,
    check_refused_options,
)
from ._generated import GENERATED_CHECKS
from ._output import (
    check_efficiency,
    check_explanation_shapes,
    check_feature_names,
    check_finish_is_called,
    check_n_players,
    check_row_names,
    check_values_follow_their_players,
)
from ._plots import check_shap_plots

__all__ = ["CHECKS", "check_explainer", "explainer_checks", "parametrize_with_checks"]

#: Every conformance check, one per rule of the contract, in the order they run.
CHECKS: tuple[Check, ...] = (
    check_is_shap_explainer, check_constructor_signature, check_players_declaration, check_refused_options,
    check_explanation_shapes, check_n_players, check_feature_names, check_row_names, check_efficiency,
    check_values_follow_their_players, check_finish_is_called, check_legacy_api, check_serialisation,
    check_column_handling, check_bad_input_errors, check_call_y, check_model_not_mutated,
    check_random_state_reproduces, check_random_state_is_used, check_n_jobs_invariance, check_shap_conventions,
    *GENERATED_CHECKS, check_shap_plots,
)


def explainer_checks() -> Iterator[Check]:
    """The conformance checks, one per rule, in the order :func:`check_explainer` runs them.

    Each is a function ``check(cls, problem=None)`` that builds its own explainer and raises an
    ``AssertionError`` naming its rule.

    Examples
    --------
    >>> from shap_instances.testing import explainer_checks
    >>> [check.__name__ for check in explainer_checks()][:3]
    ['check_is_shap_explainer', 'check_constructor_signature', 'check_players_declaration']
    """
    yield from CHECKS


def check_explainer(cls: type, problem: ConformanceProblem | None = None) -> None:
    """Run every conformance check on an explainer class; raise one ``AssertionError`` listing every failure.

    Each check (see :func:`explainer_checks` and the conformance-checks page of the docs) builds its own
    explainer from its own copy of the problem, so one failure neither stops nor disturbs the others. The
    problem is ``cls.conformance_problem()`` unless one is given. Checks that do not apply to the class on its
    problem are skipped and named at the end of the message when something else fails.

    Parameters
    ----------
    cls : type
        The explainer class.
    problem : ConformanceProblem, optional
        The problem to check it on.

    Raises
    ------
    AssertionError
        Listing, one per line, ``<Class> fails <check>: <what was seen>. The contract: <rule>``.

    Examples
    --------
    >>> import shap_instances as si
    >>> si.testing.check_explainer(si.NaiveBayesExplainer)
    """
    failures, skipped = [], []
    for check in CHECKS:
        try:
            check(cls, problem)
        except SkipCheck as exc:
            skipped.append(f"{check.__name__} ({exc})")
        except AssertionError as exc:
            failures.append(str(exc))
    if failures:
        name = getattr(cls, "__name__", repr(cls))
        lines = [f"{name} fails {len(failures)} of {len(CHECKS)} conformance checks:", *failures]
        if skipped:
            lines.append("skipped: " + "; ".join(skipped))
        raise AssertionError("\n".join(lines))


def parametrize_with_checks(classes: Iterable[type], *, marks: Mapping[str, Any] | None = None) -> Any:
    """A ``pytest.mark.parametrize("explainer_class, check", ...)`` with one case per class and check.

    As scikit-learn's ``parametrize_with_checks``: each case is one rule for one class, with an id such as
    ``NaiveBayesExplainer-check_n_players``, so that a failure names both and the other cases still run. A check
    that does not apply to a class on its problem is reported as skipped. pytest is imported when this is called.

    Parameters
    ----------
    classes : iterable of type
        Explainer classes (each with a ``conformance_problem()``).
    marks : mapping of str to pytest marks, optional
        Marks for the cases of the named checks, e.g. ``{"check_shap_plots": pytest.mark.slow}`` to run shap's
        plots in a separate, slow test step; a name that is no check is refused.

    Returns
    -------
    pytest.MarkDecorator
        Apply it to a test taking ``explainer_class`` and ``check`` that calls ``check(explainer_class)``.

    Examples
    --------
    >>> from shap_instances import NaiveBayesExplainer
    >>> from shap_instances.testing import parametrize_with_checks
    >>> @parametrize_with_checks([NaiveBayesExplainer])
    ... def test_conformance(explainer_class, check):
    ...     check(explainer_class)
    >>> [case.id for case in test_conformance.pytestmark[0].args[1]][:2]
    ['NaiveBayesExplainer-check_is_shap_explainer', 'NaiveBayesExplainer-check_constructor_signature']
    """
    try:
        import pytest
    except ImportError as exc:  # pragma: no cover - pytest is a test dependency
        raise ImportError("parametrize_with_checks makes pytest cases: pip install pytest") from exc

    classes = list(classes)
    for cls in classes:
        if not isinstance(cls, type):
            raise TypeError(f"parametrize_with_checks takes explainer classes, got {cls!r}; pass [MyExplainer].")
    marks = dict(marks or {})
    unknown = sorted(set(marks) - {check.__name__ for check in CHECKS})
    if unknown:
        raise ValueError(f"marks names no check: {unknown}; the checks are {[c.__name__ for c in CHECKS]}.")
    cases = [pytest.param(cls, check, id=f"{cls.__name__}-{check.__name__}", marks=marks.get(check.__name__, ()))
             for cls in classes for check in CHECKS]
    return pytest.mark.parametrize("explainer_class, check", cases)
