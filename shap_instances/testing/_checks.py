"""``check_explainer``: the conformance check that every explainer and every plugin passes.

In the spirit of scikit-learn's ``check_estimator``: it builds a small problem (the class's
:meth:`~shap_instances.InstanceExplainer.conformance_problem`, or one passed in), then checks the constructor
and call contracts, the legacy API, serialisation, column handling, random state, efficiency, shap's idioms
and that shap's plots render. Each check is a small function; the first that fails raises an
``AssertionError`` naming the check and what was wrong.
"""

from __future__ import annotations

import copy
import inspect
import io
import pickle
from collections.abc import Callable
from typing import Any

import numpy as np
import shap

from .._base import ConformanceProblem
from ..exceptions import DataValidationError, InvalidParameterError

__all__ = ["ConformanceProblem", "check_explainer"]


#: shap's plots that must render an explanation of one output: (name, function of the explanation, explainer).
_PLOTS: dict[str, Callable] = {
    "waterfall": lambda e, ex: shap.plots.waterfall(e[0], show=False),
    "bar": lambda e, ex: shap.plots.bar(e, show=False),
    "beeswarm": lambda e, ex: shap.plots.beeswarm(e, show=False),
    "heatmap": lambda e, ex: shap.plots.heatmap(e, show=False),
    "scatter": lambda e, ex: shap.plots.scatter(e[:, int(np.abs(e.values).mean(0).argmax())], show=False),
    "violin": lambda e, ex: shap.plots.violin(e, show=False),
    "force": lambda e, ex: shap.plots.force(e[0], matplotlib=True, show=False),
    "decision_plot": lambda e, ex: shap.decision_plot(_first(ex.expected_value), e.values, show=False),
}


def check_explainer(cls: type, problem: ConformanceProblem | None = None) -> None:
    """Check that an explainer class follows the shap_instances contract; raise on the first departure.

    Run it in a plugin's own tests (``check_explainer(MyExplainer)``); the package runs it over every
    registered explainer. The problem comes from ``cls.conformance_problem()`` unless one is given.

    Checked: the class is a :class:`shap.Explainer`; ``(model, masker)`` are its only positional parameters
    and everything else is keyword-only, with ``data=`` an alias of ``masker``; options it does not accept
    and invalid values of the shared options are refused with a ``TypeError`` / ``ValueError``; the call
    returns a :class:`shap.Explanation` of consistent shapes whose ``base + values.sum(1)`` equals the
    problem's independently computed quantity; ``shap_values`` / ``expected_value`` agree with the call;
    ``save`` / ``load`` and pickle round trips give the same values; a DataFrame with reordered columns gives
    the same values, renamed columns and a wrong width are refused; an int ``random_state`` reproduces;
    shap's idioms (``e.abs.mean(0).argsort``, ``e[:, i]``) work; and shap's waterfall, bar, beeswarm,
    heatmap, scatter, violin, force and decision plots render.

    Parameters
    ----------
    cls : type
        The explainer class.
    problem : ConformanceProblem, optional

    Raises
    ------
    AssertionError
        Naming the failed check.

    Examples
    --------
    >>> import shap_instances as si
    >>> si.testing.check_explainer(si.NaiveBayesExplainer)
    """
    import matplotlib.pyplot as plt

    problem = problem if problem is not None else cls.conformance_problem()  # type: ignore[attr-defined]
    checks = [_check_class, _check_signature, _check_options_refused, _check_call, _check_legacy_api,
              _check_serialisation, _check_columns, _check_random_state, _check_idioms, _check_plots]
    context: dict[str, Any] = {}
    for check in checks:
        try:
            check(cls, problem, context)
        except AssertionError as exc:
            raise AssertionError(f"{cls.__name__} fails {check.__name__.removeprefix('_check_')}: {exc}") from exc
        except Exception as exc:
            raise AssertionError(f"{cls.__name__} fails {check.__name__.removeprefix('_check_')}: raised "
                                 f"{type(exc).__name__}: {exc}") from exc
        finally:
            plt.close("all")


# ---------------------------------------------------------------------------------------------- helpers
def _build(cls, problem: ConformanceProblem, *, alias: bool = False, **extra: Any) -> Any:
    kwargs = dict(problem.options)
    if problem.y is not None:
        kwargs["y"] = problem.y
    kwargs.update(extra)
    if alias:
        return cls(problem.model, data=problem.masker, **kwargs)
    return cls(problem.model, problem.masker, **kwargs)


