"""The front door of the statistics package (uqcore/stats/__init__.py): ``from uqcore.stats import
X`` reaches every public name of its modules; the modules are tested in tests/uqcore/stats/."""

from __future__ import annotations

import ast
import importlib
import pkgutil
from pathlib import Path

import uqcore.stats


def _public_names(module) -> set[str]:
    """The public names ``module`` defines at its top level (not those it imports)."""
    tree = ast.parse(Path(module.__file__).read_text(encoding="utf-8"))
    names = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names |= {t.id for t in targets if isinstance(t, ast.Name)}
    return {name for name in names if not name.startswith("_")}


def test_the_package_re_exports_every_public_name_of_its_modules():
    modules = [
        importlib.import_module(f"uqcore.stats.{info.name}")
        for info in pkgutil.iter_modules(uqcore.stats.__path__)
        if info.name != "checks"  # the shared input checks stay behind the front door
    ]
    assert len(modules) >= 7
    defined = {name: getattr(m, name) for m in modules for name in _public_names(m)}
    assert sorted(uqcore.stats.__all__) == sorted(defined)
    for name, value in defined.items():
        assert getattr(uqcore.stats, name) is value, name
