"""The shap-instances-knn plugin's tests (``plugins/shap-instances-knn/tests/test_knn_shapley.py``), collected by
the main test run; they need the plugin installed (``pip install -e plugins/shap-instances-knn``)."""

from .plugin_tests import plugin_tests

globals().update(plugin_tests("shap_instances_knn", "test_knn_shapley.py", fixtures=("fitted",)))
