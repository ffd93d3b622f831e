"""uqcore.runtime.one_thread: one intra-op thread for the calling thread's block, the count put
back after it (on an error too), other threads untouched, the same bits. across_cores: calls on
worker threads of one intra-op thread each, results in order, errors raised, cancelled rest."""

from __future__ import annotations

import threading
import time

import pytest
import torch

import uqcore.runtime as runtime
from uqcore.nets.noise import SampleNoise
from uqcore.runtime import _openmp, across_cores, core_workers, one_thread

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


@needs_openmp
def test_calls_run_on_workers_of_one_thread_each_and_come_back_in_order():
    seen = []

    def call(i):
        seen.append((threading.current_thread().name, torch.get_num_threads(), i))
        assert torch.is_inference_mode_enabled()
        return i * i

    before = torch.get_num_threads()
    torch.set_num_threads(before)  # as the app does (tune_cpu): a new thread's first call takes it
    got = list(across_cores(call, list(range(7)), cost=lambda i: i))  # costliest first
    assert got == [i * i for i in range(7)]
    assert all(name.startswith("uq-core") and n == 1 for name, n, _ in seen), seen
    assert seen[0][2] == 6 or seen[1][2] == 6  # the costliest started first
    assert torch.get_num_threads() == before  # the caller's count is its own


@needs_openmp
def test_an_error_in_a_call_is_raised_in_the_caller_and_the_rest_is_cancelled():
    started = []

    def call(i):
        started.append(i)
        if i == 0:
            raise ValueError("bad batch")
        time.sleep(0.01)  # the others take a while: the failure is seen before they all ran
        return i

    with pytest.raises(ValueError, match="bad batch"):
        list(across_cores(call, list(range(50))))
    assert len(started) < 50  # the calls not yet started when it failed never ran
    assert not [t for t in threading.enumerate() if t.name.startswith("uq-core")]


def test_one_worker_where_splitting_is_off_or_not_on_the_cpu(monkeypatch):
    assert core_workers("meta") == 1
    monkeypatch.setattr(runtime, "SPLIT_ACROSS_CORES", False)
    assert core_workers("cpu") == 1
    main = threading.current_thread().name
    names = list(across_cores(lambda i: threading.current_thread().name, [1, 2, 3]))
    assert names == [main] * 3  # in the caller, in order
