"""The README's library quick start runs as written and prints the shapes its comments claim."""

from __future__ import annotations

import contextlib
import io
import json
import re
import tokenize
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
START, END = "<!-- QUICKSTART -->", "<!-- /QUICKSTART -->"
SIZE = re.compile(r"torch\.Size\(\[[0-9, ]*\]\)")


def quickstart(markdown: str) -> str:
    """The one ```python block between the QUICKSTART markers."""
    assert markdown.count(START) == 1 and markdown.count(END) == 1, (
        f"README.md must hold {START} ... {END} once each"
    )
    part = markdown.split(START, 1)[1].split(END, 1)[0]
    blocks = re.findall(r"```python\n(.*?)```", part, flags=re.S)
    assert len(blocks) == 1, f"expected one python block between the markers, found {len(blocks)}"
    return blocks[0]


def claimed_sizes(code: str) -> list[str]:
    """Every ``torch.Size([...])`` written in the code's comments, in order."""
    comments = [
        tok.string
        for tok in tokenize.generate_tokens(io.StringIO(code).readline)
        if tok.type == tokenize.COMMENT
    ]
    return [size for comment in comments for size in SIZE.findall(comment)]


def run(code: str) -> str:
    """Execute ``code`` as a script from the repository root; return what it printed."""
    out = io.StringIO()
    with torch.random.fork_rng(devices=[]), contextlib.redirect_stdout(out):
        exec(compile(code, "README.md (quick start)", "exec"), {"__name__": "__quickstart__"})
    return out.getvalue()


def printed_sizes(stdout: str) -> list[str]:
    return SIZE.findall(stdout)


def test_the_quick_start_runs_and_prints_the_shapes_its_comments_claim(monkeypatch):
    monkeypatch.chdir(ROOT)  # "run it from the repository root"
    code = quickstart(README.read_text(encoding="utf-8"))
    claimed = claimed_sizes(code)
    assert len(claimed) >= 3, f"the quick start should state its shapes; found {claimed}"
    stdout = run(code)
    assert printed_sizes(stdout) == claimed, f"printed:\n{stdout}\nclaimed: {claimed}"


def test_a_wrong_claim_is_caught():
    code = "import torch\nprint(torch.zeros(2, 3).shape)  # torch.Size([2, 4])\n"
    assert claimed_sizes(code) == ["torch.Size([2, 4])"]
    assert printed_sizes(run(code)) == ["torch.Size([2, 3])"]  # != the claim: the test would fail


def test_a_readme_without_the_block_is_caught():
    with pytest.raises(AssertionError, match="QUICKSTART"):
        quickstart("# no quick start here\n")
    with pytest.raises(AssertionError, match="one python block"):
        quickstart(f"{START}\n```bash\nls\n```\n{END}\n")


# --- The README is a front page, and the counts it states are true ------------------------------

MAX_LINES = 160
WORDS = {
    w: i
    for i, w in enumerate(
        "zero one two three four five six seven eight nine ten eleven "
        "twelve thirteen fourteen fifteen".split()
    )
}
NUMBER = r"(\d+|" + "|".join(WORDS) + r")"
CLAIMS = {  # what the README counts -> how it says so (whitespace and line breaks normalised)
    "checkpoints": NUMBER + r" checkpoints\b",
    "word-level": NUMBER + r" word-level\b",
    "minilm": NUMBER + r" on MiniLM\b",
    "smollm2": NUMBER + r" on SmolLM2\b",
    "families": NUMBER + r" families\b",
    "pages": NUMBER + r" pages\b",
}


def truth() -> dict[str, int]:
    """The counts, from the repository: the shipped checkpoints' config.json files, the family
    table and the app's page list."""
    from ui.routes import PAGES
    from uqcore.families import FAMILY_NAMES

    folder = ROOT / "assets" / "checkpoints"
    configs = [json.loads(p.read_text(encoding="utf-8")) for p in folder.glob("*/config.json")]
    return {
        "checkpoints": len(configs),
        "word-level": sum(c["model"].get("backbone", "word") == "word" for c in configs),
        "minilm": sum("minilm" in c.get("base", {}).get("distribution", "") for c in configs),
        "smollm2": sum("smollm2" in c.get("base", {}).get("distribution", "") for c in configs),
        "families": len(FAMILY_NAMES),
        "pages": len(PAGES),
    }


