"""Outputs the user owns: CSV cells safe in a spreadsheet, report manifests that prove what they wrote, and the
memory-mapped folders of ``explain_partitions(out=)`` (refused, locked, completed, reopened)."""

import csv
import os
import re
import subprocess
import sys
from pathlib import Path

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


def test_write_atomically_gives_the_output_a_new_files_mode_not_mkstemps_private_one(tmp_path):
    """Outputs were left 0600 (mkstemp's mode, kept by the rename), unreadable to the user's group; a file written
    with open() gets 0666 less the umask, and so does a replaced one."""
    from shap_instances.utils import write_atomically

    with open(tmp_path / "plain.txt", "w") as stream:
        stream.write("x")
    expected = os.stat(tmp_path / "plain.txt").st_mode & 0o777
    for name in ("new.csv", "plain.txt"):
        write_atomically(tmp_path / name, lambda temporary: Path(temporary).write_text("y"))
        assert os.stat(tmp_path / name).st_mode & 0o777 == expected, name


def test_spreadsheet_safe_returns_a_clean_table_itself_and_keeps_negative_numbers():
    table = pd.DataFrame({"a": [-1.0, -np.inf], "b": ["x", None]})
    assert spreadsheet_safe(table) is table
    assert spreadsheet_safe(pd.DataFrame({"s": ["-inf", "-1+2"]}))["s"].tolist() == ["'-inf", "'-1+2"]


def test_spreadsheet_safe_keeps_categories_that_would_collide():
    table = pd.DataFrame({"c": pd.Categorical(["=a", "'=a", "b"])})
    assert spreadsheet_safe(table)["c"].tolist() == ["'=a", "'=a", "b"]


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


# ------------------------------------------------------------------------------ memory-mapped result folders
@pytest.fixture(scope="module")
def iris():
    """(a naive Bayes explainer of iris, its 150 rows as a C-ordered float array)."""
    from sklearn.datasets import load_iris
    from sklearn.naive_bayes import GaussianNB

    import shap_instances as si

    X, y = load_iris(return_X_y=True)
    return si.NaiveBayesExplainer(GaussianNB().fit(X, y), X), np.ascontiguousarray(X)


def _explain_into(iris, out, rows=slice(None), **options):
    from shap_instances.utils import explain_partitions

    explainer, X = iris
    return explain_partitions(explainer, X[rows], rows_per_part=40, out=out, **options)


def _snapshot(folder):
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


@pytest.mark.parametrize("name", ["values.npy", "data.npy", "base_values.npy", "names.json", "notes.txt"])
def test_a_non_empty_folder_is_refused_without_overwrite(iris, tmp_path, name):
    """Before: explain_partitions silently replaced a user's values.npy, data.npy, base_values.npy, names.json."""
    from shap_instances.exceptions import OutputConflictError

    (tmp_path / name).write_bytes(b"the user's own")
    with pytest.raises(OutputConflictError, match=rf"is not empty \(it holds \['{name}'\]\).*overwrite=True"):
        _explain_into(iris, tmp_path)
    assert _snapshot(tmp_path) == {name: b"the user's own"}
    got = _explain_into(iris, tmp_path, overwrite=True)  # told to: the result's files replaced, others kept
    assert np.array_equal(got.values, iris[0](iris[1]).values)
    if not name.endswith(".npy"):
        assert (tmp_path / name).read_bytes() == b"the user's own"


def test_the_folder_the_rows_are_memory_mapped_from_is_refused(iris, tmp_path):
    """Before: X memory-mapped from out/data.npy was overwritten by the run reading it, and other values returned."""
    from shap_instances.exceptions import OutputConflictError

    first = _explain_into(iris, tmp_path / "d")
    mapped = np.asarray(first.data)[10:]  # a view of the memory map of d/data.npy
    before = _snapshot(tmp_path / "d")
    for overwrite in (False, True):
        with pytest.raises(OutputConflictError, match="memory-mapped from"):
            _explain_into((iris[0], mapped), tmp_path / "d", overwrite=overwrite)
    assert _snapshot(tmp_path / "d") == before


