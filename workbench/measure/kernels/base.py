"""What every measured kernel provides: its buffers, the timed call, and its reference check.

A kernel is planned from a declaration alone — buffer shapes and types, the
algorithm, the physical traffic it implies — so sizes can be refused before
anything is allocated. `allocate()` then makes the buffers (inputs random,
never zeros; outputs NaN so an output the kernel forgets to write fails the
check), `__call__` is the one call that is timed, and `compare()` recomputes a
sample of outputs in float64 on the CPU.
"""

from __future__ import annotations

import importlib
import math
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, Callable, ClassVar, Sequence

from workbench.model.declare import Declaration
from workbench.model.dtypes import dtype as lookup_dtype
from workbench.measure.backends import Backend
from workbench.measure.check import SampledOutputs, Precision
from workbench.records import record, to_plain
from workbench.measure.errors import UnsupportedMeasurement

INPUT = "input"
OUTPUT = "output"
INOUT = "input+output"  # read and written in place (axpy's y, GEMM's C with β ≠ 0)
SCRATCH = "scratch"  # intermediates of this implementation, not part of the declared operation
ZEROED = "scratch, zero-filled"  # scratch whose initial zeros matter (im2col padding)
PRISTINE = "copy of the initial input"  # restores in-place operands before the check


class StopRequested(Exception):
    """The run's stop flag was seen inside a kernel step (allocation, reference check)."""


def _never() -> bool:
    return False


@dataclass(frozen=True)
class BufferSpec:
    """One array a kernel allocates: name, shape, storage dtype and role; inputs get U[low, high)."""

    name: str
    shape: tuple[int, ...]
    dtype: str
    role: str
    low: float = -1.0
    high: float = 1.0

    @property
    def elements(self) -> int:
        return math.prod(self.shape)

    @property
    def itemsize(self) -> int:
        return 1 if self.dtype == "bool" else lookup_dtype(self.dtype).bits // 8

    @property
    def bytes(self) -> int:
        return self.elements * self.itemsize

    def to_dict(self) -> dict[str, Any]:
        return {**to_plain(self), "bytes": self.bytes}


# how the inputs are drawn (low, high) is the kernel's business, not the run record's
record(BufferSpec, leave_out=("low", "high"))


