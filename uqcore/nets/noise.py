"""Random draws for T samples of a batch: counter-based, from explicit seeds only.

Rows of a sampled batch are laid out sample-major: row ``r = t * B + b`` is example ``b`` of
sample ``t``. Every random number is a hash of where it is used, never a position in a stream:

    value = h(run seed, sample t, example key, draw number, coordinates in the draw's shape)

* the **example key** is a hash of the example's own token ids (:func:`example_keys`), so an
  example gets the same noise alone, in any batch, at any row, padded to any length;
* the **draw number** counts the draws of one forward pass (the model makes the same draws in
  the same order for every input);
* the **coordinates** are the element's index along each dimension of the draw (head, query,
  key, ...), hashed one dimension after another, so padding a dimension adds values without
  changing the others.

The hash is ``lowbias32`` (C. Wellons' 32-bit integer finaliser) on int32 tensors with
wrapping multiplication, logical shifts and xor: integer operations give the same bits on every
device, so a seed gives the same uniforms on a CPU and a GPU; the float functions of them
(``log``, ``cos``) may differ in the last bit between devices (about 1e-7 relative). Uniforms
have 24 bits, dropout masks 16. The global RNG is never touched.

Training draws from :class:`uqcore.nets.stream_noise.StreamNoise` instead (per-sample generator
streams), which the shipped checkpoints were trained with.
"""

from __future__ import annotations

import math

import torch

from uqcore.runtime import one_thread

EPS = 1e-6  # uniforms are clamped to [EPS, 1 - EPS] so log(-log(u)) stays finite
_MIX = 0x9E3779B97F4A7C15  # golden-ratio constant used to decorrelate per-sample seeds
_MASK64 = (1 << 64) - 1
_SIDE_TAG = 0x5D1E_5EED  # draw-number offset of the side draws (see ``side``)
_STEP = 0x9E3779B9  # golden ratio, 32 bits: spreads consecutive coordinates apart


def sample_seed(seed: int, t: int) -> int:
    """The seed of sample ``t`` under run seed ``seed`` (SplitMix64 finaliser, 63 bits)."""
    z = (seed * _MIX + (t + 1) * 0xBF58476D1CE4E5B9) & _MASK64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK64
    return (z ^ (z >> 31)) & ((1 << 63) - 1)


def _i32(value: int) -> int:
    """``value mod 2^32`` as a signed 32-bit integer (torch's int32 bit pattern)."""
    value &= 0xFFFFFFFF
    return value - (1 << 32) if value >= 1 << 31 else value


_M1, _M2, _STEP32 = _i32(0x7FEB352D), _i32(0x846CA68B), _i32(_STEP)


def mix32(x: torch.Tensor) -> torch.Tensor:
    """``lowbias32`` of an int32 tensor, in place (returns ``x``): a bijection of 32-bit words
    whose outputs look independent for neighbouring inputs. Shifts are logical (masked)."""
    t = torch.empty_like(x)  # one scratch buffer, reused: every step runs in place
    x ^= torch.bitwise_right_shift(x, 16, out=t).bitwise_and_(0xFFFF)
    x *= _M1
    x ^= torch.bitwise_right_shift(x, 15, out=t).bitwise_and_(0x1FFFF)
    x *= _M2
    x ^= torch.bitwise_right_shift(x, 16, out=t).bitwise_and_(0xFFFF)
    return x


def _mix32_int(value: int) -> int:
    """:func:`mix32` of one Python integer (host-side keys)."""
    x = value & 0xFFFFFFFF
    x ^= x >> 16
    x = (x * 0x7FEB352D) & 0xFFFFFFFF
    x ^= x >> 15
    x = (x * 0x846CA68B) & 0xFFFFFFFF
    return x ^ (x >> 16)


