"""Issue 39's boundary fuzzing, the surfaces that read and write files (tests/fuzz_boundary.py):

- **persistence**: safe-format files (skops) holding objects of the trusted libraries' classes with side-effecting
  finalisers or native handles (``DataSource``, ``DMatrix``, LightGBM's ``Booster``, ...), hidden in odd places of
  a model (an extra attribute, ``_sklearn_version``, inside a list, a dict, a tuple, a pipeline's step), loaded
  through ``load_model``, an explainer's ``load`` and the command line's ``--model-file``; damaged model files.
- **csv**: column names and class labels a spreadsheet would evaluate (``=cmd|' /C calc'!A0``), through ``explain``
  (wide and long) and ``report``: every cell written must be safe.
- **outputs**: a report manifest naming the user's files, ``explain --explain bad --force`` over an earlier output,
  and ``explain_partitions(out=)``: the user's files in the folder, input memory-mapped from it, a killed run, two
  runs into one folder, reusing a folder under an earlier result, links, ``out=""``, bad ``rows_per_part``,
  damaged folders reopened with ``memmap_explanation``.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import itertools
import json
import os
import time
import warnings
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .fuzz_boundary import isolated, refused_or_wrong, unsafe_cells
from .fuzz_faults import _damaged_files, classify
from .fuzz_faults_cli import run_command

#: Seconds a case may take before it is a hang (forked cases included).
CASE_SECONDS = 60.0
#: The marker a hostile object replaces in a saved model's schema.
MARK = "__fuzz_hostile__"


# ------------------------------------------------------------------------------------------ hostile objects
def _hostile_classes(victim: Path) -> dict[str, tuple[str, str, dict[str, Any]]]:
    """name -> (module, class, attributes): objects whose finaliser deletes ``victim`` or frees a native handle."""
    armed = {"_destpath": str(victim), "_istmpdest": True}
    return {
        "DataSource": ("numpy.lib._datasource", "DataSource", armed),
        "DataSource (numpy.lib.npyio)": ("numpy.lib.npyio", "DataSource", armed),
        "Repository": ("numpy.lib._datasource", "Repository", {**armed, "_baseurl": str(victim)}),
        "NpzFile": ("numpy.lib._npyio_impl", "NpzFile", {"zip": None, "fid": None, "f": None}),
        "xgboost DMatrix": ("xgboost.core", "DMatrix", {"handle": 1}),
        "xgboost Booster": ("xgboost.core", "Booster", {"handle": 1}),
        "xgboost RabitTracker": ("xgboost.tracker", "RabitTracker", {"handle": 1}),
        "lightgbm Booster": ("lightgbm.basic", "Booster", {"_handle": 1, "_network": False}),
        "lightgbm Dataset": ("lightgbm.basic", "Dataset", {"_handle": 1}),
        "lightgbm _InnerPredictor": ("lightgbm.basic", "_InnerPredictor",
                                     {"_handle": 1, "_InnerPredictor__is_manage_handle": True}),
    }


_ids = itertools.count(1 << 40)


def _json_node(value: Any) -> dict:
    return {"__class__": "str", "__module__": "builtins", "__loader__": "JsonNode", "content": json.dumps(value),
            "is_json": True, "__id__": next(_ids)}


def _object_node(module: str, name: str, attributes: dict[str, Any]) -> dict:
    """skops' node of an object of ``module.name`` whose ``__dict__`` is ``attributes`` (built with ``__new__``)."""
    key = {"__class__": "str", "__module__": "builtins", "__loader__": "TypeNode", "__id__": next(_ids)}
    state = {"__class__": "dict", "__module__": "builtins", "__loader__": "DictNode",
             "content": {k: _json_node(v) for k, v in attributes.items()},
             "key_types": {"__class__": "list", "__module__": "builtins", "__loader__": "ListNode",
                           "content": [key] * len(attributes), "__id__": next(_ids)}, "__id__": next(_ids)}
    return {"__class__": name, "__module__": module, "__loader__": "ObjectNode", "content": state,
            "__id__": next(_ids)}


