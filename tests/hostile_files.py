"""Hostile skops files (issue 39): real saved models and explainers with a node of the schema replaced by a class
of NumPy, scikit-learn, SciPy, XGBoost, LightGBM or the standard library, built by any of skops' loaders, with a
state that names a folder to delete and a handle to free.

Each case is loaded through an entry point and classified: ``refused`` (a DataValidationError), ``clear error`` (another
shap_instances error: the file loaded, the explainer refused an unfitted model), ``loaded`` (every
class the file names is on the trusted list for its loader), or the failures ``untrusted type built``,
``obscure crash`` (any other exception) and ``side effect`` (a file created or deleted). A crash of the process
shows as the script's exit status. Run as a script (what tests/test_persistence_types.py does, in a child
process)::

    PYTHONPATH=. python -m tests.hostile_files --cases 200 --seed 0
"""

from __future__ import annotations

import argparse
import gc
import importlib
import inspect
import io
import json
import os
import pkgutil
import tempfile
import warnings
import zipfile
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

#: Modules whose exported classes the fuzz substitutes (every class they export, enumerated at run time).
MODULES = ("numpy", "numpy.lib", "numpy.lib._datasource", "numpy.ma", "numpy.random", "numpy.ctypeslib",
           "scipy.sparse", "scipy.stats", "scipy.io", "xgboost", "xgboost.core", "xgboost.tracker", "lightgbm",
           "lightgbm.basic", "os", "io", "shutil", "tempfile", "subprocess", "pathlib", "socket", "ctypes",
           "zipfile", "logging", "threading", "weakref", "collections", "functools", "builtins", "mmap",
           "sqlite3", "http.server", "shap_instances.utils", "sklearn.datasets")
#: skops' loaders, each building a node's class its own way.
LOADERS = ("ObjectNode", "ListNode", "SetNode", "TupleNode", "DictNode", "TypeNode", "FunctionNode",
           "ConstructorFromReduceNode", "ReduceNode", "NdArrayNode", "MethodNode", "PartialNode", "LossNode",
           "TreeNode", "SparseMatrixNode", "OperatorFuncNode", "DefaultDictNode")


def classes() -> list[tuple[str, str]]:
    """(module, class name) of every class the modules of :data:`MODULES` and scikit-learn's subpackages export."""
    import sklearn

    names = list(MODULES) + [f"sklearn.{m.name}" for m in pkgutil.iter_modules(sklearn.__path__)
                             if not m.name.startswith("_") and m.name not in ("tests", "conftest")]
    found = set()
    for module_name in names:
        try:
            module = importlib.import_module(module_name)
        except ImportError:
            continue
        for attribute, value in vars(module).items():
            if inspect.isclass(value) and not attribute.startswith("__"):
                found.add((value.__module__, value.__name__))
    return sorted(found)


def graft(data: bytes, site: str, node: dict[str, Any]) -> bytes:
    """``data`` (a skops zip) with ``node`` in place of the model (``site="model"``) or set as its
    ``_sklearn_version`` attribute (``site="attribute"``)."""
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        files = {name: archive.read(name) for name in archive.namelist()}
    schema = json.loads(files["schema.json"])
    files.update(node.pop("__files__", {}))
    model = _model_node(schema)
    if site == "model":
        model.clear()
        model.update(node)
    else:
        model["content"]["content"]["_sklearn_version"] = node
    files["schema.json"] = json.dumps(schema).encode()
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        for name, content in files.items():
            archive.writestr(name, content)
    return out.getvalue()


def _model_node(schema: dict[str, Any]) -> dict[str, Any]:
    """The node of the first fitted estimator in the schema (an ObjectNode whose state names _sklearn_version)."""
    stack = [schema]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            content = item.get("content")
            if item.get("__loader__") == "ObjectNode" and isinstance(content, dict) \
                    and "_sklearn_version" in content.get("content", {}):
                return item
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    raise ValueError("no fitted estimator in the file")


def hostile_state(victim: Path) -> dict[str, Any]:
    """The state a hostile node carries: a folder to delete on collection, handles to free, paths to open."""
    import skops.io as sio

    state = {"_istmpdest": True, "_destpath": str(victim), "handle": 123456789, "_handle": 123456789,
             "_network": True, "name": str(victim / "new"), "filename": str(victim / "new"), "path": str(victim)}
    with zipfile.ZipFile(io.BytesIO(sio.dumps(state))) as archive:
        return json.loads(archive.read("schema.json"))


