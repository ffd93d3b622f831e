"""When the training loop writes its resumable state (uqlab.training.loop._save_due): every
``save_every`` steps, and also once ``save_seconds`` have passed, so a slow run killed before
its 200th step still leaves a state to resume (issue 36); what a state must match to resume."""

from __future__ import annotations

import time
from types import SimpleNamespace

from uqlab.training.loop import _save_due


def test_a_state_is_due_every_save_every_steps_or_after_save_seconds(monkeypatch):
    now = [1000.0]
    monkeypatch.setattr(time, "monotonic", lambda: now[0])
    tc = SimpleNamespace(save_every=200, save_seconds=60.0)
    assert _save_due(tc, 200, saved_at=999.0)  # the step count
    assert not _save_due(tc, 7, saved_at=999.0)  # neither
    now[0] = 1060.0
    assert _save_due(tc, 7, saved_at=1000.0)  # a minute since the last save
    assert not _save_due(SimpleNamespace(save_every=0, save_seconds=0), 7, saved_at=0.0)
    assert _save_due(SimpleNamespace(save_every=0, save_seconds=60.0), 7, saved_at=0.0)


def test_bfloat16_autocast_on_a_cpu_without_native_bfloat16_is_warned_of(monkeypatch):
    """On an AVX2 CPU PyTorch emulates bfloat16: a step ran ~20x slower than in float32, so the
    trainer says so (and how to train without it) before the first step."""
    import torch

    from uqlab.training.loop import slow_autocast

    tc = SimpleNamespace(autocast="bfloat16")
    monkeypatch.setattr(torch.cpu, "_is_avx512_bf16_supported", lambda: False)
    monkeypatch.setattr(torch.cpu, "_is_amx_tile_supported", lambda: False)
    note = slow_autocast(tc, "cpu")
    assert "no native bfloat16" in note and "--set autocast=null" in note
    assert slow_autocast(SimpleNamespace(autocast=None), "cpu") is None
    assert slow_autocast(tc, "cuda") is None  # GPUs have it
    monkeypatch.setattr(torch.cpu, "_is_avx512_bf16_supported", lambda: True)
    assert slow_autocast(tc, "cpu") is None


def test_a_setting_added_later_leaves_the_fingerprint_of_older_states_unchanged(tmp_path):
    """init_from came after runs had saved states: unset, it is not in the fingerprint (a
    background run started before it resumed with 'written with another configuration' until
    it was left out); set, it is, so a continued run never resumes a fresh one's state."""
    import dataclasses

    from uqlab.training.loop import RESUME_FREE, state_fingerprint
    from uqlab.training.recipe import TrainConfig, build_config

    tc = build_config("cola", "trans", str(tmp_path / "out"))
    older = {f.name for f in dataclasses.fields(TrainConfig)} - set(RESUME_FREE) - {"init_from"}
    fingerprint = state_fingerprint(tc, seed=3, world=1)
    assert set(fingerprint) == older | {"member_seed", "world"}
    assert fingerprint["member_seed"] == 3
    went_on = state_fingerprint(dataclasses.replace(tc, init_from="src"), seed=3, world=1)
    assert went_on["init_from"] == "src" and went_on != fingerprint
