"""The shap-instances-knn plugin's tests, collected by the main test run.

The tests live with the plugin (``plugins/shap-instances-knn/tests/test_knn_shapley.py``) so that the
plugin can be tested on its own; this module loads that file and exposes its tests and fixtures here.
They need the plugin installed (``pip install -e plugins/shap-instances-knn``): discovery is tested
through the real installed entry point.
"""

import importlib.util
import sys
from pathlib import Path

_PATH = Path(__file__).resolve().parents[1] / "plugins" / "shap-instances-knn" / "tests" / "test_knn_shapley.py"
_NAME = "shap_instances_knn_plugin_tests"

if importlib.util.find_spec("shap_instances_knn") is None:
    raise ImportError(
        "The shap-instances-knn plugin is not installed; its tests (and the discovery checks) need it: "
        "pip install -e plugins/shap-instances-knn"
    )

if _NAME in sys.modules:
    _module = sys.modules[_NAME]
else:
    _spec = importlib.util.spec_from_file_location(_NAME, _PATH)
    _module = importlib.util.module_from_spec(_spec)
    sys.modules[_NAME] = _module
    _spec.loader.exec_module(_module)

globals().update({name: value for name, value in vars(_module).items()
                  if name.startswith(("test_", "fitted")) or name == "pytestmark"})
