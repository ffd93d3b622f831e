"""python -m uqlab.laplace: a Laplace posterior fitted post hoc around a trained checkpoint, its
prior precision chosen on dev, written as a checkpoint that every command and page reads."""

from __future__ import annotations

import json

import pytest
import torch

from tests.helpers import TINY, evaluate_tiny
from uqcore.checkpoint import load_checkpoint
from uqcore.inference.laplace import diagonal_ggn
from uqcore.nets.posterior import posterior_of
from uqlab.laplace import GRID, default_name, laplace_model
from uqlab.laplace import main as laplace_main
from uqlab.train import main as train_main


@pytest.fixture(scope="module")
def trained(tmp_path_factory, data_dir):
    root = tmp_path_factory.mktemp("laplace")
    mp = pytest.MonkeyPatch()
    mp.setenv("UQ_DATA_DIR", str(data_dir))
    for family in ("trans", "hsto"):
        out = root / f"cola-{family}"
        assert train_main(["--task", "cola", "--family", family, "--out", str(out), *TINY]) == 0
    mp.undo()
    return root


def _fit(root, data_dir, *extra) -> int:
    args = ["--root", str(root), "--data-dir", str(data_dir), "--quiet", "--rows", "24"]
    return laplace_main([*args, "--dev-rows", "16", "--samples", "3", *extra])


def test_it_writes_a_laplace_checkpoint_with_its_prior_chosen_on_dev(trained, data_dir, capsys):
    assert _fit(trained, data_dir, "--ckpt", "cola-trans") == 0
    out = capsys.readouterr().out
    assert "cola-laplace: prior precision" in out
    # the mean is the trained weights, byte for byte: read from the source's file, not copied
    assert "cola-laplace now reads the weights of cola-trans" in out
    assert not (trained / "cola-laplace" / "model.safetensors").exists()
    assert (trained / "cola-laplace" / "posterior.safetensors").is_file()
    ck = load_checkpoint(trained / "cola-laplace", shared_weights=True)
    source = load_checkpoint(trained / "cola-trans", merge=False)
    assert ck.config.family == "laplace" and ck.config.attention.fit_rows == 24
    record = ck.training["laplace"]
    assert record["source"] == "cola-trans" and record["prior_chosen_on"] == "dev"
    assert [r["prior_precision"] for r in record["dev"]] == [None, *GRID]
    best = min(record["dev"][1:], key=lambda r: (r["dev_nll"], -r["prior_precision"]))
    assert (
        ck.config.attention.prior_precision == record["prior_precision"] == best["prior_precision"]
    )
    for name, p in source.model.named_parameters():  # the trained weights are the mean
        torch.testing.assert_close(dict(ck.model.named_parameters())[name], p)
    post = posterior_of(ck.model)
    assert sum(float(post.curvature(n).sum()) for n in post.names) > 0
    assert "chosen on dev" in ck.card and "python -m uqlab.laplace" in ck.card


def test_the_stored_curvature_is_the_fit_over_the_rows_it_names(trained, data_dir):
    ck = load_checkpoint(trained / "cola-laplace", shared_weights=True)
    from uqlab.data import load_task
    from uqlab.laplace import _part

    data = load_task("cola", data_dir, split_seed=0)
    rows = _part(len(data.train), 24, 0)
    ids = [
        ck.vocab.encode(data.train.texts[i], ck.read_len, allow_all_unknown=True).ids for i in rows
    ]
    again = diagonal_ggn(laplace_model(load_checkpoint(trained / "cola-trans", merge=False)), ids)
    post = posterior_of(ck.model)
    for name in post.names:
        torch.testing.assert_close(post.curvature(name), again[name], rtol=1e-5, atol=1e-6)


def test_the_laplace_checkpoint_evaluates_like_any_other(trained, data_dir):
    m = evaluate_tiny(trained / "cola-laplace", data_dir)
    assert m["family"] == "laplace"
    assert m["id"]["mean_mutual_information"] > 0  # weight draws disagree
    stored = json.loads((trained / "cola-laplace" / "config.json").read_text())
    assert stored["model"]["family"] == "laplace"


def test_a_source_that_is_not_one_softmax_model_is_refused(trained, data_dir, capsys):
    before = sorted(p.name for p in trained.iterdir())
    assert _fit(trained, data_dir, "--ckpt", "cola-hsto") == 2
    err = capsys.readouterr().err
    assert "deterministic softmax model" in err and "Traceback" not in err
    assert sorted(p.name for p in trained.iterdir()) == before  # nothing written


def test_training_a_laplace_model_is_refused_with_what_to_do(tmp_path, data_dir, capsys):
    out = tmp_path / "x"
    args = ["--task", "cola", "--family", "laplace", "--out", str(out), "--data-dir", str(data_dir)]
    assert train_main([*args, *TINY]) == 2
    assert "python -m uqlab.laplace" in capsys.readouterr().err and not out.exists()


