"""The explainer registry: entry-point discovery, run-time registration and ``Explainer`` dispatch.

Explainers are found through the entry-point group ``shap_instances.explainers`` (this package registers
its own explainers there too), plus any class registered at run time with :func:`register_explainer`.
Discovery is lazy (nothing is imported before the first lookup) and cached; shap itself is imported only when
an explainer is registered or built, so the command line starts without it.

Name clashes are resolved deterministically: run-time registrations win over entry points; among entry
points, this package's own win, then distributions in alphabetical order. Every clash is reported with a
:class:`~shap_instances.exceptions.DuplicateExplainerWarning`. A plugin that fails to import is reported
with a :class:`~shap_instances.exceptions.PluginLoadWarning` and left out; the others keep working.
"""

from __future__ import annotations

import inspect
import sys
import types
import warnings
from collections.abc import Callable, Sequence
from functools import lru_cache
from importlib.metadata import EntryPoint, entry_points
from typing import TYPE_CHECKING, Any, BinaryIO

from ._deprecated import warn_moved
from .exceptions import (
    DuplicateExplainerWarning,
    InvalidParameterError,
    PluginLoadWarning,
    UnknownExplainerError,
    UnsupportedModelError,
)

if TYPE_CHECKING:  # pragma: no cover
    import shap

__all__ = [
    "ENTRY_POINT_GROUP", "RENAMED_EXPLAINERS", "SHAP_ALGORITHMS", "Explainer", "canonical_name", "get_explainer",
    "list_explainers", "register_explainer",
]

ENTRY_POINT_GROUP = "shap_instances.explainers"
_OWN_DISTRIBUTION = "shap-instances"
#: Algorithm names that ``shap.Explainer`` itself understands: ``Explainer`` always hands these to shap.
SHAP_ALGORITHMS = ("exact", "permutation", "partition", "tree", "linear", "deep", "additive")

#: Registry names renamed in 0.2, old -> new: the old ones are still accepted, with a warning, until 0.3.
#: ``residual`` named the explained quantity (a residual), not the explainer; the name is now the class's,
#: ``InstanceKernelExplainer``, as ``gap``, ``boosting``, ``naive_bayes`` and ``representer`` are.
RENAMED_EXPLAINERS = {"residual": "instance_kernel"}
#: This package's entry points as installed before those renames (an editable install whose metadata predates
#: them): old name or target -> new, so that such an installation finds the new names without a warning.
_OWN_RENAMED_TARGETS = {
    "shap_instances.explainers.isotonic:IsotonicShapley": "shap_instances.explainers.isotonic:IsotonicShapleyExplainer",
}

_runtime: dict[str, type] = {}
_loaded: dict[str, type] = {}
_failed: dict[str, BaseException] = {}  # name -> the error its plugin raised on import


def _distribution_name(ep: EntryPoint) -> str:
    dist = getattr(ep, "dist", None)
    return dist.name if dist is not None else ""


@lru_cache(maxsize=1)
def _entry_point_table() -> dict[str, EntryPoint]:
    """name -> the winning entry point, deciding clashes once."""
    def rank(ep: EntryPoint) -> tuple[bool, str, str]:
        dist = _distribution_name(ep).lower().replace("_", "-")
        return (dist != _OWN_DISTRIBUTION, dist, ep.value)

    table: dict[str, EntryPoint] = {}
    for ep in sorted(entry_points(group=ENTRY_POINT_GROUP), key=rank):
        name = RENAMED_EXPLAINERS.get(ep.name, ep.name) if _is_own(ep) else ep.name
        winner = table.get(name)
        if winner is None:
            table[name] = ep
        elif winner.value != ep.value:
            warnings.warn(
                f"Two plugins register the explainer name {ep.name!r}: {winner.value} (from "
                f"{_distribution_name(winner)!r}) and {ep.value} (from {_distribution_name(ep)!r}); "
                f"using {winner.value}.",
                DuplicateExplainerWarning,
                stacklevel=3,
            )
    return table


def _is_own(ep: EntryPoint) -> bool:
    return _distribution_name(ep).lower().replace("_", "-") == _OWN_DISTRIBUTION


def _target(ep: EntryPoint) -> EntryPoint:
    """The entry point to load: this package's under its current target (its metadata may predate a rename)."""
    value = _OWN_RENAMED_TARGETS.get(ep.value) if _is_own(ep) else None
    return ep if value is None else EntryPoint(name=ep.name, value=value, group=ep.group)


