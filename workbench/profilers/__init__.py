"""Nsight Compute and Nsight Systems imports: actual traffic and work against the compulsory floor.

Qt-free. Read a file with `read_profile(path)` (either tool, told apart by
its header), group launches with `Profile.kernels()`, pair kernels with
declared operations through `MatchRule`s, and `compare()` a kernel with the
`Analysis` of its operation. `Profile.to_dict()` / `Profile.from_dict()` are
the records `Session.profiles` holds.

    profile = read_profile("vector_add.ncu.csv")
    rule = parse_match("vector_add=add(n=2**24, dtype=fp32)")
    for comparison in compare_profile(profile, [rule], device="h100-sxm"):
        print(comparison.derivation_text())
"""

from workbench.profilers.kernel_compare import Cause, Comparison, compare, compare_profile, profile_device
from workbench.profilers.counters import SUGGESTED_METRICS, FlopCount, Reading, SassCount, TensorOps
from workbench.profilers.kernels import Kernel, RooflinePoint
from workbench.profilers.matching import MatchError, MatchRule, kernel_base_name, match_kernels, parse_match, suggest_operation
from workbench.profilers.ncu import read_ncu_csv, read_ncu_text
from workbench.profilers.nsys import read_nsys_csv, read_nsys_text
from workbench.profilers.reader import read_profile, read_profile_text
from workbench.profilers.profile import Profile
from workbench.profilers.records import (
    NCU,
    NCU_CONDITIONS_NOTE,
    NSYS,
    KernelLaunch,
    KernelTimes,
    Metric,
)
from workbench.profilers.table import ProfileError

__all__ = [
    "NCU",
    "NCU_CONDITIONS_NOTE",
    "NSYS",
    "SUGGESTED_METRICS",
    "Cause",
    "Comparison",
    "FlopCount",
    "Kernel",
    "KernelLaunch",
    "KernelTimes",
    "MatchError",
    "MatchRule",
    "Metric",
    "Profile",
    "ProfileError",
    "Reading",
    "RooflinePoint",
    "SassCount",
    "TensorOps",
    "compare",
    "compare_profile",
    "kernel_base_name",
    "match_kernels",
    "parse_match",
    "profile_device",
    "read_ncu_csv",
    "read_ncu_text",
    "read_nsys_csv",
    "read_nsys_text",
    "read_profile",
    "read_profile_text",
    "suggest_operation",
]
