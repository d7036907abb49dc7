"""shap_instances.Explainer is a class (isinstance, issubclass, load, help), shap's conventions hold on every
explainer (seed=, shap_values keywords, interaction values refused), and ``shap.Explainer = si.Explainer`` works
in either import order (subprocesses: the order of first imports matters)."""

import io
import pydoc
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import shap
from sklearn.datasets import load_diabetes
from sklearn.ensemble import RandomForestRegressor
from sklearn.linear_model import LinearRegression
from sklearn.naive_bayes import GaussianNB

import shap_instances as si
from shap_instances.exceptions import InvalidParameterError


@pytest.fixture(scope="module")
def data():
    X, y = load_diabetes(return_X_y=True, as_frame=True)
    return X.iloc[:60], y.iloc[:60]


def test_explainer_is_a_class_that_builds_the_chosen_explainer(data):
    X, y = data
    forest = RandomForestRegressor(5, random_state=0).fit(X, y)
    ours, theirs = si.Explainer(forest, X, y=y), si.Explainer(forest)
    assert isinstance(si.Explainer, type)
    assert type(ours) is si.GapExplainer and type(theirs) is shap.explainers.Tree
    assert isinstance(ours, si.Explainer) and isinstance(theirs, si.Explainer)
    assert isinstance(ours, shap.Explainer) and not isinstance(forest, si.Explainer)
    assert issubclass(si.GapExplainer, si.Explainer) and issubclass(shap.explainers.Tree, si.Explainer)
    assert issubclass(si.Explainer, si.Explainer) and not issubclass(RandomForestRegressor, si.Explainer)
    assert "superset of" in pydoc.render_doc(si.Explainer) and "algorithm" in pydoc.render_doc(si.Explainer)


def test_load_dispatches_on_the_saved_class(data):
    X, y = data
    ours = si.Explainer(GaussianNB().fit(X, y > y.median()), X)
    buffer = io.BytesIO()
    ours.save(buffer)
    buffer.seek(0)
    loaded = si.Explainer.load(buffer)
    assert type(loaded) is si.NaiveBayesExplainer
    np.testing.assert_array_equal(loaded(X[:3]).values, ours(X[:3]).values)
    model = LinearRegression().fit(X.iloc[:, :3], y)
    theirs = shap.Explainer(model.predict, X.iloc[:20, :3], algorithm="exact")
    buffer = io.BytesIO()
    theirs.save(buffer)
    buffer.seek(0)
    loaded = si.Explainer.load(buffer)  # not ours: shap's own reader
    assert type(loaded) is type(theirs)  # what it computes with is what was saved (a call compiles shap: seconds)
    np.testing.assert_array_equal(loaded.masker.data, theirs.masker.data)
    np.testing.assert_array_equal(loaded.model(X.iloc[:5, :3]), model.predict(X.iloc[:5, :3]))


def test_seed_is_accepted_by_every_algorithm():
    for name, cls in sorted(si.list_explainers().items()):
        problem = cls.conformance_problem()
        options = {**problem.options, **({} if problem.y is None else {"y": problem.y})}
        explainer = si.Explainer(problem.model, problem.masker, algorithm=name, seed=3, **options)
        assert type(explainer) is cls, name
        if "random_state" in type(explainer).__init__.__code__.co_varnames:
            assert explainer.random_state == 3, name  # a stochastic explainer takes seed as its random_state


def test_shap_values_takes_shaps_keywords_and_refuses_what_it_cannot_do(data):
    X, y = data
    explainer = si.Explainer(RandomForestRegressor(5, random_state=0).fit(X, y), X, y=y)
    values = explainer(X[:3]).values
    same = explainer.shap_values(X[:3], y=y[:3], check_additivity=False, approximate=False, tree_limit=None,
                                 nsamples=100, silent=True)
    np.testing.assert_array_equal(same, values)
    for option, value in [("tree_limit", 2), ("approximate", True), ("ranked_outputs", 1), ("main_effects", True)]:
        with pytest.raises(InvalidParameterError, match=option):
            explainer.shap_values(X[:3], **{option: value})
    with pytest.raises(TypeError):  # not one of shap's keywords either: the call refuses it
        explainer.shap_values(X[:3], no_such_option=1)
    with pytest.raises(NotImplementedError, match="pairs of features"):  # UnsupportedOperationError is one
        explainer.shap_interaction_values(X[:3])


