"""Regression tests of issue 26's faults (docs/reliability.md): each names the input, what it did before, and
what it does now. Checkpoints are tested in tests/test_checkpoint.py, the KNN plugin with the plugin."""

from __future__ import annotations

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


def test_cli_isotonic_with_a_string_target_is_one_clear_line(tmp_path, capsys, table):
    X, y = table
    path = _write(tmp_path, X.assign(y=np.where(y > 0, "yes", "no")))
    code = main(["explain", "--data", path, "--target", "y", "--explainer", "isotonic", "--rows", "1",
                 "--out", str(tmp_path / "v.csv")])
    err = capsys.readouterr().err
    assert code == 2 and "numeric model output" in err and "internal error" not in err
