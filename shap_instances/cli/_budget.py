"""``--time-budget`` and ``--max-evals`` on the command line: the seconds since the start, the budget options an
explainer takes, a refusal before work that cannot fit, and the remedies a :class:`BudgetError` names.

A command run as a program counts its ``--time-budget`` from the process start (:data:`_STARTED` is taken when this
module is imported, with the command line); called from Python (``main([...])``), from that call."""

from __future__ import annotations

import contextlib
import inspect
import math
import os
import sys
import time

from ..exceptions import BudgetError
from ._inputs import _call_explainer

_STARTED = time.perf_counter()  # the report's --time-budget counts from here, loading the CSV included

#: Share of what is left of ``--time-budget`` given to an explainer's ``max_time`` (the rest: writing the output).
_EXPLAINER_SHARE = 0.9


def _elapsed(args) -> float:
    """Seconds the command has run: since the process started as a program, since ``main`` from Python."""
    origin = getattr(args, "called_at", None)
    return max(time.perf_counter() - _STARTED, _process_age()) if origin is None else time.perf_counter() - origin


def _process_age() -> float:
    """Seconds since this process started (from /proc on Linux; 0 where that is not available)."""
    try:
        with open("/proc/self/stat") as stat, open("/proc/uptime") as uptime:
            started = int(stat.read().rsplit(")", 1)[1].split()[19]) / os.sysconf("SC_CLK_TCK")
            return max(float(uptime.read().split()[0]) - started, 0.0)
    except (OSError, ValueError, IndexError):
        return 0.0


def _budget_options(args, cls, name: str) -> dict:
    """``max_time`` (what is left of ``--time-budget``, less a margin for writing) and ``max_evals`` for an
    explainer that takes them; a note on stderr when ``--time-budget`` cannot reach the explainer, and an error
    when ``--max-evals`` cannot."""
    takes = set() if cls is None else set(inspect.signature(cls).parameters)
    options: dict = {}
    if args.max_evals is not None:
        if "max_evals" not in takes:
            raise ValueError(f"--max-evals applies to the explainers that sample (residual, isotonic), not to "
                             f"{name}: its cost does not depend on a budget; leave --max-evals out")
        options["max_evals"] = args.max_evals
        if "max_exact_features" in takes:  # isotonic: enumerate 2^p coalitions only while they fit in --max-evals
            options["max_exact_features"] = max(1, min(20, int(math.log2(args.max_evals))))
    if args.time_budget is not None:
        left = args.time_budget - _elapsed(args)
        if left <= 0:
            raise BudgetError(f"--time-budget {args.time_budget:g} s was spent before the explainer started (loading "
                              f"the data and fitting the model took {_elapsed(args):.0f} s); raise it")
        if "max_time" in takes:
            options["max_time"] = max(_EXPLAINER_SHARE * left, 0.001)  # the rest: writing the table
            args.explainer_from = _elapsed(args)  # a refusal's max_time is then said as a --time-budget
        else:
            print(f"shap-instances: plan: {name} has no time control of its own (its cost is fixed by the data): "
                  f"its first two rows are timed, and the rest run only if they fit in the {left:.0f} s of "
                  "--time-budget left", file=sys.stderr)
    return options


@contextlib.contextmanager
def _command_line_remedies(args):
    """A :class:`BudgetError` from Python, with the options of the command line that shorten the run; the budget
    that would work, when the error names one (``needed``, a ``max_time``), as the ``--time-budget`` it takes."""
    try:
        yield
    except BudgetError as exc:
        works = ""
        if exc.needed is not None and getattr(args, "explainer_from", None) is not None:
            works = (f" That is --time-budget {math.ceil(args.explainer_from + exc.needed / _EXPLAINER_SHARE) + 1} "
                     f"or more here ({args.explainer_from:.0f} s went on start-up, loading and fitting).")
        raise BudgetError(f"{exc}{works} On the command line: a larger --time-budget SECONDS, --max-evals N, fewer "
                          f"--rows, or --model ridge, logistic or knn (fast refit paths)", needed=exc.needed) from exc


def _named_budget(args, estimate: float) -> int:
    """The ``--time-budget`` that holds the command so far and ``estimate`` seconds of work, that work getting its
    share (:data:`_EXPLAINER_SHARE`) of what is left."""
    return math.ceil(_elapsed(args) + estimate / _EXPLAINER_SHARE) + 1


