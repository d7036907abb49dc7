"""The shap-instances-loo plugin's tests (``plugins/shap-instances-loo/tests/test_loo.py``), collected by the main
test run; they need the plugin installed (``pip install -e plugins/shap-instances-loo``, done by
``scripts/setup.sh``).

Its ``test_conformance`` is not collected here: tests/test_conformance.py already runs every conformance check over
every registered explainer, this plugin included.
"""

from .plugin_tests import plugin_tests

globals().update(plugin_tests("shap_instances_loo", "test_loo.py", fixtures=("diabetes",),
                              skip=frozenset({"test_conformance"})))
