"""Issue 26's fault fuzzing (tests/fuzz_faults.py): damaged saves and checkpoints, column layouts and targets that
are not the model's, over every registered explainer. No case may end silently wrong, in data loss, code
execution, an obscure crash, a hang or a memory failure. The default run is a sample; ``-m slow`` runs the full
count behind docs/reliability.md's table (at least 800 cases)."""

from __future__ import annotations

import numpy as np
import pytest

import shap_instances as si

from .fuzz_faults import FAILURES, checkpoint_cases, run_all, save_load_cases, table


def _failures(outcomes):
    return [(case, outcome) for case, outcome in outcomes if outcome in FAILURES]


def test_a_sample_of_damaged_saves_and_checkpoints_ends_in_right_answers_or_clear_errors(tmp_path):
    rng = np.random.default_rng(26)
    outcomes = [*save_load_cases(si.NaiveBayesExplainer, 8, rng, tmp_path), *checkpoint_cases(4, rng, tmp_path)]
    assert len(outcomes) == 17 and not _failures(outcomes)
    assert {outcome for _, outcome in outcomes} <= {"right answer", "clear error"}


def test_a_sample_of_command_lines_ends_in_right_answers_or_clear_errors(tmp_path):
    """Bad data files through ``explain`` (two explainers), and ``--out`` as links, folders and files: the inputs
    and the user's files unchanged after each (tests/fuzz_faults_cli.py; the full set is in the slow run)."""
    from . import fuzz_faults_cli as cli

    files = cli.data_files(tmp_path, np.random.default_rng(26))
    sample = {name: files[name] for name in ("regression", "duplicated columns", "NaN feature", "string target",
                                             "empty file", "huge feature")}
    original = cli.EXPLAINERS
    try:
        cli.EXPLAINERS = ("representer", "naive_bayes")
        outcomes = [*cli.data_cases(tmp_path, sample, report=False), *cli.output_cases(tmp_path, files, ("explain",))]
    finally:
        cli.EXPLAINERS = original
    assert len(outcomes) == 32 and not _failures(outcomes), _failures(outcomes)
    assert {outcome for _, outcome in outcomes} == {"right answer", "clear error"}


def test_the_command_line_classifier_catches_data_loss_and_a_file_it_should_have_refused(tmp_path, monkeypatch):
    import shap_instances.cli

    from .fuzz_faults_cli import run_command

    mine = tmp_path / "mine.txt"
    mine.write_text("kept")
    assert run_command(["list"], kept=[mine], check=lambda: True, must_refuse=False) == "right answer"
    assert run_command(["list"], kept=[mine], check=lambda: True, must_refuse=True) == "silently wrong"
    assert run_command(["list"], kept=[mine], check=lambda: False, must_refuse=False) == "silently wrong"
    assert run_command(["explain", "--out", str(mine)], kept=[mine], check=lambda: True,
                       must_refuse=False) == "clear error"
    monkeypatch.setattr(shap_instances.cli, "_cmd_list", lambda args: mine.write_text("gone") and 0)
    assert run_command(["list"], kept=[mine], check=lambda: True, must_refuse=False) == "data loss"


def test_the_classifier_catches_a_silently_wrong_answer():
    """The oracle itself can fail: values other than the reference, without a warning, are silently wrong."""
    from .fuzz_faults import classify

    assert classify(lambda: np.ones(3), np.zeros(3)) == "silently wrong"
    assert classify(lambda: np.zeros(3), np.zeros(3)) == "right answer"
    assert classify(lambda: 1 / 0, None) == "obscure crash"


@pytest.mark.slow
def test_the_full_fault_fuzz_run_has_no_failures():
    counts = run_all(cases_per_explainer=90, checkpoint_cases_n=80)
    cases = sum(n for (category, _), n in counts.items() if category != "failure")
    failures = [what for (category, what) in counts if category == "failure"]
    print(table(counts))
    assert cases >= 800 and not failures, failures