@pytest.mark.parametrize(
    "name, expected",
    [("cr-minilm-trans", "cr-minilm-laplace"), ("cola-mcdropout", "cola-mcdropout-laplace")],
)
def test_default_names(name, expected):
    assert default_name(name) == expected


def test_a_grid_of_ones_choice(trained, data_dir, tmp_path):
    out = tmp_path / "out"
    args = ["--ckpt", "cola-trans", "--grid", "1,100", "--out-root", str(out)]
    assert _fit(trained, data_dir, *args) == 0
    ck = load_checkpoint(out / "cola-laplace")  # another folder: its own copy of the weights
    assert [r["prior_precision"] for r in ck.training["laplace"]["dev"]] == [None, 1.0, 100.0]
    for bad in ("a,b", "0,1", "-1", "inf"):
        with pytest.raises(SystemExit):
            _fit(trained, data_dir, "--ckpt", "cola-trans", "--grid", bad)


def test_from_block_fits_a_posterior_over_that_block_up_and_the_head(
    trained, data_dir, tmp_path, capsys
):
    out = tmp_path / "sub"
    args = ["--ckpt", "cola-trans", "--grid", "1,100", "--out-root", str(out), "--from-block", "0"]
    assert _fit(trained, data_dir, *args) == 0
    ck = load_checkpoint(out / "cola-laplace")
    names = posterior_of(ck.model).names
    whole = posterior_of(load_checkpoint(trained / "cola-laplace", shared_weights=True).model)
    assert set(names) == {n for n in whole.names if n.startswith(("layers.0.", "head."))}
    assert set(names) < set(whole.names)  # the embeddings keep their trained weights
    assert ck.config.attention.from_block == 0 and ck.config.stochastic_layers == (0,)
    record = ck.training["laplace"]
    assert record["from_block"] == 0 and record["parameters"] == sum(
        posterior_of(ck.model).curvature(n).numel() for n in names
    )
    assert "those of block 0 up and the head" in ck.card and "--from-block 0" in ck.card
    capsys.readouterr()
    before = sorted(p.name for p in out.iterdir())
    args = ["--ckpt", "cola-trans", "--out-root", str(out), "--out", "other", "--from-block", "1"]
    assert _fit(trained, data_dir, *args) == 2  # the source has one block
    err = capsys.readouterr().err
    assert "from_block 1 is not a block" in err and "Traceback" not in err
    assert sorted(p.name for p in out.iterdir()) == before  # nothing written
    with pytest.raises(SystemExit):
        _fit(trained, data_dir, "--ckpt", "cola-trans", "--from-block", "-1")


def test_the_blocks_below_the_posterior_run_once_for_the_whole_grid(
    tmp_path, data_dir, monkeypatch
):
    """With ``from_block`` above 0 the prior's search computes each dev text's states below the
    covered block once and reuses them for every precision; its figures are those of fresh
    passes (a cache that keeps nothing)."""
    import uqlab.laplace as lap
    from uqlab.data import load_task

    out = tmp_path / "cola-trans"
    monkeypatch.setenv("UQ_DATA_DIR", str(data_dir))
    train = ["--task", "cola", "--family", "trans", "--out", str(out), *TINY]
    assert train_main([*train, "--set", "model.n_layers=2"]) == 0
    ck = load_checkpoint(out, merge=False)
    model = lap.laplace_model(ck, from_block=1)
    data = load_task("cola", data_dir, split_seed=0)
    ids = lap._encode(ck, data.train.texts[:24])
    posterior_of(model).set_curvature(diagonal_ggn(model, ids))
    lap.with_prior(model, 1.0, len(ids))
    dev, labels = lap._encode(ck, data.dev.texts[:16]), data.dev.labels[:16]
    opts = lap.FitOptions(dev_rows=16, samples=3, grid=(1.0, 100.0, 1e4))
    caches = []

    class Spy(lap.PrefixCache):
        def __init__(self, budget: int):
            super().__init__(budget)
            caches.append(self)

    monkeypatch.setattr(lap, "PrefixCache", Spy)
    kept = lap.choose_prior(model, dev, labels, opts)
    (cache,) = caches
    assert cache.misses == len(dev) and cache.hits == len(opts.grid) * len(dev)
    monkeypatch.setattr(lap, "GRID_BUDGET", 0)  # nothing kept: every pass computed whole
    fresh = lap.choose_prior(model, dev, labels, opts)
    assert caches[1].hits == 0 and kept[0] == fresh[0]
    for a, b in zip(kept[1], fresh[1], strict=True):
        assert a["prior_precision"] == b["prior_precision"]
        assert a["dev_nll"] == pytest.approx(b["dev_nll"], abs=2e-5)
        assert a["dev_accuracy"] == b["dev_accuracy"]
