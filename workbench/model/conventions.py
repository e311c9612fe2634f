"""The FLOP conventions, registered once: their keys and what each says.

`fma2` counts a fused multiply-add as 2 FLOP (the usual datasheet count),
`mac` as 1. The keys are what session files and `--convention` hold; the
labels are what the menus, the Analysis panel and the reports print. Imports
nothing, so the command line can offer the choices before anything heavy loads.
"""

from __future__ import annotations

FMA2 = "fma2"
MAC = "mac"

CONVENTION_LABELS = {FMA2: "fma=2: one multiply-add = 2 FLOP", MAC: "mac: one multiply-add = 1 FLOP"}
CONVENTIONS = tuple(CONVENTION_LABELS)
