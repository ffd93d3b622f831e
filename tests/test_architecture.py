"""The architecture's rules, checked on the source: imports flow one way (app -> uqlab -> uqcore),
only the family table and the kernels compare family names, only the task table names tasks."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

from uqcore.families import FAMILY_NAMES
from uqlab.catalog.tasks import TASKS

ROOT = Path(__file__).resolve().parent.parent
APP = [
    ROOT / "app.py",
    *sorted((ROOT / "app_pages").glob("*.py")),
    *sorted((ROOT / "ui").rglob("*.py")),
    *sorted((ROOT / "viz").glob("*.py")),
]
UI_LOGIC = sorted((ROOT / "ui" / "logic").glob("*.py"))
LIBRARY = sorted((ROOT / "uqcore").rglob("*.py"))
LAB = sorted((ROOT / "uqlab").rglob("*.py"))
TOOLS = sorted((ROOT / "tools").glob("*.py"))

# What the library may import besides itself and the standard library (tokenizers: the
# WordPiece input of BERT-family backbones, imported only when one is used).
LIBRARY_DEPS = {"torch", "numpy", "safetensors", "sklearn", "scipy", "tokenizers"}
# The lab draws with plotly (uqlab.workbench: the notebook and the report show the pages' figures)
# but never touches Streamlit or the app's modules.
APP_ONLY = {"ui", "viz", "app_pages", "app", "streamlit", "altair"}
STREAMLIT = {"streamlit"}


def imported_roots(path: Path) -> set[str]:
    """Top-level names of every module ``path`` imports (late imports inside functions too)."""
    roots = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            roots |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            roots.add(node.module.split(".")[0])
    return roots


@pytest.mark.parametrize("path", LIBRARY, ids=lambda p: str(p.relative_to(ROOT)))
def test_the_library_imports_only_itself_and_its_dependencies(path):
    allowed = LIBRARY_DEPS | {"uqcore"} | set(sys.stdlib_module_names)
    stray = imported_roots(path) - allowed
    assert not stray, f"{path.relative_to(ROOT)} imports {sorted(stray)}"


@pytest.mark.parametrize("path", LAB, ids=lambda p: str(p.relative_to(ROOT)))
def test_the_lab_never_imports_the_app(path):
    stray = imported_roots(path) & APP_ONLY
    assert not stray, f"{path.relative_to(ROOT)} imports {sorted(stray)}"


@pytest.mark.parametrize("path", APP + LAB + LIBRARY, ids=lambda p: str(p.relative_to(ROOT)))
def test_nothing_but_a_tool_imports_the_tools(path):
    """``tools/`` (benches, the load test, the server launcher) sits on top: no tier imports it."""
    assert "tools" not in imported_roots(path), f"{path.relative_to(ROOT)} imports tools"


@pytest.mark.parametrize("path", UI_LOGIC, ids=lambda p: str(p.relative_to(ROOT)))
def test_the_plain_logic_of_the_app_never_touches_streamlit(path):
    """``ui/logic/`` is the app's logic without Streamlit; the modules that touch Streamlit sit
    one level up, in ``ui/``, so a reader sees which is which from the folder."""
    assert not imported_roots(path) & STREAMLIT, f"{path.relative_to(ROOT)} imports streamlit"


@pytest.mark.parametrize("path", sorted((ROOT / "ui").glob("*.py")), ids=lambda p: p.name)
def test_every_module_at_the_top_of_ui_touches_streamlit(path):
    """The other half: a module in ``ui/`` without Streamlit belongs in ``ui/logic/``."""
    if path.name == "__init__.py":
        return
    assert imported_roots(path) & STREAMLIT, f"{path.name} has no Streamlit: move it to ui/logic/"


def test_the_import_rule_catches_a_wrong_way_import(tmp_path):
    """The check above can fail: a file importing the lab is seen."""
    bad = tmp_path / "bad.py"
    bad.write_text(
        "def f():\n    from uqlab.catalog.paths import EVAL_DIR\n    import streamlit as st\n"
    )
    assert imported_roots(bad) == {"uqlab", "streamlit"}


def _family_comparisons(path: Path) -> list[str]:
    """``x == "hsto"``, ``x in ("sto", "hsto")`` and the like, with line numbers."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.Compare):
            continue
        for side in (node.left, *node.comparators):
            values = [side] if isinstance(side, ast.Constant) else getattr(side, "elts", [])
            names = [v.value for v in values if isinstance(v, ast.Constant)]
            if any(n in FAMILY_NAMES for n in names):
                found.append(f"line {node.lineno}: {ast.unparse(node)}")
    return found


