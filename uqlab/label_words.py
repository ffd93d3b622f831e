"""A zero-shot classifier from an instruction decoder and a label-word prompt: ``python -m
uqlab.label_words --task cr [--base smollm2] [--family sto] [--name NAME] [--dev 200]``
(``--task-file T.json`` for a task of one's own).

The checkpoint is the base with a head whose rows are its language-model head's (the tied
embedding's) rows at the first token of one word per class, read after the prompt
(:mod:`uqcore.text.prompt`): class probabilities are the words' next-token probabilities
renormalised over the words. Nothing is trained; ``--family`` adds a training-free noise
(``trans``: none; ``sto``, ``bam``, ``mcdropout`` as an imported model's, in ``--layers``). The
prompt is the base's chat format around a task's instruction (its description's
``label_words``, else ``--instruction`` and ``--words``), or a whole ``--template`` holding
``{text}``. It reads a text at ``--max-len`` tokens, the prompt included; ``--noise-scale``
sets the family's λ (default its training-free 1). ``--dev N`` prints the accuracy and the mean
mutual information on the first ``N`` rows of the task's dev split, to choose a prompt, words or
λ on (never on test). Written like an import: in a staging folder, moved in once it loads.
"""

from __future__ import annotations

import argparse
import dataclasses
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path

import torch
from safetensors import safe_open

from uqcore.build import attach_base, build_model
from uqcore.checkpoint import check_name, load_checkpoint, save_checkpoint
from uqcore.config import ModelConfig
from uqcore.exceptions import CheckpointError, UQError
from uqcore.families import TRAINING_FREE, get_family
from uqcore.inference.batch_predict import pad
from uqcore.inference.sampling import sample
from uqcore.readers.base_model import WEIGHTS, BaseRecord
from uqcore.readers.decoder_weights import decoder_specials, read_decoder_shape
from uqcore.stats import mutual_information
from uqcore.text.prompt import SLOT, Prompt
from uqcore.text.wordpiece import WordPiece
from uqlab.bases import get_base
from uqlab.catalog.paths import checkpoint_dir
from uqlab.catalog.tasks import get_task
from uqlab.data import load_task
from uqlab.import_hf import parse_layers, task_for
from uqlab.models.stale import staged_checkpoint

DEFAULT_MAX_LEN = 128  # tokens, the prompt's included (the built-in prompts take ~30)
MAX_NOISE_SCALE = 100.0


@dataclass(frozen=True)
class Instruction:
    """What a task asks the model and the word that answers for each class (label order)."""

    text: str
    words: tuple[str, ...]


def prompt_for(chat: str, instruction: Instruction) -> Prompt:
    """The base's chat format (``{instruction}`` and ``{text}`` slots) around ``instruction``,
    checked as a recorded prompt is (:meth:`Prompt.from_dict`)."""
    template = chat.replace("{instruction}", instruction.text)
    words = list(instruction.words)
    try:
        return Prompt.from_dict({"template": template, "words": words}, len(words))
    except CheckpointError as exc:
        raise UQError(str(exc).replace("training.prompt.", "the prompt's ")) from None


def word_ids(vocab: WordPiece, words: tuple[str, ...]) -> list[int]:
    """The first token of each word; :class:`UQError` when two words share it (the head could
    not tell them apart)."""
    ids = []
    for word in words:
        pieces, _ = vocab.pieces(word)
        if not pieces:
            raise UQError(f"The word {word!r} has no token; give another word.")
        ids.append(pieces[0])
    if len(set(ids)) != len(ids):
        raise UQError(
            f"The words {', '.join(map(repr, words))} begin with the same token; give words that "
            "differ in their first token."
        )
    return ids


def lm_rows(folder: Path, model: torch.nn.Module, ids: list[int]) -> torch.Tensor:
    """``[C, D]``: the language-model head's rows at ``ids``: ``lm_head.weight`` when the base
    stores one, else the input embedding's (tied, as SmolLM2's)."""
    with safe_open(str(folder / WEIGHTS), framework="pt") as f:
        if "lm_head.weight" in f.keys():
            return f.get_slice("lm_head.weight")[ids].float()
    return model.embed.weight.detach()[ids].clone()


