"""Layering of the package, read from the source with ``ast``: no private reach-ins, no import cycle.

* A *subpackage* is the first component under ``shap_instances`` (``shap_instances.games.residual`` belongs to
  ``games``); a top-level module is its own subpackage (``cli``, ``proximities``, ``_base``).
* A module may import anything of its own subpackage, private modules and names included. From another
  subpackage it imports public names only: a path whose components after the subpackage's own name start with
  an underscore (``games._fast_knn``, ``isotonic._sisr._check_options``, ``utils._validation``) is a reach-in,
  and so is ``Name._member`` on a name imported from another subpackage (``KernelApproximator._design``). Private
  top-level modules (``_base``, ``_explanation``, ``_kernels``) are internal subpackages whose public names
  the others may use. This holds for every import, at module level or inside a function.
* Module-level imports (outside ``if TYPE_CHECKING:``) among ``shap_instances`` modules form no cycle; imports
  inside functions are deferred and do not count.
* Layers (``LAYERS``, the list in docs/architecture.md): a module imports only from its own layer and the layers
  above it, every import counted (deferred ones inside functions and those under ``TYPE_CHECKING`` included).
* The package root holds the contract modules (``ROOT_MODULES``) and the subpackages of ``LAYERS``, nothing else.
* No private attribute is read across subpackages: ``x._name`` (or ``getattr(x, "_name")``), where ``x`` is not
  ``self``, ``cls``, ``super()`` or a module of the reader's own subpackage, is flagged when ``_name`` is a private
  attribute that another subpackage defines (``self._name = ...``, a private method or class attribute) and the
  reader's own subpackage does not; and when the package defines ``_name`` nowhere (a third-party object's
  private attribute, scikit-learn's models above all), unless the reader is the scikit-learn adapter
  (``utils/_sklearn_internals.py``). A private scikit-learn module is imported by the adapter only.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

import shap_instances

PACKAGE_DIR = Path(shap_instances.__file__).parent

#: Known reach-ins left in files that are being rewritten elsewhere: (importing module, what it reaches).
#: To be removed when explainers/ is updated (the public replacements exist: see each comment).
ALLOWED_REACH_INS: set[tuple[str, str]] = set()  # explainers/ now import public names only

#: The layers of docs/architecture.md, top first: a subpackage imports only from its own line and the lines above.
#: ``__init__`` is the package's own ``__init__``; a top-level module is its own subpackage.
LAYERS: list[tuple[str, ...]] = [
    ("exceptions", "_deprecated"),
    ("utils", "datasets"),
    ("_explanation", "_base"),
    ("games",),
    ("approximators",),
    ("weighted_targets", "naive_bayes", "linear", "neighbors", "discriminant", "lowrank", "isotonic"),
    ("forest", "boosting", "neural"),
    ("metrics", "plots", "valuation"),
    ("explainers",),
    ("registry", "testing"),
    ("report", "cli", "__init__", "__main__"),
]
LAYER_OF = {name: level for level, names in enumerate(LAYERS) for name in names}

#: The only modules at the package root: the contract (every algorithm module lives in a family package).
ROOT_MODULES = {"__init__", "__main__", "_base", "_explanation", "_deprecated", "registry", "exceptions", "datasets"}

#: Known violations, each with its reason: (module or file, what). Empty since the family layout (0.2); an entry
#: is a debt with a plan, and the test fails once it is no longer needed.
ALLOWED_LAYER_BREAKS: set[tuple[str, str]] = set()

#: The one module that reads scikit-learn's internals (private attributes, private modules).
SKLEARN_ADAPTER = "shap_instances.utils._sklearn_internals"

#: Known violations, each with its reason: (module or file, what). Empty since the family layout (0.2); an entry
#: is a debt with a plan, and the test fails once it is no longer needed.
ALLOWED_PRIVATE_READS: set[tuple[str, str]] = set()

#: Third-party private attributes read on purpose outside the scikit-learn adapter, each with its reason.
THIRD_PARTY_PRIVATE: dict[tuple[str, str], str] = {
    ("shap_instances.boosting._lightgbm", "_Booster"): "LightGBM's scikit-learn wrapper: whether it is fitted, "
                                                       "without the exception its public booster_ raises",
    ("shap_instances.utils._native_probe", "_handle"): "a LightGBM Booster rebuilt from a file: whether it holds a "
                                                       "native model at all (it has no public accessor) before "
                                                       "its trees are read in the child process",
    **{("shap_instances.utils._numba", name): "numba has no public way to ask whether a dispatcher's cache holds its "
       "kernels; its own index reader decides whether a first compilation is announced (is_cached)"
       for name in ("_cache", "_cache_file", "_load_index")},
}


def _modules() -> dict[str, tuple[Path, bool]]:
    """Dotted name -> (file, is a package ``__init__``) for every module of the package."""
    modules = {}
    for path in sorted(PACKAGE_DIR.rglob("*.py")):
        parts = ["shap_instances", *path.relative_to(PACKAGE_DIR).with_suffix("").parts]
        is_package = parts[-1] == "__init__"
        modules[".".join(parts[:-1] if is_package else parts)] = (path, is_package)
    return modules


MODULES = _modules()


def _subpackage(dotted: str) -> str:
    parts = dotted.split(".")
    return parts[1] if len(parts) > 1 else ""


def _is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _base_of(module: str, is_package: bool, node: ast.ImportFrom) -> str | None:
    """The absolute module that ``from <...> import`` names, or None outside the package."""
    if node.level == 0:
        return node.module
    parts = module.split(".")
    if not is_package:
        parts = parts[:-1]
    parts = parts[: len(parts) - (node.level - 1)]
    return ".".join(parts + ([node.module] if node.module else []))


def _imported_paths(module: str, is_package: bool, tree: ast.AST):
    """(dotted path imported, local name bound or None) for every import of a ``shap_instances`` module."""
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            base = _base_of(module, is_package, node)
            if base is None or not (base == "shap_instances" or base.startswith("shap_instances.")):
                continue
            for alias in node.names:
                yield f"{base}.{alias.name}", alias.asname or alias.name
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == "shap_instances" or alias.name.startswith("shap_instances."):
                    yield alias.name, None


def _reach_ins(module: str) -> set[str]:
    """What ``module`` reaches into in other subpackages: private paths and private members of imported names."""
    path, is_package = MODULES[module]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    own = _subpackage(module)
    found, foreign_names = set(), {}
    for dotted, local in _imported_paths(module, is_package, tree):
        if _subpackage(dotted) == own:
            continue
        if any(_is_private(part) for part in dotted.split(".")[2:]):
            found.add(dotted)
        if local is not None:
            foreign_names[local] = dotted
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and _is_private(node.attr)
                and node.value.id in foreign_names):
            found.add(f"{foreign_names[node.value.id]}.{node.attr}")
    return found


def _module_level_imports(body):
    """Import statements executed when the module is imported (not in functions, not under TYPE_CHECKING)."""
    for node in body:
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
        elif isinstance(node, ast.If):
            if "TYPE_CHECKING" not in ast.unparse(node.test):
                yield from _module_level_imports(node.body)
            yield from _module_level_imports(node.orelse)
        elif isinstance(node, ast.Try):
            for block in (node.body, *(handler.body for handler in node.handlers), node.orelse, node.finalbody):
                yield from _module_level_imports(block)
        elif isinstance(node, ast.With):
            yield from _module_level_imports(node.body)


def import_graph() -> dict[str, set[str]]:
    """Module -> the package modules its module-level imports load (a submodule when one is named)."""
    graph = {}
    for module, (path, is_package) in MODULES.items():
        edges = set()
        for node in _module_level_imports(ast.parse(path.read_text(encoding="utf-8")).body):
            if isinstance(node, ast.ImportFrom):
                base = _base_of(module, is_package, node)
                for alias in node.names:
                    if f"{base}.{alias.name}" in MODULES:
                        edges.add(f"{base}.{alias.name}")
                    elif base in MODULES:
                        edges.add(base)
            else:
                edges.update(alias.name for alias in node.names if alias.name in MODULES)
        edges.discard(module)
        graph[module] = edges
    return graph


def find_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan, iterative)."""
    index, low, on_stack, stack, cycles, counter = {}, {}, set(), [], [], 0
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    cycles.append(sorted(component))
    return cycles


