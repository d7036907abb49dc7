"""Speed of ``label_issues`` against cleanlab's out-of-fold logistic scores, same run, at equal or better AUC.

Protocol (``bench_valuation.py``'s noisy-label tables and split, OpenDataVal's size): for each of the six detection
tables and each seed, up to ``--n-train`` training rows, standardised, 10% of the labels flipped at random. Timed,
alternating within each of ``REPEATS`` (3) repetitions:

* **ours**: ``label_issues(X, y, random_state=seed)`` with its defaults (logistic, forest of ``n_trees=50``, k-NN);
* **cleanlab, one process**: out-of-fold probabilities of ``LogisticRegression(max_iter=200)`` (5-fold
  ``cross_val_predict``, cleanlab's usual recipe), then ``get_label_quality_scores`` and
  ``find_label_issues(..., n_jobs=1)``; the ratio's denominator (both sides then use one core);
* **cleanlab, default**: the same with ``find_label_issues``' default ``n_jobs`` (a pool of processes, about
  0.1 s of start-up per call on this machine): the second ratio, timed alternating with ours in the same way.

Also once per seed (not in a ratio): ``label_issues(..., n_trees=200)``, the former default, whose AUC is the
baseline "today" (paired over the same seeds and flips). AUC: detecting the flipped rows from the label quality
(low = suspect). One row per table: mean AUC over the seeds, the paired difference ours - former with its standard
error, median seconds and the median of the per-repetition ratios ours / cleanlab (range). Per-family seconds of
ours (each family alone, seed 0) say where the time goes.

cleanlab is optional (the peers' venv of ``bench_valuation.py``): without it only ours is timed. Run it through
``python benchmarks/run_all.py label_issues`` with the peers' interpreter: it passes ``--markdown FILE`` and
``--threads 1`` and writes ``benchmarks/results/bench-label_issues.json`` (``_common.write_result``), whose
recorded tables (``Bench.print(part=)``) and ranges (``_common.record``) ``docs/valuation.md`` renders.
"""

from __future__ import annotations

import os
import statistics

import numpy as np
from _common import Bench, compare, markdown_table, record, repeat, timed
from bench_valuation import DATASETS, split
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import cross_val_predict

from shap_instances.valuation import EVIDENCE, label_issues


def _cleanlab(n_jobs: int | None):
    """cleanlab's out-of-fold logistic recipe as one call ``(X, y) -> label quality``, or None without cleanlab."""
    try:
        from cleanlab.filter import find_label_issues
        from cleanlab.rank import get_label_quality_scores
    except ImportError:
        return None

    def scores(X: np.ndarray, y: np.ndarray) -> np.ndarray:
        proba = cross_val_predict(LogisticRegression(max_iter=200), X, y, cv=5, method="predict_proba")
        find_label_issues(y, proba, n_jobs=n_jobs)
        return get_label_quality_scores(y, proba)

    return scores


def _one_seed(name: str, seed: int, n_train: int, cleanlab_calls: dict) -> dict:
    """AUCs and seconds of every side on one table and seed."""
    X, y, *_, flipped = split(name, seed, n_train, 200, 500)
    ours = lambda: label_issues(X, y, random_state=seed)["label_quality"].to_numpy()  # noqa: E731
    row: dict = {"n_train": len(y)}
    if cleanlab_calls:
        mine, theirs = compare(ours, lambda: cleanlab_calls["one process"](X, y))
        mine_again, default = compare(ours, lambda: cleanlab_calls["default"](X, y))
        row |= {"auc cleanlab": roc_auc_score(flipped, -theirs.result), "s cleanlab": theirs.seconds,
                "s ours again": mine_again.seconds, "s cleanlab default": default.seconds}
    else:
        mine = repeat(ours)
    seconds, former = timed(lambda: label_issues(X, y, random_state=seed, n_trees=200)["label_quality"].to_numpy())
    return row | {"auc ours": roc_auc_score(flipped, -mine.result), "s ours": mine.seconds,
                  "auc former": roc_auc_score(flipped, -former), "s former": seconds}


def _families(name: str, n_train: int) -> list[float]:
    """Seconds of each family of ours alone (seed 0, median of 3)."""
    X, y, *_ = split(name, 0, n_train, 200, 500)
    return [statistics.median(repeat(lambda e=e: label_issues(X, y, evidence=(e,), random_state=0)).seconds)
            for e in EVIDENCE]


def _median(runs: list[dict], key: str) -> float:
    """Median of ``key``'s seconds over seeds x repetitions."""
    return statistics.median(np.concatenate([np.atleast_1d(r[key]) for r in runs]))


def _ratios(runs: list[dict], ours: str, theirs: str, name: str) -> dict:
    """Median, least and greatest of the per-repetition ratios ``ours / theirs`` over seeds x repetitions."""
    values = np.concatenate([np.divide(r[ours], r[theirs]) for r in runs])
    return {name: float(np.median(values)), f"{name} min": float(values.min()), f"{name} max": float(values.max())}


