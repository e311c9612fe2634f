"""nsys SQLite exports: the GPU they name, by whichever schema wrote them, and the copy kinds without an enum table."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from trace_fixtures import GEMM_KERNEL, write_sqlite

from workbench.model.devices.catalogue import find_device
from workbench.profilers.trace_reader import read_trace
from workbench.steps import parse_step, step_timeline, trace_device

ROWS = [("kernel", GEMM_KERNEL, 1_000, 2_000, 7, None), ("memcpy", "Host-to-Device", 0, 500, 21, 1024)]


def _database(path: Path, *statements: str, rows: list = ROWS) -> Path:
    write_sqlite(path, rows)
    connection = sqlite3.connect(path)
    for statement in statements:
        connection.execute(statement)
    connection.commit()
    connection.close()
    return path


def test_mid_2021_schema_target_info_gpu_keyed_by_id(tmp_path: Path) -> None:
    path = _database(
        tmp_path / "new.sqlite",
        "CREATE TABLE TARGET_INFO_GPU (id INTEGER, name TEXT, busLocation TEXT, totalMemory INTEGER, computeMajor INTEGER, computeMinor INTEGER)",
        "INSERT INTO TARGET_INFO_GPU VALUES (0, 'NVIDIA H100 80GB HBM3', '0000:18:00.0', 85520809984, 9, 0)",
    )
    (gpu,) = read_trace(path).gpus
    assert (gpu.device_id, gpu.name, gpu.memory_bytes, gpu.compute_capability) == (0, "NVIDIA H100 80GB HBM3", 85_520_809_984, "9.0")
    ran_on = trace_device(read_trace(path), find_device("rtx-4090"))
    assert ran_on is not None and ran_on.device is not None and ran_on.device.key == "h100-sxm"
    assert ran_on.note.startswith("the trace ran on GPU 0, NVIDIA H100 80GB HBM3, not on the NVIDIA GeForce RTX 4090 chosen")


def test_newer_schema_maps_gpu_ids_to_cuda_device_ids(tmp_path: Path) -> None:
    """The intervals' deviceId is the CUDA device id; TARGET_INFO_CUDA_DEVICE maps GPU 3 to CUDA device 0."""
    path = _database(
        tmp_path / "newer.sqlite",
        "CREATE TABLE TARGET_INFO_GPU (id INTEGER PRIMARY KEY, name TEXT, busLocation TEXT, totalMemory INTEGER)",
        "INSERT INTO TARGET_INFO_GPU VALUES (3, 'NVIDIA A100-SXM4-80GB', '0000:07:00.0', 85899345920)",
        "INSERT INTO TARGET_INFO_GPU VALUES (5, 'NVIDIA A100-SXM4-80GB', '0000:0b:00.0', 85899345920)",
        "CREATE TABLE TARGET_INFO_CUDA_DEVICE (gpuId INTEGER, cudaId INTEGER, pid INTEGER, uuid TEXT, numMultiprocessors INTEGER)",
        "INSERT INTO TARGET_INFO_CUDA_DEVICE VALUES (3, 0, 4242, '', 108)",
        "INSERT INTO TARGET_INFO_CUDA_DEVICE VALUES (5, 1, 4242, '', 108)",
    )
    gpus = read_trace(path).gpus
    assert [(gpu.device_id, gpu.bus) for gpu in gpus] == [(0, "0000:07:00.0"), (1, "0000:0b:00.0")]  # the one used first


def test_early_2021_schema_target_info_cuda_gpu_keyed_by_device_id(tmp_path: Path) -> None:
    path = _database(
        tmp_path / "old.sqlite",
        "CREATE TABLE TARGET_INFO_CUDA_GPU (deviceId INTEGER, name TEXT, numMultiprocessors INTEGER)",
        "INSERT INTO TARGET_INFO_CUDA_GPU VALUES (0, 'Tesla V100-SXM2-16GB', 80)",
    )
    (gpu,) = read_trace(path).gpus
    assert (gpu.device_id, gpu.name, gpu.memory_bytes) == (0, "Tesla V100-SXM2-16GB", None)


def test_no_gpu_table_leaves_the_chosen_device_alone(tmp_path: Path) -> None:
    trace = read_trace(_database(tmp_path / "plain.sqlite"))
    assert trace.gpus == () and trace_device(trace, find_device("h100-sxm")) is None
    timeline = step_timeline(parse_step("fwd = gemm(M=8192, N=8192, K=8192, dtype=bf16)"), find_device("h100-sxm"), trace=trace)
    assert timeline.measured is not None and timeline.measured.ran_on is None


def test_an_unknown_gpu_keeps_the_chosen_device_and_says_so(tmp_path: Path) -> None:
    path = _database(
        tmp_path / "odd.sqlite",
        "CREATE TABLE TARGET_INFO_GPU (id INTEGER, name TEXT)",
        "INSERT INTO TARGET_INFO_GPU VALUES (0, 'Prototype GPU X')",
    )
    ran_on = trace_device(read_trace(path), find_device("h100-sxm"))
    assert ran_on is not None and ran_on.device is None
    assert ran_on.note == "the trace ran on GPU 0, Prototype GPU X, which the catalogue does not know: bounds use the NVIDIA H100 SXM chosen"


def test_copy_kinds_without_the_enum_table_include_unified_memory(tmp_path: Path) -> None:
    rows = [("kernel", GEMM_KERNEL, 1_000, 2_000, 7, None)]
    path = _database(tmp_path / "um.sqlite", "DROP TABLE ENUM_CUDA_MEMCPY_OPER", rows=rows)
    connection = sqlite3.connect(path)
    columns = [row[1] for row in connection.execute("PRAGMA table_info(CUPTI_ACTIVITY_KIND_MEMCPY)")]
    template = dict.fromkeys(columns, 0)
    for index, kind in enumerate((10, 11, 12, 13, 14)):
        row = dict(template, start=3_000 + 100 * index, deviceId=0, streamId=21, bytes=4096, copyKind=kind)
        row["end"] = row["start"] + 50
        connection.execute(
            f"INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY ({', '.join(f'{name!r}' for name in row)}) VALUES ({', '.join('?' * len(row))})",
            list(row.values()),
        )
    connection.commit()
    connection.close()
    trace = read_trace(path)
    names = [trace.names[trace.name[i]] for i in range(len(trace)) if trace.kind[i] == 1]
    assert names == [
        "[CUDA memcpy Peer-to-Peer]",  # CUPTI_ACTIVITY_MEMCPY_KIND_PTOP
        "[CUDA memcpy Unified Host-to-Device]",  # 11–13: nsys's unified-memory migrations
        "[CUDA memcpy Unified Device-to-Host]",
        "[CUDA memcpy Unified Device-to-Device]",
        "[CUDA memcpy Unknown]",  # a kind no release defines is still a copy
    ]


def test_a_gpu_name_with_control_characters_is_kept_as_text(tmp_path: Path) -> None:
    path = _database(
        tmp_path / "escape.sqlite",
        "CREATE TABLE TARGET_INFO_GPU (id INTEGER, name TEXT)",
        "INSERT INTO TARGET_INFO_GPU VALUES (0, char(27) || '[31mNVIDIA H100 80GB HBM3' || char(7))",
        "INSERT INTO TARGET_INFO_GPU VALUES (1, char(27))",
    )
    (gpu,) = read_trace(path).gpus
    assert gpu.name == "[31mNVIDIA H100 80GB HBM3"
