"""Explanations to render in every shap plot.

Each module here defines ``explanations()`` returning ``{name: shap.Explanation}``; the rendering test
(``tests/test_plots_render.py``) collects them all. An explainer adds itself by adding a module.
"""

import importlib
import pkgutil


def all_case_builders():
    """name -> zero-argument function building that module's explanations."""
    return {
        info.name: importlib.import_module(f"{__name__}.{info.name}").explanations
        for info in pkgutil.iter_modules(__path__)
    }
