"""The figure scripts' own logic (``docs/scripts/measure_*.py``): what they read back and hand to their result file."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: What ``benchmarks/bench_variance.py`` prints (abridged): a logistic table, the forest's with its closed-form row,
#: and the leaf-size table.
PRINTED = """load average at start 7.1 on 2 cores; [64] permutations x 4 repeats per estimator
reference: 18 s, RMS standard error 5.16e-05 (in every RMS error below), load 6.7

logistic regression, diabetes (target split at its median), 442 rows: contribution means, 64 permutations' worth a run
| estimator | wall s | CPU s | RMS error | x at equal CPU time | x at equal wall time |
|---|---|---|---|---|---|
| antithetic (baseline) | 0.20 | 0.28 | 0.00207 | 1.00 | 1.00 |
| place strata + control variate | 0.27 | 0.30 | 0.000608 | 3.27 | 2.95 |

fixed-structure forest (50 trees, min_samples_leaf=5), diabetes regression: contribution means (reference: closed form)
| estimator | wall s | CPU s | RMS error | x at equal CPU time | x at equal wall time |
|---|---|---|---|---|---|
| control variate, pooled | 0.08 | 0.10 | 0.00113 | 7.10 | 6.93 |
| closed form (exact) | 0.0145 | 0.0111 | 0 | exact | exact |

closed form against leaf size: 2,000 Friedman #1 rows, 100 trees
| min_samples_leaf | rows a leaf (mean / max) | closed form s | one permutation s | in permutations | gain | load |
|---|---|---|---|---|---|---|
| 5 | 6 / 9 | 0.37 | 0.048 | 7.7 | 6.2 | 12.9 |
| 50 | 67 / 99 | 201 | 0.202 | 993.2 | 15.3 | 17.7 |

load average at end 6.6
"""


def _script(name: str):
    """``docs/scripts/NAME.py`` as a module (the ``sys.path`` it extends restored afterwards)."""
    spec = importlib.util.spec_from_file_location(name, ROOT / "docs" / "scripts" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    path = list(sys.path)
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path[:] = path
    return module


def test_variance_tables_are_read_back_by_title_with_both_ratios():
    values = _script("measure_variance").tables(PRINTED)
    assert {key for key in values if key.startswith("part:")} == {"part:logistic_64", "part:forest",
                                                                   "part:leaf_sizes"}
    assert values["logistic_64:place strata + control variate:cpu"] == 3.27
    assert values["logistic_64:place strata + control variate:wall"] == 2.95
    assert values["forest:control variate, pooled:cpu"] == 7.10
    assert values["forest:control variate, pooled:wall"] == 6.93
    assert not [key for key in values if "closed form" in key]  # an exact row has no ratio to record
    assert values["part:forest"].splitlines()[-1] == "| closed form (exact) | 0.0145 | 0.0111 | 0 | exact | exact |"


def test_the_leaf_size_table_is_read_back_per_leaf_size():
    values = _script("measure_variance").tables(PRINTED)
    assert values["part:leaf_sizes"].splitlines()[-1].startswith("| 50 | 67 / 99 | 201 |")
    assert (values["leaf_5:rows"], values["leaf_5:closed_s"], values["leaf_5:in_permutations"],
            values["leaf_5:gain"]) == (6, 0.37, 7.7, 6.2)
    assert (values["leaf_50:rows"], values["leaf_50:in_permutations"], values["leaf_50:gain"]) == (67, 993.2, 15.3)