@pytest.mark.parametrize("kind", ["empty", "file", "dangling link"])
def test_out_that_is_not_a_folder_is_refused_and_nothing_written(iris, tmp_path, monkeypatch, kind):
    """Before: out="" wrote into the current folder; a file or a dangling link gave an obscure crash."""
    from shap_instances.exceptions import InvalidParameterError, OutputConflictError

    monkeypatch.chdir(tmp_path)
    out = {"empty": "", "file": tmp_path / "f", "dangling link": tmp_path / "link"}[kind]
    if kind == "file":
        out.write_text("mine")
    elif kind == "dangling link":
        out.symlink_to(tmp_path / "nowhere")
    error = InvalidParameterError if kind == "empty" else OutputConflictError
    with pytest.raises(error, match={"empty": "empty path", "file": "is a file", "dangling link": "link to nothing"}[
            kind]):
        _explain_into(iris, out)
    assert sorted(p.name for p in tmp_path.iterdir()) == ([] if kind == "empty" else [out.name])


@pytest.mark.parametrize("options, match", [
    ({"rows_per_part": -1}, r"rows_per_part must be None or an int in \[1, inf\]; got -1"),
    ({"rows_per_part": 2.5}, "rows_per_part"),
    ({"rows_per_part": "40"}, "rows_per_part"), ({"rows_per_part": True}, "rows_per_part"),
    ({"overwrite": "yes"}, "overwrite must be a bool"), ({"max_in_flight": 0}, "max_in_flight"),
    ({"out": 3}, "out must be"), ({"sink": lambda i, part: None}, "not both"),
])
def test_bad_options_are_refused_before_any_work(iris, tmp_path, options, match):
    from shap_instances.exceptions import InvalidParameterError
    from shap_instances.utils import explain_partitions

    explainer, X = iris
    with pytest.raises(InvalidParameterError, match=match):
        explain_partitions(explainer, X, **{"out": tmp_path / "o", **options})
    assert not (tmp_path / "o").exists()


def test_a_failed_run_leaves_the_earlier_result_as_it_was(iris, tmp_path):
    from shap_instances.utils import explain_partitions, memmap_explanation

    earlier = _explain_into(iris, tmp_path, rows=slice(0, 50))
    before = _snapshot(tmp_path)

    def fails_on_the_third(explainer, part, index):
        if index == 2:
            raise RuntimeError("the explainer failed")
        return explainer(part)

    with pytest.raises(RuntimeError, match="explainer failed"):
        explain_partitions(iris[0], iris[1], rows_per_part=40, out=tmp_path, overwrite=True,
                           call=fails_on_the_third, numbered=True)
    assert _snapshot(tmp_path) == before and sorted(p.name for p in tmp_path.iterdir()) == sorted(before)
    assert np.array_equal(memmap_explanation(tmp_path).values, earlier.values)
    with pytest.raises(RuntimeError):  # into a new folder: nothing left at all
        explain_partitions(iris[0], iris[1], rows_per_part=40, out=tmp_path / "new", call=fails_on_the_third,
                           numbered=True)
    assert not (tmp_path / "new").exists()


def test_a_killed_run_is_refused_on_reopen_and_its_leftovers_cleared(tmp_path):
    """Before: a killed explain_partitions reopened as 56,000 rows of zeros, without a word. A kill is what is
    left when the lock is dropped (the system releases it with the process) and nothing is cleaned up."""
    import shap

    from shap_instances.exceptions import DataValidationError
    from shap_instances.utils import MemmapWriter, memmap_explanation

    killed = MemmapWriter(tmp_path, 56000, fields=("values",))
    killed(0, shap.Explanation(np.ones((10, 3))))
    killed.lock.release()  # the process dies here: no close(), the staging folder stays
    with pytest.raises(DataValidationError, match="no completion marker explanation.json .a run into it was "
                                                   "interrupted"):
        memmap_explanation(tmp_path)
    with MemmapWriter(tmp_path, 1, fields=("values",)) as writer:  # not refused as non-empty: only leftovers
        writer(0, shap.Explanation(np.ones((1, 2))))
        assert writer.explanation().values.tolist() == [[1.0, 1.0]]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["explanation.json", "values.npy"]


def test_an_old_folder_without_a_marker_is_refused(tmp_path):
    from shap_instances.exceptions import DataValidationError
    from shap_instances.utils import memmap_explanation

    np.save(tmp_path / "values.npy", np.zeros((56000, 3)))
    with pytest.raises(DataValidationError, match="no completion marker"):
        memmap_explanation(tmp_path)


def test_overwrite_leaves_a_result_still_memory_mapped_unchanged(iris, tmp_path):
    """Before: a second run into the same out= changed an earlier result in place (or crashed it with SIGBUS
    when the file was truncated)."""
    first = _explain_into(iris, tmp_path, rows=slice(0, 150))
    kept = np.array(first.values)
    second = _explain_into(iris, tmp_path, rows=slice(100, 130), overwrite=True)
    assert np.array_equal(first.values, kept) and first.values.shape == (150, 4, 3)
    assert np.array_equal(second.values, iris[0](iris[1][100:130]).values)


