"""The knob table: every inference setting, in one entry each.

A :class:`Knob` says what the library needs to know of a setting (its type, where its value
comes from when a request leaves it unset, how it is checked, what training does to it) and what
the app needs to show it (label, help, the reach of its control, the range a link may set, its
older name in links). Everything else is derived from :data:`KNOBS`: the settings dataclasses
and :func:`uqcore.settings.resolve`, the family table's controls (:mod:`uqcore.families`), and in
the app the sidebar and in-page controls, the link's reader and writer and the exports.
Adding a knob = one entry below (and its name in the ``knobs`` of the families that read it).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from uqcore.exceptions import ConfigError, check_positive

MAX_EM_ITERATIONS = 1000
TAU_GRID = (0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 30.0, 40.0, 60.0, 100.0, 300.0, 1000.0)
TAU_LINK = (0.01, 1000.0)  # what a link may set for a temperature
TRAINED = "trained"  # Knob.source: the checkpoint's trained value, else the knob's fallback
_AS_IS = object()  # Knob.training: training leaves the value as resolved


def check_noise_scale(value) -> float:
    """``value`` as a finite float >= 0, else :class:`ConfigError`."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ConfigError(f"noise_scale must be a number >= 0, got {value!r}.") from None
    if isinstance(value, bool) or not math.isfinite(v) or v < 0:
        raise ConfigError(f"noise_scale must be a finite number >= 0, got {value!r}.")
    return v


def check_em_iterations(value) -> int:
    """``value`` if it is an int in [0, MAX_EM_ITERATIONS], else :class:`ConfigError`."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_EM_ITERATIONS:
        raise ConfigError(
            f"em_iterations must be an integer in [0, {MAX_EM_ITERATIONS}], got {value!r}."
        )
    return value


def check_bam_mode(value) -> str:
    if value not in ("sample", "mean"):
        raise ConfigError(f"bam_mode must be 'sample' or 'mean', got {value!r}.")
    return value


def check_rate(name: str, value) -> float:
    """``value`` as a float in [0, 1) (a dropout probability), else :class:`ConfigError`."""
    try:
        rate = float(value)
    except (TypeError, ValueError):
        raise ConfigError(f"{name} must be a number in [0, 1), got {value!r}.") from None
    if not 0.0 <= rate < 1.0:
        raise ConfigError(f"{name} must be in [0, 1), got {rate!r}.")
    return rate


def _truth(name: str, value) -> bool:
    return bool(value)


@dataclass(frozen=True)
class Knob:
    """One inference knob.

    The library: ``kind`` (``float``, ``int``, ``bool`` or ``str``: the type of its settings
    fields); ``source``: where :func:`uqcore.settings.resolve` takes its value when a request
    leaves it None: ``TRAINED`` (the checkpoint's trained value, else ``fallback``) or the name
    of a ``ModelConfig`` attribute (tau: ``softmax_tau``; dropout: ``dropout``); ``check(name,
    value)`` returns the value the layers read or raises :class:`ConfigError` naming ``name``
    (``resolve`` passes the knob's name, a checkpoint's config ``inference.<name>``; the checks
    of noise_scale, em_iterations and bam_mode name the knob themselves);
    ``training``: the value a training step uses whatever was asked (unset: the resolved one);
    ``forward``: a field of ``ForwardSettings`` (``mc_dropout`` is not: it becomes
    ``dropout_on``).

    The app: ``label`` and ``help``; a knob has a control (sidebar, in-page row, link, exports)
    when one of ``grid`` (a select slider over these values and the trained one, labelled with
    it; a temperature: off when the checkpoint samples hard), ``reach`` (a slider's usual
    bounds, widened to hold the trained and current values; ``step``) or ``choices`` (a radio)
    is set. ``link``: the range a link may set (a number outside is clamped, with a note naming
    the knob ``note``); ``alias``: its key in links made before the knobs took the library's
    names; ``always``: the sidebar shows it for every family, disabled where the family does
    not read it (``lacks``: "<family> lacks ...").
    """

    name: str
    kind: type
    label: str
    help: str
    source: str = TRAINED
    fallback: Any = None
    check: Callable[[str, Any], Any] = check_positive
    training: Any = _AS_IS
    forward: bool = True
    grid: tuple[float, ...] = ()
    reach: tuple[float, float] | None = None
    step: float | None = None
    choices: tuple[str, ...] = ()
    link: tuple[float, float] | None = None
    note: str = ""
    alias: str | None = None
    always: bool = False
    lacks: str = "does not use this setting"

    @property
    def control(self) -> bool:
        """The app shows a control for it (and a link and an export carry it)."""
        return bool(self.grid or self.reach or self.choices)

    def trains_as(self, value):
        """The value a training step uses, given the resolved ``value``."""
        return value if self.training is _AS_IS else self.training


# Hand-laid (fmt: off): one knob per entry, read as a table.
# fmt: off
KNOBS: dict[str, Knob] = {
    knob.name: knob
    for knob in (
        Knob("tau", float, "tau: softmax temperature",
             "softmax(QKᵀ / tau); trained with sqrt(d_head).", source="softmax_tau"),
        Knob("tau1", float, "tau1: keys → centroids",
             "Temperature of the Gumbel-softmax that assigns each key to the learnable "
             "centroids: low = one centroid per key, high = a blend.", fallback=1.0,
             grid=TAU_GRID, link=TAU_LINK, note="tau1", always=True, lacks="has no centroids"),
        Knob("tau2", float, "tau2: attention over values",
             "Temperature of softmax((QKᵀ + λ·g) / tau2): low = each token attends to one "
             "token, high = attention spreads evenly.", fallback=1.0, grid=TAU_GRID,
             link=TAU_LINK, note="tau2", always=True, lacks="has no Gumbel-softmax attention"),
        Knob("noise_scale", float, "Noise scale λ",
             "Multiplies the noise (the attention's, or the spread of a Laplace posterior's "
             "weight draws): 1 = as trained, 0 = the noise-free model.",
             fallback=1.0, check=lambda name, v: check_noise_scale(v), reach=(0.0, 5.0),
             step=0.05, link=(0.0, 100.0), note="Noise scale", alias="noise", always=True,
             lacks="has no attention noise"),  # a zero-shot checkpoint ships at λ = 16
        Knob("hard", bool, "hard samples", "Straight-through one-hot samples.", fallback=False,
             check=_truth),
        Knob("bam_mode", str, "BAM attention",
             "'sample' draws Weibull attention weights; 'mean' uses their mean "
             "(deterministic).", fallback="sample", check=lambda name, v: check_bam_mode(v),
             training="sample", choices=("sample", "mean"), note="BAM mode", alias="bam"),
        Knob("em_iterations", int, "EM iterations",
             "Key adaptation steps at inference (0 = the trained keys).", fallback=0,
             check=lambda name, v: check_em_iterations(v), training=0, reach=(0, 20),
             link=(0, 20), note="EM iterations", alias="em"),
        Knob("em_precision", float, "EM prior precision θ", "Large = keys stay put.",
             fallback=1.0),
        Knob("mc_dropout", bool, "MC dropout", "Keep dropout on at inference.", check=_truth,
             forward=False),
        Knob("dropout", float, "Dropout rate (kept on)",
             "The rate of the masks drawn at inference.", source="dropout", check=check_rate,
             reach=(0.0, 0.9), step=0.05, link=(0.0, 0.9), note="Dropout"),
    )
}
# fmt: on

CONTROLLED: tuple[str, ...] = tuple(n for n, k in KNOBS.items() if k.control)
"""The knobs the app shows, carries in a link and writes into exports, in table order."""
