"""Every public function and method carries type hints (issue 18: a typed package, checked by mypy in CI).

The walk covers ``shap_instances.__all__``, the ``__all__`` of every public subpackage and module, the registered
explainer classes (the KNN plugin's included where it is installed) and, for every class met, the methods it
defines itself (public ones, ``__init__`` and ``__call__``, properties included). A parameter or return without an
annotation fails the test, named as ``module.Class.method(parameter)``.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable, Iterator
from typing import Any

import pytest

import shap_instances

_PUBLIC_MODULES = [
    "shap_instances",
    *(f"shap_instances.{name}" for name in sorted(shap_instances._SUBMODULES)),
    "shap_instances.registry",
    "shap_instances.forest",
    "shap_instances.naive_bayes",
    "shap_instances.naive_bayes",
    "shap_instances.linear",
    "shap_instances.report",
    "shap_instances_knn",
    "shap_instances_loo",
]
_DUNDERS_CHECKED = {"__init__", "__call__"}


def _own(obj: Any) -> bool:
    module = getattr(obj, "__module__", None) or ""
    return module.split(".")[0] in ("shap_instances", "shap_instances_knn")


def _functions_of_class(cls: type) -> Iterator[tuple[str, Callable[..., Any]]]:
    """The methods ``cls`` (and its own bases) define: public names, ``__init__`` and ``__call__``."""
    seen: set[str] = set()
    for klass in cls.__mro__:
        if not _own(klass):
            continue
        for name, member in vars(klass).items():
            if name in seen or (name.startswith("_") and name not in _DUNDERS_CHECKED):
                continue
            seen.add(name)
            if isinstance(member, (staticmethod, classmethod)):
                member = member.__func__
            elif isinstance(member, property):
                member = member.fget
            if inspect.isfunction(member) and _own(member):  # not typing's __init__ of a Protocol
                yield f"{klass.__module__}.{klass.__qualname__}.{name}", member


def _public_callables() -> dict[str, Callable[..., Any]]:
    found: dict[str, Callable[..., Any]] = {}
    classes: list[type] = list(shap_instances.list_explainers().values())
    for module_name in _PUBLIC_MODULES:
        try:
            module = importlib.import_module(module_name)
        except ImportError:  # the plugin is optional
            continue
        for name in getattr(module, "__all__", ()):
            obj = getattr(module, name)
            if inspect.isclass(obj):
                classes.append(obj)
            elif inspect.isfunction(obj) and _own(obj):
                found[f"{obj.__module__}.{obj.__qualname__}"] = obj
    for cls in classes:
        if _own(cls):
            found.update(_functions_of_class(cls))
    return found


def _missing(function: Callable[..., Any]) -> list[str]:
    signature = inspect.signature(function, eval_str=False)
    missing = []
    for i, (name, parameter) in enumerate(signature.parameters.items()):
        if i == 0 and name in ("self", "cls"):
            continue
        if parameter.annotation is inspect.Parameter.empty:
            missing.append(name)
    if signature.return_annotation is inspect.Signature.empty:
        missing.append("return")
    return missing


def test_the_walk_finds_the_public_api() -> None:
    names = _public_callables()
    assert len(names) > 150
    assert "shap_instances.explainers.gap.GapExplainer.__call__" in names
    assert "shap_instances.approximators.permutation.PermutationApproximator.estimate" in names


def test_every_public_function_is_annotated() -> None:
    problems = [f"{name}({', '.join(missing)})" for name, function in sorted(_public_callables().items())
                if (missing := _missing(function))]
    assert not problems, "missing annotations:\n" + "\n".join(problems)


@pytest.mark.parametrize("annotated", [True, False])
def test_the_check_names_a_missing_annotation(annotated: bool) -> None:
    def with_hints(x: int, *, y: str = "") -> None: ...

    def without(x, *, y: str = ""): ...  # the case under test: x and the return unannotated

    assert _missing(with_hints if annotated else without) == ([] if annotated else ["x", "return"])
