"""Random draws for T samples of a batch, from explicit seeds only.

Rows of a sampled batch are laid out sample-major: row ``r = t * B + b`` is example ``b`` of
sample ``t``. Each sample ``t`` owns a ``torch.Generator`` seeded from ``(seed, t)``, and every
draw takes ``[B, *shape]`` numbers from each sample's generator in turn. Hence sample ``t`` is
bitwise the same noise whether it is drawn alone, inside a batch of T, or in any chunk of a
larger T. The global RNG is never touched.
"""

from __future__ import annotations

import math
import threading
from concurrent.futures import ThreadPoolExecutor

import torch

_EPS = 1e-6  # uniforms are clamped to [EPS, 1 - EPS] so log(-log(u)) stays finite
_MIX = 0x9E3779B97F4A7C15  # golden-ratio constant used to decorrelate per-sample seeds
_MASK64 = (1 << 63) - 1


def sample_seed(seed: int, t: int) -> int:
    """The seed of sample ``t`` under run seed ``seed`` (a 63-bit mix, SplitMix64 finaliser)."""
    z = (seed * _MIX + (t + 1) * 0xBF58476D1CE4E5B9) & ((1 << 64) - 1)
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & ((1 << 64) - 1)
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & ((1 << 64) - 1)
    return (z ^ (z >> 31)) & _MASK64


class SampleNoise:
    """Noise for samples ``first, ..., first + count - 1`` of a batch of ``batch`` examples.

    Every method returns a tensor of shape ``[count * batch, *shape]`` in row order
    ``t * batch + b``. ``shape`` excludes the row dimension.
    """

    def __init__(
        self, seed: int, first: int, count: int, batch: int, device: torch.device | str = "cpu"
    ):
        if count < 1 or batch < 1:
            raise ValueError(f"SampleNoise needs count >= 1 and batch >= 1, got {count}, {batch}.")
        self.batch = batch
        self.count = count
        self.device = torch.device(device)
        self._gens = []
        for t in range(first, first + count):
            g = torch.Generator(device=self.device)
            g.manual_seed(sample_seed(int(seed), t))
            self._gens.append(g)

    @property
    def rows(self) -> int:
        return self.count * self.batch

    def _fill(
        self, draw, shape: tuple[int, ...], dtype=torch.float32, per_sample: bool = False
    ) -> torch.Tensor:
        """Fill ``[rows, *shape]`` with ``draw(out_slice, generator)`` per sample, in place
        (``[count, *shape]``, one slice per sample, with ``per_sample``).

        Samples are split into contiguous groups drawn in parallel threads (torch releases the
        GIL); each generator is used by one thread only, so the numbers do not depend on it.
        """
        b = 1 if per_sample else self.batch
        out = torch.empty((self.count * b, *shape), dtype=dtype, device=self.device)
        inference = torch.is_inference_mode_enabled()  # thread-local: pass it to the workers

        def work(lo: int, hi: int) -> None:
            with torch.inference_mode(inference):
                for t in range(lo, hi):
                    draw(out[t * b : (t + 1) * b], self._gens[t])

        groups = min(_pool_size(), self.count) if out.numel() >= _PARALLEL_MIN else 1
        if groups <= 1:
            work(0, self.count)
        else:
            edges = [self.count * i // groups for i in range(groups + 1)]
            list(_pool().map(work, edges[:-1], edges[1:]))
        return out

    def uniform(self, *shape: int) -> torch.Tensor:
        """U(0,1) clamped to [1e-6, 1 - 1e-6]. -> [rows, *shape]"""
        out = self._fill(lambda o, g: torch.rand(o.shape, generator=g, out=o), shape)
        return out.clamp_(_EPS, 1.0 - _EPS)

    def gumbel(self, *shape: int) -> torch.Tensor:
        """Standard Gumbel(0,1): ``-log(-log(u))``. -> [rows, *shape]"""
        return self.uniform(*shape).log_().neg_().log_().neg_()

    def normal(self, *shape: int) -> torch.Tensor:
        """Standard normal. -> [rows, *shape]"""
        return self._fill(lambda o, g: torch.randn(o.shape, generator=g, out=o), shape)

    def keep_mask(self, p: float, *shape: int) -> torch.Tensor:
        """Bool mask, False with probability ``p`` (quantised to a multiple of 1/65536).

        Each 64-bit random integer gives four 16-bit uniforms: a quarter of the generator calls
        of float uniforms, which dominate MC-dropout sampling. -> [rows, *shape] bool
        """
        if not 0.0 <= p < 1.0 or math.isnan(p):
            raise ValueError(f"dropout probability must be in [0, 1), got {p}.")
        per_row = math.prod(shape)
        words = -(-self.batch * per_row // 4)  # int64 words per sample, rounded up

        def draw(o: torch.Tensor, g: torch.Generator) -> None:
            o.random_(-(2**63), 2**63 - 1, generator=g)

        bits = self._fill(draw, (words,), dtype=torch.int64, per_sample=True)  # [T, words]
        u16 = bits.view(torch.int16)[:, : self.batch * per_row]  # [T, B * per_row] in [-2^15, 2^15)
        threshold = math.ceil(p * 65536) - 32768
        return (u16 >= threshold).reshape(self.rows, *shape)  # [T*B, *shape]


_PARALLEL_MIN = 1 << 15  # smaller draws are not worth a thread hand-off
_POOL: ThreadPoolExecutor | None = None
_POOL_LOCK = threading.Lock()


def _pool_size() -> int:
    return max(1, torch.get_num_threads())


def _pool() -> ThreadPoolExecutor:
    global _POOL
    with _POOL_LOCK:
        if _POOL is None or _POOL._max_workers != _pool_size():  # noqa: SLF001
            _POOL = ThreadPoolExecutor(max_workers=_pool_size(), thread_name_prefix="uq-noise")
        return _POOL


def dropout(
    x: torch.Tensor, p: float, noise: SampleNoise | None, *, shared_dims: tuple[int, ...] = ()
) -> torch.Tensor:
    """Inverted dropout on ``x`` (rows first) with masks from ``noise``: kept entries are
    scaled by ``1/(1-p)``. Identity if ``p == 0`` or no noise.

    ``shared_dims`` lists dimensions (of ``x``, > 0) over which one mask value is shared, e.g.
    ``(1,)`` for a variational mask that is the same at every position of a sequence.
    """
    if noise is None or p <= 0.0:
        return x
    shape = [1 if d in shared_dims else s for d, s in enumerate(x.shape)][1:]
    return (x * noise.keep_mask(p, *shape)).mul_(1.0 / (1.0 - p))
