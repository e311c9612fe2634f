"""The `workbench` command: the window by default, and headless subcommands over the same core.

`--version` and `--help` answer without importing Qt, numpy or pint: every
heavy import happens inside the subcommand that needs it. Bad input prints one
line on stderr and exits 2, never a traceback.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any, Callable, Sequence

from workbench.cli.display import add_gui
from workbench.cli.measure import add_measure
from workbench.cli.output import EXIT_OK, EXIT_USAGE, OneLineParser, echo, print_json
from workbench.model.conventions import CONVENTIONS


# ---------------------------------------------------------------- calc


def _add_calc(sub: Any) -> None:
    p = sub.add_parser(
        "calc",
        help="work, compulsory bytes and time bounds of one declared operation",
        description="Derive logical FLOP, compulsory HBM bytes, intensity and time bounds for a declaration, "
        'e.g. workbench calc "gemm(M=4096, N=4096, K=4096, dtype=fp16)" --rate "100 TFLOP/s" --bandwidth "2.5 TB/s"',
    )
    p.add_argument("declaration", metavar="DECL", help='one declaration line, e.g. "add(n=2**24, dtype=fp32)"')
    p.add_argument("--device", help="a catalogue device (see `workbench devices`)")
    p.add_argument("--rate", metavar="Q", help='sustained compute rate, e.g. "100 TFLOP/s"')
    p.add_argument("--bandwidth", metavar="Q", help='sustained memory bandwidth, e.g. "2.5 TB/s"')
    p.add_argument("--convention", choices=CONVENTIONS, default="fma2", help="FLOP per multiply-add: 2 or 1")
    p.add_argument("--overlap", default="full", help="full (max), none (sum) or a fraction 0–1")
    p.add_argument("--binary", action="store_true", help="bytes in MiB/GiB instead of MB/GB")
    p.add_argument("--json", action="store_true", help="print Analysis.to_dict() as JSON")
    p.set_defaults(run=_run_calc)


def _run_calc(args: argparse.Namespace) -> int:
    from workbench.model.analysis import analyze, analyze_partial

    if args.device is not None and args.rate is None and args.bandwidth is None:
        # As far as the device's rates go: the window's and the report's rule (work and bytes without a path rate).
        analysis = analyze_partial(args.declaration, args.device, args.convention, args.overlap, args.binary)
    else:
        analysis = analyze(
            args.declaration,
            device=args.device,
            rate=args.rate,
            bandwidth=args.bandwidth,
            convention=args.convention,
            overlap=args.overlap,
            binary=args.binary,
        )
    if args.json:
        print_json(analysis.to_dict())
    else:
        print(analysis.derivation_text())
        print()
        print(analysis.limiter_sentence())
    return EXIT_OK


# ---------------------------------------------------------------- devices


def _add_devices(sub: Any) -> None:
    p = sub.add_parser(
        "devices",
        help="the device catalogue, this machine's CPU and the GPUs NVML detects",
        description="List the catalogue (datasheet figures with their sources), this machine's CPU (rates derived "
        'from what the OS reports) and the GPUs NVML detects. With --match, show which entry a reported GPU name '
        'gets and why, e.g. workbench devices --match "NVIDIA A100 80GB PCIe"',
    )
    p.add_argument("--match", metavar="NAME", help="the name a driver reports, e.g. \"Tesla V100-PCIE-16GB\"")
    p.add_argument("--memory-gib", type=float, metavar="N", help="with --match: the GPU memory NVML reports, in GiB")
    p.add_argument("--json", action="store_true", help="print the catalogue and detection (or the match) as JSON")
    p.set_defaults(run=_run_devices)


MAX_MEMORY_GIB = 2**20  # a GPU reporting more than a PiB is not one


def _run_devices_match(args: argparse.Namespace) -> int:
    from workbench.model.devices.catalogue import match_device
    from workbench.errors import DeviceError
    from workbench.model.units import format_bandwidth, format_bytes

    if args.memory_gib is not None and not (0 < args.memory_gib <= MAX_MEMORY_GIB):
        raise DeviceError(f"--memory-gib must be a size in GiB above 0 and at most {MAX_MEMORY_GIB:,}; got {args.memory_gib:g}")
    memory = int(args.memory_gib * 2**30) if args.memory_gib else None
    found = match_device(args.match, memory)
    if found is None:
        raise DeviceError(
            f"no catalogue entry matches '{args.match}'; choose one with --device KEY or enter its rates "
            "(see `workbench devices`)"
        )
    device = found.device
    if args.json:
        print_json({**found.to_dict(), "device": device.to_dict()})
        return EXIT_OK
    print(f"{args.match} → {device.key}: {device.name}{'  (closest entry)' if found.closest else ''}")
    for reason in found.reasons:
        print(f"  - {reason}")
    facts = [format_bandwidth(device.bandwidth.value)]
    if device.memory_bytes:
        facts.append(f"{format_bytes(device.memory_bytes)} {device.memory_type}".strip())
    if device.l2_bytes:
        facts.append(f"L2 {format_bytes(device.l2_bytes, True)}")
    print(f"  {', '.join(facts)}; source: {device.source}")
    return EXIT_OK


def _run_devices(args: argparse.Namespace) -> int:
    from workbench.model.devices import BANDWIDTH, catalogue
    from workbench.model.devices.host import host_device
    from workbench.model.devices.nvml import detect, device_for
    from workbench.errors import DeviceError
    from workbench.records import to_plain
    from workbench.model.units import format_bandwidth, format_bytes, format_flop_rate

    if args.match is not None:
        return _run_devices_match(args)
    if args.memory_gib is not None:
        raise DeviceError("--memory-gib goes with --match NAME")
    detection = detect()
    devices = catalogue()
    host = host_device()
    if args.json:
        print_json(
            {
                "detected": to_plain(detection),
                "host_cpu": host.to_dict(),
                "catalogue": [d.to_dict() for d in devices.values()],
            }
        )
        return EXIT_OK
    print(f"NVML: {detection.message}")
    for gpu in detection.gpus:
        chosen = device_for(gpu)
        print(f"  GPU {gpu.index}: {gpu.name} → {chosen.key}" + (f" (L2 {format_bytes(gpu.l2_bytes, True)} from CUDA)" if gpu.l2_bytes else ""))
    print(f"This machine's CPU ({host.key}): {host.name}")
    print(f"  {host.notes}")
    print()
    header = ("key", "name", "memory", "bandwidth", "L2", "fp32", "fp16_tc", "fp8_tc", "int8_tc")
    rows = [header]
    for device in [*devices.values(), host]:

        def rate(path: str, device: Any = device) -> str:
            entry = device.peak.get(path)
            return format_flop_rate(entry.value) if entry else "–"

        rows.append(
            (
                device.key,
                device.name,
                format_bytes(device.memory_bytes) if device.memory_bytes else "–",
                format_bandwidth(device.peak[BANDWIDTH].value) if BANDWIDTH in device.peak else "–",
                format_bytes(device.l2_bytes, True) if device.l2_bytes else "–",
                rate("fp32"),
                rate("fp16_tc"),
                rate("fp8_tc"),
                rate("int8_tc"),
            )
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    for row in rows:
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip())
    print()
    print(
        "Peak rates are dense datasheet figures (host-cpu: derived from what the OS reports); measured rates "
        "replace them after calibration. Sources: workbench devices --json."
    )
    return EXIT_OK


# ---------------------------------------------------------------- compare


def _add_compare(sub: Any) -> None:
    p = sub.add_parser(
        "compare",
        help="one declared operation bounded on several devices, side by side",
        description="Bound one declaration on each device: bound time, limiter, compute and memory time, ridge. "
        'e.g. workbench compare "gemm(M=4096, N=4096, K=4096, dtype=fp16)" --devices h100-sxm,h200-sxm,a100-sxm-80gb',
    )
    p.add_argument("declaration", metavar="DECL", help='one declaration line, e.g. "add(n=2**24, dtype=fp32)"')
    p.add_argument("--devices", required=True, metavar="KEY,KEY,...", help="device keys (see `workbench devices`); host-cpu is this machine")
    p.add_argument("--convention", choices=CONVENTIONS, default="fma2", help="FLOP per multiply-add: 2 or 1")
    p.add_argument("--overlap", default="full", help="full (max), none (sum) or a fraction 0–1")
    p.add_argument("--json", action="store_true", help="a list with one object per device")
    p.add_argument("--markdown", action="store_true", help="print the comparison as Markdown tables")
    p.set_defaults(run=_run_compare)


def _run_compare(args: argparse.Namespace) -> int:
    from workbench.documents.device_compare import compare_declaration, comparison_markdown, comparison_text, resolve_devices

    devices = resolve_devices(args.devices)
    comparison = compare_declaration(args.declaration, devices, convention=args.convention, overlap=args.overlap)
    if args.json:
        print_json(comparison.to_dict())
    elif args.markdown:
        sys.stdout.write(comparison_markdown(comparison))
    else:
        print(comparison_text(comparison))
    return EXIT_OK


# ---------------------------------------------------------------- step


def _add_step(sub: Any) -> None:
    p = sub.add_parser(
        "step",
        help="a step of several operations on streams: step time, critical path, exposed communication",
        description="Lay out a step (one 'name = DECLARATION [on STREAM] [after a, b]' a line) in time: each "
        "operation takes its interval in an imported trace where one matches it, else its measured median where "
        "the session has a run of it, else its bound; the bound is shown beside. "
        "e.g. workbench step train.step --device h100-sxm --trace report.sqlite",
    )
    p.add_argument("file", metavar="FILE", help="a step text file, or a session file holding steps")
    p.add_argument("--device", help="a catalogue device (default: the session's; needed for a step file)")
    p.add_argument("--name", help="which step of a session file (default: its first)")
    p.add_argument(
        "--trace", metavar="TRACE",
        help="an Nsight Systems trace: the SQLite export (nsys export --type sqlite) or the CSV of "
        "nsys stats --report cuda_gpu_trace --format csv; or a PyTorch profiler trace (the JSON, gzipped or not, "
        "that torch.profiler writes), matched by the ATen op that starts each line's comment ('# aten::mm'); "
        "its intervals time the operations they match",
    )
    p.add_argument(
        "--match", metavar="PATTERN=OPERATION", action="append", default=[],
        help="pair trace kernels with a step operation (repeatable): 'regex:gemm=fwd', 'nccl*AllReduce*=ar1'; "
        "several rules naming one operation make it of several kernels, timed per iteration from the first "
        "kernel's start to the last's end ('gemm*splitk*=fwd' then 'splitKreduce*=fwd'); "
        "operations without a rule take the kernels their kind's names suggest",
    )
    p.add_argument("--json", action="store_true", help="print the timeline as JSON")
    p.set_defaults(run=_run_step)


def _run_step(args: argparse.Namespace) -> int:
    from workbench.documents.breakdown import KIND, MODULE, where_time_goes
    from workbench.model.devices.catalogue import find_device
    from workbench.documents.step_files import read_step_file
    from workbench.steps import StepError, parse_step, parse_trace_match, step_timeline
    from workbench.records import to_plain

    source = read_step_file(args.file, args.name)
    trace = None
    rules = []
    if args.match and not args.trace:
        raise StepError("--match pairs kernels of a trace with operations: give the trace with --trace")
    if args.trace:
        from workbench.profilers.trace_reader import read_trace

        plan = parse_step(source.text)
        rules = [parse_trace_match(text, plan) for text in args.match]
        trace = read_trace(args.trace)
    session = source.session
    if args.device:
        device = find_device(args.device)
    elif session is not None:
        device = session.device.resolve()
    else:
        device = None
    runs = session.runs if session is not None else ()
    context = session.figure_context(device) if session is not None else None
    timeline = step_timeline(source.text, device, runs, context, trace=trace, rules=rules)
    breakdown = where_time_goes(timeline, device)
    if args.json:
        print_json({**timeline.to_dict(), "where_time_goes": to_plain(breakdown)})
    else:
        echo("\n".join([timeline.summary_text(), "", *breakdown.text_lines(KIND), "", *breakdown.text_lines(MODULE)]))
    return EXIT_OK


# ---------------------------------------------------------------- units


def _add_units(sub: Any) -> None:
    p = sub.add_parser(
        "units",
        help="unit-aware scratchpad",
        description='Compute with units, e.g. workbench units "137.4 GFLOP / (100 TFLOP/s)" --to ms',
    )
    p.add_argument("expression", metavar="EXPR")
    p.add_argument("--to", metavar="UNIT", help="convert the result to this unit (dimensions must agree)")
    p.set_defaults(run=_run_units)


def _run_units(args: argparse.Namespace) -> int:
    from workbench.model.scratchpad import evaluate, format_result

    result = evaluate(args.expression, to=args.to)
    print(f"{args.expression} = {format_result(result, keep_unit=args.to is not None)}")
    return EXIT_OK


# ---------------------------------------------------------------- report


def _add_report(sub: Any) -> None:
    p = sub.add_parser(
        "report",
        help="write a Markdown, HTML or CSV report of a session file",
        description="Write a report of a session: Markdown or HTML with each operation's derivation, bounds and "
        "measured runs and the roofline plot (SVG: inline in HTML, beside a Markdown report as OUT-plot.svg), "
        "or CSV: one row per operation, the raw timing samples in OUT-samples.csv, and where each "
        "step's time goes (by kind and by module) in OUT-steps.csv. "
        "The type follows the output's suffix, e.g. workbench report lab.json -o lab.html",
    )
    p.add_argument("session", metavar="SESSION", help="a session file (.json)")
    p.add_argument("-o", "--output", metavar="OUT", required=True, help="the report to write: .md, .html or .csv")
    p.add_argument("--no-plot", action="store_true", help="leave the plot out")
    p.add_argument("--inline-plot", action="store_true",
                   help="Markdown: embed the plot in the text as base64 instead of writing OUT-plot.svg beside it")
    p.set_defaults(run=_run_report)


def _report_plot(session: Any, report: Any) -> tuple[str | None, str]:
    """The session's roofline as SVG, drawn without Qt from the analyses of `report` (its `build_report`);
    (None, why) where the session has none."""
    from workbench.documents.report import report_operations, roofline_plot

    plot = roofline_plot(session, operations=report_operations(report))
    return (plot, "") if plot is not None else (None, "the session has no roofline (no device with a memory bandwidth)")


def _run_report(args: argparse.Namespace) -> int:
    from workbench.documents.report import build_report, report_files, report_kind, write_report
    from workbench.documents.session import load

    kind = report_kind(args.output)
    session = load(args.session)
    report = build_report(session)  # every operation analysed once, for the text and the plot
    plot, why = (None, "") if args.no_plot or kind == "csv" else _report_plot(session, report)
    write_report(session, args.output, plot, inline_plot=args.inline_plot, report=report)
    note = f" without the plot: {why}" if why else ""
    files = report_files(args.output, plot is not None, args.inline_plot)
    beside = f" and {', '.join(str(f) for f in files[1:])}" if len(files) > 1 else ""
    print(f"wrote {kind} report {args.output}{beside}{note}")
    return EXIT_OK


# ---------------------------------------------------------------- import-ncu / import-nsys


def _add_import_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", metavar="FILE", help="the CSV export")
    p.add_argument(
        "--match",
        action="append",
        default=[],
        metavar="PATTERN=DECL",
        help='compare kernels whose name matches PATTERN (text, glob, or regex:EXPR) with a declaration, '
        'e.g. "vector_add=add(n=2**24, dtype=fp32)"; repeatable',
    )
    p.add_argument("--device", help="catalogue device for the time bounds (default: the GPU the file names)")
    p.add_argument("--convention", choices=CONVENTIONS, default="fma2", help="FLOP per multiply-add: 2 or 1")
    p.add_argument("--binary", action="store_true", help="bytes in MiB/GiB instead of MB/GB")
    p.add_argument(
        "--json",
        action="store_true",
        help="print the profile record, the kernels and the comparisons as JSON (docs/import-json.md; an nsys kernel "
        "refers to its row of the record's summaries by index and adds its base name and duration)",
    )
    p.add_argument(
        "--decimal-mark",
        choices=(".", ","),
        help="read the file's numbers with this decimal mark ('.' as in 1,234.5; ',' as in 1.234,5) instead of "
        "deciding from its values (files from comma-decimal locales)",
    )


def _add_import_ncu(sub: Any) -> None:
    p = sub.add_parser(
        "import-ncu",
        help="read Nsight Compute CSV; compare kernels' DRAM bytes, FLOP and time with declared operations",
        description="Read `ncu --csv --page details` or `--page raw` output: per kernel, the median duration, "
        "DRAM bytes read and written, L2 bytes and achieved FLOP. With --match, compare actual bytes with the "
        "compulsory bytes, achieved FLOP with logical FLOP and the duration with the bound, e.g. "
        'workbench import-ncu vadd.csv --match "vector_add=add(n=2**24, dtype=fp32)" --device h100-sxm',
    )
    _add_import_options(p)
    p.add_argument(
        "--levels",
        choices=("ncu", "nersc"),
        default="ncu",
        help="how L2 and L1 bytes (the hierarchical roofline's levels) are counted: ncu, as Nsight Compute's own "
        "hierarchical-roofline sections do (lts__lts2xbar_cycles_active x 32 B, L1 writeback cycles x 128 B); "
        "nersc, the NERSC method (lts__t_bytes, l1tex__t_bytes + shared wavefronts x 128 B)",
    )
    p.set_defaults(run=_run_import_ncu)


def _add_import_nsys(sub: Any) -> None:
    p = sub.add_parser(
        "import-nsys",
        help="read Nsight Systems kernel summaries; compare kernel times with declared operations' bounds",
        description="Read `nsys stats --report cuda_gpu_kern_sum --format csv` output (or the older gpukernsum): "
        "per kernel, instances and median/min/max/total time. With --match, compare the median time with the "
        "declared operation's bound.",
    )
    _add_import_options(p)
    p.set_defaults(run=_run_import_nsys)


def _run_import(args: argparse.Namespace, tool: str) -> int:
    from workbench.profilers.render import import_report

    report = import_report(
        args.file, tool, args.match, args.device, args.convention, args.binary, args.decimal_mark, getattr(args, "levels", "ncu")
    )
    if args.json:
        number_format = report.profile.number_format
        if number_format is not None and number_format.assumed:
            print(f"warning: {report.profile.source}: {number_format.note()}", file=sys.stderr)
        print_json(report.data())
    else:
        for line in report.lines():
            echo(line)
    return EXIT_OK


def _run_import_ncu(args: argparse.Namespace) -> int:
    return _run_import(args, "ncu")


def _run_import_nsys(args: argparse.Namespace) -> int:
    return _run_import(args, "nsys")


# ---------------------------------------------------------------- import-torch


def _add_import_torch(sub: Any) -> None:
    p = sub.add_parser(
        "import-torch",
        help="trace a PyTorch model on the meta device (no weights, no GPU) into a step, one line per ATen op",
        description="Run a model's forward (and with --backward its backward, with --optimizer the optimizer step) "
        "on PyTorch's meta device, recording every ATen op with its shapes and the module it ran in; each becomes "
        "a declaration, each follows the ops that wrote its inputs. SOURCE is a shipped config (gpt2-small, "
        "llama-1b, llama-8b), a Hugging Face config JSON, or a Python file with a function returning "
        "(model, inputs), e.g. workbench import-torch llama-8b --batch 1 --seq 4096 --backward --optimizer adamw "
        "--data-parallel 8 --device h100-sxm -o llama8b.step. Needs the [torch] extra ([models] for configs).",
    )
    p.add_argument("source", metavar="SOURCE", help="a shipped config key, a config .json, or FILE.py[:FUNCTION]")
    p.add_argument("--function", help="the function of a Python file that returns (model, inputs)")
    p.add_argument("--batch", type=int, default=1, help="sequences per rank for a config (default 1)")
    p.add_argument("--seq", type=int, default=1024, help="sequence length for a config (default 1024)")
    p.add_argument("--dtype", choices=("fp32", "bf16", "fp16"), help="the config model's dtype (default: the config's)")
    p.add_argument("--backward", action="store_true", help="trace the backward pass too")
    p.add_argument("--optimizer", choices=("adamw", "sgd"), help="trace the optimizer step too (needs --backward)")
    p.add_argument("--data-parallel", type=int, default=1, metavar="RANKS",
                   help="all-reduce the gradients across RANKS ranks in buckets on a comm stream (needs --backward)")
    p.add_argument("--bucket-mib", type=float, default=25.0, metavar="MIB", help="gradient bucket size (default 25 MiB)")
    p.add_argument("-o", "--output", metavar="FILE", help="write the step here (default: print it)")
    p.add_argument("--device", help="with -o: lay the step out on this catalogue device and print its summary")
    p.add_argument("--json", action="store_true", help="with -o: print what was traced (and the timeline) as JSON")
    p.set_defaults(run=_run_import_torch)


def _run_import_torch(args: argparse.Namespace) -> int:
    from workbench.tracing import run_import

    source, function = args.source, args.function
    if function is None and ":" in source and source.rsplit(":", 1)[0].endswith(".py"):
        source, function = source.rsplit(":", 1)
    result = run_import(
        source, function=function, batch=args.batch, sequence=args.seq, dtype=args.dtype, backward=args.backward,
        optimizer=args.optimizer, data_parallel=args.data_parallel, bucket_mib=args.bucket_mib, output=args.output,
        device=args.device,
    )
    if args.output is None:
        sys.stdout.write(result.step.text())
    elif args.json:
        print_json(result.to_dict())
    else:
        echo(result.summary_text())
    return EXIT_OK


# ---------------------------------------------------------------- measure / calibrate


# ---------------------------------------------------------------- gui


# ---------------------------------------------------------------- main


ADDERS: tuple[Callable[[Any], None], ...] = (_add_calc, _add_devices, _add_compare, _add_step, _add_units, _add_report, _add_import_ncu, _add_import_nsys, _add_import_torch, add_measure, add_gui)  # add_measure adds `runs` too


class _VersionAction(argparse.Action):
    """--version: the version and one line per optional part, from package metadata only."""

    def __init__(self, option_strings: list[str], dest: str = argparse.SUPPRESS, help: str | None = None) -> None:
        super().__init__(option_strings, dest=dest, default=argparse.SUPPRESS, nargs=0, help=help)

    def __call__(self, parser: argparse.ArgumentParser, namespace: Any, values: Any, option: str | None = None) -> None:
        from workbench.documents.about import version_text

        print(version_text())
        parser.exit(EXIT_OK)


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(
        prog="workbench",
        description="Performance Workbench: logical work, compulsory bytes and time bounds for tensor "
        "operations, next to measured kernels. With no subcommand (or a session file) it opens the window.",
    )
    parser.add_argument(
        "--version",
        action=_VersionAction,
        help="show the version and which optional parts (CuPy, NVML, PyTorch) are available",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=OneLineParser)
    for add in ADDERS:
        add(sub)
    return parser


def _subcommands(parser: argparse.ArgumentParser) -> set[str]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return set(action.choices)
    return set()


def _opens_window(parser: argparse.ArgumentParser, arguments: list[str]) -> bool:
    """No arguments, or a first argument that names a session file rather than a subcommand."""
    if not arguments:
        return True
    first = arguments[0]
    if first.startswith("-") or first in _subcommands(parser):
        return False
    return first.endswith(".json") or os.path.exists(first)


def _os_error_line(exc: OSError) -> str:
    """An OSError as one line: the reason and the file it concerns ('File name too long: out/aaa…md')."""
    reason = exc.strerror or str(exc) or type(exc).__name__
    names = [name for name in (exc.filename, exc.filename2) if name is not None]
    shown = [os.fsdecode(name) if isinstance(name, bytes) else str(name) for name in names]
    shown = [name if len(name) <= 120 else name[:117] + "..." for name in shown]
    line = f"{reason}: {' → '.join(shown)}" if shown else reason
    from workbench.errors import shown as printable

    return printable(line)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `workbench` console script."""
    arguments = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    if _opens_window(parser, arguments):
        arguments = ["gui", *arguments]
    args = parser.parse_args(arguments)
    from workbench.errors import WorkbenchError, shown

    try:
        return int(args.run(args))
    except WorkbenchError as exc:
        print(f"workbench: error: {shown(str(exc))}", file=sys.stderr)  # one line, whatever text it quotes
        return EXIT_USAGE
    except BrokenPipeError:
        return EXIT_OK
    except OSError as exc:  # a path the user named that cannot be used: one line, like any other bad input
        print(f"workbench: error: {_os_error_line(exc)}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("workbench: interrupted", file=sys.stderr)
        return 130

