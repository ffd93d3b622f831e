"""One self-contained HTML report of one or more checkpoints on the same rows: the summary with
intervals, the paired verdict (two checkpoints), reliability, risk-coverage, out-of-domain
detection when there are out-of-domain rows, the worst confident errors and the most uncertain
rows with their spread, slices, each checkpoint's card and every setting.

The figures are the pages' (:mod:`uqlab.workbench.dataset_views`), interactive: plotly.js is
written into the file once, so it opens offline. Every text that came from a file or a card is
escaped (tables through pandas, the rest through :func:`html.escape`); figures carry the pages'
own escaping (:mod:`uqlab.workbench.inert`). The same inputs give the same bytes: no date, no
random element id.
"""

from __future__ import annotations

from html import escape

import pandas as pd
import plotly.io as pio
from plotly.offline import get_plotlyjs

from uqlab.workbench import dataset, dataset_views
from uqlab.workbench.notebook import Analysis, Paired

SECTIONS = (  # (anchor, heading): the report's sections, in order
    ("summary", "Summary"),
    ("paired", "Two checkpoints, paired"),
    ("calibration", "Reliability, selective prediction and confusion"),
    ("ood", "Out-of-domain detection"),
    ("errors", "Worst confident errors"),
    ("uncertain", "Most uncertain rows"),
    ("slices", "Slices"),
    ("cards", "Checkpoint cards"),
    ("settings", "Settings"),
)
ROWS = 20  # rows of each list (errors, uncertain)
SLICES = ("length", "gold label", "prediction", "domain")

_STYLE = """
body { font-family: system-ui, sans-serif; margin: 0 auto; max-width: 1100px; padding: 1em;
       color: #1b1b1b; line-height: 1.45; }
h1 { font-size: 1.6em; } h2 { border-bottom: 2px solid #1f5fbf; padding-bottom: .2em; }
table { border-collapse: collapse; margin: .5em 0 1em; font-size: .92em; }
th, td { border: 1px solid #ccc; padding: .25em .5em; text-align: left; vertical-align: top; }
th { background: #eef2fa; } td.text, td:nth-child(6) { max-width: 32em; }
pre { white-space: pre-wrap; background: #f6f6f6; padding: .8em; border-radius: 4px; }
nav a { margin-right: 1em; } .wide { overflow-x: auto; } .note { color: #555; font-size: .92em; }
.verdict { font-size: 1.1em; font-weight: 600; }
"""


def _table(df: pd.DataFrame) -> str:
    """A frame as an HTML table, every cell escaped, numbers at four significant digits."""
    html = df.to_html(index=False, escape=True, border=0, float_format=lambda v: f"{v:.4g}")
    return f'<div class="wide">{html}</div>'  # scrolls sideways on a phone


def _figure(fig, div_id: str) -> str:
    """A figure as a div drawn by the plotly.js the page holds once (no network)."""
    return pio.to_html(
        fig, full_html=False, include_plotlyjs=False, div_id=div_id, config={"responsive": True}
    )


def _section(anchor: str, body: str) -> str:
    heading = dict(SECTIONS)[anchor]
    return f'<section id="{anchor}"><h2>{escape(heading)}</h2>\n{body}\n</section>'


def _summary(analyses: list[Analysis]) -> str:
    parts = []
    for a in analyses:
        parts.append(f"<h3>{escape(a.checkpoint)}</h3>" + _table(a.summary))
        if a.skipped:
            parts.append(f'<p class="note">{a.skipped} row(s) without a known word skipped.</p>')
    parts.append(
        '<p class="note">Accuracy and expected calibration error (ECE) of the mean prediction '
        "over the T samples, with 95 % bootstrap intervals over the rows (1,000 resamples).</p>"
    )
    return "\n".join(parts)


def _paired(paired: Paired | None) -> str:
    if paired is None:
        return '<p class="note">One checkpoint: give a second one for a paired verdict.</p>'
    caption = escape(paired.caption)
    return (
        f'<p class="verdict">{escape(paired.sentence)}</p>'
        + _table(paired.table)
        + f'<p class="note">{caption}</p>'
    )


