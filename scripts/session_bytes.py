"""Record, or compare with a recording, the bytes every session and record file of the repository saves to.

`record DIR` writes one file per source into DIR; `compare DIR` writes the same into a scratch folder and
names every file whose bytes differ. Run `record` on one checkout and `compare` on another (PYTHONPATH
chooses which workbench runs) to prove a change to the serialisation leaves the files as they were.

The sources: every JSON file under resources/ and tests/ that opens as a session (saved with and without
the derived figures), every run record and profile record inside them (read back and written again), and
every profiler export under tests/data/ imported and written as the session stores it, then read back.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
from pathlib import Path
from typing import Any, Iterator

from workbench.documents.session import dumps, load
from workbench.documents.session.writing import format_json, session_to_dict
from workbench.errors import WorkbenchError
from workbench.measure.record import RECORD_FORMAT as RUN_FORMAT, RunRecord
from workbench.profilers.profile import Profile
from workbench.profilers.reader import read_profile
from workbench.profilers.records import RECORD_FORMAT as PROFILE_FORMAT

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
from session_bytes_synthetic import outputs as synthetic_outputs  # noqa: E402


def _records(value: Any) -> Iterator[dict[str, Any]]:
    """Every run or profile record nested anywhere in a file's data."""
    if isinstance(value, dict):
        if value.get("format") in (RUN_FORMAT, PROFILE_FORMAT):
            yield value
        for item in value.values():
            yield from _records(item)
    elif isinstance(value, list):
        for item in value:
            yield from _records(item)


def _record_text(data: dict[str, Any]) -> str:
    try:
        if data["format"] == RUN_FORMAT:
            return format_json(RunRecord.from_dict(data).to_dict())
        return format_json(Profile.from_dict(data).to_dict(all_metrics=True))
    except WorkbenchError as exc:
        return f"refused: {exc}\n"


def outputs() -> Iterator[tuple[str, str]]:
    """(name, text) for every saved form this script checks."""
    import json

    for path in sorted([*ROOT.joinpath("resources").rglob("*.json"), *ROOT.joinpath("tests").rglob("*.json")]):
        name = str(path.relative_to(ROOT)).replace("/", "__")
        try:
            session = load(path)
        except WorkbenchError as exc:
            yield f"{name}.load", f"refused: {exc}\n"
        else:
            yield f"{name}.saved", dumps(session)
            yield f"{name}.plain", format_json(session_to_dict(session, include_derived=False))
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except ValueError:
            continue
        for index, record in enumerate(_records(data)):
            yield f"{name}.record{index}", _record_text(record)
    for path in sorted(ROOT.joinpath("tests", "data").rglob("*.csv")):
        name = str(path.relative_to(ROOT)).replace("/", "__")
        try:
            profile = read_profile(path)
        except WorkbenchError as exc:
            yield f"{name}.import", f"refused: {exc}\n"
            continue
        for all_metrics in (False, True):
            data = profile.to_dict(all_metrics=all_metrics)
            yield f"{name}.profile{int(all_metrics)}", format_json(data)
            yield f"{name}.again{int(all_metrics)}", _record_text(data)
    yield from synthetic_outputs()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", choices=("record", "compare"))
    parser.add_argument("folder", type=Path)
    args = parser.parse_args()
    if args.mode == "record":
        args.folder.mkdir(parents=True, exist_ok=True)
        count = 0
        for name, text in outputs():
            args.folder.joinpath(name).write_text(text, encoding="utf-8")
            count += 1
        print(f"recorded {count} files in {args.folder}")
        return 0
    seen, differ = set(), []
    for name, text in outputs():
        seen.add(name)
        recorded = args.folder / name
        if not recorded.exists() or recorded.read_bytes() != text.encode("utf-8"):
            differ.append(name)
    missing = sorted(path.name for path in args.folder.iterdir() if path.name not in seen)
    for name in differ:
        print(f"differs: {name}")
    for name in missing:
        print(f"not produced now: {name}")
    digest = hashlib.sha256("".join(sorted(seen)).encode()).hexdigest()[:12]
    print(f"{len(seen)} outputs compared ({digest}); {len(differ)} differ, {len(missing)} missing")
    return 1 if differ or missing else 0


if __name__ == "__main__":
    sys.exit(main())
