"""tools.bench_int8_embeddings: the rounding it measures is int8 with a scale per row, and a bad
checkpoint name gets one line and exit 2."""

from __future__ import annotations

import torch

from tools.bench_int8_embeddings import int8_rows, main


def test_each_entry_moves_by_at_most_half_a_step_and_keeps_256_levels_a_row():
    w = torch.randn(50, 16) * torch.linspace(0.01, 3.0, 50)[:, None]  # rows of every scale
    back = int8_rows(w)
    step = (w.abs().amax(1, keepdim=True) / 127).half().float()  # [50, 1]
    assert ((back - w).abs() <= step / 2 + 1e-6).all()
    assert ((back / step).round() - back / step).abs().max() < 1e-3  # whole steps
    assert (back / step).abs().max() <= 127 + 1e-3
    assert int8_rows(torch.zeros(2, 3)).abs().max() == 0  # an all-zero row stays zero


def test_an_unknown_checkpoint_is_one_line_and_exit_2(capsys):
    assert main(["--ckpt", "no-such-checkpoint", "--texts", "2", "--T", "1"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error:") and "Traceback" not in err
