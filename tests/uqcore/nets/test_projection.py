"""The masked head projection (uqcore.nets.projection) equals masking the inputs."""

from __future__ import annotations

import pytest
import torch

from uqcore.nets.projection import masked_head_projection


@pytest.mark.parametrize("p", [0.0, 0.1, 0.6])
def test_masked_head_projection_matches_masking_the_inputs(p):
    g = torch.Generator().manual_seed(2)
    n, length, d, groups, d_g = 3, 5, 16, 6, 4
    x = torch.randn(n, length, d, generator=g)
    weight = torch.randn(groups * d_g, d, generator=g)
    bias = torch.randn(groups * d_g, generator=g)
    keep = torch.rand(n, groups, d, generator=g) >= p
    got = masked_head_projection(x, weight, bias, keep, 1 / (1 - p))
    w = weight.view(groups, d_g, d)
    ref = torch.einsum("nld,ngd,ged->nlge", x, keep.float() / (1 - p), w).reshape(n, length, -1)
    assert torch.allclose(got, ref + bias, atol=1e-4)