def _plant(node: Any, hostile: dict) -> Any:
    """``node`` (a skops schema) with every string :data:`MARK` replaced by ``hostile``, and an attribute
    ``fuzz_version`` moved over ``_sklearn_version``."""
    if isinstance(node, dict):
        if node.get("__loader__") == "JsonNode" and node.get("content") == json.dumps(MARK):
            return hostile
        node = {k: _plant(v, hostile) for k, v in node.items()}
        content = node.get("content")
        if isinstance(content, dict) and "fuzz_version" in content:
            content["_sklearn_version"] = content.pop("fuzz_version")
        return node
    if isinstance(node, list):
        return [_plant(v, hostile) for v in node]
    return node


def plant(data: bytes, hostile: dict) -> bytes:
    """A safe-format file ``data`` with the hostile object planted where its model holds :data:`MARK`."""
    source, out = zipfile.ZipFile(io.BytesIO(data)), io.BytesIO()
    with zipfile.ZipFile(out, "w") as target:
        for member in source.namelist():
            content = source.read(member)
            if member == "schema.json":
                content = json.dumps(_plant(json.loads(content), hostile)).encode()
            target.writestr(member, content)
    return out.getvalue()


#: Where the hostile object hides in the model: name -> (attribute, value holding MARK).
PLACES: dict[str, tuple[str, Any]] = {
    "an extra attribute": ("fuzz_extra", MARK),
    "_sklearn_version": ("fuzz_version", MARK),
    "a list attribute": ("fuzz_list", [1.0, MARK]),
    "a dict attribute": ("fuzz_dict", {"key": MARK}),
    "a tuple attribute": ("fuzz_tuple", (MARK, 2)),
}


def _problem():
    from sklearn.datasets import load_iris

    X, y = load_iris(return_X_y=True, as_frame=True)
    X = X.set_axis(["a", "b", "c", "d"], axis=1).iloc[::3].reset_index(drop=True)
    return X, y.iloc[::3].reset_index(drop=True)


def _carrier(kind: str, place: str, in_pipeline: bool):
    """A fitted model holding :data:`MARK` at ``place`` (in the pipeline's last step when ``in_pipeline``)."""
    from sklearn.linear_model import Ridge
    from sklearn.naive_bayes import GaussianNB
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    X, y = _problem()
    model = GaussianNB() if kind == "classifier" else Ridge()
    attribute, value = PLACES[place]
    if in_pipeline:
        model = make_pipeline(StandardScaler(), model).fit(X, y)
        setattr(model[-1], attribute, value)
    else:
        setattr(model.fit(X, y), attribute, value)
    return model


def _saved(kind: str, place: str, in_pipeline: bool, loader: str) -> bytes:
    """The bytes of a model file (``save_model``) or of a saved naive Bayes explainer, holding :data:`MARK`."""
    import shap_instances as si
    from shap_instances.utils import save_model

    model, buffer = _carrier(kind, place, in_pipeline), io.BytesIO()
    if loader == "explainer load":
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            si.NaiveBayesExplainer(model, _problem()[0]).save(buffer)
    else:
        save_model(model, buffer)
    return buffer.getvalue()


def _fingerprint(folder: Path) -> dict[str, str]:
    if not folder.exists():
        return {}
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "dir"
            for p in sorted(folder.rglob("*"))}


def _victim(folder: Path) -> Path:
    victim = folder / "victim"
    (victim / "thesis").mkdir(parents=True, exist_ok=True)
    (victim / "thesis" / "thesis.tex").write_text("\\chapter{mine}\n")
    return victim


def _load_hostile(path: Path, loader: str) -> str:
    """One load in the child: ``clear error`` when refused naming the file, ``code execution`` when built."""
    import shap_instances as si
    from shap_instances.utils import load_model

    def run() -> None:
        with open(path, "rb") as stream:
            loaded = si.NaiveBayesExplainer.load(stream) if loader == "explainer load" else load_model(stream)
        del loaded

    outcome = classify(run, None, names=path.name)
    return "code execution" if outcome in ("right answer", "warning") else outcome


