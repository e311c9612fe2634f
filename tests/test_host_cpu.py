"""This machine's CPU as a device: facts from a fake /proc and /sys tree, rates derived and labelled."""

from __future__ import annotations

from pathlib import Path

import pytest

from workbench.model.devices import DERIVED, NOMINAL, find_device
from workbench.model.devices.catalogue import HOST_CPU_KEY
from workbench.model.devices.host import device_from_host, host_device, read_host_cpu

CPUINFO_BLOCK = """processor\t: {n}
vendor_id\t: GenuineIntel
model name\t: Intel(R) Xeon(R) Gold 6338 CPU @ 2.00GHz
physical id\t: 0
core id\t: {core}
cpu MHz\t\t: {mhz}
flags\t\t: fpu sse sse2 avx fma avx2 avx512f avx512bw
"""


def fake_tree(root: Path, max_khz: int | None = 3_200_000) -> Path:
    # 4 logical CPUs on 2 cores (two threads each)
    blocks = [CPUINFO_BLOCK.format(n=n, core=n // 2, mhz=1800.0 + n) for n in range(4)]
    (root / "proc").mkdir(parents=True)
    (root / "proc/cpuinfo").write_text("\n".join(blocks))
    (root / "proc/meminfo").write_text("MemTotal:       65536000 kB\nMemAvailable:   1000 kB\n")
    for cpu in range(4):
        for index, (level, kind, size, shared) in enumerate(
            [(1, "Data", "48K", f"{cpu}"), (1, "Instruction", "32K", f"{cpu}"), (2, "Unified", "1280K", f"{cpu // 2 * 2}-{cpu // 2 * 2 + 1}"), (3, "Unified", "48M", "0-3")]
        ):
            directory = root / f"sys/devices/system/cpu/cpu{cpu}/cache/index{index}"
            directory.mkdir(parents=True)
            (directory / "level").write_text(f"{level}\n")
            (directory / "type").write_text(f"{kind}\n")
            (directory / "size").write_text(f"{size}\n")
            (directory / "shared_cpu_list").write_text(f"{shared}\n")
    if max_khz is not None:
        freq = root / "sys/devices/system/cpu/cpu0/cpufreq"
        freq.mkdir(parents=True)
        (freq / "cpuinfo_max_freq").write_text(f"{max_khz}\n")
    return root


def test_facts_from_the_os(tmp_path: Path) -> None:
    cpu = read_host_cpu(fake_tree(tmp_path))
    assert cpu.model == "Intel(R) Xeon(R) Gold 6338 CPU @ 2.00GHz"
    assert (cpu.physical_cores, cpu.logical_cores) == (2, 4)
    assert cpu.simd_bits == 512 and cpu.simd_name == "AVX-512" and cpu.has_fma
    assert cpu.clock_mhz == 3200 and cpu.clock_source == "cpufreq maximum"
    names = {c.name: (c.instance_bytes, c.instances) for c in cpu.caches}
    assert names == {"L1d": (48 * 1024, 4), "L1i": (32 * 1024, 4), "L2": (1280 * 1024, 2), "L3": (48 * 2**20, 1)}
    assert cpu.memory_bytes == 65_536_000 * 1024


def test_rates_are_derived_and_say_how(tmp_path: Path) -> None:
    device = device_from_host(read_host_cpu(fake_tree(tmp_path)))
    assert device.key == HOST_CPU_KEY and device.kind == "cpu"
    # 2 cores × 3.2 GHz × 16 fp32 lanes × 2 FMA pipes × 2 FLOP = 409.6 GFLOP/s
    assert device.rate("fp32").value == pytest.approx(409.6e9)
    assert device.rate("fp64").value == pytest.approx(204.8e9)  # 8 fp64 lanes
    for path in ("fp32", "fp64"):
        rate = device.overrides.get(path) or device.peak[path]
        assert rate.source == DERIVED and rate.citation
    # the OS does not report DRAM bandwidth: the stand-in is labelled nominal, never derived
    assert device.bandwidth.source == NOMINAL and device.bandwidth.citation
    assert "2 cores × 3.2 GHz" in device.rate("fp32").citation
    assert "calibrate" in device.bandwidth.citation
    assert device.l2_bytes == 2 * 1280 * 1024 and "L3 48 MiB × 1" in device.notes
    assert "Xeon(R) Gold 6338" in device.name


def test_clock_now_when_cpufreq_is_absent(tmp_path: Path) -> None:
    cpu = read_host_cpu(fake_tree(tmp_path, max_khz=None))
    assert cpu.clock_mhz == 1803.0 and "clock now" in cpu.clock_source


def test_empty_tree_still_gives_a_device(tmp_path: Path) -> None:
    cpu = read_host_cpu(tmp_path)
    device = device_from_host(cpu)
    assert cpu.physical_cores == 1 and cpu.clock_mhz is None and not cpu.caches
    assert "fp32" not in device.peak and device.bandwidth.source == NOMINAL  # no clock, no derived compute rate


def test_calibration_replaces_the_derived_rates() -> None:
    device = find_device(HOST_CPU_KEY)
    measured = device.with_rate("fp32", 1.0e11, "measured", "calibration")
    assert measured.rate("fp32").source == "measured" and measured.rate("fp16_tc").value == 1.0e11


def test_this_machine() -> None:
    device = host_device()
    assert device is find_device("host-cpu")
    assert device.name.startswith("This machine: ")
    assert device.bandwidth.value > 0


def test_a_session_on_this_machine_round_trips() -> None:
    from workbench.documents.session import DeviceChoice, Session, dumps, loads

    session = Session(device=DeviceChoice(key=HOST_CPU_KEY))
    again = loads(dumps(session))
    assert again.device.key == HOST_CPU_KEY and again.device.resolve().key == HOST_CPU_KEY


def test_a_detected_gpu_keeps_the_l2_size_cuda_reported() -> None:
    from workbench.model.devices.nvml import DetectedGPU
    from workbench.documents.session import DeviceChoice, Session, dumps, loads

    gpu = DetectedGPU(0, "NVIDIA H200", 150_754_820_096, 150_000_000_000, 1980, 3201, 6144, "9.0", "570.86.15", "12.8", 62_914_560)
    session = Session(device=DeviceChoice(key="nvml-0", detected=gpu.to_dict()))
    device = loads(dumps(session)).device.resolve()
    assert device.key == "h200-sxm" and device.l2_bytes == 62_914_560 and "CUDA" in device.l2_source


def test_a_cpu_run_is_compared_with_this_machine_only_when_it_ran_here() -> None:
    from workbench.model.devices.host import cpu_model
    from workbench.model.devices.provenance import CPU_DEVICE_KEY, DeviceProvenance, catalogue_device, cpu_catalogue_device

    assert cpu_catalogue_device().key == HOST_CPU_KEY  # a run starting now, here
    here = DeviceProvenance(kind="cpu", name=cpu_model(), catalogue_key=CPU_DEVICE_KEY, matched_by="the CPU entry")
    assert catalogue_device(here).key == HOST_CPU_KEY  # an older run of this machine, matched to the generic entry then
    elsewhere = DeviceProvenance(kind="cpu", name="Imaginary CPU 9000", catalogue_key=HOST_CPU_KEY, matched_by="this machine's CPU")
    assert catalogue_device(elsewhere).key == CPU_DEVICE_KEY  # another machine's CPU: nothing here knows its figures
    chosen = DeviceProvenance(kind="cpu", name=cpu_model(), catalogue_key=CPU_DEVICE_KEY, matched_by="--device")
    assert catalogue_device(chosen).key == CPU_DEVICE_KEY  # the entry a user named stays