def test_a_second_run_into_a_folder_being_written_is_refused(iris, tmp_path):
    """Before: two concurrent runs into one folder both exited 0 with neither's values."""
    import shap

    from shap_instances.exceptions import DataValidationError, OutputConflictError
    from shap_instances.utils import MemmapWriter, memmap_explanation

    with MemmapWriter(tmp_path, 2, fields=("values",)) as writer:
        writer(0, shap.Explanation(np.ones((1, 2))))
        with pytest.raises(OutputConflictError, match="is being written by another run now"):
            _explain_into(iris, tmp_path, overwrite=True)
        with pytest.raises(DataValidationError, match="a run is writing into it now"):
            memmap_explanation(tmp_path)
        writer(1, shap.Explanation(np.full((1, 2), 2.0)))
        assert writer.explanation().values.tolist() == [[1.0, 1.0], [2.0, 2.0]]
    assert _explain_into(iris, tmp_path, overwrite=True).values.shape == (150, 4, 3)  # the lock was released


def test_an_incomplete_result_is_not_kept(tmp_path):
    import shap

    from shap_instances.exceptions import DataValidationError
    from shap_instances.utils import MemmapWriter

    with MemmapWriter(tmp_path / "o", 5, fields=("values",)) as writer:
        writer(0, shap.Explanation(np.ones((2, 2))))
        with pytest.raises(DataValidationError, match="2 of the 5 rows were written"):
            writer.explanation()
        with pytest.raises(DataValidationError, match="do not fit the 5 rows"):
            writer(1, shap.Explanation(np.ones((4, 2))))
    assert not (tmp_path / "o").exists()


def _damage(folder, kind):
    import json

    marker = json.loads((folder / "explanation.json").read_text())
    if kind == "truncated values.npy":
        with open(folder / "values.npy", "r+b") as handle:
            handle.truncate(200)
    elif kind == "garbage values.npy":
        (folder / "values.npy").write_bytes(b"\x93NUMPY garbage" * 100)
    elif kind == "garbage marker":
        (folder / "explanation.json").write_text("{\"format\": [1, 2")
    elif kind == "player names":
        marker["feature_names"] = marker["feature_names"][:-1]
    elif kind == "output names":
        marker["output_names"] = ["a"]
    elif kind == "0-d values":
        np.save(folder / "values.npy", np.float64(1.0))
        marker["arrays"]["values"].update(shape=[], bytes=(folder / "values.npy").stat().st_size)
    elif kind == "base values":
        np.save(folder / "base_values.npy", np.zeros((7, 3)))
        marker["arrays"]["base_values"].update(shape=[7, 3], bytes=(folder / "base_values.npy").stat().st_size)
    if kind in ("player names", "output names", "base values", "0-d values"):
        (folder / "explanation.json").write_text(json.dumps(marker))


@pytest.mark.parametrize("kind, match", [
    ("truncated values.npy", r"values.npy is not the array the completion marker records"),
    ("garbage values.npy", r"values.npy is not"),
    ("garbage marker", r"unreadable or incomplete completion marker explanation.json"),
    ("player names", r"3 player names for 4 players"),
    ("output names", r"1 output names for 3 output"),
    ("base values", r"base_values has shape \(7, 3\), not \(150, 3\)"),
    ("0-d values", r"values.npy has 0 dimension\(s\)"),
])
def test_a_damaged_folder_is_refused_naming_the_file(iris, tmp_path, kind, match):
    """Before: a truncated values.npy or garbage names.json gave an obscure crash, inconsistent names and shapes
    were accepted."""
    from shap_instances.exceptions import DataValidationError
    from shap_instances.utils import memmap_explanation

    _explain_into(iris, tmp_path)
    _damage(tmp_path, kind)
    with pytest.raises(DataValidationError, match=match):
        memmap_explanation(tmp_path)


def test_a_marker_replaced_while_opening_is_refused(iris, tmp_path, monkeypatch):
    import json

    from shap_instances.exceptions import DataValidationError
    from shap_instances.utils import _memmap, memmap_explanation

    _explain_into(iris, tmp_path)
    open_array = _memmap._open_array

    def meanwhile_another_run_finishes(path, entry):
        marker = json.loads((tmp_path / "explanation.json").read_text())
        (tmp_path / "explanation.json").write_text(json.dumps({**marker, "token": "another run"}))
        return open_array(path, entry)

    monkeypatch.setattr(_memmap, "_open_array", meanwhile_another_run_finishes)
    with pytest.raises(DataValidationError, match="changed while the arrays were opened"):
        memmap_explanation(tmp_path)


