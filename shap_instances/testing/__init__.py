"""Conformance checks for explainers and plugins, in the style of scikit-learn's ``estimator_checks``.

* one function per rule of the contract (``check_n_players``, ``check_call_y``, ...), each building its own
  explainer from the class's :meth:`~shap_instances.InstanceExplainer.conformance_problem` and raising an
  ``AssertionError`` that names the rule, what it saw and what the contract wants;
* :func:`check_explainer`: every check, every failure listed in one ``AssertionError``;
* :func:`parametrize_with_checks`: one pytest case per class and check;
* :class:`ConformanceProblem`: the small problem an explainer hands the checks;
* :mod:`shap_instances.testing.strategies` (imported on its own; needs hypothesis): fuzz strategies for tables,
  targets and bad input.
"""

from .._base import ConformanceProblem
from ._behaviour import (
    check_bad_input_errors,
    check_call_y,
    check_column_handling,
    check_legacy_api,
    check_model_not_mutated,
    check_n_jobs_invariance,
    check_random_state_is_used,
    check_random_state_reproduces,
    check_serialisation,
)
from ._conventions import check_shap_conventions
from ._declarations import (
    check_constructor_signature,
    check_is_shap_explainer,
    check_players_declaration,
    check_refused_options,
)
from ._generated import (
    check_duplicated_rows,
    check_float64_output,
    check_global_random_state,
    check_nan_handling,
    check_one_row,
    check_options_survive_save_load,
    check_output_names_follow_classes,
    check_working_directory,
)
from ._output import (
    check_efficiency,
    check_explanation_shapes,
    check_feature_names,
    check_finish_is_called,
    check_n_players,
    check_row_names,
    check_values_follow_their_players,
)
from ._plots import check_shap_plots
from ._runner import check_explainer, explainer_checks, parametrize_with_checks

__all__ = [
    "ConformanceProblem",
    "check_bad_input_errors",
    "check_call_y",
    "check_column_handling",
    "check_constructor_signature",
    "check_efficiency",
    "check_explainer",
    "check_explanation_shapes",
    "check_feature_names",
    "check_finish_is_called",
    "check_is_shap_explainer",
    "check_legacy_api",
    "check_model_not_mutated",
    "check_n_jobs_invariance",
    "check_n_players",
    "check_players_declaration",
    "check_random_state_is_used",
    "check_random_state_reproduces",
    "check_refused_options",
    "check_row_names",
    "check_serialisation",
    "check_shap_conventions",
    "check_shap_plots",
    "check_values_follow_their_players",
    "check_duplicated_rows",
    "check_float64_output",
    "check_global_random_state",
    "check_nan_handling",
    "check_one_row",
    "check_options_survive_save_load",
    "check_output_names_follow_classes",
    "check_working_directory",
    "explainer_checks",
    "parametrize_with_checks",
]
