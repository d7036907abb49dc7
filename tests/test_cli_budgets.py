"""Issue 39 (budgets and the command line): every numeric option read once, budgets refused up front, standard
errors said in words, outputs too wide refused before the work."""

from __future__ import annotations

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
