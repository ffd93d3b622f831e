"""Tiny random Hugging Face classifier folders for the import tests: BERT, RoBERTa, DistilBERT.

Each folder is what ``save_pretrained`` writes (``config.json`` with ``id2label``,
``model.safetensors``) plus a ``tokenizer.json`` built with the ``tokenizers`` library: a
WordPiece tokenizer for BERT / DistilBERT and a byte-level BPE one for RoBERTa, trained on a few
sentences. Nothing is downloaded. ``transformers`` is a dev requirement; callers skip without it.
"""

from __future__ import annotations

from pathlib import Path

import torch

CORPUS = [
    "the cat sat on the mat .",
    "a great movie with a sad ending",
    "no man has ever beaten the centaur .",
    "John is tall on several occasions .",
    "the dog chased the cat and the cat slept",
    "what a terrible , boring film !",
    "she read the book that he wrote",
]
LABELS = {0: "unacceptable", 1: "acceptable"}
ARCHS = ("bert", "roberta", "distilbert")
DECODERS = ("llama", "qwen2", "gpt2")  # Llama's template adds <s>; Qwen2's and GPT-2's nothing


def _wordpiece(folder: Path) -> None:
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors, trainers

    tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    tok.train_from_iterator(
        CORPUS * 3, trainers.WordPieceTrainer(vocab_size=120, special_tokens=specials)
    )
    cls, sep = tok.token_to_id("[CLS]"), tok.token_to_id("[SEP]")
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", special_tokens=[("[CLS]", cls), ("[SEP]", sep)]
    )
    tok.save(str(folder / "tokenizer.json"))


