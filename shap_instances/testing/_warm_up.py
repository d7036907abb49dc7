"""Compile the package's numba kernels once, so that the first real call does not pay for it.

Every kernel is compiled with ``cache=True`` (:data:`shap_instances.utils.JIT_OPTIONS`): the machine code is
written to ``__pycache__`` next to the sources the first time a kernel runs with a given signature, and later
processes load it in milliseconds. On a fresh install nothing is cached yet, and the first explanation of each
family compiles its kernels (the logistic family's, the longest, after saying so:
:func:`shap_instances.utils.announce_compile`); what each family costs
is measured by ``benchmarks/bench_compile.py`` (``benchmarks/results/bench-compile.json``; ``docs/engine.md``,
"Compilation"). The warm-up is a convenience that pays it ahead: ``python -m shap_instances.testing._warm_up``
runs every explainer family once on tiny data of the types the package uses (float64 features and targets, as
``check_data`` converts them; six explained rows, so that the fused kernels for many outputs run too), the
logistic family in a second process beside the others, so that cost is paid once, at set-up
(``scripts/setup.sh`` runs it). Its results are thrown away; it reads and writes no user file. shap's own numba
functions are not cached by shap (no ``cache=True``) and compile again in every process.

Examples
--------
>>> from shap_instances.testing._warm_up import FAMILIES
>>> sorted(FAMILIES)[:3]
['boosting', 'forest', 'isotonic']
"""

from __future__ import annotations

import subprocess
import sys
import time
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from ..exceptions import InvalidParameterError

__all__ = ["FAMILIES", "warm_up"]


