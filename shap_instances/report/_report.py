"""``run_report``: the end-to-end instance analysis behind ``shap-instances report``."""

from __future__ import annotations

import time
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402
from sklearn.model_selection import train_test_split  # noqa: E402
from tqdm.auto import tqdm  # noqa: E402

from . import _sections  # noqa: E402
from ._html import Report  # noqa: E402

__all__ = ["run_report"]


def run_report(X: pd.DataFrame, y: pd.Series, *, task: str = "regression", model: str = "auto",
               out="shap-instances-report", seed: int = 0, silent: bool = False, test_size: float = 0.2) -> Path:
    """Analyse a dataset's training instances end to end and write an HTML report with PNG figures.

    The data are split into training and held-out rows. Sections (each skipped with a note when it does not
    apply): the residual decomposition of a linear model over training instances (CC plot, most helpful
    and harmful instances, behaviour-based outliers, data values), a random forest's predictions as
    proximity-weighted sums of training targets with trust scores for held-out rows, and the
    representer-point view of the linear model.

    Parameters
    ----------
    X : DataFrame
        Numeric features.
    y : Series
        Target.
    task : {"regression", "classification"}
    model : str
        The linear model of the command line ("auto": ridge or logistic regression).
    out : str or Path
        Output folder: ``index.html`` (self-contained) and the figures as PNG files.
    seed : int
        Seed of the split and of every sampled estimate.
    silent : bool
        No progress bar.

    Returns
    -------
    Path
        The HTML file.

    Examples
    --------
    >>> from shap_instances.datasets import load_diabetes
    >>> from shap_instances.report import run_report
    >>> X, y = load_diabetes()
    >>> path = run_report(X.iloc[:120], y.iloc[:120], out=__import__("tempfile").mkdtemp(), silent=True)
    >>> path.name
    'index.html'
    """
    start = time.perf_counter()
    stratify = y if task == "classification" else None
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=test_size, random_state=seed,
                                                        stratify=stratify)
    context = _sections.Context(X_train, X_test, y_train, y_test, task=task, model=model, seed=seed)
    report = Report(
        title="shap-instances report",
        intro=(f"{len(X)} rows x {X.shape[1]} features ({task}); {len(X_train)} training instances are explained, "
               f"{len(X_test)} held-out rows are used for evaluation. Seed {seed}."),
    )
    steps = [step for step in _sections.SECTIONS if step.applies(context)]
    skipped = [step for step in _sections.SECTIONS if step not in steps]
    with plt.rc_context({"figure.max_open_warning": 0}):
        for step in tqdm(steps, desc="report", unit="section", disable=silent, leave=False):
            step.build(report, context)
    for step in skipped:
        report.sections[0].text(f"Section skipped: {step.skip_reason(context)}")
    report.sections[0].text(f"Computed in {time.perf_counter() - start:.1f} s.")
    report.tables.update(context.results)  # the full tables behind the report's excerpts
    return report.write(out)
