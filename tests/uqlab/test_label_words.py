"""Zero-shot label-word checkpoints (uqlab.label_words): on a tiny random LlamaForCausalLM (tied
and untied LM head) the class probabilities equal transformers' next-token probabilities of the
words after the prompt, renormalised over the words; a text cut to the reading length keeps the
whole prompt; the training-free families at zero noise equal the model; bad prompts and words
get a message; the SmolLM2 checkpoint equals transformers' reading of the converted base on ten
sentences (needs the base)."""

from __future__ import annotations

import pytest
import torch

from tests.hf_tiny import tiny_causal_lm_folder
from uqcore.checkpoint import load_checkpoint
from uqcore.exceptions import UQError
from uqcore.inference.batch_predict import pad
from uqcore.inference.sampling import sample
from uqcore.readers.base_model import WEIGHTS, BaseRecord, file_sha256
from uqcore.settings import SamplingSettings, resolve
from uqcore.text.prompt import Prompt
from uqlab.label_words import build_prompt, main, word_ids, write_label_words

tf = pytest.importorskip("transformers")
TEXTS = ("the cat sat on the mat .", "what a terrible , boring film !", "fine")
PROMPT = Prompt("<s>question: {text}\nanswer: ", ("no", "yes"))


def _write(folder, out, family="trans", max_len=40, prompt=PROMPT, **extra):
    record = BaseRecord.for_folder(str(folder), file_sha256(folder / WEIGHTS))
    write_label_words(out, folder, record, "cola", prompt, family=family, max_len=max_len, **extra)
    return load_checkpoint(out)


def _reference(folder, ck, ids):
    """transformers' next-token probabilities of the words' first tokens, renormalised."""
    lm = tf.AutoModelForCausalLM.from_pretrained(str(folder)).eval()
    words = ck.training["label_word_ids"]
    with torch.no_grad():
        logits = lm(input_ids=ids).logits[:, -1, words]  # [B, C]
    return logits.softmax(-1)


@pytest.fixture(scope="module", params=[True, False], ids=["tied", "untied"])
def folder(request, tmp_path_factory):
    return tiny_causal_lm_folder(tmp_path_factory.mktemp("lm") / "base", tied=request.param)


def test_the_class_probabilities_are_the_words_next_token_probabilities(folder, tmp_path):
    ck = _write(folder, tmp_path / "zs")
    assert ck.training["label_word_ids"] == word_ids(ck.vocab, PROMPT.words)
    for text in TEXTS:  # one at a time: transformers reads no padding here
        ids = torch.tensor([ck.vocab.encode(text, ck.read_len).ids])
        mask = torch.ones_like(ids, dtype=torch.bool)
        mine = sample(ck.model, ids, mask, 1, seed=0).probs[0]  # [1, C]
        torch.testing.assert_close(mine, _reference(folder, ck, ids), atol=1e-5, rtol=0)


def test_a_cut_text_keeps_the_whole_prompt_and_salience_holds_it(folder, tmp_path):
    ck = _write(folder, tmp_path / "zs", max_len=24)
    text = " ".join(["the cat sat on the mat"] * 10)
    enc = ck.vocab.encode(text, ck.read_len)
    before, after = enc.held  # this text's: where it meets the prompt, the pieces are its own
    assert before > 1 and after > 1  # "<s>question:" ... "\nanswer:"
    assert (
        len(enc.ids) == 24
        and enc.truncated
        and enc.n_dropped == enc.n_words - (24 - before - after)
    )
    full = ck.vocab.encode("the cat", 64)  # begins as the long text: the same prompt pieces
    assert full.held == enc.held and not full.truncated
    assert enc.ids[:before] == full.ids[:before] and enc.ids[-after:] == full.ids[-after:]
    assert "↵" in enc.tokens[-after:]  # the prompt's newline shown as one, not as "Ċ"
    # the cut text reads as the tokenizer reads the prompt around the text's first characters
    ref = tf.PreTrainedTokenizerFast(tokenizer_file=str(folder / "tokenizer.json"))
    whole = ref.decode(enc.ids)
    assert whole.startswith(PROMPT.before) and whole.endswith(PROMPT.after)
    assert text.startswith(whole[len(PROMPT.before) : -len(PROMPT.after)])
    assert ref(whole, add_special_tokens=False)["input_ids"] == enc.ids