def _call(explainer: Any, problem: ConformanceProblem, X: Any = None) -> shap.Explanation:
    X = problem.X if X is None else X
    if problem.y_explained is not None:
        return explainer(X, problem.y_explained)
    return explainer(X)


def _accepted(cls) -> set[str]:
    return set(inspect.signature(cls.__init__).parameters)


def _first(value: Any) -> float:
    value = np.asarray(value)
    return float(value.ravel()[0]) if value.ndim else float(value)


def _one_output(explanation: shap.Explanation) -> shap.Explanation:
    return explanation[..., 0] if np.ndim(explanation.values) == 3 else explanation


def _same(a: Any, b: Any, what: str, atol: float = 0.0) -> None:
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    assert a.shape == b.shape, f"{what}: shapes {a.shape} and {b.shape} differ"
    assert np.allclose(a, b, atol=atol, rtol=0, equal_nan=True), (
        f"{what}: values differ by up to {np.nanmax(np.abs(a - b)):.3g}")


# ---------------------------------------------------------------------------------------------- checks
def _check_class(cls, problem: ConformanceProblem, context: dict[str, Any]) -> None:
    assert isinstance(cls, type) and issubclass(cls, shap.Explainer), "not a shap.Explainer subclass"
    assert callable(getattr(cls, "supports_model", None)), "no supports_model classmethod"