def canonical_name(name: str) -> str:
    """The current registry name of ``name``: a name renamed in 0.2 (``"residual"``) warns and gives the new one.

    Examples
    --------
    >>> from shap_instances.registry import canonical_name
    >>> canonical_name("instance_kernel")
    'instance_kernel'
    """
    new = RENAMED_EXPLAINERS.get(name)
    if new is None:
        return name
    warn_moved(f"the explainer name {name!r}", repr(new), stacklevel=4)
    return new


def _load(name: str) -> type | None:
    """Load one entry point, warning (once) instead of failing when its plugin is broken."""
    if name in _loaded:
        return _loaded[name]
    ep = _entry_point_table().get(name)
    if ep is None or name in _failed:
        return None
    try:
        cls = _target(ep).load()
    except Exception as exc:  # noqa: BLE001 - any plugin error must not break the others
        _failed[name] = exc
        warnings.warn(
            f"The explainer plugin {name!r} ({ep.value}, from {_distribution_name(ep)!r}) failed to import "
            f"and is skipped: {type(exc).__name__}: {exc}",
            PluginLoadWarning,
            stacklevel=3,
        )
        return None
    _loaded[name] = cls
    return cls


def list_explainers() -> dict[str, type]:
    """All available explainers, name -> class, sorted by name.

    Examples
    --------
    >>> import shap_instances as si
    >>> "naive_bayes" in si.list_explainers()
    True
    """
    names = set(_entry_point_table()) | set(_runtime)
    found = {}
    for name in sorted(names):
        cls = _runtime.get(name) or _load(name)
        if cls is not None:
            found[name] = cls
    return found


def get_explainer(name: str) -> type:
    """The explainer class registered under ``name``.

    Raises
    ------
    UnknownExplainerError
        If no explainer has that name (the message lists the available names), or if the plugin that
        registers it failed to import (the message names the plugin and its import error, which is
        chained as the cause).

    Examples
    --------
    >>> import shap_instances as si
    >>> si.get_explainer("gap").__name__
    'GapExplainer'
    """
    name = canonical_name(name) if name not in _runtime else name
    cls = _runtime.get(name) or _load(name)
    if cls is None and name in _failed:
        ep, exc = _entry_point_table()[name], _failed[name]
        raise UnknownExplainerError(
            f"The explainer {name!r} is installed ({ep.value}, from {_distribution_name(ep)!r}) but its plugin "
            f"failed to import: {type(exc).__name__}: {exc}. Fix or reinstall that plugin."
        ) from exc
    if cls is None:
        available = ", ".join(repr(n) for n in list_explainers()) or "none"
        raise UnknownExplainerError(
            f"No explainer is registered under the name {name!r}. Available: {available}; shap's own: "
            f"{', '.join(repr(n) for n in SHAP_ALGORITHMS)}. Use algorithm='auto' to choose by model type."
        )
    return cls


def register_explainer(name: str, *, replace: bool = False) -> Callable[[type], type]:
    """Class decorator registering an explainer under ``name`` at run time.

    Entry points (group ``shap_instances.explainers``) are the packaged way; this decorator is for
    notebooks and tests. A run-time registration wins over an entry point of the same name.

    Parameters
    ----------
    name : str
        The name used by ``Explainer(model, data, algorithm=name)``.
    replace : bool, default=False
        Allow replacing an explainer registered at run time under the same name.

    Examples
    --------
    >>> import shap_instances as si
    >>> @si.register_explainer("my_explainer", replace=True)
    ... class MyExplainer(si.InstanceExplainer):
    ...     pass
    >>> si.get_explainer("my_explainer") is MyExplainer
    True
    """
    if not isinstance(name, str) or not name:
        raise ValueError(f"name must be a non-empty string, got {name!r}.")

    def decorator(cls: type) -> type:
        from .utils import shap_explainer_class

        if not (isinstance(cls, type) and issubclass(cls, shap_explainer_class())):
            raise TypeError(f"register_explainer({name!r}) expects a shap.Explainer subclass, got {cls!r}.")
        if name in _runtime and _runtime[name] is not cls and not replace:
            raise ValueError(
                f"An explainer is already registered at run time as {name!r} ({_runtime[name].__name__}); "
                "pass replace=True to replace it."
            )
        if name in _entry_point_table():
            warnings.warn(
                f"register_explainer({name!r}) shadows the installed explainer {_entry_point_table()[name].value}.",
                DuplicateExplainerWarning,
                stacklevel=2,
            )
        _runtime[name] = cls
        return cls

    return decorator


