"""Record what the app saves for every example session and every session fixture (tests/data/saved/).

    .venv/bin/python scripts/record_saved_sessions.py

tests/test_saved_sessions.py compares each file's load-and-save with these texts, so a change anywhere in
reading, analysing or writing a session that alters a saved byte fails there with the lines that differ.
Run this only when the session file is meant to change (a new field, a new figure), and say why in the
commit: the recorded texts are the file format as users receive it.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from test_saved_sessions import SAVED, SOURCES  # noqa: E402  (the files the test checks, named there once)

from workbench.documents.session import dumps, load  # noqa: E402


def main() -> int:
    SAVED.mkdir(exist_ok=True)
    for source in SOURCES:
        target = SAVED / source.name
        target.write_text(dumps(load(source)), encoding="utf-8")
        print(f"wrote {target.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
