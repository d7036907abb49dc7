"""Loading trusts named types, not libraries (issue 39, docs/reliability.md "Saved explainers").

Before: any class of NumPy, scikit-learn, SciPy, XGBoost or LightGBM was built from a file, so a
``numpy.lib._datasource.DataSource`` hidden in a Ridge's ``_sklearn_version`` deleted a folder when collected
(through ``Cls.load``, ``utils.load_model`` and ``explain --model-file``, which exited 0), and an
``xgboost.core.DMatrix`` with a handle from the file killed the process.
"""

from __future__ import annotations

import gc
import io
import json
import re
import subprocess
import sys
import zipfile

import numpy as np
import pandas as pd
import pytest
from sklearn.calibration import CalibratedClassifierCV
from sklearn.datasets import load_iris
from sklearn.ensemble import GradientBoostingRegressor, HistGradientBoostingClassifier, RandomForestRegressor
from sklearn.feature_selection import SelectKBest
from sklearn.gaussian_process import GaussianProcessClassifier
from sklearn.linear_model import LogisticRegression, Ridge, SGDClassifier
from sklearn.model_selection import GridSearchCV, StratifiedKFold
from sklearn.naive_bayes import GaussianNB
from sklearn.neighbors import KNeighborsClassifier, KNeighborsRegressor
from sklearn.neural_network import MLPClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import LinearSVC

import shap_instances as si
from shap_instances.cli import main
from shap_instances.exceptions import DataValidationError
from shap_instances.utils import load_model, save_model, untrusted_types
from shap_instances.utils._trusted_types import trusted_types

from .hostile_files import fuzz, graft, node

#: Listed classes whose ``__del__`` was reviewed: each frees a handle its own ``__setstate__`` made from the
#: model's bytes (never a value of the file).
REVIEWED_FINALISERS = {"xgboost.core.Booster", "lightgbm.basic.Booster"}


@pytest.fixture(scope="module")
def iris():
    return load_iris(return_X_y=True)


@pytest.fixture(scope="module")
def ridge_file(iris):
    buffer = io.BytesIO()
    save_model(Ridge().fit(*iris), buffer)
    return buffer.getvalue()


@pytest.fixture(scope="module")
def explainer_file(iris):
    X, y = iris
    buffer = io.BytesIO()
    si.NaiveBayesExplainer(GaussianNB().fit(X, y), X).save(buffer)
    return buffer.getvalue()


def _import(dotted):
    module, _, name = dotted.rpartition(".")
    try:
        found = __import__(module, fromlist=[name])
    except ImportError:
        return None  # an optional library that is not installed
    return getattr(found, name)  # every entry names something that exists


def test_the_list_names_types_for_loaders_and_no_finaliser_or_file_type():
    listed = trusted_types()
    for loader in ("ObjectNode", "ListNode", "SetNode", "TupleNode", "DictNode", "TypeNode", "NdArrayNode"):
        for dotted in ("numpy.lib._datasource.DataSource", "numpy.memmap", "numpy._core.memmap.memmap",
                       "xgboost.core.DMatrix", "shutil.rmtree", "os.system",
                       "sklearn.metrics._dist_metrics.PyFuncDistance64"):
            assert dotted not in listed.get(loader, ())
    assert not {"MethodNode", "ConstructorFromReduceNode", "OperatorFuncNode"} & set(listed)
    assert listed["PartialNode"] == {"functools.partial"}
    assert all(f.startswith(("numpy.", "sklearn.utils.validation.check_array", "sklearn.feature_selection."))
               for f in listed["FunctionNode"])
    for dotted in listed["FunctionNode"] | listed["LossNode"] | listed["TreeNode"]:
        assert _import(dotted) is not None, dotted
    for dotted in listed["ObjectNode"]:
        cls = _import(dotted)
        if cls is None:
            continue
        assert isinstance(cls, type), dotted
        finalisers = [k for k in cls.__mro__[:-1] if "__del__" in vars(k)]
        assert not finalisers or dotted in REVIEWED_FINALISERS, dotted


