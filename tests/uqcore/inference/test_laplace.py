"""The Laplace curvature (uqcore.inference.laplace), golden against laplace-torch: the diagonal
GGN of the cross-entropy summed over texts, for the weights the posterior covers."""

from __future__ import annotations

import pytest
import torch
from laplace import DiagLaplace
from torch import nn

from uqcore.build import build_model, frozen_names
from uqcore.config import ModelConfig
from uqcore.inference.laplace import diagonal_ggn, logit_hessian_roots
from uqcore.nets.posterior import posterior_of

# laplace-torch (through torch.jit) warns of its own deprecated calls
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


@pytest.mark.parametrize("probs", [[0.3, 0.7], [0.2, 0.5, 0.3], [0.1, 0.2, 0.3, 0.15, 0.25]])
def test_the_roots_rebuild_the_logit_hessian(probs):
    p = torch.tensor(probs, dtype=torch.float64)
    roots = logit_hessian_roots(p)
    assert roots.shape == (len(probs), len(probs) - 1)  # rank C - 1: one backward pass fewer
    torch.testing.assert_close(roots @ roots.T, torch.diag(p) - torch.outer(p, p))


class _Logits(nn.Module):
    """What laplace-torch calls: token ids (0 = padding) -> logits."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, ids):
        return self.model(ids, ids != 0).logits


def _texts(n: int, vocab: int, seed: int) -> list[list[int]]:
    gen = torch.Generator().manual_seed(seed)
    lengths = torch.randint(2, 9, (n,), generator=gen)
    return [[2, *torch.randint(3, vocab, (int(k),), generator=gen).tolist()] for k in lengths]


def _reference(model, texts) -> torch.Tensor:
    """laplace-torch's diagonal GGN (its default backend, exact Jacobians) over the parameters
    that require grad, in ``named_parameters`` order."""
    ids = torch.zeros(len(texts), max(map(len, texts)), dtype=torch.long)
    for i, row in enumerate(texts):
        ids[i, : len(row)] = torch.tensor(row)
    data = torch.utils.data.TensorDataset(ids, torch.zeros(len(texts), dtype=torch.long))
    la = DiagLaplace(_Logits(model), "classification", prior_precision=1.0)
    la.fit(torch.utils.data.DataLoader(data, batch_size=4))
    return la.posterior_precision - 1.0


@pytest.mark.parametrize(
    "extra",
    [
        {"backbone": "word", "num_classes": 3},  # every weight of a word-level net
        {"backbone": "bert", "num_classes": 2, "adapters": {"rank": 2}},  # adapters + head
    ],
    ids=["word-3-classes", "bert-adapters"],
)
def test_the_curvature_equals_laplace_torch(extra):
    torch.manual_seed(0)
    shape = {"vocab_size": 40, "max_len": 12, "n_layers": 2, "n_heads": 2, "d_model": 16}
    cfg = ModelConfig(family="laplace", d_ff=32, **shape, **extra)
    model = build_model(cfg)
    for name, p in model.named_parameters():  # B starts at 0: give the adapters a direction
        if name.endswith("lora_b"):
            nn.init.normal_(p, std=0.1)
    texts = _texts(10, cfg.vocab_size, seed=1)
    mine = diagonal_ggn(model, texts)
    covered = posterior_of(model).names
    frozen = frozen_names(cfg)
    for name, p in model.named_parameters():  # laplace-torch fits what requires grad
        p.requires_grad_(name not in frozen)
    ref = _reference(model, texts)
    order = [n for n, p in model.named_parameters() if p.requires_grad]
    assert sorted(order) == sorted(covered)
    flat = torch.cat([mine[n].flatten() for n in order])
    assert flat.shape == ref.shape and float(flat.abs().max()) > 1.0  # not all zero
    torch.testing.assert_close(flat, ref, rtol=1e-5, atol=1e-5)


def test_the_fit_leaves_the_model_as_it_was():
    torch.manual_seed(0)
    cfg = ModelConfig(family="laplace", vocab_size=30, n_layers=1, n_heads=2, d_model=8, d_ff=16)
    model = build_model(cfg)
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    flags = {n: p.requires_grad for n, p in model.named_parameters()}
    diagonal_ggn(model, _texts(3, 30, seed=2))
    assert all(torch.equal(p, before[n]) for n, p in model.named_parameters())
    assert {n: p.requires_grad for n, p in model.named_parameters()} == flags
    assert all(p.grad is None for p in model.parameters())
    with pytest.raises(ValueError, match="laplace"):
        diagonal_ggn(build_model(cfg.replace(family="trans")), [[2, 3]])
