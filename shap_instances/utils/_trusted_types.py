"""The types a saved file may hold: named classes, each with the one skops loader allowed to build it.

A file in skops' format is a tree of nodes; each node names a class (``module.Class``) and the loader that
builds it (``ObjectNode`` makes an instance without ``__init__`` and sets its state, ``ListNode`` calls the
class with a list, ``TypeNode`` returns the class itself...). A node is built only when its class is listed
here *for its loader*: a list is built by ``ListNode`` only as ``builtins.list``, an estimator only by
``ObjectNode``, and so on. There is no "any class of library X".

The rule that made the list, so that it can be audited and extended:

* scikit-learn: every class :func:`sklearn.utils.all_estimators` returns (the public estimators, fitted state
  in ``__dict__``), less any that defines ``__del__``, plus the named helper types fitted estimators hold
  (losses, links, the histogram-binning mapper, the distance metrics without a Python function) and the
  index-carrying types of :data:`INDEXED_TYPES` (``sklearn.tree._tree.Tree``, HistGradientBoosting's
  ``TreePredictor``, KD- and ball-trees), which are used only after their indices are checked
  (:mod:`shap_instances.utils._model_state`).
* NumPy: ``numpy.ndarray``, ``numpy.dtype``, the scalar types, masked arrays, ``RandomState`` and
  ``Generator``, and the ufuncs (as values, e.g. ``FunctionTransformer(np.log1p)``; with scikit-learn's
  ``check_array``, the only functions, and ``functools.partial`` of them); SciPy's sparse matrices
  and arrays. Never ``numpy.memmap`` (opens a file), ``DataSource`` (deletes a folder when collected) or
  another class that touches files.
* XGBoost, LightGBM and CatBoost: their scikit-learn wrappers and boosters, which rebuild a model from its
  serialised bytes or text through the library's own loader (never from a native handle read from the file).
  ``xgboost.core.DMatrix`` and the like (a handle the file could set) are not listed.
* shap_instances: its public estimators.

To add a type: check that building it without ``__init__`` and setting any state cannot touch files, the
network or native memory (``__del__``, ``__setstate__``, ``__reduce__``), add its name here and a round trip
to ``tests/test_persistence_types.py``. A caller who trusts a file loads it with ``trusted=True``.
"""

from __future__ import annotations

import functools

from ._sklearn_internals import sklearn_compiled_losses

__all__ = ["INDEXED_TYPES", "trusted_types"]

#: Types whose state holds indices into native buffers: used only after ``check_model_state`` passes.
INDEXED_TYPES = ("sklearn.tree._tree.Tree", "sklearn.ensemble._hist_gradient_boosting.predictor.TreePredictor",
                 "sklearn.neighbors._kd_tree.KDTree", "sklearn.neighbors._ball_tree.BallTree")

_SKLEARN_HELPERS = (
    *(f"sklearn._loss.link.{name}" for name in ("IdentityLink", "LogLink", "LogitLink", "HalfLogitLink",
                                                "MultinomialLogit", "Interval")),
    *(f"sklearn._loss.loss.{name}" for name in ("AbsoluteError", "ExponentialLoss", "HalfBinomialLoss",
                                                "HalfGammaLoss", "HalfMultinomialLoss", "HalfPoissonLoss",
                                                "HalfSquaredError", "HalfTweedieLoss", "HalfTweedieLossIdentity",
                                                "HuberLoss", "PinballLoss")),
    "sklearn.ensemble._hist_gradient_boosting.binning._BinMapper",
    "sklearn.ensemble._hist_gradient_boosting.predictor.TreePredictor",
    "sklearn.utils._bunch.Bunch",
    "sklearn.neural_network._stochastic_optimizers.AdamOptimizer",
    "sklearn.neural_network._stochastic_optimizers.SGDOptimizer",
    "sklearn.calibration._CalibratedClassifier",
    "sklearn.calibration._SigmoidCalibration",
    "sklearn.metrics._scorer._PassthroughScorer",
    "sklearn.gaussian_process._gpc._BinaryGaussianProcessClassifierLaplace",
    *(f"sklearn.model_selection._split.{name}" for name in (
        "KFold", "StratifiedKFold", "GroupKFold", "StratifiedGroupKFold", "RepeatedKFold", "RepeatedStratifiedKFold",
        "ShuffleSplit", "StratifiedShuffleSplit", "GroupShuffleSplit", "LeaveOneOut", "LeavePOut",
        "LeaveOneGroupOut", "LeavePGroupsOut", "PredefinedSplit", "TimeSeriesSplit", "_CVIterableWrapper")),
    *(f"sklearn.gaussian_process.kernels.{name}" for name in (
        "ConstantKernel", "WhiteKernel", "RBF", "Matern", "RationalQuadratic", "ExpSineSquared", "DotProduct",
        "PairwiseKernel", "Sum", "Product", "Exponentiation", "CompoundKernel")),
    "sklearn.neighbors._kd_tree.KDTree",
    "sklearn.neighbors._ball_tree.BallTree",
    *(f"sklearn.metrics._dist_metrics.{name}Distance{bits}" for bits in ("64", "32")
      for name in ("Euclidean", "SEuclidean", "Manhattan", "Chebyshev", "Minkowski", "Mahalanobis", "Haversine")),
)
#: The SGD models' compiled losses (their ``__reduce__`` passes numbers only).
_SGD_LOSSES = tuple(f"sklearn.linear_model._sgd_fast.{name}" for name in (
    "Hinge", "SquaredHinge", "ModifiedHuber", "EpsilonInsensitive", "SquaredEpsilonInsensitive"))