def write_label_words(
    out: Path,
    folder: Path,
    record: BaseRecord,
    task: str,
    prompt: Prompt,
    *,
    family: str = "trans",
    layers: str | None = None,
    max_len: int = DEFAULT_MAX_LEN,
    base_name: str | None = None,
    command: str | None = None,
    noise_scale: float | None = None,
) -> None:
    """Write the label-word checkpoint of the decoder base in ``folder`` (recorded as
    ``record``; ``base_name``: its entry of :data:`uqlab.bases.BASES`) for ``task`` into
    ``out``, and load it back strictly. ``command``: what made it, for the model card;
    ``noise_scale``: the family's λ instead of its training-free 1."""
    spec = get_task(task)
    if len(prompt.words) != len(spec.label_names):
        raise UQError(
            f"Task {task!r} has {len(spec.label_names)} classes "
            f"({', '.join(spec.label_names)}); give one word per class."
        )
    if family not in TRAINING_FREE:
        raise UQError(f"--family must be one of {', '.join(TRAINING_FREE)}; got {family!r}.")
    shape = read_decoder_shape(folder)
    d_head = shape["d_model"] // shape["n_heads"]
    params, inference = get_family(family).untrained(d_head)
    if noise_scale is not None:
        if not 0 <= noise_scale <= MAX_NOISE_SCALE:
            raise UQError(f"--noise-scale must be within 0-{MAX_NOISE_SCALE}; got {noise_scale}.")
        inference = dataclasses.replace(inference, noise_scale=float(noise_scale))
    cfg = ModelConfig.from_dict({**shape, "num_classes": len(prompt.words), "family": family})
    layered = get_family(family).layered
    cfg = cfg.replace(
        attention=params,
        inference=inference,
        stochastic_layers=parse_layers(layers, cfg.n_layers) if layered else None,
    )
    vocab = WordPiece.from_folder(folder, decoder_specials(folder)).prompted(
        prompt.before, prompt.after
    )
    ids = word_ids(vocab, prompt.words)
    held = sum(vocab.held)
    if max_len <= held:  # checked before the base is read
        raise UQError(f"--max-len {max_len} leaves no room beside the prompt's {held} tokens.")
    model = build_model(cfg)
    attach_base(model, folder)
    with torch.no_grad():
        model.head.weight.copy_(lm_rows(folder, model, ids))  # [C, D]
    training = {
        "task": task,
        "family": family,
        "label_names": list(spec.label_names),
        "prompt": prompt.to_dict(),
        "label_word_ids": ids,
        "config": {"max_len": max_len, "base": base_name},
    }
    if not spec.builtin:
        training["task_spec"] = spec.description
    card = _card(cfg, prompt, command)
    save_checkpoint(out, model, cfg, None, training=training, base=record, card=card)
    load_checkpoint(out)


def _card(cfg: ModelConfig, prompt: Prompt, command: str | None) -> str:
    words = " / ".join(repr(w) for w in prompt.words)
    remake = f"\nMade (the same bytes again) by `{command}`.\n" if command else ""
    return (
        f"# Zero-shot label words ({cfg.spec.title})\n\nThe instruction decoder as it is, asked "
        f"a question after each text; a class's probability is that of its word ({words}) "
        "as the next token, renormalised over the words. Nothing was trained. The prompt:\n\n"
        f"```\n{prompt.template}\n```\n{remake}"
    )


def build_prompt(
    chat: str,
    task: str,
    instruction: str | None = None,
    words: list[str] | None = None,
    template: str | None = None,
) -> Prompt:
    """The prompt of the command line: a whole ``template``, or the base's ``chat`` format
    around ``instruction``; the instruction and ``words`` default to the task description's
    ``label_words`` (:class:`uqlab.catalog.tasks.TaskSpec`). :class:`UQError` says what is
    missing."""
    known = get_task(task).label_words or {}
    words_ = tuple(words) if words else tuple(known.get("words", ()))
    if not words_:
        raise UQError(f"Task {task!r} names no answer words (label_words): give --words.")
    if template is not None:
        try:
            return Prompt.from_dict({"template": template, "words": list(words_)}, len(words_))
        except CheckpointError as exc:
            raise UQError(str(exc).replace("training.prompt.", "--")) from None
    if not chat:
        raise UQError("This base has no chat format here; give a whole --template.")
    text = instruction or known.get("instruction", "")
    if not text:
        raise UQError(f"Task {task!r} names no question (label_words): give --instruction.")
    return prompt_for(chat, Instruction(text, words_))


DEV_SAMPLES = 10  # T of --dev, as uqlab.evaluate's default


