"""``shap-instances report``: the end-to-end report of :func:`shap_instances.report.run_report`, its output folder
and its ``--time-budget`` checked first."""

from __future__ import annotations

import math
from pathlib import Path

from ..exceptions import BudgetError
from ._budget import _elapsed
from ._inputs import _check_output, _load, _load_model_file


def _cmd_report(args) -> int:
    if not args.out.strip():
        raise ValueError("--out is an empty path (it would be the current folder); pass the report's folder")
    _check_output(Path(args.out), args, folder=True)
    _check_report_floor(args)
    X, y, task = _load(args)
    from ..report import run_report

    model = None if args.model_file is None else _load_model_file(args, X)[0]

    # run as a program, the interpreter's start, the imports and reading the CSV count against the budget; called
    # from Python with its arguments (a process that may have run for hours), the budget counts from that call
    spent = _elapsed(args)
    if args.time_budget - spent < 1:  # the least budget run_report takes: refused here, in the command's words
        raise BudgetError(f"refused before the work: --time-budget {args.time_budget:g} was spent on start-up and "
                          f"loading the data ({spent:.1f} s; the machine is busy); pass --time-budget "
                          f"{_with_margin(2 * spent)} or more", needed=_with_margin(2 * spent))
    try:
        path = run_report(X, y, task=task, model=args.model, out=args.out, seed=args.seed, silent=args.silent,
                          time_budget=max(args.time_budget - spent, 1e-3),
                          max_memory=None if args.max_memory is None else args.max_memory * 2**30,
                          fitted_model=model, max_evals=args.max_evals, startup=spent)
    except BudgetError as exc:
        if exc.needed is None:
            raise
        needed = _with_margin(exc.needed + spent)
        raise BudgetError(f"refused before the work: --time-budget {args.time_budget:g} is too small for the "
                          f"smallest report here: {spent:.1f} s went on start-up and loading the data, and the report "
                          f"itself needs about {exc.needed:.0f} s more; pass --time-budget {needed} or more",
                          needed=needed) from exc
    print(f"report written to {path}")
    return 0


def _check_report_floor(args) -> None:
    """Refuse at once, before the data are read, a ``--time-budget`` below what any report needs: the start-up so
    far and the fixed work of the least report (:func:`shap_instances.report.least_report_seconds`)."""
    from ..report import least_report_seconds

    spent = _elapsed(args)
    floor = least_report_seconds(spent, forest=args.model_file is None)
    if floor > args.time_budget:
        # reading the data, fitting the models and the bounded probes are not measured yet: they are given the time
        # the start-up took on this machine, now (both slow down alike with the load)
        named = _with_margin(floor + spent)
        raise BudgetError(f"refused before the work: --time-budget {args.time_budget:g} is too small for any report: "
                          f"{spent:.1f} s went on start-up, and the least report's fixed work (its figures, overview "
                          f"and writing) needs about {floor - spent:.0f} s more, before the data are read; pass "
                          f"--time-budget {named} or more (as long again as the start-up for reading the data and "
                          "fitting the models)", needed=named)


#: A budget the command names must hold on the next run too, whose start-up and probes vary with the load: the
#: estimate plus this share of it, plus a second (seen short by 10% at load 6 with one second alone).
NAMED_BUDGET_MARGIN = 0.15


def _with_margin(seconds: float) -> int:
    """The whole seconds of ``seconds`` and its margin, the budget a refusal names.

    Examples
    --------
    >>> _with_margin(40.0)
    47
    """
    return math.ceil(seconds * (1 + NAMED_BUDGET_MARGIN)) + 1
