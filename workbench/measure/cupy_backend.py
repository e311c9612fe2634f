"""CuPy on one CUDA device, timed with CUDA events on the current stream.

Each start event waits behind a device-side delay long enough for the host to
queue the call, so the events time the call's device work and not its launch
(`workbench.measure.launch_cover`). Imported only when the CuPy backend is
chosen: `import cupy` happens in the constructor.
"""

from __future__ import annotations

import os
import platform
import time
from typing import Any, Callable, Sequence

from workbench.errors import WorkbenchError
from workbench.measure.backend_base import (
    FILL_CHUNK_GPU,
    STORAGE_TYPES,
    TRITON_FLUSH_BYTES,
    Backend,
    fill_in_chunks,
    refuse_dtype,
)
from workbench.measure.cublas_plan import (
    CUBLAS_COMPUTE_32F,
    CUBLAS_COMPUTE_32F_FAST_TF32,
    CUBLAS_COMPUTE_64F,
    CUBLAS_GEMM_DEFAULT,
    CUDA_R_16BF,
    CUDA_R_16F,
    CUDA_R_32F,
    CUDA_R_64F,
    GemmPlan,
    plan_gemm,
)
from workbench.measure.cupy_install import install_hint
from workbench.measure.errors import MeasurementError, UnsupportedMeasurement, one_line
from workbench.measure.gpu_facts import (
    cuda_version_text,
    nvml_driver_version,
    nvml_index_for_pci,
    nvml_uuid,
    optional_figure,
)
from workbench.measure.launch_cover import COVER_KERNEL, COVER_SOURCE, CYCLE_CAP_PER_NS, LaunchCover, format_us


