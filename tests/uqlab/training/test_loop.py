"""When the training loop writes its resumable state (uqlab.training.loop._save_due): every
``save_every`` steps, and also once ``save_seconds`` have passed, so a slow run killed before
its 200th step still leaves a state to resume (issue 36)."""

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
