"""``explain --explain FILE``: a file explained and written partition by partition equals the in-memory run."""

import numpy as np
import pandas as pd
import pytest

from shap_instances.cli import main

pytest.importorskip("dask.dataframe")
pytest.importorskip("pyarrow")


@pytest.fixture
def files(tmp_path):
    """The iris table as the training CSV, and the same rows as Parquet (row groups of 40) and CSV to explain."""
    from sklearn.datasets import load_iris

    X, y = load_iris(return_X_y=True, as_frame=True)
    table = X.assign(label=y)
    table.to_csv(tmp_path / "train.csv", index=False)
    table.to_parquet(tmp_path / "rows.parquet", row_group_size=40, index=False)
    table.to_csv(tmp_path / "rows.csv", index=False)
    return tmp_path


def _explain(files, *args):
    return main(["explain", "--data", str(files / "train.csv"), "--target", "label", *args])


def _in_memory(files, explainer):
    """The values of every training row from the in-memory command (``--rows 150``), rows numbered 0...149."""
    assert _explain(files, "--explainer", explainer, "--rows", "150", "--out", str(files / "memory.csv")) == 0
    return pd.read_csv(files / "memory.csv", index_col=0).reset_index(drop=True)


@pytest.mark.parametrize("explainer", ["naive_bayes", pytest.param("gap", marks=pytest.mark.slow)])
def test_parquet_parts_equal_the_in_memory_values(files, explainer, capsys):
    expected = _in_memory(files, explainer)
    out = files / "values.parquet"
    assert _explain(files, "--explainer", explainer, "--explain", str(files / "rows.parquet"), "--out", str(out)) == 0
    parts = sorted(out.glob("part-*.parquet"))
    assert len(parts) == 4  # one per row group
    got = pd.read_parquet(out).set_index("row")
    assert got.index.tolist() == list(range(150))
    assert list(got.columns) == list(expected.columns)
    np.testing.assert_allclose(got.to_numpy(), expected.to_numpy(), rtol=1e-15, atol=0)  # CSV round trip: 17 digits


def test_parts_are_written_in_slices_plain_and_uncompressed(files):
    """Each part is written in slices (row groups) while the next is explained; float columns are neither
    dictionary-encoded nor compressed (the cost of writing values), the categorical player column is."""
    import pyarrow.parquet as pq

    from shap_instances.cli._parts import _WRITE_SLICES

    out = files / "values.parquet"
    for fmt in ("wide", "long"):
        assert _explain(files, "--explainer", "naive_bayes", "--explain", str(files / "rows.parquet"), "--format", fmt,
                        "--out", str(out), "--force") == 0
        metadata = pq.ParquetFile(out / "part-00000.parquet").metadata
        assert metadata.num_row_groups == _WRITE_SLICES
        columns = {metadata.row_group(0).column(j).path_in_schema: metadata.row_group(0).column(j)
                   for j in range(metadata.num_columns)}
        value = columns["value" if fmt == "long" else "base_value|0"]
        assert value.compression == "UNCOMPRESSED" and "RLE_DICTIONARY" not in value.encodings
        assert fmt == "wide" or "RLE_DICTIONARY" in columns["player"].encodings


def test_long_csv_pivots_back_to_the_wide_values(files):
    expected = _in_memory(files, "naive_bayes")
    out = files / "long.csv"
    assert _explain(files, "--explainer", "naive_bayes", "--explain", str(files / "rows.csv"), "--block-size", "1500",
                    "--format", "long", "--out", str(out)) == 0
    long = pd.read_csv(out)
    assert list(long.columns) == ["row", "player", "output", "value"]
    wide = long.assign(column=long.player + "|" + long.output.astype(str)).pivot(index="row", columns="column",
                                                                                  values="value")
    wide = wide[expected.columns]
    np.testing.assert_allclose(wide.to_numpy(), expected.to_numpy(), rtol=1e-15, atol=0)


@pytest.mark.slow
def test_top_k_is_chosen_when_the_values_would_not_fit(files, capsys):
    expected = _in_memory(files, "gap")  # a classifier: one value per training row and class
    out = files / "top.parquet"
    assert _explain(files, "--explainer", "gap", "--explain", str(files / "rows.parquet"), "--max-memory", "0.0001",
                    "--out", str(out)) == 0
    assert "writing each row's 10 largest" in capsys.readouterr().err
    top = pd.read_parquet(out)
    top = top[top.player != "base_value"]
    assert (top.groupby(["row", "output"], observed=True).size() == 10).all()
    for (row, output), kept in top.groupby(["row", "output"], observed=True):
        columns = [c for c in expected.columns if c.endswith(f"|{output}") and not c.startswith("base_value")]
        everything = expected.loc[row, columns]
        np.testing.assert_allclose(np.sort(np.abs(kept.value.to_numpy())),
                                   np.sort(np.abs(everything.to_numpy()))[-10:], rtol=1e-15)
        chosen = [f"{player}|{output}" for player in kept.player.astype(str)]
        np.testing.assert_allclose(kept.value.to_numpy(), everything[chosen].to_numpy(), rtol=1e-15)