def _summary(name: str, runs: list[dict]) -> dict:
    """One table's line: mean AUCs, the paired AUC difference, median seconds and ratios over seeds x repeats."""
    diff = np.array([r["auc ours"] - r["auc former"] for r in runs])
    out = {"table": name, "n_train": runs[0]["n_train"], "auc ours": np.mean([r["auc ours"] for r in runs]),
           "auc former": np.mean([r["auc former"] for r in runs]), "auc diff": diff.mean(),
           "auc diff se": diff.std(ddof=1) / np.sqrt(len(diff)) if len(diff) > 1 else float("nan"),
           "s ours": _median(runs, "s ours"), "s former": _median(runs, "s former")}
    if "s cleanlab" not in runs[0]:
        return out
    return out | {"auc cleanlab": np.mean([r["auc cleanlab"] for r in runs]), "s cleanlab": _median(runs, "s cleanlab"),
                  "s cleanlab default": _median(runs, "s cleanlab default"),
                  **_ratios(runs, "s ours", "s cleanlab", "ratio"),
                  **_ratios(runs, "s ours again", "s cleanlab default", "ratio default")}


def _auc_row(line: dict) -> list[str]:
    """One table's AUCs and ratios (the documentation's table)."""
    have = "ratio" in line
    return [f"{line['table'].replace('_', ' ')} ({line['n_train']:,})", f"{line['auc ours']:.4f}",
            f"{line['auc former']:.4f}", f"{line['auc diff']:+.4f} ± {line['auc diff se']:.4f}",
            f"{line['auc cleanlab']:.4f}" if have else "-", _ratio(line, "ratio") if have else "-",
            _ratio(line, "ratio default") if have else "-", f"{line['s former'] / line['s ours']:.1f}x"]


def _seconds_row(line: dict, families: list[float]) -> list[str]:
    """One table's median seconds of every side and of each family of ours alone."""
    have = "ratio" in line
    return [line["table"].replace("_", " "), f"{line['s ours']:.3f}", f"{line['s cleanlab']:.3f}" if have else "-",
            f"{line['s cleanlab default']:.3f}" if have else "-", f"{line['s former']:.3f}",
            *(f"{seconds:.3f}" for seconds in families)]


def _ratio(line: dict, key: str) -> str:
    return f"{line[key]:.1f}x ({line[key + ' min']:.1f}-{line[key + ' max']:.1f})"


def _span(values, unit: str = "", digits: int = 2) -> str:
    """``"0.22 to 0.44 s"``: the least and the greatest of ``values``."""
    return f"{min(values):.{digits}f} to {max(values):.{digits}f}{unit}"


def record_ranges(lines: list[dict], families: dict[str, list[float]]) -> None:
    """The ranges over the tables that the documentation's prose quotes, and how many tables meet each claim."""
    ranges = {"s ours": _span([line["s ours"] for line in lines], " s"),
              "s former": _span([line["s former"] for line in lines], " s"),
              "former / ours": _span([line["s former"] / line["s ours"] for line in lines], "x", 1),
              "tables": len(lines),
              "within 1 SE of former": int(sum(line["auc diff"] + line["auc diff se"] >= 0 for line in lines)),
              "largest AUC drop": f"{min(line['auc diff'] for line in lines):+.4f}"}
    for index, family in enumerate(EVIDENCE):
        ranges[f"s {family}"] = _span([seconds[index] for seconds in families.values()], " s")
    if "ratio" in lines[0]:
        ranges |= {"s cleanlab": _span([line["s cleanlab"] for line in lines], " s"),
                   "ratio": _span([line["ratio"] for line in lines], "x", 1),
                   "ratio default": _span([line["ratio default"] for line in lines], "x", 1),
                   "at least cleanlab's AUC": int(sum(line["auc ours"] >= line["auc cleanlab"] for line in lines))}
    record(**{f"range:{key}": value for key, value in ranges.items()})
    record(tables=[{key: float(value) if isinstance(value, np.floating) else value for key, value in line.items()}
                   for line in lines])


def main(bench: Bench) -> None:
    args = bench.args
    seeds = 2 if bench.quick else args.seeds
    calls = {"one process": _cleanlab(1), "default": _cleanlab(None)}
    calls = calls if calls["default"] is not None else {}
    if not calls:
        print("cleanlab is not importable here: only ours is timed (run in the peers' venv, see bench_valuation.py)")
    label_issues(*split("wine", 0, 100, 20, 20)[:2], random_state=0)  # imports and first calls, untimed
    lines, families = [], {}
    for name in DATASETS:
        runs = [_one_seed(name, seed, args.n_train, calls) for seed in range(seeds)]
        lines.append(_summary(name, runs))
        families[name] = _families(name, args.n_train)
        print(f"  {name} done (load {os.getloadavg()[0]:.1f})", flush=True)
    record(seeds=f"0-{seeds - 1}", n_train=args.n_train)
    bench.print(f"### label_issues against cleanlab's out-of-fold logistic scores ({seeds} seeds, up to "
                f"{args.n_train} training rows)", markdown_table(
                    ["table (rows)", "AUC ours", "AUC `n_trees=200`", "paired change ± SE", "AUC cleanlab",
                     "ours / cleanlab, one process", "ours / cleanlab, default `n_jobs`", "`n_trees=200` / ours"],
                    [_auc_row(line) for line in lines]), part="table")
    bench.print(markdown_table(["table", "s ours", "s cleanlab (one process)", "s cleanlab (default n_jobs)",
                                "s n_trees=200", *(f"s {family} alone" for family in EVIDENCE)],
                               [_seconds_row(line, families[line["table"]]) for line in lines]), part="seconds")
    record_ranges(lines, families)


def _arguments(parser) -> None:
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--n-train", type=int, default=1000)


if __name__ == "__main__":
    Bench(__doc__, arguments=_arguments).run(main)
