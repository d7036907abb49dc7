"""``benchmarks/run_all.py reproductions``: the registry of the scripts behind docs/reproductions.md."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]


def _module(name):
    spec = importlib.util.spec_from_file_location(name, ROOT / "benchmarks" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    return module


def test_every_reproduction_names_a_script_that_accepts_its_arguments():
    registry = _module("_reproductions").REPRODUCTIONS
    assert len(registry) >= 15
    for name, entry in registry.items():
        source = (ROOT / entry.script).read_text()
        for flag in [a for a in entry.full + (entry.quick or ()) if a.startswith("--")]:
            assert flag.removeprefix("--") in source, (name, flag)


def test_list_prints_every_command_and_quick_skips_scripts_without_a_small_mode(capsys):
    run_all = _module("run_all")
    assert run_all.main(["reproductions", "--quick", "--list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    registry = _module("_reproductions").REPRODUCTIONS
    assert [line.split(":")[0] for line in lines] == list(registry)
    for line, entry in zip(lines, registry.values()):
        assert ("skipped in --quick" in line) == (entry.quick is None)
    with pytest.raises(SystemExit, match="no reproduction named"):
        run_all.main(["reproductions", "--list", "no_such_reproduction"])


def test_every_figure_script_exists_with_its_page_and_accepts_its_arguments():
    registry = _module("_figures").FIGURES
    for name, entry in registry.items():
        assert (ROOT / entry.page).is_file(), (name, entry.page)
        source = (ROOT / entry.script).read_text()
        for flag in [a for a in entry.full + (entry.quick or ()) if a.startswith("--")]:
            assert flag.removeprefix("--") in source, (name, flag)
        assert "record(" in source, f"{name}: {entry.script} records no number for its page"
        assert f"fig-{name}:" in (ROOT / entry.page).read_text(), f"{name}: {entry.page} quotes none of its numbers"


def test_every_figure_names_the_project_files_its_script_imports():
    """A result file is stale when a file it was made from changed: the script and what it imports of the
    project (other scripts, the tests' games), which ``uses`` lists."""
    for name, entry in _module("_figures").FIGURES.items():
        imported = re.findall(r"^\s*(?:from tests import ([\w, ]+)|from (?:tests\.)?(\w+) import|import (\w+))",
                              (ROOT / entry.script).read_text(), re.M)  # also inside functions
        modules = {part.split()[0] for groups in imported for part in "".join(groups).split(",") if part.strip()}
        local = {f"{folder}/{module}.py" for module in modules if module != "_common"
                 for folder in ("benchmarks", "docs/scripts", "tests") if (ROOT / folder / f"{module}.py").is_file()}
        assert local <= set(entry.uses), f"{name}: {entry.script} imports {sorted(local - set(entry.uses))}"


def test_figures_mode_refuses_an_unknown_name():
    with pytest.raises(SystemExit, match="no figure named"):
        _module("run_all").main(["figures", "--list", "no_such_figure"])


def test_docs_cite_every_registered_reproduction_and_only_those():
    registry = _module("_reproductions").REPRODUCTIONS
    text = (ROOT / "docs" / "reproductions.md").read_text()
    named = set(re.findall(r"run_all\.py reproductions ([a-z0-9_]+)", text))
    assert named <= set(registry), named - set(registry)
    rows = [line for line in text.splitlines() if line.startswith("| ")]
    cited = {token for row in rows for token in re.findall(r"`([a-z0-9]+(?:_[a-z0-9]+)+)`", row.split(" | ")[-1])}
    assert set(registry) <= cited, f"reproductions with no row: {set(registry) - cited}"
    assert cited <= set(registry), f"rows naming no registered reproduction: {cited - set(registry)}"


def test_every_claim_in_a_result_file_is_the_registrys_and_has_a_recorded_value():
    """A result file computes its verdicts from the claims it carries: they must be the registry's (a claim edited
    after the run needs a rerun) and each must have its values (a misspelt key would read as "not run")."""
    import json

    registry = _module("_reproductions").REPRODUCTIONS
    for name, entry in registry.items():
        path = ROOT / "benchmarks" / "results" / f"repro-{name}.json"
        if not entry.claims or not path.is_file():
            continue
        result = json.loads(path.read_text())
        assert result["claims"] == entry.claims_record(), f"{path.name}: its claims are not the registry's: rerun"
        missing = [claim["key"] for claim in result["claims"] if claim["key"] not in result["values"]]
        assert not missing, f"{path.name} records no value for {missing}"


@pytest.mark.slow
def test_quick_run_writes_a_section_per_reproduction(tmp_path):
    out = tmp_path / "reproductions.md"
    names = ["isotonic_claims", "naive_bayes_protocol", "residual_removal"]
    done = subprocess.run([sys.executable, "benchmarks/run_all.py", "reproductions", "--quick", "--out", str(out),
                           *names], cwd=ROOT, capture_output=True, text=True, env={"PYTHONPATH": str(ROOT),
                                                                                   "MPLBACKEND": "Agg",
                                                                                   "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    text = out.read_text()
    assert text.count("\n## ") == 3
    assert "exit 0" in text and "Not run in --quick" in text
    assert "largest relative rise" in text



@pytest.mark.slow  # imports the package and loads SISR's compiled kernels (seconds under load)
def test_a_logged_sisr_draw_is_reused_only_when_made_by_the_same_code(tmp_path, monkeypatch):
    """``sisr_recovery.py --log`` resumes a stopped run, but a draw logged by other code is refitted."""
    recovery = _module("sisr_recovery")
    log = tmp_path / "draws.jsonl"
    arguments = (6, 0.05, 2, "oracle", "package", "clipped", "effective", log)
    first = recovery.cell(*arguments)
    assert len(log.read_text().splitlines()) == 2
    assert recovery.cell(*arguments) == first  # read back, not refitted
    assert len(log.read_text().splitlines()) == 2
    monkeypatch.setattr(recovery, "code_hash", lambda: "other code")
    again = recovery.cell(*arguments)
    assert len(log.read_text().splitlines()) == 4  # refitted and logged under the other code
    assert [d["affinity"] for d in again] == [d["affinity"] for d in first]  # the same seeds

def test_tracin_closed_form_matches_central_differences_and_fails_when_its_sign_is_flipped():
    tracin = _module("repro_representer_tracin")
    rng = np.random.default_rng(0)
    pairs = np.argwhere(rng.random((12, 9)) < 0.5)
    r = rng.normal(size=len(pairs))
    checkpoints = tracin.sgd_checkpoints(pairs[:, 0], pairs[:, 1], r, (12, 9), 3, 0.1, 2, 8, 0.5, 0)
    gap, size = tracin.check_one_checkpoint(checkpoints[-1], pairs[:, 0], pairs[:, 1], r, pairs[3], 0.5)
    assert size > 1e-3 and gap < 1e-6 * size
    scores = tracin.tracin_scores(checkpoints, pairs[:, 0], pairs[:, 1], r, pairs[:1], 0.5)[0]
    shares = (pairs[:, 0] == pairs[0, 0]) | (pairs[:, 1] == pairs[0, 1])
    assert np.all(scores[~shares] == 0) and np.any(scores[shares] != 0)


def test_aggregated_importance_equals_the_package_representer_summed_over_positives():
    fn = _module("repro_representer_false_negatives")
    rng = np.random.default_rng(1)
    P = rng.random((15, 11)) < 0.3
    U, V = fn.train(P, ~P, rank=3, alpha=1.0, iterations=20, seed=0)
    gap, size = fn.check_against_package(U, V, P, ~P, rng, n_positives=int(P.sum()))
    assert size > 1e-4 and gap < 1e-10


def _recorded(monkeypatch, tmp_path, function, *args):
    """What ``function(*args)`` hands to the result file (``_common.record`` under ``run_all.py``)."""
    target = tmp_path / "values.json"
    monkeypatch.setenv("SHAP_INSTANCES_RESULT_VALUES", str(target))
    function(*args)
    import json

    return json.loads(target.read_text())


def test_highdim_orderings_are_the_paper_table_1_directions_and_name_every_claim(monkeypatch, tmp_path):
    highdim = _module("bench_representer_highdim")
    claims = _module("_reproductions").HIGHDIM_CLAIMS
    rows = {"High-dim Rep.": ([-3.0, -2.0], [4.0, 5.0], 0.002), "l2 Rep.": ([-1.0, -1.0], [5.0, 6.0], 0.001),
            "IF (project: leave-one-out, intercept)": ([-4.0, -4.0], [1.0, 1.0], 0.004),
            "IF (paper: no intercept, + lambda sign)": ([0.0, 0.0], [0.0, 0.0], 0.001),
            "Random": ([0.1, 0.1], [0.0, 0.0], float("nan"))}
    measured = {name: rows for name in highdim.HIGH_DIMENSIONAL}
    values = _recorded(monkeypatch, tmp_path, highdim.record_orderings, measured)
    assert {claim.key for claim in claims} <= set(values)
    for data in ("tweets", "fine_foods"):
        # the representer's AUC-DEL+ -2.5: below the l2 representer's -1 (lower is better), above the IF's -4
        assert values[f"table1.l2.plus.{data}"] == [True] and values[f"table1.l2.minus.{data}"] == [False]
        assert values[f"table1.if.plus.{data}"] == [False] and values[f"table1.if.minus.{data}"] == [True]
        assert values[f"runtime.if.{data}"] == [True] and values[f"runtime.if_paper.{data}"] == [False]
        assert values[f"speedup.if.{data}"] == 2.0


def test_table2_and_two_tower_orderings_follow_lower_plus_higher_minus(monkeypatch, tmp_path):
    registry = _module("_reproductions")
    table2 = _module("bench_representer_table2")
    means = {(table2.MF, "High-dim Rep."): (-0.2, 0.1), (table2.MF, "FIA"): (-0.3, 0.05),
             (table2.MF, "Random"): (0.0, 0.0), (table2.SOFT, "High-dim Rep."): (-0.1, 0.2),
             (table2.SOFT, "Random"): (0.01, -0.01)}
    values = _recorded(monkeypatch, tmp_path, table2.record_orderings, means)
    assert {claim.key for claim in registry.TABLE2_CLAIMS} <= set(values)
    assert values["table2.mf.fia.plus"] == [False] and values["table2.mf.fia.minus"] == [True]
    assert values["table2.soft.random.plus"] == [True] and values["table2.soft.random.minus"] == [True]

    tower = _module("repro_representer_two_tower")
    rows = {"High-dim Rep.": {"seed_means_plus": [-0.2, -0.4], "seed_means_minus": [0.3, 0.1]},
            "FIA": {"seed_means_plus": [-0.3, -0.1], "seed_means_minus": [0.2, 0.2]},
            "Random": {"seed_means_plus": [0.0, 0.0], "seed_means_minus": [0.0, 0.0]}}
    values = _recorded(monkeypatch, tmp_path, tower.record_orderings, rows)
    assert {claim.key for claim in registry.TWO_TOWER_CLAIMS} <= set(values)
    assert values["two_tower.fia.plus"] == [False, True] and values["two_tower.fia.minus"] == [True, False]


def test_tracin_orderings_are_table_8s_and_both_methods_against_random(monkeypatch, tmp_path):
    registry = _module("_reproductions")
    tracin = _module("repro_representer_tracin")
    runs = {"High-dim Rep.": [(np.array([-0.2]), np.array([0.2])), (np.array([-0.1]), np.array([0.1]))],
            "TracInCP": [(np.array([-0.3]), np.array([0.1])), (np.array([0.05]), np.array([0.3]))],
            "Random": [(np.array([0.0]), np.array([0.0])), (np.array([0.0]), np.array([0.0]))]}
    values = _recorded(monkeypatch, tmp_path, tracin.record_orderings, runs, [2e-9, 4e-9])
    assert {claim.key for claim in registry.TRACIN_CLAIMS} <= set(values)
    assert values["table8.tracin_ahead.plus"] == [True, False]
    assert values["table8.tracin_ahead.minus"] == [False, True]
    # seed 1: TracInCP's AUC-DEL+ (+0.05) lies above random's: not both below random
    assert values["table8.random.plus"] == [True, False] and values["table8.random.minus"] == [True, True]
    assert values["finite_difference_gap_range"] == "2.0e-09 to 4.0e-09"
