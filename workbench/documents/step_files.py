"""Step files: a step read from a step text file, or from a session file that holds steps.

Above both workbench/steps/ (the step language, which it parses with) and workbench/documents/session/ (the session
file a step may come from), so that neither of those imports the other's reader.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from workbench.files import FileReadError, read_bounded
from workbench.documents.session import load
from workbench.steps import MAX_STEP_CHARS, StepError, parse_step


@dataclass(frozen=True)
class StepSource:
    """A step read from a file: its text, and the session it came from (None for a plain step file)."""

    text: str
    name: str
    session: Any = None


def read_step_file(path: str, name: str | None = None) -> StepSource:
    """A step from a step text file, or from a session file (its step called `name`, else its first).

    A file whose first non-blank character is '{' is read as a session.
    """
    try:
        data = read_bounded(path, MAX_STEP_CHARS * 4, "step file")
    except FileReadError as exc:
        raise StepError(f"cannot open {path}: {exc}") from None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise StepError(f"{path}: not UTF-8 text") from None
    if text.lstrip().startswith("{"):
        session = load(path)
        if not session.steps:
            raise StepError(f"session file {path} holds no steps")
        if name is None:
            entry = session.steps[0]
        else:
            matches = [step for step in session.steps if step.name == name]
            if not matches:
                known = ", ".join(repr(step.name) for step in session.steps)
                raise StepError(f"session file {path} has no step named {name!r}; it has {known}")
            entry = matches[0]
        return StepSource(entry.text, entry.name, session)
    if name is not None:
        raise StepError("--name picks a step in a session file; a step file holds one step")
    try:
        parse_step(text)
    except StepError as exc:
        raise StepError(f"{path}: {exc}") from None
    return StepSource(text, path)
