"""The `workbench` command: the window by default, and headless subcommands over the same core.

`--version` and `--help` answer without importing Qt, numpy or pint: every
heavy import happens inside the subcommand that needs it. Bad input prints one
line on stderr and exits 2, never a traceback.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any, Callable, Sequence

from workbench.conventions import CONVENTIONS


EXIT_OK = 0
EXIT_USAGE = 2



class _OneLineParser(argparse.ArgumentParser):
    """argparse that reports a usage error in one line (and exit code 2)."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def _print_json(data: Any) -> None:
    """The one JSON writer of the CLI: strict JSON, so NaN or Infinity is refused rather than printed."""
    from workbench.errors import WorkbenchError

    try:
        _write_json(data, sys.stdout.write)
    except ValueError as exc:  # json's allow_nan=False: a figure that is not a finite number
        sys.stdout.write("\n")
        raise WorkbenchError(f"the result holds a figure that is not a finite number ({exc}); it is not JSON") from None
    sys.stdout.write("\n")


def _echo(text: str) -> None:
    """Text for the terminal, line by line, with control characters (an escape sequence in a kernel's name
    from a trace, say) written as escapes: what files hold is shown, never obeyed by the terminal."""
    from workbench.errors import shown

    print("\n".join(shown(line) for line in text.split("\n")))


_SMALL_LIST = 100  # lists longer than this (and iterators) put one item per line rather than indenting each


