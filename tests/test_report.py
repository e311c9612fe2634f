"""Reports: the derivation, bounds and measured runs a reader needs, in Markdown, HTML and CSV."""

from __future__ import annotations

import base64
import csv
import math
import io
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

from workbench.cli import main
from workbench.model.devices import Rate
from workbench.documents.report import (
    bounds_table,
    SAMPLES_CSV_COLUMNS,
    SUMMARY_CSV_COLUMNS,
    csv_number,
    ReportError,
    build_report,
    render_csv,
    render_samples_csv,
    report_files,
    render_html,
    render_markdown,
    report_kind,
    write_report,
)
from workbench.documents.session import DeviceChoice, OperationEntry, Session, Settings, load, save

GEMM = "gemm(M=4096, N=4096, K=4096, dtype=fp16)"
ADD = "add(n=2**24, dtype=fp32)"
# A plot as the reports take it: one <svg> element (the report draws the session's own: `roofline_plot`).
SVG = '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><title>plot</title></svg>\n'


def measured_session() -> Session:
    """The worked example's rates, and two runs of the vector add (one failing its check)."""
    return Session(
        title="Lab 1 <hand-in>",
        description="Vector add & GEMM",
        operations=[
            OperationEntry("GEMM | square", GEMM, "line one\nline two"),
            OperationEntry("Vector add", "add(n=16777216, dtype=fp32)"),
        ],
        device=DeviceChoice("h100-sxm", {"fp16_tc": Rate(100e12, "entered", "seed"), "hbm": Rate(2.5e12, "entered", "seed")}),
        runs=[
            {
                "id": "add-warm",
                "declaration": ADD,  # written differently from the entry: matched in canonical form
                "mode": "warm",
                "samples_s": [100e-6, 101e-6, 99e-6, "junk", -1],
                "median_s": 100e-6,
                "p10_s": 99e-6,
                "p90_s": 101e-6,
                "achieved_bytes_per_s": 2.01e12,
                "valid": True,
                "conditions": {"sm_clock_mhz": 1980, "temperature_c": 41, "driver": "550.54"},
            },
            {"id": "add-bad", "declaration": ADD, "samples_s": [200e-6, 220e-6, 210e-6], "valid": False},
            {"id": "stray", "declaration": "copy(n=2**20, dtype=fp32)", "samples_s": [5e-6]},
            {"samples_s": "not a list", "median_s": "fast"},
        ],
        profiles=[{"kernel": "vectorAdd", "dram__bytes.sum": 201326592, "nested": {"a": 1}}],
    )


def test_runs_are_matched_to_their_operation_and_figured_against_the_bound() -> None:
    report = build_report(measured_session())
    gemm, add = report.operations
    assert gemm.runs == ()
    warm, bad = add.runs
    # bound: 201,326,592 B / 2.5 TB/s = 80.53 µs; measured median 100 µs → 80.53 %
    assert warm.percent_of_bound == pytest.approx(80.53, rel=1e-3)
    # the run's stored 2.01e12 B/s is not trusted: 201,326,592 B / 100 µs (the median of its samples) = 2.013 TB/s
    assert warm.achieved_byte_per_s == pytest.approx(201_326_592 / 100e-6)
    assert warm.p10_s == pytest.approx(99.2e-6)  # from the samples too (the stored p10 said 99 µs)
    # the run states no device, so it is compared with the session's, and the report says so
    assert "does not state its device" in warm.device_note and not warm.other_device
    assert warm.samples_s == (100e-6, 101e-6, 99e-6)  # junk samples dropped
    # no median in the run: the median of its samples, 210 µs; bytes / median = 958.7 GB/s
    assert bad.median_s == pytest.approx(210e-6)
    assert bad.achieved_byte_per_s == pytest.approx(201_326_592 / 210e-6)
    assert bad.check_text.startswith("FAILED")
    stray, anonymous = report.other_runs
    assert stray.run_id == "stray" and stray.percent_of_bound is not None
    assert anonymous.run_id == "run 4" and anonymous.median_s is None


