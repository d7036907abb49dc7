"""``InstanceExplainer``: the shared base class, and the one contract, of every shap_instances explainer.

The contract (``docs/contract.md``)::

    Cls(model, masker=None, *, data=None, y=None, <options>)    # masker: training / background data
    explainer(X=None, y=None, **<call options>)                  # -> shap.Explanation
    explainer.shap_values(X, y=None, ...)                        # -> explanation.values
    explainer.expected_value                                     # the base value (scalar, (k,), or per row)
    explainer.save(f); Cls.load(f)                               # and pickle

Every option has one name and one meaning across the package (``random_state``, ``n_jobs``, ``silent``,
``max_memory``, ``feature_names``, ``batch_size``, ``max_evals``); an explainer accepts only those it uses.
Parameters are checked once, from the class's ``_parameter_constraints`` table, by :meth:`_setup`.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import inspect
import io
import os
import pickle
import warnings
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from typing import Any, BinaryIO, ClassVar

import cloudpickle
import numpy as np
import pandas as pd
import shap
from numpy.typing import ArrayLike
from sklearn.base import clone
from tqdm.auto import tqdm

from ._explanation import NON_FINITE_CAUSE
from .exceptions import (
    DataValidationError,
    InvalidParameterError,
    ShapInstancesError,
    ShapInstancesWarning,
    UnsupportedOperationError,
)
from .utils import (
    check_finite_result,
    check_model_kind,
    check_random_state,
    dump_safely,
    explain_partitions,
    is_dask_collection,
    load_safely,
    read_file,
    shap_explainer_class,
    unwrap_model,
    validate_params,
)

__all__ = ["ConformanceProblem", "InstanceExplainer"]

_SAVE_FORMAT = "shap_instances.InstanceExplainer"
_SAVE_VERSION = 2  # 2: skops + arrays (safe); 1: a pickle (0.1, and save's fallback), read only when trusted
_PICKLE_VERSION = 1

#: shap's own Explainer, not what ``shap.Explainer`` names now: users may have set ``shap.Explainer =
#: shap_instances.Explainer``, and a subclass of that dispatcher would recurse.
_ShapExplainer: Any = shap_explainer_class()

#: Keywords of shap's legacy ``shap_values`` methods (Tree, Kernel, Permutation, Gradient, Deep) that
#: :meth:`InstanceExplainer.shap_values` accepts and ignores: name -> the only value accepted (``_ANY``: any
#: value). They tune shap's own estimators, or ask for a check this package always makes (efficiency); a value
#: that asks for something else (``tree_limit=10``, ``ranked_outputs=3``, ...) is refused, never ignored.
_ANY = object()
SHAP_VALUES_KEYWORDS: dict[str, Any] = {
    "check_additivity": _ANY, "from_call": _ANY, "silent": _ANY, "gc_collect": _ANY, "batch_evals": _ANY,
    "nsamples": _ANY, "l1_reg": _ANY, "npermutations": _ANY, "rseed": _ANY, "output_rank_order": _ANY,
    "approximate": False, "tree_limit": None, "main_effects": False, "error_bounds": False,
    "ranked_outputs": None, "return_variances": False,
}


@dataclass
class ConformanceProblem:
    """A small problem an explainer class can be checked on.

    Attributes
    ----------
    model : object
        The model to explain (fitted, or the estimator to refit for the residual explainer).
    masker : pandas.DataFrame
        Training or background data, as a DataFrame (column handling is checked on it).
    X : pandas.DataFrame
        Rows to explain, with the same columns.
    y : array-like, optional
        Training targets, for classes that need them.
    y_explained : array-like, optional
        Targets of the explained rows, for classes whose call uses them.
    options : dict
        Further constructor options (e.g. ``sparsity`` for SISR, ``silent=True``).
    explained : callable, optional
        ``explained(X) -> array`` of shape (n,) or (n, k): the quantity ``base + values.sum(1)`` must equal
        (the model's prediction, log-odds, residual, ...), computed independently of the explainer. It holds
        for explainers that are not efficient too: their ``base_values`` are the remainder.
    atol : float
        Tolerance of that comparison (relative to ``max(1, |explained|)``), and of ``reference_values``.
    reference_values : callable, optional
        ``reference_values(X) -> array`` shaped like the explanation's ``values``: the values computed
        independently of the explainer (refits, enumeration, a closed form). The checks compare the values with
        it; an explainer whose values do not add up (``efficient = False``) must give it.
    sampling_options : dict, optional
        Constructor options under which a stochastic explainer (``stochastic = True``) samples, so that its
        values depend on ``random_state`` (e.g. ``{"approximator": "permutation", "n_permutations": 5}``); added
        to ``options`` by the random-state and ``n_jobs`` checks.

    Examples
    --------
    >>> from sklearn.linear_model import Ridge
    >>> from shap_instances.datasets import load_diabetes
    >>> from shap_instances.testing import ConformanceProblem
    >>> X, y = load_diabetes()
    >>> model = Ridge().fit(X.iloc[:30], y.iloc[:30])
    >>> problem = ConformanceProblem(model, X.iloc[:30], X.iloc[30:33], y=y.iloc[:30], explained=model.predict)
    >>> problem.explained(problem.X).shape
    (3,)
    """

    model: Any
    masker: pd.DataFrame
    X: pd.DataFrame
    y: Any = None
    y_explained: Any = None
    options: dict = field(default_factory=dict)
    explained: Callable | None = None
    atol: float = 1e-8
    reference_values: Callable | None = None
    sampling_options: dict | None = None



class InstanceExplainer(_ShapExplainer):
    """Base class of the explainers of this package (and of plugins): a :class:`shap.Explainer` subclass.

    A subclass declares its options in ``_parameter_constraints``, stores them in ``__init__`` with
    ``masker = self._setup(locals())`` (which resolves the ``data=`` alias, checks every option against the
    table and stores it as an attribute), implements ``__call__(X=None, y=None, **options)`` returning
    ``self._finish(build_explanation(...))``, and says in :meth:`supports_model` which models
    ``shap_instances.Explainer(model, algorithm="auto")`` may send it.

    Class attributes declare what the explainer does (``shap_instances.testing`` checks them): ``players``
    ("instances" or "features"), ``call_y``, ``requires_y``, ``stochastic`` (the values depend on
    ``random_state``; only then is the option accepted) and ``efficient``: an explainer whose values do not add
    up (leave-one-out, Banzhaf) sets ``efficient = False`` and returns as ``base_values`` the remainder
    ``explained - values.sum(axis=1)``, so that shap's plots, which draw ``base + sum(values)``, still end at
    the explained quantity.

    Shared options (accepted only by the explainers that use them)
    -----------------------------------------------------------------
    random_state : None, int, numpy Generator, BitGenerator or RandomState
        Seed of every random choice, through :func:`shap_instances.utils.check_random_state`: an int gives
        bitwise identical results on every call and for every ``n_jobs``; a Generator advances.
    n_jobs : int or None
        Parallel workers (joblib semantics; -1 uses every core).
    silent : bool, default=False
        Turn off progress bars.
    max_memory : float or None
        Byte budget of the largest array the explainer allocates (default: half the memory available, the
        least of the free memory, the cgroup limit and ``ulimit -v``; see ``utils.available_memory_bytes``).
    feature_names : sequence of str or None
        Names of the players (features for naive Bayes and SISR, training instances otherwise).
    batch_size : int or None
        Value-function evaluations (coalitions) per batch.
    max_evals : int or None
        Value-function evaluations per game, as in shap.

    Attributes common to every explainer
    ------------------------------------
    data_ : ndarray or scipy.sparse matrix
        The validated training (or background) data.
    train_names_ : list of str
        Names of the training rows (instance explainers): the DataFrame index, else ``"train[i]"``.

    Examples
    --------
    >>> import shap
    >>> from shap_instances import InstanceExplainer
    >>> issubclass(InstanceExplainer, shap.Explainer)
    True
    """

    #: Order in which ``Explainer(model, algorithm="auto")`` asks classes; lower asks first.
    auto_priority: ClassVar[int] = 50
    #: Whether ``Explainer(model, algorithm="auto")`` may choose this class at all.
    auto_dispatch: ClassVar[bool] = True
    #: One line saying what ``base_values + values.sum(axis=1)`` equals.
    explained_quantity: ClassVar[str] = ""
    #: What the players are: "instances" (training rows) or "features".
    players: ClassVar[str] = "instances"
    #: Whether the constructor needs the training targets ``y`` (automatic dispatch then needs ``y=``).
    requires_y: ClassVar[bool] = False
    #: What ``__call__`` does with ``y``: "none" (refused), "optional" or "required".
    call_y: ClassVar[str] = "none"
    #: Whether ``base_values + values.sum(axis=1)`` is the explained quantity with ``base_values`` the value of the
    #: empty coalition (Shapley values). An explainer whose values do not add up (leave-one-out, Banzhaf) sets
    #: False and returns as ``base_values`` the remainder ``explained - values.sum(axis=1)``, so that shap's plots,
    #: which draw ``base + sum(values)``, still end at the explained quantity.
    efficient: ClassVar[bool] = True
    #: Whether the values depend on ``random_state`` (the explainer samples, in some configuration). A class
    #: accepts ``random_state`` exactly when it is stochastic; a deterministic one must not take the option.
    stochastic: ClassVar[bool] = False
    #: Whether the constructor takes fitted pipelines and meta-estimators (it calls :meth:`_unwrap`), so that
    #: ``Explainer(model, algorithm="auto")`` asks :meth:`supports_model` about the estimator inside them.
    unwraps_models: ClassVar[bool] = False
    #: The kinds of estimator (:func:`~shap_instances.utils.model_kind`) the constructor takes; a class, a clusterer,
    #: an outlier detector or a transformer is refused by :meth:`_setup` before any work. Models without ``fit`` (a
    #: library's raw booster, a prediction function) are left to the class's own check.
    model_kinds: ClassVar[tuple[str, ...]] = ("classifier", "regressor")
    #: The options of the constructor and their constraints (see :mod:`shap_instances.utils`).
    _parameter_constraints: ClassVar[dict[str, list]] = {}

    # ------------------------------------------------------------------ construction
    def _setup(self, params: dict[str, Any]) -> Any:
        """Store the constructor's arguments once checked; return the training (or background) data.

        ``params`` is the constructor's ``locals()``: ``model``, ``masker`` and its alias ``data``, then the
        options, each checked against ``_parameter_constraints`` and stored under its own name.
        """
        params = {k: v for k, v in params.items() if k not in ("self", "__class__")}
        model = params.pop("model")
        masker, data = params.pop("masker", None), params.pop("data", None)
        if masker is not None and data is not None:
            raise InvalidParameterError(
                f"{type(self).__name__}: pass the training data once, as masker= (or its alias data=), not both."
            )
        masker = data if masker is None else masker
        self._check_model_kind(model)  # the model first: options make no sense for a model that is refused
        validate_params(type(self).__name__, self._parameter_constraints, params)
        if self.requires_y and params.get("y") is None:
            raise DataValidationError(
                f"{type(self).__name__} needs y, the training targets of the data: "
                f"{type(self).__name__}(model, X_train, y=y_train)."
            )
        super().__init__(model, masker=None, feature_names=params.get("feature_names"))
        # what save() writes; not the cluster (a Client does not travel: a copy of this explainer goes to dask's
        # workers, and a loaded explainer runs here until given a scheduler)
        self._init_arguments = {"model": model, "masker": masker,
                                **{name: value for name, value in params.items() if name != "scheduler"}}
        self.masker = masker
        for name, value in params.items():
            setattr(self, name, value)
        return masker

    def _check_model_kind(self, model: Any) -> None:
        """Refuse a class, or an estimator (or its bound method) of a kind not in :attr:`model_kinds`."""
        owner = model if isinstance(model, type) else getattr(model, "__self__", model)
        if isinstance(owner, type) or callable(getattr(owner, "fit", None)):
            check_model_kind(owner, type(self).__name__, self.model_kinds)

    def _unwrap(self, data: Any, y: Any = None) -> tuple[Any, Any, Any]:
        """Unwrap ``self.model`` (a pipeline, search object, ...): ``(estimator, data, y)`` as the estimator saw them.

        Sets ``self.model`` to the estimator explained and ``self.unwrapped_`` (a
        :class:`~shap_instances.utils.UnwrappedModel`) to what was unwrapped, whose ``model`` is the user's
        object; the training rows go through the pipeline's fitted steps once, here, and :meth:`_prepare`
        applies them to the explained rows on every call.
        """
        unwrapped = self.unwrapped_ = unwrap_model(getattr(self, "model"))  # noqa: B009 - set by shap.Explainer
        estimator: Any = unwrapped.estimator
        self.model = estimator
        return estimator, unwrapped.transform(data, "masker"), unwrapped.transform_y(y)

    def _prepare(self, X: Any) -> Any:
        """Rows as the explained estimator sees them: the unwrapped pipeline's fitted steps applied."""
        unwrapped = getattr(self, "unwrapped_", None)
        return X if unwrapped is None else unwrapped.transform(X)

    @classmethod
    def __init_subclass__(cls, **kwargs: Any) -> None:
        """Each subclass's own ``__call__`` answers shap's call keywords (``interactions=``, ``max_evals=``, ...)
        and unknown ones with this package's errors, naming what to do, instead of Python's bare ``TypeError``."""
        super().__init_subclass__(**kwargs)
        call = cls.__dict__.get("__call__")
        if call is not None and not hasattr(call, "__wrapped__"):
            cls.__call__ = _checking_call_keywords(call)  # type: ignore[method-assign]

    @classmethod
    def supports_model(cls, model: Any, data: Any = None) -> bool:
        """Whether ``Explainer(model, data, algorithm="auto")`` should choose this class."""
        return False

    @classmethod
    def unsupported_reason(cls, model: Any, data: Any = None) -> str | None:
        """Why :meth:`supports_model` refuses a model of this class's family (the setting, and what to do instead),
        or None: the model is not of its family, or is supported. :class:`~shap_instances.Explainer` says it when
        no explainer takes the model, so that the automatic choice names the real reason."""
        return None

    @classmethod
    def conformance_problem(cls) -> ConformanceProblem:
        """A small :class:`~shap_instances.testing.ConformanceProblem` that
        :func:`~shap_instances.testing.check_explainer` checks this class on.
        Plugins implement it (or pass a problem to ``check_explainer``)."""
        raise NotImplementedError(f"{cls.__name__} defines no conformance_problem(); pass one to check_explainer("
                                  f"{cls.__name__}, problem=ConformanceProblem(...)).")

    # ------------------------------------------------------------------ calls
    def __call__(self, *args: Any, **options: Any) -> shap.Explanation:  # pragma: no cover - abstract
        raise NotImplementedError(f"{type(self).__name__} does not implement __call__.")

    def _check_call_y(self, y: ArrayLike | None) -> None:
        """Refuse ``y`` where the explainer does not use it, require it where it must."""
        if self.call_y == "none" and y is not None:
            raise InvalidParameterError(
                f"{type(self).__name__} explains the model's output and takes no y when called; "
                "call explainer(X) (training targets, where needed, go to the constructor)."
            )
        if self.call_y == "required" and y is None:
            raise DataValidationError(f"{type(self).__name__} needs y, the targets of the explained rows: "
                                      "explainer(X, y).")

    def _finish(self, explanation: shap.Explanation) -> shap.Explanation:
        """Remember the base values (for :attr:`expected_value`), label the explanation, and return it.

        The explanation gets the plain attributes ``players`` ("instances" or "features"), ``efficient`` and
        ``explained_quantity``, the class's declarations, so that a reader of the explanation alone knows what
        its columns are and whether ``base + values.sum(1)`` is a sum of shares or ends on a remainder.
        """
        self._check_finite(explanation)
        self._last_base_values = np.asarray(explanation.base_values)
        explanation.players = self.players
        explanation.efficient = self.efficient
        explanation.explained_quantity = self.explained_quantity
        return explanation

    def _check_finite(self, explanation: shap.Explanation) -> None:
        """Refuse NaN or infinite values or base values (:class:`~shap_instances.exceptions.NonFiniteResultError`):
        a NaN is never handed back as an attribution. Standard errors are not checked (inf: not estimated)."""
        for what, array in (("values", explanation.values), ("base values", explanation.base_values)):
            array = np.asarray(array)
            with np.errstate(over="ignore", invalid="ignore"):  # one pass, no copy: the usual case
                finite = array.dtype.kind not in "fc" or np.isfinite(array.sum())
            if not finite:
                check_finite_result(array, f"the {what} computed by {type(self).__name__}",  # exact: the sum may
                                    why=NON_FINITE_CAUSE)                               # only overflow

    def shap_values(self, X: Any = None, y: Any = None, **options: Any) -> np.ndarray:
        """shap's legacy API: ``explainer(X, y, **options).values``.

        Shapes as shap's Kernel and Tree explainers return them: ``(n, M)`` for one output, ``(n, M, k)``
        for ``k`` outputs. As shap's ``TreeExplainer.shap_values`` does, it takes ``y`` and ignores it where
        the explainer does not use it (``call_y == "none"``). The keywords of shap's own ``shap_values``
        methods (:data:`SHAP_VALUES_KEYWORDS`: ``check_additivity``, ``nsamples``, ``silent``, ...) are
        accepted and ignored where they change nothing here; one that asks for what this package does not
        compute (``tree_limit=10``, ``ranked_outputs=3``, ``main_effects=True``) is refused. Other keywords
        are the explainer's own call options.

        Examples
        --------
        >>> from sklearn.naive_bayes import GaussianNB
        >>> from sklearn.datasets import load_iris
        >>> import shap_instances as si
        >>> X, y = load_iris(return_X_y=True)
        >>> explainer = si.NaiveBayesExplainer(GaussianNB().fit(X, y), X)
        >>> explainer.shap_values(X[:2], y[:2], check_additivity=False).shape
        (2, 4, 3)
        """
        for name in [k for k in options if k in SHAP_VALUES_KEYWORDS]:
            value, accepted = options.pop(name), SHAP_VALUES_KEYWORDS[name]
            if accepted is not _ANY and value != accepted:
                raise InvalidParameterError(
                    f"{type(self).__name__}.shap_values: {name}={value!r} asks shap's explainers for something "
                    f"this explainer does not compute; leave {name} at {accepted!r}.")
        if self.call_y == "none":
            y = None  # shap's TreeExplainer takes y and uses it only for loss outputs
        return self(X, y, **options).values

    def shap_interaction_values(self, X: Any = None, y: Any = None, **options: Any) -> np.ndarray:
        """Refused: shap's interaction values are between pairs of features of one row's prediction.

        Raises
        ------
        UnsupportedOperationError
            Always (a ``NotImplementedError``), naming what to use instead (see ``docs/plots.md``).
        """
        raise UnsupportedOperationError(_no_interactions(self))

    @property
    def data(self) -> Any:
        """shap's name for the background data: ``data_``, read-only (``explainer(explainer.data)`` as in shap).

        Examples
        --------
        >>> from sklearn.naive_bayes import GaussianNB
        >>> from sklearn.datasets import load_iris
        >>> import shap_instances as si
        >>> X, y = load_iris(return_X_y=True)
        >>> si.NaiveBayesExplainer(GaussianNB().fit(X, y), X).data.shape
        (150, 4)
        """
        try:
            return self.data_
        except AttributeError:
            raise AttributeError(f"{type(self).__name__} holds no data_ (it was built without training data)") \
                from None

    @property
    def data_feature_names(self) -> list[str]:
        """shap's name for the names of the explanation's columns, read-only: the training rows' names
        (``train_names_``) for instance explainers, the features' for feature explainers.

        shap code passes them where an explanation's columns are named (``shap.plots.group_difference(values,
        group, feature_names=explainer.data_feature_names)``), so they name the players, which for this package
        are training rows; the data's own columns are ``columns_``.

        Examples
        --------
        >>> from sklearn.ensemble import RandomForestRegressor
        >>> from shap_instances.datasets import load_diabetes
        >>> import shap_instances as si
        >>> X, y = load_diabetes()
        >>> forest = RandomForestRegressor(5, random_state=0).fit(X[:20], y[:20])
        >>> si.GapExplainer(forest, X[:20], y=y[:20]).data_feature_names[:2]
        ['0', '1']
        """
        if self.players == "instances":
            names = getattr(self, "train_names_", None)
        else:
            names = getattr(self, "feature_names_", None)
            names = getattr(self, "columns_", None) if names is None else names
        if names is None:
            raise AttributeError(f"{type(self).__name__} has no names for its players yet.")
        return list(names)

    @property
    def expected_value(self) -> float | np.ndarray:
        """shap's legacy base value: a float for one output, an array of shape (k,) for k outputs.

        Explainers whose base value depends on the explained row (for example residuals with an
        ``empty_prediction``) give the per-row base values of the last call.
        """
        return self._expected_value()

    def _expected_value(self) -> float | np.ndarray:
        base = getattr(self, "_last_base_values", None)
        if base is None:
            raise AttributeError(f"{type(self).__name__}.expected_value is known after the first call: call "
                                 "explainer(X) (or shap_values) first.")
        return _collapse_rows(base)

    # ------------------------------------------------------------------ helpers for subclasses
    def _explain_partitioned(self, X: Any, y: Any = None) -> shap.Explanation | None:
        """``X`` explained partition by partition on the explainer's dask ``scheduler``, or here for a dask ``X``;
        None when ``X`` is in memory and no scheduler is set (the caller explains it itself).

        For explainers whose explained rows are independent: each partition is explained by the serial call
        of a copy scattered once (:func:`shap_instances.utils.explain_partitions`), so values are bitwise equal.
        """
        scheduler = getattr(self, "scheduler", None)
        if X is None or (scheduler is None and not is_dask_collection(X)):
            return None
        return self._finish(explain_partitions(self, X, y, scheduler=scheduler))

    def _rng(self) -> np.random.Generator:
        """The generator of this call: an int ``random_state`` gives the same stream on every call."""
        return check_random_state(getattr(self, "random_state", None))

    def _clone_model(self) -> Any:
        """An unfitted copy of the user's model with the same hyper-parameters."""
        return clone(self.model)

    def _progress(self, iterable: Iterable[Any] | None = None, *, total: int | None = None, desc: str | None = None,
                  unit: str = "it") -> Any:
        """A tqdm progress bar, disabled when ``silent=True``."""
        return tqdm(iterable, total=total, desc=desc, unit=unit, disable=getattr(self, "silent", False),
                    leave=False)

    def player_vectors(self) -> tuple[Any, str]:
        """(players x attributes, kind): what :func:`shap_instances.utils.player_clustering` clusters."""
        data = getattr(self, "data_", None)
        if data is None:
            raise DataValidationError(f"{type(self).__name__} holds no data to cluster its players by.")
        return (data if self.players == "instances" else np.asarray(data).T), self.players

    # ------------------------------------------------------------------ serialisation
    def save(self, out_file: BinaryIO, model_saver: Any = ".save", masker_saver: Any = ".save") -> None:
        """Write the explainer to a binary file stream, in a format that loads without running code.

        What is saved is what builds the explainer: the model (in skops' format, which rebuilds objects from a
        list of trusted types instead of unpickling), the training data and targets (arrays, DataFrames as
        their columns) and the options. :meth:`load` builds the explainer again from them, so its fitted state
        is computed afresh (as fast as the constructor); what earlier calls cached is not kept. An explainer
        whose model or options skops cannot store (a ``lambda`` as the model, an explainer built by
        ``from_game``) is written as a pickle instead, with a warning: loading that needs ``trusted=True``.
        The savers are accepted for shap's signature and unused.

        Examples
        --------
        >>> import io
        >>> from sklearn.naive_bayes import GaussianNB
        >>> from sklearn.datasets import load_iris
        >>> import shap_instances as si
        >>> X, y = load_iris(return_X_y=True)
        >>> explainer = si.NaiveBayesExplainer(GaussianNB().fit(X, y), X)
        >>> buffer = io.BytesIO(); explainer.save(buffer); _ = buffer.seek(0)
        >>> type(si.NaiveBayesExplainer.load(buffer)).__name__
        'NaiveBayesExplainer'
        """
        if isinstance(out_file, str | bytes | os.PathLike):
            read_file(out_file)  # refuses a path, naming it
        arguments = self._constructor_arguments()
        if arguments is not None:
            try:
                data = dump_safely({"format": _SAVE_FORMAT, "version": _SAVE_VERSION, "arguments": arguments,
                                    "class": f"{type(self).__module__}:{type(self).__qualname__}"})
            except Exception as exc:  # noqa: BLE001 - skops refuses what it cannot store in many ways
                reason = f"skops cannot store it ({type(exc).__name__}: {exc})"
            else:
                out_file.write(data)
                return
        else:
            reason = "it was not built by its constructor"
        warnings.warn(f"{type(self).__name__}.save: {reason}; writing a pickle, which {type(self).__name__}.load "
                      "reads only with trusted=True.", ShapInstancesWarning, stacklevel=2)
        pickle.dump(type(self), out_file)
        pickle.dump((_SAVE_FORMAT, _PICKLE_VERSION), out_file)
        cloudpickle.dump(self, out_file)

    def _constructor_arguments(self) -> dict[str, Any] | None:
        """The arguments that built the explainer (``**options`` of the signature merged in), or None."""
        arguments = getattr(self, "_init_arguments", None)
        if arguments is None or arguments.get("model") is None:
            return None
        arguments = dict(arguments)
        for parameter in inspect.signature(type(self).__init__).parameters.values():
            if parameter.kind is inspect.Parameter.VAR_KEYWORD:
                arguments.update(getattr(self, parameter.name, None) or {})
        return arguments

    @classmethod
    def load(cls, in_file: BinaryIO, model_loader: Any = None, masker_loader: Any = None,
             instantiate: bool = True, *, trusted: bool = False) -> InstanceExplainer:
        """Read an explainer written by :meth:`save` (from ``cls`` or any base class of the saved one).

        No code runs from the file: its types are checked before anything is built, and objects of types off
        the explicit list of fitted estimators, arrays and helper types
        (:func:`shap_instances.utils.untrusted_types`) are refused, as are trees whose indices leave their
        buffers and models whose parameters name files. A pickle (shap_instances 0.1's format, or
        :meth:`save`'s fallback) is refused unless ``trusted=True``: unpickling runs whatever code the file
        names. A damaged, empty or foreign file raises :class:`~shap_instances.exceptions.DataValidationError`
        naming the file and what is wrong.
        The loaders and ``instantiate`` are accepted for shap's signature and unused.
        """
        data, name = read_file(in_file)
        if not data:
            raise DataValidationError(f"{name} is empty (0 bytes), not a saved explainer.")
        if data.startswith(b"PK"):
            bundle = load_safely(data, name, trusted=trusted)
            return _build_saved(cls, bundle, name)
        if data[:1] != b"\x80":
            raise DataValidationError(f"{name} is not a file written by {cls.__name__}.save (it begins with "
                                      f"{data[:8]!r}).")
        if not trusted:
            raise DataValidationError(
                f"{name} is a pickle (the format of shap_instances 0.1, or of save's fallback): unpickling runs "
                f"whatever code the file names, so it is not read. If you trust the file, load it with "
                f"{cls.__name__}.load(f, trusted=True), then save it again in the safe format.")
        return _unpickle(cls, data, name)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(model={type(self.model).__name__})"


#: Keywords of shap's ``Explainer.__call__`` (and ``TreeExplainer``'s ``interactions``) with their defaults: a call
#: with the default is what this package computes anyway; any other value asks for what it does not compute.
SHAP_CALL_KEYWORDS: dict[str, Any] = {
    "max_evals": "auto", "main_effects": False, "error_bounds": False, "batch_size": "auto", "outputs": None,
    "silent": _ANY, "interactions": False, "check_additivity": _ANY, "approximate": False,
}


def _no_interactions(explainer: Any) -> str:
    """Why ``explainer`` has no interaction values, and what to use instead."""
    return (f"{type(explainer).__name__} has no interaction values: shap's interaction values split a prediction "
            f"over pairs of features, and this explainer's players are {explainer.players} ("
            + ("training rows: interactions are not defined over training instances" if explainer.players ==
               "instances" else "feature interactions are not part of its model") + "). Use explainer(X) for the "
            "values, or shap.TreeExplainer(model)(X, interactions=True) for feature interactions.")


def _checking_call_keywords(call: Callable[..., Any]) -> Callable[..., Any]:
    """``call`` with the keywords it does not take checked first: shap's call keywords at their defaults are
    dropped; ``interactions=True`` raises :class:`UnsupportedOperationError`; any other raises
    :class:`InvalidParameterError` naming the keyword and what the call takes."""
    signature = inspect.signature(call)
    taken = signature.parameters
    usage = ", ".join(p.name if p.default is p.empty else f"{p.name}={p.default!r}" for p in list(taken.values())[1:])
    any_keyword = any(p.kind is p.VAR_KEYWORD for p in taken.values())  # a **options call checks its own

    @functools.wraps(call)
    def checked(self: Any, *args: Any, **options: Any) -> Any:
        for name in [k for k in options if k not in taken and not (any_keyword and k != "interactions")]:
            value, accepted = options.pop(name), SHAP_CALL_KEYWORDS.get(name)
            if name == "interactions" and value is not False:
                raise UnsupportedOperationError(_no_interactions(self))
            if name not in SHAP_CALL_KEYWORDS:
                raise InvalidParameterError(
                    f"{type(self).__name__}() takes no option {name}=; call it as explainer({usage}) (options of "
                    "the explainer go to its constructor).")
            same = value is accepted or (type(value) is type(accepted) and value == accepted)
            if accepted is not _ANY and not same:
                raise InvalidParameterError(
                    f"{type(self).__name__}(): {name}={value!r} asks shap's explainers for something this explainer "
                    f"does not compute; leave {name} at {accepted!r}.")
        try:
            signature.bind(self, *args, **options)
        except TypeError as exc:  # too many positional arguments, X missing, ...
            raise InvalidParameterError(f"{type(self).__name__}(): {exc}; call it as explainer({usage}).") from exc
        return call(self, *args, **options)

    return checked


def _build_saved(cls: type[InstanceExplainer], bundle: dict[str, Any], name: str) -> InstanceExplainer:
    """The explainer a safe file describes: its class (``cls`` or a subclass) built from the saved arguments."""
    if bundle.get("format") != _SAVE_FORMAT or not isinstance(bundle.get("arguments"), dict):
        raise DataValidationError(f"{name} was not written by {cls.__name__}.save (format {bundle.get('format')!r}).")
    version = bundle.get("version")
    if not isinstance(version, int) or version > _SAVE_VERSION:
        raise DataValidationError(f"{name} has format version {version!r}; this shap_instances reads up to "
                                  f"{_SAVE_VERSION}: upgrade shap_instances.")
    saved = _saved_class(cls, str(bundle.get("class")), name)
    arguments = dict(bundle["arguments"])
    try:
        return saved(arguments.pop("model", None), arguments.pop("masker", None), **arguments)
    except ShapInstancesError:
        raise
    except TypeError as exc:
        raise DataValidationError(f"{name} holds arguments {saved.__name__} does not take ({exc}).") from None
    except (AttributeError, ValueError, KeyError, IndexError) as exc:  # a state no fit leaves: the file's fault
        raise DataValidationError(f"{name} holds a model or data {saved.__name__} cannot be built from "
                                  f"({type(exc).__name__}: {exc}); the file is damaged or crafted: save the "
                                  "explainer again.") from exc


def _saved_class(cls: type[InstanceExplainer], qualified: str, name: str) -> type[InstanceExplainer]:
    """``module:Class`` among ``cls`` and its subclasses; the module is imported only when it is this package's
    or a registered plugin's."""
    module, _, qualname = qualified.partition(":")

    def find() -> type[InstanceExplainer] | None:
        stack = [cls]
        while stack:
            klass = stack.pop()
            if klass.__module__ == module and klass.__qualname__ == qualname:
                return klass
            stack.extend(klass.__subclasses__())
        return None

    found = find()
    if found is None and module.split(".")[0] in _importable_roots():
        with contextlib.suppress(ImportError):
            importlib.import_module(module)
        found = find()
    if found is None:
        raise DataValidationError(f"{name} holds a {qualified}, which is not {cls.__name__} or a subclass of it "
                                  "(or its plugin is not installed).")
    return found


def _importable_roots() -> set[str]:
    """This package and the packages of registered explainer plugins: the modules a saved file may import."""
    return {"shap_instances"} | {ep.value.split(":")[0].split(".")[0]
                                 for ep in entry_points(group="shap_instances.explainers")}


def _unpickle(cls: type[InstanceExplainer], data: bytes, name: str) -> InstanceExplainer:
    """A trusted pickle written by :meth:`InstanceExplainer.save` (0.1's format, or the fallback)."""
    stream = io.BytesIO(data)
    try:
        saved_type = pickle.load(stream)
        if not (isinstance(saved_type, type) and issubclass(saved_type, cls)):
            raise DataValidationError(f"{name} holds a {saved_type!r}, not a {cls.__name__}.")
        header = pickle.load(stream)
        if not (isinstance(header, tuple) and len(header) == 2 and header[0] == _SAVE_FORMAT):
            raise DataValidationError(f"{name} was not written by {cls.__name__}.save (header {header!r}).")
        explainer = cloudpickle.load(stream)
    except DataValidationError:
        raise
    except Exception as exc:  # noqa: BLE001 - a damaged pickle fails in any of pickle's ways
        raise DataValidationError(f"{name} is damaged or truncated ({type(exc).__name__}: {exc}).") from None
    if not isinstance(explainer, saved_type):
        raise DataValidationError(f"{name}'s content is a {type(explainer).__name__}, not a {saved_type.__name__}.")
    return explainer


def _collapse_rows(base: np.ndarray) -> float | np.ndarray:
    """One base value when every row has the same (a float, or an array over outputs), else the rows'."""
    if base.ndim == 0:
        return float(base)
    if len(base) and np.all(base == base[:1]):
        return float(base[0]) if base.ndim == 1 else base[0].copy()
    return base.copy()