def _hostile_outcome(child: str, victim: Path, before: dict[str, str]) -> str:
    """The parent's verdict: the victim folder changed, or the process killed by a freed handle, is code
    execution; otherwise the child's outcome."""
    if _fingerprint(victim) != before or child.startswith("killed by"):
        return "code execution"
    return child


def persistence_cases(folder: Path, rng: np.random.Generator) -> Iterator[tuple[str, str]]:
    """Hostile objects in model files and saved explainers (forked: a freed handle kills the process), through
    the command line, and damaged model files."""
    victim = _victim(folder)
    for (name, (module, cls, attributes)), place, loader in itertools.product(
            _hostile_classes(victim).items(), PLACES, ("load_model", "explainer load")):
        for in_pipeline in (False, True) if place == "an extra attribute" else (False,):
            kind = "classifier" if loader == "explainer load" else ("regressor", "classifier")[int(rng.integers(2))]
            path = folder / f"hostile-{next(_ids)}.skops"
            path.write_bytes(plant(_saved(kind, place, in_pipeline, loader), _object_node(module, cls, attributes)))
            before = _fingerprint(victim)
            child = isolated(lambda path=path, loader=loader: _load_hostile(path, loader), CASE_SECONDS)
            where = f"{place}{' of a pipeline step' if in_pipeline else ''}"
            yield f"{loader} of a {name} in {where}", _hostile_outcome(child, victim, before)
            victim = _victim(folder)
    yield from _hostile_commands(folder, victim)
    yield from _damaged_model_cases(folder, rng)


def _hostile_commands(folder: Path, victim: Path) -> Iterator[tuple[str, str]]:
    """``explain --model-file`` with each hostile class in ``_sklearn_version``; ``report --model-file`` with
    a ``DataSource``."""
    X, y = _problem()
    data = folder / "iris.csv"
    X.assign(t=y).to_csv(data, index=False)
    commands = [(name, "explain") for name in _hostile_classes(victim)] + [("DataSource", "report")]
    for name, command in commands:
        module, cls, attributes = _hostile_classes(victim)[name]
        path = folder / f"hostile-{next(_ids)}.skops"
        path.write_bytes(plant(_saved("classifier", "_sklearn_version", False, "load_model"),
                               _object_node(module, cls, attributes)))
        out = folder / f"out-{next(_ids)}"
        argv = [command, "--data", str(data), "--target", "t", "--model-file", str(path), "--out"]
        argv += [f"{out}.csv", "--rows", "2", "--explainer", "naive_bayes"] if command == "explain" else \
            [str(out), "--silent", "--time-budget", "5"]
        before = _fingerprint(victim)
        child = isolated(lambda argv=argv: run_command(argv, kept=[data], check=lambda: True, must_refuse=True),
                         CASE_SECONDS)
        outcome = _hostile_outcome(child, victim, before)
        yield f"cli {command} --model-file of a {name} in _sklearn_version", \
            "code execution" if outcome == "silently wrong" else outcome
        victim = _victim(folder)


