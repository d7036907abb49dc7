"""Outputs the user owns: CSV cells safe in a spreadsheet, report manifests that prove what they wrote, and the
memory-mapped folders of ``explain_partitions(out=)`` (refused, locked, completed, reopened)."""

import csv

import numpy as np
import pandas as pd
import pytest

from shap_instances.utils import FORMULA_STARTS, spreadsheet_safe

ATTACK = "=cmd|' /C calc'!A0"


def _cells(path):
    """Every cell of a CSV file, header included, as text."""
    with open(path, newline="") as handle:
        return [cell for row in csv.reader(handle) for cell in row]


def _formulas(cells):
    """The cells a spreadsheet would run: text starting with a formula character, not a plain number."""
    numbers = pd.to_numeric(pd.Series(cells, dtype=object), errors="coerce").notna()
    return [c for c, number in zip(cells, numbers) if c.lstrip(" ").startswith(FORMULA_STARTS) and not number]


# ------------------------------------------------------------------------------------------------ spreadsheets
@pytest.mark.parametrize("start", FORMULA_STARTS)
def test_spreadsheet_safe_neutralises_text_cells_headers_and_index(start):
    table = pd.DataFrame({f"{start}col": [-1.5, 2.0], "label": [f"{start}x", "y"],
                          "cat": pd.Categorical([f" {start}c", "d"]), "n": ["-3", "+2e5"]},
                         index=pd.Index([f"{start}i", "j"], name=f"{start}name"))
    safe = spreadsheet_safe(table)
    assert list(safe.columns) == [f"'{start}col", "label", "cat", "n"]
    assert safe["label"].tolist() == [f"'{start}x", "y"]
    assert safe["cat"].tolist() == [f"' {start}c", "d"]
    assert safe["n"].tolist() == ["-3", "+2e5"]  # plain numbers stay numbers
    assert safe.iloc[:, 0].tolist() == [-1.5, 2.0] and safe.iloc[:, 0].dtype == np.float64
    assert safe.index.tolist() == [f"'{start}i", "j"] and safe.index.name == f"'{start}name"
    assert table.columns[0] == f"{start}col" and table["label"].iloc[0] == f"{start}x"  # the caller's table unchanged


def test_spreadsheet_safe_returns_a_clean_table_itself_and_keeps_negative_numbers():
    table = pd.DataFrame({"a": [-1.0, -np.inf], "b": ["x", None]})
    assert spreadsheet_safe(table) is table
    assert spreadsheet_safe(pd.DataFrame({"s": ["-inf", "-1+2"]}))["s"].tolist() == ["'-inf", "'-1+2"]


def _iris_with_a_formula(tmp_path):
    from sklearn.datasets import load_iris

    X, y = load_iris(return_X_y=True, as_frame=True)
    X = X.rename(columns={X.columns[0]: ATTACK})
    X.assign(label=y).to_csv(tmp_path / "train.csv", index=False)
    return tmp_path / "train.csv"


@pytest.mark.parametrize("fmt", ["wide", "long"])
def test_cli_explain_csv_has_no_formula_cell(tmp_path, fmt):
    """Before: the header cell ``=cmd|' /C calc'!A0|0`` was written as it is."""
    from shap_instances.cli import main

    train = _iris_with_a_formula(tmp_path)
    args = ["explain", "--data", str(train), "--target", "label", "--explainer", "naive_bayes", "--format", fmt]
    if fmt == "wide":
        assert main([*args, "--rows", "3", "--out", str(tmp_path / "o.csv")]) == 0
    else:
        pytest.importorskip("dask.dataframe")
        assert main([*args, "--explain", str(train), "--out", str(tmp_path / "o.csv")]) == 0
    cells = _cells(tmp_path / "o.csv")
    assert _formulas(cells) == []
    assert any(c.startswith(f"'{ATTACK}") for c in cells)
    assert any(c.startswith("-") for c in cells)  # negative values are still written as numbers


def test_report_tables_have_no_formula_cell(tmp_path):
    """Before: class labels such as ``=cmd|...`` went into label_issues.csv and trust_scores.csv unescaped; every
    table of a report is written by Report.write."""
    from shap_instances.report import Report

    report = Report("tiny")
    report.tables = {"label_issues": pd.DataFrame({"given": [ATTACK, "b"], "score": [-0.5, 1.0]},
                                                  index=pd.Index(["@r", "s"], name="row"))}
    report.write(tmp_path / "r")
    cells = _cells(tmp_path / "r" / "label_issues.csv")
    assert _formulas(cells) == [] and f"'{ATTACK}" in cells and "'@r" in cells and "-0.5" in cells