def _bpe(folder: Path) -> None:
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers

    tok = Tokenizer(models.BPE(unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    specials = ["<s>", "<pad>", "</s>", "<unk>", "<mask>"]  # RoBERTa's ids 0-4
    tok.train_from_iterator(
        CORPUS * 3,
        trainers.BpeTrainer(
            vocab_size=300,
            special_tokens=specials,
            initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        ),
    )
    tok.post_processor = processors.RobertaProcessing(("</s>", 2), ("<s>", 0))
    tok.save(str(folder / "tokenizer.json"))


def _decoder_bpe(folder: Path, arch: str, closed: bool = False) -> None:
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    specials = ["<|endoftext|>", "<s>", "</s>"]
    tok.train_from_iterator(
        CORPUS * 3,
        trainers.BpeTrainer(
            vocab_size=300,
            special_tokens=specials,
            initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        ),
    )
    if arch == "llama":
        ends = ("<s>", "</s>") if closed else ("<s>",)
        tok.post_processor = processors.TemplateProcessing(
            single="<s> $A </s>" if closed else "<s> $A",
            special_tokens=[(t, tok.token_to_id(t)) for t in ends],
        )
    tok.save(str(folder / "tokenizer.json"))


def tiny_decoder_folder(
    arch: str, folder: Path, *, seed: int = 0, pad_closes: bool = False
) -> Path:
    """A tiny random ``<Arch>ForSequenceClassification`` decoder folder (grouped-query heads
    for the Llama family) with a byte-level BPE tokenizer; returns ``folder``. ``pad_closes``
    (Llama): the template closes every text with ``</s>`` and the config pads with it, as the
    SmolLM2 base's does with ``<|im_end|>`` (transformers' head then reads the token before)."""
    import transformers as tf
    from tokenizers import Tokenizer

    folder.mkdir(parents=True, exist_ok=True)
    _decoder_bpe(folder, arch, closed=pad_closes)
    tok = Tokenizer.from_file(str(folder / "tokenizer.json"))
    common = dict(
        vocab_size=tok.get_vocab_size(),
        id2label=LABELS,
        label2id={v: k for k, v in LABELS.items()},
        pad_token_id=tok.token_to_id("</s>") if pad_closes else 0,
        bos_token_id=tok.token_to_id("<s>"),
        eos_token_id=tok.token_to_id("</s>"),
    )
    if arch == "gpt2":
        cfg, cls = (
            tf.GPT2Config(n_embd=32, n_layer=2, n_head=4, n_positions=64, **common),
            (tf.GPT2ForSequenceClassification),
        )
    else:
        config, cls = {
            "llama": (tf.LlamaConfig, tf.LlamaForSequenceClassification),
            "qwen2": (tf.Qwen2Config, tf.Qwen2ForSequenceClassification),
        }[arch]
        cfg = config(**LLAMA_SHAPE, **common)
    return _save_random(lambda: cls(cfg), folder, seed)


# the tiny Llama-family shape of every decoder folder here: grouped-query (4 heads, 2 K/V)
LLAMA_SHAPE = dict(
    hidden_size=32,
    intermediate_size=64,
    num_hidden_layers=2,
    num_attention_heads=4,
    num_key_value_heads=2,
    max_position_embeddings=64,
)


def _save_random(make, folder: Path, seed: int) -> Path:
    """The model ``make()`` builds, seeded, every weight moved off its init, saved in
    ``folder``."""
    torch.manual_seed(seed)
    model = make().eval()
    with torch.no_grad():
        for p in model.parameters():
            p.add_(torch.randn_like(p) * 0.05)
    model.save_pretrained(str(folder), safe_serialization=True)
    return folder


def tiny_causal_lm_folder(folder: Path, *, tied: bool = True, seed: int = 0) -> Path:
    """A tiny random ``LlamaForCausalLM`` folder (grouped-query heads; the LM head tied to the
    embedding or its own) with the Llama tokenizer of :func:`tiny_decoder_folder`."""
    import transformers as tf
    from tokenizers import Tokenizer

    folder.mkdir(parents=True, exist_ok=True)
    _decoder_bpe(folder, "llama")
    tok = Tokenizer.from_file(str(folder / "tokenizer.json"))
    cfg = tf.LlamaConfig(
        **LLAMA_SHAPE,
        vocab_size=tok.get_vocab_size(),
        pad_token_id=0,
        bos_token_id=tok.token_to_id("<s>"),
        eos_token_id=tok.token_to_id("</s>"),
        tie_word_embeddings=tied,
    )
    return _save_random(lambda: tf.LlamaForCausalLM(cfg), folder, seed)


def tiny_folder(
    arch: str,
    folder: Path,
    *,
    seed: int = 0,
    num_labels: int = 2,
    hidden: int = 32,
    layers: int = 2,
) -> Path:
    """Write a tiny random ``<Arch>ForSequenceClassification`` folder; returns ``folder``.
    ``hidden`` / ``layers`` make a BERT larger (a model whose dataset pass takes a while)."""
    import transformers as tf

    folder.mkdir(parents=True, exist_ok=True)
    (_bpe if arch == "roberta" else _wordpiece)(folder)
    from tokenizers import Tokenizer

    vocab = Tokenizer.from_file(str(folder / "tokenizer.json")).get_vocab_size()
    labels = {i: LABELS.get(i, f"class{i}") for i in range(num_labels)}
    common = dict(vocab_size=vocab, id2label=labels, label2id={v: k for k, v in labels.items()})
    if arch == "bert":
        cfg = tf.BertConfig(
            hidden_size=hidden,
            num_hidden_layers=layers,
            num_attention_heads=4,
            intermediate_size=48 if hidden == 32 else 4 * hidden,
            max_position_embeddings=64,
            **common,
        )
        cls = tf.BertForSequenceClassification
    elif arch == "roberta":
        cfg = tf.RobertaConfig(
            hidden_size=32,
            num_hidden_layers=2,
            num_attention_heads=4,
            intermediate_size=48,
            max_position_embeddings=66,
            pad_token_id=1,
            bos_token_id=0,
            eos_token_id=2,
            type_vocab_size=1,
            **common,
        )
        cls = tf.RobertaForSequenceClassification
    elif arch == "distilbert":
        cfg = tf.DistilBertConfig(
            dim=32,
            n_layers=2,
            n_heads=4,
            hidden_dim=48,
            max_position_embeddings=64,
            pad_token_id=0,
            **common,
        )
        cls = tf.DistilBertForSequenceClassification
    else:
        raise ValueError(arch)
    torch.manual_seed(seed)
    model = cls(cfg).eval()
    with torch.no_grad():  # random, not zero, biases and LayerNorms: every tensor is tested
        for p in model.parameters():
            p.add_(torch.randn_like(p) * 0.05)
    model.save_pretrained(str(folder), safe_serialization=True)
    return folder


def reference(folder: Path):
    """``transformers``' own model of ``folder`` with eager attention (so maps are returned)."""
    import transformers as tf

    return tf.AutoModelForSequenceClassification.from_pretrained(
        str(folder), attn_implementation="eager"
    ).eval()