def _damaged_model_cases(folder: Path, rng: np.random.Generator, n: int = 24) -> Iterator[tuple[str, str]]:
    """Damaged copies of a saved pipeline, loaded with ``load_model``: its predictions (the oracle: the
    undamaged model's), or a clear error naming the file."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from shap_instances.utils import load_model, save_model

    X, y = _problem()
    model, buffer = make_pipeline(StandardScaler(), LogisticRegression(max_iter=500)).fit(X, y), io.BytesIO()
    save_model(model, buffer)
    expected = model.predict_proba(X)
    marker = folder / "ran-model"
    for kind, damaged in _damaged_files(buffer.getvalue(), rng, n, marker):
        path = folder / f"model-{next(_ids)}.skops"
        path.write_bytes(damaged)

        def run(path=path):
            with open(path, "rb") as stream:
                return load_model(stream).predict_proba(X)

        yield f"load_model of a damaged model file ({kind})", classify(run, expected, names=path.name,
                                                                       marker=marker)


# ------------------------------------------------------------------------------------------ CSV cells
#: Text a spreadsheet evaluates, as column names and class labels.
FORMULAS = ("=cmd|' /C calc'!A0", "=1+1", "+1+1", "-1+1", "@SUM(A1:A2)", "\t=1+1", "\r=1+1",
            '=HYPERLINK("http://x","y")', "=-2", "-x")


def _long_lines(out: Path, rows: int) -> Callable[[], bool]:
    """The check of a ``--format long`` output: one (row, player[, output], value) line per value, of ``rows``
    rows, finite (a wide table there is the option ignored)."""
    def check() -> bool:
        if not out.is_file():
            return False
        table = pd.read_csv(out)
        return (list(table.columns[:2]) == ["row", "player"] and table.columns[-1] == "value"
                and table["row"].nunique() == rows and bool(np.isfinite(table["value"].to_numpy(float)).all()))
    return check


def _formula_data(folder: Path, rng: np.random.Generator, formula: str, where: str, numeric: bool = False) -> Path:
    """A table whose column ``a`` is named ``formula`` (``where="column"``) or whose three classes include it."""
    frame = pd.DataFrame(rng.normal(size=(30, 3)), columns=["a", "b", "c"])
    score = frame["a"] + rng.normal(scale=0.5, size=30)
    labels: Any = 2 * score if numeric else np.array(["low", "mid", "high"])[np.digitize(score, [-0.5, 0.5])]
    if where == "column":
        frame = frame.rename(columns={"a": formula})
    else:
        labels = np.where(labels == "high", formula, labels)
    path = folder / f"formula-{next(_ids)}.csv"
    frame.assign(t=labels).to_csv(path, index=False)
    return path


def _safe_csv(paths: Callable[[], list[Path]], whole: Callable[[], bool]) -> Callable[[], bool]:
    """The command's check: its output whole and every cell of every CSV it wrote safe (an unsafe cell is
    recorded: the case is then code execution)."""
    def check() -> bool:
        unsafe = [cell for path in paths() for cell in unsafe_cells(path)]
        _UNSAFE.extend(unsafe)
        return whole() and not unsafe
    return check


_UNSAFE: list[str] = []


def _csv_outcome(argv: list[str], kept: list[Path], check: Callable[[], bool]) -> str:
    start = len(_UNSAFE)
    outcome = run_command(argv, kept=kept, check=check, must_refuse=False)
    return "code execution" if len(_UNSAFE) > start else outcome


def csv_cases(folder: Path, rng: np.random.Generator) -> Iterator[tuple[str, str]]:
    """Formula-like column names and labels through ``explain`` (naive Bayes and SISR players are features; wide
    and long) and a few through ``report`` (label_issues.csv, trust_scores.csv, instances.csv)."""
    from .fuzz_faults_cli import _whole_table

    for formula, where in itertools.product(FORMULAS, ("column", "label")):
        for explainer, layout in itertools.product(("naive_bayes", "isotonic"), ("wide", "long")):
            if explainer == "isotonic" and where == "label":
                continue  # SISR explains numbers: a label target is refused, nothing written
            data = _formula_data(folder, rng, formula, where, numeric=explainer == "isotonic")
            out = folder / f"explained-{next(_ids)}.csv"
            argv = ["explain", "--data", str(data), "--target", "t", "--explainer", explainer, "--rows", "2",
                    "--format", layout, "--out", str(out)]
            whole = _whole_table(out, 2) if layout == "wide" else _long_lines(out, 2)
            yield f"explain --explainer {explainer} --format {layout}, {where} {formula!r}", \
                _csv_outcome(argv, [data], _safe_csv(lambda out=out: [out] if out.is_file() else [], whole))
    for formula, layout in itertools.product(FORMULAS, ("wide", "long")):  # written part by part (--explain)
        data = _formula_data(folder, rng, formula, "column")
        out = folder / f"explained-{next(_ids)}.csv"
        argv = ["explain", "--data", str(data), "--target", "t", "--explainer", "naive_bayes", "--explain", str(data),
                "--format", layout, "--out", str(out)]
        yield f"explain --explain --format {layout}, column {formula!r}", \
            _csv_outcome(argv, [data], _safe_csv(lambda out=out: [out] if out.is_file() else [],
                                                 _long_lines(out, 30) if layout == "long" else out.is_file))
    for formula in FORMULAS[:3]:
        data = _formula_data(folder, rng, formula, "label")
        frame = pd.read_csv(data).rename(columns={"b": formula})
        frame.to_csv(data, index=False)
        out = folder / f"report-{next(_ids)}"
        argv = ["report", "--data", str(data), "--target", "t", "--out", str(out), "--silent", "--time-budget", "5"]
        yield f"report, column and label {formula!r}", _csv_outcome(
            argv, [data], _safe_csv(lambda out=out: sorted(out.glob("*.csv")), (out / "index.html").is_file))


# ------------------------------------------------------------------------------------------ output folders
def output_cases(folder: Path, rng: np.random.Generator) -> Iterator[tuple[str, str]]:
    """The report's manifest, ``explain --explain --force`` over an earlier output, ``explain_partitions(out=)``."""
    yield from _manifest_cases(folder)
    yield from _forced_explain_cases(folder, rng)
    yield from _partition_cases(folder, rng)


