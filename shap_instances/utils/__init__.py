"""Public helpers shared by every explainer and by plugins: validation, random state, options, grouping.

* files that load without running code: :func:`dump_safely`, :func:`load_safely` (skops' format, pandas as
  columns, types off the trusted list refused: :func:`untrusted_types`), :func:`read_file`, a fitted model's file
  (:func:`save_model`, :func:`load_model`); the memory left to allocate,
  :func:`available_memory_bytes` (cgroup, ``ulimit -v``, available memory) and :func:`default_memory_budget`;
* validation at the boundary: :func:`check_data` (DataFrames put in the fitted column order by name,
  other columns refused with the names listed, wrong widths refused; an object once per call within
  :func:`validating_once`), :func:`check_target`,
  :func:`check_fitted`, :func:`check_pairs` ((user, item) index pairs), :func:`check_memory`, :func:`check_disk`,
  :func:`row_names`, :func:`column_names`;
* :func:`check_random_state`, the one random-state helper, and :func:`spawn_seeds` for parallel workers;
* :func:`validate_params` with :class:`Interval` / :class:`Options`, the declarative option tables, and
  :data:`RUN_OPTIONS`, the numeric options of the report and the command line (:class:`NumericOption`);
* :func:`player_clustering` and :func:`row_cohorts`, groupings for shap's bar plot and cohorts;
* :func:`explain_partitions`, explanations of row partitions on a dask cluster (:func:`dask_client`), joined by
  :func:`concat_explanations` or streamed to a sink;
* :func:`spread_test` and :func:`precision_summary`: whether sampled values spread beyond their noise, and the
  one sentence on their precision that every sampled result carries; :func:`beyond_noise` (with
  :func:`ranking_z`), the rows a ranked list may name;
* :func:`spreadsheet_safe`, the one guard of every CSV the package writes (no cell a spreadsheet runs as a formula);
* :func:`shap_explainer_class`, shap's own ``Explainer`` even where ``shap.Explainer`` was reassigned;
* the scikit-learn adapter, the only reader of scikit-learn's internals (``forest/`` and ``boosting/`` use it):
  :data:`SKLEARN_SUPPORTED` and :func:`check_sklearn_version`, the forests' bootstrap weights
  (:func:`forest_draw_semantics`, :func:`forest_class_weights`, :func:`forest_tree_weights`,
  :func:`forest_inbag_draws`) and the gradient-boosting models' private state (``gb_*``, ``hgb_*``);
* :func:`unwrap_model`, the one reader of pipelines, search objects and other meta-estimators;
* (:func:`check_explainer` moved to :mod:`shap_instances.testing`.)
"""

from typing import Any

from ._clustering import player_clustering, row_cohorts
from ._dask import (
    SharedFolder,
    available_cores,
    concat_explanations,
    dask_client,
    explain_partitions,
    is_dask_collection,
    load_shared,
    row_partitions,
    shared_arrays,
)
from ._memmap import FolderLock, MemmapWriter, check_output_folder, memmap_explanation, write_memmap_rows
from ._memory import available_memory_bytes, default_memory_budget
from ._models import UnwrappedModel, check_model_kind, final_estimator, model_kind, unwrap_model
from ._numba import INLINED, JIT_OPTIONS, announce_compile, is_cached, kernel_array
from ._outputs import FORMULA_STARTS, file_digest, spreadsheet_safe, write_atomically
from ._params import (
    COMMON_CONSTRAINTS,
    RUN_OPTIONS,
    HasMethods,
    Interval,
    NumericOption,
    Options,
    check_min_evals,
    parse_number,
    validate_params,
)
from ._persistence import dump_safely, load_model, load_safely, read_file, save_model, untrusted_types
from ._precision import SpreadTest, beyond_noise, precision_summary, ranking_z, spread_test
from ._random import RandomStateLike, check_random_state, spawn_seeds
from ._scoring import check_scoring
from ._shap import shap_explainer_class
from ._sklearn_internals import (
    NEWEST_TESTED_SKLEARN,
    OLDEST_SKLEARN,
    SKLEARN_SUPPORTED,
    bagging_n_samples,
    check_sklearn_version,
    forest_class_weights,
    forest_draw_semantics,
    forest_inbag_draws,
    forest_tree_weights,
    gb_init_raw,
    gb_loss,
    hgb_apply_input,
    hgb_baseline,
    hgb_loss,
    hgb_node_id_predictor,
    hgb_predictors,
    hgb_sample_weight,
    hgb_split_seed,
    logistic_one_vs_rest,
    scorer_task,
    sklearn_version,
)
from ._validation import (
    categorical_columns,
    check_data,
    check_disk,
    check_finite_result,
    check_fitted,
    check_labels,
    check_memory,
    check_model_rows,
    check_pairs,
    check_row_order,
    check_target,
    check_unique_columns,
    class_codes,
    column_names,
    fitted_columns,
    in_column_order,
    instance_names,
    model_input,
    row_names,
    scan_text_file,
    string_columns,
    training_names,
    validating_once,
)

