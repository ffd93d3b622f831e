"""How the app writes numbers: one function per kind of cell, used by every page."""

from __future__ import annotations


def sig(x: float, digits: int = 2) -> str:
    """``x`` with ``digits`` significant digits, short: 0.0046, 0.12, 4.1e-06, 0."""
    return "0" if x == 0 else f"{x:.{digits}g}"


def mean_pm_var(mean: float, var: float) -> str:
    """How every page writes a Table 3 pair: ``"0.198 ± 0.0028"``."""
    return f"{mean:.3f} ± {sig(var)}"