_PATCH_AND_USE = """
    import sys, warnings
    import numpy as np
    import shap
    import shap_instances as si
    from shap_instances.exceptions import PluginLoadWarning
    from sklearn.datasets import load_diabetes
    from sklearn.ensemble import GradientBoostingRegressor, RandomForestRegressor
    warnings.simplefilter("error", PluginLoadWarning)
    X, y = load_diabetes(return_X_y=True)
    X, y = X[:80], y[:80]
    if {early}:
        shap.Explainer = shap.explainers.Explainer = si.Explainer
        assert "shap_instances._base" not in sys.modules  # patched before any explainer module is imported
    names = set(si.list_explainers())
    assert {{"gap", "boosting", "naive_bayes", "representer", "instance_kernel", "isotonic"}} <= names, names
    boosting = GradientBoostingRegressor(n_estimators=10, random_state=0).fit(X, y)
    reference = shap.explainers.Tree(boosting)(X[:4]).values
    shap.Explainer = shap.explainers.Explainer = si.Explainer
    tree = shap.Explainer(boosting)
    assert type(tree) is shap.explainers.Tree and isinstance(tree, shap.Explainer)
    np.testing.assert_array_equal(tree(X[:4]).values, reference)
    gap = shap.Explainer(RandomForestRegressor(5, random_state=0).fit(X, y), X, y=y)
    assert type(gap).__name__ == "GapExplainer" and isinstance(gap, shap.Explainer), type(gap)
    assert shap.explainers.Explainer(boosting, algorithm="tree").__class__ is shap.explainers.Tree
    print("ok")
"""


@pytest.mark.parametrize("early", [pytest.param(True, id="patched-before-explainers-load"),
                                   pytest.param(False, id="patched-after", marks=pytest.mark.slow)])
def test_shap_explainer_can_be_replaced_in_either_import_order(early):
    script = textwrap.dedent(_PATCH_AND_USE.format(early=early))
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and done.stdout.strip().endswith("ok"), done.stderr[-3000:]



def _custom_explainer(base):
    """shap's documented custom explainer: its own __init__ (calling shap's) and __call__, subclassing ``base``."""

    class MeanShiftExplainer(base):
        """Splits ``f(x) - mean f(background)`` equally over the features (simple, and checkable by hand)."""

        def __init__(self, model, masker):
            super().__init__(model, masker)
            self.background = np.asarray(masker)
            self.initialised = True

        def __call__(self, X):
            X = np.asarray(X)
            base_value = float(np.mean(self.model(self.background)))
            share = (self.model(X) - base_value) / X.shape[1]
            return shap.Explanation(np.repeat(share[:, None], X.shape[1], axis=1), base_values=base_value, data=X)

    return MeanShiftExplainer


@pytest.mark.parametrize("patched", [True, False], ids=["shap.Explainer-patched", "si.Explainer-subclassed"])
def test_a_custom_subclass_of_the_dispatcher_is_built_and_called_as_shaps(data, monkeypatch, patched):
    X, y = data
    X = X.to_numpy()
    model = LinearRegression().fit(X, y)
    if patched:
        monkeypatch.setattr(shap, "Explainer", si.Explainer)
    base = shap.Explainer if patched else si.Explainer
    explainer = _custom_explainer(base)(model.predict, X[:20])
    reference = _custom_explainer(si.utils.shap_explainer_class())(model.predict, X[:20])  # shap unpatched
    assert type(explainer).__name__ == "MeanShiftExplainer" and explainer.initialised  # its __init__ ran
    assert isinstance(explainer, si.Explainer) and isinstance(explainer, si.utils.shap_explainer_class())
    assert isinstance(explainer.masker, shap.maskers.Independent)  # super().__init__ is shap's
    values = explainer(X[:3])
    np.testing.assert_allclose(values.values.sum(1) + values.base_values, model.predict(X[:3]))
    np.testing.assert_array_equal(values.values, reference(X[:3]).values)
    assert type(si.Explainer(GaussianNB().fit(X, y > y.median()), X)) is si.NaiveBayesExplainer  # dispatch unchanged
    assert type(si.Explainer(model.predict, X[:20], algorithm="exact")) is shap.explainers.Exact


