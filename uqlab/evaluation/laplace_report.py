"""The Laplace fits for docs/results.md: what each ``laplace`` checkpoint's posterior covers, what
fitting it cost and how its prior precision was chosen (from ``training.laplace`` of its
config.json, written by :mod:`uqlab.laplace`)."""

from __future__ import annotations

RECORD = "laplace"  # the key of a fitted checkpoint's record in its training doc (uqlab.laplace)


def laplace_markdown(fits: dict[str, dict]) -> list[str]:
    """A section with one row per fitted checkpoint (``fits``: name -> its ``training.laplace``
    record), or nothing when there is none."""
    if not fits:
        return []
    lines = [
        "",
        "## Laplace fits: their cost and their prior",
        "",
        "Each `laplace` checkpoint is a diagonal Laplace posterior around a trained checkpoint "
        "(`python -m uqlab.laplace --ckpt SOURCE`): the GGN diagonal of the cross-entropy summed "
        "over the training texts (the CPU seconds and the fitting process's peak resident memory "
        "as measured on the machine that fitted it, 2 cores here), the prior precision chosen "
        "on dev as the lowest NLL of the sampled predictive. Dev NLL: the trained weights' → the "
        "posterior's at the chosen prior, on the same dev texts. Covers: every tensor the source "
        "stores, or the blocks from K up and the head (on an encoder the pooler too; "
        "`--from-block K`: the layers below run once for all samples).",
        "",
        "| checkpoint | source | covers | parameters | training texts | seconds | peak RSS (MB) | "
        "prior precision | dev NLL | dev accuracy | dev ECE |",
        "|---|---|---|---:|---:|---:|---:|---:|---|---|---|",
    ]
    for name, r in sorted(fits.items()):
        trained = r["dev"][0]
        chosen = next(d for d in r["dev"][1:] if d["prior_precision"] == r["prior_precision"])
        pairs = " | ".join(
            f"{trained[k]:.4f} → {chosen[k]:.4f}" for k in ("dev_nll", "dev_accuracy", "dev_ece")
        )
        low = r.get("from_block")  # absent in fits made before it existed: everything
        covers = "all it stores" if low is None else f"block {low} up, head"
        lines.append(
            f"| {name} | {r['source']} | {covers} | {r['parameters']:,} | {r['fit_rows']:,} | "
            f"{r['fit_seconds']:.0f} | {r['peak_rss_mb']:,.0f} | {r['prior_precision']:g} | "
            f"{pairs} |"
        )
    return lines
