"""What compiling the numba kernels costs: one signature per kernel, the first call's notice, and (slow) each
family's cold compile in a fresh process with an empty cache, under a bound."""

import importlib.util
import json
import os
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression

from shap_instances.exceptions import BudgetWarning
from shap_instances.games import ResidualGame
from shap_instances.linear import _logistic_kernels
from shap_instances.utils import _numba, announce_compile, is_cached, kernel_array

ROOT = Path(__file__).resolve().parents[1]


def _frozen(array):
    array = np.array(array)
    array.flags.writeable = False
    return array


def test_kernel_array_gives_one_form_and_leaves_the_input_alone():
    frozen = _frozen(np.arange(6.0).reshape(2, 3))
    out = kernel_array(frozen)
    assert out.flags.writeable and out.flags.c_contiguous and out is not frozen
    assert not frozen.flags.writeable
    np.testing.assert_array_equal(out, frozen)
    fortran = np.asfortranarray(np.arange(6.0).reshape(2, 3))
    assert kernel_array(fortran).flags.c_contiguous
    ready = np.arange(4.0)
    assert kernel_array(ready) is ready  # already in the form: no copy
    assert kernel_array([1, 2], np.intp).dtype == np.intp


def _fresh_kernel(folder: Path):
    """A cached njit function in a module of its own under ``folder`` (its cache beside it, nothing compiled)."""
    source = folder / "fresh_kernel_module.py"
    source.write_text("from numba import njit\n\n@njit(cache=True)\ndef twice(x):\n    return 2 * x\n")
    spec = importlib.util.spec_from_file_location("fresh_kernel_module", source)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.twice


def test_is_cached_sees_a_kernel_compiled_here_or_on_disk(tmp_path, monkeypatch):
    monkeypatch.delenv("NUMBA_CACHE_DIR", raising=False)
    kernel = _fresh_kernel(tmp_path)
    assert not is_cached(kernel)
    assert kernel(2.0) == 4.0
    assert is_cached(kernel)  # compiled in this process (and written to the cache)
    assert is_cached(_fresh_kernel(tmp_path))  # a new dispatcher of the same source: its index is on disk
    assert is_cached(len)  # not a numba dispatcher: cannot tell, so nothing is announced


def test_the_notice_comes_once_per_family_and_only_before_a_compilation(tmp_path, monkeypatch):
    monkeypatch.setattr(_numba, "_ANNOUNCED", set())
    kernel = _fresh_kernel(tmp_path)
    with pytest.warns(BudgetWarning, match=r"compiling numba kernels for the demo family .*about 42 s.*warm_up demo"):
        assert announce_compile("demo", [kernel], 42.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert not announce_compile("demo", [kernel], 42.0)  # once per family and process
        kernel(1.0)
        assert not announce_compile("other", [kernel], 1.0)  # compiled: nothing to say


def test_a_logistic_call_says_what_it_pays_before_compiling(monkeypatch):
    """The residual game's logistic path announces the compilation when its kernels are not cached (simulated:
    the kernels of this checkout are cached by the set-up), and says nothing when they are."""
    X = np.random.default_rng(0).normal(size=(10, 2))
    y = (np.arange(10) % 2).astype(float)
    path = ResidualGame(LogisticRegression(), X, y, X[:3], y[:3]).fast_path
    monkeypatch.setattr(_numba, "_ANNOUNCED", set())
    monkeypatch.setattr(_numba, "is_cached", lambda kernel: False)
    with pytest.warns(BudgetWarning, match="logistic family.*time budget"):
        path.prefix_residuals(np.arange(10))
    monkeypatch.setattr(_numba, "_ANNOUNCED", set())
    monkeypatch.undo()
    with warnings.catch_warnings():
        warnings.simplefilter("error", BudgetWarning)
        path.prefix_residuals(np.arange(10))


def test_read_only_inputs_do_not_give_the_logistic_kernels_a_second_signature():
    """Frozen training and explained rows reach the kernels in the same form as writable ones (one signature,
    so no second compilation of the walk and everything it calls)."""
    X = np.random.default_rng(1).normal(size=(12, 2))
    y = (np.arange(12) % 2).astype(float)
    for frozen in (False, True):
        data = [_frozen(a) if frozen else a for a in (X, y, X[:4], y[:4])]
        game = ResidualGame(LogisticRegression(), *data)
        game.fast_path.prefix_residuals(_frozen(np.arange(12)) if frozen else np.arange(12))
        game.fast_path.residuals(np.ones(12, bool))
    assert len(_logistic_kernels.logistic_walk.signatures) == 1
    assert len(_logistic_kernels.logistic_fit.signatures) == 1


#: Cold compile seconds each family may take in a fresh process on this project's 2-core machines, with room for a
#: busy one (measured: benchmarks/bench_compile.py; docs/install.md has the table).
BOUND_S = {"logistic": 600.0, "refits": 150.0, "forest": 90.0, "boosting": 200.0, "isotonic": 120.0, "lowrank": 30.0}
#: Package kernels that the warm-up compiles for more than one signature, on purpose (every other gets one).
SIGNATURES = {"shap_instances.boosting._kernels._exact_top_k": 2,  # with and without the dense row (None)
              "shap_instances.boosting._kernels._scatter_adding": 2,
              "shap_instances.forest._forest_kernels._walk": 2,
              # the binary and the multinomial Hessians' weights: two layouts (one matrix product, about 1 s)
              "shap_instances.linear._logistic_kernels._weighted_gram": 2}


def excess_signatures(signatures: dict[str, int]) -> dict[str, int]:
    """The kernels compiled for more signatures than :data:`SIGNATURES` allows (1 unless listed)."""
    return {name: count for name, count in signatures.items() if count > SIGNATURES.get(name, 1)}


def test_excess_signatures_names_a_kernel_compiled_twice_by_accident():
    assert excess_signatures({"a.b": 1, "shap_instances.forest._forest_kernels._walk": 2}) == {}
    assert excess_signatures({"a.b": 2, "shap_instances.forest._forest_kernels._walk": 3}) == {
        "a.b": 2, "shap_instances.forest._forest_kernels._walk": 3}


@pytest.mark.slow
@pytest.mark.parametrize("family", sorted(BOUND_S))
def test_a_family_compiles_cold_within_its_bound_and_one_signature_per_kernel(family, tmp_path):
    """A fresh process with an empty ``NUMBA_CACHE_DIR`` runs the family's warm-up (benchmarks/bench_compile.py's
    child): every kernel compiles once, within the family's bound (logistic: 4 to 8 minutes at load 6 to 10 on
    2 cores)."""
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path), "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "bench_compile.py"), "--child", family],
                          env=env, capture_output=True, text=True, timeout=2 * BOUND_S[family], cwd=ROOT)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    signatures: dict[str, int] = {}
    for record in result["records"]:
        if record["kernel"].startswith("shap_instances."):
            signatures[record["kernel"]] = signatures.get(record["kernel"], 0) + 1
    assert signatures, "nothing compiled: was the cache really empty?"
    assert excess_signatures(signatures) == {}
    assert result["cold"] < BOUND_S[family], f"{family}: {result['cold']:.0f} s cold"
