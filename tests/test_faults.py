"""Regression tests of issue 26's faults (docs/reliability.md): each names the input, what it did before, and
what it does now. Checkpoints are tested in tests/test_checkpoint.py, the KNN plugin with the plugin."""

from __future__ import annotations

import os

import numpy as np
import pandas as pd
import pytest
from sklearn.ensemble import RandomForestRegressor
from sklearn.linear_model import Ridge
from sklearn.naive_bayes import GaussianNB

from shap_instances import GapExplainer, IsotonicShapleyExplainer, NaiveBayesExplainer, RepresenterExplainer
from shap_instances.cli import main
from shap_instances.exceptions import DataValidationError, NotFittedError, UnsupportedModelError


@pytest.fixture(scope="module")
def table():
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(60, 3)) * [1.0, 10.0, 100.0], columns=["a", "b", "c"])
    return X, X.sum(axis=1)


# ---------------------------------------------------------------------------------------------- columns by name
def test_naive_bayes_fitted_on_an_array_matches_a_dataframe_masker_by_name(table):
    """Before: a later DataFrame with reordered columns was matched by position (values off by ~480)."""
    X, y = table
    model = GaussianNB().fit(X.to_numpy(), y > y.median())
    explainer = NaiveBayesExplainer(model, X)
    reordered = explainer(X.iloc[:4][["c", "a", "b"]])
    np.testing.assert_allclose(reordered.values, explainer(X.iloc[:4]).values, rtol=0, atol=1e-12)
    log_proba = model.predict_log_proba(X.iloc[:4].to_numpy())
    np.testing.assert_allclose(reordered.base_values + reordered.values.sum(axis=1),
                               log_proba[:, 1] - log_proba[:, 0], atol=1e-9)  # two classes: the log-odds
    with pytest.raises(DataValidationError, match=r"missing \['c'\]"):
        explainer(X.iloc[:4][["a", "b"]].assign(d=1.0))


def test_gap_forest_fitted_on_an_array_matches_a_dataframe_masker_by_name(table):
    """Before: GAP reconstructed 105.9 against a prediction of 75.7 for reordered columns."""
    X, y = table
    forest = RandomForestRegressor(10, random_state=0).fit(X.to_numpy(), y)
    explainer = GapExplainer(forest, X, y=y)
    reordered = explainer(X.iloc[:4][["c", "a", "b"]])
    np.testing.assert_allclose(reordered.base_values + reordered.values.sum(axis=1),
                               forest.predict(X.iloc[:4].to_numpy()), rtol=1e-9)
    assert explainer.columns_ == ["a", "b", "c"]


@pytest.mark.parametrize("make", [
    lambda X, y: RepresenterExplainer(Ridge().fit(X.to_numpy(), y), X, y=y),
    lambda X, y: GapExplainer(RandomForestRegressor(3, random_state=0).fit(X.to_numpy(), y), X, y=y),
    lambda X, y: NaiveBayesExplainer(GaussianNB().fit(X.to_numpy(), y > 0), X),
])
def test_repeated_column_names_are_refused_naming_them(table, make):
    """Before: 'missing [], unexpected []' (names compared as sets), or scikit-learn's own message."""
    X, y = table
    with pytest.raises(DataValidationError, match=r"repeated column names \['a'\]"):
        make(X.set_axis(["a", "a", "b"], axis=1), y)
    explainer = make(X, y)
    with pytest.raises(DataValidationError, match=r"X has repeated column names \['b'\]"):
        explainer(X.iloc[:2].set_axis(["a", "b", "b"], axis=1))


# ---------------------------------------------------------------------------------------------- isotonic
def test_isotonic_refuses_an_unfitted_model_at_construction(table):
    """Before: built, then failed inside scikit-learn at the first call."""
    X, _ = table
    for model in (Ridge(), Ridge().predict):
        with pytest.raises(NotFittedError, match="Ridge is not fitted"):
            IsotonicShapleyExplainer(model, X, sparsity=2)


