"""Load an example plugin's own test file so that the main test run collects its tests.

The tests live with each plugin (``plugins/<dist>/tests/``) so that the plugin can be tested on its own; a
``tests/test_plugin_<name>.py`` module calls :func:`plugin_tests` and puts what it returns in its namespace. The
plugin must be installed (``scripts/setup.sh`` does it): discovery is tested through the real entry point.
"""

import importlib.util
import sys
from pathlib import Path

PLUGINS = Path(__file__).resolve().parents[1] / "plugins"


def plugin_tests(package: str, test_file: str, *, fixtures: tuple[str, ...] = (),
                 skip: frozenset[str] = frozenset()) -> dict:
    """The tests (``test_*``), the named fixtures and ``pytestmark`` of ``plugins/<dist>/tests/<test_file>``.

    ``package`` is the plugin's import name (``shap_instances_knn``); ``skip`` names tests not to collect here.
    """
    distribution = package.replace("_", "-")
    if importlib.util.find_spec(package) is None:
        raise ImportError(f"The {distribution} plugin is not installed; its tests (and the discovery checks) need "
                          f"it: pip install -e plugins/{distribution}")
    name = f"{package}_plugin_tests"
    if name not in sys.modules:  # loaded once, however many times pytest imports the collecting module
        spec = importlib.util.spec_from_file_location(name, PLUGINS / distribution / "tests" / test_file)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return {key: value for key, value in vars(sys.modules[name]).items()
            if (key.startswith("test_") and key not in skip) or key in fixtures or key == "pytestmark"}