@pytest.mark.parametrize("family", ["sto", "bam"])
def test_a_training_free_family_at_zero_noise_is_the_zero_shot_model(folder, tmp_path, family):
    plain = _write(folder, tmp_path / "plain")
    noisy = _write(folder, tmp_path / family, family=family)
    rows = [plain.vocab.encode(t, plain.read_len).ids for t in TEXTS]
    ids, mask = pad(rows, max(map(len, rows)))
    want = sample(plain.model, ids, mask, 1, seed=0).probs[0]
    off = resolve(noisy.model.cfg, SamplingSettings(noise_scale=0.0))
    got = sample(noisy.model, ids, mask, 3, seed=1, settings=off).probs  # [T, B, C]
    torch.testing.assert_close(got, want.expand_as(got), atol=1e-5, rtol=0)
    spread = sample(noisy.model, ids, mask, 8, seed=1).probs.std(0).max()
    assert float(spread) > 0  # with its noise on, the samples differ


def test_a_chosen_noise_scale_is_the_checkpoints_own_and_the_recipe_keeps_it(folder, tmp_path):
    from uqlab.label_words import _recipe

    ck = _write(folder, tmp_path / "l4", family="sto", noise_scale=4.0)
    assert ck.config.inference.noise_scale == 4.0
    with pytest.raises(UQError, match="noise-scale"):
        _write(folder, tmp_path / "bad", family="sto", noise_scale=-1.0)
    argv = ["--task", "cr", "--noise-scale", "4", "--root", "/x", "--dev=200", "--name", "n"]
    assert _recipe(argv) == "python -m uqlab.label_words --task cr --noise-scale 4"
    # a task file's folder is the maker's machine: the card keeps the file's name only
    for argv in (["--task-file", "/home/me/tasks/sst2.json"], ["--task-file=/srv/x/sst2.json"]):
        recipe = _recipe([*argv, "--family", "sto"])
        assert "sst2.json" in recipe and "/home" not in recipe and "/srv" not in recipe