class _ExplainerType(type):
    """The type of :class:`Explainer`: any shap explainer (this package's included) is an instance of it.

    A class that subclasses :class:`Explainer` (shap's documented way to write a custom explainer, ``class
    MyExplainer(shap.Explainer)``, written after ``shap.Explainer = si.Explainer``) is made a subclass of shap's own
    ``Explainer`` instead: its ``__init__`` and ``__call__`` run, ``super().__init__(model, masker)`` is shap's, and
    constructing it builds it, not the dispatcher's choice.
    """

    def __new__(mcs, name: str, bases: tuple[type, ...], namespace: dict[str, Any], **kwds: Any) -> Any:
        if not any(isinstance(base, _ExplainerType) for base in bases):
            return super().__new__(mcs, name, bases, namespace, **kwds)  # Explainer itself
        from .utils import shap_explainer_class

        shap_explainer = shap_explainer_class()
        rebased = tuple(dict.fromkeys(shap_explainer if isinstance(base, _ExplainerType) else base
                                      for base in bases))
        meta, _, kwds = types.prepare_class(name, rebased, kwds)
        return meta(name, rebased, dict(namespace), **kwds)

    def __instancecheck__(cls, instance: Any) -> bool:
        return cls.__subclasscheck__(type(instance))

    def __subclasscheck__(cls, subclass: Any) -> bool:
        if type.__subclasscheck__(cls, subclass):
            return True
        if "shap" not in sys.modules:  # nothing can be a shap explainer before shap is imported
            return False
        from .utils import shap_explainer_class

        return isinstance(subclass, type) and issubclass(subclass, shap_explainer_class())


