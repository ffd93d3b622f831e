"""Import of Hugging Face classifier folders (uqlab.import_hf): golden tests against
``transformers`` for BERT, RoBERTa and DistilBERT tiny random models (logits and attention maps),
the training-free families at zero noise, and every hostile folder refused with its message."""

from __future__ import annotations

import json

import pytest
import torch

from tests.hf_tiny import ARCHS, reference, tiny_folder
from tests.task_files import tiny_task
from uqcore.checkpoint import load_checkpoint
from uqcore.inference.batch_predict import pad
from uqcore.inference.sampling import Capture, sample
from uqcore.settings import SamplingSettings, resolve
from uqlab import import_hf
from uqlab.import_hf import import_folder, inspect

pytest.importorskip("transformers")

TEXTS = ["the cat sat on the mat .", "a great movie", "no man has ever beaten the centaur ."]


@pytest.fixture(scope="module", params=ARCHS)
def folder(request, tmp_path_factory):
    return tiny_folder(request.param, tmp_path_factory.mktemp(request.param) / "hf")


def _batch(ck, texts=TEXTS):
    rows = [ck.vocab.encode(t, ck.config.max_len).ids for t in texts]
    return pad(rows, max(len(r) for r in rows))


def _theirs(folder, ids, mask):
    ref = reference(folder)
    with torch.no_grad():
        out = ref(input_ids=ids, attention_mask=mask.long(), output_attentions=True)
    return out.logits, out.attentions


def test_logits_and_attention_equal_transformers(folder, tmp_path):
    ck = load_checkpoint(import_folder(folder, "t", "cola", family="trans", root=tmp_path))
    ids, mask = _batch(ck)
    assert not mask.all()  # padding is part of the test
    logits, attentions = _theirs(folder, ids, mask)
    layers = tuple(range(ck.config.n_layers))
    res = sample(ck.model, ids, mask, T=1, seed=0, capture=Capture(layers=layers))
    assert (res.logits[0] - logits).abs().max() < 1e-4
    for layer, theirs in enumerate(attentions):  # [B, H, L, L]
        ours = res.maps[layer].attention[0]  # [B, H, L, L] of sample 0
        real = mask[:, None, :, None] & mask[:, None, None, :]
        assert (ours - theirs).masked_fill(~real, 0).abs().max() < 1e-4


@pytest.mark.parametrize(
    "family, zero",
    [
        ("sto", SamplingSettings(noise_scale=0.0)),
        ("bam", SamplingSettings(noise_scale=0.0)),
        ("mcdropout", SamplingSettings(dropout=0.0)),
    ],
)
def test_training_free_families_are_the_model_at_zero_noise(folder, tmp_path, family, zero):
    ck = load_checkpoint(import_folder(folder, family, "cola", family=family, root=tmp_path))
    ids, mask = _batch(ck)
    logits, _ = _theirs(folder, ids, mask)
    off = resolve(ck.model.cfg, zero)
    still = sample(ck.model, ids, mask, T=4, settings=off, seed=3).logits  # [T, B, C]
    assert (still - logits).abs().max() < 1e-4
    noisy = sample(ck.model, ids, mask, T=4, seed=3).logits
    assert (noisy[0] - noisy[1]).abs().max() > 1e-6  # the default settings do draw noise


# ------------------------------------------------------------------------------ hostile folders
@pytest.fixture(scope="module")
def good(tmp_path_factory):
    return tiny_folder("bert", tmp_path_factory.mktemp("good") / "hf")


def _copy(good, tmp_path, config=None, drop=()):
    import shutil

    out = tmp_path / "hostile"
    shutil.copytree(good, out)
    for name in drop:
        (out / name).unlink()
    if config is not None:
        hf = json.loads((good / "config.json").read_text())
        (out / "config.json").write_text(json.dumps(config(hf)))
    return out


def _tensors(folder, change):
    from safetensors.torch import load_file, save_file

    tensors = load_file(str(folder / "model.safetensors"))
    change(tensors)
    save_file(tensors, str(folder / "model.safetensors"))


def _nan(tensors):
    tensors["bert.encoder.layer.1.output.dense.weight"][0, 0] = float("nan")


def _drop_row(tensors):
    tensors["classifier.weight"] = tensors["classifier.weight"][:1].clone()
    tensors["classifier.bias"] = tensors["classifier.bias"][:1].clone()