def _datasource(victim):
    return node("numpy.lib._datasource", "DataSource", "ObjectNode", victim)


def test_a_datasource_in_a_model_file_is_refused_and_deletes_nothing(ridge_file, tmp_path):
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "thesis.tex").write_text("precious")
    for site in ("attribute", "model"):
        crafted = graft(ridge_file, site, _datasource(victim))
        assert untrusted_types(crafted) == ["numpy.lib._datasource.DataSource (ObjectNode)"]
        with pytest.raises(DataValidationError, match=r"DataSource \(ObjectNode\).*trusted=True"):
            load_model(io.BytesIO(crafted))
        gc.collect()
        assert (victim / "thesis.tex").read_text() == "precious"


def test_a_datasource_in_a_saved_explainer_is_refused_and_deletes_nothing(explainer_file, tmp_path):
    victim = tmp_path / "victim"
    victim.mkdir()
    crafted = graft(explainer_file, "attribute", _datasource(victim))
    with pytest.raises(DataValidationError, match=r"outside the trusted types.*DataSource"):
        si.NaiveBayesExplainer.load(io.BytesIO(crafted))
    gc.collect()
    assert victim.is_dir()


def test_explain_model_file_refuses_a_datasource_and_exits_2(ridge_file, iris, tmp_path, capsys):
    victim = tmp_path / "victim"
    victim.mkdir()
    X, y = iris
    np.savetxt(tmp_path / "data.csv", np.column_stack([X, y]), delimiter=",", header="a,b,c,d,target", comments="")
    (tmp_path / "evil.skops").write_bytes(graft(ridge_file, "attribute", _datasource(victim)))
    code = main(["explain", "--data", str(tmp_path / "data.csv"), "--target", "target", "--rows", "2",
                 "--out", str(tmp_path / "values.csv"), "--model-file", str(tmp_path / "evil.skops")])
    gc.collect()
    assert code == 2 and victim.is_dir() and not (tmp_path / "values.csv").exists()
    assert "DataSource" in capsys.readouterr().err


_CHILD = """
import io, sys
from shap_instances.utils import load_model
import shap_instances as si
from shap_instances.cli import main
from shap_instances.exceptions import DataValidationError
data = open(sys.argv[1], "rb").read()
for load in (load_model, si.NaiveBayesExplainer.load):
    try:
        load(io.BytesIO(data))
    except DataValidationError as exc:
        print("refused:", str(exc)[:300])
print("cli", main(["explain", "--data", sys.argv[2], "--target", "target", "--rows", "2", "--out", sys.argv[3],
                   "--model-file", sys.argv[1]]))
"""


def _in_child(crafted, tmp_path, iris):
    """Load ``crafted`` through the three entry points in a child process: a crash is its exit status."""
    X, y = iris
    np.savetxt(tmp_path / "data.csv", np.column_stack([X, y]), delimiter=",", header="a,b,c,d,target", comments="")
    (tmp_path / "crafted.skops").write_bytes(crafted)
    done = subprocess.run([sys.executable, "-c", _CHILD, str(tmp_path / "crafted.skops"), str(tmp_path / "data.csv"),
                           str(tmp_path / "values.csv")], capture_output=True, text=True, timeout=300, check=False)
    return done.returncode, done.stdout + done.stderr


@pytest.mark.slow  # a child process importing shap_instances, the CLI and XGBoost: ~10 s
def test_a_dmatrix_with_a_handle_from_the_file_is_refused_without_a_crash(ridge_file, tmp_path, iris):
    pytest.importorskip("xgboost")
    crafted = graft(ridge_file, "attribute", node("xgboost.core", "DMatrix", "ObjectNode", tmp_path))
    code, output = _in_child(crafted, tmp_path, iris)
    assert code == 0, output  # before: -11 (SIGSEGV)
    assert output.count("refused:") == 2 and "DMatrix (ObjectNode)" in output and "cli 2" in output


