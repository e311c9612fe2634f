"""Issue 29's scale paths read as the plain ways do: the trace CSV's distinct-name reading, the unmatched
names put in order only as far as read, the suggestions and rule selection asked of many names at once,
and the report's note on kernels left unchecked. (The timings are benchmarks/bench_hostile_scale.py's.)"""

from __future__ import annotations

import csv
import io
import sys
from pathlib import Path

import pytest

import workbench.profilers.trace as trace_module
from workbench.profilers import trace_csv, trace_csv_columns
from workbench.profilers.matching import operation_suggester
from workbench.profilers.names import kernel_base_name, pattern_matcher, select_names
from workbench.profilers.trace import read_trace_csv_stream
from workbench.steps import Unmatched, match_trace, parse_step

sys.path.insert(0, str(Path(__file__).parent))

from trace_fixtures import CSV_HEADER  # noqa: E402

STEP = "fwd = gemm(M=64, N=64, K=64, dtype=bf16)\nupd = add(n=2**20, dtype=fp32) after fwd\n"

# Name cells in the forms a file may hold them: plain, quoted with commas, doubled quotes inside, spaces
# around (the same name as a plain one), not ASCII, an unquoted comma (the csv module's cell ends there),
# bytes that are not UTF-8, and names that repeat.
NAME_CELLS = [
    b"plain_kernel",
    b'"void f<float, 4>(float *, int)"',
    b'"say ""hi"" kernel"',
    b"  plain_kernel  ",
    '"核函数<int>(int)"'.encode(),
    b"left,right",
    b'"bad \xff\xfe bytes"',
    b"plain_kernel",
    b'"sm90_xmma_gemm_f16f16"',
    b"[CUDA memset]",
]


def trace_bytes(cells: list[bytes], repeat: int) -> bytes:
    """A cuda_gpu_trace CSV whose rows take the name cells in turn, on streams 7 to 9 and two devices."""
    rows = []
    for index in range(repeat * len(cells)):
        device = b"GPU A (0)" if index % 5 else b"  GPU B (1)"
        rows.append(b"%d,800,100,132,1,1,384,1,1,168,0.000,0.213,,,,,%s,1,,%d,%s\n"
                    % (1_000 * index, device, 7 + index % 3, cells[index % len(cells)]))
    return CSV_HEADER.encode() + b"".join(rows)


def expected_rows(data: bytes) -> list[tuple[str, tuple[str, str]]]:
    """Each row's name and lane as the csv module reads them (the reader's reference way)."""
    records = list(csv.reader(io.StringIO(data.decode("utf-8", errors="replace"), newline="")))
    header = records[0]
    name, device, stream = header.index("Name"), header.index("Device"), header.index("Strm")
    return [(r[name].strip(), (r[device].strip() or "GPU", r[stream].strip() or "?")) for r in records[1:]]


@pytest.mark.parametrize("block_bytes", [4 * 2**20, 600])
@pytest.mark.parametrize("cached_keys", [2**16, 3])
def test_the_distinct_name_path_reads_every_name_form_as_the_csv_module(monkeypatch, block_bytes: int, cached_keys: int) -> None:
    # Small blocks: many blocks, some on each path; a small key cache: keys learnt again once it is full.
    monkeypatch.setattr(trace_csv, "_CSV_BLOCK_BYTES", block_bytes)
    monkeypatch.setattr(trace_csv_columns, "MAX_CACHED_KEYS", cached_keys)
    data = trace_bytes(NAME_CELLS, repeat=40)
    trace = read_trace_csv_stream(io.BytesIO(data), "t.csv")
    expected = expected_rows(data)
    assert [(trace.names[n], trace.streams[s]) for n, s in zip(trace.name, trace.stream)] == expected
    assert trace.names == list(dict.fromkeys(name for name, _ in expected))  # each once, in the order first seen
    assert trace.streams == list(dict.fromkeys(lane for _, lane in expected))
    assert [trace.kind[i] for i in range(len(NAME_CELLS))] == [trace_module.kind_of_name(n) for n, _ in expected[:len(NAME_CELLS)]]


def test_a_blank_name_among_new_names_is_still_refused_with_its_line() -> None:
    data = trace_bytes([b"kernel_%d" % i for i in range(50)] + [b'"  "'], repeat=1)
    with pytest.raises(trace_module.TraceError, match="Name cell is empty.*line 52|line 52.*Name cell is empty"):
        read_trace_csv_stream(io.BytesIO(data), "t.csv")