def _data(n: int = 24, p: int = 3, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Tiny data: features, a continuous target and a binary label (both labels in every half)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    y = X @ np.arange(1.0, p + 1.0) + rng.normal(size=n)
    labels = (np.arange(n) % 2).astype(float)
    return X, y, labels


def _play(cases: list[tuple[Any, np.ndarray, np.ndarray, str]]) -> None:
    """Each ``(model, X, y, refit)`` as a residual game: exact, sampled and aggregated. Six explained rows, more
    than the features, so that the fused kernels for every explained row run too."""
    from ..approximators import ExactApproximator, PermutationApproximator
    from ..games import ResidualGame

    sampler = PermutationApproximator(n_permutations=4, random_state=0, silent=True)
    for model, X, y, refit in cases:
        game = ResidualGame(model, X, y, X[:6] + 0.1, y[:6], refit=refit)
        ExactApproximator(silent=True).estimate(game)
        sampler.estimate(game)
        sampler.estimate(game.aggregate(np.ones((game.n_outputs, 2))))
        if hasattr(game.fast_path, "shapley_values"):
            game.fast_path.shapley_values()


def _refits() -> None:
    """The refit games of ``InstanceKernelExplainer`` but the logistic regression's."""
    from sklearn.dummy import DummyRegressor
    from sklearn.ensemble import RandomForestRegressor
    from sklearn.kernel_ridge import KernelRidge
    from sklearn.linear_model import LinearRegression, Ridge
    from sklearn.naive_bayes import ComplementNB, GaussianNB
    from sklearn.neighbors import KNeighborsRegressor

    X, y, labels = _data(n=8)
    forest = RandomForestRegressor(n_estimators=3, max_depth=2, random_state=0)
    _play([(Ridge(alpha=1.0), X, y, "exact"), (LinearRegression(), X, y, "exact"), (DummyRegressor(), X, y, "exact"),
           (KNeighborsRegressor(n_neighbors=3), X, y, "exact"), (KernelRidge(alpha=0.5, kernel="rbf"), X, y, "exact"),
           (forest, X, y, "exact"), (forest, X, y, "fixed_structure"), (GaussianNB(), X, labels, "exact"),
           (ComplementNB(), np.abs(np.round(X * 3)), labels, "exact")])


def _logistic() -> None:
    """The logistic regression's refit game (the longest to compile): two labels, and three (softmax)."""
    from sklearn.linear_model import LogisticRegression

    X, _, labels = _data(n=8)
    _play([(LogisticRegression(), X, labels, "exact"), (LogisticRegression(), X, np.arange(8) % 3.0, "exact")])


def _forest() -> None:
    """``GapExplainer``: the proximity kernels of random forests."""
    from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor

    from ..explainers.gap import GapExplainer

    X, y, labels = _data()
    for model, target in ((RandomForestRegressor(n_estimators=3, random_state=0), y),
                          (RandomForestClassifier(n_estimators=3, random_state=0), labels)):
        model.fit(X, target)
        GapExplainer(model, X, y=target)(X[:3])


def _boosting() -> None:
    """``BoostingExplainer``: target weights, gradient contributions and the top-k kernels."""
    from sklearn.datasets import make_friedman1
    from sklearn.ensemble import GradientBoostingClassifier, GradientBoostingRegressor, HistGradientBoostingRegressor

    from ..boosting import read_boosted_model, row_major_contributions, top_gradient_contributions
    from ..explainers.boosting import BoostingExplainer

    X, y = make_friedman1(60, n_features=5, random_state=0)
    labels = (y > np.median(y)).astype(float)
    for model, target in ((GradientBoostingRegressor(n_estimators=3, max_depth=2, random_state=0), y),
                          (HistGradientBoostingRegressor(max_iter=3, max_depth=2, early_stopping=False), y),
                          (GradientBoostingClassifier(n_estimators=3, max_depth=2, random_state=0), labels)):
        model.fit(X, target)
        for kind in ("auto", "gradients"):
            BoostingExplainer(model, X, y=target, kind=kind)(X[:3])
        trees = read_boosted_model(model, X, target)
        query = trees.apply(X[:5])
        for leaf_size in (4, None):  # the two top-k kernels: pruned by leaf size, and max-score
            top_gradient_contributions(trees, query, 2, leaf_size, row_major_contributions(trees, 0))


def _isotonic() -> None:
    """``IsotonicShapleyExplainer``: the coalition tables and the isotonic fits."""
    from sklearn.linear_model import Ridge

    from ..explainers.isotonic import IsotonicShapleyExplainer

    X, y, _ = _data(p=4)
    model = Ridge().fit(X, y)
    for step in ("niht", "sphere"):  # the squared loss's kernels, and the robust (Huber) loss's of each step
        for loss in ("squared", "huber"):
            IsotonicShapleyExplainer(model, X, silent=True, loss=loss, gamma_step=step)(X[:2])


def _lowrank() -> None:
    """``MatrixFactorizationRepresenter``: the representer values of a low-rank (nuclear-norm) model."""
    from ..lowrank import MatrixFactorizationRepresenter, SoftImpute

    rng = np.random.default_rng(0)
    pairs = np.argwhere(rng.random((8, 6)) < 0.7)
    ratings = rng.normal(size=len(pairs))
    model = SoftImpute(lam=0.5).fit(pairs, ratings)
    representer = MatrixFactorizationRepresenter.from_soft_impute(model, pairs, ratings)
    for mode in ("item", "user"):
        representer(pairs[:2], mode=mode)


FAMILIES: dict[str, Callable[[], None]] = {
    "logistic": _logistic,
    "refits": _refits,
    "forest": _forest,
    "boosting": _boosting,
    "isotonic": _isotonic,
    "lowrank": _lowrank,
}
"""Family name -> a function that runs it once on tiny data (and so compiles its kernels)."""


def warm_up(families: list[str] | None = None, *, verbose: bool = True) -> dict[str, float]:
    """Run each explainer family once on tiny data, so that its numba kernels are compiled and cached.

    Parameters
    ----------
    families : list of str, optional
        Names from :data:`FAMILIES`; all of them by default.
    verbose : bool, default=True
        Print one line per family with its time.

    Returns
    -------
    dict
        Family name -> seconds it took (compiling, or loading what an earlier run cached).

    Raises
    ------
    InvalidParameterError
        A name that is not in :data:`FAMILIES`.

    Examples
    --------
    >>> seconds = warm_up(["lowrank"], verbose=False)
    >>> list(seconds)
    ['lowrank']
    """
    unknown = sorted(set(families or ()) - set(FAMILIES))
    if unknown:
        raise InvalidParameterError(f"unknown warm-up families {unknown}; choose from {sorted(FAMILIES)}")
    seconds = {}
    for name in families or list(FAMILIES):
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # tiny data: the warnings are about it, not about the kernels
            FAMILIES[name]()
        seconds[name] = time.perf_counter() - start
        if verbose:
            print(f"  warm-up {name}: {seconds[name]:.1f} s", flush=True)
    return seconds


def _main(families: list[str]) -> int:
    """``python -m shap_instances.testing._warm_up [FAMILY ...]``: the named families; without names all of them, the
    logistic regression's (about half the time) in a second process beside the others (2 cores: half the wall
    time). Returns the exit status."""
    if families:
        warm_up(families)
        return 0
    second = subprocess.Popen([sys.executable, "-m", "shap_instances.testing._warm_up", "logistic"])
    try:
        warm_up([name for name in FAMILIES if name != "logistic"])
    finally:
        status = second.wait()
    return status


if __name__ == "__main__":  # pragma: no cover - run by scripts/setup.sh
    sys.exit(_main(sys.argv[1:]))
