"""What a model shows besides its prediction: one typed record per layer, kernel to page.

A kernel fills the fields its family produces (the family table, :mod:`uqcore.families`, lists
them in ``FamilySpec.maps``); every other field stays None. The same record, under the same field
names, is what a layer returns, what the model collects per layer (``ForwardOutput.maps``), what
the sampler keeps (``SampleResult.maps``) and what the app draws. There is no rename on the way.

Shapes (``N`` rows of one forward pass; the sampler puts ``[Tc, B]`` in front instead of ``N``):

=======================  =====================  ==============================================
field                    shape                  meaning
=======================  =====================  ==============================================
``attention``            ``[N, H, L, L]``       the attention weights actually used (rows sum
                                                to 1 over real keys, 0 on padded keys)
``centroids``            ``[N, H, L, c]``       H-STO: each key's (or query's) assignment P
``prior``                ``[N, H, L]``          BAM: the prior distribution over keys (pi)
``posterior_mean``       ``[N, H, L, L]``       BAM: the posterior mean attention (a)
``attention_before_em``  ``[N, H, L, L]``       Probabilistic Transformer: with trained keys
``kl_per_head``          ``[N, H]``             BAM: KL(posterior || prior) summed per head
=======================  =====================  ==============================================
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import torch


@dataclass
class LayerMaps:
    """One layer's intermediates (see the module docstring). None = not produced or not kept."""

    attention: torch.Tensor | None = None
    centroids: torch.Tensor | None = None
    prior: torch.Tensor | None = None
    posterior_mean: torch.Tensor | None = None
    attention_before_em: torch.Tensor | None = None
    kl_per_head: torch.Tensor | None = None

    def items(self) -> Iterator[tuple[str, torch.Tensor]]:
        """``(field name, tensor)`` for every field that is set, in declaration order."""
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if value is not None:
                yield f.name, value

    def map(self, fn: Callable[[str, torch.Tensor], torch.Tensor | None]) -> LayerMaps:
        """A new record with ``fn(name, tensor)`` applied to every set field."""
        return LayerMaps(**{name: fn(name, value) for name, value in self.items()})

    def keep(self, names) -> LayerMaps:
        """A new record with only the fields in ``names`` (an iterable of field names)."""
        wanted = set(names)
        return LayerMaps(**{n: v for n, v in self.items() if n in wanted})

    def __bool__(self) -> bool:
        return any(True for _ in self.items())


MAP_NAMES: tuple[str, ...] = tuple(f.name for f in dataclasses.fields(LayerMaps))