class MeasuredKernel(ABC):
    """One operation family, implemented once against the backend's array module."""

    family: ClassVar[str] = ""
    in_place: bool = False  # True when a call changes its own inputs (reset before the check)

    def __init__(self, declaration: Declaration, backend: Backend) -> None:
        self.declaration = declaration
        self.params = declaration.params
        self.backend = backend
        self.xp = backend.xp
        self.arrays: dict[str, Any] = {}
        self.should_stop: Callable[[], bool] = _never  # the run puts its stop flag here
        self.dtype_name = self.storage_dtype_name()
        backend.storage_dtype(self.dtype_name)  # refuse unsupported types before planning
        self.check_supported()

    @classmethod
    def for_declaration(cls, declaration: Declaration) -> "type[MeasuredKernel]":
        """The class that measures `declaration`: this one, or a variant its `impl=` selects."""
        return cls

    # -- plan (nothing allocated) ---------------------------------------------------
    def storage_dtype_name(self) -> str:
        """The workbench dtype of the operands (kernels with several fields override)."""
        return str(self.params["dtype"])

    def check_supported(self) -> None:
        """Raise UnsupportedMeasurement for a declaration this kernel cannot run."""

    @abstractmethod
    def buffers(self) -> list[BufferSpec]:
        """Every array the run allocates, in allocation order."""

    def temporary_bytes(self) -> int:
        """Bytes the library allocates per call on top of the buffers (e.g. einsum intermediates)."""
        return 0

    def planned_bytes(self) -> int:
        return sum(spec.bytes for spec in self.buffers()) + self.temporary_bytes()

    @abstractmethod
    def algorithm(self) -> str:
        """What runs, in one line: 'numpy.add(a, b, out=c)'."""

    @abstractmethod
    def executed_path(self) -> str:
        """The instruction path the arithmetic really runs on with this backend."""

    @abstractmethod
    def implied_traffic(self) -> tuple[int, str]:
        """Bytes this implementation moves per call (estimated from its passes), and how they arise."""

    def notes(self) -> list[str]:
        """Facts about this implementation worth keeping with the run."""
        return []

    @abstractmethod
    def precision(self) -> Precision:
        """Rounding units of storage and accumulation, for the check's tolerance."""

    # -- lifecycle -----------------------------------------------------------------
    def allocate(self, seed: int, should_stop: Callable[[], bool]) -> bool:
        """Allocate every buffer: inputs random, outputs NaN, pristine copies filled; False if stopped."""
        backend = self.backend
        specs = self.buffers()
        for number, spec in enumerate(specs):
            array = backend.empty(spec.shape, spec.dtype)
            self.arrays[spec.name] = array
            if spec.role in (INPUT, INOUT):
                if not backend.fill_uniform(array, spec.low, spec.high, seed + number, should_stop):
                    return False
            elif spec.role == OUTPUT and spec.dtype != "bool":
                backend.fill_value(array, math.nan)
            elif spec.role == ZEROED:
                backend.fill_value(array, 0)
        for spec in specs:
            if spec.role == PRISTINE:
                self.xp.copyto(self.arrays[spec.name], self.arrays[spec.name.removesuffix("_initial")])
        self.prepare()
        backend.synchronize()
        return not should_stop()

    def prepare(self) -> None:
        """Build views and constants once the buffers exist (nothing timed happens here)."""

    @abstractmethod
    def __call__(self) -> None:
        """The timed call: the operation, once, writing the output buffers."""

    def reset(self) -> None:
        """Restore in-place operands to their initial values (before the checked call)."""
        for spec in self.buffers():
            if spec.role == PRISTINE:
                self.xp.copyto(self.arrays[spec.name.removesuffix("_initial")], self.arrays[spec.name])

    @abstractmethod
    def output_names(self) -> list[str]:
        """Buffers holding the operation's results (checksummed)."""

    def checksum(self) -> float:
        return self.backend.checksum([self.arrays[name] for name in self.output_names()])

    @abstractmethod
    def compare(self, rng: Any) -> SampledOutputs:
        """A sample of outputs, their float64 references and allowed errors."""

    def release(self) -> None:
        self.arrays.clear()

    def stop_point(self) -> None:
        """Raise StopRequested when the run has been asked to stop (long reference checks call this)."""
        if self.should_stop():
            raise StopRequested

    # -- helpers -----------------------------------------------------------------
    def host64(self, array: Any) -> Any:
        """A float64 NumPy copy of a device array or view."""
        import numpy as np

        return np.asarray(self.backend.to_host(array)).astype(np.float64)

    def take64(self, name: str, flat_indices: Any) -> Any:
        import numpy as np

        return np.asarray(self.backend.take(self.arrays[name], flat_indices)).astype(np.float64)

    def library(self) -> str:
        return self.backend.name

    def accumulator_dtype(self) -> str:
        """fp32 for 16-bit storage, else the storage type: how sums accumulate here."""
        return "fp32" if self.dtype_name in ("fp16", "bf16", "tf32") else self.dtype_name

    def array_dtype(self, name: str) -> Any:
        return self.backend.storage_dtype(name)


def named(reference: str) -> Any:
    """What a "module:name" reference names. Operations name their kernel classes so (`OpSpec.kernel`), and a
    library kernel names the lab kernels built on it so, which keeps its module from importing theirs."""
    module_name, _, attribute = reference.partition(":")
    return getattr(importlib.import_module(module_name), attribute)


def float_info(dtype: Any) -> Any:
    """Limits (min, tiny, eps) of a floating-point array dtype, bfloat16 included.

    numpy.finfo (and cupy.finfo, which is the same function) may refuse the
    ml_dtypes types ("not inexact", depending on the ml_dtypes release);
    ml_dtypes.finfo answers for them and for NumPy's own float types alike.
    """
    import numpy as np

    try:
        import ml_dtypes  # type: ignore[import-not-found]
    except ImportError:
        return np.finfo(dtype)
    return ml_dtypes.finfo(dtype)


def require_float(dtype_name: str, what: str) -> None:
    """Refuse integer operands for kernels that need floating point."""
    if lookup_dtype(dtype_name).kind != "float":
        raise UnsupportedMeasurement(f"{what}: {dtype_name} is an integer type; declare fp16, fp32 or fp64")


def flat_labels(indices: Sequence[int], shape: Sequence[int], name: str) -> list[str]:
    """'c[12, 3]' for each flat index into an array of `shape`."""
    import numpy as np

    labels = []
    for index in indices:
        position = np.unravel_index(int(index), tuple(shape)) if len(shape) else ()
        labels.append(f"{name}[{', '.join(str(int(p)) for p in position)}]")
    return labels