def test_the_unmatched_names_come_in_the_order_of_a_full_sort_however_far_they_are_read() -> None:
    # Totals that tie (three durations over many names) and names that sort differently from their order.
    rows = []
    for index in range(600):
        duration = (100, 200, 200, 300)[index % 4]
        rows.append(f"{1_000 * index},{duration},1,1,1,1,1,1,1,1,0,0,,,,,GPU,1,,7,\"k_{(index * 7919) % 600:04d}_{index % 3}\"\n")
    data = (CSV_HEADER + "".join(rows)).encode()
    trace = read_trace_csv_stream(io.BytesIO(data), "t.csv")
    measured = match_trace(parse_step(STEP), trace)
    reference = sorted(
        (Unmatched(trace.names[i], "kernel", count, total / 1e9) for i, count, total in trace.name_totals()),
        key=lambda item: (-item.total_s, item.name),
    )
    unmatched = measured.unmatched
    assert len(unmatched) == len(reference) == 600
    assert unmatched[:10] == tuple(reference[:10])
    assert unmatched[5] == reference[5] and unmatched[-1] == reference[-1] and unmatched[-600] == reference[0]
    assert unmatched[150:400:7] == tuple(reference[150:400:7])
    assert unmatched[::-1] == tuple(reversed(reference))
    assert list(unmatched) == reference and unmatched == reference
    with pytest.raises(IndexError):
        unmatched[600]


def test_suggestions_asked_at_once_are_those_asked_one_by_one() -> None:
    declarations = {"fwd": "gemm(M=64, N=64, K=64, dtype=bf16)", "ar": "allreduce(n=2**20, dtype=fp32, ranks=8)",
                    "s": "scale(n=4, dtype=fp32)"}
    names = [
        "sm90_xmma_gemm_f16f16_kernel", "void gemm_helper<int> tail_kernel(int)",  # the word outside the base name
        "ncclDevKernel_AllReduce_Sum_f32", "MUL_\u212aERNEL_x",  # the Kelvin sign lowers to an ASCII k
        "plain", "GEMM\nsecond line", "", "  spaced_GEMM  ", "x" * 3000, "matmul_then_gemm",
    ] + [f"synthetic_{i}" for i in range(200)]
    suggest = operation_suggester(declarations)
    one_by_one = [suggest(name) for name in names]
    assert "fwd" in one_by_one and "s" in one_by_one  # the set holds names that are suggested
    assert suggest.many(names) == one_by_one
    assert suggest.many(names, [kernel_base_name(n) for n in names]) == one_by_one
    assert suggest.many([n for n in names if "\n" not in n]) == [s for n, s in zip(names, one_by_one) if "\n" not in n]


@pytest.mark.parametrize("pattern", ["*", "**", "*gemm*", "regex:kern.l_1$", "kernel_1", "syn*[0-9]", "foo", "*_kernel"])
def test_rule_selection_asked_at_once_is_the_rule_asked_per_name(pattern: str) -> None:
    names = ["void kernel_1<float>(float *)", "synthetic_7", "sm90_gemm", "foo_kernel", "x", "void bar::kernel_1(int)",
             "a\nkernel_1", "kernel_10"]
    matcher = pattern_matcher(pattern)
    assert select_names(pattern, names) == [matcher(name, None) for name in names]


def test_the_report_says_how_many_matched_kernels_it_did_not_check(tmp_path: Path) -> None:
    from workbench.profilers.matching import parse_match
    from workbench.profilers.reader import read_profile
    from workbench.documents.report import IMPOSSIBLE_MARK, render_markdown
    from workbench.documents.session import DeviceChoice, Session

    header = '"Time (%)","Total Time (ns)","Instances","Avg (ns)","Med (ns)","Min (ns)","Max (ns)","StdDev (ns)","Name"\n'
    rows = "".join(f'"0.1","10","1","10.0","10.0","10","10","0.0","kernel_{i}"\n' for i in range(1_003))
    (tmp_path / "k.csv").write_text(header + rows)
    profile = read_profile(tmp_path / "k.csv").with_matches([parse_match("*=add(n=2**20, dtype=fp32)")])
    text = render_markdown(Session(device=DeviceChoice("h100-sxm"), profiles=[profile.to_dict()]))
    assert text.count(IMPOSSIBLE_MARK) == 1_000  # 10 ns for a 12.6 MB add: each compared one is impossible
    assert "… and 3 more matched kernels not checked: the matches select 1,003 kernels and the first 1,000" in text
