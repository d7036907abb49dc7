"""The check that an explainer follows shap's conventions, as code written for shap's explainers expects them."""

from __future__ import annotations

from .._base import ConformanceProblem
from ._common import build, call, n_players_of, rule, same, training_targets

__all__ = ["check_shap_conventions"]


@rule("shap's conventions: explainer.data is data_ and read-only, data_feature_names names the players, "
      "shap_values(X, y, check_additivity=False, silent=True) ignores y (when unused) and shap's keywords, and the "
      "explainer is a shap_instances.Explainer")
def check_shap_conventions(cls: type, problem: ConformanceProblem) -> None:
    """What shap code does with an explainer works: ``explainer(explainer.data)``, ``data_feature_names``,
    ``shap_values`` with shap's keywords and ``isinstance(e, shap_instances.Explainer)``.

    Examples
    --------
    >>> from shap_instances import NaiveBayesExplainer
    >>> from shap_instances.testing import check_shap_conventions
    >>> check_shap_conventions(NaiveBayesExplainer)
    """
    from ..registry import Explainer

    explainer = build(cls, problem)
    explanation = call(explainer, problem)
    assert explainer.data is explainer.data_, "explainer.data is not explainer.data_"
    try:
        explainer.data = None
    except AttributeError:
        pass
    else:
        raise AssertionError("explainer.data can be assigned: it must be a read-only alias of data_")
    if explainer.players in ("instances", "features"):  # else check_players_declaration fails
        names = explainer.data_feature_names
        expected = n_players_of(cls, problem)
        assert isinstance(names, list) and len(names) == expected and all(isinstance(n, str) for n in names), (
            f"data_feature_names must name the {expected} players ({explainer.players}): got {names[:3]}...")
    plain = explainer.shap_values(problem.X, problem.y_explained)  # check_legacy_api compares it with the call
    y = problem.y_explained if explainer.call_y != "none" else training_targets(problem, len(explanation.values))
    same(explainer.shap_values(problem.X, y, check_additivity=False, silent=True), plain,
         "shap_values(X, y, check_additivity=False, silent=True) against shap_values(X)")
    assert isinstance(explainer, Explainer) and issubclass(cls, Explainer), "not a shap_instances.Explainer"
