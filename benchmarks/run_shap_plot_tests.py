"""Run shap 0.51's own plot and explainer tests twice, shap untouched and with this package standing in; tabulate.

Runs (each a pytest subprocess with the plugin ``benchmarks/_shap_dropin.py``, which records outcomes):

1. ``plots/`` control; 2. ``plots/`` with ``shap.TreeExplainer`` / ``shap.Explainer`` building this package's
explainer wherever it supports the model (explanations over training rows); 3. the explainer-level tests control;
4. the same with ``shap.Explainer = shap_instances.Explainer``.

Each test's outcome in the second run of a pair is classified against the first: ``same`` (the same outcome),
``environment`` (fails in the control too: no network for ``shap.datasets``, a missing optional package),
``by design`` (this package's error naming a feature-level usage) and ``convention`` (anything else: a missing
attribute, signature or convention, which must be 0). Image comparison is off (pytest-mpl without ``--mpl``): the
pictures over training rows differ from shap's baselines by design; a test passes when it draws without error.

Usage (the tests are taken from the shap clone's v0.51.0 tag; pytest-mpl lives in a separate venv that reads the
project's venv through a .pth file)::

    python benchmarks/run_shap_plot_tests.py --python /work/venvs/shaptests/bin/python \
        --git-dir /work/.mirror/shap+shap/repo --out /tmp/shap-dropin
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
EXPLAINER_TESTS = [f"explainers/test_{name}.py" for name in ("explainer", "linear", "exact", "permutation",
                                                                "kernel", "partition")] + ["test_explanation.py"]
RUNS = [  # (name, tests, SHAP_DROPIN)
    ("plots-control", ["plots"], ""),
    ("plots-instances", ["plots"], "instances"),
    ("explainers-control", EXPLAINER_TESTS, ""),
    ("explainers-si.Explainer", EXPLAINER_TESTS, "explainer_class"),
]


def extract_tests(git_dir: str, tag: str, into: Path) -> Path:
    """shap's ``tests/`` at ``tag``, extracted from a bare clone (files git cannot read, e.g. LFS data, skipped)."""
    archive = subprocess.run(["git", f"--git-dir={git_dir}", "archive", tag, "tests"], capture_output=True,
                             check=False).stdout
    with tempfile.NamedTemporaryFile(suffix=".tar") as f:
        f.write(archive)
        f.flush()
        with tarfile.open(f.name) as tar:
            tar.extractall(into, filter="data")
    return into / "tests"


def run(python: str, tests_dir: Path, name: str, paths: list[str], mode: str, out: Path, timeout: int) -> dict:
    env = {**os.environ, "SHAP_DROPIN": mode, "SHAP_DROPIN_OUT": str(out / f"{name}.json"), "MPLBACKEND": "Agg",
           "PYTHONPATH": os.pathsep.join([str(HERE.parent), str(HERE)])}
    command = [python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "_shap_dropin", *paths]
    subprocess.run(command, cwd=tests_dir, env=env, timeout=timeout, capture_output=True, check=False)
    return json.loads((out / f"{name}.json").read_text())


#: Errors of usages that need values over features, or the targets of the explained rows (docs/pictures.md).
BY_DESIGN = {
    "does not match the shape of the provided data matrix": "a feature matrix passed beside values over training "
                                                            "rows",
    "feature_names arg must include all features": "a feature matrix (its column names) passed beside values over "
                                                   "training rows",
    "residuals need the true targets": "the residual explainer explains f(x) - y, so explainer(X) needs y",
    "interaction": "interaction values are between features",
}


def classify(control: dict | None, ours: dict) -> tuple[str, str]:
    """``(class, reason)`` of a test's outcome with this package, given its outcome in the control run."""
    error = ours["error"]
    if control is not None and control["outcome"] == ours["outcome"]:
        return "same", error
    if ours["outcome"] == "passed":
        return "passes (control did not)", control["error"] if control else ""
    if control is not None and control["outcome"] != "passed":
        return "environment", error
    for marker, reason in BY_DESIGN.items():
        if marker in error and ours.get("stood_in"):
            return "by design", f"{reason} ({error})"
    return "convention", error


def table(control: dict, ours: dict, title: str) -> str:
    lines = [f"### {title}", "", "| test | control | with this package | stood in | class | reason |",
             "|---|---|---|---|---|---|"]
    for nodeid in sorted(set(control) | set(ours)):
        c, o = control.get(nodeid), ours.get(nodeid, {"outcome": "not run", "error": "", "stood_in": False})
        kind, reason = classify(c, o)
        reason = reason.replace("|", "/").replace("\n", " ")[:160]
        lines.append(f"| `{nodeid}` | {(c or {}).get('outcome', 'not run')} | {o['outcome']} | "
                     f"{'yes' if o.get('stood_in') else ''} | {kind} | {reason} |")
    counts: dict[str, int] = {}
    for line in lines[4:]:
        kind = line.split(" | ")[4]
        counts[kind] = counts.get(kind, 0) + 1
    lines += ["", "Totals: " + ", ".join(f"{k}: {v}" for k, v in sorted(counts.items())), ""]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--python", default=sys.executable, help="a Python with shap, pytest and pytest-mpl")
    parser.add_argument("--git-dir", default="/work/.mirror/shap+shap/repo", help="a (bare) clone of shap")
    parser.add_argument("--tag", default="v0.51.0")
    parser.add_argument("--out", default=None, help="folder for the JSON results and tables.md")
    parser.add_argument("--timeout", type=int, default=1800, help="seconds per pytest run")
    args = parser.parse_args()
    out = Path(args.out or tempfile.mkdtemp(prefix="shap-dropin-"))
    out.mkdir(parents=True, exist_ok=True)
    tests_dir = extract_tests(args.git_dir, args.tag, out / "shap")
    results = {name: run(args.python, tests_dir, name, paths, mode, out, args.timeout)
               for name, paths, mode in RUNS}
    report = "\n".join([
        table(results["plots-control"], results["plots-instances"],
              "shap's plot tests: control vs. this package's explanations"),
        table(results["explainers-control"], results["explainers-si.Explainer"],
              "shap's explainer tests: control vs. shap.Explainer = shap_instances.Explainer"),
    ])
    (out / "tables.md").write_text(report)
    print(report)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