@pytest.mark.parametrize("args, message", [
    (["--explain", "rows.xlsx"], "must be a .parquet or .csv file"),
    (["--explain", "nothing.parquet"], "no such file"),
    (["--explain", "rows.parquet", "--top-k", "0"], "--top-k: the value must be an int in [1, "),
])
def test_bad_explain_options_are_one_line_exit_2(files, capsys, args, message):
    args = [str(files / a) if a.startswith(("rows", "nothing")) else a for a in args]
    assert _explain(files, *args, "--out", str(files / "o.parquet")) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1
    assert not (files / "o.parquet").exists()


def test_missing_columns_are_refused(files, capsys):
    pd.DataFrame({"a": [1.0]}).to_parquet(files / "other.parquet")
    assert _explain(files, "--explainer", "naive_bayes", "--explain", str(files / "other.parquet"),
                    "--out", str(files / "o.parquet")) == 2
    assert "lacks the columns" in capsys.readouterr().err


@pytest.mark.parametrize("out", ["o.npy", "o.parquet", "o.csv"])
def test_missing_values_in_the_file_are_named_and_leave_no_output(files, capsys, out):
    """A missing value in the second row group (the model takes none): the column named, and nothing left at
    --out that could be read as a result (a .npy's unwritten rows would read as zeros)."""
    rows = pd.read_parquet(files / "rows.parquet")
    rows.loc[100, "petal width (cm)"] = np.nan
    rows.to_parquet(files / "gaps.parquet", row_group_size=40, index=False)
    assert _explain(files, "--explainer", "naive_bayes", "--explain", str(files / "gaps.parquet"),
                    "--out", str(files / out)) == 2
    assert "missing values in column(s) petal width (cm)" in capsys.readouterr().err
    assert not (files / out).exists()


@pytest.mark.parametrize("source, options", [("rows.parquet", []), ("rows.csv", ["--block-size", "1500"])])
def test_npy_arrays_equal_the_in_memory_values(files, source, options, capsys):
    """``--out NAME.npy``: the values and base values of every row, memory-mapped, bitwise those of ``--rows``
    (written as Parquet, which keeps float64 exactly), player and output names kept."""
    from shap_instances.utils import memmap_explanation

    assert _explain(files, "--explainer", "naive_bayes", "--rows", "150", "--out", str(files / "memory.parquet")) == 0
    expected = pd.read_parquet(files / "memory.parquet")
    out = files / "values.npy"
    for _ in range(2):  # the second run replaces the first's files (--force)
        assert _explain(files, "--explainer", "naive_bayes", "--explain", str(files / source), *options,
                        "--out", str(out), "--force") == 0
    assert "plan: --out values.npy: 150 rows of 12 values, 0.00 GiB" in capsys.readouterr().err  # 150 x (12 + 3) x 8
    assert sorted(p.name for p in out.iterdir()) == ["base_values.npy", "explanation.json", "values.npy"]
    got = memmap_explanation(out)
    assert isinstance(got.values.base, np.memmap) and got.values.shape == (150, 4, 3)
    assert got.output_names == ["0", "1", "2"]
    values = expected[[f"{p}|{o}" for p in got.feature_names for o in got.output_names]].to_numpy()
    np.testing.assert_array_equal(got.values.reshape(150, -1), values)
    np.testing.assert_array_equal(got.base_values, expected[[f"base_value|{o}" for o in range(3)]].to_numpy())


@pytest.mark.parametrize("args, message", [
    (["--format", "long"], "--format long and --top-k write .parquet or .csv"),
    (["--top-k", "2"], "--format long and --top-k write .parquet or .csv"),
    (["--rows", "5"], "for --rows choose a .csv or .parquet file"),
])
def test_bad_npy_options_are_refused(files, capsys, args, message):
    explain = [] if "--rows" in args else ["--explain", str(files / "rows.parquet")]
    assert _explain(files, "--explainer", "naive_bayes", *explain, *args, "--out", str(files / "o.npy")) == 2
    assert message in capsys.readouterr().err
    assert not (files / "o.npy").exists()


def test_npy_larger_than_the_free_disk_is_refused(files, capsys, monkeypatch):
    import shutil
    from collections import namedtuple

    usage = namedtuple("usage", "total used free")
    monkeypatch.setattr(shutil, "disk_usage", lambda path: usage(10**6, 10**6 - 100, 100))
    assert _explain(files, "--explainer", "naive_bayes", "--explain", str(files / "rows.parquet"),
                    "--out", str(files / "o.npy")) == 2
    assert "more than the 0.0 GiB free on its disk" in capsys.readouterr().err
    assert not (files / "o.npy" / "values.npy").exists()


@pytest.mark.parametrize("suffix", ["parquet", "npy"])
def test_a_cluster_writes_the_same_parts(files, suffix):
    from shap_instances.utils import memmap_explanation

    distributed = pytest.importorskip("distributed")
    here, there = files / f"here.{suffix}", files / f"there.{suffix}"
    args = ["--explainer", "naive_bayes", "--explain", str(files / "rows.parquet"), "--out"]
    assert _explain(files, *args, str(here)) == 0
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None) as c:
        assert _explain(files, *args, str(there), "--scheduler", c.scheduler_address) == 0
    if suffix == "npy":  # each worker wrote its own rows into the arrays
        np.testing.assert_array_equal(memmap_explanation(here).values, memmap_explanation(there).values)
        np.testing.assert_array_equal(memmap_explanation(here).base_values, memmap_explanation(there).base_values)
        return
    for part in sorted(here.glob("part-*.parquet")):
        assert pd.read_parquet(part).equals(pd.read_parquet(there / part.name))