def _manifest_cases(folder: Path) -> Iterator[tuple[str, str]]:
    """A report folder whose manifest (hand-edited or copied) names the user's files: none may change."""
    from shap_instances.report._manifest import MANIFEST, MANIFEST_FORMAT

    X, y = _problem()
    data = folder / "manifest-data.csv"
    X.assign(t=y).to_csv(data, index=False)
    outside = folder / "outside.txt"
    outside.write_text("the user's file outside\n")
    listings = {"thesis.tex": ["thesis.tex"], "the user's own index.html": ["index.html"],
                "a link to a file outside": ["link.txt"], "every file of the folder": ["thesis.tex", "notes.md"],
                "a subfolder's name": ["chapters"]}
    for (name, files), force in itertools.product(listings.items(), ((), ("--force",))):
        out = folder / f"manifest-{next(_ids)}"
        out.mkdir()
        kept = [_keep(out / "thesis.tex"), _keep(out / "notes.md"), _keep(out / "index.html", "<p>mine</p>"),
                _keep(out / "chapters" / "one.tex"), outside, data]
        (out / "link.txt").symlink_to(outside)
        (out / MANIFEST).write_text(json.dumps({"format": MANIFEST_FORMAT, "files": files}))
        argv = ["report", "--data", str(data), "--target", "t", "--out", str(out), "--silent", "--time-budget", "5",
                *force]
        yield f"report{' --force' if force else ''} into a folder whose manifest lists {name}", \
            run_command(argv, kept=kept, check=lambda: True, must_refuse=False)


