"""The record classes through the one converter (workbench/records.py): each written, read back and written again
gives the same data; the irregular fields keep their form (keys first, renamed, omitted when default, non-finite
floats as text); a malformed record is refused with the project's error and its one-line message."""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from workbench.measure.errors import MeasurementError
from workbench.measure.latency import LatencyReading
from workbench.measure.record import RunRecord
from workbench.model.devices.nvml import DetectedGPU
from workbench.model.devices.provenance import DeviceProvenance
from workbench.profilers.errors import ProfileError
from workbench.profilers.names import MatchRule
from workbench.records import from_plain, record, to_plain

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))
from session_bytes_synthetic import CHECK, FULL, MINIMAL, PARTIAL, PROVENANCE, TRANSFERS  # noqa: E402


@pytest.mark.parametrize("run", [FULL, MINIMAL, PARTIAL], ids=["full", "minimal", "partial"])
def test_a_run_record_written_and_read_back_is_written_the_same(run: RunRecord) -> None:
    data = json.loads(json.dumps(run.to_dict()))
    assert list(data)[:2] == ["format", "version"]
    assert RunRecord.from_dict(data).to_dict() == data


def test_irregular_fields_keep_their_form() -> None:
    check = CHECK.to_dict()
    assert (check["max_abs_error"], check["worst_ratio"]) == ("nan", "inf")
    bare = DeviceProvenance(kind="cpu", name="", stated_by="inferred").to_dict()
    assert list(bare) == ["kind", "name", "catalogue_key", "matched_by", "stated_by"]
    assert PROVENANCE.to_dict()["clocks_hz"] == {"sm": 1.98e9, "dram": 2.6e9}
    assert isinstance(FULL.to_dict()["samples_s"], list) and isinstance(FULL.to_dict()["notes"], list)
    gpu = DetectedGPU(0, "NVIDIA H100", 80, 70, 1980, 2619, 5120, "9.0", "550", "12.4", pcie_generation=5, pcie_width=16)
    assert list(gpu.to_dict())[2:4] == ["memory_total_bytes", "memory_free_bytes"]
    assert list(gpu.to_dict())[9:12] == ["cuda_driver_version", "derived_bandwidth_byte_per_s", "l2_bytes"]
    assert gpu.to_dict()["derived_bandwidth_byte_per_s"] == gpu.derived_bandwidth()
    copy, collective = (transfer.to_dict() for transfer in TRANSFERS)
    assert list(copy)[4:7] == ["samples_s", "median_s", "rate_byte_per_s"] and "ranks" not in copy
    assert list(collective)[-4:] == ["algbw_byte_per_s", "busbw_byte_per_s", "bus_factor", "ranks"]


@pytest.mark.parametrize(
    "change, message",
    [
        ({"status": "fine"}, "run record status 'fine' is not one of ok, invalid, cancelled"),
        ({"samples_s": [1, -1]}, "run record samples must be seconds from 0 to 1e+06"),
        ({"iterations": "many"}, "run record has a malformed field: invalid literal for int() with base 10: 'many'"),
        ({"timer": None, "kernel": {"family": "x"}}, "run record is missing 'algorithm'"),
    ],
)
def test_a_malformed_run_record_is_refused_with_one_line(change: dict[str, Any], message: str) -> None:
    with pytest.raises(MeasurementError) as caught:
        RunRecord.from_dict({**FULL.to_dict(), **change})
    assert str(caught.value) == message


def test_a_missing_key_is_named_and_optional_parts_read_as_none() -> None:
    data = FULL.to_dict()
    del data["operation"]
    with pytest.raises(MeasurementError, match="run record is missing 'operation'"):
        RunRecord.from_dict(data)
    lean = {key: value for key, value in FULL.to_dict().items() if key not in ("check", "bound", "provenance", "notes")}
    read = RunRecord.from_dict({**lean, "check": {}})
    assert (read.check, read.bound, read.provenance, read.notes) == (None, None, None, ())


def test_lenient_and_strict_readers_keep_their_rules() -> None:
    odd = DeviceProvenance.from_dict({"kind": "tpu", "name": 5, "memory_bytes": True, "clocks_hz": {"sm": -1, "x": 2}})
    assert (odd.kind, odd.name, odd.memory_bytes, dict(odd.clocks_hz)) == ("", "", None, {"x": 2.0})
    with pytest.raises(MeasurementError, match="seconds from 1e-09 to 0.001"):
        LatencyReading.from_dict({"load": "idle", "seconds": 5})
    with pytest.raises(ProfileError, match="a match rule needs text for pattern, declaration and name"):
        MatchRule.from_dict({"pattern": "gemm*"})


def test_record_registers_the_irregular_cases() -> None:
    @dataclass(frozen=True)
    class Sample:
        name: str
        size: int = 0
        tags: tuple[str, ...] = ()
        extra: dict[str, Any] = field(default_factory=dict)

    record(Sample, header={"format": "sample"}, keys={"size": "bytes"}, omit_default=("tags",), missing={"name": "?"})
    assert to_plain(Sample("a", 3)) == {"format": "sample", "name": "a", "bytes": 3, "extra": {}}
    assert from_plain({"bytes": "4", "tags": "xy"}, Sample) == Sample("?", 4, ("x", "y"))
    with pytest.raises(ValueError):
        from_plain({"name": "a", "bytes": "four"}, Sample)
    with pytest.raises(ValueError, match="has no field 'nothing'"):
        record(Sample, keys={"nothing": "x"})


def test_derived_figures_are_written_after_their_field_and_ignored_when_read() -> None:
    @dataclass(frozen=True)
    class Span:
        start: float
        end: float
        label: str = ""

    record(Span, keys={"end": "end_s"}, after={"end": lambda span: {"length_s": span.end - span.start}})
    data = to_plain(Span(1.0, 3.5, "a"))
    assert list(data.items()) == [("start", 1.0), ("end_s", 3.5), ("length_s", 2.5), ("label", "a")]
    assert from_plain({**data, "length_s": 99}, Span) == Span(1.0, 3.5, "a")
    with pytest.raises(ValueError, match="not always written"):
        record(Span, omit_default=("label",), after={"label": lambda span: {}})


def test_a_dataclass_never_registered_is_refused_rather_than_guessed() -> None:
    @dataclass(frozen=True)
    class Stray:
        name: str

    with pytest.raises(TypeError, match="Stray is not a registered record"):
        to_plain(Stray("a"))
    with pytest.raises(TypeError, match="Stray is not a registered record"):
        from_plain({"name": "a"}, Stray)
    with pytest.raises(TypeError, match="Stray is not a registered record"):
        to_plain([Stray("a")])
