"""Random draws for T samples of a batch, from explicit seeds only.

Rows of a sampled batch are laid out sample-major: row ``r = t * B + b`` is example ``b`` of
sample ``t``. Each sample ``t`` owns a ``torch.Generator`` seeded from ``(seed, t)``, and every
draw takes ``[B, *shape]`` numbers from each sample's generator in turn. Hence sample ``t`` is
bitwise the same noise whether it is drawn alone, inside a batch of T, or in any chunk of a
larger T. The global RNG is never touched.
"""

from __future__ import annotations

import math

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

    def uniform(self, *shape: int) -> torch.Tensor:
        """U(0,1) clamped to [1e-6, 1 - 1e-6]. -> [rows, *shape]"""
        parts = [
            torch.rand((self.batch, *shape), generator=g, device=self.device) for g in self._gens
        ]
        return torch.cat(parts, 0).clamp_(_EPS, 1.0 - _EPS)  # [T*B, *shape]

    def gumbel(self, *shape: int) -> torch.Tensor:
        """Standard Gumbel(0,1): ``-log(-log(u))``. -> [rows, *shape]"""
        return -torch.log(-torch.log(self.uniform(*shape)))

    def normal(self, *shape: int) -> torch.Tensor:
        """Standard normal. -> [rows, *shape]"""
        parts = [
            torch.randn((self.batch, *shape), generator=g, device=self.device) for g in self._gens
        ]
        return torch.cat(parts, 0)

    def keep_mask(self, p: float, *shape: int) -> torch.Tensor:
        """Inverted-dropout multiplier: 0 with probability ``p``, else ``1/(1-p)``."""
        if not 0.0 <= p < 1.0 or math.isnan(p):
            raise ValueError(f"dropout probability must be in [0, 1), got {p}.")
        u = torch.cat(
            [torch.rand((self.batch, *shape), generator=g, device=self.device) for g in self._gens],
            0,
        )  # [T*B, *shape]
        return (u >= p).to(torch.float32) / (1.0 - p)


def dropout(
    x: torch.Tensor, p: float, noise: SampleNoise | None, *, shared_dims: tuple[int, ...] = ()
) -> torch.Tensor:
    """Dropout on ``x`` (rows first) with masks from ``noise``; identity if ``p == 0`` or no noise.

    ``shared_dims`` lists dimensions (of ``x``, > 0) over which one mask value is shared, e.g.
    ``(1,)`` for a variational mask that is the same at every position of a sequence.
    """
    if noise is None or p <= 0.0:
        return x
    shape = [1 if d in shared_dims else s for d, s in enumerate(x.shape)][1:]
    return x * noise.keep_mask(p, *shape).to(x.dtype)
