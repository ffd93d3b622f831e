"""The README's library quick start runs as written and prints the shapes its comments claim."""

from __future__ import annotations

import contextlib
import io
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
