"""Imported once by the measurement forkserver (workbench.measure.process), before any run is forked.

Everything a run needs and would otherwise load in each child — NumPy, the
engine, the unit registry and the device catalogue (about a second together) —
is loaded here, once, so each forked run starts in milliseconds. Importing this
module has that effect on purpose and nothing else; a failure to warm up is
left to the run itself to report.
"""

from __future__ import annotations

import numpy  # noqa: F401  - imported for its side effect: loaded once in the server

import workbench.measure.kernels  # noqa: F401
import workbench.measure.process  # noqa: F401
import workbench.measure.run  # noqa: F401
from workbench.errors import WorkbenchError


def warm() -> None:
    """Load the unit registry and the device catalogue (cached for the process's lifetime)."""
    try:
        from workbench.model.devices.catalogue import catalogue

        catalogue()
    except (WorkbenchError, ImportError, OSError):
        pass


warm()
