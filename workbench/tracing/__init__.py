"""PyTorch models traced on the meta device into steps, and the Python API (workbench/tracing/api.py).

    from workbench.tracing import step_from_torch, analyze, compare

Nothing here imports PyTorch until a model is traced: without the `[torch]`
extra the functions say which extra to install.
"""

from workbench.tracing.api import ImportResult, StepAnalysis, StepComparison, analyze, compare, run_import, step_from_torch
from workbench.tracing.trace import TracedStep, TracingError

__all__ = [
    "ImportResult",
    "StepAnalysis",
    "StepComparison",
    "TracedStep",
    "TracingError",
    "analyze",
    "compare",
    "run_import",
    "step_from_torch",
]
