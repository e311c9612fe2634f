"""The session: what a user declared, on which device, with which settings, and what was measured.

A session is plain data (no Qt): the GUI observes it, the file format
serialises it, reports render it. Derived figures (FLOP, bytes, bounds) are
not stored as truth: the file carries them for readers without the app, and
they are recomputed from the declarations whenever a session is opened.

The file is JSON, `{"format": "perf-workbench-session", "version": 1, ...}`
(docs/session-format.md). Loading parses JSON and walks it against the
expected shape, never executing anything in it; every fault becomes one
`SessionError` naming where it is (`operations[2].declaration`). Saving
writes a temporary file beside the target, fsyncs it and renames it over the
target, so a failed save leaves the previous file as it was.

One module per job: `model` (the records, the format's constants, `SessionError`), `reading` (a file read,
checked and migrated), `writing` (a session as the file's data and its JSON text) and `saving` (the file's bytes
and the atomic write). The names callers use are re-exported here.
"""

from workbench.documents.session.model import (
    COMPACT_FROM_BYTES,
    CONVENTION_CHOICES,
    DEFAULT_DEVICE,
    DERIVED_NOTE,
    FORMAT,
    GENERATOR,
    MAX_FILE_BYTES,
    MAX_NESTING,
    NVML_KEY_PREFIX,
    STALE_TEMPORARY_S,
    VERSION,
    DeviceChoice,
    OperationEntry,
    Session,
    SessionError,
    Settings,
    StepEntry,
    canonical_declaration,
    device_from_detected_facts,
    same_session,
    snapshot,
)
from workbench.documents.session.reading import (
    MIGRATIONS,
    check_file_data,
    load,
    load_keeping_bytes,
    loads,
    loads_named,
    migrate,
    read_session_bytes,
    session_from_dict,
)
from workbench.documents.session.saving import (
    RunEncodings,
    SaveStopped,
    dumps,
    encode_file_data,
    encode_session,
    remove_stale_temporaries,
    save,
    session_pieces,
    write_atomic,
)
from workbench.documents.session.writing import format_json, session_to_dict

__all__ = [
    "COMPACT_FROM_BYTES",
    "CONVENTION_CHOICES",
    "DEFAULT_DEVICE",
    "DERIVED_NOTE",
    "DeviceChoice",
    "FORMAT",
    "GENERATOR",
    "MAX_FILE_BYTES",
    "MAX_NESTING",
    "MIGRATIONS",
    "NVML_KEY_PREFIX",
    "OperationEntry",
    "RunEncodings",
    "STALE_TEMPORARY_S",
    "SaveStopped",
    "Session",
    "SessionError",
    "Settings",
    "StepEntry",
    "VERSION",
    "canonical_declaration",
    "check_file_data",
    "device_from_detected_facts",
    "dumps",
    "encode_file_data",
    "encode_session",
    "format_json",
    "load",
    "load_keeping_bytes",
    "loads",
    "loads_named",
    "migrate",
    "read_session_bytes",
    "remove_stale_temporaries",
    "same_session",
    "save",
    "session_from_dict",
    "session_pieces",
    "session_to_dict",
    "snapshot",
    "write_atomic",
]