class Explainer(metaclass=_ExplainerType):
    """A superset of :class:`shap.Explainer`: this package's explainers by name or model, shap's for the rest.

    The signature is shap's. ``algorithm`` may be a name registered here (see :func:`list_explainers`,
    plugins included), one of shap's own (``"exact"``, ``"permutation"``, ``"partition"``, ``"tree"``,
    ``"linear"``, ``"deep"``, ``"additive"``, passed to :class:`shap.Explainer` unchanged), or ``"auto"``:
    the registered explainers are asked in order of their ``auto_priority`` (then name) whether
    ``cls.supports_model(model, masker)`` (for a class with ``unwraps_models``, also about the estimator inside
    a fitted pipeline, search object or other meta-estimator: the last step of a ``Pipeline``), skipping those
    that need training targets when no ``y=`` is given and those that are never chosen automatically
    (``isotonic``); when none claims the model, shap's own automatic choice decides. A ``y=`` offered in automatic
    mode goes only to a chosen class that takes it. So ``si.Explainer`` in place of ``shap.Explainer`` in working
    shap code, which never passes ``y``, gives
    shap's own explainer for every model but naive Bayes ones.

    It is a class, as shap's is: constructing it returns the chosen explainer (an instance of that class, not of
    ``Explainer`` itself); ``isinstance(e, si.Explainer)`` holds for every shap explainer, this package's and
    plugins' included, ``issubclass(si.GapExplainer, si.Explainer)`` likewise, and :meth:`load` reads any saved
    explainer. It hands shap's algorithms to shap's own class, found once (never through the attribute
    ``shap.Explainer``), so ``shap.Explainer = si.Explainer`` makes this package shap's default in every import
    order without recursion.

    Examples
    --------
    >>> import shap_instances as si
    >>> from sklearn.datasets import load_breast_cancer
    >>> from sklearn.naive_bayes import GaussianNB
    >>> from sklearn.tree import DecisionTreeRegressor
    >>> X, y = load_breast_cancer(return_X_y=True)
    >>> type(si.Explainer(GaussianNB().fit(X, y), X[:50])).__name__
    'NaiveBayesExplainer'
    >>> type(si.Explainer(DecisionTreeRegressor(max_depth=3).fit(X, y), X[:50])).__name__   # shap's choice
    'TreeExplainer'
    >>> isinstance(si.Explainer(GaussianNB().fit(X, y), X[:50]), si.Explainer)
    True
    """

    def __new__(cls, model: Any, masker: Any = None, link: Any = None, algorithm: str = "auto",
                output_names: Sequence[str] | None = None, feature_names: Sequence[str] | None = None,
                linearize_link: bool = True, seed: int | None = None, **kwargs: Any) -> Any:
        """Build the chosen explainer (an instance of that class, not of ``Explainer``).

        Parameters
        ----------
        model : object
            The fitted model (for the residual explainer, the estimator to refit).
        masker : array-like or shap masker, optional
            Training or background data; ``data=`` is accepted as an alias.
        link, output_names, linearize_link, seed
            shap's options, passed to shap's explainers; ``link=None`` (the default) is shap's default,
            ``shap.links.identity``. This package's explainers accept ``seed`` as their ``random_state`` and refuse
            a non-identity ``link`` or ``output_names``, which they do not use.
        algorithm : str, default="auto"
        feature_names : sequence of str, optional
            Passed to the chosen explainer.
        **kwargs
            Passed to the chosen class, e.g. ``y=y_train`` (which this package's instance explainers need).

        Returns
        -------
        shap.Explainer
            This package's (or a plugin's) explainer, or shap's own.
        """
        import shap

        if "data" in kwargs:
            if masker is not None:
                raise InvalidParameterError("pass the data once, as masker= (or its alias data=), not both.")
            masker = kwargs.pop("data")
        link = shap.links.identity if link is None else link
        shap_options = dict(link=link, output_names=output_names, feature_names=feature_names,
                            linearize_link=linearize_link, seed=seed)
        if not isinstance(algorithm, str):
            raise InvalidParameterError(f"algorithm must be a name (str), got {algorithm!r}: 'auto', one of "
                                        f"{sorted(list_explainers())} or one of shap's {SHAP_ALGORITHMS}.")
        if algorithm in SHAP_ALGORITHMS:
            return _shaps(model, masker, algorithm, {**shap_options, **kwargs}, "")
        if algorithm != "auto":
            return _build(get_explainer(algorithm), model, masker, shap_options, kwargs)
        return _auto(model, masker, shap_options, kwargs)

    @classmethod
    def load(cls, in_file: BinaryIO, model_loader: Any = None, masker_loader: Any = None,
             instantiate: bool = True) -> Any:
        """Read an explainer saved with ``explainer.save(f)``: the class the file names, this package's or shap's.

        A file written by one of this package's explainers is read by its class's own ``load`` (through
        :meth:`InstanceExplainer.load <shap_instances.InstanceExplainer.load>`, which accepts every subclass);
        any other is handed to ``shap.Explainer.load`` with the loaders and ``instantiate``. When neither reads
        it, the error of this package's reader is raised. A stream that cannot seek is read as this package's.

        Examples
        --------
        >>> import io
        >>> from sklearn.datasets import load_iris
        >>> from sklearn.naive_bayes import GaussianNB
        >>> import shap_instances as si
        >>> X, y = load_iris(return_X_y=True)
        >>> buffer = io.BytesIO()
        >>> si.Explainer(GaussianNB().fit(X, y), X).save(buffer); _ = buffer.seek(0)
        >>> loaded = si.Explainer.load(buffer)
        >>> type(loaded).__name__, isinstance(loaded, si.Explainer)
        ('NaiveBayesExplainer', True)
        """
        from ._base import InstanceExplainer
        from .utils import shap_explainer_class

        start = in_file.tell() if in_file.seekable() else None
        try:
            return InstanceExplainer.load(in_file)
        except Exception as ours:  # noqa: BLE001 - not this package's file: try shap's reader, else raise ours
            if start is None:
                raise
            in_file.seek(start)
            loaders = {k: v for k, v in (("model_loader", model_loader), ("masker_loader", masker_loader))
                       if v is not None}
            try:
                return shap_explainer_class().load(in_file, instantiate=instantiate, **loaders)
            except Exception:  # noqa: BLE001 - shap's reader failed too: the file is not an explainer's
                raise ours from None


def _auto(model: Any, masker: Any, shap_options: dict, kwargs: dict) -> Any:
    """``Explainer(..., algorithm="auto")``: the first registered class that claims the model, else shap's choice."""
    candidates = sorted(list_explainers().items(), key=lambda kv: (getattr(kv[1], "auto_priority", 50), kv[0]))
    for name, cls in candidates:
        if not getattr(cls, "auto_dispatch", True):
            continue
        if getattr(cls, "requires_y", False) and kwargs.get("y") is None:
            continue
        if _supports(name, cls, model, masker):
            if "y" not in getattr(cls, "_parameter_constraints", {"y": None}):
                kwargs = {k: v for k, v in kwargs.items() if k != "y"}  # offered to choose; this class takes none
            return _build(cls, model, masker, shap_options, kwargs)
    if kwargs:
        raise UnsupportedModelError(
            f"No registered explainer supports a {type(model).__name__} automatically, and shap's own choice "
            f"does not take the options {sorted(kwargs)}.{_refusals(candidates, model, masker)} Pass algorithm= one "
            f"of {', '.join(repr(n) for n, _ in candidates)}, or one of shap's {SHAP_ALGORITHMS}."
        )
    return _shaps(model, masker, "auto", shap_options, _refusals(candidates, model, masker))