def example_keys(ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """One int32 key per example of ``ids [B, L]`` from its real tokens only (``mask [B, L]``,
    True = real): padding and the batch around it never change it. -> ``[B]`` int32"""
    pos = torch.arange(ids.shape[1], device=ids.device, dtype=torch.int32)  # [L]
    x = ids.to(torch.int32) * _STEP32 + pos  # [B, L] (wraps)
    x = mix32(x ^ _i32(0x51ED270B))
    x = torch.where(mask, x, torch.zeros_like(x))
    total = x.sum(1, dtype=torch.int64)  # [B] order-free but position-aware (wraps below)
    length = mask.sum(1, dtype=torch.int64)  # [B]
    return mix32(_to_i32(total + length * _STEP))


def _to_i32(x: torch.Tensor) -> torch.Tensor:
    """An int64 tensor's low 32 bits as int32 (the same bits on every device)."""
    low = x & 0xFFFFFFFF
    return (low - ((low >= 1 << 31).long() << 32)).to(torch.int32)


class Draws:
    """The distributions every noise source derives from its ``uniform(*shape)`` (rows first):
    :class:`SampleNoise` (inference) and :class:`uqcore.nets.stream_noise.StreamNoise`
    (training)."""

    def uniform(self, *shape: int) -> torch.Tensor:  # pragma: no cover - each source's own
        raise NotImplementedError

    def neg_gumbel(self, *shape: int) -> torch.Tensor:
        """``log(-log(u))``, i.e. minus a standard Gumbel draw (saves a pass where the caller
        folds the sign into a scale). -> [rows, *shape]"""
        return self.uniform(*shape).log_().neg_().log_()

    def gumbel(self, *shape: int) -> torch.Tensor:
        """Standard Gumbel(0,1): ``-log(-log(u))``. -> [rows, *shape]"""
        return self.neg_gumbel(*shape).neg_()

    def normal(self, *shape: int) -> torch.Tensor:
        """Standard normal by Box-Muller. -> [rows, *shape]"""
        u = self.uniform(2, *shape)  # [rows, 2, *shape]
        radius = u[:, 0].log().mul_(-2.0).sqrt_()
        return radius.mul_(torch.cos(u[:, 1] * (2 * math.pi)))


class SampleNoise(Draws):
    """Noise for samples ``first, ..., first + count - 1`` of a batch of ``batch`` examples.

    Every method returns a tensor of shape ``[count * batch, *shape]`` in row order
    ``t * batch + b``; ``shape`` excludes the row dimension. ``keys [batch]`` int32: the
    examples' keys (:func:`example_keys`; None = key 0 for every example, for benchmarks and
    tests on one input). Not thread-safe: one forward pass at a time uses one instance.
    """

    def __init__(
        self,
        seed: int,
        first: int,
        count: int,
        batch: int,
        device: torch.device | str = "cpu",
        keys: torch.Tensor | None = None,
        *,
        _draw_offset: int = 0,
    ):
        if count < 1 or batch < 1:
            raise ValueError(f"SampleNoise needs count >= 1 and batch >= 1, got {count}, {batch}.")
        self.batch, self.count = batch, count
        self.device = torch.device(device)
        self._seed, self._first = int(seed), int(first)
        self._offset = _draw_offset
        if keys is None:
            keys = torch.zeros(batch, dtype=torch.int32, device=self.device)
        elif keys.shape != (batch,) or keys.dtype != torch.int32:
            raise ValueError(
                f"keys must be int32 [batch={batch}], got {keys.dtype} {list(keys.shape)}."
            )
        self._keys = keys.to(self.device)
        seeds = [sample_seed(self._seed, t) for t in range(first, first + count)]
        lo = torch.tensor([_i32(s) for s in seeds], dtype=torch.int32, device=self.device)
        hi = torch.tensor([_i32(s >> 32) for s in seeds], dtype=torch.int32, device=self.device)
        rows = mix32(self._keys[None, :] ^ lo[:, None])  # [count, batch]
        self._rows = mix32(rows ^ hi[:, None]).reshape(-1)  # [rows] one key per row
        self._draws = 0
        self._side: SampleNoise | None = None

    @property
    def rows(self) -> int:
        return self.count * self.batch

    def side(self) -> SampleNoise:
        """Independent draws for the same rows (created once). They feed values that never
        reach the prediction (the attention rows of the last layer other than [CLS], computed
        only when the app captures them), so drawing them changes nothing in this object's
        draws."""
        if self._side is None:
            self._side = SampleNoise(
                self._seed,
                self._first,
                self.count,
                self.batch,
                self.device,
                self._keys,
                _draw_offset=self._offset + _SIDE_TAG,
            )
        return self._side

    @property
    def draws(self) -> int:
        """How many draws this object has made (the next draw's number)."""
        return self._draws

    def skip(self, n: int) -> None:
        """Move past ``n`` draws without making them (their values were kept elsewhere), so
        the draws after them get the numbers they get when those are made."""
        self._draws += int(n)

    def _hash(self, shape: tuple[int, ...]) -> torch.Tensor:
        """The next draw's 32-bit words. -> ``[rows, *shape]`` int32"""
        draw = _i32(_mix32_int(self._offset + self._draws + 1) * 0x2545F491)
        self._draws += 1
        h = mix32(self._rows ^ draw).view(-1, *([1] * len(shape)))  # [rows, 1, ...]
        for dim, size in enumerate(shape):
            view = [1] * (len(shape) + 1)
            view[dim + 1] = size
            idx = torch.arange(1, size + 1, dtype=torch.int32, device=self.device) * _STEP32
            h = mix32(h + idx.view(view))  # grows one dimension at a time
        return h

    # ---------------------------------------------------------- distributions
    def uniform(self, *shape: int) -> torch.Tensor:
        """U(0,1) with 24-bit resolution, clamped to [1e-6, 1 - 1e-6]. -> [rows, *shape]"""
        with one_thread(self.device):  # a dozen cheap passes: see one_thread
            words = self._hash(shape).bitwise_right_shift_(8).bitwise_and_(0xFFFFFF)
            return words.to(torch.float32).mul_(2.0**-24).clamp_(EPS, 1.0 - EPS)

    def keep_mask(self, p: float, *shape: int) -> torch.Tensor:
        """Bool mask, False with probability ``p`` (quantised to a multiple of 1/65536).
        -> [rows, *shape] bool"""
        if not 0.0 <= p < 1.0 or math.isnan(p):
            raise ValueError(f"dropout probability must be in [0, 1), got {p}.")
        with one_thread(self.device):
            return self._hash(shape).bitwise_and_(0xFFFF) >= math.ceil(p * 65536)


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


def add_dropout(
    x: torch.Tensor, y: torch.Tensor, p: float, noise: SampleNoise | None
) -> torch.Tensor:
    """``x + dropout(y)`` (a residual connection) in one ``addcmul`` pass."""
    if noise is None or p <= 0.0:
        return x + y
    return torch.addcmul(x, y, noise.keep_mask(p, *y.shape[1:]), value=1.0 / (1.0 - p))


def dropout_attend(
    attn: torch.Tensor, v: torch.Tensor, p: float, noise: SampleNoise
) -> torch.Tensor:
    """``dropout(attn) @ v`` with the ``1/(1-p)`` scale folded into the batched matmul.
    ``attn [N, H, Lq, Lk]``, ``v [N, H, Lk, d_h]`` -> ``[N, H, Lq, d_h]``."""
    n, h, lq, lk = attn.shape
    dropped = (attn * noise.keep_mask(p, h, lq, lk)).view(n * h, lq, lk)
    out = torch.baddbmm(
        v.new_empty(()), dropped, v.reshape(n * h, lk, -1), beta=0.0, alpha=1.0 / (1.0 - p)
    )
    return out.view(n, h, lq, -1)


class TiledNoise(Draws):
    """The draws of ``base`` for ``tiles`` copies of its rows, tile-major: row
    ``g * base.rows + r`` gets row ``r``'s numbers. Each draw is made once by ``base`` (its
    hashing and logarithms) and repeated, so a grid of settings sampled together
    (:mod:`uqcore.inference.grid`) sees exactly the noise each setting sees alone."""

    def __init__(self, base: SampleNoise, tiles: int):
        if tiles < 1:
            raise ValueError(f"TiledNoise needs tiles >= 1, got {tiles}.")
        self.base, self.tiles = base, int(tiles)
        self.device = base.device

    @property
    def rows(self) -> int:
        return self.base.rows * self.tiles

    @property
    def draws(self) -> int:
        return self.base.draws

    def skip(self, n: int) -> None:
        self.base.skip(n)

    def side(self) -> TiledNoise:
        return TiledNoise(self.base.side(), self.tiles)

    def _tile(self, x: torch.Tensor) -> torch.Tensor:
        return x.repeat(self.tiles, *([1] * (x.dim() - 1)))  # [tiles * rows, *shape]

    def uniform(self, *shape: int) -> torch.Tensor:
        return self._tile(self.base.uniform(*shape))

    def neg_gumbel(self, *shape: int) -> torch.Tensor:
        return self._tile(self.base.neg_gumbel(*shape))

    def keep_mask(self, p: float, *shape: int) -> torch.Tensor:
        return self._tile(self.base.keep_mask(p, *shape))