def _corrupt_booster(model, iris, offset, value):
    """A saved model whose booster bytes (the largest binary member of the file) have one byte changed."""
    buffer = io.BytesIO()
    save_model(model.fit(*iris), buffer)
    with zipfile.ZipFile(buffer) as archive:
        files = {name: archive.read(name) for name in archive.namelist()}
    member = max((n for n in files if n.endswith(".bin")), key=lambda n: len(files[n]))
    raw = bytearray(files[member])
    raw[offset % len(raw)] = value
    files[member] = bytes(raw)
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        for name, content in files.items():
            archive.writestr(name, content)
    return out.getvalue()


_LOAD = """
import io, sys
from shap_instances.utils import load_model
from shap_instances.exceptions import DataValidationError
try:
    load_model(open(sys.argv[1], "rb"), trusted=sys.argv[2] == "trusted").predict([[5.0, 3.0, 1.5, 0.2]])
    print("loaded")
except DataValidationError as exc:
    print("refused:", exc)
"""


@pytest.mark.slow  # child processes importing XGBoost: ~1 min
@pytest.mark.parametrize("offset", [700, 1300])  # one byte of the serialised booster set to 0xFF
def test_a_booster_that_crashes_its_library_is_refused_in_a_child_process(iris, tmp_path, offset):
    """Loaded as trusted (no probe), XGBoost's own loader dies of these files (SIGSEGV: undefined behaviour, so
    not asserted); loaded as untrusted, the probe's child process dies instead and the file is refused."""
    xgboost = pytest.importorskip("xgboost")
    (tmp_path / "m.skops").write_bytes(_corrupt_booster(xgboost.XGBClassifier(n_estimators=3), iris, offset, 0xFF))
    outcome = {}
    for mode in ("trusted", "untrusted"):
        done = subprocess.run([sys.executable, "-c", _LOAD, str(tmp_path / "m.skops"), mode], capture_output=True,
                              text=True, timeout=300, check=False)
        outcome[mode] = done.returncode, done.stdout
    print("loaded as trusted:", outcome["trusted"])  # seen: exit status -11 at both offsets
    assert outcome["untrusted"][0] == 0 and "refused:" in outcome["untrusted"][1], outcome
    assert "cannot rebuild safely" in outcome["untrusted"][1]


def _tree_file(fitted, field, value):
    """A saved model whose first node records with a ``field`` have ``value`` there at the root."""
    buffer = io.BytesIO()
    save_model(fitted, buffer)
    with zipfile.ZipFile(buffer) as archive:
        files = {name: archive.read(name) for name in archive.namelist()}
    for name, content in files.items():
        if name.endswith(".npy"):
            array = np.load(io.BytesIO(content), allow_pickle=False)
            if array.dtype.names and field in array.dtype.names:
                array[field][0] = value
                patched = io.BytesIO()
                np.save(patched, array, allow_pickle=False)
                files[name] = patched.getvalue()
                break
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        for name, content in files.items():
            archive.writestr(name, content)
    return out.getvalue()


@pytest.mark.parametrize(("model", "field", "value", "reason"), [
    (RandomForestRegressor(3, random_state=0), "left_child", 10**6, "children point outside"),
    (RandomForestRegressor(3, random_state=0), "left_child", 0, "children point outside"),  # a cycle
    (RandomForestRegressor(3, random_state=0), "feature", 40, "features outside"),
    (GradientBoostingRegressor(n_estimators=3), "right_child", -5, "children point outside"),
    (HistGradientBoostingClassifier(max_iter=3), "left", 10**6, "children point outside"),
    (HistGradientBoostingClassifier(max_iter=3), "feature_idx", 9, "features outside"),
    (KNeighborsClassifier(algorithm="kd_tree", leaf_size=5), "idx_end", 10**6, "nodes do not split"),
    (KNeighborsClassifier(algorithm="ball_tree", leaf_size=5), "is_leaf", 1, "nodes do not split"),
], ids=["forest-child", "forest-cycle", "forest-feature", "gb-child", "hgb-child", "hgb-feature", "kd-range",
        "ball-leaf"])