def test_the_family_default_is_said_in_help_and_output(capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    assert "(default: trans, no" in capsys.readouterr().out


def test_bad_prompts_and_words_are_refused_with_a_message(folder, tmp_path):
    with pytest.raises(UQError, match="exactly once"):
        build_prompt("", "cola", words=["no", "yes"], template="no slot here")
    with pytest.raises(UQError, match="exactly once"):
        build_prompt("{instruction} {text}", "cola", instruction="say {text}")
    from uqlab.catalog.tasks import TASKS, describe, register

    register(describe({"name": "no-words", "label_names": ["a", "b"]}, ".", data_free=True))
    try:
        with pytest.raises(UQError, match="give --words"):
            build_prompt("{instruction} {text}", "no-words")
        with pytest.raises(UQError, match="give --instruction"):
            build_prompt("{instruction} {text}", "no-words", words=["x", "y"])
    finally:
        TASKS.pop("no-words")
    with pytest.raises(UQError, match="label_words must be"):
        describe(
            {"name": "w", "label_names": ["a", "b"], "label_words": {"words": ["a"]}},
            ".",
            data_free=True,
        )
    with pytest.raises(UQError, match="same token"):
        _write(folder, tmp_path / "same", prompt=Prompt("{text}", ("no", "no!")))
    with pytest.raises(UQError, match="one word per class"):
        _write(folder, tmp_path / "three", prompt=Prompt("{text}", ("a", "b", "c")))
    with pytest.raises(UQError, match="no room"):
        _write(folder, tmp_path / "short", max_len=5)
    assert not (tmp_path / "same").exists() or not any((tmp_path / "same").iterdir())


def test_the_command_writes_nothing_when_it_fails(tmp_path, capsys):
    code = main(["--task", "cola", "--words", "no", "--root", str(tmp_path)])
    assert code == 2 and "error:" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_the_smollm2_zero_shot_model_equals_transformers_on_ten_sentences(tmp_path):
    from uqlab.bases import get_base

    base = get_base("smollm2")
    try:
        folder = base.path()
    except Exception as exc:  # ConfigError: not installed
        pytest.skip(str(exc))
    prompt = build_prompt(base.chat, "cola")  # the task description's label_words
    out = tmp_path / "zs"
    write_label_words(out, folder, base.record(), "cola", prompt)
    ck = load_checkpoint(out)
    texts = [
        "The cat sat on the mat.",
        "Cat the mat on sat the.",
        "She has been reading all day.",
        "He seem happy yesterday.",
        "What did you see?",
        "The more you read, the more you know.",
        "John is easy to please.",
        "The book was by John written.",
        "Colorless green ideas sleep furiously.",
        "Him and me goes to the store.",
    ]
    texts += [
        "  Two leading spaces.",
        "\nA newline first.",
        "Ends with newlines\n\n",
        "It's 12345 dollars, isn't it?",
        "😀 great",
    ]
    lm = tf.AutoModelForCausalLM.from_pretrained(str(folder)).eval()
    ref = tf.PreTrainedTokenizerFast(tokenizer_file=str(folder / "tokenizer.json"))
    for text in texts:  # transformers reads the prompt string the model card shows, whole
        whole = prompt.template.replace("{text}", text)  # the prompt is the whole template:
        ids = torch.tensor([ref(whole, add_special_tokens=False)["input_ids"]])  # none added
        assert ck.vocab.encode(text, ck.read_len).ids == ids[0].tolist(), text
        mask = torch.ones_like(ids, dtype=torch.bool)
        mine = sample(ck.model, ids, mask, 1, seed=0).probs[0]
        with torch.no_grad():
            want = lm(input_ids=ids).logits[:, -1, ck.training["label_word_ids"]].softmax(-1)
        torch.testing.assert_close(mine, want, atol=1e-4, rtol=0)


def test_the_prompt_reads_as_the_tokenizer_reads_the_whole_string_on_many_texts():
    """Issue 45, item 7: "...one word.\n\n" + text is two newline pieces in the whole string,
    one when the parts are encoded apart; 500 CR and 300 IMDB texts (needs the SmolLM2 base)."""
    import pandas as pd

    from uqlab.bases import get_base
    from uqlab.catalog.paths import EVAL_DIR, SHIPPED_CHECKPOINT_DIR

    try:
        folder = get_base("smollm2").path()
    except Exception as exc:  # ConfigError: not installed
        pytest.skip(str(exc))
    ck = load_checkpoint(SHIPPED_CHECKPOINT_DIR / "cr-smollm2-words-sto")
    template = ck.training["prompt"]["template"]
    ref = tf.PreTrainedTokenizerFast(tokenizer_file=str(folder / "tokenizer.json"))
    texts = pd.read_parquet(EVAL_DIR / "cr_test.parquet")["text"].tolist()
    texts += pd.read_parquet(EVAL_DIR / "imdb_test_sample.parquet")["text"].tolist()[:300]
    split = 0
    for text in texts:
        enc = ck.vocab.encode(text, 4096)
        whole = ref(template.replace("{text}", text), add_special_tokens=False)
        assert enc.ids == whole["input_ids"], text[:60]
        before, after = enc.held
        assert ref.decode(enc.ids[:before]) + text + ref.decode(enc.ids[-after:]) == (
            template.replace("{text}", text)
        )  # the held pieces are the prompt's, the rest the text's
        split += ck.vocab.template()[0] != enc.ids[:before]
    # encoded apart, the prompt's last pieces differed for 777 of these 800 texts (not for a
    # text that begins with a space: "ĊĊ" then "Ġword" either way)
    assert split >= 0.9 * len(texts)