def test_isotonic_refuses_a_model_returning_labels(table):
    """Before: a numba TypingError deep in the kernels (``explain --explainer isotonic`` on string targets)."""
    X, y = table
    labels = np.where(y > 0, "yes", "no")
    explainer = IsotonicShapleyExplainer(lambda rows: labels[: len(rows)], X, sparsity=2, silent=True)
    with pytest.raises(UnsupportedModelError, match=r"numeric model output.*predict_proba"):
        explainer(X.iloc[:1])


# ---------------------------------------------------------------------------------------------- command line
def _write(tmp_path, frame):
    path = tmp_path / "data.csv"
    frame.to_csv(path, index=False)
    return str(path)


def test_cli_refuses_a_feature_too_large_to_standardise(tmp_path, capsys, table):
    """Before: 'Input X contains NaN' (there was none: the standardiser overflowed) and four RuntimeWarnings."""
    X, y = table
    path = _write(tmp_path, X.assign(y=y).astype({"c": float}).assign(c=lambda f: f.c.where(f.index > 0, 1e198)))
    assert main(["explain", "--data", path, "--target", "y", "--out", str(tmp_path / "v.csv")]) == 2
    err = capsys.readouterr().err
    assert "values too large in column(s) c (up to 1e+198)" in err and "NaN" not in err
    assert not (tmp_path / "v.csv").exists()


def test_cli_isotonic_with_a_string_target_explains_a_probability(tmp_path, capsys, table):
    """Before (issue 40): refused, "numeric model output", the command's wrapper returning the labels; now the
    probability of "yes" is explained (tests/test_cli.py checks its values against a Python call)."""
    X, y = table
    path = _write(tmp_path, X.assign(y=np.where(y > 0, "yes", "no")))
    code = main(["explain", "--data", path, "--target", "y", "--explainer", "isotonic", "--rows", "1",
                 "--out", str(tmp_path / "v.csv")])
    assert code == 0, capsys.readouterr().err
    assert pd.read_csv(tmp_path / "v.csv", index_col=0).shape == (1, 1 + X.shape[1])


def test_cli_refuses_a_csv_header_that_repeats_a_name(tmp_path, capsys, table):
    """Before: pandas renamed the second ``a`` to ``a.1`` and both commands explained it under a name the file
    does not have (the command-line fault fuzz run, tests/fuzz_faults_cli.py)."""
    X, y = table
    path = tmp_path / "data.csv"
    path.write_text(X.assign(y=y).to_csv(index=False).replace("a,b,c,y", "a,a,c,y", 1))
    before = path.read_bytes()
    for command in (["explain", "--out", str(tmp_path / "v.csv")], ["report", "--out", str(tmp_path / "r")]):
        assert main([*command, "--data", str(path), "--target", "y"]) == 2
        assert "data.csv has repeated column names ['a']" in capsys.readouterr().err
    assert path.read_bytes() == before and not (tmp_path / "v.csv").exists() and not (tmp_path / "r").exists()


@pytest.mark.parametrize("option, error", [  # before: ZeroDivisionError in dask; 0 and nan GiB accepted
    (["--block-size", "0"], "--block-size: the value must be an int in [1, 1099511627776]"),
    (["--max-memory", "0"], "--max-memory: the value must be a finite number in [1e-06, 1048576] (GiB"),
    (["--max-memory", "nan"], "got 'nan'"),  # before: accepted
])
def test_cli_explain_refuses_stream_options_that_cannot_work(tmp_path, capsys, table, option, error):
    pytest.importorskip("dask")
    X, y = table
    path = _write(tmp_path, X.assign(y=y))
    code = main(["explain", "--data", path, "--target", "y", "--explain", path, "--out", str(tmp_path / "v.csv"),
                 *option])
    assert code == 2 and error in capsys.readouterr().err and not (tmp_path / "v.csv").exists()


