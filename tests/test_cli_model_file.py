"""``shap-instances explain --model-file``: a fitted model saved in the safe format, loaded without running code."""

from __future__ import annotations

import io
import os

import numpy as np
import pandas as pd
import pytest
from sklearn.ensemble import GradientBoostingRegressor
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer, StandardScaler

import shap_instances as si
from shap_instances.cli import main
from shap_instances.datasets import load_diabetes
from shap_instances.exceptions import DataValidationError
from shap_instances.report import encode
from shap_instances.utils import load_model, save_model


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("model_file")
    X, y = load_diabetes()
    pd.concat([X, y.rename("target")], axis=1).to_csv(folder / "data.csv", index=False)
    model = make_pipeline(StandardScaler(), GradientBoostingRegressor(n_estimators=10, random_state=0)).fit(X, y)
    with open(folder / "model.skops", "wb") as stream:
        save_model(model, stream)
    return folder, model, X, y


def _explain(folder, *extra):
    return main(["explain", "--data", str(folder / "data.csv"), "--target", "target", "--rows", "4",
                 "--out", str(folder / "values.csv"), "--force", *extra])


def test_explain_a_saved_pipeline(files):
    folder, model, X, y = files
    assert _explain(folder, "--model-file", str(folder / "model.skops")) == 0
    table = pd.read_csv(folder / "values.csv", index_col=0)
    encoded = encode(model, X)
    expected = si.BoostingExplainer(model[-1], encoded, y=y)(encoded.iloc[:4])
    np.testing.assert_allclose(table.drop(columns="base_value").to_numpy(), expected.values, rtol=1e-6, atol=1e-9)
    reconstructed = table["base_value"] + table.drop(columns="base_value").sum(axis=1)
    np.testing.assert_allclose(reconstructed, model.predict(X.iloc[:4]), rtol=1e-6)  # the saved model's own predict


def test_model_file_refusals(files, capsys):
    folder, model, X, _ = files
    assert _explain(folder, "--model-file", str(folder / "model.skops"), "--model", "ridge") == 2
    assert "pass one of the two" in capsys.readouterr().err
    (folder / "damaged.skops").write_bytes((folder / "model.skops").read_bytes()[:200])
    assert _explain(folder, "--model-file", str(folder / "damaged.skops")) == 2
    assert "damaged" in capsys.readouterr().err
    with open(folder / "unfitted.skops", "wb") as stream:
        save_model(GradientBoostingRegressor(), stream)
    assert _explain(folder, "--model-file", str(folder / "unfitted.skops")) == 2
    assert "not a fitted estimator" in capsys.readouterr().err


def test_a_model_file_that_would_run_code_is_refused(tmp_path):
    import skops.io as sio

    with pytest.raises(TypeError, match="outside the trusted types"):
        save_model(FunctionTransformer(os.getcwd), io.BytesIO())
    crafted = sio.dumps({"shap_instances_model": FunctionTransformer(os.getcwd)})  # written by another program
    with pytest.raises(DataValidationError, match="outside the trusted types"):
        load_model(io.BytesIO(crafted))
    with pytest.raises(DataValidationError, match="not a model file"):
        load_model(io.BytesIO(sio.dumps({"something": 1})))


def test_a_model_file_whose_state_cannot_predict_is_refused_naming_it(files, capsys):
    """A file of trusted types with a state no fit leaves (coefficients of text): before, NumPy's 'could not convert
    string to float', naming neither the file nor the fix; now refused at the boundary, naming the file."""
    from sklearn.linear_model import Ridge

    folder, _, X, y = files
    model = Ridge().fit(X, y)
    model.coef_ = np.array(["a"] * X.shape[1])
    with open(folder / "text_coef.skops", "wb") as stream:
        save_model(model, stream)
    assert _explain(folder, "--model-file", str(folder / "text_coef.skops")) == 2
    assert "text_coef.skops holds a Ridge that cannot predict two rows of --data" in capsys.readouterr().err
