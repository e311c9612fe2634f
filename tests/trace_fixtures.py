"""Hand-made Nsight Systems traces modelled on real exports, for the trace-import tests and the benchmark.

The SQLite fixture uses the table and column names of `nsys export --type
sqlite` (CUPTI_ACTIVITY_KIND_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
CUPTI_ACTIVITY_KIND_MEMSET, StringIds, ENUM_CUDA_MEMCPY_OPER; times in ns on
the session's clock; names as ids into StringIds); the CSV fixture the
header of `nsys stats --report cuda_gpu_trace --format csv` (recent
releases, with the progress lines nsys prints first).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Iterable, Sequence

KERNEL_COLUMNS = (
    "start INT NOT NULL, end INT NOT NULL, deviceId INT NOT NULL, contextId INT NOT NULL, greenContextId INT, "
    "streamId INT NOT NULL, correlationId INT, globalPid INT, demangledName INT NOT NULL, shortName INT NOT NULL, "
    "mangledName INT, launchType INT, cacheConfig INT, registersPerThread INT NOT NULL, gridX INT NOT NULL, "
    "gridY INT NOT NULL, gridZ INT NOT NULL, blockX INT NOT NULL, blockY INT NOT NULL, blockZ INT NOT NULL, "
    "staticSharedMemory INT NOT NULL, dynamicSharedMemory INT NOT NULL, localMemoryPerThread INT NOT NULL, "
    "localMemoryTotal INT NOT NULL, gridId INT NOT NULL, sharedMemoryExecuted INT, graphNodeId INT, "
    "sharedMemoryLimitConfig INT"
)
MEMCPY_COLUMNS = (
    "start INT NOT NULL, end INT NOT NULL, deviceId INT NOT NULL, contextId INT NOT NULL, greenContextId INT, "
    "streamId INT NOT NULL, correlationId INT, globalPid INT, bytes INT NOT NULL, copyKind INT NOT NULL, "
    "deprecatedSrcId INT, srcKind INT, dstKind INT, srcDeviceId INT, srcContextId INT, dstDeviceId INT, "
    "dstContextId INT, migrationCause INT, graphNodeId INT, virtualAddress INT"
)
MEMSET_COLUMNS = (
    "start INT NOT NULL, end INT NOT NULL, deviceId INT NOT NULL, contextId INT NOT NULL, greenContextId INT, "
    "streamId INT NOT NULL, correlationId INT, globalPid INT, value INT NOT NULL, bytes INT NOT NULL, "
    "graphNodeId INT, memKind INT"
)
MEMCPY_KINDS = [
    (0, "CUPTI_ACTIVITY_MEMCPY_KIND_UNKNOWN", "Unknown"),
    (1, "CUPTI_ACTIVITY_MEMCPY_KIND_HTOD", "Host-to-Device"),
    (2, "CUPTI_ACTIVITY_MEMCPY_KIND_DTOH", "Device-to-Host"),
    (8, "CUPTI_ACTIVITY_MEMCPY_KIND_DTOD", "Device-to-Device"),
    (10, "CUPTI_ACTIVITY_MEMCPY_KIND_PTOP", "Peer-to-Peer"),
]

# cuBLAS's H100 GEMM kernels are extern "C" names: short and demangled are the same text.
GEMM_KERNEL = "sm90_xmma_gemm_f16f16_f16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas"
FILL_KERNEL = "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<c10::Half>, at::detail::Array<char *, 1>>(int, T2, T3)"
NCCL_KERNEL = "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)"
AXPY_KERNEL = "void axpy_kernel<float>(float, const float *, float *, long)"

# The chapter's trace: one 4,096³ fp16 GEMM whose interval lasts 1.8 ms, its inputs copied in first.
# (kind, name, start ns, end ns, stream, bytes)
CHAPTER_ROWS: list[tuple[str, str, int, int, int, int | None]] = [
    ("memcpy", "Host-to-Device", 1_000_000, 1_011_300, 7, 33_554_432),  # A, 32 MiB
    ("memcpy", "Host-to-Device", 1_012_000, 1_023_300, 7, 33_554_432),  # B
    ("memset", "", 1_024_000, 1_026_500, 7, 33_554_432),  # C zeroed
    ("kernel", FILL_KERNEL, 1_030_000, 1_041_000, 7, None),
    ("kernel", GEMM_KERNEL, 1_050_000, 2_850_000, 7, None),  # 1,800,000 ns = 1.8 ms
    ("memcpy", "Device-to-Host", 2_860_000, 2_871_800, 7, 33_554_432),  # C back
]


# A split-K GEMM as cuBLAS runs it: the GEMM kernel writes partial sums, a reduction kernel adds them.
SPLITK_GEMM_KERNEL = "sm80_xmma_gemm_f16f16_f16f32_f32_tn_n_tilesize128x128x32_stage4_warpsize2x2x1_tensor16x8x16_splitk_kernel__5x_cublas"
SPLITK_REDUCE_KERNEL = (
    "void splitKreduce_kernel<32, 16, int, float, __half, float, __half, true, false, false>"
    "(cublasSplitKParams<float>, const float *, const __half *, __half *, const float *, const float *, "
    "const __half *, const float *, __half *, void *, long, float *, int *)"
)


def splitk_rows() -> list[tuple[str, str, int, int, int, int | None]]:
    """Three iterations of a split-K GEMM on stream 7 (each its GEMM kernel, then its reduction, a fill kernel
    between iterations), after a reduction whose GEMM began before the trace did. Hand figures (ns):

        iteration  GEMM                      reduction                 span (first start → last end)  busy (sum)
        1          1,000,000 → 2,500,000     2,510,000 → 2,610,000     1,610,000                      1,600,000
        2          3,000,000 → 4,600,000     4,605,000 → 4,725,000     1,725,000                      1,720,000
        3          5,000,000 → 6,450,000     6,470,000 → 6,560,000     1,560,000                      1,540,000

    median span 1,610,000 ns = 1.61 ms; median busy 1,600,000 ns = 1.6 ms; the GEMM kernel alone has a median
    of 1.5 ms, the reduction 0.1 ms; the reduction at 500,000 (before the first GEMM) is left out."""
    g, r = SPLITK_GEMM_KERNEL, SPLITK_REDUCE_KERNEL
    return [
        ("kernel", r, 500_000, 590_000, 7, None),
        ("kernel", g, 1_000_000, 2_500_000, 7, None),
        ("kernel", r, 2_510_000, 2_610_000, 7, None),
        ("kernel", FILL_KERNEL, 2_700_000, 2_720_000, 7, None),
        ("kernel", g, 3_000_000, 4_600_000, 7, None),
        ("kernel", r, 4_605_000, 4_725_000, 7, None),
        ("kernel", FILL_KERNEL, 4_800_000, 4_820_000, 7, None),
        ("kernel", g, 5_000_000, 6_450_000, 7, None),
        ("kernel", r, 6_470_000, 6_560_000, 7, None),
    ]


def data_parallel_rows() -> list[tuple[str, str, int, int, int, int | None]]:
    """One iteration of the example data-parallel step as a trace: GEMMs 3.9 ms each on stream 7 (the bound
    on an H100 SXM is 2 × 8192³ / 989 TFLOP/s = 1.112 ms), all-reduces 1.3 ms on stream 13, axpy 0.35 ms,
    an input copy first and a fill kernel no operation declares."""
    g, a = 3_900_000, 1_300_000
    return [
        ("memcpy", "Host-to-Device", 0, 200_000, 21, 268_435_456),
        ("kernel", GEMM_KERNEL, 300_000, 300_000 + g, 7, None),
        ("kernel", GEMM_KERNEL, 300_000 + g, 300_000 + 2 * g, 7, None),
        ("kernel", NCCL_KERNEL, 300_000 + 2 * g, 300_000 + 2 * g + a, 13, None),
        ("kernel", GEMM_KERNEL, 300_000 + 2 * g, 300_000 + 3 * g, 7, None),
        ("kernel", NCCL_KERNEL, 300_000 + 3 * g, 300_000 + 3 * g + a, 13, None),
        ("kernel", AXPY_KERNEL, 300_000 + 3 * g + a, 300_000 + 3 * g + a + 350_000, 7, None),
        ("kernel", FILL_KERNEL, 300_000 + 3 * g + a + 400_000, 300_000 + 3 * g + a + 420_000, 7, None),
    ]


def create_tables(connection: sqlite3.Connection, memset: bool = True) -> None:
    connection.execute("CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL)")
    connection.execute(f"CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL ({KERNEL_COLUMNS})")
    connection.execute(f"CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY ({MEMCPY_COLUMNS})")
    if memset:
        connection.execute(f"CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET ({MEMSET_COLUMNS})")
    connection.execute("CREATE TABLE ENUM_CUDA_MEMCPY_OPER (id INTEGER PRIMARY KEY, name TEXT NOT NULL, label TEXT NOT NULL)")
    connection.executemany("INSERT INTO ENUM_CUDA_MEMCPY_OPER VALUES (?, ?, ?)", MEMCPY_KINDS)


def insert_rows(connection: sqlite3.Connection, rows: Iterable[tuple[str, str, int, int, int, int | None]], device: int = 0) -> None:
    """Rows as (kind, name or copy label, start, end, stream, bytes) into the tables nsys writes."""
    strings: dict[str, int] = {value: key for key, value in connection.execute("SELECT id, value FROM StringIds")}
    kinds = {label: kind for kind, _, label in MEMCPY_KINDS}
    kernels, copies, sets = [], [], []
    for correlation, (kind, name, start, end, stream, size) in enumerate(rows, start=100):
        if kind == "kernel":
            if name not in strings:
                strings[name] = len(strings) + 1
                connection.execute("INSERT INTO StringIds VALUES (?, ?)", (strings[name], name))
            sid = strings[name]
            kernels.append((start, end, device, 1, None, stream, correlation, 4242, sid, sid, sid, 0, 0, 168,
                            132, 1, 1, 384, 1, 1, 0, 213_000, 0, 0, correlation, 0, None, 1))
        elif kind == "memcpy":
            copies.append((start, end, device, 1, None, stream, correlation, 4242, size, kinds[name], None, 1, 2,
                           device, 1, device, 1, 0, None, None))
        else:
            sets.append((start, end, device, 1, None, stream, correlation, 4242, 0, size, None, 2))
    connection.executemany(f"INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES ({', '.join('?' * 28)})", kernels)
    connection.executemany(f"INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES ({', '.join('?' * 20)})", copies)
    if sets:
        connection.executemany(f"INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET VALUES ({', '.join('?' * 12)})", sets)


def write_sqlite(path: Path, rows: Sequence[tuple[str, str, int, int, int, int | None]] = CHAPTER_ROWS) -> Path:
    connection = sqlite3.connect(path)
    create_tables(connection)
    insert_rows(connection, rows)
    connection.commit()
    connection.close()
    return path


CSV_PREAMBLE = (
    "Generating SQLite file report1.sqlite from report1.nsys-rep\n"
    "Processing [report1.sqlite] with [/opt/nvidia/nsight-systems/2024.5.1/host-linux-x64/reports/cuda_gpu_trace.py]... \n"
    "\n"
)
CSV_HEADER = (
    "Start (ns),Duration (ns),CorrId,GrdX,GrdY,GrdZ,BlkX,BlkY,BlkZ,Reg/Trd,StcSMem (MB),DymSMem (MB),Bytes (MB),"
    "Throughput (MB/s),SrcMemKd,DstMemKd,Device,Ctx,GreenCtx,Strm,Name\n"
)
DEVICE = "NVIDIA H100 80GB HBM3 (0)"


def csv_row(kind: str, name: str, start: int, end: int, stream: int, size: int | None, correlation: int = 100, device: str = DEVICE) -> str:
    duration = end - start
    if kind == "kernel":
        quoted = '"' + name.replace('"', '""') + '"'
        return f"{start},{duration},{correlation},132,1,1,384,1,1,168,0.000,0.213,,,,,{device},1,,{stream},{quoted}\n"
    label = f"[CUDA memcpy {name}]" if kind == "memcpy" else "[CUDA memset]"
    mb = (size or 0) / 1e6
    rate = mb / (duration / 1e9) if duration else 0
    source, target = ("Pageable", "Device") if kind == "memcpy" else ("", "Device")
    return f"{start},{duration},{correlation},,,,,,,,,,{mb:.3f},{rate:.3f},{source},{target},{device},1,,{stream},{label}\n"


def csv_text(rows: Sequence[tuple[str, str, int, int, int, int | None]] = CHAPTER_ROWS, preamble: bool = True) -> str:
    return (CSV_PREAMBLE if preamble else "") + CSV_HEADER + "".join(
        csv_row(*row, correlation=100 + i) for i, row in enumerate(rows)
    )