def test_trees_whose_indices_leave_their_buffers_are_refused(iris, model, field, value, reason):
    """Before: loaded, then predict read outside the node buffer (a crash, or an endless loop on a cycle)."""
    with pytest.raises(DataValidationError, match=reason):
        load_model(io.BytesIO(_tree_file(model.fit(*iris), field, value)))


def test_a_tree_predictor_on_its_own_is_checked(iris):
    """A HistGradientBoosting tree outside its model (as an explainer's argument, say) is checked too."""
    from shap_instances.utils import hgb_predictors

    predictor = hgb_predictors(HistGradientBoostingClassifier(max_iter=2).fit(*iris))[0][0]
    with pytest.raises(DataValidationError, match="children point outside"):
        load_model(io.BytesIO(_tree_file(predictor, "left", 10**6)))
    np.testing.assert_array_equal(load_model(io.BytesIO(_tree_file(predictor, "gain", 1.0))).nodes["left"],
                                  predictor.nodes["left"])


@pytest.mark.parametrize("make", [
    lambda: MLPClassifier(max_iter=30), lambda: CalibratedClassifierCV(LinearSVC()), lambda: SGDClassifier(),
    lambda: make_pipeline(SelectKBest(k=2), LogisticRegression()),
    lambda: GridSearchCV(LogisticRegression(), {"C": [0.1, 1.0]}, cv=StratifiedKFold(3)),
    lambda: GaussianProcessClassifier(),
], ids=["mlp", "calibrated", "sgd-hinge", "select-k-best", "grid-search", "gaussian-process"])
@pytest.mark.usefixtures("one_thread")  # the Gaussian process's BLAS threads on a loaded machine: 14 s
def test_models_whose_helper_types_are_named_round_trip(iris, make):
    """Each holds a helper type (an optimiser, a calibrator, a compiled loss, a score function, masked arrays and a
    splitter, kernels) that the list names; the old rule took some of them as 'any class of scikit-learn'."""
    model = make().fit(*iris)
    buffer = io.BytesIO()
    save_model(model, buffer)
    np.testing.assert_array_equal(load_model(io.BytesIO(buffer.getvalue())).predict(iris[0]), model.predict(iris[0]))


def test_a_categorical_hist_gradient_boosting_round_trips():
    """Its preprocessor holds a partial of check_array (refused before: a function and a partial)."""
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.normal(size=200), "c": pd.Categorical(rng.choice(list("pqrstu"), 200))})
    y = (X.a > 0) ^ X.c.isin(["p", "q"])
    model = HistGradientBoostingClassifier(max_iter=5, categorical_features="from_dtype").fit(X, y)
    buffer = io.BytesIO()
    save_model(model, buffer)
    np.testing.assert_array_equal(load_model(io.BytesIO(buffer.getvalue())).predict_proba(X), model.predict_proba(X))


@pytest.mark.parametrize("model", [KNeighborsClassifier(algorithm="kd_tree", leaf_size=5),
                                   KNeighborsRegressor(algorithm="ball_tree", metric="manhattan"),
                                   KNeighborsClassifier(metric="minkowski", p=3)])
def test_nearest_neighbours_with_their_index_round_trip(iris, model):
    model.fit(*iris)
    buffer = io.BytesIO()
    save_model(model, buffer)
    np.testing.assert_array_equal(load_model(io.BytesIO(buffer.getvalue())).predict(iris[0]), model.predict(iris[0]))


def test_parameters_that_name_folders_are_refused(iris, tmp_path):
    model = make_pipeline(StandardScaler(), Ridge(), memory=str(tmp_path / "cache")).fit(*iris)
    buffer = io.BytesIO()
    save_model(model, buffer)
    with pytest.raises(DataValidationError, match=r"Pipeline whose parameters \['memory'\] name files"):
        load_model(io.BytesIO(buffer.getvalue()))


