"""Boosting ``top_k``'s pruned kernel against the same kernel at an earlier commit, in one run.

The kernel of this tree (``shap_instances/boosting/_kernels.py``) and the one at ``--base`` (a git revision,
default ``f967aae``, before the kernel ranked only the rows its scattered leaves reach) are both loaded, compiled
before the clock, and called on the same explained rows (training rows of a HistGradientBoostingRegressor of 100
trees, ``kind="gradients"``, k = 10), alternating, ``REPEATS`` times; their results are checked bitwise equal.
Printed: milliseconds per explained row and the median ratio, for each ``--leaves`` (``max_leaf_nodes``), with
the load average.

    python benchmarks/bench_top_k_kernel.py --train 50000 --rows 400 --leaves 31 255
"""

from __future__ import annotations

import argparse
import importlib.util
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
from _common import compare, fmt_load, load_average, machine_description, markdown_table, ratio

import shap_instances as si
from shap_instances.boosting import row_major_contributions

ROOT = Path(__file__).resolve().parents[1]


def _kernel_module(source: str, name: str):
    """The kernels module from its source text, compiled without numba's cache (imports made absolute)."""
    source = source.replace("from ..utils import JIT_OPTIONS", "from shap_instances.utils import JIT_OPTIONS")
    source = source.replace("@njit(**JIT_OPTIONS)", "@njit(**{**JIT_OPTIONS, 'cache': False})")
    path = Path(tempfile.mkdtemp()) / f"{name}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _row(args, leaves: int, old, new) -> list:
    from sklearn.ensemble import HistGradientBoostingRegressor

    rng = np.random.default_rng(3)
    X = rng.normal(size=(args.train, 20))
    y = X[:, 0] + np.sin(X[:, 1]) + 0.3 * rng.normal(size=args.train)
    model = HistGradientBoostingRegressor(max_iter=100, max_leaf_nodes=leaves, early_stopping=False,
                                          random_state=0).fit(X, y)
    trees = si.BoostingExplainer(model, X, y=y, kind="gradients").trees_
    chosen, rows, shares, bound = row_major_contributions(trees, 0)
    query = np.ascontiguousarray(trees.train_leaves.T[:args.rows], dtype=np.int32)
    big = np.diff(trees.leaf_ptr) > int(0.2 * args.train)  # top_k's own PRUNE_LEAF_FRACTION

    def run(module, q=query):
        index, value = np.empty((len(q), 10), np.int64), np.empty((len(q), 10))
        module.pruned_top_k_rows(q, chosen, trees.leaf_offsets, trees.leaf_ptr, trees.members, trees.coef, big,
                                 bound, rows, shares, index, value)
        return index, value

    run(old, query[:2]), run(new, query[:2])  # compiled before the clock
    ours, theirs = compare(lambda: run(new), lambda: run(old))
    assert all(np.array_equal(a, b) for a, b in zip(ours.result, theirs.result)), "results differ"
    per_row = [1e3 * min(t.seconds) / args.rows for t in (theirs, ours)]
    return [leaves, f"{per_row[0]:.3f}", f"{per_row[1]:.3f}", ratio(theirs, ours), fmt_load(load_average())]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--train", type=int, default=50_000)
    parser.add_argument("--rows", type=int, default=400)
    parser.add_argument("--leaves", type=int, nargs="+", default=[31, 255])
    parser.add_argument("--base", default="f967aae")
    args = parser.parse_args()
    old_source = subprocess.run(["git", "show", f"{args.base}:shap_instances/boosting/_kernels.py"], cwd=ROOT,
                                check=True, capture_output=True, text=True).stdout
    old = _kernel_module(old_source, "kernels_base")
    new = _kernel_module((ROOT / "shap_instances/boosting/_kernels.py").read_text(), "kernels_tree")
    print(f"# bench_top_k_kernel: {' '.join(sys.argv[1:]) or '(defaults)'}; load average {fmt_load(load_average())}")
    print(f"# {machine_description()}\n")
    print(f"{args.train:,} training rows, {args.rows} explained rows, k = 10, 100 trees (min of 3 per row; "
          f"ratio: median of 3, alternating; results bitwise equal)\n")
    table = [_row(args, leaves, old, new) for leaves in args.leaves]
    print(markdown_table(["max_leaf_nodes", f"ms per row at {args.base}", "ms per row, this tree",
                          "speed-up", "load average"], table))


if __name__ == "__main__":
    main()