def test_shap_idioms_on_training_rows_name_the_problem(data):
    """e[:, "Age"] over training rows, e["row"], ex(X, interactions=True), an unknown call option and
    e.instance_names: this package's errors (or a warning) naming what to do, not numpy's IndexError, Python's
    TypeError or a silent None."""
    from shap_instances.exceptions import (
        ExplanationIndexError,
        ShapInstancesDeprecationWarning,
        UnsupportedOperationError,
    )

    X, y = data
    explainer = si.Explainer(RandomForestRegressor(5, random_state=0).fit(X, y), X, y=y)
    e = explainer(X[:3])
    first = e.feature_names[0]
    np.testing.assert_array_equal(e[:, first].values, e.values[:, 0])  # a training row by its name still works
    with pytest.raises(ExplanationIndexError, match="'age' is not a player name.*training rows"):
        e[:, "age"]
    with pytest.raises(ExplanationIndexError, match="'age' is not a player name.*training rows"):
        e[0:2][:, "age"]  # slices keep the check and the explainer's labels
    with pytest.raises(ExplanationIndexError, match="row_names"):
        e["0"]
    with pytest.raises(ExplanationIndexError, match=r"out of bounds.*shape \(3, 60\)"):
        e[:, 10**6]
    with pytest.raises(IndexError):  # an IndexError still, for code that catches one
        e[1.5]
    assert len(list(e)) == 3  # iteration (which stops on IndexError) unchanged
    np.testing.assert_array_equal(e[:, [e.feature_names[2], first]].values, e.values[:, [2, 0]])  # names in a list
    with pytest.raises(UnsupportedOperationError, match="not defined over training instances"):
        explainer(X[:3], interactions=True)
    with pytest.raises(UnsupportedOperationError, match="not defined over training instances"):
        explainer.shap_interaction_values(X[:3])
    with pytest.raises(InvalidParameterError, match="max_evals=100"):
        explainer(X[:3], max_evals=100)
    with pytest.raises(InvalidParameterError, match="no option nonsense="):
        explainer(X[:3], nonsense=1)
    with pytest.raises(InvalidParameterError, match=r"too many positional arguments; call it as explainer\(X=None"):
        explainer(X[:3], None, 3)
    np.testing.assert_array_equal(explainer(X[:3], interactions=False, silent=True).values, e.values)
    with pytest.warns(ShapInstancesDeprecationWarning, match="row_names"):
        assert e.instance_names == e.row_names and e.row_names is not None
    assert e.abs.mean(0).shape == (len(X),)  # shap's own reads of instance_names still get what is stored


def test_a_plugin_call_with_its_own_keywords_keeps_them(data):
    """A subclass whose __call__ takes **options gets every keyword but interactions=True, which is refused."""
    from shap_instances.exceptions import UnsupportedOperationError

    class Echo(si.NaiveBayesExplainer):
        def __call__(self, X, y=None, **options):
            self.options = options
            return super().__call__(X, y)

    X, y = data
    explainer = Echo(GaussianNB().fit(X, y > y.median()), X)
    explainer(X[:2], max_evals=7, anything=1)
    assert explainer.options == {"max_evals": 7, "anything": 1}
    with pytest.raises(UnsupportedOperationError):
        explainer(X[:2], interactions=True)