def _case(name, good, tmp_path):
    """Make hostile folder ``name``; return (folder, the message expected)."""
    cfg = lambda change: _copy(good, tmp_path, config=change)  # noqa: E731
    if name == "t5":  # another architecture (decoders of the Llama family and GPT-2 import)
        return cfg(lambda h: {**h, "model_type": "t5"}), "describes a 't5' model"
    if name == "masked_lm":
        return cfg(lambda h: {**h, "architectures": ["BertForMaskedLM"]}), "sequence classifiers"
    if name == "pickle":
        f = _copy(good, tmp_path, drop=("model.safetensors",))
        (f / "pytorch_model.bin").write_bytes(b"\x80\x04not really")
        return f, "pickle"
    if name == "no_tokenizer":
        return _copy(good, tmp_path, drop=("tokenizer.json",)), "No tokenizer.json"
    if name == "activation":
        return cfg(lambda h: {**h, "hidden_act": "relu"}), "GELU"
    if name == "layers":
        return cfg(lambda h: {**h, "num_hidden_layers": 10**6}), "parameters"
    if name == "vocab":
        return cfg(lambda h: {**h, "vocab_size": 10**9}), "parameters"
    if name == "big_tokenizer":
        f = _copy(good, tmp_path)
        with open(f / "tokenizer.json", "r+b") as fh:  # sparse: 1 GB claimed, nothing written
            fh.truncate(2**30)
        return f, "over 64 MB"
    if name == "symlink":
        f = _copy(good, tmp_path)
        (f / "tokenizer.json").rename(f / "real.json")
        (f / "tokenizer.json").symlink_to(f / "real.json")
        return f, "link"
    if name == "labels":
        return cfg(lambda h: {**h, "id2label": {"0": "a", "1": "b", "2": "c"}}), "has 2 rows"
    if name == "no_id2label":
        return cfg(lambda h: {k: v for k, v in h.items() if k != "id2label"}), "no id2label"
    if name == "head_rows":
        f = _copy(good, tmp_path)
        _tensors(f, _drop_row)
        return f, "has 1 rows"
    raise ValueError(name)


INSPECT_CASES = (
    "t5",
    "masked_lm",
    "pickle",
    "no_tokenizer",
    "activation",
    "layers",
    "vocab",
    "big_tokenizer",
    "symlink",
    "labels",
    "no_id2label",
    "head_rows",
)


@pytest.mark.parametrize("case", INSPECT_CASES)
def test_a_hostile_folder_is_refused_before_anything_is_built(case, good, tmp_path):
    from uqcore.exceptions import CheckpointError

    folder, message = _case(case, good, tmp_path)
    root = tmp_path / "checkpoints"
    root.mkdir()
    with pytest.raises(CheckpointError, match=message):
        import_folder(folder, "x", "cola", root=root)
    assert not any(root.iterdir())  # nothing written


@pytest.mark.parametrize(
    "case, message",
    [
        ("nan", "NaN or infinite"),
        ("shapes", "does not fit the config"),
    ],
)
def test_broken_weights_are_refused_and_nothing_is_left(case, message, good, tmp_path):
    from uqcore.exceptions import CheckpointError

    if case == "nan":
        folder = _copy(good, tmp_path)
        _tensors(folder, _nan)
    else:  # the config claims another width than the weights have
        folder = _copy(good, tmp_path, config=lambda h: {**h, "intermediate_size": 40})
    root = tmp_path / "checkpoints"
    root.mkdir()
    with pytest.raises(CheckpointError, match=message):
        import_folder(folder, "x", "cola", root=root)
    assert not any(root.iterdir())


def test_a_changed_folder_is_not_loaded_and_copy_survives_it(good, tmp_path):
    """The reference is by sha256: a folder whose weights change is refused with a message; a
    --copy import keeps float16 weights inside the checkpoint and is unaffected."""
    from uqcore.exceptions import CheckpointError

    folder = _copy(good, tmp_path)
    ref = import_folder(folder, "ref", "cola", family="trans", root=tmp_path)
    copy = import_folder(folder, "copy", "cola", family="trans", root=tmp_path, copy=True)
    ck = load_checkpoint(copy)
    ids, mask = _batch(ck)
    logits, _ = _theirs(folder, ids, mask)
    assert (sample(ck.model, ids, mask, T=1, seed=0).logits[0] - logits).abs().max() < 1e-2
    _tensors(folder, lambda t: t["classifier.bias"].add_(1.0))
    with pytest.raises(CheckpointError, match="changed since this checkpoint was imported"):
        load_checkpoint(ref)
    load_checkpoint(copy)


def test_an_upload_cannot_point_at_a_folder_of_the_server(good, tmp_path):
    from uqcore.exceptions import CheckpointError

    ref = import_folder(good, "ref", "cola", family="trans", root=tmp_path)
    with pytest.raises(CheckpointError, match="folder of the server"):
        load_checkpoint(ref, local_base=False)


def test_inspect_reads_labels_and_shape(good):
    info = inspect(good)
    assert info.labels == ("unacceptable", "acceptable") and info.backbone == "bert"
    assert info.fields["n_layers"] == 2 and info.fields["d_model"] == 32


DEEP = b"[" * 200_000  # under every 1 MB limit; json.loads raises RecursionError on it


