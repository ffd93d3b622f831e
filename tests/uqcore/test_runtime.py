"""uqcore.runtime.one_thread: one intra-op thread for the calling thread's block, the count put
back after it (on an error too), other threads untouched, the same bits."""

from __future__ import annotations

import threading

import pytest
import torch

from uqcore.nets.noise import SampleNoise
from uqcore.runtime import _openmp, one_thread

needs_openmp = pytest.mark.skipif(
    _openmp() is None or torch.get_num_threads() < 2, reason="needs OpenMP and two threads"
)


@needs_openmp
def test_the_block_runs_on_one_thread_and_the_count_comes_back_even_after_an_error():
    before = torch.get_num_threads()
    with one_thread():
        assert torch.get_num_threads() == 1
        with one_thread():  # nested: still one, and the outer block's count survives it
            assert torch.get_num_threads() == 1
        assert torch.get_num_threads() == 1
    assert torch.get_num_threads() == before
    with pytest.raises(ValueError), one_thread():
        raise ValueError("inside")
    assert torch.get_num_threads() == before


@needs_openmp
def test_another_thread_keeps_its_own_count_while_one_thread_is_in_the_block():
    inside, seen = threading.Event(), []
    release = threading.Event()

    def worker():
        with one_thread():
            inside.set()
            release.wait(10)

    t = threading.Thread(target=worker)
    t.start()
    inside.wait(10)
    other = threading.Thread(target=lambda: seen.append(torch.get_num_threads()))
    other.start()
    other.join()
    seen.append(torch.get_num_threads())
    release.set()
    t.join()
    assert seen == [torch.get_num_threads()] * 2 and seen[0] >= 2


def test_the_noise_hashed_on_one_thread_is_the_same_bits_as_on_all(monkeypatch):
    import contextlib

    import uqcore.nets.noise as noise

    one = SampleNoise(3, 0, 4, 5).uniform(8, 300, 8)  # [rows, H, L, c]: parallel-sized
    monkeypatch.setattr(noise, "one_thread", lambda device: contextlib.nullcontext())
    every = SampleNoise(3, 0, 4, 5).uniform(8, 300, 8)
    assert torch.equal(one, every)


def test_other_devices_are_left_alone():
    before = torch.get_num_threads()
    with one_thread("meta"):
        assert torch.get_num_threads() == before