@pytest.mark.parametrize("path", APP + LAB + LIBRARY, ids=lambda p: str(p.relative_to(ROOT)))
def test_only_the_family_table_and_the_kernels_compare_family_names(path):
    relative = path.relative_to(ROOT).as_posix()
    if relative == "uqcore/families.py" or relative.startswith("uqcore/kernels/"):
        return
    assert not _family_comparisons(path), (relative, _family_comparisons(path))


def test_the_family_check_can_fail(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text('if cfg.family == "hsto" or family in ("sto", "bam"):\n    pass\n')
    assert len(_family_comparisons(bad)) == 2


# A task's name as an identifier: the name itself, or a path / file stem made from it
# ("imdb/train.parquet", "cola_test"). Checkpoint names ("cola-hsto") and prose are allowed.
TASK_ID = re.compile(r"^(" + "|".join(TASKS) + r")([/_.]|$)")


def _task_strings(path: Path) -> list[str]:
    """String constants (docstrings aside) that name a task: ``"imdb"``, ``"cola/ood.parquet"``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.FunctionDef | ast.ClassDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    return [
        f"line {node.lineno}: {node.value!r}"
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and id(node) not in docstrings
        and TASK_ID.search(node.value)
    ]


@pytest.mark.parametrize("path", APP + LAB + LIBRARY, ids=lambda p: str(p.relative_to(ROOT)))
def test_only_the_task_table_names_tasks(path):
    relative = path.relative_to(ROOT).as_posix()
    if relative in ("uqlab/catalog/tasks.py", "uqlab/evaluation/paper.py"):
        return
    assert not _task_strings(path), (relative, _task_strings(path))


def test_the_task_check_can_fail(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text(
        '"""About IMDB."""\nTASK = "cola"\nFILE = "imdb/test.parquet"\nCK = "cola-hsto"\n'
    )
    assert len(_task_strings(bad)) == 2


# ------------------------------------------------------------------------------- the import graph
# The optional heavy dependencies a library function may import where it needs them (scipy and
# scikit-learn for a few statistics, tokenizers for BERT-family input): the only late imports.
OPTIONAL_HEAVY = {"scipy", "sklearn", "tokenizers"}
# The lab's and the app's late imports: those of the library, Hugging Face ``datasets`` (the Hub
# and saved datasets only: local files are read with pyarrow) and ``gguf`` (only the command that
# converts a base needs it), and these modules imported late on purpose, each with its reason.
LATE_ON_PURPOSE = {
    # the FLOP counter's import would count in the resident memory the other benches measure
    "uqlab/benches/sampler.py": {"torch.utils.flop_counter"},
}
UPPER_OPTIONAL = OPTIONAL_HEAVY | {"datasets", "gguf"}
# Every first-party package: one import graph over all of them, so a cycle through two tiers
# (ui -> viz -> ui) is seen too.
PACKAGES = [ROOT / name for name in ("uqcore", "uqlab", "ui", "viz", "app_pages")]


def module_files(*packages: Path) -> dict[str, Path]:
    """Dotted name -> file of every module in ``packages`` (a package is named by its folder)."""
    out = {}
    for package in packages:
        for path in sorted(package.rglob("*.py")):
            parts = path.relative_to(package.parent).with_suffix("").parts
            out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return out


def every_import(tree: ast.AST) -> list[ast.Import | ast.ImportFrom]:
    """Every import statement of ``tree``: at the top, inside functions, and for types only
    (``if TYPE_CHECKING:``), which closes a circle in the picture of the code as surely as one
    that runs."""
    return [node for node in ast.walk(tree) if isinstance(node, ast.Import | ast.ImportFrom)]


def import_targets(
    node: ast.Import | ast.ImportFrom, module: str, is_package: bool, modules: dict[str, Path]
) -> set[str]:
    """The modules of ``modules`` that ``node``, in ``module``, imports: ``import a.b`` -> ``a.b``;
    ``from a.b import c`` -> ``a.b.c`` when that is a module, else ``a.b``; a relative
    ``from .x import y`` is resolved against ``module``'s package first."""
    if isinstance(node, ast.Import):
        return {alias.name for alias in node.names} & set(modules)
    base = node.module or ""
    if node.level:
        package = module.split(".") if is_package else module.split(".")[:-1]
        package = package[: len(package) - (node.level - 1)]
        base = ".".join(package + ([node.module] if node.module else []))
    found = {
        f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base
        for alias in node.names
    }
    return found & set(modules)


def import_graph(*packages: Path) -> dict[str, set[str]]:
    """Module -> the modules of ``packages`` it imports, types only included (a self-import
    kept)."""
    modules = module_files(*packages)
    return {
        name: {
            target
            for node in every_import(ast.parse(path.read_text(encoding="utf-8")))
            for target in import_targets(node, name, path.name == "__init__.py", modules)
        }
        for name, path in modules.items()
    }


def import_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The modules of each import cycle: Tarjan's strongly connected components of more than one
    module, and every module that imports itself."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = stack[stack.index(v) :]
            del stack[stack.index(v) :]
            if len(component) > 1 or v in graph[v]:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def late_imports(path: Path, allowed: set[str] = OPTIONAL_HEAVY) -> list[str]:
    """``line N: <statement>`` for each import inside a function of ``path`` (at any depth) of a
    module that is neither one of ``allowed`` nor inside one (``scipy`` allows ``scipy.stats``;
    a relative import is never allowed)."""

    def is_allowed(module: str | None) -> bool:
        return module is not None and any(
            module == a or module.startswith(a + ".") for a in allowed
        )

    found = set()
    for fn in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        for node in ast.walk(fn):
            if isinstance(node, ast.Import):
                modules = {alias.name for alias in node.names}
            elif isinstance(node, ast.ImportFrom):
                modules = {node.module if node.level == 0 else None}
            else:
                continue
            if not all(is_allowed(m) for m in modules):
                found.add((node.lineno, f"line {node.lineno}: {ast.unparse(node)}"))
    return [text for _, text in sorted(found)]


def _describe(graph: dict[str, set[str]], cycle: list[str]) -> str:
    return "; ".join(f"{m} imports {', '.join(sorted(graph[m] & set(cycle)))}" for m in cycle)


def test_the_code_has_no_import_cycle():
    """Modules import each other one way, in the library, the lab and the app alike (types-only
    imports counted): every module can be read after those it imports."""
    graph = import_graph(*PACKAGES)
    assert "uqcore.kernels.gumbel" in graph["uqcore.families"]
    assert (
        "uqlab.catalog.tasks" in graph["uqlab.data"]
        and "ui.logic.keys" in graph["ui.logic.exports"]
    )
    assert "uqlab.workbench.titles" in graph["viz.learn"]  # across tiers
    assert {name.split(".")[0] for name in graph} == {p.name for p in PACKAGES}
    found = import_cycles(graph)
    assert not found, "import cycle(s): " + " | ".join(_describe(graph, c) for c in found)


@pytest.mark.parametrize("path", LIBRARY, ids=lambda p: str(p.relative_to(ROOT)))
def test_the_library_imports_at_the_top_of_its_modules(path):
    """No function-level ("late") import, which hides a cycle, except of an optional heavy
    dependency (:data:`OPTIONAL_HEAVY`)."""
    assert not late_imports(path), (path.relative_to(ROOT).as_posix(), late_imports(path))


@pytest.mark.parametrize("path", LAB + APP, ids=lambda p: str(p.relative_to(ROOT)))
def test_the_lab_and_the_app_import_at_the_top_of_their_modules(path):
    """The same for ``uqlab``, ``ui``, ``viz``, ``app_pages`` and ``app.py``: late only an optional
    heavy dependency (:data:`UPPER_OPTIONAL`) or a module of :data:`LATE_ON_PURPOSE`."""
    relative = path.relative_to(ROOT).as_posix()
    allowed = UPPER_OPTIONAL | LATE_ON_PURPOSE.get(relative, set())
    assert not late_imports(path, allowed), (relative, late_imports(path, allowed))


def test_every_late_import_on_purpose_is_still_there():
    """An entry of :data:`LATE_ON_PURPOSE` whose import moved to the top goes too."""
    for relative, modules in LATE_ON_PURPOSE.items():
        found = late_imports(ROOT / relative, UPPER_OPTIONAL)
        for module in modules:
            assert any(f" {module} " in f"{line} " for line in found), (relative, module, found)


def _fake_package(root: Path) -> Path:
    """A package ``fake``: ``a`` and ``b`` import each other (the absolute form naming a module
    and the relative form); ``c`` imports ``a`` for types only; ``d`` imports late, once an
    allowed dependency."""
    package = root / "fake"
    package.mkdir()
    files = {
        "__init__.py": "",
        "a.py": "from fake import b\nimport fake.c\n",
        "b.py": "from .a import thing\n",
        "c.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from fake.a import x\n",
        "d.py": "def f():\n    import scipy.stats\n    from . import a\n    return a\n",
    }
    for name, text in files.items():
        (package / name).write_text(text)
    return package


def test_the_import_checks_can_fail(tmp_path):
    package = _fake_package(tmp_path)
    graph = import_graph(package)
    assert graph["fake.a"] == {"fake.b", "fake.c"} and graph["fake.c"] == {"fake.a"}
    assert import_cycles(graph) == [["fake.a", "fake.b", "fake.c"]]  # c's types-only import
    assert import_cycles({"x": {"x"}, "y": set()}) == [["x"]]  # a module importing itself
    assert late_imports(package / "d.py") == ["line 3: from . import a"]
    assert late_imports(package / "d.py", {"scipy.stats", "."}) == ["line 3: from . import a"]
    assert late_imports(package / "d.py", {"scipy.stat"}) == [
        "line 2: import scipy.stats",
        "line 3: from . import a",
    ]
    assert late_imports(package / "a.py") == []
    other = tmp_path / "other"
    other.mkdir()
    (other / "__init__.py").write_text("")
    (other / "f.py").write_text("from fake import d\n")
    (package / "d.py").write_text("from other import f\n")
    both = import_graph(package, other)
    assert both["fake.d"] == {"other.f"} and both["other.f"] == {"fake.d"}
    assert ["fake.d", "other.f"] in import_cycles(both)  # a cycle across two packages


def test_model_code_does_not_import_ui_libraries():
    code = (
        "import sys, uqcore, uqcore.nets.model, uqcore.inference.sampling, uqcore.kernels, "
        "uqcore.stats\n"
        "bad = [m for m in ('streamlit', 'plotly', 'altair') if m in sys.modules]\n"
        "assert not bad, bad\n"
    )
    subprocess.run(
        [sys.executable, "-c", code],
        check=True,
        cwd=str(__import__("pathlib").Path(__file__).parents[1]),
    )
