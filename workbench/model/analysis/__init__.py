"""Work, traffic, intensity, time terms, bounds, overlap, limiter and the derivation.

`analyze()` is the core call: the CLI's JSON, the GUI's calculator panel and
the session file all read the one `Analysis` it returns. Counts are exact
Python ints; rates and times are floats in base units (FLOP/s, B/s, s); units
are attached when figures are formatted, so every displayed figure has one.

The package is split along its jobs:
- rates.py       which rate each term is divided by (entered, measured, datasheet), the overlap setting;
- terms.py       a time term per resource and the rule that combines them into a bound and a limiter;
- link.py        a collective's term over a link between chips;
- derivation.py  the derivation steps and notes, built lazily from the figures;
- model.py       the `Analysis` result;
- core.py        analyze() and analyze_partial(), which build it;
- sweep.py       the same figures over many shapes at once.
"""

from __future__ import annotations

from workbench.model.analysis.core import analyze, analyze_partial, host_term, physical_work_of, resident_on_host
from workbench.model.analysis.derivation import DerivationLine, substitute
from workbench.model.analysis.link_term import LinkTerm
from workbench.model.analysis.model import INTERFACE, Analysis, TensorTraffic
from workbench.model.analysis.rates import Overlap, as_rate, parse_overlap, resolve_setting
from workbench.model.analysis.rates import _rate_text_value  # noqa: F401  (tests clear its cache)
from workbench.model.analysis.terms import COMPUTE, LINK, MEMORY, Term
from workbench.model.devices.catalogue import BANDWIDTH
from workbench.model.analysis.sweep import Sweep, sweep

__all__ = [
    "Analysis",
    "BANDWIDTH",
    "COMPUTE",
    "INTERFACE",
    "LINK",
    "LinkTerm",
    "MEMORY",
    "Overlap",
    "DerivationLine",
    "Sweep",
    "TensorTraffic",
    "Term",
    "analyze",
    "analyze_partial",
    "as_rate",
    "host_term",
    "parse_overlap",
    "physical_work_of",
    "resident_on_host",
    "resolve_setting",
    "substitute",
    "sweep",
]