def test_a_finished_result_is_never_written_in_place(iris, tmp_path):
    import shap

    from shap_instances.exceptions import OutputConflictError
    from shap_instances.utils import write_memmap_rows

    _explain_into(iris, tmp_path)
    before = _snapshot(tmp_path)
    with pytest.raises(OutputConflictError, match="never written in place"):
        write_memmap_rows(tmp_path, 0, shap.Explanation(np.ones((1, 4, 3))))
    assert _snapshot(tmp_path) == before


# ------------------------------------------------------------------------- the command line validates first
@pytest.fixture
def tables(tmp_path):
    """The iris table as the training CSV and as the CSV to explain."""
    pytest.importorskip("dask.dataframe")
    from sklearn.datasets import load_iris

    X, y = load_iris(return_X_y=True, as_frame=True)
    X.assign(label=y).to_csv(tmp_path / "train.csv", index=False)
    X.to_csv(tmp_path / "rows.csv", index=False)
    return tmp_path


def _stream(tables, source, out, *more):
    from shap_instances.cli import main

    return main(["explain", "--data", str(tables / "train.csv"), "--target", "label", "--explainer", "naive_bayes",
                 "--explain", str(source), "--out", str(out), "--force", *more])


def _tree(path):
    """Every file under ``path`` (or the file itself) with its bytes."""
    path = __import__("pathlib").Path(path)
    files = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())
    return {str(p.relative_to(path.parent)): p.read_bytes() for p in files}


def _bad_sources(tables):
    """--explain files that must be refused: a missing column, an unreadable file, a bad cell in a later block."""
    rows = pd.read_csv(tables / "rows.csv")
    rows.drop(columns=rows.columns[1]).to_csv(tables / "missing.csv", index=False)
    (tables / "garbage.csv").write_bytes(b"\x00\xff\xfe" * 50)
    (tables / "garbage.parquet").write_bytes(b"PAR1 not really")
    late = rows.astype(object)
    late.iloc[140, 0] = "not a number"
    late.to_csv(tables / "late.csv", index=False)
    return {"missing.csv": "lacks the columns", "garbage.csv": "cannot be read as csv",
            "garbage.parquet": "cannot be read as parquet", "late.csv": ""}


@pytest.mark.parametrize("out", ["o.csv", "o.parquet", "o.npy"])
def test_explain_force_keeps_the_earlier_output_when_the_input_is_bad(tables, capsys, out):
    """Before: ``explain --explain bad.csv --force`` deleted the earlier output before finding the input bad."""
    pytest.importorskip("pyarrow")
    assert _stream(tables, tables / "rows.csv", tables / out) == 0
    before = _tree(tables / out)
    for source, message in _bad_sources(tables).items():
        assert _stream(tables, tables / source, tables / out, "--block-size", "2000") == 2, source
        assert message in capsys.readouterr().err
        assert _tree(tables / out) == before, source
    assert sorted(p.name for p in tables.iterdir() if p.name.startswith(".")) == []  # no staging left


@pytest.mark.parametrize("case", ["no parent", "a folder", "report into ''"])
def test_cli_output_paths_that_cannot_be_written_are_refused_first(tmp_path, capsys, case):
    from shap_instances.cli import main

    (tmp_path / "d.csv").mkdir()
    out = {"no parent": str(tmp_path / "nowhere" / "o.csv"), "a folder": str(tmp_path / "d.csv")}.get(case, "")
    command = ["report", "--out", out] if case == "report into ''" else [
        "explain", "--explainer", "naive_bayes", "--rows", "2", "--out", out, "--force"]
    assert main(command) == 2
    said = capsys.readouterr().err
    assert {"no parent": "does not exist", "a folder": "is a folder; it is not replaced",
            "report into ''": "--out is an empty path"}[case] in said and "internal error" not in said
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d.csv"] and not any((tmp_path / "d.csv").iterdir())


def _nb():
    from sklearn.naive_bayes import GaussianNB

    import shap_instances as si

    X = np.arange(24.0).reshape(6, 4)
    return si.NaiveBayesExplainer(GaussianNB().fit(X, [0, 1] * 3), X)


