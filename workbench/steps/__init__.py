"""A step, not a kernel: named operations on streams with dependencies, laid out in time.

A step is written one operation a line:

    # one data-parallel step: the gradient all-reduce overlaps backward
    fwd  = gemm(M=8192, N=8192, K=8192, dtype=bf16)
    ar1  = allreduce(n=2**27, dtype=bf16, ranks=8)   on comm   after fwd

`name = DECLARATION [on STREAM] [after a, b]`; `#` starts a comment; the
stream defaults to `compute`. Each stream runs its operations in the order of
the lines; an operation starts when every operation it comes after has
finished and its stream is free. Dependencies name earlier lines only, so a
step is acyclic by construction, and a name used before its line is reported
as a cycle (when that line depends back) or as a dependency on a later line.

Each operation's time is its interval in an imported Nsight Systems trace
where one is matched to it (`match_trace`, in trace_match), else its measured median
where a run of the same declaration on the step's device exists
(workbench/measure/runs.py: run_figures), else its time bound
(workbench.model.analysis: analyze); the source is shown. The timeline gives the
step time, the critical path, the communication exposed (running while no
computation does) and hidden, and for each operation the step time if it
were 2× faster and if it took no time (Amdahl's limit).

The package: `language` (parse and format a step), `trace_match` (an imported
trace paired with the operations), `schedule` (times, the layout, what-if).
"""

from __future__ import annotations

from workbench.steps.language import (
    DEFAULT_STREAM,
    MAX_STEP_CHARS,
    MAX_STEP_LINES,
    StepError,
    StepLine,
    StepPlan,
    format_step,
    parse_step,
)
from workbench.steps.trace_match import (
    MAX_MATCH_RULES,
    MAX_UNMATCHED_LISTED,
    MAX_UNMATCHED_SHOWN,
    MeasuredTrace,
    TraceDevice,
    TraceMatch,
    TracePart,
    Unmatched,
    UnmatchedNames,
    match_torch_trace,
    match_trace,
    parse_trace_match,
    step_aten_op,
    trace_device,
)
from workbench.steps.schedule import (
    BOUND,
    MEASURED,
    TRACE,
    OperationTime,
    Placed,
    Timeline,
    WhatIf,
    lay_out,
    operation_times,
    step_timeline,
)

__all__ = [
    "DEFAULT_STREAM",
    "MAX_STEP_CHARS",
    "MAX_STEP_LINES",
    "StepError",
    "StepLine",
    "StepPlan",
    "format_step",
    "parse_step",
    "MAX_MATCH_RULES",
    "MAX_UNMATCHED_LISTED",
    "MAX_UNMATCHED_SHOWN",
    "MeasuredTrace",
    "TraceDevice",
    "TraceMatch",
    "TracePart",
    "Unmatched",
    "UnmatchedNames",
    "match_torch_trace",
    "match_trace",
    "parse_trace_match",
    "step_aten_op",
    "trace_device",
    "BOUND",
    "MEASURED",
    "TRACE",
    "OperationTime",
    "Placed",
    "Timeline",
    "WhatIf",
    "lay_out",
    "operation_times",
    "step_timeline",
]
