"""``shap-instances report --model-file``: a fitted model of the user's, never changed, its clones refitted."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.compose import ColumnTransformer
from sklearn.ensemble import RandomForestClassifier
from sklearn.linear_model import Ridge
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

from shap_instances.cli import main
from shap_instances.datasets import load_diabetes
from shap_instances.report._context import score
from shap_instances.utils import save_model


def _save(model, path):
    with open(path, "wb") as stream:
        save_model(model, stream)
    return path.read_bytes()


def _report(folder, data, *extra):
    return main(["report", "--data", str(data), "--target", "target", "--out", str(folder / "report"), "--silent",
                 "--force", "--time-budget", "30", *extra])


@pytest.fixture(scope="module")
def diabetes(tmp_path_factory):
    folder = tmp_path_factory.mktemp("report_model_file")
    X, y = load_diabetes()
    X, y = X.iloc[:120], y.iloc[:120]
    pd.concat([X, y.rename("target")], axis=1).to_csv(folder / "data.csv", index=False)
    model = make_pipeline(StandardScaler(), Ridge(alpha=3.0)).fit(X, y)
    saved = _save(model, folder / "model.skops")
    return folder, model, saved


@pytest.mark.slow  # a whole report: ~10 s alone
def test_report_explains_clones_of_a_saved_pipeline(diabetes):
    folder, model, saved = diabetes
    assert _report(folder, folder / "data.csv", "--model-file", str(folder / "model.skops")) == 0
    html = (folder / "report" / "index.html").read_text()
    assert "--model-file: the file&#x27;s model (Ridge after StandardScaler)" in html or \
        "--model-file: the file's model (Ridge after StandardScaler)" in html
    assert "Section skipped: the forest section explains a bootstrap random forest" in html
    assert "Residual decomposition" in html and "Representer points (Ridge)" in html
    # the overview scores a clone of the file's pipeline refitted on the report's training split (same split)
    data = pd.read_csv(folder / "data.csv")
    X, y = data.drop(columns="target"), data["target"]
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.2, random_state=0)
    refit = clone(model).fit(X_train, y_train)
    assert score(refit, X_test, y_test, False) in html
    assert score(model, X_test, y_test, False) not in html  # not the file's model, fitted on every row
    assert (folder / "model.skops").read_bytes() == saved  # the user's file is unchanged


@pytest.mark.slow  # a whole report: ~5 s alone
def test_report_grows_a_clone_of_a_saved_forest_on_a_table_with_a_string_column(tmp_path):
    from sklearn.datasets import load_breast_cancer

    X, y = load_breast_cancer(return_X_y=True, as_frame=True)
    X = X.iloc[:150, :5].assign(texture_band=pd.cut(X["mean texture"].iloc[:150], 3, labels=["low", "mid", "high"])
                                .astype(str))
    y = y.iloc[:150]
    pd.concat([X, y.rename("target")], axis=1).to_csv(tmp_path / "data.csv", index=False)
    preprocess = ColumnTransformer([("text", OneHotEncoder(sparse_output=False), ["texture_band"])],
                                   remainder="passthrough")
    model = make_pipeline(preprocess, RandomForestClassifier(n_estimators=30, random_state=1)).fit(X, y)
    trees = [tree.tree_.node_count for tree in model[-1].estimators_]
    saved = _save(model, tmp_path / "forest.skops")
    assert _report(tmp_path, tmp_path / "data.csv", "--task", "classification", "--model-file",
                   str(tmp_path / "forest.skops")) == 0
    html = (tmp_path / "report" / "index.html").read_text()
    assert "Random forest: which training rows make each prediction" in html
    assert "grows a clone of its forest" in html and "linear probability model" in html
    assert "Section skipped: representer points need a regularised linear model, not RandomForestClassifier" in html
    assert (tmp_path / "forest.skops").read_bytes() == saved
    assert [tree.tree_.node_count for tree in model[-1].estimators_] == trees  # the object itself untouched


def test_report_refuses_bad_model_files(diabetes, tmp_path, capsys):
    folder, model, _ = diabetes
    assert _report(folder, folder / "data.csv", "--model-file", str(folder / "data.csv")) == 2  # a CSV
    assert "damaged or truncated" in capsys.readouterr().err
    assert _report(folder, folder / "data.csv", "--model-file", str(folder / "model.skops"), "--model", "ridge") == 2
    assert "pass one of the two" in capsys.readouterr().err
    _save(make_pipeline(StandardScaler(), Ridge()), tmp_path / "unfitted.skops")
    assert _report(folder, folder / "data.csv", "--model-file", str(tmp_path / "unfitted.skops")) == 2
    assert "not a fitted estimator" in capsys.readouterr().err
    data = pd.read_csv(folder / "data.csv")
    data.drop(columns=["bmi", "s5"]).to_csv(tmp_path / "fewer.csv", index=False)
    assert _report(tmp_path, tmp_path / "fewer.csv", "--model-file", str(folder / "model.skops")) == 2
    err = capsys.readouterr().err
    assert "fitted on columns that --data lacks: bmi, s5 (2 of 10)" in err
    assert not (tmp_path / "report").exists()  # refused before any work
    _save(Ridge().fit(np.zeros((5, 3)), np.arange(5.0)), tmp_path / "array.skops")
    assert _report(folder, folder / "data.csv", "--model-file", str(tmp_path / "array.skops")) == 2
    assert "takes 3 columns (fitted on an array, so unnamed), but --data has 10" in capsys.readouterr().err


def test_plan_without_the_forest_gives_it_no_time_and_no_line():
    from shap_instances.report._plan import Costs, make_plan

    costs = Costs(spent=2.0, per_permutation=0.01, per_aggregate=0.002, per_tree=0.0, gap_fixed_per_tree=0.0,
                  gap_per_row_tree=0.0, n_train=400, n_test=100, n_explained=400, n_features=10)
    tight = dict(costs.__dict__, spent=30.0)  # over the budget before any section: every note is given
    for c in (costs, Costs(**tight)):
        with_forest = make_plan(c, 20.0, residual=True, n_players=400)
        plan = make_plan(c, 20.0, residual=True, n_players=400, forest=False)
        assert "forest" in with_forest.sections and "forest" not in plan.sections
        assert not any("forest" in line for line in plan.lines())  # no tree timing, no forest note
        assert plan.sections["residual"].estimate >= with_forest.sections["residual"].estimate