@pytest.mark.parametrize("call, match", [
    (lambda f: __import__("shap_instances").utils.memmap_explanation(3), "folder must be a path"),
    (lambda f: __import__("shap_instances").utils.memmap_explanation(f, like="x"), "like must be None or a shap"),
    (lambda f: __import__("shap_instances").utils.memmap_explanation(""), "empty path"),
    (lambda f: __import__("shap_instances").utils.explain_partitions(_nb(), np.ones((3, 4)), out=f"{f}\0x"),
     "not a valid path"),
    (lambda f: __import__("shap_instances").utils.write_memmap_rows(f, -1, None), "start must be an int"),
    (lambda f: __import__("shap_instances").utils.write_memmap_rows(f, 0, "rows"), "part must be a shap.Explanation"),
    (lambda f: __import__("shap_instances").utils.MemmapWriter(f, 2, fields=None), "fields must be a sequence"),
    (lambda f: __import__("shap_instances").utils.explain_partitions(
        _nb(), np.ones((3, 4)), out=f, call=lambda e, part: pd.DataFrame(part)), "call must return one"),
    (lambda f: __import__("shap_instances").utils.MemmapWriter(f, -2), "n_rows must be an int"),
    (lambda f: __import__("shap_instances").report.Report("r").write(""), "empty path"),
    (lambda f: __import__("shap_instances").utils.explain_partitions(None, np.ones((3, 4)), out=f),
     "explainer must be a built explainer .a shap.Explainer.; got a NoneType"),
    (lambda f: __import__("shap_instances").utils.explain_partitions(_nb().model, np.ones((3, 4)), out=f),
     "explainer must be a built explainer .a shap.Explainer.; got a GaussianNB"),
    (lambda f: __import__("shap_instances").utils.explain_partitions(_nb(), np.ones((3, 4)), out=f, scheduler=3),
     "scheduler must be None or"),
    (lambda f: __import__("shap_instances").utils.explain_partitions(_nb(), np.ones((3, 4)),
                                                                     out=f.parent / ("x" * 300)),
     "cannot be used as a folder .File name too long"),
    (lambda f: __import__("shap_instances").utils.memmap_explanation(f.parent / ("x" * 300)),
     "cannot be used as a folder .File name too long"),
    (lambda f: __import__("shap_instances").utils.spreadsheet_safe([["=1"]]), "table must be an instance of DataFrame"),
])
def test_the_folder_functions_refuse_bad_arguments_by_name(tmp_path, call, match):
    from shap_instances.exceptions import InvalidParameterError

    with pytest.raises(InvalidParameterError, match=match):
        call(tmp_path / "f")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.slow  # about 3 s: a child process
def test_explain_partitions_refuses_a_scheduler_address_it_cannot_use(tmp_path):
    """dask's own "missing port number in address 'x'" named neither the option nor what to pass. Run in a child
    process: a failed distributed.Client leaves its event loop behind, which hangs later dask work in this one."""
    pytest.importorskip("distributed")
    code = ("import sys, numpy as np\n"
            "from sklearn.naive_bayes import GaussianNB\n"
            "import shap_instances as si\n"
            "from shap_instances.exceptions import InvalidParameterError\n"
            "from shap_instances.utils import explain_partitions\n"
            "X = np.arange(24.0).reshape(6, 4)\n"
            "explainer = si.NaiveBayesExplainer(GaussianNB().fit(X, [0, 1] * 3), X)\n"
            "try:\n"
            "    explain_partitions(explainer, X, out=sys.argv[1], scheduler='x')\n"
            "except InvalidParameterError as error:\n"
            "    print(error)\n")
    said = subprocess.run([sys.executable, "-c", code, str(tmp_path / "f")], capture_output=True, text=True,
                          timeout=120).stdout
    assert re.search("scheduler='x' is not a dask scheduler .* pass an address", said), said
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("out, leftover", [("o.parquet", ".o.parquet.partial-x1"),
                                           ("o.npy", ".shap-instances-partial-x1")])
def test_explain_force_is_not_blocked_by_a_killed_runs_staging(tables, out, leftover):
    pytest.importorskip("pyarrow")
    (tables / out / leftover).mkdir(parents=True)
    (tables / out / leftover / "part-00000.parquet").write_bytes(b"half")
    assert _stream(tables, tables / "rows.csv", tables / out) == 0
    assert (tables / out / ("values.npy" if out == "o.npy" else "part-00000.parquet")).exists()


def test_a_second_report_into_a_folder_being_written_is_refused(tmp_path):
    from shap_instances.exceptions import OutputConflictError
    from shap_instances.utils import FolderLock

    (tmp_path / "r").mkdir()
    with FolderLock(tmp_path / "r"):
        with pytest.raises(OutputConflictError, match="is being written by another run now"):
            _tiny_report().write(tmp_path / "r")
    assert list((tmp_path / "r").iterdir()) == []
    _tiny_report().write(tmp_path / "r")  # released
