"""Per-sample random streams (torch generators): the noise training draws.

Rows of a batch are laid out sample-major: row ``r = t * B + b`` is example ``b`` of sample ``t``.
Each sample ``t`` owns a ``torch.Generator`` seeded from ``(seed, t)`` and reads its own stream of
random 64-bit words; every draw takes the next words of every sample's stream at once. An
example's noise therefore depends on its batch (its row and the padded shape), and a CUDA
generator gives other words than a CPU one. Training keeps this generator so that every shipped
checkpoint retrains to the same weights; inference draws from the counter-based
:class:`uqcore.nets.noise.SampleNoise`, which depends on neither the batch nor the device.
"""

from __future__ import annotations

import math
import threading
from concurrent.futures import ThreadPoolExecutor

import torch

from uqcore.nets.noise import EPS as _EPS
from uqcore.nets.noise import Draws, sample_seed

_SIDE_TAG = 0x5D1E_5EED_0000_0001  # run-seed offset of the side streams (see ``side``)
_BLOCK_WORDS = 1 << 12  # words a stream refills at least (per sample)
_PARALLEL_MIN = 1 << 15  # refills smaller than this (words in all) stay on one thread


class StreamNoise(Draws):
    """Noise for samples ``first, ..., first + count - 1`` of a batch of ``batch`` examples.

    Every method returns a tensor of shape ``[count * batch, *shape]`` in row order
    ``t * batch + b``; ``shape`` excludes the row dimension. Not thread-safe: one forward pass
    at a time uses one instance. ``reserve``: words per sample to draw at the first refill (a
    hint, e.g. what the same pass consumed before); it changes speed, never the numbers, since
    a generator's word stream does not depend on how it is split into draws.
    """

    def __init__(
        self,
        seed: int,
        first: int,
        count: int,
        batch: int,
        device: torch.device | str = "cpu",
        reserve: int = 0,
    ):
        self._init(seed, range(first, first + count), batch, device, reserve)

    @classmethod
    def for_indices(
        cls, seed: int, indices: list[int], batch: int = 1, device: torch.device | str = "cpu"
    ) -> StreamNoise:
        """Noise whose ``i``-th sample is sample ``indices[i]`` of run ``seed``. Training uses it
        with ``batch=1`` and each example's position in the epoch, so an example's dropout and
        attention noise do not depend on which batch row, or which process, it lands in."""
        noise = cls.__new__(cls)
        noise._init(seed, indices, batch, device, 0)
        return noise

    def _init(self, seed: int, samples, batch: int, device, reserve: int) -> None:
        samples = [int(t) for t in samples]
        if not samples or batch < 1:
            raise ValueError(
                f"StreamNoise needs >= 1 sample and batch >= 1, got {samples}, {batch}."
            )
        self.batch, self.count = batch, len(samples)
        self.device = torch.device(device)
        self._seed, self._samples, self._side = int(seed), samples, None
        self._gens = []
        for t in samples:
            g = torch.Generator(device=self.device)
            g.manual_seed(sample_seed(int(seed), t))
            self._gens.append(g)
        self._pool = torch.empty((self.count, 0), dtype=torch.int64, device=self.device)
        self._cursor = 0
        self._reserve = max(0, int(reserve))
        self.consumed = 0  # words read per sample so far

    @property
    def rows(self) -> int:
        return self.count * self.batch

    def side(self) -> StreamNoise:
        """A second, independent stream for the same samples and rows (created once).

        It feeds draws that never reach the prediction (the attention rows of the last layer
        other than [CLS], computed only when the app captures them), so whether they are drawn
        changes nothing in this stream, and so nothing in the prediction."""
        if self._side is None:
            side = StreamNoise.__new__(StreamNoise)
            side._init(self._seed ^ _SIDE_TAG, self._samples, self.batch, self.device, 0)
            self._side = side
        return self._side

    # ----------------------------------------------------------------- streams
    def _refill(self, need: int) -> None:
        """Make at least ``need`` unread words available in every sample's stream."""
        left = self._pool.shape[1] - self._cursor
        grow = max(need - left, _BLOCK_WORDS, self._reserve - self.consumed - left)
        fresh = torch.empty((self.count, grow), dtype=torch.int64, device=self.device)
        inference = torch.is_inference_mode_enabled()  # thread-local: pass it to the workers

        def work(lo: int, hi: int) -> None:
            with torch.inference_mode(inference):
                for t in range(lo, hi):
                    fresh[t].random_(-(2**63), 2**63 - 1, generator=self._gens[t])

        groups = min(_pool_size(), self.count) if fresh.numel() >= _PARALLEL_MIN else 1
        if groups <= 1:
            work(0, self.count)
        else:
            edges = [self.count * i // groups for i in range(groups + 1)]
            list(_executor().map(work, edges[:-1], edges[1:]))
        self._pool = torch.cat([self._pool[:, self._cursor :], fresh], dim=1) if left else fresh
        self._cursor = 0

    def _words(self, n: int) -> torch.Tensor:
        """The next ``n`` words of every stream. -> [count, n] int64"""
        if self._pool.shape[1] - self._cursor < n:
            self._refill(n)
        out = self._pool[:, self._cursor : self._cursor + n]
        self._cursor += n
        self.consumed += n
        return out

    # ---------------------------------------------------------- distributions
    def uniform(self, *shape: int) -> torch.Tensor:
        """U(0,1) with 24-bit resolution, clamped to [1e-6, 1 - 1e-6]. -> [rows, *shape]"""
        n = self.batch * math.prod(shape)
        halves = self._words(-(-n // 2)).view(torch.int32)[:, :n]  # [T, n] two per word
        u = (halves & 0xFFFFFF).to(torch.float32).mul_(2.0**-24)
        return u.clamp_(_EPS, 1.0 - _EPS).view(self.rows, *shape)

    def keep_mask(self, p: float, *shape: int) -> torch.Tensor:
        """Bool mask, False with probability ``p`` (quantised to a multiple of 1/65536).

        Each 64-bit word gives four 16-bit uniforms. -> [rows, *shape] bool
        """
        if not 0.0 <= p < 1.0 or math.isnan(p):
            raise ValueError(f"dropout probability must be in [0, 1), got {p}.")
        n = self.batch * math.prod(shape)
        u16 = self._words(-(-n // 4)).view(torch.int16)[:, :n]  # [T, n] in [-2^15, 2^15)
        return (u16 >= math.ceil(p * 65536) - 32768).view(self.rows, *shape)


_EXECUTOR: ThreadPoolExecutor | None = None
_EXECUTOR_LOCK = threading.Lock()


def _pool_size() -> int:
    return max(1, torch.get_num_threads())


def _executor() -> ThreadPoolExecutor:
    global _EXECUTOR
    with _EXECUTOR_LOCK:
        if _EXECUTOR is None or _EXECUTOR._max_workers != _pool_size():
            _EXECUTOR = ThreadPoolExecutor(max_workers=_pool_size(), thread_name_prefix="uq-rng")
        return _EXECUTOR
