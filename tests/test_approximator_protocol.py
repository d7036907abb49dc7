"""The ``Approximator`` protocol: every estimator satisfies it, and explainers annotate estimator parameters with it."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import numpy as np
import pytest

import shap_instances
from shap_instances import approximators
from shap_instances.approximators import Approximator, ExactApproximator, ShapleyResult
from shap_instances.games import FunctionGame
from shap_instances.valuation import Semivalue

EXPLAINERS_DIR = Path(shap_instances.__file__).parent / "explainers"

#: Parameters that take an approximator but are not annotated with ``Approximator``: (file, function, parameter),
#: each with its reason. Empty: the residual explainer's ``approximator`` is ``str | Approximator``.
UNANNOTATED: set[tuple[str, str, str]] = set()

ESTIMATOR_CLASSES = [getattr(approximators, name) for name in approximators.__all__
                     if name.endswith("Approximator") and name != "Approximator"
                     and inspect.isclass(getattr(approximators, name))]


def test_every_estimator_class_is_listed():
    assert {cls.__name__ for cls in ESTIMATOR_CLASSES} == {
        "ClosedFormApproximator", "ControlVariateApproximator", "ExactApproximator", "KernelApproximator",
        "PermutationApproximator", "PlaceStratifiedApproximator", "RidgeInfluenceApproximator",
        "LeaveOneOutApproximator", "MSRBanzhafApproximator", "RegressionBanzhafApproximator",
        "WeightedPermutationApproximator"}


#: The constructor arguments an approximator cannot do without (the semivalue a weighted permutation estimates).
REQUIRED = {"WeightedPermutationApproximator": lambda: (Semivalue("banzhaf"),)}


@pytest.mark.parametrize("cls", ESTIMATOR_CLASSES, ids=lambda cls: cls.__name__)
def test_every_estimator_satisfies_the_protocol(cls):
    assert isinstance(cls(*REQUIRED.get(cls.__name__, tuple)()), Approximator)
    assert issubclass(cls, Approximator)
    parameters = list(inspect.signature(cls.estimate).parameters)
    assert parameters == ["self", "game"], f"{cls.__name__}.estimate{parameters}: the protocol's call is estimate(game)"
    assert inspect.signature(cls.estimate).return_annotation in ("ShapleyResult", ShapleyResult)


def test_the_protocol_is_one_call_that_any_object_can_meet():
    class Equal:
        def estimate(self, game):
            empty, full = game.empty_value, game.full_value
            return ShapleyResult(np.tile((full - empty) / game.n_players, (game.n_players, 1)), empty, full)

    game = FunctionGame(lambda masks: masks.sum(1, keepdims=True) * 1.0, 3)
    assert isinstance(Equal(), Approximator) and not isinstance(object(), Approximator)
    np.testing.assert_allclose(Equal().estimate(game).values, ExactApproximator().estimate(game).values)


def _estimator_parameters(tree: ast.AST):
    """(function, parameter, annotation source or None) for parameters named estimator or approximator."""
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            arguments = node.args.posonlyargs + node.args.args + node.args.kwonlyargs
            for argument in arguments:
                if argument.arg in ("estimator", "approximator"):
                    annotation = None if argument.annotation is None else ast.unparse(argument.annotation)
                    yield node.name, argument.arg, annotation


def unannotated(source: str) -> set[tuple[str, str]]:
    """The estimator parameters of ``source`` whose annotation does not name ``Approximator``."""
    return {(function, parameter) for function, parameter, annotation in _estimator_parameters(ast.parse(source))
            if annotation is None or "Approximator" not in annotation}


def test_explainers_annotate_their_estimator_parameters_with_the_protocol():
    found = {(path.name, function, parameter) for path in sorted(EXPLAINERS_DIR.glob("*.py"))
             for function, parameter in unannotated(path.read_text(encoding="utf-8"))}
    missing = found - UNANNOTATED
    assert not missing, f"annotate these with shap_instances.approximators.Approximator: {missing}"
    assert not UNANNOTATED - found, f"no longer needed, remove from UNANNOTATED: {UNANNOTATED - found}"


def test_an_unannotated_estimator_parameter_is_caught():
    planted = ("def __init__(self, model, *, estimator: Any = 'auto'): ...\n"
               "def good(estimator: str | Approximator = 'auto'): ...\n"
               "def bare(approximator): ...\n")
    assert unannotated(planted) == {("__init__", "estimator"), ("bare", "approximator")}