def _check_signature(cls, problem: ConformanceProblem, context: dict[str, Any]) -> None:
    parameters = list(inspect.signature(cls.__init__).parameters.values())[1:]
    positional = [p.name for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    assert positional == ["model", "masker"], f"positional parameters are {positional}, not ['model', 'masker']"
    names = {p.name for p in parameters}
    assert "data" in names, "no data= alias of masker"
    if "y" in names:
        kind = next(p.kind for p in parameters if p.name == "y")
        assert kind == inspect.Parameter.KEYWORD_ONLY, "y is not keyword-only"
    call = list(inspect.signature(cls.__call__).parameters)[1:3]
    assert call[:1] == ["X"] and (len(call) < 2 or call[1] == "y"), f"__call__ starts with {call}, not (X, y=None)"


def _check_options_refused(cls, problem: ConformanceProblem, context: dict[str, Any]) -> None:
    try:
        _build(cls, problem, not_an_option_of_any_explainer=1)
    except TypeError:
        pass
    else:
        raise AssertionError("an unknown keyword option was accepted")
    accepted = _accepted(cls)
    for name, bad in (("random_state", -1), ("n_jobs", 0), ("max_memory", -5.0), ("batch_size", 0)):
        if name not in accepted:
            continue
        try:
            _build(cls, problem, **{name: bad})  # type: ignore[arg-type]  # (never named alias)
        except (InvalidParameterError, ValueError, TypeError):
            continue
        raise AssertionError(f"{name}={bad!r} was accepted")


def _check_call(cls, problem: ConformanceProblem, context: dict[str, Any]) -> None:
    explainer = _build(cls, problem)
    explanation = _call(explainer, problem)
    assert isinstance(explanation, shap.Explanation), f"the call returned {type(explanation).__name__}"
    values = np.asarray(explanation.values)
    n = len(problem.X)
    assert values.ndim in (2, 3) and values.shape[0] == n, f"values have shape {values.shape} for {n} rows"
    base = np.asarray(explanation.base_values)
    assert base.shape == ((n,) if values.ndim == 2 else (n, values.shape[2])), (
        f"base_values have shape {base.shape} for values of shape {values.shape}")
    assert len(explanation.feature_names) == values.shape[1], "one feature name per player is missing"
    assert np.shape(explanation.data) == values.shape[:2], f"data has shape {np.shape(explanation.data)}"
    total = base + values.sum(axis=1)
    assert np.all(np.isfinite(total)), "base + values.sum(1) is not finite"
    if problem.explained is not None:
        expected = np.asarray(problem.explained(problem.X), dtype=np.float64).reshape(total.shape)
        gap = np.max(np.abs(total - expected) / np.maximum(1.0, np.abs(expected)))
        assert gap <= problem.atol, f"base + values.sum(1) departs from the explained quantity by {gap:.3g}"
    alias = _call(_build(cls, problem, alias=True), problem)
    _same(alias.values, values, "data= alias")
    context.update(explainer=explainer, explanation=explanation)


def _check_legacy_api(cls, problem: ConformanceProblem, context: dict[str, Any]) -> None:
    explainer, explanation = context["explainer"], context["explanation"]
    if problem.y_explained is not None:
        legacy = explainer.shap_values(problem.X, problem.y_explained)
    else:
        legacy = explainer.shap_values(problem.X)
    _same(legacy, explanation.values, "shap_values(X) vs explainer(X).values")
    expected = np.asarray(explainer.expected_value, dtype=np.float64)
    base = np.asarray(explanation.base_values, dtype=np.float64)
    if expected.shape == base.shape:
        _same(expected, base, "expected_value (per row) vs base_values")
    else:
        _same(np.broadcast_to(expected, base.shape), base, "expected_value vs base_values")


def _check_serialisation(cls, problem: ConformanceProblem, context: dict[str, Any]) -> None:
    explainer, explanation = context["explainer"], context["explanation"]
    buffer = io.BytesIO()
    explainer.save(buffer)
    buffer.seek(0)
    loaded = cls.load(buffer)
    assert type(loaded) is cls, f"load returned a {type(loaded).__name__}"
    _same(_call(loaded, problem).values, explanation.values, "save / load round trip")
    _same(_call(pickle.loads(pickle.dumps(explainer)), problem).values, explanation.values, "pickle round trip")
    _same(_call(copy.deepcopy(explainer), problem).values, explanation.values, "deepcopy")


def _check_columns(cls, problem: ConformanceProblem, context: dict[str, Any]) -> None:
    explainer, explanation = context["explainer"], context["explanation"]
    X = problem.X
    _same(_call(explainer, problem, X[X.columns[::-1]]).values, explanation.values, "reordered DataFrame columns")
    renamed = X.rename(columns={X.columns[0]: f"{X.columns[0]}_renamed"})
    for bad, what in ((renamed, "renamed columns"), (X.iloc[:, :-1].to_numpy(), "an array one column short")):
        try:
            _call(explainer, problem, bad)
        except DataValidationError:
            continue
        raise AssertionError(f"{what} were accepted")


def _check_random_state(cls, problem: ConformanceProblem, context: dict[str, Any]) -> None:
    if "random_state" not in _accepted(cls):
        return
    first = _call(_build(cls, problem, random_state=3), problem).values
    again = _build(cls, problem, random_state=3)
    _same(_call(again, problem).values, first, "two explainers with random_state=3")
    _same(_call(again, problem).values, first, "two calls with random_state=3")


def _check_idioms(cls, problem: ConformanceProblem, context: dict[str, Any]) -> None:
    """shap's idioms on single-output explanations.

    shap 0.46 to 0.51 itself fails on them once an output is sliced from a multi-output explanation
    (``e[..., 0].abs.mean(0)`` raises IndexError in ``compute_output_dims``, for its own Tree and Kernel
    explanations too), so multi-output explanations are checked on the plots only.
    """
    import matplotlib.pyplot as plt

    e = context["explanation"]
    if np.ndim(e.values) != 2:
        return
    order = e.abs.mean(0).argsort
    top = int(np.asarray(order.values)[-1])
    _same(e[:, order[-1]].values, np.asarray(e.values)[:, top], "e[:, e.abs.mean(0).argsort[-1]]")
    shap.plots.heatmap(e, instance_order=e.sum(1), show=False)
    assert plt.gcf().axes, "heatmap(instance_order=e.sum(1)) drew nothing"


def _check_plots(cls, problem: ConformanceProblem, context: dict[str, Any]) -> None:
    import matplotlib.pyplot as plt

    e, explainer = _one_output(context["explanation"]), context["explainer"]
    for name, draw in _PLOTS.items():
        try:
            draw(e, explainer)
        except Exception as exc:
            raise AssertionError(f"shap's {name} plot raised {type(exc).__name__}: {exc}") from exc
        assert plt.gcf().axes, f"shap's {name} plot drew nothing"
        plt.close("all")