def test_markdown_has_derivation_bounds_runs_and_the_plot() -> None:
    text = render_markdown(measured_session(), SVG)
    assert text.startswith("# Lab 1 &lt;hand-in&gt;\n")  # untrusted text is never raw HTML
    assert "2·M·N·K = 2 × 4,096 × 4,096 × 4,096 = 137,438,953,472 FLOP" in text
    assert "| Compute time bound (fp16_tc) | 1.374 ms |" in text
    assert "| Memory time bound (HBM) | 40.27 µs |" in text
    assert "GEMM \\| square" in text  # a pipe in a name does not break the table
    assert "line one  \nline two" in text  # notes keep their line breaks
    # median, spread and bandwidth from the three good samples, not the figures stored beside them
    assert "| add-warm (warm) | 100 µs | 99.2 µs – 100.8 µs | 3 | 2.013 TB/s |" in text
    assert "80.5 %" in text and "FAILED: not a valid measurement" in text
    assert "Conditions of add-warm: sm_clock_mhz: 1980; temperature_c: 41; driver: 550.54" in text
    assert "## Runs of other declarations" in text and "copy(n=2**20, dtype=fp32)" in text
    assert "| vectorAdd | 201326592 |" in text
    embedded = re.search(r"data:image/svg\+xml;base64,([A-Za-z0-9+/=]+)\)", text)
    assert embedded is not None and base64.b64decode(embedded.group(1)).decode("utf-8").endswith(SVG)


def test_markdown_without_a_plot_has_no_plot_section() -> None:
    assert "## Plot" not in render_markdown(measured_session())


def test_a_markdown_report_links_its_plot_as_an_svg_beside_it(tmp_path: Path) -> None:
    session = measured_session()
    assert write_report(session, tmp_path / "lab 1.md", SVG) == "markdown"
    text = (tmp_path / "lab 1.md").read_text(encoding="utf-8")
    assert "![Roofline plot of the session](<lab 1-plot.svg>)" in text and "base64" not in text
    assert (tmp_path / "lab 1-plot.svg").read_text(encoding="utf-8") == '<?xml version="1.0" encoding="UTF-8"?>\n' + SVG
    assert report_files(tmp_path / "lab 1.md", has_plot=True) == (tmp_path / "lab 1.md", tmp_path / "lab 1-plot.svg")
    write_report(session, tmp_path / "inline.md", SVG, inline_plot=True)
    assert "data:image/svg+xml;base64," in (tmp_path / "inline.md").read_text(encoding="utf-8")
    assert not (tmp_path / "inline-plot.svg").exists()