#: Functions fitted estimators hold as values (HistGradientBoosting's categorical preprocessor holds a
#: ``partial(check_array, ...)``); each only validates or converts the array it is given.
_SKLEARN_FUNCTIONS = ("sklearn.utils.validation.check_array",
                      *(f"sklearn.feature_selection._univariate_selection.{name}"  # SelectKBest's score_func
                        for name in ("f_classif", "f_regression", "chi2", "r_regression", "f_oneway")),
                      "sklearn.feature_selection._mutual_info.mutual_info_classif",
                      "sklearn.feature_selection._mutual_info.mutual_info_regression")
_BOOSTING = (
    "xgboost.core.Booster", "xgboost.sklearn.XGBClassifier", "xgboost.sklearn.XGBRegressor",
    "xgboost.sklearn.XGBRanker", "xgboost.sklearn.XGBRFClassifier", "xgboost.sklearn.XGBRFRegressor",
    "lightgbm.basic.Booster", "lightgbm.sklearn.LGBMClassifier", "lightgbm.sklearn.LGBMRegressor",
    "lightgbm.sklearn.LGBMRanker",
    "catboost.core.CatBoost", "catboost.core.CatBoostClassifier", "catboost.core.CatBoostRegressor",
    "catboost.core.CatBoostRanker",
)
_SHAP_INSTANCES = (
    "shap_instances.lowrank._soft_impute.SoftImpute",
    "shap_instances.lowrank._matrix_factorization.MatrixFactorization",
    "shap_instances.lowrank._trace_norm.TraceNormRegression",
    "shap_instances.naive_bayes._weighted_nb.WeightedNaiveBayes",
)
_BUILTIN_VALUES = tuple(f"builtins.{name}" for name in ("int", "float", "complex", "str", "bool", "bytes",
                                                        "list", "tuple", "set", "frozenset", "dict"))


@functools.cache
def trusted_types() -> dict[str, frozenset[str]]:
    """For each skops loader, the classes (``module.Class``) it may build from a file.

    Examples
    --------
    >>> from shap_instances.utils._trusted_types import trusted_types
    >>> "sklearn.linear_model._ridge.Ridge" in trusted_types()["ObjectNode"]
    True
    >>> "numpy.lib._datasource.DataSource" in trusted_types()["ObjectNode"]
    False
    """
    scalars = _numpy_scalar_types()
    return {
        "ObjectNode": frozenset((*_sklearn_estimators(), *_SKLEARN_HELPERS, *_BOOSTING, *_SHAP_INSTANCES)),
        "TreeNode": frozenset({"sklearn.tree._tree.Tree"}),
        "LossNode": frozenset((*map(_name, sklearn_compiled_losses()), *_SGD_LOSSES)),
        "NdArrayNode": frozenset({"numpy.ndarray", *scalars}),
        "DTypeNode": frozenset({"numpy.dtype"}),
        "MaskedArrayNode": frozenset({"numpy.ma.MaskedArray", "numpy.ma.core.MaskedArray"}),
        "RandomStateNode": frozenset({"numpy.random.mtrand.RandomState"}),
        "RandomGeneratorNode": frozenset({"numpy.random._generator.Generator"}),
        "SparseMatrixNode": frozenset(_scipy_sparse_types()),
        "FunctionNode": frozenset((*_numpy_ufuncs(), *_SKLEARN_FUNCTIONS)),
        "PartialNode": frozenset({"functools.partial"}),  # of a function above: HistGradientBoosting's preprocessor
        "TypeNode": frozenset({*_BUILTIN_VALUES, "collections.OrderedDict", *scalars}),
        "DictNode": frozenset({"builtins.dict", "collections.OrderedDict", "sklearn.utils._bunch.Bunch"}),
        "DefaultDictNode": frozenset({"collections.defaultdict"}),
        "ListNode": frozenset({"builtins.list"}),
        "TupleNode": frozenset({"builtins.tuple"}),
        "SetNode": frozenset({"builtins.set", "builtins.frozenset"}),
        "BytesNode": frozenset({"builtins.bytes"}),
        "BytearrayNode": frozenset({"builtins.bytearray"}),
        "SliceNode": frozenset({"builtins.slice"}),
    }


def _name(cls: type) -> str:
    return f"{cls.__module__}.{cls.__name__}"


def _sklearn_estimators() -> list[str]:
    from sklearn.utils import all_estimators

    return [_name(cls) for _, cls in all_estimators() if _name(cls).startswith("sklearn.")
            and not any("__del__" in vars(klass) for klass in cls.__mro__[:-1])]


def _numpy_scalar_types() -> set[str]:
    import numpy as np

    return {_name(cls) for cls in np.sctypeDict.values() if cls.__module__ == "numpy"}


def _numpy_ufuncs() -> list[str]:
    import numpy as np

    return [f"numpy.{name}" for name in dir(np) if isinstance(getattr(np, name), np.ufunc)]


def _scipy_sparse_types() -> list[str]:
    from scipy import sparse

    bases = tuple(base for base in (getattr(sparse, "spmatrix", None), getattr(sparse, "sparray", None)) if base)
    return [_name(cls) for cls in vars(sparse).values() if isinstance(cls, type) and issubclass(cls, bases)
            and cls not in bases]