def test_instance_kernel_refuses_ridge_refits_of_many_features_before_work():
    """Before: ridge with p = 5,000 under max_memory=10 MB refused nothing and ran for hours (each permutation
    holds a p x p factor per thread); now the p x p solves are estimated against the budget first."""
    from shap_instances import InstanceKernelExplainer
    from shap_instances.exceptions import MemoryBudgetError

    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 2000))
    y = X[:, 0] + rng.normal(size=30)
    explainer = InstanceKernelExplainer(Ridge().fit(X, y), X, y=y, max_memory=10 * 2**20, silent=True)
    with pytest.raises(MemoryBudgetError, match=r"the 2000 x 2000 ridge refits.*Use fewer features"):
        explainer(X[:2], y[:2])


def test_representer_of_a_regressor_reads_targets_given_as_text_as_numbers(table):
    """Before: y as text ("1.5") was accepted and kept as strings; the explanation's data then crashed with
    "'>=' not supported between instances of 'str' and 'float'" (the fault fuzz run's targets-as-text case)."""
    X, y = table
    model = Ridge().fit(X, y)
    expected = RepresenterExplainer(model, X, y=y)(X.iloc[:3])
    got = RepresenterExplainer(model, X, y=y.astype(str))(X.iloc[:3])
    np.testing.assert_allclose(got.values, expected.values, rtol=1e-12, atol=1e-12)


# ---------------------------------------------------------------------------------------------- the user's folder
def _tiny_report(figures=("a",), tables=("t",)):
    import matplotlib.pyplot as plt

    from shap_instances.report import Report

    report = Report("tiny")
    section = report.section("one")
    for name in figures:
        section.figure(plt.figure(figsize=(1, 1)), name, name)
    report.tables = {name: pd.DataFrame({"x": [1]}) for name in tables}
    return report


def test_a_report_replaces_only_the_files_its_manifest_lists(tmp_path):
    """Before: shutil.rmtree of the whole folder, the user's other files included."""
    from shap_instances.report import report_files

    out = tmp_path / "report"
    _tiny_report(figures=("a", "b")).write(out)
    assert report_files(out) == {"a.png", "b.png", "index.html", "t.csv"}
    (out / "notes.txt").write_text("precious")
    _tiny_report(figures=("a",)).write(out)
    assert (out / "notes.txt").read_text() == "precious"
    assert not (out / "b.png").exists() and report_files(out) == {"a.png", "index.html", "t.csv"}


def test_a_report_never_replaces_a_file_it_did_not_write(tmp_path):
    out = tmp_path / "mine"
    out.mkdir()
    (out / "a.png").write_bytes(b"my picture")
    with pytest.raises(FileExistsError, match=r"no earlier report wrote: \['a.png'\]"):
        _tiny_report().write(out)
    assert (out / "a.png").read_bytes() == b"my picture" and sorted(p.name for p in out.iterdir()) == ["a.png"]
    assert [p.name for p in tmp_path.iterdir()] == ["mine"]  # no staging folder left


def test_cli_a_folder_with_an_index_html_but_no_manifest_is_not_a_report(tmp_path, capsys):
    """Before: any folder holding an index.html was taken for an earlier report and its other files deleted."""
    out = tmp_path / "site"
    out.mkdir()
    (out / "index.html").write_text("my site")
    (out / "style.css").write_text("body {}")
    assert main(["report", "--out", str(out), "--silent"]) == 2
    assert "something other than a shap-instances report" in capsys.readouterr().err
    assert main(["report", "--out", str(out), "--silent", "--force"]) == 2
    assert "index.html that no shap-instances report wrote" in capsys.readouterr().err
    assert (out / "index.html").read_text() == "my site" and (out / "style.css").read_text() == "body {}"


@pytest.mark.parametrize("link", ["hard", "symbolic"])
def test_cli_explain_refuses_an_out_that_is_a_link_to_the_input(tmp_path, capsys, table, link):
    """Before: --force with --out a hard link to --data overwrote the input (the resolved paths differ)."""
    X, y = table
    data = tmp_path / "data.csv"
    X.assign(y=y).to_csv(data, index=False)
    before = data.read_bytes()
    out = tmp_path / "values.csv"
    os.link(data, out) if link == "hard" else os.symlink(data, out)
    assert main(["explain", "--data", str(data), "--target", "y", "--out", str(out), "--force"]) == 2
    assert "is the input file --data (or a link to it)" in capsys.readouterr().err
    assert data.read_bytes() == before


