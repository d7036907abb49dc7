"""Start-up: the command line answers ``--version`` and ``--help`` without importing shap (or scikit-learn and
pandas), while the package's lazy top level still gives every public name, ``si.Explainer`` and pickling.

The imports are read from ``python -X importtime`` of the real command, so the check sees exactly what the
command imported; the GAP out-of-bag path is checked to apply each tree once (when the index is built).
"""

import importlib
import os
import pickle
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import shap
from sklearn.datasets import load_breast_cancer, make_friedman1
from sklearn.ensemble import RandomForestRegressor
from sklearn.linear_model import Ridge
from sklearn.naive_bayes import GaussianNB
from sklearn.tree import DecisionTreeRegressor

import shap_instances
import shap_instances as si
from shap_instances.exceptions import InvalidParameterError

ROOT = Path(__file__).resolve().parent.parent
HEAVY = ("shap", "sklearn", "pandas", "scipy", "numba", "matplotlib")


def _env() -> dict:
    return dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))


def _imported(command: list[str]) -> tuple[subprocess.CompletedProcess, set[str]]:
    """Run ``python -X importtime COMMAND``; the result and the top-level packages it imported."""
    result = subprocess.run([sys.executable, "-X", "importtime", *command], capture_output=True, text=True,
                            env=_env(), cwd=ROOT, timeout=120)
    names = {m[1].split(".")[0] for m in re.finditer(r"^import time:\s*\d+ \|\s*\d+ \|\s*(\S+)$", result.stderr,
                                                      re.M)}
    return result, names


def test_importtime_parsing_sees_a_heavy_import():
    """The check below can fail: a command that imports shap is seen doing so."""
    result, names = _imported(["-c", "import shap_instances.cli, pandas"])
    assert result.returncode == 0 and {"shap_instances", "pandas", "numpy"} <= names


#: command -> (a line it prints, the packages it must not import). A subcommand's help lists the --model
#: choices, read from shap_instances.report (scikit-learn), but still needs no shap.
COMMANDS = {
    "version": (["--version"], "shap-instances ", HEAVY),
    "help": (["--help"], "usage: shap-instances", HEAVY),
    "explain help": (["explain", "--help"], "one of auto, ridge, lasso", ("shap", "numba", "matplotlib")),
}


@pytest.mark.parametrize("name", [pytest.param(name, marks=pytest.mark.slow) if name == "explain help" else name
                                  for name in COMMANDS])  # a subcommand's help imports scikit-learn: seconds
def test_version_and_help_do_not_import_shap(name):
    arguments, expected, forbidden = COMMANDS[name]
    result, names = _imported(["-m", "shap_instances", *arguments])
    assert result.returncode == 0, result.stderr[-2000:]
    assert expected in result.stdout
    assert "shap_instances" in names  # the command did run from this package
    assert not names & set(forbidden), f"{' '.join(arguments)} imported {sorted(names & set(forbidden))}"


@pytest.mark.skipif(shutil.which("shap-instances") is None, reason="console script not installed")
def test_console_script_version_imports_no_shap():
    result, names = _imported([shutil.which("shap-instances"), "--version"])
    assert result.returncode == 0 and result.stdout.startswith("shap-instances ")
    assert "shap" not in names and "sklearn" not in names


def test_import_leaves_shap_out():
    code = ("import sys, shap_instances as si, shap_instances.cli\n"
            "assert 'shap' not in sys.modules, 'import shap_instances imported shap'\n"
            "si.list_explainers\n"
            "assert 'shap' not in sys.modules, 'si.list_explainers imported shap'\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=_env(), cwd=ROOT,
                            timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]


def _defined(name: str):
    """The object ``name`` is in the module that defines it."""
    if name in shap_instances._LAZY:
        return getattr(importlib.import_module(shap_instances._LAZY[name]), name)
    if name in shap_instances._SUBMODULES:
        return importlib.import_module(f"shap_instances.{name}")
    return getattr(importlib.import_module("shap_instances.registry"), name)


@pytest.mark.parametrize("name", sorted(shap_instances.__all__))
def test_every_public_name_resolves(name):
    """``from shap_instances import X`` for every name gives the object its module defines."""
    if name in shap_instances._LAZY or name in shap_instances._SUBMODULES:
        assert shap_instances.__getattr__(name) is _defined(name)
    namespace: dict = {}
    exec(f"from shap_instances import {name}", namespace)
    assert namespace[name] is _defined(name)
    assert name in dir(shap_instances)


#: Every subpackage of shap_instances/ (a folder with an __init__.py), read from the tree, not from _SUBMODULES.
SUBPACKAGES = sorted(path.parent.name for path in (ROOT / "shap_instances").glob("*/__init__.py"))


@pytest.mark.parametrize("name", SUBPACKAGES)
def test_every_subpackage_is_reachable_as_an_attribute(name):
    """``si.valuation`` raised AttributeError (issue 41): each subpackage is ``si.NAME`` and listed in ``__all__``."""
    assert getattr(si, name) is importlib.import_module(f"shap_instances.{name}")
    assert name in si.__all__


def test_unknown_name_is_an_attribute_error():
    with pytest.raises(AttributeError, match="no attribute 'Nope'"):
        shap_instances.__getattr__("Nope")
    with pytest.raises(ImportError):
        exec("from shap_instances import Nope", {})


def test_explainer_dispatch_and_pickling_after_the_lazy_import():
    X, y = load_breast_cancer(return_X_y=True)
    model = GaussianNB().fit(X, y)
    explainer = si.Explainer(model, X[:50])
    assert isinstance(explainer, si.NaiveBayesExplainer) and isinstance(explainer, si.InstanceExplainer)
    values = explainer(X[:3]).values
    again = pickle.loads(pickle.dumps(explainer))
    assert type(again) is si.NaiveBayesExplainer
    np.testing.assert_array_equal(again(X[:3]).values, values)


def test_link_default_is_shaps_identity():
    X, y = make_friedman1(60, n_features=5, random_state=0)
    model = Ridge().fit(X, y)
    assert si.Explainer(model.predict, X[:20], algorithm="permutation").link is shap.links.identity
    assert si.Explainer(model.predict, X[:20], algorithm="permutation", link=shap.links.logit).link \
        is shap.links.logit
    forest = RandomForestRegressor(5, random_state=0).fit(X, y)
    assert isinstance(si.Explainer(forest, X, y=y, link=shap.links.identity), si.GapExplainer)
    with pytest.raises(InvalidParameterError, match="link"):
        si.Explainer(forest, X, y=y, link=shap.links.logit)


def test_gap_out_of_bag_applies_each_tree_once(monkeypatch):
    """Building the index applies every tree to the training data once; the out-of-bag values reuse those leaves."""
    X, y = make_friedman1(200, n_features=5, noise=1.0, random_state=0)
    forest = RandomForestRegressor(30, oob_score=True, random_state=0).fit(X, y)
    calls = []
    original = DecisionTreeRegressor.apply
    monkeypatch.setattr(DecisionTreeRegressor, "apply",
                        lambda self, *a, **k: calls.append(len(a[0]) if a else -1) or original(self, *a, **k))
    explanation = si.GapExplainer(forest, X, y=y).oob_explanation()
    assert calls == [len(X)] * forest.n_estimators
    np.testing.assert_allclose(explanation.base_values + explanation.values.sum(1), forest.oob_prediction_,
                               atol=1e-10)
