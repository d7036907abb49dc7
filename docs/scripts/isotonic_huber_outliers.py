"""The Huber variant of SISR against the squared loss on games with outlying payoffs (docs/explainers/isotonic.md).

``python docs/scripts/isotonic_huber_outliers.py [--quick]``. The games are the tests' ``transformed_game``
(tests/test_isotonic.py): a sparse unit-norm gamma* on ``s`` of ``p`` players, payoffs ``T*^{-1}`` of the additive
game, for the transforms 5th root, sqrt, cube, exp and log; 8 seeds per transform, ``p = 6 + seed % 5`` (6 to 10).
Clean games have noise 0 or 0.005; a corrupted game (noise 0) has four coalitions other than the empty and the full
one replaced: "scale" (times 50), "up" (times 50 plus 5 max|v|), "down" (minus 5 max|v|), "mixed" (plus or minus
10 max|v|, the sign drawn). Each game is fitted with ``loss="squared"`` and ``loss="huber"`` (default delta) at the
true ``s``; per group of games the table gives the mean and the minimum cosine with gamma*, and the fits whose
support or signs miss gamma*'s.

Under ``benchmarks/run_all.py figures isotonic_huber_outliers`` the table is recorded as ``part:table``, and with it
how often Huber is worse or better than the squared loss (by more than 0.01 of cosine) on the corrupted games at
``s = 2``, and its mean cosine on the "down" games at ``s = 3``. ``--quick``: 2 seeds per transform.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from shap_instances.isotonic import sisr

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT / "tests"))
from _common import markdown_table, record  # noqa: E402
from test_isotonic import TRANSFORMS, transformed_game  # noqa: E402 - the tests' games, not a copy

KINDS = ("scale", "up", "down", "mixed")


def corrupt(v: np.ndarray, kind: str, seed: int) -> np.ndarray:
    """``v`` with four coalitions other than the empty and the full one replaced by outliers of ``kind``."""
    rng = np.random.default_rng(100 + seed)
    rows = rng.choice(np.arange(1, len(v) - 1), 4, replace=False)
    big, out = np.abs(v).max(), v.copy()
    if kind == "scale":
        out[rows] *= 50
    elif kind == "up":
        out[rows] = 50 * out[rows] + 5 * big
    elif kind == "down":
        out[rows] = -5 * big
    else:
        out[rows] = np.where(rng.random(4) < 0.5, 10.0, -10.0) * big
    return out


def fits(v: np.ndarray, truth: np.ndarray, s: int) -> list[tuple[float, bool]]:
    """(cosine with gamma*, support or sign miss) of the squared and the Huber fit."""
    support = np.flatnonzero(truth)
    found = []
    for loss in ("squared", "huber"):
        gamma = sisr(v, sparsity=s, loss=loss).gamma
        miss = set(np.flatnonzero(gamma)) != set(support) or bool(np.any(np.sign(gamma[support]) != 1))
        found.append((float(gamma @ truth), miss))
    return found


def games(seeds: int, s: int, noise: float = 0.0):
    """(transform, seed, payoffs, gamma*) of the sweep at support size ``s``."""
    for transform in TRANSFORMS:
        for seed in range(seeds):
            v, truth = transformed_game(6 + seed % 5, s, transform, noise, seed)
            yield transform, seed, v, truth


def row(name: str, s: str, results: list) -> list[str]:
    """One table row from ``[(squared, huber), ...]`` pairs of (cosine, miss)."""
    cos = np.array([[a[0], b[0]] for a, b in results])
    misses = np.array([[a[1], b[1]] for a, b in results]).sum(0)
    return [name, s, str(len(results)), f"{cos[:, 0].mean():.3f} / {cos[:, 1].mean():.3f}",
            f"{cos[:, 0].min():.3f} / {cos[:, 1].min():.3f}", f"{misses[0]} / {misses[1]}"]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="2 seeds per transform")
    seeds = 2 if parser.parse_args(argv).quick else 8
    rows, values = [], {}
    for s in (1, 2, 3):
        clean = [fits(v, truth, s) for noise in (0.0, 0.005) for *_, v, truth in games(seeds, s, noise)]
        rows.append(row("clean (noise 0, 0.005)", str(s), clean))
    corrupted = {(kind, s): [fits(corrupt(v, kind, seed), truth, s) for _, seed, v, truth in games(seeds, s)]
                 for kind in KINDS for s in (1, 2, 3)}
    rows += [row(kind, "3", corrupted[kind, 3]) for kind in KINDS]
    rows.append(row("all four kinds", "1", [r for kind in KINDS for r in corrupted[kind, 1]]))
    rows.append(row("scale, up, mixed", "2", [r for kind in ("scale", "up", "mixed") for r in corrupted[kind, 2]]))
    rows.append(row("down", "2", corrupted["down", 2]))
    at_two = [(a[0], b[0]) for kind in KINDS for a, b in corrupted[kind, 2]]
    values["s2.games"] = len(at_two)
    values["s2.huber_worse"] = sum(h < q - 0.01 for q, h in at_two)
    values["s2.huber_better"] = sum(h > q + 0.01 for q, h in at_two)
    values["s3.down.huber_mean"] = round(float(np.mean([b[0] for _, b in corrupted["down", 3]])), 3)
    values["part:table"] = markdown_table(["payoffs", "s", "cases", "mean cosine (squared / Huber)", "min cosine",
                                           "support or sign misses"], rows)
    print(values["part:table"], {key: value for key, value in values.items() if key != "part:table"}, sep="\n\n")
    record(**values)


if __name__ == "__main__":
    main()