def test_the_scan_sees_the_package():
    assert {"shap_instances", "shap_instances.cli", "shap_instances.games.residual",
            "shap_instances.approximators.sampling"} <= set(MODULES)
    assert "shap_instances.games.residual" in import_graph()["shap_instances.games"]


def test_no_module_reaches_into_another_subpackage():
    found = {(module, target) for module in MODULES for target in _reach_ins(module)}
    unexpected = sorted(found - ALLOWED_REACH_INS)
    assert not unexpected, "private names imported from another subpackage (import their public names):\n" + \
        "\n".join(f"  {module} -> {target}" for module, target in unexpected)


def test_the_allow_list_has_no_stale_entries():
    """Remove an entry as soon as its file stops reaching in, so the list only shrinks."""
    stale = sorted(entry for entry in ALLOWED_REACH_INS if entry[1] not in _reach_ins(entry[0]))
    assert not stale, f"no longer needed, remove from ALLOWED_REACH_INS: {stale}"


def test_no_import_cycle():
    cycles = find_cycles(import_graph())
    assert not cycles, f"module-level import cycles: {cycles}"


def _runtime_imports(tree: ast.AST):
    """Every import that runs at some point, deferred ones inside functions included (not ``if TYPE_CHECKING:``)."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            yield from (imported for block in node.orelse for imported in _runtime_imports(block))
        elif isinstance(node, ast.Import | ast.ImportFrom):
            yield node
        else:
            yield from _runtime_imports(node)


def runtime_import_graph(subpackage: str) -> dict[str, set[str]]:
    """Module -> the modules of ``subpackage`` it imports, at module level or inside its functions."""
    graph = {}
    for module, (path, is_package) in MODULES.items():
        if _subpackage(module) != subpackage:
            continue
        edges = set()
        for node in _runtime_imports(ast.parse(path.read_text(encoding="utf-8"))):
            base = _base_of(module, is_package, node) if isinstance(node, ast.ImportFrom) else None
            for alias in node.names:
                target = f"{base}.{alias.name}" if base is not None else alias.name
                target = target if target in MODULES else base
                if target is not None and _subpackage(target) == subpackage and target in MODULES:
                    edges.add(target)
        edges.discard(module)
        graph[module] = edges
    return graph


@pytest.mark.parametrize("subpackage", ["report", "cli"])
def test_no_circle_through_deferred_imports(subpackage):
    """The report's plan and its sections, and the command line's modules, do not import each other even inside
    functions (issue 41: ``report._plan.measure`` imported the forest and residual sections, which import the
    plan); the package ``__init__``, which re-exports, is left out."""
    graph = {module: edges - {f"shap_instances.{subpackage}"} for module, edges in
             runtime_import_graph(subpackage).items() if module != f"shap_instances.{subpackage}"}
    assert graph and not find_cycles(graph), f"import circles in {subpackage}/: {find_cycles(graph)}"


@pytest.mark.parametrize(("source", "expected"), [
    ("from ..games._fast_knn import KNNPath", {"shap_instances.games._fast_knn.KNNPath"}),
    ("from ..isotonic._sisr import check_options", {"shap_instances.isotonic._sisr.check_options"}),
    ("from ..forest import _check_forest", {"shap_instances.forest._check_forest"}),
    ("import shap_instances.utils._random", {"shap_instances.utils._random"}),
    ("from ..approximators import KernelApproximator\nKernelApproximator._design(3, 4, None)",
     {"shap_instances.approximators.KernelApproximator._design"}),
    ("def f():\n    from ..report._data import load_table", {"shap_instances.report._data.load_table"}),
    ("from ..utils import check_data\nfrom .._base import InstanceExplainer\nfrom ._nb_terms import x", set()),
    ("from ..games import Game\nGame.__init__\nfrom . import _nb_terms", set()),
])
def test_reach_in_detection(source, expected, tmp_path, monkeypatch):
    """The rule on snippets placed in ``explainers/``: what is flagged and what is allowed."""
    module = tmp_path / "probe.py"
    module.write_text(source)
    monkeypatch.setitem(MODULES, "shap_instances.explainers.probe", (module, False))
    assert _reach_ins("shap_instances.explainers.probe") == expected


def test_cycle_detection():
    assert find_cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert find_cycles({"a": {"b"}, "b": set()}) == []


# ------------------------------------------------------------------------------------------------------------ layers
def _layer(subpackage: str) -> int | None:
    return LAYER_OF.get(subpackage or "__init__")


def _line(dotted: str) -> int | str:
    """The line of docs/architecture.md's numbered list (from 1) that holds ``dotted``'s subpackage."""
    level = _layer(_subpackage(dotted))
    return "none" if level is None else level + 1


def layer_breaks(module: str) -> set[str]:
    """What ``module`` imports from a higher layer (or from a subpackage no layer lists): every import, deferred
    ones inside functions and those under ``TYPE_CHECKING`` included."""
    path, is_package = MODULES[module]
    own = _layer(_subpackage(module))
    found = set()
    for dotted, _local in _imported_paths(module, is_package, ast.parse(path.read_text(encoding="utf-8"))):
        level = _layer(_subpackage(dotted))
        if own is None or level is None or level > own:
            found.add(dotted)
    return found


def test_every_subpackage_has_a_layer():
    missing = sorted({_subpackage(module) or "__init__" for module in MODULES} - set(LAYER_OF))
    assert not missing, f"add these to LAYERS (and to docs/architecture.md, 'Layers'): {missing}"


def test_no_module_imports_from_a_higher_layer():
    found = {(module, target) for module in MODULES for target in layer_breaks(module)}
    unexpected = sorted(found - ALLOWED_LAYER_BREAKS)
    assert not unexpected, "imports from a higher layer (docs/architecture.md, 'Layers'):\n" + "\n".join(
        f"  {module} (line {_line(module)}) -> {target} (line {_line(target)})"
        for module, target in unexpected)
    stale = sorted(ALLOWED_LAYER_BREAKS - found)
    assert not stale, f"no longer needed, remove from ALLOWED_LAYER_BREAKS: {stale}"


def documented_layers(text: str) -> list[tuple[str, ...]]:
    """The numbered list under '## Layers' in docs/architecture.md, each line's names in backticks (after its
    colon, when it has one: 'the families built on `weighted_targets`: `forest`, `boosting`')."""
    section = text.split("\n## Layers\n", 1)[1].split("\n## ", 1)[0]
    layers = []
    for line in section.splitlines():
        match = re.match(r"\d+\.\s+(.*)", line)
        if match:
            names = match.group(1).rsplit(":", 1)[-1].split("(", 1)[0]
            layers.append(tuple(re.findall(r"`([^`]+)`", names)))
    return layers


def test_the_layers_agree_with_docs_architecture():
    documented = documented_layers((PACKAGE_DIR.parent / "docs" / "architecture.md").read_text(encoding="utf-8"))
    assert [set(line) for line in documented] == [set(line) for line in LAYERS]


@pytest.mark.parametrize(("source", "expected"), [
    ("from ..explainers import GapExplainer", {"shap_instances.explainers.GapExplainer"}),
    ("def f():\n    from ..report import fit_model", {"shap_instances.report.fit_model"}),
    ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ..approximators import ShapleyResult",
     {"shap_instances.approximators.ShapleyResult"}),
    ("import shap_instances", {"shap_instances"}),
    ("from .. import plots", {"shap_instances.plots"}),
    ("from ..nowhere import thing", {"shap_instances.nowhere.thing"}),
    ("from ..utils import check_data\nfrom .._base import InstanceExplainer\nfrom . import residual\n"
     "from ..exceptions import DataValidationError", set()),
])
def test_layer_detection(source, expected, tmp_path, monkeypatch):
    """The layer rule on snippets placed in ``games/`` (layer 4): a planted import from below is caught."""
    module = tmp_path / "probe.py"
    module.write_text(source)
    monkeypatch.setitem(MODULES, "shap_instances.games.probe", (module, False))
    assert layer_breaks("shap_instances.games.probe") == expected


def test_documented_layers_are_read_as_written():
    text = ("# A\n\n## Layers\n\nEach line...:\n\n1. `a`, `b`\n2. the families built on `a`: `c` (and `d`)\n"
            "3. `e`, the package's `__init__`\n\nValidation: `x`.\n\n## Next\n\n1. `z`\n")
    assert documented_layers(text) == [("a", "b"), ("c",), ("e", "__init__")]


# ------------------------------------------------------------------------------------------------ the package root
def root_problems(entries: dict[str, bool]) -> list[str]:
    """What the package root should not hold: ``entries`` maps a name to whether it is a package directory."""
    subpackages = {name for names in LAYERS for name in names} - ROOT_MODULES
    problems = []
    for name, is_package in sorted(entries.items()):
        if is_package and name not in subpackages:
            problems.append(f"{name}/: a package that LAYERS does not list")
        elif not is_package and name.endswith(".py") and name[:-3] not in ROOT_MODULES:
            problems.append(f"{name}: an algorithm module at the root (move it into its family package)")
    return problems


def test_the_root_holds_only_the_contract_and_the_subpackages():
    entries = {path.name: path.is_dir() and (path / "__init__.py").exists() for path in PACKAGE_DIR.iterdir()
               if path.name != "__pycache__"}
    assert not root_problems(entries), root_problems(entries)
    assert {name for name in entries if entries[name]} | {n[:-3] for n in entries if n.endswith(".py")} == {
        name for names in LAYERS for name in names}, "LAYERS lists a subpackage or module that does not exist"


def test_a_module_or_package_planted_at_the_root_is_caught():
    assert root_problems({"__init__.py": False, "cli": True, "games": True, "py.typed": False,
                          "proximities.py": False, "stray": True}) == [
        "proximities.py: an algorithm module at the root (move it into its family package)",
        "stray/: a package that LAYERS does not list"]


# ------------------------------------------------------------------------------------------ private attribute reads
def private_definitions() -> dict[str, set[str]]:
    """Subpackage -> the private attributes its code defines: ``x._name = ...`` (``self._name`` above all), and the
    private methods and class attributes of its classes."""
    defined: dict[str, set[str]] = {}
    for module, (path, _) in MODULES.items():
        names = defined.setdefault(_subpackage(module), set())
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store) and _is_private(node.attr):
                names.add(node.attr)
            elif isinstance(node, ast.ClassDef):
                for item in node.body:
                    if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
                        targets = [item.name]
                    elif isinstance(item, ast.Assign):
                        targets = [t.id for t in item.targets if isinstance(t, ast.Name)]
                    elif isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                        targets = [item.target.id]
                    else:
                        targets = []
                    names.update(name for name in targets if _is_private(name))
    return defined


def _package_bindings(tree: ast.AST) -> set[str]:
    """Local names that imports of this package bind (modules and names, relative or absolute)."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.level > 0 or (node.module or "").startswith("shap_instances")):
            names.update(alias.asname or alias.name for alias in node.names)
        elif isinstance(node, ast.Import):
            names.update(alias.asname or alias.name.split(".")[0] for alias in node.names
                         if alias.name.split(".")[0] == "shap_instances")
    return names


