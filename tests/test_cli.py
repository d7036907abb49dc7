"""The command line: bad input gives one line and exit code 2, never a traceback."""

import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from shap_instances.cli import main


@pytest.fixture
def csv(tmp_path):
    def write(frame, name="data.csv"):
        path = tmp_path / name
        frame.to_csv(path, index=False)
        return str(path)

    return write


def _frame(n=30, seed=0):
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"a": rng.normal(size=n), "b": rng.normal(size=n), "y": rng.normal(size=n)})


@pytest.mark.parametrize(
    "mutate, target, message",
    [
        (lambda f: f, "missing", "target column 'missing' is not in"),
        (lambda f: f.assign(c=["x"] * len(f)), "y", "non-numeric column(s) c"),
        (lambda f: f.assign(a=[np.nan] + list(f.a[1:])), "y", "missing values in column(s) a"),
    ],
)
def test_bad_data_is_one_line_exit_2(csv, capsys, mutate, target, message, tmp_path):
    path = csv(mutate(_frame()))
    code = main(["explain", "--data", path, "--target", target, "--out", str(tmp_path / "v.csv")])
    err = capsys.readouterr().err
    assert code == 2
    assert message in err and err.count("\n") == 1 and "Traceback" not in err


def test_missing_file(capsys, tmp_path):
    assert main(["report", "--data", str(tmp_path / "nope.csv"), "--target", "y"]) == 2
    assert "no such data file" in capsys.readouterr().err


def test_data_without_target(capsys, csv):
    assert main(["explain", "--data", csv(_frame()), "--out", "x.csv"]) == 2
    assert "--data needs --target" in capsys.readouterr().err


def test_console_script_has_no_traceback(tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "shap_instances.cli", "explain", "--data", str(tmp_path / "x.csv"), "--target", "y",
         "--out", "o.csv"], capture_output=True, text=True,
    )
    assert result.returncode == 2 and "Traceback" not in result.stderr


def test_list_shows_builtins_and_the_plugin(capsys):
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    for name in ("gap", "naive_bayes", "residual", "isotonic", "knn_shapley"):
        assert name in out
    assert "plugin (shap_instances_knn)" in out


def test_explain_writes_values(tmp_path):
    out = tmp_path / "values.csv"
    assert main(["explain", "--model", "forest", "--rows", "4", "--out", str(out)]) == 0
    table = pd.read_csv(out, index_col=0)
    assert table.shape == (4, 1 + 442)  # the base value, then one column per training row


def test_explain_writes_parquet(tmp_path):
    pytest.importorskip("pyarrow", reason="pyarrow is in the parquet extra (installed by scripts/setup.sh)")
    out = tmp_path / "values.parquet"
    assert main(["explain", "--model", "forest", "--rows", "3", "--out", str(out)]) == 0
    assert pd.read_parquet(out).shape == (3, 1 + 442)


def test_explain_checks_the_output_name_before_working(capsys, tmp_path):
    assert main(["explain", "--rows", "2", "--out", str(tmp_path / "values.xlsx")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and ".csv or .parquet" in err