class CupyBackend(Backend):
    """CuPy on one CUDA device, timed with CUDA events on the current stream.

    cover_launch=False times each call from an idle stream without the delay
    before the start event, as cupyx.profiler.benchmark does: the events then
    include the host's launch time (for comparisons with that tool only).
    """

    name = "cupy"
    kind = "gpu"

    def __init__(self, device_index: int | None = None, *, cover_launch: bool = True) -> None:
        import cupy

        self.xp = cupy
        self._cupy = cupy
        self._device = cupy.cuda.Device(device_index) if device_index is not None else cupy.cuda.Device()
        self._device.use()
        self._props = cupy.cuda.runtime.getDeviceProperties(self._device.id)
        self._flush_buffers: list[Any] = []
        self._bf16: Any = None
        self._bf16_checked = False
        self._bf16_reason = ""
        self._nvml_index: int | None = None
        self._nvml_looked_up = False
        self._init_timing(cover_launch)

    def _init_timing(self, cover_launch: bool, clock: Callable[[], float] = time.perf_counter) -> None:
        """The timer's state: the launch cover (None when off), its kernel (built on first use), the host clock."""
        self._cover: LaunchCover | None = LaunchCover() if cover_launch else None
        self._cover_kernel: Any = None
        self._clock = clock

    # -- identity ------------------------------------------------------------
    @property
    def device_name(self) -> str:
        name = self._props.get("name", b"")
        return name.decode() if isinstance(name, bytes) else str(name)

    @property
    def compute_capability(self) -> str:
        return f"{self._props.get('major', 0)}.{self._props.get('minor', 0)}"

    @property
    def pci_bus_id(self) -> str:
        try:
            return str(self._device.pci_bus_id)
        except Exception:  # older CuPy: no pci_bus_id property
            return ""

    def describe(self) -> str:
        return f"GPU {self._device.id}: {self.device_name} (compute capability {self.compute_capability})"

    def nvml_index(self) -> int | None:
        """The NVML index of this CUDA device, matched by PCI bus id (CUDA and NVML orders can differ)."""
        if not self._nvml_looked_up:
            self._nvml_looked_up = True
            self._nvml_index = nvml_index_for_pci(self.pci_bus_id)
            if self._nvml_index is None and not os.environ.get("CUDA_VISIBLE_DEVICES"):
                self._nvml_index = self._device.id  # without a PCI match, the orders agree when nothing is hidden
        return self._nvml_index

    def environment(self) -> dict[str, Any]:
        cupy = self._cupy
        import numpy

        runtime = cupy.cuda.runtime
        env: dict[str, Any] = {
            "backend": self.name,
            "device": self.describe(),
            "device_name": self.device_name,
            "device_index": self._device.id,
            "pci_bus_id": self.pci_bus_id,
            "compute_capability": self.compute_capability,
            "memory_total_bytes": int(self._props.get("totalGlobalMem", 0)),
            "l2_bytes": int(self._props.get("l2CacheSize", 0)),
            "sm_count": int(self._props.get("multiProcessorCount", 0)),
            "cupy": cupy.__version__,
            "numpy": numpy.__version__,
            "python": platform.python_version(),
            "cuda_runtime": cuda_version_text(optional_figure(runtime.runtimeGetVersion)),
            "cuda_driver_api": cuda_version_text(optional_figure(runtime.driverGetVersion)),
            "nvml_index": self.nvml_index(),
            "CUPY_TF32": os.environ.get("CUPY_TF32", ""),
        }
        driver = nvml_driver_version()
        if driver:
            env["driver"] = driver
        uuid = nvml_uuid(env["nvml_index"])
        if uuid:
            env["uuid"] = uuid  # with the PCI bus id: which physical GPU ran, for the run's provenance
        return env

    def conditions(self) -> dict[str, Any]:
        from workbench.model.devices.nvml import read_conditions

        index = self.nvml_index()
        return read_conditions(index) if index is not None else {}

    # -- data types and arrays -------------------------------------------------
    def storage_dtype(self, name: str) -> Any:
        if name == "bf16":
            dtype = self._bfloat16()
            if dtype is None:
                raise UnsupportedMeasurement(f"bf16: {self._bf16_reason}; declare fp16 instead")
            return dtype
        if name.startswith("fp8"):
            raise UnsupportedMeasurement(
                f"{name}: CuPy has no fp8 arrays and cublasGemmEx has no fp8 path (only cuBLASLt has), so {name} "
                "kernels are not measured; analyse them with the bounds, or declare fp16/bf16"
            )
        storage = STORAGE_TYPES.get(name)
        if storage is None:
            raise refuse_dtype(name, "CuPy", "declare fp16, bf16, fp32 or fp64")
        if name == "tf32" and self._cc_major() < 8:
            raise UnsupportedMeasurement("tf32: TF32 tensor cores need compute capability 8.0 or newer")
        return self._cupy.dtype(storage)

    def _cc_major(self) -> int:
        return int(self._props.get("major", 0))

    def _bfloat16(self) -> Any:
        """CuPy's bfloat16 dtype when it can hold, convert, add and sum bf16 arrays here, else None (and why)."""
        if not self._bf16_checked:
            self._bf16_checked = True
            self._bf16 = None
            try:
                import ml_dtypes  # type: ignore[import-not-found]
            except ImportError:
                self._bf16_reason = f"CuPy holds bfloat16 only with ml_dtypes installed ({install_hint()})"
                return None
            import numpy

            if numpy.lib.NumpyVersion(numpy.__version__) < "2.1.2":
                self._bf16_reason = f"CuPy holds bfloat16 only with NumPy 2.1.2 or newer (this is {numpy.__version__})"
                return None
            if self._cc_major() < 8:
                self._bf16_reason = f"bf16 tensor cores need compute capability 8.0 or newer (this GPU is {self.compute_capability})"
                return None
            cupy = self._cupy
            try:
                dtype = numpy.dtype(ml_dtypes.bfloat16)
                probe = cupy.arange(8, dtype=cupy.float32).astype(dtype)
                total = float(cupy.sum(probe + probe, dtype=cupy.float64))
                if total != 56.0:
                    raise ValueError(f"sum of a bf16 probe is {total}, expected 56")
                self._bf16 = dtype
            except Exception as exc:
                self._bf16_reason = f"this CuPy could not compute with bfloat16 arrays ({one_line(exc)})"
        return self._bf16

    def fill_uniform(self, array: Any, low: float, high: float, seed: int, should_stop: Callable[[], bool]) -> bool:
        cupy = self._cupy
        state = cupy.random.RandomState(seed)
        generated = cupy.float64 if array.dtype == cupy.float64 else cupy.float32
        return fill_in_chunks(
            array, FILL_CHUNK_GPU, lambda count: state.random_sample(size=count, dtype=generated), low, high, should_stop
        )

    def to_host(self, array: Any) -> Any:
        return self._cupy.asnumpy(array)

    def take(self, array: Any, flat_indices: Any) -> Any:
        cupy = self._cupy
        return cupy.asnumpy(array.reshape(-1)[cupy.asarray(flat_indices)])

    def as_strided(self, array: Any, shape: Sequence[int], strides: Sequence[int]) -> Any:
        from cupy.lib.stride_tricks import as_strided

        return as_strided(array, shape=tuple(shape), strides=tuple(strides))

    # -- memory ------------------------------------------------------------------
    def free_memory(self) -> tuple[int, str]:
        free, _total = self._cupy.cuda.runtime.memGetInfo()
        pooled = self._cupy.get_default_memory_pool().free_bytes()
        return int(free) + int(pooled), "cudaMemGetInfo free bytes plus CuPy's pooled free blocks"

    def flush_bytes(self) -> int:
        return max(TRITON_FLUSH_BYTES, 2 * int(self._props.get("l2CacheSize", 0)))

    def make_flush(self, nbytes: int) -> Callable[[], None]:
        buffer = self._cupy.empty(nbytes, dtype=self._cupy.uint8)
        self._flush_buffers.append(buffer)

        def flush() -> None:
            buffer.fill(0)

        return flush

    def release(self) -> None:
        self._flush_buffers.clear()
        self._cupy.get_default_memory_pool().free_all_blocks()

    # -- timing ------------------------------------------------------------------
    def synchronize(self) -> None:
        self._device.synchronize()

    def wall_time(self, call: Callable[[], None]) -> float:
        """Seconds of one call including its completion; the time the host took to queue it seeds the launch cover."""
        clock = self._clock
        start = clock()
        call()
        queued = clock()
        self.synchronize()
        finished = clock()
        if self._cover is not None:
            self._cover.seed(queued - start)
        return finished - start

    def prepare_timing(self) -> None:
        if self._cover is not None:
            self._cover.reset()
            self._queue_cover(0.0)  # compiled and loaded now (CuPy compiles a RawKernel at its first launch)

    def iteration_overhead_s(self) -> float:
        return self._cover.cover_s() if self._cover is not None else 0.0

    def timing_notes(self) -> list[str]:
        if self._cover is None:
            return ["no launch cover: each start event was stamped as soon as it was recorded, so on an idle stream "
                    "the samples include the host's launch time (as cupyx.profiler.benchmark times)"]
        return self._cover.notes()

    def _cover_kernel_ready(self) -> Any:
        if self._cover_kernel is None:
            self._cover_kernel = self._cupy.RawKernel(COVER_SOURCE, COVER_KERNEL)
        return self._cover_kernel

    def _queue_cover(self, seconds: float) -> None:
        """Queue the one-thread spin that keeps the stream busy for `seconds` (launch_cover.py)."""
        nanoseconds = int(seconds * 1e9)
        cupy = self._cupy
        self._cover_kernel_ready()((1,), (1,), (cupy.uint64(nanoseconds), cupy.uint64(nanoseconds * CYCLE_CAP_PER_NS)))

    def time_calls(
        self, call: Callable[[], None], count: int, flush: Callable[[], None] | None, sync_each: bool
    ) -> list[float]:
        cuda = self._cupy.cuda
        cover, clock = self._cover, self._clock
        starts = [cuda.Event() for _ in range(count)]
        ends = [cuda.Event() for _ in range(count)]
        previous_end = None  # each batch starts on an idle stream: the warm-up or the last batch was waited for
        covered, queue_started, idle = 0.0, 0.0, True
        for start, end in zip(starts, ends):
            if cover is not None:
                idle = previous_end is None or previous_end.done  # no earlier work left to keep the stream busy
                covered = cover.cover_s()
                self._queue_cover(covered)  # the stream stays busy while the host queues what follows
                queue_started = clock()
            if flush is not None:
                flush()  # after the cover: nothing runs between the flush and the call, as in triton's do_bench
            start.record()
            call()
            end.record()
            if cover is not None:
                cover.observe(clock() - queue_started, covered, idle)
            if sync_each:
                end.synchronize()
            previous_end = end
        ends[-1].synchronize()
        # get_elapsed_time answers in milliseconds.
        return [cuda.get_elapsed_time(start, end) * 1e-3 for start, end in zip(starts, ends)]

    @property
    def timer_name(self) -> str:
        events = "CUDA events on the current stream around each call (cupy.cuda.get_elapsed_time, ms → s)"
        if self._cover is None:
            return f"{events}; no launch cover (the samples include the host's launch on an idle stream)"
        return (
            f"{events}; each start event queued behind a device-side delay (a one-thread kernel spinning on the "
            f"global timer, at least {format_us(self._cover.minimum_s)} and twice the host's time to queue a call) "
            "so the events time the call's device work, not its launch"
        )

    # -- matrix products -----------------------------------------------------------
    def _gemm_types(self, dtype: Any, tf32: bool) -> tuple[int, int, Any]:
        """(cuda data type, cuBLAS compute type, numpy dtype of α and β) for an operand dtype."""
        import numpy
        from cupy_backends.cuda.libs import cublas

        runtime = self._cupy.cuda.runtime
        compute_32f = getattr(cublas, "CUBLAS_COMPUTE_32F", CUBLAS_COMPUTE_32F)
        if dtype == numpy.float16:
            return getattr(runtime, "CUDA_R_16F", CUDA_R_16F), compute_32f, numpy.float32
        if dtype == numpy.float32:
            compute = getattr(cublas, "CUBLAS_COMPUTE_32F_FAST_TF32", CUBLAS_COMPUTE_32F_FAST_TF32) if tf32 else compute_32f
            return getattr(runtime, "CUDA_R_32F", CUDA_R_32F), compute, numpy.float32
        if dtype == numpy.float64:
            return getattr(runtime, "CUDA_R_64F", CUDA_R_64F), getattr(cublas, "CUBLAS_COMPUTE_64F", CUBLAS_COMPUTE_64F), numpy.float64
        if self._bfloat16() is not None and dtype == self._bfloat16():
            return getattr(runtime, "CUDA_R_16BF", CUDA_R_16BF), compute_32f, numpy.float32
        raise UnsupportedMeasurement(f"no cuBLAS GEMM for dtype {dtype}")

    def matmul(self, a: Any, b: Any, out: Any, *, beta: float = 0.0, scratch: Any = None, tf32: bool = False) -> None:
        """cuBLAS GemmEx / GemmStridedBatchedEx with an explicit compute type, β applied by cuBLAS.

        cupy.matmul is not used for these products: it casts batched fp16 to fp32
        before the GEMM (cupy PR #10317) and takes TF32 from process-wide state.
        """
        plan = self._plan(a, b, out)
        if plan is None and tf32 and (a.ndim > 2 or b.ndim > 2):
            # cupy.matmul's batched fp32 path never uses TF32: copy the operands into layouts cuBLAS takes.
            a, b = self._cupy.ascontiguousarray(a), self._cupy.ascontiguousarray(b)
            plan = self._plan(a, b, out)
        if plan is None:
            self._fallback_matmul(a, b, out, beta, scratch, tf32)
            return
        import numpy
        from cupy_backends.cuda.libs import cublas

        data_type, compute_type, scalar = self._gemm_types(out.dtype, tf32)
        alpha_value = numpy.array(1.0, dtype=scalar)
        beta_value = numpy.array(beta, dtype=scalar)
        handle = self._cupy.cuda.device.get_cublas_handle()
        algo = getattr(cublas, "CUBLAS_GEMM_DEFAULT", CUBLAS_GEMM_DEFAULT)
        item = out.dtype.itemsize
        a_base, b_base, c_base = a.data.ptr, b.data.ptr, out.data.ptr
        ia, ib, ic = plan.inner_strides
        for oa, ob, oc in plan.outer_offsets:
            # Column-major C^T (n × m) = B^T (n × k) · A^T (k × m).
            first = b_base + ob * item
            second = a_base + oa * item
            target = c_base + oc * item
            if plan.inner_count == 1:
                cublas.gemmEx(
                    handle, plan.b.op, plan.a.op, plan.n, plan.m, plan.k,
                    alpha_value.ctypes.data,
                    first, data_type, plan.b.ld,
                    second, data_type, plan.a.ld,
                    beta_value.ctypes.data,
                    target, data_type, plan.ldc,
                    compute_type, algo,
                )
            else:
                cublas.gemmStridedBatchedEx(
                    handle, plan.b.op, plan.a.op, plan.n, plan.m, plan.k,
                    alpha_value.ctypes.data,
                    first, data_type, plan.b.ld, ib,
                    second, data_type, plan.a.ld, ia,
                    beta_value.ctypes.data,
                    target, data_type, plan.ldc, ic,
                    plan.inner_count, compute_type, algo,
                )

    def _plan(self, a: Any, b: Any, out: Any) -> GemmPlan | None:
        if not (a.dtype == b.dtype == out.dtype):
            return None
        item = out.dtype.itemsize
        strides = [tuple(s // item for s in x.strides) for x in (a, b, out)]
        if any(s % item for x in (a, b, out) for s in x.strides):
            return None
        return plan_gemm(a.shape, strides[0], b.shape, strides[1], out.shape, strides[2])

    def _fallback_matmul(self, a: Any, b: Any, out: Any, beta: float, scratch: Any, tf32: bool = False) -> None:
        """cupy.matmul for layouts cuBLAS cannot take as they stand, with fp32 products on the declared path.

        CuPy picks the compute type of fp32 products from process-wide state
        (first set from CUPY_TF32): it is set here for the call — TF32 exactly
        when declared, plain fp32 otherwise — and put back afterwards, so a
        record's path matches what ran whatever the environment says.
        """
        from cupy._core import _routines_linalg as linalg

        cupy = self._cupy
        wanted = linalg.COMPUTE_TYPE_TF32 if tf32 else linalg.COMPUTE_TYPE_DEFAULT
        previous = linalg.get_compute_type(cupy.float32)
        linalg.set_compute_type(cupy.float32, wanted)
        try:
            if beta == 0:
                cupy.matmul(a, b, out=out)
                return
            if scratch is None:
                raise MeasurementError("internal: β ≠ 0 needs a scratch array for cupy.matmul")
            cupy.matmul(a, b, out=scratch)
            cupy.multiply(out, beta, out=out)
            cupy.add(out, scratch, out=out)
        finally:
            linalg.set_compute_type(cupy.float32, previous)

    def matmul_scratch_needed(self, beta: float) -> bool:
        return False

    def matmul_algorithm(self, dtype_name: str, beta: float = 0.0) -> str:
        compute = {
            "fp16": "CUBLAS_COMPUTE_32F, fp16 operands",
            "bf16": "CUBLAS_COMPUTE_32F, bf16 operands",
            "tf32": "CUBLAS_COMPUTE_32F_FAST_TF32",
            "fp32": "CUBLAS_COMPUTE_32F",
            "fp64": "CUBLAS_COMPUTE_64F",
        }.get(dtype_name, "")
        beta_text = f", β = {beta:g} applied by cuBLAS" if beta != 0 else ""
        return f"cublasGemmEx / cublasGemmStridedBatchedEx ({compute}{beta_text})"

    def executed_matrix_path(self, dtype_name: str) -> str:
        if dtype_name == "fp64":
            # Double-precision tensor cores exist on the data-centre parts (8.0 A100, 9.0 H100/H200, 10.0 B200).
            return "fp64_tc" if self.compute_capability in ("8.0", "9.0", "10.0") else "fp64"
        return {"fp16": "fp16_tc", "bf16": "bf16_tc", "tf32": "tf32_tc"}.get(dtype_name, "fp32")

    def translate(self, exc: BaseException) -> WorkbenchError | None:
        translated = super().translate(exc)
        if translated is not None:
            return translated
        module = type(exc).__module__ or ""
        if module.startswith(("cupy", "cupy_backends")):
            return MeasurementError(f"CUDA error during the run: {type(exc).__name__}: {exc}")
        return None