def _private_reads(tree: ast.AST) -> set[str]:
    """Private attributes read on objects other than ``self``, ``cls``, ``super()`` and imported modules or names
    of this package (``x._name`` and ``getattr`` / ``hasattr(x, "_name")``)."""
    package_names = _package_bindings(tree)  # the reach-in rule checks what is read on them
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load) and _is_private(node.attr):
            receiver, attribute = node.value, node.attr
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("getattr", "hasattr")
              and len(node.args) >= 2 and isinstance(node.args[1], ast.Constant)
              and isinstance(node.args[1].value, str) and _is_private(node.args[1].value)):
            receiver, attribute = node.args[0], node.args[1].value
        else:
            continue
        if isinstance(receiver, ast.Name) and (receiver.id in ("self", "cls") or receiver.id in package_names):
            continue
        if isinstance(receiver, ast.Call) and isinstance(receiver.func, ast.Name) and receiver.func.id == "super":
            continue
        found.add(attribute)
    return found


def private_read_problems(module: str, defined: dict[str, set[str]]) -> set[str]:
    """The private attributes ``module`` reads that another subpackage defines (and its own does not), or that the
    package defines nowhere (a third-party object's), outside the scikit-learn adapter."""
    path, _ = MODULES[module]
    own = _subpackage(module)
    problems = set()
    for attribute in _private_reads(ast.parse(path.read_text(encoding="utf-8"))):
        if (module, attribute) in THIRD_PARTY_PRIVATE:  # a third-party object's, listed with the reason
            continue
        owners = {subpackage for subpackage, names in defined.items() if attribute in names}
        if owners and own not in owners:
            problems.add(attribute)
        elif not owners and module != SKLEARN_ADAPTER:
            problems.add(attribute)
    return problems