def node(module: str, name: str, loader: str, victim: Path) -> dict[str, Any]:
    """A schema node naming ``module.name``, built by ``loader``, with :func:`hostile_state` wherever the loader
    reads a state or arguments."""
    state = hostile_state(victim)
    arguments = {"__class__": "tuple", "__module__": "builtins", "__loader__": "TupleNode",
                 "content": [{"__class__": "str", "__module__": "builtins", "__loader__": "JsonNode",
                              "content": json.dumps(str(victim)), "is_json": True}]}
    base = {"__class__": name, "__module__": module, "__loader__": loader}
    if loader in ("ObjectNode", "DefaultDictNode"):
        return {**base, "content": state}
    if loader in ("ListNode", "SetNode", "TupleNode"):
        return {**base, "content": arguments["content"]}
    if loader == "DictNode":
        return {**state, "__class__": name, "__module__": module}
    if loader in ("ConstructorFromReduceNode", "OperatorFuncNode"):
        return {**base, "content": arguments, "attrs": arguments}
    if loader in ("ReduceNode", "LossNode", "TreeNode"):
        return {**base, "__reduce__": {"args": arguments}, "content": state}
    if loader == "NdArrayNode":
        buffer = io.BytesIO()
        np.save(buffer, np.arange(3.0), allow_pickle=False)
        return {**base, "type": "numpy", "file": "hostile.npy", "__files__": {"hostile.npy": buffer.getvalue()}}
    if loader == "SparseMatrixNode":
        return {**base, "type": "scipy", "file": "hostile.npz", "__files__": {"hostile.npz": b"PK"}}
    if loader == "MethodNode":
        return {**base, "content": {"func": "__del__", "obj": {**base, "__loader__": "ObjectNode", "content": state}}}
    if loader == "PartialNode":
        return {**base, "content": {"func": {**base, "__loader__": "FunctionNode"}, "args": arguments,
                                    "kwds": state, "namespace": state}}
    return base  # TypeNode, FunctionNode: the class or function itself


def bases() -> dict[str, tuple[bytes, Any]]:
    """Real files: a saved Ridge (read by load_model) and a saved NaiveBayesExplainer (read by its load)."""
    from sklearn.datasets import load_iris
    from sklearn.linear_model import Ridge
    from sklearn.naive_bayes import GaussianNB

    import shap_instances as si
    from shap_instances.utils import load_model, save_model

    X, y = load_iris(return_X_y=True)
    model_file = io.BytesIO()
    save_model(Ridge().fit(X, y), model_file)
    explainer_file = io.BytesIO()
    si.NaiveBayesExplainer(GaussianNB().fit(X, y), X).save(explainer_file)
    return {"load_model": (model_file.getvalue(), load_model),
            "NaiveBayesExplainer.load": (explainer_file.getvalue(), si.NaiveBayesExplainer.load)}


def run_case(data: bytes, load: Any, victim: Path, workdir: Path) -> str:
    """Load ``data`` with ``load`` in ``workdir``; the outcome, side effects on ``victim`` and ``workdir`` included."""
    from shap_instances.exceptions import DataValidationError, ShapInstancesError
    from shap_instances.utils import untrusted_types

    before = sorted(os.listdir(victim)), sorted(os.listdir(workdir))
    outcome = "loaded"
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            load(io.BytesIO(data))
    except DataValidationError:
        outcome = "refused"
    except ShapInstancesError:  # the file loaded; the explainer refused what it holds (an unfitted model)
        outcome = "clear error"
    except Exception as exc:  # noqa: BLE001 - any other exception is the failure this fuzz looks for
        outcome = f"obscure crash: {type(exc).__name__}: {str(exc)[:120]}"
    gc.collect()
    if outcome == "loaded" and untrusted_types(data):
        outcome = "untrusted type built"
    if not victim.is_dir() or (sorted(os.listdir(victim)), sorted(os.listdir(workdir))) != before:
        outcome = "side effect"
    return outcome


def fuzz(cases: int, seed: int) -> Counter:
    """``cases`` random hostile files over every base, site and loader; returns the outcome counts (failures
    keyed ``'<outcome> | <case>'`` so that they can be read)."""
    rng = np.random.default_rng(seed)
    from shap_instances.utils._trusted_types import trusted_types

    pool, files = classes(), bases()
    allowed = sorted((loader, dotted) for loader, names in trusted_types().items() for dotted in names)
    counts: Counter = Counter()
    with tempfile.TemporaryDirectory() as top:
        victim, workdir = Path(top, "victim"), Path(top, "work")
        victim.mkdir()
        workdir.mkdir()
        (victim / "thesis.tex").write_text("precious")
        cwd = os.getcwd()
        os.chdir(workdir)
        try:
            for _ in range(cases):
                module, name = pool[rng.integers(len(pool))]
                loader, site = LOADERS[rng.integers(len(LOADERS))], ("model", "attribute")[rng.integers(2)]
                if rng.random() < 0.3:  # a trusted type with a hostile state: the checks after the type check
                    loader, dotted = allowed[rng.integers(len(allowed))]
                    module, _, name = dotted.rpartition(".")
                entry = sorted(files)[rng.integers(len(files))]
                data, load = files[entry]
                outcome = run_case(graft(data, site, node(module, name, loader, victim)), load, victim, workdir)
                case = f"{module}.{name} {loader} {site}"
                key = outcome if outcome in ("refused", "loaded", "clear error") else f"{outcome} | {case}"
                counts[key] += 1
        finally:
            os.chdir(cwd)
    return counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cases", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    print(json.dumps(fuzz(args.cases, args.seed)))


if __name__ == "__main__":
    main()
