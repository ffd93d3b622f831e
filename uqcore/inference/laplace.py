"""The curvature of a Laplace approximation: the diagonal of the generalised Gauss-Newton matrix
(GGN) of the cross-entropy over a set of labelled texts, for the weights a
:class:`uqcore.nets.posterior.Posterior` covers.

For one text with logits ``f`` and class probabilities ``p``, the cross-entropy's Hessian in the
logits is ``L = diag(p) - p p^T`` and the GGN is ``J^T L J`` (``J``: the Jacobian of ``f`` in the
weights). Its diagonal is ``sum_k (J^T u_k)^2`` over the columns ``u_k = sqrt(l_k) v_k`` of
``L``'s eigendecomposition (``C - 1`` columns with a non-zero eigenvalue for ``C`` classes: one
backward pass each, one in all for two classes). The sum over texts is the curvature ``H`` (the
training loss is a sum: laplace-torch's convention, against which ``tests/uqcore/inference/
test_laplace.py`` checks it). It does not depend on the labels: the GGN of the cross-entropy is
the Fisher information of the model's own predictive.

Texts run one at a time (each at its own length, no padding): the squares need per-text
gradients, which a batched backward pass sums away. Dropout is off (the trained model's curvature).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable

import torch
from torch import nn

from uqcore.nets.posterior import posterior_of
from uqcore.settings import ForwardSettings, resolve


def logit_hessian_roots(probs: torch.Tensor) -> torch.Tensor:
    """``[C, K]`` columns ``u_k`` with ``sum_k u_k u_k^T = diag(p) - p p^T`` for ``probs [C]``
    (float64; the eigenvectors of a non-zero eigenvalue scaled by its square root)."""
    p = probs.double()
    hessian = torch.diag(p) - torch.outer(p, p)  # [C, C]
    values, vectors = torch.linalg.eigh(hessian)
    keep = values > 1e-12 * max(float(values.max()), 1e-300)
    return vectors[:, keep] * values[keep].sqrt()  # [C, K]


def diagonal_ggn(
    model: nn.Module,
    texts: Iterable[list[int]],
    settings: ForwardSettings | None = None,
    progress: Callable[[int], None] | None = None,
) -> dict[str, torch.Tensor]:
    """``{name: H}`` for every parameter the model's posterior covers: the GGN diagonal summed
    over ``texts`` (token-id rows, each read alone). ``progress(1)`` after each text. The model's
    weights are unchanged; gradients are taken for the covered parameters only."""
    posterior = posterior_of(model)
    if posterior is None:
        raise ValueError("diagonal_ggn needs a model with a weight posterior (family 'laplace').")
    named = dict(model.named_parameters())
    params = [named[n] for n in posterior.names]
    before = {n: p.requires_grad for n, p in named.items()}
    fs = dataclasses.replace(resolve(model.cfg) if settings is None else settings, dropout_on=False)
    total = [torch.zeros_like(p, dtype=torch.float64) for p in params]
    device = params[0].device
    try:
        for n, p in named.items():
            p.requires_grad_(n in posterior.names)
        for row in texts:
            ids = torch.tensor([row], dtype=torch.long, device=device)  # [1, L]
            logits = model(ids, torch.ones_like(ids, dtype=torch.bool), fs).logits[0]  # [C]
            roots = logit_hessian_roots(torch.softmax(logits.detach(), -1)).to(logits.dtype)
            for k in range(roots.shape[1]):
                grads = torch.autograd.grad(
                    logits @ roots[:, k], params, retain_graph=k + 1 < roots.shape[1]
                )
                for acc, g in zip(total, grads, strict=True):
                    acc.add_(g.double().square())
            if progress is not None:
                progress(1)
    finally:
        for n, p in named.items():
            p.requires_grad_(before[n])
    return {n: t.float() for n, t in zip(posterior.names, total, strict=True)}
