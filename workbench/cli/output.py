"""What the `workbench` command writes: one-line usage errors, strict JSON (streamed for long lists) and text
with control characters shown as escapes, and its exit codes."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, Callable


EXIT_OK = 0


EXIT_USAGE = 2


class OneLineParser(argparse.ArgumentParser):
    """argparse that reports a usage error in one line (and exit code 2)."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def print_json(data: Any) -> None:
    """The one JSON writer of the CLI: strict JSON, so NaN or Infinity is refused rather than printed."""
    from workbench.errors import WorkbenchError

    try:
        write_json(data, sys.stdout.write)
    except ValueError as exc:  # json's allow_nan=False: a figure that is not a finite number
        sys.stdout.write("\n")
        raise WorkbenchError(f"the result holds a figure that is not a finite number ({exc}); it is not JSON") from None
    sys.stdout.write("\n")


def echo(text: str) -> None:
    """Text for the terminal, line by line, with control characters (an escape sequence in a kernel's name
    from a trace, say) written as escapes: what files hold is shown, never obeyed by the terminal."""
    from workbench.errors import shown

    print("\n".join(shown(line) for line in text.split("\n")))


_SMALL_LIST = 100  # lists longer than this (and iterators) put one item per line rather than indenting each


def write_json(value: Any, write: Callable[[str], Any], indent: str = "") -> None:
    """JSON as json.dump(indent=2) writes it, except that iterators are written as they are made and
    long lists one compact item per line, so a profile of a million kernels streams out quickly.

    A value with `encoded_blocks()` (profilers.records.EncodedItems) is such a list whose
    items come already encoded, a block of texts at a time."""
    inner = indent + "  "
    encoded_blocks = getattr(value, "encoded_blocks", None)
    if callable(encoded_blocks):
        between = ",\n" + inner
        first = True
        for block in encoded_blocks(between):
            write(("[\n" + inner if first else between) + block)
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
            write_json(item, write, inner)
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
