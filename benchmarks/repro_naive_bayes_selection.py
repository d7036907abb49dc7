"""Table 1 of the naive Bayes paper (seed 003), column #Var: how many variables our selection keeps.

The paper's #Var is what Khiops' MAP search selected; ours is the package's selective naive Bayes
(``WeightedNaiveBayes`` over 5 quantile bins and ``CategoricalNB``, convex L1 weights with a BIC cost, the model
of ``bench_naive_bayes_table3.py``) fitted on every row of each offline dataset. Deterministic (no seed enters the
fit). Prints, per dataset, the rows, the columns, #Var (ours and the paper's) and the selected columns' names, and
records ``n_var.NAME`` and ``n_columns.NAME`` for the result file (``_reproductions.NB_VARIABLE_CLAIMS``).

Usage: ``python benchmarks/repro_naive_bayes_selection.py [--quick]`` (``--quick``: two small datasets).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import markdown_table, record  # noqa: E402
from _reproductions import NB_VARIABLES  # noqa: E402
from bench_naive_bayes_table3 import fit_selective, load  # noqa: E402


def main(quick: bool) -> None:
    names = ["tic-tac-toe", "breast"] if quick else list(NB_VARIABLES)
    rows, counts, columns = [], {}, {}
    for name in names:
        X, labels = load(name)
        model = fit_selective(X, labels)
        selected = [str(X.columns[i]) for i in model.selected_]
        counts[name], columns[name] = len(selected), X.shape[1]
        rows.append([name, len(X), X.shape[1], len(selected), NB_VARIABLES[name], ", ".join(selected)])
        print(f"{name}: {len(selected)} of {X.shape[1]} columns selected", flush=True)
    table = markdown_table(["dataset", "rows", "columns", "#Var (ours)", "#Var (paper)", "selected columns"], rows,
                           "lrrrrl")
    print("\n" + table)
    record(**{f"n_var.{name}": count for name, count in counts.items()},
           **{f"n_columns.{name}": count for name, count in columns.items()}, **{"part:table": table})


if __name__ == "__main__":
    main("--quick" in sys.argv)