def _cli(capsys, main, argv: list[str], *words: str) -> str:
    """``main(argv)`` exits 2 with one line ``error: ...`` naming ``words``, no traceback."""
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and "\n" not in err and "Traceback" not in err, err
    for word in words:
        assert word in err, err
    return err


def test_import_hf_cli_deep_config_and_side_file(capsys, hf_folder, tmp_path):
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "config.json").write_bytes(DEEP)
    (bad / "model.safetensors").write_bytes(b"x")
    argv = ["--name", "x", "--task", "cola", "--root", str(tmp_path / "out")]
    _cli(capsys, import_hf.main, [str(bad), *argv], "config.json", "nested too deeply")
    side = tmp_path / "side"
    side.mkdir()
    for f in hf_folder.iterdir():
        (side / f.name).write_bytes(f.read_bytes())
    (side / "uq_family.json").write_bytes(DEEP)
    _cli(capsys, import_hf.main, [str(side), *argv], "uq_family.json", "nested too deeply")


def test_import_hf_cli_takes_a_task_file_and_records_it_as_training_does(
    capsys, hf_folder, tmp_path, tasks_restored
):
    """Issue 34: ``--task`` offered the built-in tasks only; ``--task-file`` describes one, kept
    in ``training.task_spec`` so evaluate and the app read it without the file."""
    from uqlab.catalog.task_file import register_from_training

    task = tiny_task(tmp_path / "task")
    root = tmp_path / "ck"
    argv = [str(hf_folder), "--name", "mine", "--task-file", str(task), "--root", str(root)]
    assert import_hf.main(argv) == 0, capsys.readouterr().err
    training = json.loads((root / "mine" / "config.json").read_text())["training"]
    assert training["task"] == "tiny-acc"
    assert training["task_spec"] == tasks_restored["tiny-acc"].description
    del tasks_restored["tiny-acc"]  # a later process: the checkpoint alone names the task
    assert register_from_training(load_checkpoint(root / "mine").training) == "tiny-acc"
    assert tasks_restored["tiny-acc"].label_names == ("bad", "good")


def test_import_hf_cli_takes_a_task_a_checkpoint_of_the_folder_describes(
    capsys, hf_folder, tmp_path, tasks_restored
):
    """``--task NAME`` of a task not built in: one a checkpoint of ``--root`` was made with from
    a task file (as CR is, by the shipped cr-minilm-* checkpoints)."""
    task = tiny_task(tmp_path / "task")
    root = tmp_path / "ck"
    first = [str(hf_folder), "--name", "first", "--task-file", str(task), "--root", str(root)]
    assert import_hf.main(first) == 0, capsys.readouterr().err
    del tasks_restored["tiny-acc"]  # a new process knows the built-in tasks only
    second = [str(hf_folder), "--name", "second", "--task", "tiny-acc", "--root", str(root)]
    assert import_hf.main(second) == 0, capsys.readouterr().err
    training = json.loads((root / "second" / "config.json").read_text())["training"]
    assert training["task"] == "tiny-acc" and training["task_spec"]["name"] == "tiny-acc"


def test_import_hf_cli_says_in_one_line_what_is_wrong_with_the_task(
    capsys, hf_folder, tmp_path, tasks_restored
):
    root = tmp_path / "ck"
    argv = [str(hf_folder), "--name", "x", "--root", str(root)]
    _cli(capsys, import_hf.main, [*argv, "--task", "sst2"], "'sst2'", "--task-file")
    bad = tiny_task(tmp_path / "bad", label_names="good")
    _cli(capsys, import_hf.main, [*argv, "--task-file", str(bad)], bad.name)
    deep = tmp_path / "deep.json"
    deep.write_bytes(DEEP)  # the bounds of uqlab.catalog.task_file (uqcore.untrusted)
    _cli(capsys, import_hf.main, [*argv, "--task-file", str(deep)], "deep.json", "too deeply")
    three = tiny_task(tmp_path / "three", "three", label_names=["a", "b", "c"])
    _cli(capsys, import_hf.main, [*argv, "--task-file", str(three)], "2 classes", "'three'")
    _cli(capsys, import_hf.main, [*argv, "--task-file", str(tmp_path / "none.json")], "none.json")
    assert not root.exists() or not any(root.iterdir())  # nothing written


def test_an_upload_of_a_described_task_keeps_no_description(hf_folder, tmp_path, tasks_restored):
    """An upload (the upload page's operator folders) never names a file of the server: no
    ``task_spec`` is kept, even for a task a file described."""
    from uqlab.catalog.task_file import read_task_file
    from uqlab.models.intake import install_hf_folder

    name = read_task_file(tiny_task(tmp_path / "task")).name
    got = install_hf_folder(hf_folder, "mine", tmp_path / "up", task=name, family="trans")
    training = json.loads((tmp_path / "up" / got / "config.json").read_text())["training"]
    assert training["task"] == name and "task_spec" not in training
