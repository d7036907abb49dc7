"""``benchmarks/bench_valuation.py`` and ``bench_label_issues.py``: what they record for the documentation.

The scripts need the peers' environment (pyDVL, cleanlab) to run; these tests call their summarising functions on
made-up numbers, which need neither.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

import bench_label_issues  # noqa: E402 - benchmarks/ is not a package
import bench_valuation  # noqa: E402
from _common import VALUES_ENV  # noqa: E402


def test_the_ranking_counts_the_best_and_the_datasets_within_one_and_two_standard_errors():
    auc = pd.DataFrame({"a": [0.90, 0.80, 0.70], "b": [0.895, 0.85, 0.60]}, index=["d1", "d2", "d3"])
    sem = pd.DataFrame({"a": [0.01, 0.02, 0.01], "b": [0.01, 0.01, 0.04]}, index=auc.index)
    rows = {line.split(" | ")[0].strip("| "): line.split(" | ")[1:] for line in
            bench_valuation.ranking_table(auc, sem).splitlines()[2:]}
    # a: best on d1 and d3; 0.05 behind on d2 (2.5 of its SE). b: best on d2; half an SE behind on d1, 2.5 on d3.
    assert rows["a"] == ["2 of 3", "2 of 3", "2 of 3", "d2 |"]
    assert rows["b"] == ["1 of 3", "2 of 3", "2 of 3", "d3 |"]


def test_a_count_of_datasets_needs_both_columns():
    table = pd.DataFrame({"x": [1.0, 2.0, 3.0], "y": [1.0, 1.0, 4.0]})
    assert bench_valuation._count(table, "x", "y", ">=") == "2 of 3"
    assert bench_valuation._count(table, "x", "y", ">") == "1 of 3"
    assert bench_valuation._count(table, "x", "missing", ">") == "-"


def test_an_unknown_part_is_refused_before_any_part_runs(monkeypatch, capsys):
    ran: list[str] = []
    monkeypatch.setattr(bench_valuation, "run_part", lambda part, args: ran.append(part))
    monkeypatch.setattr(sys, "argv", ["bench_valuation.py", "detection", "speeed"])
    with pytest.raises(SystemExit):
        bench_valuation.main()
    assert "no part named ['speeed']" in capsys.readouterr().err and ran == []


def _line(table: str, ours: float, cleanlab: float, diff: float, se: float) -> dict:
    return {"table": table, "n_train": 100, "auc ours": ours, "auc former": ours - diff, "auc diff": diff,
            "auc diff se": se, "s ours": 0.3, "s former": 0.9, "auc cleanlab": cleanlab, "s cleanlab": 0.06,
            "s cleanlab default": 0.15, "ratio": 5.0, "ratio min": 4.0, "ratio max": 6.0, "ratio default": 2.0,
            "ratio default min": 1.5, "ratio default max": 2.5}


def test_label_issues_records_every_value_that_docs_valuation_quotes(tmp_path, monkeypatch):
    values = tmp_path / "values.json"
    monkeypatch.setenv(VALUES_ENV, str(values))
    lines = [_line("wine", 0.99, 0.98, -0.0015, 0.002), _line("pima", 0.83, 0.84, -0.002, 0.001)]
    bench_label_issues.record_ranges(lines, {"wine": [0.1, 0.2, 0.03], "pima": [0.12, 0.25, 0.05]})
    recorded = json.loads(values.read_text())
    assert recorded["range:within 1 SE of former"] == 1 and recorded["range:at least cleanlab's AUC"] == 1
    assert recorded["range:s forest"] == "0.20 to 0.25 s" and recorded["range:largest AUC drop"] == "-0.0020"
    # wine's drop is within its standard error, pima's is not
    quoted = set(re.findall(r"\{\{ result:bench-label_issues:([^}]+?) \}\}", (ROOT / "docs" / "valuation.md")
                            .read_text()))
    assert quoted and quoted <= set(recorded)
