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

from typing import TYPE_CHECKING

from workbench.exports import lazy_names

if TYPE_CHECKING:  # the names as type checkers and the import contracts see them
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

# Where each name lives: its module is imported when the name is first read (workbench/exports.py).
_HOMES = {
    "Cause": "kernel_compare",
    "Comparison": "kernel_compare",
    "compare": "kernel_compare",
    "compare_profile": "kernel_compare",
    "profile_device": "kernel_compare",
    "SUGGESTED_METRICS": "counters",
    "FlopCount": "counters",
    "Reading": "counters",
    "SassCount": "counters",
    "TensorOps": "counters",
    "Kernel": "kernels",
    "RooflinePoint": "kernels",
    "MatchError": "matching",
    "MatchRule": "matching",
    "kernel_base_name": "matching",
    "match_kernels": "matching",
    "parse_match": "matching",
    "suggest_operation": "matching",
    "read_ncu_csv": "ncu",
    "read_ncu_text": "ncu",
    "read_nsys_csv": "nsys",
    "read_nsys_text": "nsys",
    "read_profile": "reader",
    "read_profile_text": "reader",
    "Profile": "profile",
    "NCU": "records",
    "NCU_CONDITIONS_NOTE": "records",
    "NSYS": "records",
    "KernelLaunch": "records",
    "KernelTimes": "records",
    "Metric": "records",
    "ProfileError": "table",
}
__getattr__, __dir__ = lazy_names(__name__, _HOMES)

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