def _explain_in_time(args, explainer, rows, y_rows, name: str):
    """The rows explained by an explainer without a time control, against ``--time-budget``: two rows first,
    timed (the second gives the cost of a row, set-up done), then the rest only if it fits in what is left, else
    refused (:class:`BudgetError` naming the budget that would work) before that work."""
    from ..approximators import Throughput, format_seconds
    from ..utils import concat_explanations

    if len(rows) <= 2 or getattr(explainer, "stochastic", False):  # a sampling explainer: one call, one sample
        return _call_explainer(explainer, rows, y_rows)
    parts = []
    for i in (0, 1):
        started = time.perf_counter()
        parts.append(_call_explainer(explainer, rows.iloc[i:i + 1], y_rows.iloc[i:i + 1]))
    per_row = Throughput.measure(time.perf_counter() - started, 1)  # the second row: set-up done
    left = args.time_budget - _elapsed(args)

    def needed(estimate: float) -> int:
        return _named_budget(args, estimate)

    per_row.check_fits(len(rows) - 2, _EXPLAINER_SHARE * left, needed=needed, refusal=lambda estimate: (
        f"refused before the rest of the work: --explainer {name} takes about {per_row.per_unit:.3g} s a row "
        f"(measured on the second row), so the {len(rows) - 2:,} rows left need about {format_seconds(estimate)}, "
        f"more than the {max(left, 0):.0f} s left of --time-budget {args.time_budget:g}; pass --time-budget "
        f"{needed(estimate)} or more, or fewer --rows."))
    return concat_explanations([*parts, _call_explainer(explainer, rows.iloc[2:], y_rows.iloc[2:])])


def _check_fit_time(args, model_name: str, task: str, X, y, explainer: str) -> None:
    """Refuse at once a ``--model`` whose fit alone would outlast ``--time-budget``: on a table of at least four
    times the larger probe sample, the fit's time is estimated from two timed fits on samples and printed."""
    from ..approximators import format_seconds
    from ..report import PROBE_ROWS, estimate_fit_seconds

    if args.time_budget is None or len(X) < 4 * PROBE_ROWS[-1]:
        return
    seconds, how = estimate_fit_seconds(model_name, task, X, y, args.seed, explainer=explainer,
                                        max_seconds=args.time_budget - _elapsed(args))
    left = args.time_budget - _elapsed(args)
    if seconds > left:
        fast = ("ridge", "knn") if task == "regression" else ("logistic", "naive_bayes", "knn")
        faster = [name for name in fast if name != model_name]
        needed = _named_budget(args, seconds)
        raise BudgetError(f"refused before the work: fitting --model {model_name} on {len(X):,} rows would take about "
                          f"{format_seconds(seconds)} ({how}), more than the {max(left, 0):.0f} s left of "
                          f"--time-budget {args.time_budget:g}; pass --time-budget {needed} or more (the start-up so "
                          f"far and the fit; the explainer's own time comes on top), or choose a model that fits "
                          f"faster (--model {' or '.join(faster)}), or explain a sample of the table", needed=needed)
    print(f"shap-instances: plan: fitting --model {model_name} on {len(X):,} rows, about {format_seconds(seconds)} "
          f"({how}); {left:.0f} s of --time-budget left", file=sys.stderr)


class _PartitionBudget:
    """``call`` of one ``--explain`` partition under ``--time-budget``: an explainer with ``max_time`` gets an equal
    share of what is left per partition, and a partition is refused (:class:`BudgetError`, the output discarded)
    when the time left cannot hold it at the pace measured on the partitions done so far (here, or on the worker).
    Picklable: the deadline is wall-clock time."""

    def __init__(self, call, args, explainer, n_parts: int) -> None:
        left = args.time_budget - _elapsed(args)
        self.call, self.budget, self.n_parts = call, args.time_budget, max(n_parts, 1)
        self.deadline = time.time() + _EXPLAINER_SHARE * left
        self.started, self.done = time.time(), 0
        if getattr(explainer, "max_time", None) is not None:
            explainer.max_time = max(_EXPLAINER_SHARE * left / self.n_parts, 0.001)

    def __call__(self, explainer, part, *args, **kwargs):
        from ..approximators import Throughput

        now = time.time()
        pace = Throughput.measure(now - self.started, self.done) if self.done else Throughput(0.0)
        left = self.n_parts - self.done
        needed = math.ceil(self.budget + left * max(pace.per_unit, 1.0) / _EXPLAINER_SHARE)
        pace.check_fits(1, self.deadline - now, refusal=lambda _: (
            f"refused before the rest of the work: {self.done} partition(s) took {pace.per_unit:.3g} s each, and the "
            f"{left} left cannot end within --time-budget {self.budget:g}; pass --time-budget {needed} or more, or "
            "explain a smaller file (nothing was written)"))
        result = self.call(explainer, part, *args, **kwargs)
        self.done += 1
        return result
