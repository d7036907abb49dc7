"""The set-up's warm-up (``python -m shap_instances.testing._warm_up``) compiles every numba kernel."""

import ast
import importlib
import os
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest
from numba.core.registry import CPUDispatcher

import shap_instances
from shap_instances.exceptions import InvalidParameterError
from shap_instances.testing._warm_up import warm_up

ROOT = Path(__file__).resolve().parents[1]

#: Kernels that only the tests call (no module of the package does): the warm-up leaves them out.
TEST_ONLY = {"shap_instances.boosting._kernels.reach_sets", "shap_instances.isotonic._kernels.weighted_pava"}


def _kernels():
    """Every numba kernel of the package: name -> dispatcher (the modules that define them, imported)."""
    found = {}
    for info in pkgutil.walk_packages(shap_instances.__path__, "shap_instances."):
        if "kernels" not in info.name:
            continue
        module = importlib.import_module(info.name)
        for name, value in vars(module).items():
            if isinstance(value, CPUDispatcher) and value.py_func.__module__ == info.name:
                found[f"{info.name}.{name}"] = value
    return found


def test_the_kernels_are_found():
    kernels = _kernels()
    assert "shap_instances.linear._logistic_kernels.logistic_walk" in kernels
    assert len({name.rsplit(".", 1)[0] for name in kernels}) >= 8  # games, forest, boosting, isotonic, lowrank


def test_inlined_helpers_are_told_apart():
    kernels = _kernels()
    assert _inlined(kernels["shap_instances.linear._logistic_kernels._sigmoid"])
    assert not _inlined(kernels["shap_instances.linear._logistic_kernels.logistic_walk"])


def test_an_unknown_family_is_refused():
    with pytest.raises(InvalidParameterError, match="no-such-family"):
        warm_up(["no-such-family"], verbose=False)


def _inlined(kernel):
    """Whether ``kernel`` is a helper compiled with ``INLINED`` (``inline="always"``): numba copies its IR into
    each caller, so it never gets a signature of its own, however often its callers run."""
    return kernel.targetoptions.get("inline") == "always"


def _missed_after_warm_up(families=None):
    """The kernels (less ``TEST_ONLY`` and the inlined helpers) that have no signature after
    ``warm_up(families)`` in this process."""
    warm_up(families, verbose=False)
    return sorted(name for name, kernel in _kernels().items()
                  if not kernel.signatures and name not in TEST_ONLY and not _inlined(kernel))


def _in_a_fresh_process(families, cache_dir):
    """``_missed_after_warm_up(families)`` in a new interpreter with an empty numba cache (``cache_dir``): every
    kernel compiles there, callees included (a caller loaded from a cache leaves its callees uncompiled)."""
    code = f"import tests.test_warm_up as t; print(t._missed_after_warm_up({families!r}))"
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache_dir)}
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True,
                            timeout=1200)
    assert result.returncode == 0, result.stderr[-3000:]
    return ast.literal_eval(result.stdout.strip().splitlines()[-1])


@pytest.mark.slow
def test_the_warm_up_reaches_every_kernel(tmp_path):
    """After the warm-up each kernel has a compiled signature; a kernel it misses would compile in the first
    test run, or a user's first call, instead of at set-up. Compiles everything in a fresh process with an empty
    cache: 220 s on an otherwise idle core."""
    assert _in_a_fresh_process(None, tmp_path) == []


@pytest.mark.slow
def test_a_family_left_out_is_reported(tmp_path):
    missed = _in_a_fresh_process(["lowrank"], tmp_path)
    assert "shap_instances.isotonic._kernels.coalition_sums" in missed
    assert not any(name.startswith("shap_instances.lowrank.") for name in missed)