def sklearn_private_imports(module: str) -> set[str]:
    """Private scikit-learn modules or names ``module`` imports (``sklearn.ensemble._hist_gradient_boosting``)."""
    path, _ = MODULES[module]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").split(".")[0] == "sklearn":
            paths = [f"{node.module}.{alias.name}" for alias in node.names]
        elif isinstance(node, ast.Import):
            paths = [alias.name for alias in node.names if alias.name.split(".")[0] == "sklearn"]
        else:
            continue
        found.update(dotted for dotted in paths if any(_is_private(part) for part in dotted.split(".")))
    return found


def test_no_private_attribute_is_read_across_subpackages_or_of_third_party_objects():
    defined = private_definitions()
    found = {(module, attribute) for module in MODULES for attribute in private_read_problems(module, defined)}
    unexpected = sorted(found - ALLOWED_PRIVATE_READS)
    assert not unexpected, (
        "private attributes read outside the subpackage that defines them, or of third-party objects outside "
        f"{SKLEARN_ADAPTER} (use a public name, or an accessor of the adapter):\n"
        + "\n".join(f"  {module}: ._{attribute.lstrip('_')}" for module, attribute in unexpected))
    stale = sorted(ALLOWED_PRIVATE_READS - found)
    assert not stale, f"no longer needed, remove from ALLOWED_PRIVATE_READS: {stale}"
    reads = {(module, attribute) for module in MODULES
             for attribute in _private_reads(ast.parse(MODULES[module][0].read_text(encoding="utf-8")))}
    assert set(THIRD_PARTY_PRIVATE) <= reads, "no longer read, remove from THIRD_PARTY_PRIVATE"


