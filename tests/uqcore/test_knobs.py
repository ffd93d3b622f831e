"""The knob table (uqcore.knobs): the settings, the family table and the app read it, so a new
knob is one entry."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ui.logic import keys as K
from ui.logic import state
from uqcore import families, knobs, settings
from uqcore.config import ModelConfig
from uqcore.exceptions import ConfigError

ROOT = Path(__file__).resolve().parents[2]
CODE = ("uqcore", "uqlab", "ui", "viz", "app_pages", "app.py")  # copied; the rest is linked
TESTS = ("__init__.py", "helpers.py", "app_fixtures.py")
ENTRY = """\
        Knob("shrink", float, "Shrink ς", "A throwaway knob of a test.", fallback=0.5,
             reach=(0.0, 1.0), step=0.1, link=(0.0, 2.0), note="Shrink"),
"""


def test_the_settings_dataclasses_are_the_table():
    names = list(knobs.KNOBS)
    assert [f.name for f in dataclasses.fields(settings.SamplingSettings)] == names
    forward = [f.name for f in dataclasses.fields(settings.ForwardSettings)]
    assert forward == [*settings.KNOB_NAMES, "dropout_on", "fused_attention", "need_kl"]
    assert settings.KNOB_NAMES == tuple(n for n in names if n != "mc_dropout")
    assert settings.FALLBACKS == {
        "tau1": 1.0,
        "tau2": 1.0,
        "noise_scale": 1.0,
        "hard": False,
        "bam_mode": "sample",
        "em_iterations": 0,
        "em_precision": 1.0,
    }
    assert settings.SamplingSettings.__module__ == "uqcore.settings"


def test_every_control_has_a_link_range_or_choices_and_a_name_in_notes():
    for name in knobs.CONTROLLED:
        knob = knobs.KNOBS[name]
        assert knob.note and knob.label and knob.help, name
        assert knob.choices or (knob.link and knob.link[0] <= knob.link[1]), name
        assert sum(map(bool, (knob.grid, knob.reach, knob.choices))) == 1, name
    assert (
        knobs.CONTROLLED
        == K.KNOBS
        == tuple(f.name for f in dataclasses.fields(state.ViewState) if f.name in knobs.KNOBS)
    )
    for spec in families.FAMILIES.values():
        assert set(spec.knobs) <= set(settings.KNOB_NAMES), spec.name


def test_training_fixes_what_the_table_says():
    cfg = ModelConfig(family="probtrans", inference=settings.SamplingSettings(em_iterations=3))
    assert settings.resolve(cfg).em_iterations == 3
    assert settings.resolve(cfg, training=True).em_iterations == 0
    bam = ModelConfig(family="bam", inference=settings.SamplingSettings(bam_mode="mean"))
    assert settings.resolve(bam, training=True).bam_mode == "sample"
    with pytest.raises(ConfigError, match="dropout must be in"):
        settings.resolve(cfg, settings.SamplingSettings(dropout=1.5))


def _copy_with_entry(dest: Path) -> Path:
    """The code in ``dest`` (the rest of the repository linked), with one more knob entry."""
    dest.mkdir()
    for item in ROOT.iterdir():
        if item.name in CODE:
            if item.is_dir():
                shutil.copytree(
                    item, dest / item.name, ignore=shutil.ignore_patterns("__pycache__")
                )
            else:
                shutil.copy(item, dest / item.name)
        elif item.name not in ("tests", ".git"):
            (dest / item.name).symlink_to(item)
    (dest / "tests").mkdir()
    for name in TESTS:
        shutil.copy(ROOT / "tests" / name, dest / "tests" / name)
    table = dest / "uqcore" / "knobs.py"
    text = table.read_text()
    end = "    )\n}\n# fmt: on\n"
    assert text.count(end) == 1  # where the table's last entry ends
    table.write_text(text.replace(end, ENTRY + end))
    return dest


# Run in the copy: the family that reads the new knob names it (its kernel would read s.shrink).
SCRIPT = """
import dataclasses, json, os, sys
from pathlib import Path

from uqcore import families
spec = families.FAMILIES["sto"]
families.FAMILIES["sto"] = dataclasses.replace(spec, knobs=(*spec.knobs, "shrink"))

from tests.app_fixtures import make_checkpoints
from tests.helpers import open_link
from ui.logic import keys as K, state as S
from uqlab.workbench.compute import explore
from ui.logic.exports import overrides, samples_csv, settings_record
from uqcore.checkpoint import load_checkpoint

root = make_checkpoints(Path(sys.argv[1]), families=("sto",))
os.environ["UQ_CHECKPOINT_DIR"] = str(root)
at = open_link(ckpt="cola-sto", text="nora sent the book to london", shrink="0.7")
side = next(w for w in at.sidebar.slider if w.key == "shrink")
shown = [side.label, side.value, side.min, side.max, side.step]
phone = next(w for w in at.main.slider if (w.key or "").startswith(K.MAIN_KNOB + "shrink="))
from_link = phone.value
phone.set_value(0.3).run()
view = at.session_state[K.VIEW]
state, notes = S.parse({"shrink": "9"}, ["cola-sto"], "cola-sto")
res = explore(load_checkpoint(root / "cola-sto"), view.text, 4, 0, view.overrides())
record = settings_record(res, "cola-sto", "sto")
print(json.dumps({
    "sidebar": shown,
    "phone": from_link,
    "moved": next(w for w in at.sidebar.slider if w.key == "shrink").value,
    "url": at.query_params["shrink"],
    "view": view.shrink,
    "round trip": S.parse(S.to_params(view), ["cola-sto"], "cola-sto")[0] == view,
    "clamped": [state.shrink, notes],
    "overrides": overrides(view),
    "record": record,
    "csv": samples_csv(res, ("a", "b"), record).splitlines()[:8],
}))
"""


@pytest.mark.slow
def test_a_new_knob_is_one_table_entry(tmp_path):
    """Issue 46: a throwaway knob added to the table of a copy of the code shows in the
    sidebar and the in-page (phone) knobs, goes through the link and back, and is written into
    an export; nothing but the table entry (and the family reading it) was added."""
    copy = _copy_with_entry(tmp_path / "repo")
    env = {**os.environ, "PYTHONPATH": str(copy)}
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(tmp_path / "ck")],
        cwd=copy,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    got = json.loads(done.stdout.strip().splitlines()[-1])
    assert got["sidebar"] == ["Shrink ς", 0.7, 0.0, 1.0, 0.1]  # from the link, the table's reach
    assert got["phone"] == 0.7
    assert got["moved"] == 0.3 and got["view"] == 0.3  # the phone's copy moved the sidebar's
    assert got["url"] in ("0.3", ["0.3"]) and got["round trip"]
    assert got["clamped"] == [2.0, ["Shrink 9.0 in the link is outside [0.0, 2.0]; using 2.0."]]
    assert got["overrides"] == {"shrink": 0.3}
    assert got["record"]["shrink"] == 0.3 and "# shrink: 0.3" in got["csv"]
