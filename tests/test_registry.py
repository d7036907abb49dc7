"""The registry: discovery through real entry points, broken and duplicate plugins, dispatch."""

import textwrap
import warnings

import pytest

import shap_instances as si
from shap_instances import registry
from shap_instances.exceptions import (
    DuplicateExplainerWarning,
    PluginLoadWarning,
    UnknownExplainerError,
    UnsupportedModelError,
)


def _fake_distribution(root, dist_name, entry_points):
    """Write a minimal installed distribution (a .dist-info folder) that importlib.metadata discovers."""
    info = root / f"{dist_name.replace('-', '_')}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist_name}\nVersion: 0.1\n")
    lines = "\n".join(f"{name} = {target}" for name, target in entry_points.items())
    (info / "entry_points.txt").write_text(f"[shap_instances.explainers]\n{lines}\n")


@pytest.fixture
def plugin_dir(tmp_path, monkeypatch):
    (tmp_path / "fake_explainers.py").write_text(textwrap.dedent("""
        import shap_instances as si

        class FirstExplainer(si.InstanceExplainer):
            pass

        class SecondExplainer(si.InstanceExplainer):
            pass

        class ShadowNaiveBayes(si.InstanceExplainer):
            pass
    """))
    monkeypatch.syspath_prepend(str(tmp_path))
    registry._clear_cache()
    yield tmp_path
    registry._clear_cache()


def test_broken_plugin_warns_and_others_keep_working(plugin_dir):
    _fake_distribution(plugin_dir, "broken-plugin", {"broken": "no_such_module_xyz:Explainer"})
    _fake_distribution(plugin_dir, "good-plugin", {"good": "fake_explainers:FirstExplainer"})
    with pytest.warns(PluginLoadWarning, match=r"'broken'.*no_such_module_xyz.*ModuleNotFoundError"):
        found = si.list_explainers()
    assert "broken" not in found
    assert found["good"].__name__ == "FirstExplainer"


def test_get_explainer_of_a_broken_plugin_says_it_failed_to_import(plugin_dir):
    _fake_distribution(plugin_dir, "broken-plugin", {"broken": "no_such_module_xyz:Explainer"})
    with pytest.warns(PluginLoadWarning):
        si.list_explainers()  # the failure is recorded here ...
    for _ in range(2):  # ... and reported by every later lookup, not as "not registered"
        with pytest.raises(UnknownExplainerError, match=r"'broken' is installed .*no_such_module_xyz.*'broken-plugin'"
                                                        r".*failed to import: ModuleNotFoundError") as info:
            si.get_explainer("broken")
        assert "No explainer is registered" not in str(info.value)
        assert isinstance(info.value.__cause__, ModuleNotFoundError)
    with pytest.raises(UnknownExplainerError, match="failed to import"):
        si.Explainer(object(), None, algorithm="broken")


def test_duplicate_names_warn_and_resolve_deterministically(plugin_dir):
    _fake_distribution(plugin_dir, "zzz-plugin", {"dup": "fake_explainers:SecondExplainer"})
    _fake_distribution(plugin_dir, "aaa-plugin", {"dup": "fake_explainers:FirstExplainer"})
    with pytest.warns(DuplicateExplainerWarning, match="dup"):
        cls = si.get_explainer("dup")
    assert cls.__name__ == "FirstExplainer"  # alphabetical by distribution


def test_third_party_cannot_shadow_builtin(plugin_dir):
    _fake_distribution(plugin_dir, "aaa-shadow", {"naive_bayes": "fake_explainers:ShadowNaiveBayes"})
    with pytest.warns(DuplicateExplainerWarning, match="naive_bayes"):
        table = registry._entry_point_table()
    assert table["naive_bayes"].value.startswith("shap_instances.")


def test_unknown_name_lists_available_names(plugin_dir):
    _fake_distribution(plugin_dir, "good-plugin", {"good": "fake_explainers:FirstExplainer"})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PluginLoadWarning)
        with pytest.raises(UnknownExplainerError, match=r"'no-such'.*Available:.*'good'") as info:
            si.Explainer(object(), None, algorithm="no-such")
    assert isinstance(info.value, KeyError)


def test_auto_without_support_lists_names():
    # with options that only this package's explainers take, nothing falls back to shap: the error lists names
    with pytest.raises(UnsupportedModelError, match="algorithm="):
        si.Explainer(object(), None, y=[1.0])


def test_register_explainer_at_run_time():
    @si.register_explainer("runtime_test_explainer", replace=True)
    class RuntimeExplainer(si.InstanceExplainer):
        @classmethod
        def supports_model(cls, model, data=None):
            return model == "runtime-model"

    try:
        assert si.get_explainer("runtime_test_explainer") is RuntimeExplainer
        assert "runtime_test_explainer" in si.list_explainers()
        assert isinstance(si.Explainer("runtime-model", None), RuntimeExplainer)
        with pytest.raises(ValueError, match="replace=True"):
            si.register_explainer("runtime_test_explainer")(type("Other", (si.InstanceExplainer,), {}))
        with pytest.raises(TypeError, match="shap.Explainer subclass"):
            si.register_explainer("not_a_class")(object)
    finally:
        registry._runtime.pop("runtime_test_explainer", None)


def test_builtin_explainers_are_shap_explainers():
    import shap

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PluginLoadWarning)
        found = si.list_explainers()
    for name, cls in found.items():
        assert issubclass(cls, shap.Explainer), name


def test_automatic_choice_says_why_no_explainer_takes_the_model():
    """A model neither ours nor shap's take (a clusterer, an object, None): UnsupportedModelError quoting shap's
    reason (was shap's bare TypeError); shap's own choices are unchanged."""
    import numpy as np
    from sklearn.cluster import KMeans
    from sklearn.datasets import load_diabetes
    from sklearn.tree import DecisionTreeRegressor

    import shap_instances as si
    from shap_instances.exceptions import InvalidParameterError, UnsupportedModelError

    X, y = load_diabetes(return_X_y=True)
    for model in (KMeans(2, n_init=1, random_state=0).fit(X), object(), None):
        with pytest.raises(UnsupportedModelError, match="shap's own choice refused it.*not callable"):
            si.Explainer(model, X[:20])
    with pytest.raises(UnsupportedModelError, match="shap's 'additive' explainer refused it"):
        si.Explainer(object(), X[:20], algorithm="additive")
    with pytest.raises(InvalidParameterError, match=r"algorithm must be a name \(str\), got \['tree'\]"):
        si.Explainer(object(), X[:20], algorithm=["tree"])
    assert type(si.Explainer(DecisionTreeRegressor(max_depth=2).fit(X, y), X[:20])).__name__ == "TreeExplainer"
    assert np.isfinite(si.Explainer(lambda rows: rows.sum(1), X[:20])(X[:2]).values).all()