class _Collector(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.urls: list[str] = []
        self.tags: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        for name, value in attrs:
            if name in ("src", "href") and value:
                self.urls.append(value)

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def test_html_needs_no_network_and_escapes_user_text() -> None:
    page = render_html(measured_session(), SVG)
    parser = _Collector()
    parser.feed(page)
    assert not parser.urls and "svg" in parser.tags  # the plot inline: nothing to fetch
    assert "script" not in parser.tags and "link" not in parser.tags
    assert "Content-Security-Policy" in page and "default-src 'none'" in page
    assert "@import" not in page and "url(" not in page
    assert "<hand-in>" not in page and "Lab 1 &lt;hand-in&gt;" in page
    text = " ".join(parser.text)
    assert "137,438,953,472 FLOP" in text and "compute-limited: the fp16_tc path needs 1.374 ms" in text
    assert "FAILED: not a valid measurement" in text


def test_samples_csv_has_one_row_per_sample_with_its_run() -> None:
    rows = list(csv.DictReader(io.StringIO(render_samples_csv(measured_session()))))
    assert tuple(rows[0].keys()) == SAMPLES_CSV_COLUMNS
    # 3 good samples of add-warm, 3 of add-bad, 1 of stray; junk samples and the non-list dropped
    assert [row["run_id"] for row in rows] == ["add-warm"] * 3 + ["add-bad"] * 3 + ["stray"]
    assert rows[0]["operation"] == "Vector add" and rows[0]["declaration"] == ADD
    assert [row["time [s]"] for row in rows[:3]] == ["0.0001", "0.000101", "9.9e-05"]
    assert [row["sample_index"] for row in rows[:3]] == ["0", "1", "2"]
    assert rows[3]["valid"] == "false" and rows[6]["valid"] == "" and rows[6]["operation"] == ""


def test_csv_text_cannot_become_a_spreadsheet_formula() -> None:
    session = Session(operations=[OperationEntry("=HYPERLINK(1)", ADD)], runs=[{"id": "@x", "declaration": ADD, "samples_s": [1e-3]}])
    row = next(csv.DictReader(io.StringIO(render_samples_csv(session))))
    assert row["run_id"] == "'@x" and row["operation"] == "'=HYPERLINK(1)"
    summary = next(csv.DictReader(io.StringIO(render_csv(session))))
    assert summary["operation"] == "'=HYPERLINK(1)"


def test_csv_numbers_are_the_shortest_text_of_the_sample_without_conversion_noise() -> None:
    noisy = 8677078 * 1e-9  # a perf_counter_ns difference in seconds: 0.008677078000000001
    assert repr(noisy) == "0.008677078000000001"
    assert csv_number(noisy) == "0.008677078"
    assert csv_number(1.0 / 3.0) == "0.333333333333" and csv_number(137438953472) == "137438953472"
    assert csv_number(None) == "" and csv_number(math.inf) == ""
    session = Session(operations=[OperationEntry("add", ADD)], runs=[{"id": "r", "declaration": ADD, "samples_s": [noisy]}])
    assert "0.008677078," in render_samples_csv(session) and "000000001" not in render_samples_csv(session)


def test_the_summary_csv_has_one_row_per_operation_with_units_in_the_headers() -> None:
    rows = list(csv.DictReader(io.StringIO(render_csv(measured_session()))))
    assert tuple(rows[0].keys()) == SUMMARY_CSV_COLUMNS
    assert all("[" in header for header in SUMMARY_CSV_COLUMNS if header.startswith(("FLOP", "compulsory", "intensity",
                                                                                      "compute", "memory", "bound",
                                                                                      "measured median", "%")))
    session = measured_session()
    assert len(rows) == len(session.operations)
    add = next(row for row in rows if row["operation"] == "Vector add")
    # add(n=2**24, fp32): 2^24 FLOP, 3 × 2^24 × 4 B; the valid run's median is 100 µs (three good samples)
    assert add["FLOP [FLOP]"] == str(2**24) and add["compulsory bytes [B]"] == str(3 * 2**24 * 4)
    assert float(add["intensity [FLOP/B]"]) == pytest.approx(1 / 12)
    assert add["limiter"] == "memory" and float(add["bound [s]"]) == pytest.approx(float(add["memory bound [s]"]))
    assert add["valid runs"] == "1" and add["run_id"] == "add-warm"
    assert float(add["measured median [s]"]) == pytest.approx(100e-6)
    assert float(add["% of bound [%]"]) == pytest.approx(80.53, rel=1e-3)
    gemm = next(row for row in rows if row["operation"] == "GEMM | square")
    assert gemm["limiter"] == "compute" and gemm["valid runs"] == "0" and gemm["measured median [s]"] == ""


def test_an_operation_that_cannot_be_analysed_shows_why_and_the_rest_still_render() -> None:
    session = Session(
        operations=[OperationEntry("too big", "add(n=2**40, dtype=fp32)"), OperationEntry("fine", ADD)],
        device=DeviceChoice("rtx-4090"),
    )
    text = render_markdown(session)
    assert "**Not analysed:** the tensors need" in text
    assert "memory-limited" in text


def test_binary_units_show_in_the_report() -> None:
    session = Session(operations=[OperationEntry("add", ADD)], settings=Settings(binary=True))
    text = render_markdown(session)
    assert "192 MiB" in text and "bytes in binary (MiB, GiB) units" in text


def test_write_report_chooses_by_suffix_and_refuses_others(tmp_path: Path) -> None:
    session = measured_session()
    assert write_report(session, tmp_path / "r.md") == "markdown"
    assert write_report(session, tmp_path / "r.HTML", SVG) == "html"
    assert write_report(session, tmp_path / "r.csv") == "csv"
    assert (tmp_path / "r-samples.csv").read_text(encoding="utf-8").startswith(",".join(SAMPLES_CSV_COLUMNS))
    assert (tmp_path / "r.csv").read_text(encoding="utf-8").startswith(",".join(SUMMARY_CSV_COLUMNS))
    assert not (tmp_path / "r-plot.svg").exists()  # no plot given
    assert (tmp_path / "r.HTML").read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    with pytest.raises(ReportError, match=r"use \.md, \.html or \.csv"):
        report_kind(tmp_path / "r.pdf")
    with pytest.raises(ReportError, match="not an SVG"):
        render_html(session, "<script>alert(1)</script>")
    with pytest.raises(ReportError, match="does not exist"):
        write_report(session, tmp_path / "missing" / "r.md")


def test_cli_report_writes_each_kind(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "s.json"
    save(measured_session(), path)
    for suffix in ("md", "html", "csv"):
        out = tmp_path / f"out.{suffix}"
        assert main(["report", str(path), "-o", str(out), "--no-plot"]) == 0
        assert out.stat().st_size > 100
    assert "137,438,953,472" in (tmp_path / "out.md").read_text(encoding="utf-8")
    assert "wrote" in capsys.readouterr().out


def test_cli_report_includes_the_plot_and_says_so_when_there_is_none(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "s.json"
    save(measured_session(), path)
    out = tmp_path / "out.html"
    assert main(["report", str(path), "-o", str(out)]) == 0
    assert capsys.readouterr().out.strip() == f"wrote html report {out}"
    assert '<figure class="plot"><svg ' in out.read_text(encoding="utf-8")
    import workbench.documents.report as report_package

    monkeypatch.setattr(report_package, "roofline_plot", lambda session, **_: None)  # a device without a bandwidth
    assert main(["report", str(path), "-o", str(out)]) == 0
    assert "without the plot: the session has no roofline" in capsys.readouterr().out
    assert "<svg" not in out.read_text(encoding="utf-8")


def test_cli_report_errors_are_one_line_and_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text('{"format": "perf-workbench-session", "version": 9}', encoding="utf-8")
    assert main(["report", str(broken), "-o", str(tmp_path / "r.md")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "newer Performance Workbench" in err
    save(Session(), tmp_path / "ok.json")
    assert main(["report", str(tmp_path / "ok.json"), "-o", str(tmp_path / "r.txt")]) == 2
    assert "use .md, .html or .csv" in capsys.readouterr().err


def test_report_module_does_not_import_qt() -> None:
    code = "import sys, workbench.documents.report, workbench.documents.session, workbench.documents.autosave; print('PySide6' in sys.modules, 'pyqtgraph' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "False False"


def test_imported_profiles_show_as_per_kernel_tables() -> None:
    from workbench.profilers.reader import read_profile

    data = Path(__file__).parent / "data"
    session = measured_session()
    session.profiles = [
        read_profile(data / "ncu_details.csv").to_dict(),
        read_profile(data / "nsys_cuda_gpu_kern_sum.csv").to_dict(),
        {"kernel": "hand-entered", "ms": 1.5},
    ]
    text = render_markdown(session)
    assert "**ncu_details.csv: Nsight Compute CSV (details page)" in text
    assert "| kernel | launches | duration (median) | DRAM read | DRAM write |" in text
    assert "| cupy_add__float32_float32_float32 | 3 |" in text
    assert "**nsys_cuda_gpu_kern_sum.csv: Nsight Systems CSV (cuda_gpu_kern_sum report)**" in text
    assert "**Other imported records**" in text and "| hand-entered | 1.5 |" in text
    page = render_html(session)
    assert "Nsight Compute CSV (details page)" in page and "cupy_add__float32_float32_float32" in page


def test_the_fixture_report_shows_its_measured_cpu_run() -> None:
    session = load(Path(__file__).parent / "data" / "session_v1.json")
    text = render_markdown(session)
    assert "cpu-add-1 (warm)" in text and "passed" in text
    # the fixture's stand-in 20 GB/s is below what the CPU sustained, so the run beat its bound
    assert "A run above 100 % beat its lower bound" in text
    assert "A run above 100 %" not in render_markdown(measured_session())
    assert "## Imported profiler records" in text


def test_a_collective_report_shows_its_link_term_and_limiter() -> None:
    # allreduce(n=2**28, fp32, 8 ranks) on the default H100 SXM: 1,879,048,192 B per rank / 450 GB/s = 4.176 ms
    # over NVLink 4; compute 3.506 µs and HBM 641 µs are shorter, so the full-overlap bound is the link's.
    session = Session(operations=[OperationEntry("ar", "allreduce(n=2**28, dtype=fp32, ranks=8)")])
    text = render_markdown(session)
    assert "| Link time bound (NVLink 4 (H100/H200 SXM)) | 4.176 ms | 1.879 GB per rank at 450 GB/s per direction, datasheet |" in text
    assert "| Bound, full overlap | 4.176 ms | the largest of the three |" in text
    assert "| ar | 234.9 MFLOP (fma2) | 2.147 GB | 0.1094 FLOP/B | 4.176 ms | link-limited |" in text
    assert "*link-limited: NVLink 4 (H100/H200 SXM) needs 4.176 ms" in text
    html = render_html(session)
    assert "Link time bound (NVLink 4 (H100/H200 SXM))" in html


def test_a_cpu_session_s_report_names_dram_and_says_nominal_once() -> None:
    for key in ("host-cpu", "cpu-generic"):
        session = Session(operations=[OperationEntry("Vector add", ADD)], device=DeviceChoice(key))
        report = build_report(session)
        (operation,) = report.operations
        rows = [row[0] for row in bounds_table(operation.analysis, False).rows]
        assert "Memory time bound (DRAM)" in rows and "Memory time bound (HBM)" not in rows
        assert "figures from Nominal" not in report.device_line and "Nominal figures" not in report.device_line
        assert "nominal figures: " in report.device_line  # the DRAM bandwidth is a stand-in, said once
        dram = next(row for row in report.rates.rows if row[0] == "Memory bandwidth (DRAM)")
        assert dram[1] == "51.2 GB/s" and dram[2].startswith("nominal — ")


def test_the_report_s_rates_hold_every_rate_the_derivation_uses() -> None:
    # an H100 GEMM's derivation takes shared memory's derived rate: the rates table lists it beside HBM
    session = Session(operations=[OperationEntry("GEMM", GEMM)], device=DeviceChoice("h100-sxm"))
    report = build_report(session)
    titles = [row[0] for row in report.rates.rows]
    steps = "\n".join(str(step) for step in report.operations[0].analysis.steps)
    assert "shared memory" in steps.lower()
    assert "Memory bandwidth (HBM)" in titles
    assert "Shared memory → registers" in titles and "Host ↔ device" in titles


def test_a_large_sessions_report_sums_by_kind_and_details_the_operations_the_plot_labels() -> None:
    """Beyond the plot's every-label limit a report stays readable: a table by kind of operation, the longest
    operations (the ones the plot labels: `labelled_points`) with a section each, the others in the CSV."""
    from workbench.scenes.label_layout import EVERY_LABEL_UP_TO, FEW_LABELS
    from workbench.documents.report import render_csv, render_html, render_markdown

    count = EVERY_LABEL_UP_TO + 30
    operations = [OperationEntry(f"add {n}", f"add(n={2 ** 20 * (n + 1)}, dtype=fp32)") for n in range(count - 5)]
    operations += [OperationEntry(f"gemm {n}", f"gemm(M={1024 * (n + 1)}, N=1024, K=1024, dtype=fp16)") for n in range(5)]
    session = Session(operations=operations, device=DeviceChoice("h100-sxm"))
    text = render_markdown(session)
    assert "## Summary by kind" in text and "## Largest operations" in text and "## Summary\n" not in text
    kinds = text.split("## Summary by kind")[1].split("## Largest operations")[0]
    assert re.search(r"\| add \| 45 \|", kinds) and re.search(r"\| gemm \| 5 \|", kinds)
    assert f"{count} operations: this report gives the {FEW_LABELS} that take the most time" in text
    sections = re.findall(r"^## (\d+)\. (.+)$", text, flags=re.MULTILINE)
    assert len(sections) == FEW_LABELS
    # the longest: the largest adds (the 2**20 × 45 add moves 565 MB, more time than any of these GEMMs)
    assert sections[-1] == (str(count - 5), f"add {count - 6}")
    largest = text.split("## Largest operations")[1].split("\n## ")[0]
    names = re.findall(r"^\| (add \d+|gemm \d+) \|", largest, flags=re.MULTILINE)
    assert names[0] == f"add {count - 6}" and len(names) == FEW_LABELS  # longest first
    assert render_html(session).count("<h2>") == FEW_LABELS + 3  # rates, kinds, largest, and one per section
    assert len(list(csv.reader(io.StringIO(render_csv(session))))) >= count + 1  # every operation in the CSV


def test_a_small_sessions_report_keeps_a_section_per_operation() -> None:
    from workbench.documents.report import render_markdown

    session = Session(operations=[OperationEntry(f"add {n}", f"add(n={2 ** 20 * (n + 1)}, dtype=fp32)") for n in range(3)])
    text = render_markdown(session)
    assert "## Summary\n" in text and "Summary by kind" not in text
    assert len(re.findall(r"^## \d+\. ", text, flags=re.MULTILINE)) == 3


def test_the_csv_report_gives_where_each_steps_time_goes_as_the_other_reports_do(tmp_path: Path) -> None:
    """lab-steps.csv: every group of the breakdown (by kind, then by module) with the figures of
    workbench.documents.breakdown.where_time_goes, the function the window, the CLI and the Markdown report call; a step
    that cannot be laid out is one row naming its error."""
    from workbench.documents.breakdown import KIND, MODULE, where_time_goes
    from workbench.documents.examples import load_example
    from workbench.documents.report import STEPS_CSV_COLUMNS, render_steps_csv
    from workbench.documents.session import StepEntry
    from workbench.steps import step_timeline

    session = load_example("data-parallel-step")
    session.steps.append(StepEntry("=broken", "a = gemm(M=1, N=1, K=1, dtype=bf16) after nowhere"))
    device = session.device.resolve()  # the device the report lays its steps out on
    assert write_report(session, tmp_path / "lab.csv") == "csv"
    assert report_files(tmp_path / "lab.csv") == (tmp_path / "lab.csv", tmp_path / "lab-samples.csv", tmp_path / "lab-steps.csv")
    with open(tmp_path / "lab-steps.csv", newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert list(rows[0]) == list(STEPS_CSV_COLUMNS)
    assert (tmp_path / "lab-steps.csv").read_bytes().decode("utf-8") == render_steps_csv(session)
    first = session.steps[0]
    timeline = step_timeline(first.text, device, session.runs, session.figure_context(device))
    expected = where_time_goes(timeline, device)
    mine = [row for row in rows if row["step"] == first.name]
    for by in (KIND, MODULE):
        groups = [row for row in mine if row["by"] == by]
        assert [row["group"] for row in groups] == [group.name for group in expected.groups(by)]
        for row, group in zip(groups, expected.groups(by)):
            assert int(row["operations"]) == group.count and int(row["FLOP [FLOP]"]) == group.flop
            assert int(row["bytes [B]"]) == group.bytes and int(row["measured operations"]) == group.measured
            assert float(row["time [s]"]) == pytest.approx(group.time_s, rel=1e-11)
            assert float(row["share of summed time [%]"]) == pytest.approx(group.share * 100, rel=1e-11)
            assert row["limiter"] == group.limiter and row["error"] == ""
            assert float(row["step time [s]"]) == pytest.approx(timeline.step_time, rel=1e-11)
        assert sum(float(row["share of summed time [%]"]) for row in groups) == pytest.approx(100.0)
    assert sum(int(row["operations"]) for row in mine if row["by"] == KIND) == len(timeline.placed)
    broken = [row for row in rows if row["step"] == "'=broken"]  # the name neutralised as a formula
    assert len(broken) == 1 and "nowhere" in broken[0]["error"] and broken[0]["group"] == ""

