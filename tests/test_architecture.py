"""The architecture's rules, checked on the source: imports flow one way (app -> uqlab -> uqcore),
only the family table and the kernels compare family names, only the task table names tasks."""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

import pytest

from uqcore.families import FAMILY_NAMES
from uqlab.tasks import TASKS

ROOT = Path(__file__).resolve().parent.parent
APP = [ROOT / "app.py", *sorted((ROOT / "pages").glob("*.py")), *sorted((ROOT / "ui").glob("*.py")),
       *sorted((ROOT / "viz").glob("*.py"))]  # fmt: skip
LIBRARY = sorted((ROOT / "uqcore").rglob("*.py"))
LAB = sorted((ROOT / "uqlab").rglob("*.py"))

# What the library may import besides itself and the standard library (tokenizers: the
# WordPiece input of BERT-family backbones, imported only when one is used).
LIBRARY_DEPS = {"torch", "numpy", "safetensors", "sklearn", "scipy", "tokenizers"}
APP_ONLY = {"ui", "viz", "pages", "app", "streamlit", "plotly", "altair"}


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


def test_the_import_rule_catches_a_wrong_way_import(tmp_path):
    """The check above can fail: a file importing the lab is seen."""
    bad = tmp_path / "bad.py"
    bad.write_text("def f():\n    from uqlab.paths import EVAL_DIR\n    import streamlit as st\n")
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
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
        and id(node) not in docstrings and TASK_ID.search(node.value)
    ]  # fmt: skip


@pytest.mark.parametrize("path", APP + LAB + LIBRARY, ids=lambda p: str(p.relative_to(ROOT)))
def test_only_the_task_table_names_tasks(path):
    relative = path.relative_to(ROOT).as_posix()
    if relative in ("uqlab/tasks.py", "uqlab/paper.py"):
        return
    assert not _task_strings(path), (relative, _task_strings(path))


def test_the_task_check_can_fail(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text(
        '"""About IMDB."""\nTASK = "cola"\nFILE = "imdb/test.parquet"\nCK = "cola-hsto"\n'
    )
    assert len(_task_strings(bad)) == 2
