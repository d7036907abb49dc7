"""The one time-budget estimator (``approximators.Throughput``): closed-form cases, and that no other module turns
a measured time into a rate by dividing it by a count of units of work."""

from __future__ import annotations

import ast
import pathlib
import re

import pytest

from shap_instances.approximators import Throughput
from shap_instances.exceptions import BudgetError

PACKAGE = pathlib.Path(__file__).resolve().parents[1] / "shap_instances"


def test_one_probe_is_a_rate_without_fixed_part():
    pace = Throughput.measure(3.0, 12)  # 0.25 s a unit
    assert pace.per_unit == 0.25 and pace.fixed == 0.0
    assert pace.seconds_for(40) == 10.0
    assert Throughput.measure(2.0, 0).per_unit == 2.0  # no unit done yet: counted as one


def test_two_probes_give_the_fixed_and_per_unit_parts():
    pace = Throughput.through(1_000, 3.0, 3_000, 7.0)  # 2 ms per unit, 1 s fixed
    assert pace.per_unit == pytest.approx(0.002) and pace.fixed == pytest.approx(1.0)
    assert pace.seconds_for(3_000) == 7.0 and pace.seconds_for(1_000) == pytest.approx(3.0)
    assert pace.seconds_for(10_000) == pytest.approx(1.0 + 0.002 * 10_000)
    assert Throughput.through(1_000, 5.0, 2_000, 4.0).seconds_for(9_000) == 4.0  # a faster larger probe: flat


@pytest.mark.parametrize("pace", [Throughput(0.25), Throughput(0.003, anchor_seconds=1.0),
                                  Throughput.through(1_000, 3.0, 3_000, 7.0)])
@pytest.mark.parametrize("units", [1, 7, 250, 12_345])
def test_units_within_is_the_inverse_of_seconds_for(pace, units):
    """The most units that fit in the seconds of ``units`` units is ``units`` (within float rounding), never more
    than fit."""
    seconds = pace.seconds_for(units)
    assert units - 1 <= pace.units_within(seconds) <= units
    assert pace.units_within(seconds * (1 + 1e-9) + 1e-12) == units
    assert pace.seconds_for(pace.units_within(seconds + 0.5 * pace.per_unit)) <= seconds + 0.5 * pace.per_unit


def test_units_within_with_workers_and_at_no_cost():
    assert Throughput(0.5).units_within(10.0, workers=4) == 80
    assert Throughput(0.0).units_within(1.0) >= 10**12


def test_check_fits_returns_the_estimate_or_refuses_with_the_needed_budget():
    pace = Throughput(0.003, anchor_seconds=1.0)  # 1 s + 3 ms a unit
    assert pace.check_fits(1_000, 4.0, refusal=str) == pytest.approx(4.0)
    with pytest.raises(BudgetError, match=r"^the work needs 7 s$") as refused:
        pace.check_fits(2_000, 4.0, refusal=lambda estimate: f"the work needs {estimate:g} s",
                        needed=lambda estimate: estimate / 0.9)
    assert refused.value.needed == pytest.approx(7.0 / 0.9)
    with pytest.raises(BudgetError) as refused:
        pace.check_fits(2_000, 4.0, refusal=str)
    assert refused.value.needed is None


def test_observe_follows_the_recent_rate():
    pace = Throughput.through(1_000, 3.0, 3_000, 7.0)
    pace.observe(1.5, 3)  # the latest batch: 0.5 s a unit; the fixed part was paid
    assert pace.per_unit == 0.5 and pace.fixed == 0.0 and pace.seconds_for(4) == 2.0
    pace.observe(0.2, 2)
    assert pace.seconds_for(4) == pytest.approx(0.4)


def test_the_permutation_stop_rule_uses_the_recent_rate():
    """After two batches, the run stops before a unit that the latest batch's pace says would end past max_time."""
    from shap_instances.approximators import PermutationApproximator
    from shap_instances.approximators._budget import RunClock
    from shap_instances.approximators.permutation import _Loop, _RunState

    approximator = PermutationApproximator(n_permutations=100, max_time=10.0, silent=True)
    state = _RunState.fresh(None, 4, 1, {})
    loop = _Loop(cheap=False, done_before=0, per_unit=2, batches=2)
    clock = RunClock(10.0, "permutations", "")
    loop.recent.observe(1.0, 2)  # 0.5 s a permutation: a unit of 2 takes 1 s, fits
    assert approximator._stopping_reason(state, clock, loop) is None
    loop.recent.observe(30.0, 2)  # 15 s a permutation: the next unit would overrun the 10 s
    assert approximator._stopping_reason(state, clock, loop) == "max_time"


# A division whose left side is a measured time (a name or attribute about seconds, or a clock difference) and
# whose right side is not a constant: a rate or a unit count worked out beside the estimator.
_TIME_NAME = re.compile(r"(^|_)(seconds?|spent|elapsed|timings?|times?|duration|took|pace|per_\w+|t_\w+)($|_)")
_CLOCKS = {"perf_counter", "time", "monotonic"}

#: (module, the division as ast.unparse writes it): divisions that are not planning from a measured rate.
ALLOWED = {
    ("approximators/stratified.py", "spent / (m + 1)"),  # evaluations spent, not seconds: permutations done
    ("report/_models.py", "t_large / t_small"),  # the ratio of two probe times: the growth exponent
    ("report/_plan.py", "(costs.spent + work) / (1 - RESERVE)"),  # the reserve kept, a share of the budget
    ("report/_residual.py", "plan.sample_seconds / max(plan.sample_seconds + aggregate_planned, 1e-09)"),  # a share
}


def _is_time(node: ast.AST) -> bool:
    if isinstance(node, ast.Name):
        return bool(_TIME_NAME.search(node.id))
    if isinstance(node, ast.Attribute):
        return bool(_TIME_NAME.search(node.attr))
    if isinstance(node, ast.Subscript):
        return _is_time(node.value)
    if isinstance(node, ast.Call):
        name = getattr(node.func, "attr", getattr(node.func, "id", ""))
        return name in _CLOCKS or (name in {"max", "min"} and any(_is_time(arg) for arg in node.args))
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)):
        return _is_time(node.left) or _is_time(node.right)
    return False


def time_divisions(source: str) -> list[str]:
    """The divisions of a measured time by something not constant in ``source``."""
    return [ast.unparse(node) for node in ast.walk(ast.parse(source))
            if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Div, ast.FloorDiv))
            and _is_time(node.left) and not isinstance(node.right, ast.Constant)]


def test_the_scan_sees_the_usual_ways_of_taking_a_rate():
    found = time_divisions("a = (time.perf_counter() - start) / count\nb = spent / i * left\nc = seconds / k\n"
                           "d = elapsed / 2.0\ne = n / k\n")
    assert sorted(found) == ["(time.perf_counter() - start) / count", "seconds / k", "spent / i"]


def test_only_the_estimator_turns_measured_time_into_a_rate():
    """Seconds per unit and units per budget are worked out by ``approximators.Throughput`` only."""
    found = set()
    for path in sorted(PACKAGE.rglob("*.py")):
        module = path.relative_to(PACKAGE).as_posix()
        if module != "approximators/_budget.py":
            found |= {(module, division) for division in time_divisions(path.read_text(encoding="utf-8"))}
    assert found - ALLOWED == set(), "measure and plan with approximators.Throughput instead"
    assert ALLOWED - found == set(), "stale ALLOWED entries: remove them"
