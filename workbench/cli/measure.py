"""`workbench measure`, `workbench runs` and `workbench calibrate`: timing declared operations for real, the
runs kept in session files, and this machine's sustained rates."""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from workbench.cli.output import EXIT_OK, EXIT_USAGE, echo, print_json
from workbench.model.conventions import CONVENTIONS


def add_measure(sub: Any) -> None:
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
    from workbench.measure.runs import DERIVED_KEY, FigureContext, record_run, run_figures

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
        from workbench.documents.session import SessionError
        from workbench.documents.session_sync import update_session_file

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
        print_json({**record.to_dict(), DERIVED_KEY: figures.to_dict()})
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
    from workbench.documents.session import Session

    return Session(title="Measured from the command line")


def _keep_run_elsewhere(record: Any, written: str, path: str) -> str:
    """Save a run its session file would not take to a new file beside it (else in the temporary folder); says where."""
    import tempfile

    from workbench.documents.session import SessionError, save
    from workbench.documents.session_sync import unused_path

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
    from workbench.measure.runs import OPERATION_NAME_KEY
    from workbench.documents.session import DeviceChoice, OperationEntry, canonical_declaration

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
    from workbench.documents.session import load
    from workbench.documents.session_sync import check_lockable

    check_lockable(path)  # a missing or read-only folder is said before the measurement, not after it
    if os.path.lexists(path):
        return load(path), path
    return _new_measured_session(), path


def _run_runs(args: argparse.Namespace) -> int:
    from workbench.documents.session import load
    from workbench.model.units import format_bandwidth, format_flop_rate, format_percent, format_time

    session = load(args.session)
    figures = session.run_figures()
    if args.json:
        print_json([{"id": f.id, "declaration": f.declaration_text, "status": f.status, **f.to_dict()} for f in figures])
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
        echo(line)
        if f.device_note:
            print(f"    {f.device_note}")
        if f.missed:
            print(f"    why short: {f.missed}")
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
        from workbench.model.devices.catalogue import find_device

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
        print_json(result.to_dict())
    else:
        print(calibration_table(result, device, args.binary))
    return EXIT_OK


def _byte_count(text: str, option: str) -> int:
    """'256 MiB', '64MB', '2**26 B' as whole bytes, 4 KiB to 64 GiB; MeasurementError (one line) otherwise."""
    from workbench.errors import UnitError
    from workbench.measure.errors import MeasurementError
    from workbench.model.scratchpad import parse_quantity
    from workbench.model.units import require_dimension

    try:
        value = require_dimension(parse_quantity(text), "B", option)
    except UnitError as exc:
        message = str(exc)
        raise MeasurementError(message if option in message else f"{option}: {message}") from None
    if not 4096 <= value <= 64 * 1024**3:
        raise MeasurementError(f"{option} must be 4 KiB to 64 GiB; got '{text}'")
    return int(value)
