"""The set-up's warm-up (``python -m shap_instances.testing._warm_up``) compiles every numba kernel."""

import importlib
import pkgutil

import pytest
from numba.core.registry import CPUDispatcher

import shap_instances
from shap_instances.exceptions import InvalidParameterError
from shap_instances.testing._warm_up import FAMILIES, warm_up

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
    assert "shap_instances.games._logistic_kernels.logistic_prefix_values" in kernels
    assert len({name.rsplit(".", 1)[0] for name in kernels}) >= 8  # games, forest, boosting, isotonic, lowrank


def test_an_unknown_family_is_refused():
    with pytest.raises(InvalidParameterError, match="no-such-family"):
        warm_up(["no-such-family"], verbose=False)


@pytest.mark.slow
def test_the_warm_up_reaches_every_kernel():
    """After the warm-up each kernel has a compiled (or cached) signature; a kernel it misses would compile in
    the first test run, or a user's first call, instead of at set-up. About a minute and a half when nothing
    is cached yet."""
    seconds = warm_up(verbose=False)
    assert set(seconds) == set(FAMILIES)
    missed = sorted(name for name, kernel in _kernels().items() if not kernel.signatures and name not in TEST_ONLY)
    assert not missed, f"the warm-up does not reach {missed}: add a case to shap_instances/testing/_warm_up.py"
