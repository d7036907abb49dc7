"""Boosters of XGBoost, LightGBM and CatBoost are first rebuilt in a child process, never first in this one.

Those libraries rebuild a model from its serialised bytes (or text) with their own C++ loaders, which trust
what they read: a crafted or damaged model kills the process (XGBoost: SIGSEGV on a few flipped bytes;
LightGBM: ``std::terminate`` on a bad tree field, or an endless loop at ``predict`` on a cycle of children).
So a file that holds one is loaded first by :func:`probe_native_models` in a child Python process, with a time
limit: it rebuilds the file, reads back every booster's trees through the library's own dump (children
inside the tree and reached once, split features inside the model's features) and predicts a few probe rows.
Only when the child exits cleanly is the file loaded here; a child that crashes, hangs or finds a bad tree
makes the load a :class:`~shap_instances.exceptions.DataValidationError`. What the probe cannot promise: a
crash that only some other input rows would reach.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import numpy as np

from ..exceptions import DataValidationError

__all__ = ["NATIVE_LIBRARIES", "probe_native_models"]

#: Libraries whose models are rebuilt by native code from the file's bytes.
NATIVE_LIBRARIES = ("xgboost.", "lightgbm.", "catboost.")
_TIMEOUT_S = 120.0


def probe_native_models(data: bytes, types: list[str], name: str) -> None:
    """Rebuild the file in a child process and refuse it unless every native booster in it is sound.

    ``types`` are the file's classes (already on the trusted list). Does nothing when none is a native
    booster's library.

    Examples
    --------
    >>> import skops.io as sio
    >>> from sklearn.linear_model import Ridge
    >>> from shap_instances.utils._native_probe import probe_native_models
    >>> probe_native_models(sio.dumps(Ridge()), ["sklearn.linear_model._ridge.Ridge"], "'m.skops'")
    """
    if not any(t.startswith(NATIVE_LIBRARIES) for t in types):
        return
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p), "OMP_NUM_THREADS": "1"}
    command = [sys.executable, "-c", "from shap_instances.utils._native_probe import _child; _child()",
               json.dumps(types)]
    try:
        done = subprocess.run(command, input=data, capture_output=True, timeout=_TIMEOUT_S, env=env, check=False)
    except subprocess.TimeoutExpired:
        raise DataValidationError(f"{name} holds a boosted model that did not load and predict within "
                                  f"{_TIMEOUT_S:.0f} s in a separate process (a damaged or crafted model loops); "
                                  "save the model again from the fitted estimator.") from None
    verdict = done.stdout.decode(errors="replace").strip().splitlines()[-1:] or [""]
    if done.returncode == 0 and verdict[0] == "ok":
        return
    reason = verdict[0] if done.returncode == 0 else f"the process died with exit status {done.returncode}"
    raise DataValidationError(f"{name} holds a boosted model (XGBoost, LightGBM or CatBoost) that its library "
                              f"cannot rebuild safely: {reason}. Rebuilding it here could crash or hang the "
                              "process; save the model again from the fitted estimator.")


def _child() -> None:  # pragma: no cover - runs in the child process of probe_native_models
    import skops.io as sio

    from ._model_state import _objects

    try:
        bundle = sio.loads(sys.stdin.buffer.read(), trusted=json.loads(sys.argv[1]))
        problem = next(filter(None, map(_booster_problem, _objects(bundle))), None)
    except Exception as exc:  # noqa: BLE001 - any failure (not a crash) is the file's: say it in one line
        problem = f"it fails to load ({type(exc).__name__}: {exc})"
    print(" ".join(str(problem or "ok").split()), flush=True)


def _booster_problem(obj: Any) -> str | None:
    kind = f"{type(obj).__module__}.{type(obj).__name__}"
    if kind == "xgboost.core.Booster" and getattr(obj, "handle", None) is not None:
        return _xgboost_problem(obj)
    if kind == "lightgbm.basic.Booster" and getattr(obj, "_handle", None) is not None:
        return _lightgbm_problem(obj)
    return None


def _xgboost_problem(booster: Any) -> str | None:
    learner = json.loads(bytes(booster.save_raw("json")))["learner"]
    n_features = int(learner["learner_model_param"]["num_feature"])
    for tree in _xgboost_trees(learner["gradient_booster"]):
        left, right = np.asarray(tree["left_children"]), np.asarray(tree["right_children"])
        features = np.asarray(tree["split_indices"])
        if not (len(left) == len(right) == len(features)) or not _reached_once(left, right):
            return "an XGBoost tree whose children are outside the tree or reached twice"
        inner = left != -1
        if np.any((features[inner] < 0) | (features[inner] >= n_features)):
            return f"an XGBoost tree that splits on features outside its {n_features}"
    _probe(booster.inplace_predict, n_features)
    return None


def _xgboost_trees(gradient_booster: dict[str, Any]) -> Iterator[dict[str, Any]]:
    model = gradient_booster.get("gbtree", gradient_booster).get("model", {})
    yield from model.get("trees", [])


def _reached_once(left: np.ndarray, right: np.ndarray) -> bool:
    """Whether walking from node 0 reaches every node once and no index outside the arrays (-1: a leaf)."""
    n, seen, stack = len(left), np.zeros(len(left), dtype=bool), [0]
    while stack:
        node = stack.pop()
        if not 0 <= node < n or seen[node]:
            return False
        seen[node] = True
        if left[node] != -1 or right[node] != -1:
            stack.extend((int(left[node]), int(right[node])))
    return bool(seen.all())


def _lightgbm_problem(booster: Any) -> str | None:
    model = booster.dump_model()  # walks every tree from its root: a cycle loops (the time limit), a bad index dies
    n_features = int(model["max_feature_idx"]) + 1
    for tree in model["tree_info"]:
        stack = [tree["tree_structure"]]
        while stack:
            node = stack.pop()
            if "split_feature" in node:
                if not 0 <= int(node["split_feature"]) < n_features:
                    return f"a LightGBM tree that splits on features outside its {n_features}"
                stack.extend((node["left_child"], node["right_child"]))
    _probe(booster.predict, n_features)
    return None


def _probe(predict: Any, n_features: int) -> None:
    """Predict zeros and random rows: a crash or a loop here ends the child; an error (a categorical model given
    numbers) says nothing about the file."""
    for rows in (np.zeros((4, n_features)), np.random.default_rng(0).normal(scale=1e3, size=(64, n_features))):
        try:
            predict(rows)
        except Exception:  # noqa: BLE001, S112 - see the docstring
            continue
