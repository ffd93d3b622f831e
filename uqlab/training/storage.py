"""What half-precision storage costs a trained model: its predictions with the float32 weights
against the same weights rounded to float16 (what ``load_checkpoint`` gives back), measured on
the dev split with the same noise (same seed), and recorded in the checkpoint's training info."""

from __future__ import annotations

import copy

import torch

from uqcore.inference.batch_predict import predict_ids

LOGIT_TOLERANCE = 0.02  # the stated bound on max |Δ log p| over dev examples and samples


def rounded_copy(model: torch.nn.Module, dtype: torch.dtype = torch.float16) -> torch.nn.Module:
    """A copy of ``model`` whose stored floating tensors went through ``dtype`` and back to
    float32, exactly as a checkpoint saved as ``dtype`` loads. Frozen parameters (a pretrained
    base's, which the checkpoint does not store) keep their float32 values."""
    out = copy.deepcopy(model)
    with torch.no_grad():
        stored = [p for p in out.parameters() if p.requires_grad] + list(out.buffers())
        for t in stored:
            if t.is_floating_point():
                t.copy_(t.to(dtype).to(t.dtype))
    return out


def storage_check(
    model: torch.nn.Module,
    encoded: tuple[tuple[int, ...], ...],
    dtype: torch.dtype = torch.float16,
    T: int = 2,
    seed: int = 0,
    limit: int = 500,
) -> dict:
    """Compare ``model`` with its ``dtype``-rounded copy on the first ``limit`` rows of
    ``encoded`` (token ids starting with [CLS]), ``T`` samples each with the same ``seed``.

    Returns ``{"dtype", "examples", "samples", "max_abs_log_prob_diff", "max_abs_prob_diff",
    "argmax_agreement", "tolerance"}``: log-probabilities are the logits up to a per-row shift.
    """
    rows = list(encoded[:limit])
    was_training = model.training
    model.eval()
    try:
        full = predict_ids(model, rows, T, seed, noise="stream")  # [T, N, C]
        half = predict_ids(rounded_copy(model, dtype), rows, T, seed, noise="stream")  # [T, N, C]
    finally:
        model.train(was_training)
    tiny = torch.finfo(torch.float32).tiny
    log_diff = (full.clamp_min(tiny).log() - half.clamp_min(tiny).log()).abs().max()
    return {
        "dtype": str(dtype).removeprefix("torch."),
        "examples": len(rows),
        "samples": T,
        "max_abs_log_prob_diff": float(log_diff),
        "max_abs_prob_diff": float((full - half).abs().max()),
        "argmax_agreement": float((full.argmax(-1) == half.argmax(-1)).float().mean()),
        "tolerance": LOGIT_TOLERANCE,
    }