@pytest.mark.slow  # boosters load through a child process: ~10 s each
@pytest.mark.parametrize("library", ["xgboost", "lightgbm", "catboost"])
def test_boosters_round_trip(iris, library):
    module = pytest.importorskip(library)
    make = {"xgboost": lambda: module.XGBClassifier(n_estimators=3),
            "lightgbm": lambda: module.LGBMClassifier(n_estimators=3, verbose=-1),
            "catboost": lambda: module.CatBoostClassifier(iterations=3, verbose=0, allow_writing_files=False)}
    model = make[library]().fit(*iris)
    buffer = io.BytesIO()
    save_model(model, buffer)
    np.testing.assert_allclose(load_model(io.BytesIO(buffer.getvalue())).predict_proba(iris[0]),
                               model.predict_proba(iris[0]))


def test_a_fast_sample_of_hostile_files():
    """A few cases of tests/hostile_files.py's fuzz (the whole of it: the slow test below)."""
    counts = fuzz(8, seed=5)
    assert set(counts) <= {"refused", "loaded", "clear error"}, counts


@pytest.mark.slow  # 400 hostile files in a child process: ~3 min
def test_hostile_files():
    done = subprocess.run([sys.executable, "-m", "tests.hostile_files", "--cases", "400", "--seed", "39"],
                          capture_output=True, text=True, timeout=1200, check=False)
    assert done.returncode == 0, done.stderr[-2000:]  # a crash of the process (a signal) shows here
    counts = json.loads(done.stdout.strip().splitlines()[-1])
    assert set(counts) <= {"refused", "loaded", "clear error"}, counts
    assert counts.get("refused", 0) > 100


def test_a_file_that_unpacks_beyond_the_memory_left_is_refused(ridge_file, monkeypatch):
    """A zip bomb: a few kB that unpack to more than half the memory left are refused before anything is read."""
    from shap_instances.utils import _persistence

    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(ridge_file)) as archive, \
            zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as bomb:
        for name in archive.namelist():
            bomb.writestr(name, archive.read(name))
        bomb.writestr("zeros.bin", b"\0" * 2**23)
    assert len(out.getvalue()) < 2**16
    monkeypatch.setattr(_persistence, "available_memory_bytes", lambda: 2**23)
    with pytest.raises(DataValidationError, match=r"damaged or truncated .*unpacks to 8 MiB, more than half"):
        load_model(io.BytesIO(out.getvalue()))
    monkeypatch.setattr(_persistence, "available_memory_bytes", lambda: 2**30)
    assert type(load_model(io.BytesIO(out.getvalue()))).__name__ == "Ridge"


def _lightgbm_file(iris, line, value):
    """A saved LGBMClassifier whose model text has the first entry of ``line`` (``left_child``...) set to
    ``value`` in every tree."""
    lightgbm = pytest.importorskip("lightgbm")
    buffer = io.BytesIO()
    save_model(lightgbm.LGBMClassifier(n_estimators=3, verbose=-1).fit(*iris), buffer)
    with zipfile.ZipFile(buffer) as archive:
        files = {name: archive.read(name) for name in archive.namelist()}
    schema = files["schema.json"].decode()
    files["schema.json"] = re.sub(rf"(\\n{line}=)-?\d+", rf"\g<1>{value}", schema).encode()
    assert files["schema.json"] != schema.encode()
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        for name, content in files.items():
            archive.writestr(name, content)
    return out.getvalue()


@pytest.mark.slow  # child processes importing LightGBM: ~30 s
@pytest.mark.parametrize(("line", "value"), [("left_child", 1000000), ("split_feature", 77), ("left_child", 0)],
                         ids=["child-outside", "feature-outside", "cycle"])
def test_a_lightgbm_model_text_that_crashes_or_loops_is_refused_in_a_child_process(iris, tmp_path, line, value):
    """LightGBM parses its model text without checking children or features: a bad child index kills the process
    (std::terminate) or walks memory, a cycle loops forever at predict. Each is refused, the parent intact."""
    (tmp_path / "m.skops").write_bytes(_lightgbm_file(iris, line, value))
    done = subprocess.run([sys.executable, "-c", _LOAD, str(tmp_path / "m.skops"), "untrusted"], capture_output=True,
                          text=True, timeout=600, check=False)
    assert done.returncode == 0 and "refused:" in done.stdout, (done.returncode, done.stdout, done.stderr[-500:])