def _keep(path: Path, text: str = "the user's file\n") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def _forced_explain_cases(folder: Path, rng: np.random.Generator) -> Iterator[tuple[str, str]]:
    """``explain --explain BAD --force`` where ``--out`` holds an earlier run's output: the bad input must be
    refused before anything of the earlier output is deleted."""
    frame = pd.DataFrame(rng.normal(size=(30, 3)), columns=["a", "b", "c"]).assign(t=lambda f: 2 * f["a"])
    data = folder / "forced-data.csv"
    frame.to_csv(data, index=False)
    bad = {"garbage": bytes(range(256)) * 4, "a NaN": frame.assign(a=np.nan).to_csv(index=False).encode(),
           "other columns": frame.rename(columns={"a": "z"}).to_csv(index=False).encode(),
           "ragged rows": frame.to_csv(index=False).encode() + b"1,2\n3,4,5,6,7\n"}
    for (name, content), suffix in itertools.product(bad.items(), (".csv", ".npy", ".parquet")):
        out = folder / f"earlier-{next(_ids)}{suffix}"
        first = ["explain", "--data", str(data), "--target", "t", "--explainer", "representer", "--explain",
                 str(data), "--out", str(out)]
        if run_command(first, kept=[], check=lambda: True, must_refuse=False) != "right answer":
            yield f"explain --explain (a good run to {suffix}, the case's set-up)", "obscure crash"
            continue
        path = folder / f"bad-{next(_ids)}.csv"
        path.write_bytes(content)
        earlier = [out] if out.is_file() else sorted(p for p in out.rglob("*") if p.is_file())
        argv = [*first[:-3], str(path), "--out", str(out), "--force"]
        yield f"explain --explain {name} --force over an earlier {suffix} output", \
            run_command(argv, kept=[data, path, *earlier], check=lambda: True, must_refuse=True)


def _partition_problem():
    from sklearn.naive_bayes import GaussianNB

    import shap_instances as si

    X, y = _problem()
    explainer = si.NaiveBayesExplainer(GaussianNB().fit(X, y), X)
    return explainer, X.to_numpy(), y.to_numpy()


def _partition_cases(folder: Path, rng: np.random.Generator) -> Iterator[tuple[str, str]]:
    """``explain_partitions(out=)`` and ``memmap_explanation``; every case forked (a truncated memory map
    raises SIGBUS)."""
    cases: list[tuple[str, Callable[[Path], str]]] = [
        *[(f"out= a folder holding the user's {name}", lambda d, name=name: _users_file_case(d, name))
          for name in ("values.npy", "data.npy", "base_values.npy", "error_std.npy", "names.json")],
        *[(f"X memory-mapped from the folder's {name}", lambda d, name=name: _mapped_input_case(d, name))
          for name in ("data.npy", "values.npy", "input.npy")],
        ('out=""', _empty_out_case),
        *[(f"out= {name}", lambda d, name=name: _odd_out_case(d, name))
          for name in ("an existing file", "a dangling link", "a link to a folder of the user's", "an int",
                       "a missing parent")],
        *[(f"rows_per_part={value!r}", lambda d, value=value: _option_case(d, "rows_per_part", value))
          for value in (-1, 0, 2.5, "40", True, 10**30, np.nan, 7)],
        *[(f"max_in_flight={value!r}", lambda d, value=value: _option_case(d, "max_in_flight", value))
          for value in (-1, 0, "2", 1.5)],
        *[(f"a run killed after {k} parts, reopened", lambda d, k=k: _killed_case(d, k)) for k in (0, 1, 3)],
        *[(f"a run killed after {k} parts, rerun into the folder", lambda d, k=k: _killed_rerun_case(d, k))
          for k in (1, 3)],
        ("two runs into one folder at once", _concurrent_case),
        *[(f"out= reused with {rows} rows under an earlier result", lambda d, rows=rows: _reuse_case(d, rows))
          for rows in (10, 50, 80)],
        *[(f"memmap_explanation of a folder with {name}", lambda d, name=name: _damaged_folder_case(d, name))
          for name in _DAMAGES],
    ]
    for name, case in cases:
        where = folder / f"partitions-{next(_ids)}"
        where.mkdir()
        yield f"explain_partitions {name}", isolated(lambda case=case, where=where: case(where), CASE_SECONDS)


def _partitions(folder: Path | str | None, X=None, **options) -> Any:
    from shap_instances.utils import explain_partitions

    explainer, rows, _ = _partition_problem()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return explain_partitions(explainer, rows if X is None else X, out=folder,
                                  **{"rows_per_part": 10, **options})