def as_int(number: str) -> int:
    return int(number) if number.isdigit() else WORDS[number.lower()]


def stated_counts(markdown: str) -> dict[str, list[int]]:
    """Every count the text states, per claim of :data:`CLAIMS`."""
    flat = " ".join(markdown.split())
    return {key: [as_int(n) for n in re.findall(p, flat, flags=re.I)] for key, p in CLAIMS.items()}


def wrong_counts(markdown: str, true: dict[str, int]) -> list[str]:
    """What the text gets wrong: a count that differs from the truth, or a claim it no longer
    makes (the README states each of them; drop one here too if it goes)."""
    out = []
    for key, found in stated_counts(markdown).items():
        if not found:
            out.append(f"no count of {key} found (pattern {CLAIMS[key]!r})")
        out += [
            f"{key}: the text says {n}, the repository has {true[key]}"
            for n in found
            if n != true[key]
        ]
    return out


def table_column(markdown: str, header: str) -> list[str]:
    """The first column of the markdown table whose header row starts with ``| header |``."""
    lines = markdown.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"| {header} |"))
    rows = []
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        rows.append(line.split("|")[1].strip().strip("`"))
    return rows


def test_the_readme_is_a_front_page():
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= MAX_LINES, f"README.md has {len(lines)} lines; move detail to docs/"


def test_the_counts_the_readme_states_are_true():
    markdown = README.read_text(encoding="utf-8")
    assert wrong_counts(markdown, truth()) == []


def test_the_readme_tables_list_every_family_and_page():
    from ui.routes import PAGES
    from uqcore.families import FAMILY_NAMES

    markdown = README.read_text(encoding="utf-8")
    assert table_column(markdown, "family") == list(FAMILY_NAMES)
    assert table_column(markdown, "page") == [title for _, title, _, _ in PAGES]


def test_a_wrong_count_is_caught():
    true = {
        "checkpoints": 33,
        "word-level": 17,
        "minilm": 12,
        "smollm2": 4,
        "families": 8,
        "pages": 8,
    }
    right = (
        "ships 33 checkpoints: 17\nword-level, twelve on MiniLM and 4 on SmolLM2-135M. The 8 "
        "families. All eight pages."
    )
    assert wrong_counts(right, true) == []
    assert wrong_counts(right.replace("33", "27"), true) == [
        "checkpoints: the text says 27, the repository has 33"
    ]
    assert wrong_counts(right.replace("twelve", "10"), true) == [
        "minilm: the text says 10, the repository has 12"
    ]
    assert wrong_counts("ships 33 checkpoints.", true)[0].startswith("no count of word-level")


def test_the_images_the_readme_shows_exist():
    markdown = README.read_text(encoding="utf-8")
    images = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", markdown)
    assert images, "the README shows its screenshots"
    for image in images:
        assert (ROOT / image).is_file(), f"{image} is missing: python -m tools.screenshots"


def test_development_md_names_every_module_of_the_library_and_the_lab():
    text = (ROOT / "docs" / "development.md").read_text(encoding="utf-8")
    for package in ("uqcore", "uqlab"):
        for path in sorted((ROOT / package).glob("*.py")):
            if path.name != "__init__.py":
                assert f"`{path.name}`" in text, f"docs/development.md misses {package}/{path.name}"
        for sub in sorted(p for p in (ROOT / package).iterdir() if (p / "__init__.py").exists()):
            assert f"`{sub.name}/`" in text, f"docs/development.md misses {package}/{sub.name}/"
    code = ("uqcore", "uqlab", "ui", "viz", "tools", "app_pages")
    files = {"app.py"} | {p.name for d in code for p in (ROOT / d).rglob("*.py")}
    gone = sorted(set(re.findall(r"`([a-z_]+\.py)`", text)) - files)
    assert not gone, f"docs/development.md names modules that do not exist: {gone}"
