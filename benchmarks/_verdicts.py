"""The verdict rules of docs/reproductions.md as code: a reproduction's claims and measured values give its verdict.

A :class:`Claim` is one statement of a paper that a reproduction tests, with the paper's number or ordering, its
source (table, figure, page), the tolerance, and whether our protocol is the paper's. A reproduction script hands
its measurements to its result file (``_common.record``): for a claim of kind ``"number"`` a list of values, one per
seed (one value for a deterministic computation); for a claim of kind ``"ordering"`` a list of booleans, one per
seed: whether the paper's ordering held in that seed; for a claim of kind ``"mean"`` (the paper's number is a mean or
a rate over random draws, such as a recovery rate) a list of values, one per draw, whose mean is compared with the
paper's. :func:`verdict` applies the page's rules:

* **reproduced**: the protocol is the paper's, and every seed (at least :data:`MIN_SEEDS`, or one value of a
  deterministic computation) lies within the tolerance (a number) or shows the paper's ordering;
* **reproduced in kind**: the numbers are within the tolerance, or the ordering holds in more than half of the
  seeds, but the protocol differs, fewer than :data:`MIN_SEEDS` seeds ran, or some seeds miss;
* **differs**: a number outside the tolerance in more than half of the seeds, a mean over the draws outside the
  tolerance, or an ordering that holds in at most half of them;
* **not run**: no measured value.

A reproduction with several claims gets the weakest claim's verdict (differs < in kind < reproduced).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import NamedTuple

#: Seeds a random experiment needs for "reproduced".
MIN_SEEDS = 5
#: Verdicts from the weakest to the strongest (a reproduction takes its weakest claim's).
ORDER = ("not run", "differs", "reproduced in kind", "reproduced")


class Claim(NamedTuple):
    """One claim of a paper: ``key`` names the measured values in the result file."""

    key: str
    statement: str
    paper: float | str
    source: str
    kind: str = "ordering"  # or "number" (per seed), "mean" (the mean over the draws)
    tolerance: float | None = None  # absolute, for a number
    protocol: bool = False  # True: the paper's protocol, or every difference shown not to matter
    deterministic: bool = False

    def as_record(self) -> dict:
        return self._asdict()


class Outcome(NamedTuple):
    verdict: str
    reason: str


def _number(claim: Mapping, values: Sequence[float]) -> Outcome:
    misses = [not abs(v - claim["paper"]) <= claim["tolerance"] for v in values]  # NaN (undefined): a miss
    text = (f"{claim['statement']}: paper {claim['paper']:g} ({claim['source']}), ours "
            f"{', '.join(f'{v:g}' for v in values)}, tolerance {claim['tolerance']:.2g}")
    if 2 * sum(misses) > len(misses):
        return Outcome("differs", text + " (outside)")
    return _full_or_in_kind(claim, len(values), not any(misses), text)


def _mean(claim: Mapping, values: Sequence[float]) -> Outcome:
    mean = sum(values) / len(values)
    text = (f"{claim['statement']}: paper {claim['paper']:g} ({claim['source']}), ours {mean:.3g} (mean of "
            f"{len(values)} draws, {min(values):g} to {max(values):g}), tolerance {claim['tolerance']:.2g}")
    if not abs(mean - claim["paper"]) <= claim["tolerance"]:  # NaN (an undefined draw): a miss
        return Outcome("differs", text + " (outside)")
    return _full_or_in_kind(claim, len(values), True, text)


def _ordering(claim: Mapping, held: Sequence[bool]) -> Outcome:
    text = f"{claim['statement']} ({claim['source']}): holds in {sum(held)} of {len(held)} seeds"
    if 2 * sum(held) <= len(held):
        return Outcome("differs", text)
    return _full_or_in_kind(claim, len(held), all(held), text)


def _full_or_in_kind(claim: Mapping, n_values: int, every: bool, text: str) -> Outcome:
    enough = claim["deterministic"] or n_values >= MIN_SEEDS
    if every and enough and claim["protocol"]:
        return Outcome("reproduced", text)
    missing = [why for why, ok in (("not the paper's protocol", claim["protocol"]),
                                   (f"fewer than {MIN_SEEDS} seeds", enough), ("not every seed", every)) if not ok]
    return Outcome("reproduced in kind", text + " (" + "; ".join(missing) + ")")


def claim_outcome(claim: Mapping, values: Mapping) -> Outcome:
    """The verdict of one claim (a :class:`Claim` as a dict, as result files store it) given the recorded values."""
    measured = values.get(claim["key"])
    if measured is None:
        return Outcome("not run", f"{claim['statement']}: no measured value")
    measured = measured if isinstance(measured, list) else [measured]
    rule = {"number": _number, "mean": _mean}.get(claim["kind"], _ordering)
    return rule(claim, measured)


def verdict(claims: Sequence[Mapping], values: Mapping, prefix: str = "") -> Outcome:
    """The verdict of the claims whose key starts with ``prefix`` (the weakest claim's), with every claim's reason.

    Examples
    --------
    >>> claim = Claim("fewer", "the representer finds fewer than the loss", "slightly fewer", "Fig. 1").as_record()
    >>> verdict([claim], {"fewer": [False, True, False, False, False]}).verdict
    'differs'
    """
    chosen = [c for c in claims if c["key"].startswith(prefix)]
    if not chosen:
        raise KeyError(f"no claim with a key starting {prefix!r}")
    outcomes = [claim_outcome(c, values) for c in chosen]
    weakest = min(outcomes, key=lambda o: ORDER.index(o.verdict))
    return Outcome(weakest.verdict, "; ".join(o.reason for o in outcomes))
