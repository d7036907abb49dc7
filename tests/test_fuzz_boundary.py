"""Issue 39's boundary fuzzing (tests/fuzz_boundary.py): hostile files, CSV cells, output folders, valuation, the
command line's numbers, budgets and shap's idioms. The slow run is the acceptance check of issue 39: no case of
any surface may end silently wrong, in data loss, code execution, an obscure crash, a hang, a memory failure or
over budget. The default run checks the harness's own oracles (each must catch what it is for) and samples the
surfaces listed in :data:`tests.fuzz_boundary.PASSING_ON_MAIN`."""

from __future__ import annotations

import io
import itertools
import json
import os
import signal
import zipfile

import numpy as np
import pytest

from .fuzz_boundary import (
    FAILURES,
    PASSING_ON_MAIN,
    SURFACES,
    failures,
    isolated,
    run_all,
    surface_cases,
    table,
    unsafe_cells,
)


def test_unsafe_cells_finds_text_a_spreadsheet_evaluates_and_leaves_numbers(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text('name,value\n"=cmd|\' /C calc\'!A0",-1.5\n@SUM(A1),+2\n"\t=1",-x\n\'=quoted,1e-300\n')
    assert unsafe_cells(path) == ["=cmd|' /C calc'!A0", "@SUM(A1)", "\t=1", "-x"]


@pytest.mark.slow  # about 2 s: forked children
def test_a_forked_case_reports_its_outcome_its_crash_and_a_signal_that_killed_it():
    from . import fuzz_faults

    assert isolated(lambda: "clear error", 30) == "clear error"
    assert isolated(lambda: os.kill(os.getpid(), signal.SIGSEGV), 30) == "killed by SIGSEGV"
    before = len(fuzz_faults.CRASHES)
    assert isolated(lambda: 1 / 0, 30) == "obscure crash"
    assert fuzz_faults.CRASHES[before:] == ["ZeroDivisionError: division by zero"]
    assert isolated(lambda: os.kill(os.getpid(), signal.SIGSTOP), 2) == "hang"


def test_the_planted_data_source_is_live_so_a_file_that_loads_it_is_caught(tmp_path):
    """The hostile file works: skops itself, trusting it, builds the DataSource, whose finaliser deletes the
    victim folder (so the persistence surface's "code execution" is observed, not assumed)."""
    import skops.io as sio

    from .fuzz_boundary_files import _hostile_classes, _object_node, _saved, _victim, plant

    victim = _victim(tmp_path)
    module, name, attributes = _hostile_classes(victim)["DataSource"]
    data = plant(_saved("regressor", "an extra attribute", False, "load_model"),
                 _object_node(module, name, attributes))
    assert json.dumps("numpy.lib._datasource") in zipfile.ZipFile(io.BytesIO(data)).read("schema.json").decode()

    def load_trusting() -> str:
        sio.loads(data, trusted=sio.get_untrusted_types(data=data))
        return "loaded"

    assert victim.exists()
    assert isolated(load_trusting, 60) == "loaded"
    assert not victim.exists()


def test_the_valuation_judge_calls_nan_silently_wrong_and_extra_evaluations_over_budget():
    from types import SimpleNamespace

    from .fuzz_boundary_valuation import judge

    def result(values, spent=0):
        return lambda: SimpleNamespace(values=np.asarray(values, dtype=float), n_evaluations=spent)

    assert judge(result([1.0, 2.0]), np.array([1.0, 2.0]), "answer") == "right answer"
    assert judge(result([1.0, 2.5]), np.array([1.0, 2.0]), "answer") == "silently wrong"
    assert judge(result([np.nan, 2.0]), None, "finite") == "silently wrong"
    assert judge(result([1.0, 2.0]), None, "refuse") == "silently wrong"
    assert judge(result([1.0], spent=31), None, "finite", budget=1) == "over budget"
    assert judge(result([1.0], spent=1), None, "finite", budget=1) == "right answer"


def test_the_table_counts_each_surface_and_lists_failures():
    from collections import Counter

    counts = Counter({("csv", "right answer"): 2, ("csv", "code execution"): 1,
                      ("failure", "csv: explain '=1+1': code execution"): 1})
    assert "| csv | 2 | 0 | 0 | 0 | 0 | 1 |" in table(counts)
    assert failures(counts) == ["csv: explain '=1+1': code execution"]
    assert set(PASSING_ON_MAIN) <= set(SURFACES) and "over budget" in FAILURES


def test_a_sample_of_damaged_model_files_ends_in_right_answers_or_clear_errors(tmp_path):
    """Damaged copies of a saved pipeline (truncated, flipped, zeroed, a damaged zip directory, crafted pickles)
    through ``load_model``: already clean on main, so sampled in the default run."""
    from .fuzz_boundary_files import _damaged_model_cases

    outcomes = list(_damaged_model_cases(tmp_path, np.random.default_rng(39), n=8))
    assert len(outcomes) == 12
    assert {outcome for _, outcome in outcomes} <= {"right answer", "clear error"}, outcomes


#: Surfaces whose sample takes seconds (forked loads, commands run whole): sampled in the slow step only.
_SLOW_SAMPLES = ("persistence", "csv")


@pytest.mark.parametrize("surface", [pytest.param(s, marks=pytest.mark.slow) if s in _SLOW_SAMPLES else s
                                     for s in PASSING_ON_MAIN])
def test_a_sample_of_each_passing_surface_has_no_failures(surface, tmp_path):
    sample = list(itertools.islice(surface_cases(surface, tmp_path, np.random.default_rng(39)), 12))
    assert sample and not [case for case in sample if case[1] in FAILURES], sample


@pytest.mark.slow
@pytest.mark.parametrize("surface", tuple(SURFACES))
def test_the_full_boundary_fuzz_of_each_surface_has_no_failures(surface):
    counts = run_all((surface,))
    print(table(counts))
    assert sum(n for (category, _), n in counts.items() if category == surface) >= 20
    assert not failures(counts), "\n".join(failures(counts))