def _shaps(model: Any, masker: Any, algorithm: str, options: dict, refusals: str) -> Any:
    """shap's own explainer; its bare ``TypeError`` / ``ValueError`` (a model it cannot call, ...) as
    :class:`UnsupportedModelError` quoting it (``refusals``: this package's candidates' reasons)."""
    from .utils import shap_explainer_class

    try:
        return shap_explainer_class()(model, masker, algorithm=algorithm, **options)
    except (TypeError, ValueError) as exc:
        if type(exc) not in (TypeError, ValueError):
            raise  # shap's own exception classes (and ours) say what they mean
        chose = "no registered explainer claims it, and shap's own choice" if algorithm == "auto" else \
            f"shap's {algorithm!r} explainer"
        raise UnsupportedModelError(
            f"No explainer supports a {type(model).__name__} with algorithm={algorithm!r}: {chose} refused it "
            f"({exc}).{refusals} Pass a fitted model that one of them supports (shap_instances.list_explainers()), "
            "or a function f(X) with a masker."
        ) from exc


def _refusals(candidates: Sequence[tuple[str, type]], model: Any, masker: Any) -> str:
    """The sentence "'name' refuses it: reason" of each candidate that knows why it refuses the model, joined."""
    reasons = []
    for name, cls in candidates:
        try:
            reason = cls.unsupported_reason(model, masker) if hasattr(cls, "unsupported_reason") else None
        except Exception as exc:  # noqa: BLE001 - one plugin's faulty check must not hide the others' reasons
            reason = f"its unsupported_reason raised {type(exc).__name__}: {exc}"
        if reason:
            reasons.append(f" {name!r} refuses it: {reason}")
    return "".join(reasons)


def _build(cls: type, model: Any, masker: Any, shap_options: dict, kwargs: dict) -> shap.Explainer:
    """``cls(model, masker, **kwargs)``, with shap's options translated or refused."""
    import shap

    if shap_options["link"] is not shap.links.identity:
        raise InvalidParameterError(f"{cls.__name__} explains the model's own output scale and takes no link; "
                                    "leave link at its default.")
    if shap_options["output_names"] is not None:
        raise InvalidParameterError(f"{cls.__name__} names its outputs itself and takes no output_names.")
    if shap_options["feature_names"] is not None:
        kwargs = {**kwargs, "feature_names": shap_options["feature_names"]}
    if shap_options["seed"] is not None and _takes_random_state(cls):
        kwargs = {**kwargs, "random_state": shap_options["seed"]}  # a deterministic class ignores seed, as shap's
    return cls(model, masker, **kwargs)


def _takes_random_state(cls: type) -> bool:
    """Whether the constructor of ``cls`` takes ``random_state`` (a stochastic explainer's does)."""
    try:
        return "random_state" in inspect.signature(cls).parameters
    except (TypeError, ValueError):  # pragma: no cover - a constructor without a signature
        return False


def _supports(name: str, cls: type, model: Any, data: Any) -> bool:
    """``cls.supports_model(model, data)``; a check that raises counts as "no" (with a warning naming it)."""
    supports = getattr(cls, "supports_model", None)
    if supports is None:
        return False
    try:
        if bool(supports(model, data)):
            return True
        return getattr(cls, "unwraps_models", False) and _inner_supported(supports, model)
    except Exception as exc:  # noqa: BLE001 - one plugin's faulty check must not break dispatch
        warnings.warn(f"{name}.supports_model raised {type(exc).__name__}: {exc}; skipping it.", PluginLoadWarning,
                      stacklevel=3)
        return False


def _inner_supported(supports: Callable, model: Any) -> bool:
    """Whether ``supports`` takes the estimator inside a pipeline or meta-estimator (False for a bare one)."""
    from .exceptions import ShapInstancesError
    from .utils import unwrap_model

    try:
        unwrapped = unwrap_model(model)
    except ShapInstancesError:  # not fitted, or a meta-estimator no explainer can see into
        return False
    return unwrapped.wrapped and bool(supports(unwrapped.estimator, None))


def _clear_cache() -> None:
    """Forget discovered entry points (after installing a plugin in a running session)."""
    _entry_point_table.cache_clear()
    _loaded.clear()
    _failed.clear()
