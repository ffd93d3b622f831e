"""Budgets from the config before anything is built (uqcore.budget): hostile configs (10^6
layers of width 2; 49M words of width 4, 196M parameters, under the parameter limit) are refused
through the upload and the command line before ``build_model`` runs; every shipped checkpoint
fits; a good upload builds its model once."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

import uqcore.build
from tests.helpers import zip_folder
from uqcore.budget import DEFAULT_BUDGET, Budget, check_budget, model_bytes
from uqcore.checkpoint import read_checkpoint_info, save_checkpoint
from uqcore.config import ModelConfig
from uqcore.exceptions import CheckpointError
from uqcore.text.vocab import Vocab

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = sorted(p for p in (ROOT / "assets" / "checkpoints").iterdir() if p.is_dir())
HOSTILE = {  # the two configs of issue 31, on a tiny BERT folder
    "layers": {
        "num_hidden_layers": 10**6,
        "hidden_size": 2,
        "num_attention_heads": 1,
        "intermediate_size": 2,
    },
    "vocab": {
        "vocab_size": 49_000_000,
        "hidden_size": 4,
        "num_attention_heads": 1,
        "intermediate_size": 4,
    },
}
MESSAGES = {"layers": "1,000,000 layers.*at most 48", "vocab": "49,000,000 vocabulary.*262,144"}


@pytest.fixture
def builds(monkeypatch):
    """Every model built, with whether it allocated: a call of build_model (under every name it
    was imported as) on the meta device only describes shapes; a call of build_unset allocates
    once, whatever build_model calls it makes inside."""
    calls: list[bool] = []
    original = uqcore.build.build_model
    original_unset = uqcore.build.build_unset

    def recording(cfg):
        model = original(cfg)
        calls.append(next(model.parameters()).device.type != "meta")
        return model

    def recording_unset(cfg):
        before = len(calls)
        model = original_unset(cfg)
        del calls[before:]  # its inner build_model calls are one allocation, counted here
        calls.append(next(model.parameters()).device.type != "meta")
        return model

    for module in list(sys.modules.values()):
        if getattr(module, "build_model", None) is original:
            monkeypatch.setattr(module, "build_model", recording)
        if getattr(module, "build_unset", None) is original_unset:
            monkeypatch.setattr(module, "build_unset", recording_unset)
    return calls


@pytest.fixture
def no_build(monkeypatch):
    """build_model (and build_one) raise: a hostile config must be refused before them."""
    calls: list[str] = []

    def refuse(cfg, *args, **kwargs):
        calls.append(f"{cfg.n_layers} layers, vocab {cfg.vocab_size}")
        raise AssertionError("build_model was called for a hostile config")

    for name in ("build_model", "build_one"):
        original = getattr(uqcore.build, name)
        for module in list(sys.modules.values()):
            if getattr(module, name, None) is original:
                monkeypatch.setattr(module, name, refuse)
    return calls


@pytest.fixture(scope="module")
def hf_good(tmp_path_factory):
    pytest.importorskip("transformers")
    from tests.hf_tiny import tiny_folder

    return tiny_folder("bert", tmp_path_factory.mktemp("hf") / "tiny-bert")


def _hostile_folder(good: Path, out: Path, change: dict) -> Path:
    out.mkdir(parents=True)
    for f in good.iterdir():
        (out / f.name).write_bytes(f.read_bytes())
    hf = json.loads((good / "config.json").read_text())
    (out / "config.json").write_text(json.dumps({**hf, **change}))
    return out


# ------------------------------------------------------------------------------- hostile configs
@pytest.mark.parametrize("case", HOSTILE)
def test_a_hostile_hf_upload_is_refused_before_build_model(case, hf_good, tmp_path, no_build):
    from uqlab.models.intake import UploadError, files_from_zip, install

    folder = _hostile_folder(hf_good, tmp_path / "src" / "hostile", HOSTILE[case])
    uploads = tmp_path / "uploads"
    uploads.mkdir()
    with pytest.raises(UploadError, match=MESSAGES[case]):
        install(files_from_zip(zip_folder(folder)), "hostile", uploads, task="cola", family="sto")
    assert no_build == []
    assert not any(uploads.iterdir())


@pytest.mark.parametrize("case", HOSTILE)
def test_a_hostile_hf_folder_is_refused_by_the_command_line(
    case, hf_good, tmp_path, no_build, capsys
):
    from uqlab.import_hf import main

    folder = _hostile_folder(hf_good, tmp_path / "hostile", HOSTILE[case])
    root = tmp_path / "checkpoints"
    root.mkdir()
    assert main([str(folder), "--name", "x", "--task", "cola", "--root", str(root)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: config.json describes") and "Budget" in err
    assert no_build == []
    assert not any(root.iterdir())


def _project_checkpoint(folder: Path) -> Path:
    """A tiny word-level checkpoint of width 4 (its n_layers then rewritten)."""
    cfg = ModelConfig(vocab_size=8, max_len=8, n_layers=1, n_heads=1, d_model=4, d_ff=4)
    model = uqcore.build.build_model(cfg)
    vocab = Vocab(["a", "b", "c"])
    return save_checkpoint(folder, model, cfg, vocab, training={"task": "cola"})


def test_a_project_checkpoint_of_a_million_layers_is_refused_before_build_model(
    tmp_path, monkeypatch
):
    """Width 4 keeps 10^6 layers at 136M parameters, under the 200M limit: only the layer
    budget stops it."""
    from uqlab.models.intake import UploadError, install

    src = _project_checkpoint(tmp_path / "src")
    doc = json.loads((src / "config.json").read_text())
    doc["model"]["n_layers"] = 10**6
    files = {f.name: f.read_bytes() for f in src.iterdir()}
    files["config.json"] = json.dumps(doc).encode()
    assert ModelConfig.from_dict(doc["model"]).n_parameters() < DEFAULT_BUDGET.max_parameters
    uploads = tmp_path / "uploads"
    uploads.mkdir()
    calls = []
    for module in list(sys.modules.values()):
        if getattr(module, "build_model", None) is uqcore.build.build_model:
            monkeypatch.setattr(module, "build_model", lambda cfg: calls.append(cfg) or 1 / 0)
    with pytest.raises(UploadError, match="1,000,000 layers") as err:
        install(files, "deep", uploads)
    assert "/tmp" not in str(err.value) and str(tmp_path) not in str(err.value)
    assert calls == []
    assert not any(uploads.iterdir())


def test_each_limit_is_named_with_what_to_do():
    base = ModelConfig(vocab_size=100, max_len=16, n_layers=2, n_heads=2, d_model=8, d_ff=16)
    check_budget(base)
    for change, limit in [
        (dict(n_layers=49), "max_layers"),
        (dict(d_model=4100, n_heads=2), "max_d_model"),
        (dict(d_ff=20000), "max_d_ff"),
        (dict(n_heads=128, d_model=128), "max_heads"),
        (dict(max_len=10000), "max_positions"),
        (dict(num_classes=1001), "max_classes"),
    ]:
        with pytest.raises(CheckpointError, match=f"Budget.{limit}.*smaller model"):
            check_budget(base.replace(**change))
    hsto = base.replace(family="hsto", attention={"n_centroids": 5000})
    with pytest.raises(CheckpointError, match="attention.n_centroids.*max_structure"):
        check_budget(hsto)
    with pytest.raises(CheckpointError, match="MB in memory.*max_bytes"):
        check_budget(base, Budget(max_bytes=2**16))


def test_a_pad_id_is_bounded_by_the_vocabulary_not_by_max_structure():
    """A Llama 3 classifier pads with id 128,004: a token id, not a structure number."""
    doc = {"backbone": "llama", "vocab_size": 128_256, "n_heads": 4, "d_model": 32, "max_len": 16}
    doc["backbone_params"] = {"n_kv_heads": 2, "pool_skip_id": 128_004}
    check_budget(ModelConfig.from_dict(doc))
    doc["backbone_params"]["n_kv_heads"] = 5000  # a structure number stays bounded
    with pytest.raises(CheckpointError, match="n_kv_heads.*max_structure"):
        check_budget(ModelConfig.from_dict(doc))


def test_a_laplace_fit_over_many_texts_is_a_record_not_a_structure_number():
    """Issue 47: a Laplace posterior fitted over CoLA's 6,354 training texts was refused as if
    ``fit_rows`` sized the model (its command had already written the checkpoint)."""
    base = ModelConfig(vocab_size=100, max_len=16, n_layers=2, n_heads=2, d_model=8, d_ff=16)
    check_budget(base.replace(family="laplace", attention={"fit_rows": 6354}))
    check_budget(base.replace(family="laplace", attention={"fit_rows": 10**9}))


# ------------------------------------------------------------------------------ what must pass
@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.name)
def test_every_shipped_checkpoint_and_its_config_file_fit_the_budget(path):
    from uqlab.training.recipe import build_config

    info = read_checkpoint_info(path, shared_weights=True)
    cfg = ModelConfig.from_dict(info["config"])
    assert check_budget(cfg) is cfg
    if isinstance(info["training"].get("prompt"), dict):
        return  # zero-shot (uqlab.label_words): made by a command, no config file
    if isinstance(info["training"].get("laplace"), dict):
        return  # fitted around a shipped checkpoint (uqlab.laplace), whose config is checked
    file = ROOT / "configs" / f"{path.name}.json"
    trained = info["training"]["config"]
    built = build_config(trained["task"], trained["family"], "out", config_file=str(file))
    check_budget(built.model_config(vocab_size=cfg.vocab_size))


@pytest.mark.parametrize(
    "fields",
    [
        dict(
            backbone="bert",
            vocab_size=30522,
            max_len=512,
            n_layers=12,
            n_heads=12,
            d_model=768,
            d_ff=3072,
        ),
        dict(
            backbone="roberta",
            vocab_size=50265,
            max_len=512,
            n_layers=12,
            n_heads=12,
            d_model=768,
            d_ff=3072,
        ),
        dict(
            backbone="distilbert",
            vocab_size=30522,
            max_len=512,
            n_layers=6,
            n_heads=12,
            d_model=768,
            d_ff=3072,
        ),
        dict(
            backbone="bert",
            vocab_size=30522,
            max_len=512,
            n_layers=48,
            n_heads=8,
            d_model=512,
            d_ff=2048,
            family="hsto",
            attention={"n_centroids": 64},
        ),  # the most layers
        dict(
            backbone="bert",
            vocab_size=8000,
            max_len=512,
            n_layers=1,
            n_heads=64,
            d_model=4096,
            d_ff=8192,
        ),  # the widest
    ],
)
def test_base_size_classifiers_fit(fields):
    cfg = ModelConfig.from_dict({"family": "trans", **fields})
    assert check_budget(cfg) is cfg
    assert model_bytes(cfg) < DEFAULT_BUDGET.max_bytes


def test_model_bytes_is_the_parameters_plus_the_measured_module_overhead():
    """The estimate against what a build holds: its parameters, plus the overhead per layer."""
    cfg = ModelConfig(
        family="bam", vocab_size=50, max_len=16, n_layers=3, n_heads=2, d_model=8, d_ff=16
    )
    params = sum(p.numel() for p in uqcore.build.build_model(cfg).parameters())
    from uqcore.budget import LAYER_OVERHEAD_BYTES

    estimate = model_bytes(cfg) - 3 * LAYER_OVERHEAD_BYTES
    assert 4 * params <= estimate <= 1.05 * 4 * params  # an upper bound, within 5%


def test_a_good_hf_upload_builds_its_model_once(hf_good, tmp_path, builds):
    from uqlab.models.intake import files_from_zip, install

    name = install(files_from_zip(zip_folder(hf_good)), "good", tmp_path, task="cola", family="bam")
    assert builds.count(True) == 1, builds  # the strict load; the save describes shapes only
    assert (tmp_path / name / "config.json").is_file()


def test_a_good_project_upload_builds_its_model_once(tmp_path, builds):
    from uqlab.models.intake import install

    src = _project_checkpoint(tmp_path / "src")
    builds.clear()
    install({f.name: f.read_bytes() for f in src.iterdir()}, "tiny", tmp_path / "up")
    assert builds.count(True) == 1, builds


def test_an_adapter_ensemble_counts_its_pretrained_base_once():
    """Issue 47: the members of an ensemble on a pretrained base point at one copy of it
    (uqcore.readers.base_model.share_base), so five SmolLM2 members with the shipped adapters
    fit the default budget though five whole decoders would not; the weights their adapters are
    merged into count once per member, and eight members are refused. A word-level ensemble
    holds every member whole."""
    from uqcore.budget import held_parameters

    doc = json.loads((ROOT / "assets/checkpoints/cr-smollm2-trans/config.json").read_text())
    one = ModelConfig.from_dict(doc["model"])
    five = one.replace(family="ensemble", ensemble_size=5)
    assert five.n_parameters() > DEFAULT_BUDGET.max_parameters  # five whole decoders
    assert check_budget(five) is five and model_bytes(five) < DEFAULT_BUDGET.max_bytes
    own = held_parameters(five.replace(ensemble_size=2)) - held_parameters(one)
    blocks, d = len(one.adapters.layers), one.d_model
    assert blocks * 3 * d * d <= own < one.n_parameters() / 4  # merged qkv, head: not the base
    with pytest.raises(CheckpointError, match="parameters"):
        check_budget(one.replace(family="ensemble", ensemble_size=8))
    shape = {"vocab_size": 50, "max_len": 16, "n_layers": 2, "n_heads": 2, "d_model": 8}
    word = ModelConfig(family="ensemble", ensemble_size=3, d_ff=16, **shape)
    assert held_parameters(word) == word.n_parameters()
