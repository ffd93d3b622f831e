"""Uploads on a pretrained base hold that base once (issue 45 item 1): a label-word checkpoint
on SmolLM2, uploaded from three sessions (each upload loaded strictly once on trial, then by
the app's model cache), leaves one copy of the 513 MB base, server RSS grows by less than
200 MB after the first, and the cache counts the base once (not zero, not three times)."""

from __future__ import annotations

import gc
import json

import pytest
import torch

from tests.app_fixtures import app_checkpoints, ckdir  # noqa: F401 (fixtures)
from uqcore.build import frozen_names
from uqcore.inference.sampling import sample
from uqcore.readers.base_model import shared_parts
from uqcore.runtime import release_memory
from uqcore.text.prompt import Prompt
from uqlab.catalog.paths import checkpoint_dir
from uqlab.models.intake import install

pytestmark = pytest.mark.usefixtures("app_checkpoints")
SHIPPED = "cr-smollm2-words-sto"


def _rss_mb() -> float:
    """This process's resident memory (VmRSS), in MB (psutil is not a dependency)."""
    with open("/proc/self/status", encoding="ascii") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS in /proc/self/status")


@pytest.fixture(scope="module")
def words(tmp_path_factory) -> dict[str, bytes]:
    """The files of the shipped CR label-word checkpoint made again with other words (what the
    filed upload was): a 5 kB checkpoint whose base is the installed SmolLM2."""
    from uqcore.exceptions import ConfigError
    from uqlab.bases import get_base
    from uqlab.label_words import write_label_words

    base = get_base("smollm2")
    try:
        folder = base.path()
    except ConfigError as exc:
        pytest.skip(str(exc))
    doc = json.loads((checkpoint_dir() / SHIPPED / "config.json").read_text(encoding="utf-8"))
    prompt = Prompt(doc["training"]["prompt"]["template"], ("bad", "good"))
    out = tmp_path_factory.mktemp("words") / "ck"
    write_label_words(out, folder, base.record(), "cr", prompt, family="sto")
    gc.collect()
    return {f.name: f.read_bytes() for f in out.iterdir() if f.is_file()}


def test_three_uploads_of_one_label_word_checkpoint_hold_one_base(words, tmp_path):
    from ui import cached

    cached.models().clear()
    gc.collect()
    loaded, rss = [], []
    for i in range(3):
        session = tmp_path / f"session-{i}"
        session.mkdir()
        name = install(words, "words", session)  # its strict trial load, dropped
        loaded.append(cached.checkpoint(name, str(session)))
        gc.collect()
        release_memory()
        rss.append(_rss_mb())
    print("RSS after each upload (MB):", [round(r) for r in rss])

    first, *others = (dict(ck.model.named_parameters()) for ck in loaded)
    base_names = frozen_names(loaded[0].config)
    assert len(base_names) > 200  # every tensor but the head
    for params in others:
        for n in base_names:
            assert params[n].untyped_storage().data_ptr() == first[n].untyped_storage().data_ptr()
        assert params["head.weight"].data_ptr() != first["head.weight"].data_ptr()
    assert rss[2] - rss[0] < 200, rss

    base = sum(shared_parts(loaded[0].model).values())
    assert base > 500 * 2**20  # SmolLM2's 513 MB of float32 tensors
    own = [cached._tensor_bytes(ck) for ck in loaded]
    assert max(own) < 2**20  # a label-word upload holds its head, a few kB
    assert cached.models().bytes == base + sum(own)  # the base once: not zero, not 3 times

    ids = torch.tensor([loaded[0].vocab.encode("great battery, awful screen", 64).ids])
    mask = torch.ones_like(ids, dtype=torch.bool)
    probs = [sample(ck.model, ids, mask, 2, seed=0).probs for ck in (loaded[0], loaded[2])]
    torch.testing.assert_close(probs[0], probs[1], rtol=0, atol=0)
