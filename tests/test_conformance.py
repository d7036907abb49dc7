"""The conformance checks over the registry: every registered explainer (the KNN plugin included) passes every
check, one pytest case per class and check; a minimal plugin passes check_explainer and broken ones fail it.

The checks themselves, each against the broken plugin it must catch, are tested in tests/test_testing_checks.py.
"""

import numpy as np
import pytest

import shap_instances as si
from shap_instances.testing import ConformanceProblem, check_explainer, parametrize_with_checks

REGISTERED = [si.get_explainer(name) for name in sorted(si.list_explainers())]


#: shap's plots of every explainer render in the default run through tests/test_plots_render.py (and boosting's
#: through test_boosting's check_explainer); here they join the slow step, which keeps the default run short.
@parametrize_with_checks(REGISTERED, marks={"check_shap_plots": pytest.mark.slow})
def test_every_registered_explainer_conforms(explainer_class, check):
    check(explainer_class)


class _RowMean(si.InstanceExplainer):
    """A minimal correct plugin: each training row's share of the mean prediction over the training rows."""

    requires_y = False

    def __init__(self, model, masker=None, *, data=None, feature_names=None):
        data = self._setup(locals())
        self.columns_ = si.utils.fitted_columns(model, data)
        self.data_ = si.utils.check_data(data, name="masker", feature_names=self.columns_)
        self.train_names_ = si.utils.training_names(data, feature_names)

    def __call__(self, X, y=None):
        self._check_call_y(y)
        names = si.utils.row_names(X)
        X = si.utils.check_data(X, feature_names=self.columns_, n_features=self.data_.shape[1])
        prediction = self.model.predict(si.utils.model_input(self.model, X))
        n_train = len(self.data_)
        values = np.broadcast_to(prediction[:, None] / n_train, (len(X), n_train))
        return self._finish(si.build_explanation(values, 0.0, feature_names=self.train_names_, row_names=names,
                                                 explained=prediction))

    @classmethod
    def conformance_problem(cls):
        from sklearn.linear_model import Ridge

        from shap_instances.datasets import load_diabetes

        X, y = load_diabetes()
        model = Ridge().fit(X.iloc[:30], y.iloc[:30])
        return ConformanceProblem(model, X.iloc[:30], X.iloc[30:34], explained=model.predict)


@pytest.mark.slow
def test_a_minimal_plugin_conforms():
    check_explainer(_RowMean)


class _PositionalColumns(_RowMean):
    """Broken: matches DataFrame columns by position (ignores names)."""

    def __call__(self, X, y=None):
        return super().__call__(np.asarray(X), y)


class _WrongLegacy(_RowMean):
    """Broken: shap_values disagrees with the call."""

    def shap_values(self, X=None, y=None, **options):
        return super().shap_values(X, y) * 2


class _AcceptsAnything(_RowMean):
    """Broken: swallows unknown options."""

    def __init__(self, model, masker=None, *, data=None, feature_names=None, **ignored):
        super().__init__(model, masker, data=data, feature_names=feature_names)


class _PositionalTargets(_RowMean):
    """Broken: a third positional parameter."""

    def __init__(self, model, masker=None, y=None, *, data=None, feature_names=None):
        super().__init__(model, masker, data=data, feature_names=feature_names)


class _NotEfficient(_RowMean):
    """Broken: the values do not add up to the prediction."""

    def __call__(self, X, y=None):
        explanation = super().__call__(X, y)
        explanation.values = explanation.values * 0.5
        return explanation


@pytest.mark.parametrize("broken, check", [
    (_PositionalColumns, "check_column_handling"),
    (_WrongLegacy, "check_legacy_api"),
    (_AcceptsAnything, "check_refused_options"),
    (_PositionalTargets, "check_constructor_signature"),
    (_NotEfficient, "check_efficiency"),
])
def test_a_broken_plugin_fails_the_check_it_breaks(broken, check):
    with pytest.raises(AssertionError, match=f"{broken.__name__} fails {check}"):
        getattr(si.testing, check)(broken)


def test_a_class_without_a_problem_is_told_what_to_do():
    class _NoProblem(si.InstanceExplainer):
        pass

    with pytest.raises(AssertionError, match="fails check_is_shap_explainer: raised NotImplementedError: .*pass one "
                       "to check_explainer"):
        check_explainer(_NoProblem)
