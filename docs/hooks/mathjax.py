"""mkdocs hook: MathJax from an installed package, so that the formulas render offline.

``mkdocs.yml`` loads ``javascripts/mathjax/tex-mml-chtml.js``. This hook adds that file to the site
(``mkdocs build`` and ``mkdocs serve`` alike) from the ``django-static-mathjax`` wheel, which the ``docs``
extra installs and which ships MathJax 3.2.2's files (Apache-2.0) with no Python code and no dependency,
together with what the script loads on demand from beside itself: the CHTML output's web fonts, the TeX
extensions that ``autoload`` fetches for rarer macros, and the menu and its accessibility components. The
speech-rule engine (``sre/``, 4 MB, only used when a reader switches on speech in MathJax's menu) is left out.
"""

from importlib import resources
from pathlib import Path

from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File

SITE_FOLDER = "javascripts/mathjax"
BUNDLE = "tex-mml-chtml.js"
ON_DEMAND = ("input/tex/extensions/", "output/chtml/fonts/", "ui/", "a11y/")


def mathjax_folder() -> Path:
    """The installed MathJax ``es5`` folder (the combined components)."""
    try:
        folder = Path(str(resources.files("mathjax"))) / "static" / "mathjax" / "es5"
    except ModuleNotFoundError:
        folder = None
    if folder is None or not (folder / BUNDLE).is_file():
        raise PluginError("MathJax is not installed: the docs need the package django-static-mathjax "
                          "(bash scripts/setup.sh, or pip install -e '.[docs]').")
    return folder


def on_files(files, config):
    folder = mathjax_folder()
    for path in sorted(folder.rglob("*")):
        relative = path.relative_to(folder).as_posix()
        if path.is_file() and (relative == BUNDLE or relative.startswith(ON_DEMAND)):
            files.append(File.generated(config, f"{SITE_FOLDER}/{relative}", abs_src_path=str(path)))
    return files
