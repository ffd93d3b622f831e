"""A download button's file is made when the visitor clicks (``ui.logic.exports.download`` with
a callable), after the page's script has finished. A callable that reads a page-level name the
script binds again further down therefore builds its file from the last value: the Results
page's comparison CSV held the per-example rows of the last checkpoint's histogram (its
``frame`` was reused by the loop at the end of the page). This test finds every such name."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PAGES = sorted(
    (Path(__file__).parents[3] / "app_pages").glob("*.py")
)  # every page that calls ui.logic.exports.download


def _bound_at(tree: ast.Module) -> dict[str, list[int]]:
    """Page-level name -> the lines it is bound on (assignments, loops, with-as, imports), not
    looking inside functions, classes, lambdas or comprehensions (their names stay inside)."""
    out: dict[str, list[int]] = {}

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda):
            return
        if isinstance(node, ast.ListComp | ast.SetComp | ast.DictComp | ast.GeneratorExp):
            return
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            out.setdefault(node.id, []).append(node.lineno)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return out


def late_rebinds(source: str) -> list[str]:
    """``"name (read by the download on line a, bound again on line b)"`` for each page-level
    name a download's callable reads that the script binds again after the call."""
    tree = ast.parse(source)
    bound = _bound_at(tree)
    found = []
    for call in ast.walk(tree):
        is_download = isinstance(call, ast.Call) and getattr(call.func, "id", "") == "download"
        if not is_download:
            continue
        for fn in (a for a in call.args if isinstance(a, ast.Lambda)):
            own = {a.arg for a in fn.args.args}
            for name in {n.id for n in ast.walk(fn.body) if isinstance(n, ast.Name)} - own:
                later = [line for line in bound.get(name, []) if line > call.end_lineno]
                if later:
                    found.append(
                        f"{name} (read by the download on line {call.lineno}, "
                        f"bound again on line {later[0]})"
                    )
    return sorted(found)


def test_the_check_finds_a_name_bound_again_after_the_download():
    page = (
        "frame = 1\n"
        "download(st, 'x', lambda: csv_text(frame, record), 'a.csv', 'text/csv')\n"
        "for name, frame in frames.items():\n"
        "    pass\n"
    )
    assert late_rebinds(page) == ["frame (read by the download on line 2, bound again on line 3)"]
    fixed = page.replace("lambda: csv_text(frame", "lambda f=frame: csv_text(f")
    assert late_rebinds(fixed) == []


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_no_download_builds_its_file_from_a_name_the_page_binds_again(page):
    assert late_rebinds(page.read_text(encoding="utf-8")) == []