# ------------------------------------------------------------------------------------------- report manifests
def _tiny_report(figures=("a",)):
    import matplotlib.pyplot as plt

    from shap_instances.report import Report

    report = Report("tiny")
    section = report.section("one")
    for name in figures:
        figure = plt.figure(figsize=(1, 1))
        section.figure(figure, name, name)
        plt.close(figure)
    report.tables = {"t": pd.DataFrame({"x": [1]})}
    return report


def _manifest(folder):
    import json

    from shap_instances.report._manifest import MANIFEST

    return json.loads((folder / MANIFEST).read_text())


def _set_manifest(folder, files, fmt="shap-instances report manifest 2"):
    import json

    from shap_instances.report._manifest import MANIFEST

    (folder / MANIFEST).write_text(json.dumps({"format": fmt, "files": files}))


def test_the_manifest_records_each_files_size_and_sha256(tmp_path):
    from shap_instances.utils import file_digest

    out = tmp_path / "r"
    _tiny_report().write(out)
    files = _manifest(out)["files"]
    assert sorted(files) == ["a.png", "index.html", "t.csv"]
    assert all(files[name] == [file_digest(out / name)] for name in files)


def test_a_hand_edited_manifest_never_deletes_a_users_file(tmp_path):
    """Before: a manifest listing ``thesis.tex`` made the next report delete it, without --force."""
    from shap_instances.exceptions import ShapInstancesWarning
    from shap_instances.utils import file_digest

    out = tmp_path / "r"
    _tiny_report().write(out)
    (out / "thesis.tex").write_text("years of work")
    (tmp_path / "outside.png").write_bytes(b"mine")
    (out / "link.png").symlink_to(tmp_path / "outside.png")
    forged = _manifest(out)["files"]
    forged.update({"thesis.tex": [file_digest(out / "thesis.tex")], "link.png": [file_digest(out / "link.png")],
                   "../outside.png": [file_digest(tmp_path / "outside.png")],
                   str(tmp_path / "outside.png"): [file_digest(tmp_path / "outside.png")]})
    _set_manifest(out, forged)
    with pytest.warns(ShapInstancesWarning, match="were kept: .*thesis.tex"):
        _tiny_report(figures=()).write(out)
    assert (out / "thesis.tex").read_text() == "years of work" and (tmp_path / "outside.png").read_bytes() == b"mine"
    assert (out / "link.png").is_symlink() and not (out / "a.png").exists()  # the report's own old figure removed


def test_a_report_file_changed_since_is_kept_and_said(tmp_path):
    from shap_instances.exceptions import OutputConflictError, ShapInstancesWarning

    out = tmp_path / "r"
    _tiny_report(figures=("a", "b")).write(out)
    (out / "b.png").write_bytes(b"edited by hand")
    with pytest.warns(ShapInstancesWarning, match=r"\['b.png'\]"):
        _tiny_report(figures=("a",)).write(out)
    assert (out / "b.png").read_bytes() == b"edited by hand"
    with pytest.raises(OutputConflictError, match=r"no earlier report wrote: \['b.png'\]"):  # would replace it
        _tiny_report(figures=("a", "b")).write(out)
    assert (out / "b.png").read_bytes() == b"edited by hand"


def test_a_manifest_of_names_only_proves_nothing(tmp_path):
    from shap_instances.exceptions import OutputConflictError

    out = tmp_path / "r"
    out.mkdir()
    (out / "notes.csv").write_text("mine")
    _set_manifest(out, ["notes.csv"], fmt="shap-instances report manifest 1")
    with pytest.warns(UserWarning, match=r"were kept: \['notes.csv'\]"):
        _tiny_report().write(out)
    assert (out / "notes.csv").read_text() == "mine"
    (out / ".shap-instances-report.json").write_text("{not json")
    with pytest.raises(OutputConflictError, match="not a report manifest"):
        _tiny_report().write(out)


def test_a_report_into_a_linked_folder_is_moved_within_that_folder(tmp_path, monkeypatch):
    """Before: the staging folder was made beside the link, on the link's file system, and the moves into a folder
    on another file system failed with "Invalid cross-device link" (simulated: a move out of the target refused)."""
    import errno
    import os

    real, link = tmp_path / "other-disk" / "real", tmp_path / "link"
    real.mkdir(parents=True)
    link.symlink_to(real)
    replace = os.replace

    def same_device_only(src, dst):
        if not os.path.realpath(src).startswith(os.path.realpath(real) + os.sep):
            raise OSError(errno.EXDEV, "Invalid cross-device link")
        return replace(src, dst)

    monkeypatch.setattr(os, "replace", same_device_only)
    for _ in range(2):
        assert _tiny_report().write(link) == link / "index.html"
    assert sorted(p.name for p in real.iterdir()) == [".shap-instances-report.json", "a.png", "index.html", "t.csv"]
