"""Saved explainers load without running code (issue 26, docs/reliability.md "Saved explainers").

The file holds what builds the explainer, in skops' format; types outside the trusted types and pickles are
refused unless ``trusted=True``; every damaged file is a DataValidationError naming the file.
"""

from __future__ import annotations

import io
import os
import pickle
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.ensemble import RandomForestClassifier
from sklearn.naive_bayes import GaussianNB

from shap_instances import GapExplainer, InstanceExplainer, NaiveBayesExplainer
from shap_instances.exceptions import DataValidationError, ShapInstancesWarning

from .fuzz_faults import _Payload


@pytest.fixture(scope="module")
def saved():
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(40, 3)), columns=["a", "b", "c"], index=[f"r{i}" for i in range(40)])
    y = pd.Series(np.where(X.a > 0, "yes", "no"), index=X.index, name="label")
    forest = RandomForestClassifier(5, random_state=0).fit(X, y)
    explainer = GapExplainer(forest, X, y=y)
    buffer = io.BytesIO()
    explainer.save(buffer)
    return explainer, X, buffer.getvalue()


def test_a_saved_explainer_is_a_zip_of_plain_types_and_loads_to_the_same_values(saved):
    explainer, X, data = saved
    assert data.startswith(b"PK") and b"cloudpickle" not in data
    loaded = InstanceExplainer.load(io.BytesIO(data))  # a base class reads a subclass's file
    assert type(loaded) is GapExplainer and loaded.train_names_ == explainer.train_names_
    np.testing.assert_array_equal(loaded(X.iloc[:3]).values, explainer(X.iloc[:3]).values)
    assert loaded.y_train_.tolist() == explainer.y_train_.tolist()


def test_a_crafted_pickle_is_refused_without_running_its_code(tmp_path):
    """Before: Cls.load unpickled first and checked after, so the file's code ran."""
    marker = tmp_path / "ran"
    crafted = pickle.dumps(_Payload(marker))
    for data in (crafted, pickle.dumps(GapExplainer) + crafted):
        with pytest.raises(DataValidationError, match="is a pickle .* trusted=True"):
            GapExplainer.load(io.BytesIO(data))
    assert not marker.exists()
    with pytest.raises(DataValidationError):  # trusted: it runs (the caller's choice), and is still refused after
        GapExplainer.load(io.BytesIO(crafted), trusted=True)
    assert marker.exists()


def test_a_skops_file_naming_a_function_is_refused_without_building_it(tmp_path):
    import skops.io as sio

    data = sio.dumps({"format": "shap_instances.InstanceExplainer", "version": 2, "class": "x:y",
                      "arguments": {"model": os.makedirs}})
    with pytest.raises(DataValidationError, match=r"outside the trusted types.*makedirs"):
        GapExplainer.load(io.BytesIO(data))


def _damaged(data):
    middle = bytearray(data)
    middle[len(data) // 2:len(data) // 2 + 64] = b"\x00" * 64
    directory = bytearray(data)
    entry = directory.rindex(b"PK\x01\x02")
    directory[entry + 10:entry + 12] = (99).to_bytes(2, "little")  # an unknown compression method
    return {"empty": b"", "truncated": data[: len(data) // 3], "garbage": b"not a saved explainer at all",
            "zeroed": bytes(middle), "bad directory": bytes(directory), "pickle cut": pickle.dumps(GapExplainer)[:9]}


@pytest.mark.parametrize("kind", ["empty", "truncated", "garbage", "zeroed", "bad directory", "pickle cut"])
def test_damaged_files_are_a_data_validation_error_naming_the_file(saved, tmp_path, kind):
    """Before: raw UnpicklingError / EOFError / TypeError."""
    path = tmp_path / "explainer.bin"
    path.write_bytes(_damaged(saved[2])[kind])
    with open(path, "rb") as f, pytest.raises(DataValidationError, match=r"explainer\.bin") as info:
        GapExplainer.load(f, trusted=kind == "pickle cut")
    assert "bug" not in str(info.value)


def test_a_path_or_a_text_stream_is_refused_naming_it(saved, tmp_path):
    explainer = saved[0]
    path = tmp_path / "e.bin"
    with pytest.raises(DataValidationError, match=r"not the path .*e\.bin.*open\("):
        GapExplainer.load(str(path))
    with pytest.raises(DataValidationError, match=r"not the path"):
        explainer.save(path)
    path.write_text("text")
    with open(path) as f, pytest.raises(DataValidationError, match="text stream"):
        GapExplainer.load(f)


def test_a_file_of_another_class_is_refused(saved):
    with pytest.raises(DataValidationError, match="GapExplainer, which is not NaiveBayesExplainer"):
        NaiveBayesExplainer.load(io.BytesIO(saved[2]))


def test_what_skops_cannot_store_falls_back_to_a_pickle_read_only_when_trusted():
    """A model carrying a lambda (as SISR's model can be one): a pickle, announced, read only when trusted."""
    X = np.random.default_rng(1).normal(size=(30, 3))
    model = GaussianNB().fit(X, X[:, 0] > 0)
    model.note = lambda: "a user's function"
    explainer = NaiveBayesExplainer(model, X)
    buffer = io.BytesIO()
    with pytest.warns(ShapInstancesWarning, match=r"writing a pickle.*trusted=True"):
        explainer.save(buffer)
    with pytest.raises(DataValidationError, match="is a pickle"):
        NaiveBayesExplainer.load(io.BytesIO(buffer.getvalue()))
    loaded = NaiveBayesExplainer.load(io.BytesIO(buffer.getvalue()), trusted=True)
    np.testing.assert_array_equal(loaded(X[:4]).values, explainer(X[:4]).values)


def test_tables_keep_their_columns_index_and_dtypes():
    from shap_instances.utils._persistence import dump_safely, load_safely

    frame = pd.DataFrame({"x": [1.5, 2.0], "n": [1, 2], "flag": [True, False], "s": ["a", "b"],
                          "c": pd.Categorical(["u", "v"], categories=["v", "u"], ordered=True)}, index=[10, 20])
    series = pd.Series(["p", "q"], index=["i", "j"], name="t")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        back = load_safely(dump_safely({"frame": frame, "series": series}), "f")
    pd.testing.assert_frame_equal(back["frame"], frame)
    pd.testing.assert_series_equal(back["series"], series)