def test_cli_explain_replaces_a_hard_link_instead_of_writing_through_it(tmp_path, table):
    X, y = table
    data = tmp_path / "data.csv"
    X.assign(y=y).to_csv(data, index=False)
    elsewhere = tmp_path / "elsewhere.csv"
    elsewhere.write_text("keep me")
    out = tmp_path / "values.csv"
    os.link(elsewhere, out)
    assert main(["explain", "--data", str(data), "--target", "y", "--out", str(out), "--force", "--rows", "2"]) == 0
    assert elsewhere.read_text() == "keep me" and out.read_text().startswith(",base_value")


# ---------------------------------------------------------------------------------------------- memory budget
_UNDER_ULIMIT = """
import resource, numpy as np
from sklearn.ensemble import RandomForestRegressor
from sklearn.linear_model import Ridge
import shap_instances as si
from shap_instances.exceptions import MemoryBudgetError
rng = np.random.default_rng(0)
X = rng.normal(size=(2000, 4)); y = X.sum(1); Xe = rng.normal(size=(100_000, 4))
mapped = int(open("/proc/self/status").read().split("VmSize:")[1].split()[0]) * 1024
resource.setrlimit(resource.RLIMIT_AS, (mapped + 3 * 2**29, resource.RLIM_INFINITY))  # 1.5 GiB more
for name, run in {
    "gap": lambda: si.GapExplainer(RandomForestRegressor(3, random_state=0).fit(X, y), X, y=y)(Xe),
    "representer": lambda: si.RepresenterExplainer(Ridge().fit(X, y), X, y=y)(Xe),
    "residual": lambda: si.InstanceKernelExplainer(Ridge(), X, y=y, silent=True)(Xe, np.zeros(len(Xe))),
}.items():
    try:
        run(); print(name, "ran")
    except MemoryBudgetError:
        print(name, "refused")
    except MemoryError:
        print(name, "MemoryError")
"""


@pytest.mark.slow
@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="reads VmSize from /proc (Linux)")
def test_under_ulimit_v_the_budget_refuses_before_numpy_runs_out():
    """Before: the default budget was half the machine's memory, so under `ulimit -v` the estimates passed and
    numpy died with MemoryError (values of 100000 x 2000 rows: 1.5 GiB, under 1.5 GiB of address space left)."""
    import subprocess
    import sys

    result = subprocess.run([sys.executable, "-c", _UNDER_ULIMIT], capture_output=True, text=True, timeout=300)
    assert result.stdout.split() == ["gap", "refused", "representer", "refused", "residual", "refused"], result.stderr


def test_memory_limits_read_cgroup_v2_and_v1_files(tmp_path):
    from shap_instances.utils._memory import _cgroup_left

    v2 = tmp_path / "v2"
    v2.mkdir()
    (v2 / "memory.max").write_text("6442450944\n")
    (v2 / "memory.current").write_text("1073741824\n")
    assert _cgroup_left(v2) == 5 * 2**30
    (v2 / "memory.max").write_text("max\n")
    assert _cgroup_left(v2) is None
    v1 = tmp_path / "v1" / "memory"
    v1.mkdir(parents=True)
    (v1 / "memory.limit_in_bytes").write_text(str(2 * 2**30))
    (v1 / "memory.usage_in_bytes").write_text(str(2**29))
    assert _cgroup_left(tmp_path / "v1") == 3 * 2**29
    (v1 / "memory.limit_in_bytes").write_text(str(2**63 - 4096))  # v1's "no limit"
    assert _cgroup_left(tmp_path / "v1") is None


def test_the_default_budget_is_half_the_least_limit(monkeypatch):
    from shap_instances.exceptions import MemoryBudgetError
    from shap_instances.utils import _memory, check_memory

    monkeypatch.setattr(_memory, "memory_limits", lambda: {"available": 8 * 2**30, "cgroup": 2**30})
    check_memory(2**29, "half a GiB")
    with pytest.raises(MemoryBudgetError, match="memory budget of 0.50 GiB"):
        check_memory(2**29 + 1, "a bit more")
