"""A pytest plugin for running shap's own test suite against this package (benchmarks/run_shap_plot_tests.py).

Loaded with ``-p _shap_dropin``. It records every test's outcome, the first line of its error and whether this
package's explainer stood in, in the JSON file ``$SHAP_DROPIN_OUT``. ``$SHAP_DROPIN`` chooses the run:

- unset: the control run, shap untouched;
- ``instances``: ``shap.TreeExplainer`` and ``shap.Explainer`` build this package's explainer
  (``shap_instances.Explainer(model, data, y=model.predict(data))``: the training rows are the background data, their
  targets the model's own predictions) wherever it supports the model, so the tests' explanations are over training
  rows; where it does not (a masker, a function), shap's own explainer is built as before;
- ``explainer_class``: ``shap.Explainer`` and ``shap.explainers.Explainer`` are ``shap_instances.Explainer``.

In every run, the control included (so the comparison stays fair), ``shap.datasets`` files that an installed package
ships offline are served from there instead of downloaded (:func:`_offline_datasets`); shap's own loader still reads
them, so columns and dtypes are shap's. This replaces names inside the test process only; nothing is installed and
shap's files are not changed.
"""

from __future__ import annotations

import json
import os

import pytest

_RESULTS: dict[str, dict] = {}
_STOOD_IN: set[str] = set()
_CURRENT = {"test": ""}


def _build(fallback, model, data):
    """This package's explainer of ``model`` over the training rows ``data``, else ``fallback()`` (shap's)."""
    import numpy as np

    import shap_instances as si
    from shap_instances.exceptions import ShapInstancesError

    if not hasattr(data, "shape") or not hasattr(model, "predict"):
        return fallback()
    try:
        explainer = si.Explainer(model, data, y=np.asarray(model.predict(data)))
    except (ShapInstancesError, TypeError, ValueError):
        return fallback()
    if isinstance(explainer, si.InstanceExplainer):
        _STOOD_IN.add(_CURRENT["test"])
    return explainer


class _Deferred:
    """shap's ``TreeExplainer(model)`` without background data: the first rows explained become the training rows."""

    def __init__(self, original, model, kwargs):
        self._original, self._model, self._kwargs, self._explainer = original, model, kwargs, None

    def _built(self, X):
        if self._explainer is None:
            self._explainer = _build(lambda: self._original(self._model, **self._kwargs), self._model, X)
        return self._explainer

    def __call__(self, X, *args, **kwargs):
        return self._built(X)(X, *args, **kwargs)

    def shap_values(self, X, *args, **kwargs):
        return self._built(X).shap_values(X, *args, **kwargs)

    def shap_interaction_values(self, X, *args, **kwargs):
        return self._built(X).shap_interaction_values(X, *args, **kwargs)

    def __getattr__(self, name):
        if self._explainer is None:  # e.g. expected_value before any call: shap's explainer answers
            self._explainer = self._original(self._model, **self._kwargs)
        return getattr(self._explainer, name)


def _stand_in(original):
    def make(model, data=None, *args, **kwargs):
        if data is None and not args:
            return _Deferred(original, model, kwargs)
        if args or kwargs:  # shap's own options (link, feature_perturbation, ...): shap's explainer
            return original(model, data, *args, **kwargs)
        return _build(lambda: original(model, data), model, data)

    return make


#: scikit-learn's OpenML test fixture of the adult census table: the first 10 rows of UCI's ``adult.data``, the file
#: ``shap.datasets.adult`` downloads (one leading ID column more, commas without the file's blank after them).
ADULT_FIXTURE = ("sklearn", "datasets/tests/data/openml/id_1119/data-v1-dl-54002.arff.gz")


def _adult_data(into: str) -> str:
    """``adult.data`` in UCI's format (``39, State-gov, ...``), written into ``into`` from the offline fixture."""
    import gzip
    from importlib.resources import files

    package, path = ADULT_FIXTURE
    with gzip.open(str(files(package).joinpath(path)), "rt") as f:
        rows = [line.strip().split(",")[1:] for line in f if line.strip() and line[0] not in "@%"]
    target = os.path.join(into, "adult.data")
    with open(target, "w") as f:
        f.writelines(", ".join(row) + "\n" for row in rows)
    return target


def _offline_datasets() -> dict[str, str]:
    """Serve the ``shap.datasets`` files that have an offline source (today: ``adult.data``) from a temporary folder.

    ``shap.datasets.cache(url)`` returns the local file for those names; every other name goes to shap's own cache
    (and so still needs the network: california, imdb, a1a, ... fail as an environment failure). Returns
    ``{file name: local path}``.
    """
    import tempfile

    import shap.datasets

    served = {"adult.data": _adult_data(tempfile.mkdtemp(prefix="shap-offline-"))}
    original = shap.datasets.cache

    def cache(url, file_name=None):
        name = file_name or os.path.basename(url)
        return served[name] if name in served else original(url, file_name)

    shap.datasets.cache = cache
    return served


def pytest_configure():
    _offline_datasets()
    mode = os.environ.get("SHAP_DROPIN", "")
    if not mode:
        return
    import shap

    import shap_instances as si

    if mode == "instances":
        shap.TreeExplainer = _stand_in(shap.TreeExplainer)
        shap.Explainer = _stand_in(shap.Explainer)
    elif mode == "explainer_class":
        shap.Explainer = si.Explainer
        shap.explainers.Explainer = si.Explainer
    else:
        raise pytest.UsageError(f"SHAP_DROPIN={mode!r}: choose instances or explainer_class")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item):
    _CURRENT["test"] = item.nodeid
    yield


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    entry = _RESULTS.setdefault(item.nodeid, {"outcome": "passed", "error": ""})
    if report.failed or (report.skipped and entry["outcome"] == "passed"):
        entry["outcome"] = "skipped" if report.skipped else "failed"
        if call.excinfo is not None:
            message = str(call.excinfo.value).strip()
            entry["error"] = f"{call.excinfo.typename}: {message.splitlines()[0] if message else ''}"[:300]
        elif report.skipped:
            longrepr = report.longrepr
            entry["error"] = str(longrepr[-1] if isinstance(longrepr, tuple) else longrepr)[:300]


def pytest_sessionfinish():
    path = os.environ.get("SHAP_DROPIN_OUT")
    if path:
        for nodeid, entry in _RESULTS.items():
            entry["stood_in"] = nodeid in _STOOD_IN
        with open(path, "w") as f:
            json.dump(_RESULTS, f, indent=1)