def _expected(X=None) -> np.ndarray:
    explainer, rows, _ = _partition_problem()
    return np.asarray(explainer(rows if X is None else np.asarray(X)).values)


def _users_file_case(folder: Path, name: str) -> str:
    user = _keep(folder / name, '{"mine": true}' if name.endswith(".json") else "the user's file\n")
    before = user.read_bytes()
    outcome = classify(lambda: np.asarray(_partitions(folder).values), _expected())
    return "data loss" if user.read_bytes() != before else outcome


def _mapped_input_case(folder: Path, name: str) -> str:
    _, rows, _ = _partition_problem()
    np.save(folder / name, rows)
    before = (folder / name).read_bytes()
    mapped = np.load(folder / name, mmap_mode="r")
    outcome = classify(lambda: np.asarray(_partitions(folder, mapped).values), _expected(rows))
    return "data loss" if (folder / name).read_bytes() != before else outcome


def _empty_out_case(folder: Path) -> str:
    user = _keep(folder / "values.npy")
    os.chdir(folder)  # the forked child's own working directory
    outcome = refused_or_wrong(classify(lambda: np.asarray(_partitions("").values), _expected()))
    return "data loss" if user.read_text() != "the user's file\n" else outcome


def _odd_out_case(folder: Path, name: str) -> str:
    kept: list[Path] = []
    if name == "an existing file":
        out: Any = _keep(folder / "result")
        kept = [out]
    elif name == "a dangling link":
        out = folder / "link"
        out.symlink_to(folder / "nowhere")
    elif name == "a link to a folder of the user's":
        kept = [_keep(folder / "real" / "values.npy")]
        out = folder / "link"
        out.symlink_to(folder / "real")
    elif name == "an int":
        out = 7
    else:
        out = folder / "missing" / "deeper"
    before = [p.read_bytes() for p in kept]
    outcome = classify(lambda: np.asarray(_partitions(out).values), _expected())
    if name in ("an existing file", "an int"):
        outcome = refused_or_wrong(outcome)
    return "data loss" if [p.read_bytes() for p in kept] != before else outcome


def _option_case(folder: Path, option: str, value: Any) -> str:
    valid = isinstance(value, int) and not isinstance(value, bool) and value >= 1
    outcome = classify(lambda: np.asarray(_partitions(folder, **{option: value}).values), _expected())
    return outcome if valid else refused_or_wrong(outcome)


class _Killed(BaseException):
    """Stands for a SIGKILL: nothing after it runs (a BaseException, so no ``except Exception`` cleans up)."""


def _killing_call(after: int) -> Callable:
    done = [0]

    def call(explainer, part):
        if done[0] == after:
            raise _Killed
        done[0] += 1
        return explainer(part)
    return call


def _killed_case(folder: Path, after: int) -> str:
    from shap_instances.utils import memmap_explanation

    with contextlib.suppress(_Killed):
        _partitions(folder, call=_killing_call(after))
    return refused_or_wrong(classify(lambda: np.asarray(memmap_explanation(folder).values), _expected()))


def _killed_rerun_case(folder: Path, after: int) -> str:
    with contextlib.suppress(_Killed):
        _partitions(folder, call=_killing_call(after))
    return classify(lambda: np.asarray(_partitions(folder).values), _expected())


def _concurrent_case(folder: Path) -> str:
    """Run B (other rows, in another process) starts during run A's first part and runs beside it: each run's
    result must be its own values (or the run refused), and the folder reopened one run's values."""
    from shap_instances.utils import memmap_explanation

    _, rows, _ = _partition_problem()
    other = rows[::-1].copy()
    started: list[int] = []

    def call(explainer, part):
        if not started:
            started.append(_fork_run(folder, other))
        time.sleep(0.02)
        return explainer(part)

    def run() -> np.ndarray:
        a = np.asarray(_partitions(folder, call=call, rows_per_part=5).values).copy()
        _, status = os.waitpid(started[0], 0)
        b_right = os.WIFEXITED(status) and os.WEXITSTATUS(status) in (0, 2)  # 2: refused with a clear error
        reopened = np.asarray(memmap_explanation(folder).values)
        if not b_right or not any(np.array_equal(reopened, e) for e in (_expected(), _expected(other))):
            return np.zeros_like(a)  # B wrong, or the folder holds neither run's values
        return a

    return classify(run, _expected())