__all__ = [
    "MemmapWriter",
    "SpreadTest",
    "beyond_noise",
    "precision_summary",
    "ranking_z",
    "spread_test",
    "SharedFolder",
    "available_cores",
    "check_output_folder",
    "concat_explanations",
    "dask_client",
    "explain_partitions",
    "is_dask_collection",
    "load_shared",
    "memmap_explanation",
    "row_partitions",
    "shared_arrays",
    "write_memmap_rows",
    "COMMON_CONSTRAINTS",
    "FORMULA_STARTS",
    "FolderLock",
    "HasMethods",
    "INLINED",
    "JIT_OPTIONS",
    "announce_compile",
    "is_cached",
    "kernel_array",
    "Interval",
    "NEWEST_TESTED_SKLEARN",
    "OLDEST_SKLEARN",
    "Options",
    "RandomStateLike",
    "SKLEARN_SUPPORTED",
    "UnwrappedModel",
    "available_memory_bytes",
    "bagging_n_samples",
    "default_memory_budget",
    "dump_safely",
    "file_digest",
    "final_estimator",
    "categorical_columns",
    "check_data",
    "check_pairs",
    "validating_once",
    "check_finite_result",
    "check_fitted",
    "check_labels",
    "class_codes",
    "check_model_kind",
    "check_model_rows",
    "check_scoring",
    "check_memory",
    "check_min_evals",
    "check_disk",
    "check_random_state",
    "check_sklearn_version",
    "check_target",
    "check_row_order",
    "check_unique_columns",
    "column_names",
    "fitted_columns",
    "forest_class_weights",
    "forest_draw_semantics",
    "forest_inbag_draws",
    "forest_tree_weights",
    "gb_init_raw",
    "gb_loss",
    "hgb_apply_input",
    "hgb_baseline",
    "hgb_loss",
    "hgb_node_id_predictor",
    "hgb_predictors",
    "hgb_sample_weight",
    "hgb_split_seed",
    "logistic_one_vs_rest",
    "model_kind",
    "scorer_task",
    "in_column_order",
    "instance_names",
    "load_model",
    "load_safely",
    "model_input",
    "player_clustering",
    "read_file",
    "save_model",
    "scan_text_file",
    "string_columns",
    "row_cohorts",
    "row_names",
    "shap_explainer_class",
    "sklearn_version",
    "spawn_seeds",
    "spreadsheet_safe",
    "training_names",
    "untrusted_types",
    "unwrap_model",
    "parse_number",
    "NumericOption",
    "RUN_OPTIONS",
    "validate_params",
    "write_atomically",
]


def __getattr__(name: str) -> Any:
    if name in ("check_explainer", "ConformanceProblem"):  # moved to shap_instances.testing in 0.2
        import importlib

        from .._deprecated import warn_moved

        warn_moved(f"shap_instances.utils.{name}", f"shap_instances.testing.{name}")
        return getattr(importlib.import_module("shap_instances.testing"), name)
    raise AttributeError(f"module 'shap_instances.utils' has no attribute {name!r}")