def _write_json(value: Any, write: Callable[[str], Any], indent: str = "") -> None:
    """JSON as json.dump(indent=2) writes it, except that iterators are written as they are made and
    long lists one compact item per line, so a profile of a million kernels streams out quickly.

    A value with `encoded_batches()` (profilers.records.EncodedItems) is such a list whose
    items come already encoded, a batch of texts at a time."""
    inner = indent + "  "
    encoded_batches = getattr(value, "encoded_batches", None)
    if callable(encoded_batches):
        between = ",\n" + inner
        first = True
        for batch in encoded_batches():
            if batch:
                write(("[\n" + inner if first else between) + between.join(batch))
                first = False
        write("[]" if first else "\n" + indent + "]")
        return
    if isinstance(value, dict):
        if not value:
            write("{}")
            return
        write("{")
        for number, (key, item) in enumerate(value.items()):
            write(("," if number else "") + "\n" + inner + json.dumps(str(key), ensure_ascii=False, allow_nan=False) + ": ")
            _write_json(item, write, inner)
        write("\n" + indent + "}")
        return
    if isinstance(value, (list, tuple)) and len(value) <= _SMALL_LIST:
        write(json.dumps(value, indent=2, ensure_ascii=False, allow_nan=False).replace("\n", "\n" + indent))
        return
    if isinstance(value, (list, tuple)) or (hasattr(value, "__next__") and hasattr(value, "__iter__")):
        encode = json.JSONEncoder(ensure_ascii=False, allow_nan=False).encode
        first = True
        for item in value:
            write(("[" if first else ",") + "\n" + inner + encode(item))
            first = False
        write("[]" if first else "\n" + indent + "]")
        return
    write(json.dumps(value, indent=2, ensure_ascii=False, allow_nan=False).replace("\n", "\n" + indent))


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
    from workbench.analysis import analyze, analyze_partial

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
        _print_json(analysis.to_dict())
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
    from workbench.devices.catalogue import match_device
    from workbench.errors import DeviceError
    from workbench.units import format_bandwidth, format_bytes

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
        _print_json({**found.to_dict(), "device": device.to_dict()})
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
    from workbench.devices import BANDWIDTH, catalogue
    from workbench.devices.host import host_device
    from workbench.devices.nvml import detect, device_for
    from workbench.errors import DeviceError
    from workbench.units import format_bandwidth, format_bytes, format_flop_rate

    if args.match is not None:
        return _run_devices_match(args)
    if args.memory_gib is not None:
        raise DeviceError("--memory-gib goes with --match NAME")
    detection = detect()
    devices = catalogue()
    host = host_device()
    if args.json:
        _print_json(
            {
                "detected": detection.to_dict(),
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
    from workbench.device_compare import compare_declaration, comparison_markdown, comparison_text, resolve_devices

    devices = resolve_devices(args.devices)
    comparison = compare_declaration(args.declaration, devices, convention=args.convention, overlap=args.overlap)
    if args.json:
        _print_json(comparison.to_dict())
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
    from workbench.breakdown import KIND, MODULE, where_time_goes
    from workbench.devices.catalogue import find_device
    from workbench.step_files import read_step_file
    from workbench.steps import StepError, parse_step, parse_trace_match, step_timeline

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
        _print_json({**timeline.to_dict(), "where_time_goes": breakdown.to_dict()})
    else:
        _echo("\n".join([timeline.summary_text(), "", *breakdown.text_lines(KIND), "", *breakdown.text_lines(MODULE)]))
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
    from workbench.scratchpad import evaluate, format_result

    result = evaluate(args.expression, to=args.to)
    print(f"{args.expression} = {format_result(result, keep_unit=args.to is not None)}")
    return EXIT_OK


# ---------------------------------------------------------------- report


def _add_report(sub: Any) -> None:
    p = sub.add_parser(
        "report",
        help="write a Markdown, HTML or CSV report of a session file",
        description="Write a report of a session: Markdown or HTML with each operation's derivation, bounds and "
        "measured runs (and the roofline plot when Qt can render it offscreen; beside a Markdown report as "
        "OUT-plot.png), or CSV: one row per operation, the raw timing samples in OUT-samples.csv, and where each "
        "step's time goes (by kind and by module) in OUT-steps.csv. "
        "The type follows the output's suffix, e.g. workbench report lab.json -o lab.html",
    )
    p.add_argument("session", metavar="SESSION", help="a session file (.json)")
    p.add_argument("-o", "--output", metavar="OUT", required=True, help="the report to write: .md, .html or .csv")
    p.add_argument("--no-plot", action="store_true", help="leave the plot out (no Qt needed)")
    p.add_argument("--inline-plot", action="store_true",
                   help="Markdown: embed the plot in the text as base64 instead of writing OUT-plot.png beside it")
    p.set_defaults(run=_run_report)


def _report_plot_png(session: Any) -> tuple[bytes | None, str]:
    """The session's roofline as PNG from the GUI's renderer, offscreen; (None, why) when it cannot run here."""
    if not has_display():
        os.environ["QT_QPA_PLATFORM"] = "offscreen"
    try:
        from workbench.gui.export import session_plot_png  # type: ignore[attr-defined]
    except Exception as exc:  # no Qt libraries on this machine, or no renderer in this build
        return None, f"the plot renderer is unavailable ({type(exc).__name__})"
    try:
        return session_plot_png(session), ""
    except Exception as exc:  # the plot is an extra: the report is still worth writing without it
        return None, f"the plot could not be rendered ({exc})"


def _run_report(args: argparse.Namespace) -> int:
    from workbench.report import report_files, report_kind, write_report
    from workbench.session import load

    kind = report_kind(args.output)
    session = load(args.session)
    plot, why = (None, "") if args.no_plot or kind == "csv" else _report_plot_png(session)
    write_report(session, args.output, plot, inline_plot=args.inline_plot)
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
    p.add_argument("--json", action="store_true", help="print the kernels, the comparisons and the profile record as JSON")
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
        _print_json(report.data())
    else:
        for line in report.lines():
            _echo(line)
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
        _print_json(result.to_dict())
    else:
        _echo(result.summary_text())
    return EXIT_OK


# ---------------------------------------------------------------- measure / calibrate


def _add_measure(sub: Any) -> None:
    p = sub.add_parser(
        "measure",
        help="run a declared operation for real and time it (CuPy on the GPU, NumPy on the CPU)",
        description="Time a declared operation with the workbench protocol (random inputs, one untimed call, "
        "warm-up, raw samples, reference check) and print the run record, e.g. "
        'workbench measure "add(n=2**24, dtype=fp32)" --backend numpy --iterations 50',
    )
    p.add_argument("declaration", metavar="DECL", help='one declaration line, e.g. "gemm(M=4096, N=4096, K=4096, dtype=fp16)"')
    p.add_argument("--backend", choices=("auto", "cupy", "numpy"), default="auto", help="auto: CuPy when it sees a GPU, else NumPy")
    p.add_argument("--iterations", type=int, default=50, metavar="N", help="timed iterations, at least 30 (default 50)")
    p.add_argument("--mode", choices=("warm", "cold"), default="warm", help="cold writes a cache-sized buffer before each iteration")
    p.add_argument("--warmup", type=int, metavar="N", help="warm-up calls (default: at least 2 calls and 0.1 s)")
    p.add_argument(
        "--device",
        help="the catalogue entry of the device the run runs on, when matching its name is not enough "
        "(default: the detected GPU's entry, or the CPU entry)",
    )
    p.add_argument(
        "--convention", choices=CONVENTIONS, help="FLOP per multiply-add: 2 or 1 (default: the session's, or fma2)"
    )
    p.add_argument("--binary", action="store_true", help="bytes in MiB/GiB instead of MB/GB")
    p.add_argument("--json", action="store_true", help="print the run record and its figures as JSON")
    p.add_argument(
        "--save-to",
        metavar="SESSION",
        help="append the run (with the device it ran on) to this session file, creating it if needed; "
        "written atomically under the file's lock (SESSION.lock beside it), so runs from several terminals and the "
        "window that has it open are all kept",
    )
    p.set_defaults(run=_run_measure)

    r = sub.add_parser(
        "runs",
        help="list a session file's measured runs with their figures",
        description="Each run of a session: median, achieved rates and % of the bound on the device it ran on, "
        "computed as the window and the reports compute them, with impossible results flagged, e.g. "
        "workbench runs lab.json",
    )
    r.add_argument("session", metavar="SESSION", help="a session file (.json)")
    r.add_argument("--json", action="store_true", help="print each run's figures as JSON")
    r.set_defaults(run=_run_runs)

    c = sub.add_parser(
        "calibrate",
        help="measure sustained bandwidth, matrix, interface and link rates (measured rates for the bounds)",
        description="Measure sustained bandwidth with a large copy (bytes read + written) and a large GEMM per "
        "dtype path; then the interfaces and links: on a GPU the L2 bandwidth (a working set inside L2), host <-> "
        "device copies (pinned and pageable) and, with two or more GPUs, peer copies and NCCL collectives "
        "(algbw, busbw); on a CPU a copy inside the last-level cache and a copy between two NumPy buffers standing "
        "in for the host link. Prints them beside the datasheet figures, with how each was measured.",
    )
    c.add_argument("--backend", choices=("auto", "cupy", "numpy"), default="auto", help="auto: CuPy when it sees a GPU, else NumPy")
    c.add_argument("--device", help="catalogue device to compare with (default: the detected GPU, or cpu-generic)")
    c.add_argument("--quick", action="store_true", help="smaller sizes: a fast sanity check, less representative")
    c.add_argument("--binary", action="store_true", help="bytes in MiB/GiB instead of MB/GB")
    c.add_argument("--json", action="store_true", help="print the calibration (rates, transfers and every run record) as JSON")
    c.add_argument("--iterations", type=int, default=30, metavar="N", help="timed iterations per measurement, at least 30 (default 30)")
    c.add_argument(
        "--link-size",
        metavar="BYTES",
        help="bytes per link copy, e.g. '256 MiB' (default 256 MiB, 64 MiB with --quick on a GPU)",
    )
    c.add_argument("--no-links", action="store_true", help="skip the host <-> device, peer and NCCL measurements (the stand-in on a CPU)")
    c.add_argument("--no-interfaces", action="store_true", help="skip the L2 (GPU) or last-level cache (CPU) measurement")
    c.add_argument("--no-latency", action="store_true", help="skip the HBM latency measurements (idle pointer chase, loaded copy; GPU only)")
    c.set_defaults(run=_run_calibrate)


def _run_measure(args: argparse.Namespace) -> int:
    from workbench.measure import measure
    from workbench.measure.text import run_table
    from workbench.runs import DERIVED_KEY, FigureContext, record_run, run_figures

    session, path = (_session_to_extend(args.save_to) if args.save_to else (None, ""))
    convention = args.convention or (session.settings.convention if session is not None else "fma2")
    record = measure(
        args.declaration,
        backend=args.backend,
        iterations=args.iterations,
        mode=args.mode,
        warmup=args.warmup,
        device=args.device or "auto",
        convention=convention,
    )
    added, not_saved = "", ""
    if session is not None:
        from workbench.session import SessionError
        from workbench.session_sync import update_session_file

        try:
            # Read, append and write under the file's lock: the window or another terminal may be saving it too.
            session, added, _ = update_session_file(
                path, lambda current: _store_run(current, record, args.declaration), _new_measured_session
            )
        except SessionError as exc:
            not_saved = f"{exc}; {_keep_run_elsewhere(record, args.declaration, path)}"
            session = None
    context = session.figure_context() if session is not None else FigureContext(convention=convention, binary=args.binary)
    figures = run_figures(record_run(record), context)
    if args.json:
        _print_json({**record.to_dict(), DERIVED_KEY: figures.to_dict()})
    else:
        print(run_table(record, figures, args.binary or context.binary))
        if session is not None:
            print(f"saved as run {len(session.runs)} of {path}{added}")
    if not_saved:
        from workbench.errors import shown

        print(f"workbench: error: {shown(not_saved)}", file=sys.stderr)
        return EXIT_USAGE
    return EXIT_OK


def _new_measured_session() -> Any:
    from workbench.session import Session

    return Session(title="Measured from the command line")


def _keep_run_elsewhere(record: Any, written: str, path: str) -> str:
    """Save a run its session file would not take to a new file beside it (else in the temporary folder); says where."""
    import tempfile

    from workbench.session import SessionError, save
    from workbench.session_sync import unused_path

    session = _new_measured_session()
    _store_run(session, record, written)
    for folder in (os.path.dirname(os.path.abspath(path)), tempfile.gettempdir()):
        target = unused_path(os.path.join(folder, os.path.basename(path)), f"run {record.id}")
        try:
            save(session, target)
        except SessionError:
            continue
        return f"the run was saved to {target} instead"
    return "the run could not be saved anywhere (its table is above)"


def _store_run(session: Any, record: Any, written: str) -> str:
    """Append a run to a session, with an operation for its declaration when the session has none; what was added."""
    from workbench.runs import OPERATION_NAME_KEY
    from workbench.session import DeviceChoice, OperationEntry, canonical_declaration

    wanted = canonical_declaration(record.declaration)
    entry = next((e for e in session.operations if canonical_declaration(e.declaration) == wanted), None)
    added = ""
    if entry is None:
        taken = {e.name for e in session.operations}
        name = record.operation
        number = 2
        while name in taken:
            name, number = f"{record.operation} {number}", number + 1
        entry = OperationEntry(name, written)  # as the user wrote it (2**16 stays 2**16)
        session.operations.append(entry)
        added = f" (and the operation '{name}')"
    if not session.runs and not session.operations[:-1] and record.provenance is not None and record.provenance.catalogue_key:
        session.device = DeviceChoice(key=record.provenance.catalogue_key)  # a new session shows the device it measured
    data = record.to_dict()
    data[OPERATION_NAME_KEY] = entry.name
    session.runs.append(data)
    return added


def _session_to_extend(path: str) -> tuple[Any, str]:
    """The session a run is appended to: the file as it is, or a new session when there is no file yet."""
    from workbench.session import load
    from workbench.session_sync import check_lockable

    check_lockable(path)  # a missing or read-only folder is said before the measurement, not after it
    if os.path.lexists(path):
        return load(path), path
    return _new_measured_session(), path


def _run_runs(args: argparse.Namespace) -> int:
    from workbench.session import load
    from workbench.units import format_bandwidth, format_flop_rate, format_percent, format_time

    session = load(args.session)
    figures = session.run_figures()
    if args.json:
        _print_json([{"id": f.id, "declaration": f.declaration_text, "status": f.status, **f.to_dict()} for f in figures])
        return EXIT_OK
    if not figures:
        print(f"{args.session}: no measured runs")
        return EXIT_OK
    binary = session.settings.binary
    for f in figures:
        rates = [format_bandwidth(f.achieved_byte_per_s, binary) if f.achieved_byte_per_s else "",
                 format_flop_rate(f.achieved_flop_per_s) if f.achieved_flop_per_s else ""]
        line = f"{f.id}  {f.declaration_text}  [{f.status_text}, {f.mode or 'mode not recorded'}]"
        if f.median_s is not None:
            line += f"  median {format_time(f.median_s)}"
        if any(rates):
            line += "  " + " · ".join(r for r in rates if r) + f" [{f.convention}]"
        if f.percent_of_bound is not None:
            line += f"  {format_percent(f.percent_of_bound)} of the bound on {f.device_name}"
        elif f.bound_note:
            line += f"  ({f.bound_note})"
        _echo(line)
        if f.device_note:
            print(f"    {f.device_note}")
        if f.impossible is not None:
            print(f"    IMPOSSIBLE: {f.impossible.headline}")
            for reason in f.impossible.reasons:
                print(f"      {reason.as_text()}")
    return EXIT_OK


def _run_calibrate(args: argparse.Namespace) -> int:
    from workbench.measure.calibrate import CalibrationRun
    from workbench.measure.run import default_device
    from workbench.measure.backends import select_backend
    from workbench.measure.text import calibration_table

    from workbench.measure.errors import MeasurementError
    from workbench.measure.run import MAX_ITERATIONS, MIN_ITERATIONS

    if not MIN_ITERATIONS <= args.iterations <= MAX_ITERATIONS:
        raise MeasurementError(f"--iterations must be {MIN_ITERATIONS}–{MAX_ITERATIONS:,}; got {args.iterations}")
    link_bytes = _byte_count(args.link_size, "--link-size") if args.link_size is not None else None
    if args.device:
        from workbench.devices.catalogue import find_device

        device = find_device(args.device)  # before the backend: a misspelt key fails at once
        backend = select_backend(args.backend)
    else:
        backend = select_backend(args.backend)
        device = default_device(backend)
    result = CalibrationRun(
        backend,
        quick=args.quick,
        device=device,
        iterations=args.iterations,
        links=not args.no_links,
        interfaces=not args.no_interfaces,
        link_bytes=link_bytes,
        latency=not args.no_latency,
    ).run()
    if args.json:
        _print_json(result.to_dict())
    else:
        print(calibration_table(result, device, args.binary))
    return EXIT_OK


def _byte_count(text: str, option: str) -> int:
    """'256 MiB', '64MB', '2**26 B' as whole bytes, 4 KiB to 64 GiB; MeasurementError (one line) otherwise."""
    from workbench.errors import UnitError
    from workbench.measure.errors import MeasurementError
    from workbench.scratchpad import parse_quantity
    from workbench.units import require_dimension

    try:
        value = require_dimension(parse_quantity(text), "B", option)
    except UnitError as exc:
        message = str(exc)
        raise MeasurementError(message if option in message else f"{option}: {message}") from None
    if not 4096 <= value <= 64 * 1024**3:
        raise MeasurementError(f"{option} must be 4 KiB to 64 GiB; got '{text}'")
    return int(value)


# ---------------------------------------------------------------- gui


def _add_gui(sub: Any) -> None:
    p = sub.add_parser("gui", help="open the desktop window (the default with no subcommand)")
    p.add_argument("session", nargs="?", metavar="FILE", help="a session file to open")
    from workbench.examples import MENU_ORDER

    p.add_argument("--example", metavar="KEY", help=f"open a built-in example session: {', '.join(MENU_ORDER)}")
    p.add_argument(
        "--check",
        action="store_true",
        help="show the window, print one line saying what it shows, and quit (checks an installation)",
    )
    p.add_argument(
        "--presentation",
        action="store_true",
        help="start in presentation mode: larger text everywhere, for a projector (View ▸ Presentation)",
    )
    p.set_defaults(run=_run_gui)


def has_display(environ: dict[str, str] | None = None) -> bool:
    """True when Qt has somewhere to draw: an X or Wayland display, or an explicit platform."""
    env = os.environ if environ is None else environ
    return bool(env.get("DISPLAY") or env.get("WAYLAND_DISPLAY") or env.get("QT_QPA_PLATFORM"))


# The shared libraries Qt's xcb platform plugin (plugins/platforms/libqxcb.so and its libQt6XcbQpa) loads from
# the system, beyond those Qt itself needs offscreen, each with the Debian/Ubuntu package that brings it.
# tests/gui/test_desktop_start.py checks this list against the installed plugin's own.
XCB_LIBRARIES: dict[str, str] = {
    "libxcb.so.1": "libxcb1",
    "libX11-xcb.so.1": "libx11-xcb1",
    "libxcb-cursor.so.0": "libxcb-cursor0",
    "libxcb-icccm.so.4": "libxcb-icccm4",
    "libxcb-image.so.0": "libxcb-image0",
    "libxcb-keysyms.so.1": "libxcb-keysyms1",
    "libxcb-randr.so.0": "libxcb-randr0",
    "libxcb-render.so.0": "libxcb-render0",
    "libxcb-render-util.so.0": "libxcb-render-util0",
    "libxcb-shape.so.0": "libxcb-shape0",
    "libxcb-shm.so.0": "libxcb-shm0",
    "libxcb-sync.so.1": "libxcb-sync1",
    "libxcb-util.so.1": "libxcb-util1",
    "libxcb-xfixes.so.0": "libxcb-xfixes0",
    "libxcb-xkb.so.1": "libxcb-xkb1",
    "libxkbcommon-x11.so.0": "libxkbcommon-x11-0",
    "libxkbcommon.so.0": "libxkbcommon0",
    "libX11.so.6": "libx11-6",
    "libGL.so.1": "libgl1",
    "libglib-2.0.so.0": "libglib2.0-0",
    "libgthread-2.0.so.0": "libglib2.0-0",
}


def _loadable(name: str) -> bool:
    """True when the dynamic loader finds and loads the shared library `name` (as Qt's plugin loader would)."""
    import ctypes

    try:
        ctypes.CDLL(name)
    except OSError:
        return False
    return True


def platform_is_xcb(environ: dict[str, str] | None = None) -> bool:
    """True when Qt will start on the xcb (X11) platform: an X display, and no other platform asked for (nor a
    Wayland session, where Qt prefers its wayland plugin)."""
    env = os.environ if environ is None else environ
    platform = env.get("QT_QPA_PLATFORM", "").strip()
    if platform:
        return platform.split(":")[0].split(";")[0] == "xcb"
    if env.get("WAYLAND_DISPLAY") and env.get("XDG_SESSION_TYPE") == "wayland":
        return False
    return bool(env.get("DISPLAY"))


def missing_xcb_libraries(loadable: Callable[[str], bool] | None = None) -> list[str]:
    """The xcb plugin's libraries that cannot be loaded here (`loadable` says, _loadable by default), in
    XCB_LIBRARIES' order."""
    found = loadable or _loadable
    return [name for name in XCB_LIBRARIES if not found(name)]


def missing_libraries_line(missing: Sequence[str]) -> str:
    """One line naming the missing libraries and the apt packages that bring them."""
    packages = " ".join(dict.fromkeys(XCB_LIBRARIES[name] for name in missing))
    return (
        f"workbench: the desktop window (Qt's xcb platform) needs shared libraries missing here: {', '.join(missing)}; "
        f"on Debian/Ubuntu: sudo apt-get install {packages}"
    )


def _run_gui(args: argparse.Namespace) -> int:
    if not has_display():
        print(
            "workbench: no display found (DISPLAY, WAYLAND_DISPLAY and QT_QPA_PLATFORM are unset); "
            "run `xvfb-run -a workbench` or use the headless subcommands (calc, devices, units)",
            file=sys.stderr,
        )
        return EXIT_USAGE
    if platform_is_xcb():  # before Qt loads the plugin: its own message ends in an abort and blames the wrong library
        missing = missing_xcb_libraries()
        if missing:
            print(missing_libraries_line(missing), file=sys.stderr)
            return EXIT_USAGE
    from workbench.gui.app import run_app

    return run_app(
        getattr(args, "session", None),
        example=getattr(args, "example", None),
        check=getattr(args, "check", False),
        presentation=getattr(args, "presentation", False),
    )


# ---------------------------------------------------------------- main


ADDERS: tuple[Callable[[Any], None], ...] = (_add_calc, _add_devices, _add_compare, _add_step, _add_units, _add_report, _add_import_ncu, _add_import_nsys, _add_import_torch, _add_measure, _add_gui)  # _add_measure adds `runs` too


class _VersionAction(argparse.Action):
    """--version: the version and one line per optional part, from package metadata only."""

    def __init__(self, option_strings: list[str], dest: str = argparse.SUPPRESS, help: str | None = None) -> None:
        super().__init__(option_strings, dest=dest, default=argparse.SUPPRESS, nargs=0, help=help)

    def __call__(self, parser: argparse.ArgumentParser, namespace: Any, values: Any, option: str | None = None) -> None:
        from workbench.about import version_text

        print(version_text())
        parser.exit(EXIT_OK)


def build_parser() -> argparse.ArgumentParser:
    parser = _OneLineParser(
        prog="workbench",
        description="Performance Workbench: logical work, compulsory bytes and time bounds for tensor "
        "operations, next to measured kernels. With no subcommand (or a session file) it opens the window.",
    )
    parser.add_argument(
        "--version",
        action=_VersionAction,
        help="show the version and which optional parts (CuPy, NVML, PyTorch) are available",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_OneLineParser)
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


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