def _fork_run(folder: Path, X: np.ndarray) -> int:
    """Run ``explain_partitions`` of ``X`` into ``folder`` in a forked process: exit 0 when its values are
    right, 2 when it was refused with a clear error, 1 otherwise."""
    pid = os.fork()
    if pid:
        return pid
    code = 1
    try:  # pragma: no cover - the child
        code = {"right answer": 0, "clear error": 2}.get(
            classify(lambda: np.asarray(_partitions(folder, X, rows_per_part=5).values), _expected(X)), 1)
    finally:
        os._exit(code)


def _reuse_case(folder: Path, rows: int) -> str:
    """An earlier result stays what it was when its folder is written again (or the second run is refused)."""
    _, X, _ = _partition_problem()
    earlier = _partitions(folder)
    before = np.asarray(earlier.values).copy()
    other = np.resize(X[::-1], (rows, X.shape[1]))

    def run() -> np.ndarray:
        second = np.asarray(_partitions(folder, other).values).copy()
        return np.concatenate([np.asarray(earlier.values).copy().ravel(), second.ravel()])

    return classify(run, np.concatenate([before.ravel(), _expected(other).ravel()]))


def _damage(folder: Path, name: str) -> None:
    values = folder / "values.npy"
    if name == "a truncated values.npy":
        values.write_bytes(values.read_bytes()[: values.stat().st_size // 2])
    elif name == "values.npy missing":
        values.unlink()
    elif name == "values.npy of a pickled object array":
        np.save(values, np.array([{"x": 1}] * 3, dtype=object), allow_pickle=True)
    elif name == "values.npy of text":
        values.write_text("not an array\n")
    elif name == "base_values.npy of other rows":
        np.save(folder / "base_values.npy", np.zeros(7))
    elif name == "data.npy of other columns":
        np.save(folder / "data.npy", np.zeros((40, 2)))
    elif name == "a garbage marker":
        _marker(folder).write_bytes(b"\xff\x00{")
    elif name == "a marker whose names are numbers":
        _edit_marker(folder, lambda marker: marker.update(feature_names=list(range(len(marker["feature_names"])))))
    elif name == "a marker with too few names":
        _edit_marker(folder, lambda marker: marker.update(feature_names=marker["feature_names"][:1]))
    elif name == "a marker with values of other rows":
        _edit_marker(folder, lambda marker: marker["arrays"]["values"]["shape"].__setitem__(0, 7))
    elif name == "the marker missing":
        _marker(folder).unlink()


def _marker(folder: Path) -> Path:
    from shap_instances.utils import MemmapWriter

    return folder / MemmapWriter.MARKER


def _edit_marker(folder: Path, edit: Callable[[dict], None]) -> None:
    """Rewrite the completion marker (the names live there since it replaced ``names.json``) after ``edit``."""
    marker = json.loads(_marker(folder).read_text())
    edit(marker)
    _marker(folder).write_text(json.dumps(marker))


_DAMAGES = ("a truncated values.npy", "values.npy missing", "values.npy of a pickled object array",
            "values.npy of text", "base_values.npy of other rows", "data.npy of other columns", "a garbage marker",
            "a marker whose names are numbers", "a marker with too few names", "a marker with values of other rows",
            "the marker missing")


def _damaged_folder_case(folder: Path, name: str) -> str:
    from shap_instances.utils import memmap_explanation

    _partitions(folder)
    _damage(folder, name)
    outcome = classify(lambda: np.asarray(memmap_explanation(folder).values), _expected())
    return refused_or_wrong(outcome)
