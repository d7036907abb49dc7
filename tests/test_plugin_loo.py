"""The shap-instances-loo plugin's tests, collected by the main test run.

The tests live with the plugin (``plugins/shap-instances-loo/tests/test_loo.py``) so that the plugin can be
tested on its own; this module loads that file and exposes its tests and fixtures here. They need the plugin
installed (``pip install -e plugins/shap-instances-loo``, done by ``scripts/setup.sh``): discovery is tested
through the real installed entry point.
"""

import importlib.util
import sys
from pathlib import Path

_PATH = Path(__file__).resolve().parents[1] / "plugins" / "shap-instances-loo" / "tests" / "test_loo.py"
_NAME = "shap_instances_loo_plugin_tests"

if importlib.util.find_spec("shap_instances_loo") is None:
    raise ImportError(
        "The shap-instances-loo plugin is not installed; its tests (and the discovery checks) need it: "
        "pip install -e plugins/shap-instances-loo"
    )

if _NAME in sys.modules:
    _module = sys.modules[_NAME]
else:
    _spec = importlib.util.spec_from_file_location(_NAME, _PATH)
    _module = importlib.util.module_from_spec(_spec)
    sys.modules[_NAME] = _module
    _spec.loader.exec_module(_module)

#: tests/test_conformance.py already runs every conformance check over every registered explainer, this plugin
#: included: the plugin's own copy (for its standalone runs) is not collected twice here.
_DUPLICATES = {"test_conformance"}

globals().update({name: value for name, value in vars(_module).items()
                  if (name.startswith("test_") and name not in _DUPLICATES) or name in ("diabetes", "pytestmark")})