def _calibration(analyses: list[Analysis], mine: bool) -> str:
    frames = {a.checkpoint: a.frame for a in analyses}
    confusion = "".join(
        _figure(dataset_views.confusion(a.checkpoint, a.frame, a.names, mine), f"confusion-{i}")
        for i, a in enumerate(analyses)
    )
    return (
        _figure(dataset_views.reliability(frames, mine), "reliability")
        + '<p class="note">A calibrated model\'s confidence matches its accuracy: points on the '
        "diagonal. Temperature-scaled: every sample's logits divided by the temperature the "
        "checkpoint's evaluation fitted on its dev split.</p>"
        + _figure(dataset_views.risk_coverage(frames, mine), "risk-coverage")
        + '<p class="note">Selective prediction: answer only the most confident share of the '
        "rows. A lower curve (smaller AURC) ranks the model's own errors last.</p>"
        + confusion
        + '<p class="note">Rows: the gold label; columns: the class of the mean prediction.</p>'
    )


def _ood(frames: dict[str, pd.DataFrame], score: str) -> str:
    roc = dataset_views.roc(frames, score)
    if roc is None:
        return (
            '<p class="note">No out-of-domain rows: give an out-of-domain file to see how well '
            "uncertainty tells the two apart.</p>"
        )
    hists = [
        _figure(dataset_views.histogram(name, f, score), f"histogram-{i}")
        for i, (name, f) in enumerate(frames.items())
    ]
    return _figure(roc, "roc") + "".join(hists)


def _per_checkpoint(analyses: list[Analysis], part) -> str:
    return "\n".join(f"<h3>{escape(a.checkpoint)}</h3>{part(a)}" for a in analyses)


def _slices(a: Analysis) -> str:
    bys = [b for b in SLICES if b != "domain" or a.frame["domain"].nunique() > 1]
    return "".join(f"<h4>By {escape(b)}</h4>" + _table(a.slices(b)) for b in bys)


def _settings(analyses: list[Analysis], score: str) -> str:
    rows = [
        {"checkpoint": a.checkpoint, "setting": k, "value": str(v)}
        for a in analyses
        for k, v in {**a.settings, "OOD score": dataset.SCORES[score][1]}.items()
    ]
    return _table(pd.DataFrame(rows))


def build(
    analyses: list[Analysis], paired: Paired | None = None, score: str = "mutual_information"
) -> str:
    """The report's HTML of ``analyses`` (one or more checkpoints on the same rows) and, for two,
    their ``paired`` verdict; ``score``: the uncertainty of the out-of-domain figures (a
    :data:`uqlab.workbench.dataset.SCORES` name)."""
    if not analyses:
        raise ValueError("a report needs at least one analysis")
    frames = {a.checkpoint: a.frame for a in analyses}
    mine = analyses[0].mine
    title = f"{', '.join(frames)} on {analyses[0].settings.get('examples', '')}"
    body = {
        "summary": _summary(analyses),
        "paired": _paired(paired),
        "calibration": _calibration(analyses, mine),
        "ood": _ood(frames, score),
        "errors": _per_checkpoint(analyses, lambda a: _table(a.worst_errors(ROWS))),
        "uncertain": _per_checkpoint(analyses, lambda a: _table(a.most_uncertain(ROWS))),
        "slices": _per_checkpoint(analyses, _slices),
        "cards": _per_checkpoint(analyses, lambda a: f"<pre>{escape(a.card or 'No card.')}</pre>"),
        "settings": _settings(analyses, score),
    }
    nav = " ".join(f'<a href="#{a}">{escape(h)}</a>' for a, h in SECTIONS)
    sections = "\n".join(_section(anchor, body[anchor]) for anchor, _ in SECTIONS)
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>Report: {escape(title)}</title><style>{_STYLE}</style>"
        f'<script type="text/javascript">{get_plotlyjs()}</script></head>\n'
        f"<body><h1>Report: {escape(title)}</h1><nav>{nav}</nav>\n{sections}\n</body></html>\n"
    )
