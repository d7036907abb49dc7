"""SISR fit time, this tree against an earlier revision of the package, in the same run.

For each p and support size (an int s, or ``ric``: the 20 to 25 fits of s = 1..p that RIC chooses among), one
payoff table from the recovery generator (``bench_isotonic.generate``, s* = 4, noise ``--noise``, seed
``1000 p``) is fitted by this tree and by the baseline revision (``git archive REV shap_instances`` unpacked in
a temporary directory), each in a child process that first warms numba up on a small game, alternating the
two sides ``--repeats`` times; the table gives the median wall-clock and CPU seconds of the fit (CPU time is
less sensitive to the other processes of a shared machine), their ratios, and whether the two fits agree
(the largest difference of gamma and of the transformed payoffs t, the chosen s, the alternations). The
default baseline, ``f967aae``, is the last revision before the sorted, chunked fit.

Usage: ``python benchmarks/bench_sisr_speed.py [--sizes 20,25] [--sparsity 4,ric] [--repeats 1]
[--baseline REV] [--quick] [--markdown FILE]`` (``--quick``: p = 12 only). At p = 25 the baseline's RIC fit
takes hours: ``--baseline-max-p`` (default 20) skips the baseline's ``ric`` cells above it, and the table says
so.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
from io import BytesIO
from pathlib import Path

from _common import Bench, fmt_load, markdown_table

ROOT = Path(__file__).resolve().parent.parent

CHILD = r"""
import json, sys, time
sys.path.insert(0, {benchmarks!r})
import numpy as np
from bench_isotonic import generate
from shap_instances.isotonic import sisr
import shap_instances
assert shap_instances.__file__.startswith({tree!r}), shap_instances.__file__
sisr(generate(8, 0.05, 0)[0], "ric")  # numba: compile or load the cache, untimed
p, sparsity, noise = {p}, {sparsity!r}, {noise}
v, _ = generate(p, noise, 1000 * p)
started, cpu = time.perf_counter(), time.process_time()
result = sisr(v, sparsity)
seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
np.save({out!r}, np.concatenate([result.gamma, result.transform_values]))
print(json.dumps(dict(seconds=seconds, cpu=cpu, s=int(result.sparsity), iterations=int(result.n_iterations))))
"""


def fit_in_child(tree: Path, p: int, sparsity: int | str, noise: float, out: Path) -> dict:
    """One timed fit by the package under ``tree``, in a fresh process (numba warmed up first)."""
    code = CHILD.format(benchmarks=str(ROOT / "benchmarks"), tree=str(tree), p=p, sparsity=sparsity, noise=noise,
                        out=str(out))
    env = dict(os.environ, PYTHONPATH=str(tree))
    done = subprocess.run([sys.executable, "-c", code], env=env, cwd=out.parent, capture_output=True, text=True,
                          check=True)  # cwd: not the repository, whose package would shadow PYTHONPATH's
    return json.loads(done.stdout.strip().splitlines()[-1])


def baseline_tree(revision: str, into: Path) -> Path:
    """The package at ``revision``, unpacked under ``into``."""
    archive = subprocess.run(["git", "archive", revision, "shap_instances"], cwd=ROOT, capture_output=True,
                             check=True).stdout
    with tarfile.open(fileobj=BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    return into


def cell(trees: dict, p: int, sparsity: int | str, noise: float, repeats: int, work: Path) -> list:
    import numpy as np

    seconds: dict[str, list[float]] = {name: [] for name in trees}
    cpu: dict[str, list[float]] = {name: [] for name in trees}
    runs = {}
    for _ in range(repeats):
        for name, tree in trees.items():
            runs[name] = fit_in_child(tree, p, sparsity, noise, work / f"{name}.npy")
            seconds[name].append(runs[name]["seconds"])
            cpu[name].append(runs[name]["cpu"])
            print(f"p = {p}, s = {sparsity}, {name}: {runs[name]} (load {fmt_load(os.getloadavg())})",
                  file=sys.stderr, flush=True)
    new, new_cpu = statistics.median(seconds["this tree"]), statistics.median(cpu["this tree"])
    row = [p, sparsity, f"{new:.2f} / {new_cpu:.2f}", f"{runs['this tree']['s']}, {runs['this tree']['iterations']}"]
    if "baseline" not in trees:
        return row + ["not run (hours)", "-", "-", "-"]
    old, old_cpu = statistics.median(seconds["baseline"]), statistics.median(cpu["baseline"])
    a, b = np.load(work / "this tree.npy"), np.load(work / "baseline.npy")
    return row + [f"{old:.2f} / {old_cpu:.2f}", f"{runs['baseline']['s']}, {runs['baseline']['iterations']}",
                  f"{old / new:.1f}x / {old_cpu / new_cpu:.1f}x",
                  f"{np.abs(a[:p] - b[:p]).max():.1e} / {np.abs(a[p:] - b[p:]).max():.1e}"]


def main(bench: Bench) -> None:
    args = bench.args
    sizes = [12] if bench.quick else args.sizes
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        old = baseline_tree(args.baseline, work / "baseline")
        for p in sizes:
            for sparsity in args.sparsity:
                trees = {"this tree": ROOT}
                if sparsity != "ric" or p <= args.baseline_max_p:
                    trees["baseline"] = old
                rows.append(cell(trees, p, sparsity, args.noise, args.repeats, work))
    header = ["p", "s", "this tree: wall / CPU s", "chosen s, alternations", f"baseline {args.baseline}: wall / CPU s",
              "chosen s, alternations", "speed-up: wall / CPU", "largest gamma / t difference"]
    bench.print(f"### SISR fit time, this tree against revision {args.baseline}, median of {args.repeats} "
                f"(generator 'clipped', noise {args.noise:g}, seed 1000 p)", markdown_table(header, rows),
                part="table")


def _arguments(parser) -> None:
    parser.add_argument("--sizes", type=lambda text: [int(x) for x in text.split(",")], default=[20, 25])
    parser.add_argument("--sparsity", type=lambda text: [x if x == "ric" else int(x) for x in text.split(",")],
                        default=[4, "ric"])
    parser.add_argument("--noise", type=float, default=0.05)
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--baseline", default="f967aae")
    parser.add_argument("--baseline-max-p", type=int, default=20)


if __name__ == "__main__":
    Bench(__doc__, arguments=_arguments).run(main)
