"""A pretrained base held once (uqcore.readers.base_model.share_base): by its content, whoever loads
it, for as long as any model uses it, and counted once (shared_parts, held_bytes)."""

from __future__ import annotations

import gc
import shutil

import pytest
import torch
from safetensors.torch import save_file
from torch import nn

from uqcore.build import build_model, build_unset
from uqcore.config import ModelConfig
from uqcore.readers.base_model import WEIGHTS, held_bytes, share_base, shared_bytes, shared_parts

NAMES = ("0.weight", "1.weight")  # what the base provides; the biases are each model's own


def _base(folder, seed: int = 0):
    """A base folder: its weights file (what is hashed) holds ``NAMES``' values."""
    folder.mkdir(parents=True, exist_ok=True)
    g = torch.Generator().manual_seed(seed)
    tensors = {n: torch.randn(8, 8, generator=g) for n in NAMES}
    save_file(tensors, str(folder / WEIGHTS))
    return folder, tensors


def _load(folder, tensors) -> nn.Module:
    """What a loader does: a fresh model, the base copied in, then shared."""
    model = nn.Sequential(nn.Linear(8, 8), nn.Linear(8, 8))
    with torch.no_grad():
        for name, value in tensors.items():
            model.get_parameter(name).copy_(value)
    share_base(model, folder, NAMES)
    return model


def _ptr(model: nn.Module, name: str = "0.weight") -> int:
    return model.get_parameter(name).untyped_storage().data_ptr()


@pytest.fixture(autouse=True)
def _fresh():
    gc.collect()  # models of other tests gone: their held copies with them
    yield
    gc.collect()


def test_three_loads_share_one_copy_even_when_the_middle_one_is_discarded(tmp_path):
    folder, tensors = _base(tmp_path / "base")
    before = held_bytes()
    first = _load(folder, tensors)
    middle = _load(folder, tensors)  # an upload's trial load: loaded, then dropped
    assert _ptr(middle) == _ptr(first)
    del middle
    gc.collect()
    third = _load(folder, tensors)
    assert _ptr(third) == _ptr(first)
    assert _ptr(third, "1.weight") == _ptr(first, "1.weight")
    assert _ptr(third, "0.bias") != _ptr(first, "0.bias")  # not a base tensor: its own
    one_copy = sum(t.numel() * t.element_size() for t in tensors.values())
    assert held_bytes() - before == one_copy  # once, however many models use it
    assert shared_bytes(first) == shared_bytes(third) == one_copy
    assert shared_parts(first) == shared_parts(third)  # the same copies, counted once between
    for name, value in tensors.items():  # the base's values, not the fresh model's
        assert torch.equal(third.get_parameter(name), value)


def test_the_base_is_found_by_its_content_not_its_folder(tmp_path):
    """An upload carries a copy of the base (another folder, another mtime): still held once;
    a base of other content is not taken for it."""
    folder, tensors = _base(tmp_path / "installed")
    copy = tmp_path / "upload" / "base"
    copy.mkdir(parents=True)
    shutil.copyfile(folder / WEIGHTS, copy / WEIGHTS)
    installed, uploaded = _load(folder, tensors), _load(copy, tensors)
    assert _ptr(uploaded) == _ptr(installed)
    other_folder, other_tensors = _base(tmp_path / "other", seed=1)
    other = _load(other_folder, other_tensors)
    assert _ptr(other) != _ptr(installed)
    torch.testing.assert_close(other.get_parameter("0.weight"), other_tensors["0.weight"])


def test_the_copy_goes_with_its_last_user(tmp_path):
    folder, tensors = _base(tmp_path / "base")
    before = held_bytes()
    first, second = _load(folder, tensors), _load(folder, tensors)
    assert held_bytes() > before
    del first
    gc.collect()
    assert held_bytes() > before  # the second still uses it
    assert shared_bytes(second) > 0
    del second
    gc.collect()
    assert held_bytes() == before


def test_a_model_moved_to_another_dtype_gets_its_own_copy_and_stops_counting(tmp_path):
    folder, tensors = _base(tmp_path / "base")
    first, second = _load(folder, tensors), _load(folder, tensors)
    second.double()
    assert shared_bytes(second) == 0
    assert first.get_parameter("0.weight").dtype == torch.float32
    assert shared_bytes(first) > 0
    del first
    gc.collect()
    assert not shared_parts(second)


def test_offer_false_only_takes_copies_already_held(tmp_path):
    """A loader asks first which tensors it need not read (offer=False): nothing is offered
    before its values are copied, so no other load takes values not yet written."""
    folder, tensors = _base(tmp_path / "base")
    empty = nn.Sequential(nn.Linear(8, 8), nn.Linear(8, 8))
    assert share_base(empty, folder, NAMES, offer=False) == frozenset()
    assert not shared_parts(empty)
    first = _load(folder, tensors)
    later = nn.Sequential(nn.Linear(8, 8), nn.Linear(8, 8))
    assert share_base(later, folder, NAMES, offer=False) == frozenset(NAMES)
    assert _ptr(later) == _ptr(first)


def test_an_unset_model_has_the_tensors_of_a_built_one():
    cfg = ModelConfig(vocab_size=50, num_classes=2, max_len=16, n_layers=1, d_model=16, d_ff=32)
    built, unset = build_model(cfg), build_unset(cfg)
    assert {k: v.shape for k, v in built.state_dict().items()} == {
        k: v.shape for k, v in unset.state_dict().items()
    }
    assert all(p.device.type == "cpu" for p in unset.parameters())
    assert not unset.training
