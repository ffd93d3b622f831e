"""uqcore.inference.batch_predict: batches chosen for speed never change a text's numbers; the cost
model's batches cover every row once. The short-row softmax: test_kernels.py."""

from __future__ import annotations

import random

import pytest
import torch

from uqcore.build import build_model
from uqcore.config import ModelConfig
from uqcore.inference.batch_predict import (
    batch_plan,
    length_batches,
    pad,
    predict_ids,
    sample_rows,
)
from uqcore.inference.sampling import sample


def _cost(batches, lengths, T, call_cost):
    return sum(call_cost + len(b) * max(lengths[i] for i in b) * T for b in batches)


@pytest.mark.parametrize("seed", range(5))
def test_length_batches_cover_every_row_once_and_cost_no_more_than_fixed_chunks(seed):
    rng = random.Random(seed)
    lengths = [rng.choice((3, 4, 5, 9, 12, 30, 47)) for _ in range(rng.randint(1, 300))]
    batches = length_batches(lengths, max_rows=64, T=10, call_cost=100)
    flat = [i for b in batches for i in b]
    assert sorted(flat) == list(range(len(lengths)))  # every row, once
    assert all(1 <= len(b) <= 64 for b in batches)
    seen = [lengths[i] for i in flat]
    assert seen == sorted(seen)  # shortest first
    order = sorted(range(len(lengths)), key=lambda i: lengths[i])
    fixed = [order[s : s + 64] for s in range(0, len(order), 64)]
    assert _cost(batches, lengths, 10, 100) <= _cost(fixed, lengths, 10, 100)


def test_length_batches_split_where_the_length_jumps():
    # 60 short texts and 4 long ones: one batch of 64 would pad every short text to 40 tokens
    lengths = [5] * 60 + [40] * 4
    batches = length_batches(lengths, max_rows=64, T=10, call_cost=100)
    assert [len(b) for b in batches] == [60, 4]
    assert length_batches([], 64) == []


def test_a_texts_numbers_do_not_depend_on_the_batches_chosen():
    cfg = ModelConfig(
        family="hsto",
        vocab_size=50,
        num_classes=2,
        max_len=24,
        n_layers=2,
        n_heads=2,
        d_model=16,
        d_ff=32,
    )
    torch.manual_seed(0)
    model = build_model(cfg).eval()
    rng = random.Random(1)
    rows = [[1] + [rng.randrange(4, 50) for _ in range(rng.randint(1, 20))] for _ in range(40)]
    together = predict_ids(model, rows, T=5, seed=3)  # [T, N, C], batches by the cost model
    small = predict_ids(model, rows, T=5, seed=3, rows=3)  # other batches
    assert torch.allclose(together, small, atol=1e-6)
    ids, mask = pad([rows[7]], len(rows[7]))
    alone = sample(model, ids, mask, T=5, seed=3).probs[:, 0]  # [T, C]
    assert torch.allclose(together[:, 7], alone, atol=1e-6)
    # one batch of predict_ids's, as sample_rows computes it on its own: the same numbers
    batches = batch_plan(model, rows, 5)
    chunk = batches[len(batches) // 2]
    assert torch.equal(sample_rows(model, rows, chunk, 5, 3).probs, together[:, chunk])


@pytest.mark.parametrize("n_layers", [1, 2])  # the grid folds / runs one value at a time
def test_a_grid_gives_each_setting_what_predict_ids_gives(n_layers):
    from uqcore.inference.batch_predict import predict_grid_ids
    from uqcore.settings import SamplingSettings, resolve

    cfg = ModelConfig(
        family="hsto", vocab_size=40, max_len=32, n_layers=n_layers, n_heads=2, d_model=16, d_ff=16
    )
    torch.manual_seed(0)
    model = build_model(cfg).eval()
    rng = random.Random(1)
    encoded = [[2] + [rng.randint(4, 39) for _ in range(rng.randint(0, 25))] for _ in range(40)]
    grid = [resolve(cfg, SamplingSettings(tau1=t)) for t in (0.3, 3.0, 30.0)]
    seen = []

    class Bar:
        def update(self, n):
            seen.append(n)

    probs, logits = predict_grid_ids(model, encoded, 4, 5, grid, rows=8, bar=Bar())
    assert probs.shape == logits.shape == (3, 4, 40, 2) and sum(seen) == 40
    for g, s in enumerate(grid):
        alone, raw = predict_ids(model, encoded, 4, 5, settings=s, with_logits=True)
        torch.testing.assert_close(probs[g], alone, atol=1e-6, rtol=0)
        torch.testing.assert_close(logits[g], raw, atol=1e-5, rtol=0)


def test_a_grid_split_across_cores_gives_what_one_pool_gives(monkeypatch):
    """The sweep's batches on one worker thread per core (uqcore.runtime.across_cores): the same
    numbers as one after another on one pool of threads, within float rounding, the bar told
    each batch in order."""
    import uqcore.runtime as runtime
    from uqcore.inference.batch_predict import predict_grid_ids
    from uqcore.settings import SamplingSettings, resolve

    cfg = ModelConfig(family="hsto", vocab_size=40, max_len=32, n_layers=1, n_heads=2, d_model=16)
    torch.manual_seed(0)
    model = build_model(cfg).eval()
    rng = random.Random(2)
    encoded = [[2] + [rng.randint(4, 39) for _ in range(rng.randint(0, 30))] for _ in range(30)]
    grid = [resolve(cfg, SamplingSettings(tau2=t)) for t in (0.5, 1.0, 8.0)]
    split = predict_grid_ids(model, encoded, 3, 1, grid, rows=4)
    assert torch.equal(split[0], predict_grid_ids(model, encoded, 3, 1, grid, rows=4)[0])
    monkeypatch.setattr(runtime, "SPLIT_ACROSS_CORES", False)
    pooled = predict_grid_ids(model, encoded, 3, 1, grid, rows=4)
    torch.testing.assert_close(split[0], pooled[0], atol=1e-6, rtol=0)
    torch.testing.assert_close(split[1], pooled[1], atol=1e-5, rtol=0)


@pytest.mark.parametrize("family", ["hsto", "ensemble"])
def test_only_a_model_threads_may_share_runs_its_batches_across_cores(family, monkeypatch):
    """A deep ensemble's (and a weight posterior's) passes swap the module's parameters through
    torch.func.functional_call for their duration: two threads at once would read each other's
    weights, so those batches run one after another in the caller."""
    import uqcore.inference.batch_predict as bp
    from uqcore.settings import SamplingSettings, resolve

    cfg = ModelConfig(family=family, vocab_size=40, max_len=32, n_layers=1, n_heads=2, d_model=16)
    cfg = cfg.replace(ensemble_size=2) if family == "ensemble" else cfg
    torch.manual_seed(0)
    model = build_model(cfg).eval()
    split = []
    real = bp.across_cores
    monkeypatch.setattr(bp, "across_cores", lambda *a, **k: split.append(1) or real(*a, **k))
    encoded = [[2] + [random.Random(i).randint(4, 39) for _ in range(i % 9)] for i in range(12)]
    grid = [resolve(cfg, SamplingSettings(tau2=t)) for t in (0.5, 2.0)]
    probs, _ = bp.predict_grid_ids(model, encoded, 2, 1, grid, rows=4)
    assert bp.one_network(model) is (family == "hsto") and bool(split) is (family == "hsto")
    for g, s in enumerate(grid):  # either way the numbers of predict_ids
        torch.testing.assert_close(probs[g], predict_ids(model, encoded, 2, 1, settings=s))