def dev_check(path: Path, n: int) -> tuple[float, float, int]:
    """``(accuracy of the mean of T samples, mean mutual information, rows)`` on the first
    ``n`` rows of the checkpoint's task's dev split, at its own settings (T = DEV_SAMPLES)."""
    ck = load_checkpoint(path)
    dev = load_task(ck.training["task"]).dev
    texts, labels = dev.texts[:n], dev.labels[:n]
    chunks = []
    for start in range(0, len(texts), 16):
        rows = [ck.vocab.encode(t, ck.read_len).ids for t in texts[start : start + 16]]
        ids, mask = pad(rows, max(map(len, rows)))
        chunks.append(sample(ck.model, ids, mask, DEV_SAMPLES, seed=0).probs)  # [T, B, C]
    probs = torch.cat(chunks, 1)  # [T, N, C]
    right = (probs.mean(0).argmax(-1) == torch.tensor(labels)).float().mean()
    return float(right), float(mutual_information(probs.numpy()).mean()), len(texts)


def _recipe(argv: list[str]) -> str:
    """The command line that makes the checkpoint, without where it went or what was printed
    (``--root``, ``--name``, ``--dev``), as the model card records it; a ``--task-file`` keeps
    its file name only (a card never names a folder of the machine that made it)."""
    drop = {"--root", "--name", "--dev"}
    kept, skip, task_file = [], False, False
    for arg in argv:
        if skip:
            skip = False
        elif task_file:
            task_file = False
            kept.append(shlex.quote(Path(arg).name))
        elif arg in drop:
            skip = True
        elif arg == "--task-file":
            task_file = True
            kept.append(arg)
        elif arg.startswith("--task-file="):
            kept.append(shlex.quote(f"--task-file={Path(arg.split('=', 1)[1]).name}"))
        elif arg.split("=")[0] not in drop:
            kept.append(shlex.quote(arg))
    return " ".join(["python -m uqlab.label_words", *kept])


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--task", default=None, help="a built-in task or one a checkpoint keeps (cr)")
    p.add_argument("--task-file", default=None, help="a task description (uqlab.catalog.task_file)")
    p.add_argument("--base", default="smollm2", help="an instruction decoder of uqlab.bases")
    p.add_argument(
        "--family",
        default=None,
        help=f"one of {', '.join(TRAINING_FREE)} (default: trans, no noise)",
    )
    p.add_argument("--layers", default=None, help="where the noise goes: last, all or 0,5")
    p.add_argument("--name", default=None, help="default <task>-<base>-words-<family>")
    p.add_argument("--instruction", default=None, help="the question asked after each text")
    p.add_argument("--words", nargs="+", default=None, help="one answer word per class")
    p.add_argument("--template", default=None, help=f"a whole prompt holding {SLOT}")
    p.add_argument("--max-len", type=int, default=DEFAULT_MAX_LEN)
    p.add_argument("--noise-scale", type=float, default=None, help="λ (default the family's 1)")
    p.add_argument("--dev", type=int, default=0, help="print accuracy on N dev rows")
    p.add_argument("--root", default=None, help="checkpoint folder (default: UQ_CHECKPOINT_DIR)")
    args = p.parse_args(argv)
    defaulted = args.family is None
    args.family = args.family or "trans"
    try:
        task = task_for(args.task, args.task_file)
        name = args.name or f"{task}-{args.base}-words-{args.family}"
        base = get_base(args.base)
        prompt = build_prompt(base.chat, task, args.instruction, args.words, args.template)
        root = Path(args.root) if args.root else checkpoint_dir()
        target = root / check_name(name)
        with staged_checkpoint(root, name) as staging:
            write_label_words(
                staging,
                base.path(),
                base.record(),
                task,
                prompt,
                family=args.family,
                layers=args.layers,
                max_len=args.max_len,
                base_name=base.name,
                noise_scale=args.noise_scale,
                command=_recipe(argv if argv is not None else sys.argv[1:]),
            )
    except UQError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    family = f"{args.family}, the default: --family sets it" if defaulted else args.family
    print(f"{target}: {base.title} answering {' / '.join(prompt.words)} ({family})")
    if args.dev:
        acc, mi, n = dev_check(target, args.dev)
        print(f"dev (first {n} rows, T = {DEV_SAMPLES}): accuracy {acc:.3f}, mean MI {mi:.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