def test_only_the_adapter_imports_private_scikit_learn_modules():
    found = {module: sklearn_private_imports(module) for module in MODULES if module != SKLEARN_ADAPTER}
    assert not {m: f for m, f in found.items() if f}, "import these through shap_instances.utils (the adapter)"
    assert sklearn_private_imports(SKLEARN_ADAPTER)  # the check sees its imports


PLANTED_PRIVATE = '''
import numpy as np
from sklearn.ensemble._hist_gradient_boosting.predictor import TreePredictor
from . import _kernels
from ..utils import check_data


class Index:
    _cache = None

    def __init__(self, explainer, model):
        self._tree = model
        self.model = model
        explainer._check_X(model)              # the explainers' private method: flagged
        explainer._tree                        # forest's own attribute: allowed
        self._check_X                          # self: allowed
        super()._setup()                       # super(): allowed
        _kernels._rows                         # a module of forest: allowed
        check_data._hidden                     # a name imported from the package: the reach-in rule's business
        self.model._loss                       # scikit-learn's: flagged
        getattr(model, "_predictors", None)    # scikit-learn's, by name: flagged
        np._NoValue                            # numpy's: flagged
'''


def test_private_attribute_detection(tmp_path, monkeypatch):
    """The rule on a planted module of ``forest/``: what is flagged and what is allowed."""
    module = tmp_path / "probe.py"
    module.write_text(PLANTED_PRIVATE)
    monkeypatch.setitem(MODULES, "shap_instances.forest.probe", (module, False))
    defined = {"explainers": {"_check_X", "_setup", "_tree"}, "forest": {"_tree", "_cache"}, "utils": {"_hidden"}}
    assert private_read_problems("shap_instances.forest.probe", defined) == {
        "_check_X", "_loss", "_predictors", "_NoValue"}
    assert sklearn_private_imports("shap_instances.forest.probe") == {
        "sklearn.ensemble._hist_gradient_boosting.predictor.TreePredictor"}
    monkeypatch.setitem(MODULES, SKLEARN_ADAPTER, (module, False))  # the adapter may read scikit-learn's, not ours
    assert private_read_problems(SKLEARN_ADAPTER, defined) == {"_check_X", "_tree"}


def test_private_definitions_are_collected():
    defined = private_definitions()
    assert {"_setup", "_finish"} <= defined["_base"] and "_checkpoint_file" in defined["approximators"]
