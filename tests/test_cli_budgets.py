"""Issue 39 (budgets and the command line): every numeric option read once, budgets refused up front, standard
errors said in words, outputs too wide refused before the work."""

from __future__ import annotations

import numpy as np
import pytest

from shap_instances.cli import main


@pytest.mark.parametrize("command", ["explain", "report"])
@pytest.mark.parametrize("option, value", [
    ("--time-budget", "1e308"),   # before: "internal error: OverflowError"
    ("--time-budget", "-inf"),    # before: "expected one argument"
    ("--time-budget", "1e-300"),  # before: accepted and printed as "1 s"
    ("--time-budget", "nan"),
    ("--time-budget", "inf"),
    ("--time-budget", "0.5"),
    ("--time-budget", "3e6"),     # above 30 days
    ("--time-budget", "sixty"),
    ("--max-memory", "0"),
    ("--max-memory", "-1e-9"),
    ("--max-evals", "2.5"),
    ("--max-evals", "-inf"),
])
def test_numeric_options_are_refused_in_one_line_naming_the_range(capsys, tmp_path, command, option, value):
    out = tmp_path / ("v.csv" if command == "explain" else "r")
    assert main([command, "--out", str(out), option, value]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("shap-instances: error: argument " + option)
    assert f"got {value!r}" in err and "internal error" not in err and not out.exists()
    if option == "--time-budget":
        assert "seconds, from 1 s to 30 days" in err


@pytest.mark.parametrize("option, value", [("--rows", "0"), ("--rows", "2.5"), ("--top-k", "-inf"),
                                           ("--block-size", "1e400")])
def test_explain_counts_are_whole_numbers_in_range(capsys, tmp_path, option, value):
    assert main(["explain", "--out", str(tmp_path / "v.csv"), option, value]) == 2
    err = capsys.readouterr().err
    assert f"argument {option}: the value must be an int in [1, " in err and f"got {value!r}" in err


def test_usage_errors_are_one_line(capsys, tmp_path):
    assert main(["explain", "--out", str(tmp_path / "v.csv"), "--no-such-option"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "unrecognized arguments: --no-such-option" in err and "--help" in err


@pytest.mark.parametrize("error", [np.inf, np.nan])
def test_standard_errors_that_cannot_be_estimated_are_said_in_words(error):
    from shap_instances._explanation import build_explanation
    from shap_instances.cli import _precision_note

    values = np.array([[3.0, -4.0], [0.0, 0.0]])  # RMS 2.5
    none = build_explanation(values, 0.0, feature_names=["a", "b"], standard_errors=np.full((2, 2), error))
    note = _precision_note(none)
    assert "inf" not in note and "nan" not in note
    assert "standard errors not estimated (one permutation per row" in note and "--time-budget" in note
    some = build_explanation(values, 0.0, feature_names=["a", "b"],
                             standard_errors=np.array([[0.5, 0.5], [error, 0.5]]))
    note = _precision_note(some)
    assert "RMS standard error 0.5 against an RMS value of 2.5" in note and "1 of 4 values have no standard" in note
    assert "inf" not in note and "nan" not in note


def test_explain_instance_kernel_never_prints_inf(capsys, tmp_path):
    """Before: the last line said "RMS standard error inf" for one permutation per row."""
    out = tmp_path / "v.csv"
    assert main(["explain", "--explainer", "instance_kernel", "--model", "ridge", "--rows", "2", "--max-evals",
                 "886", "--out", str(out)]) == 0  # one antithetic pair: one permutation per row
    line = capsys.readouterr().out
    assert "inf" not in line.replace("InstanceKernel", "") and "nan" not in line and "standard error" in line
