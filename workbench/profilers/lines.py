"""A profile export's lines: read from text or a bounded file (`LineSource`), a binary Nsight report refused
with what to run instead (`open_lines`), and handed out one at a time or many at once with the line number each
starts on (`Lines`), the start of a file checked for NUL bytes."""

from __future__ import annotations

import io
import itertools
from collections import deque
from pathlib import Path
from typing import Callable, Iterable

from workbench.profilers.errors import ProfileError

BINARY_PROBE = 4096  # characters looked at for NUL bytes before a file is taken for text


LineSource = Callable[[], Iterable[str]]


def text_source(text: str) -> LineSource:
    """Text already in memory as a LineSource (line ends as universal newlines read them)."""
    return lambda: io.StringIO(text, newline=None)


def file_source(path: "str | object", limit: int, what: str, source: str) -> LineSource:
    """A file read afresh, bounded and decoded (UTF-8, a BOM dropped), each time the source is opened."""
    return lambda: _FileLines(path, limit, what, source)


class _FileLines:
    """A file's decoded lines (universal newlines), opened at the first read and closed at the end:
    one at a time, or many at once without their line ends (`lines_without_ends`, for Lines.take).
    Read errors (the bounds of files.open_bounded) come as ProfileError."""

    def __init__(self, path: "str | object", limit: int, what: str, source: str) -> None:
        self._open = (path, limit, what)
        self._source = source
        self._text: io.TextIOWrapper | None = None
        self._ended = False
        # Text read ahead by lines_without_ends, from `_at` on: handed out before the file's next text.
        self._rest = ""
        self._at = 0

    def _opened(self) -> io.TextIOWrapper:
        from workbench.files import FileReadError, open_bounded

        if self._text is None:
            path, limit, what = self._open
            try:
                stream = open_bounded(path, limit, what)  # type: ignore[arg-type]
            except FileReadError as exc:
                raise ProfileError(str(exc), self._source) from None
            self._text = io.TextIOWrapper(stream, encoding="utf-8-sig", errors="replace", newline=None)
        return self._text

    def __iter__(self) -> "_FileLines":
        return self

    def __next__(self) -> str:
        from workbench.files import FileReadError

        if self._ended:
            raise StopIteration
        if self._at < len(self._rest):
            end = self._rest.find("\n", self._at)
            if end >= 0:
                line, self._at = self._rest[self._at:end + 1], end + 1
                return line
            head, self._rest, self._at = self._rest[self._at:], "", 0
            try:
                return head + next(self._opened(), "")  # the line goes on in the file, or ends it
            except FileReadError as exc:
                raise ProfileError(str(exc), self._source) from None
        try:
            return next(self._opened())
        except StopIteration:
            self.close()
            raise
        except FileReadError as exc:
            raise ProfileError(str(exc), self._source) from None

    def lines_without_ends(self, count: int) -> list[str]:
        """Up to `count` next lines (fewer only at the end of the file) with their line end taken off (a line
        holds no other newline: the universal-newline reading makes every line end a single newline).
        The file is read in blocks of _READ_CHARS; what is read past the last line handed out waits."""
        from workbench.files import FileReadError

        if self._ended:
            return []
        pieces = [self._rest[self._at:]]
        self._rest, self._at = "", 0
        newlines = pieces[0].count("\n")
        ended = False
        try:
            while newlines < count:
                more = self._opened().read(_READ_CHARS)
                if not more:
                    ended = True
                    break
                pieces.append(more)
                newlines += more.count("\n")
        except FileReadError as exc:
            raise ProfileError(str(exc), self._source) from None
        text = "".join(pieces)
        lines = text.split("\n", count)
        if len(lines) > count:  # the text after the count-th line end waits for the next read
            self._rest = lines.pop()
        elif lines[-1] == "":
            lines.pop()  # the text ended with a line end
        if not lines and ended:
            self.close()
        return lines

    def close(self) -> None:
        self._ended = True
        if self._text is not None:
            self._text.close()


_READ_CHARS = 1 << 20  # characters read at once by _FileLines.lines_without_ends


MAX_FILE_BYTES = 512 * 2**20  # a CSV larger than this is not a profile export we can hold
_BINARY_REPORTS = {
    ".ncu-rep": "ncu --import FILE --csv --page details > FILE.csv",
    ".nsys-rep": "nsys stats --report cuda_gpu_kern_sum --format csv FILE > FILE.csv",
    ".qdrep": "nsys stats --report gpukernsum --format csv FILE > FILE.csv",
    ".sqlite": "nsys stats --report cuda_gpu_kern_sum --format csv FILE > FILE.csv",
}


def _refuse_binary_report(path: Path) -> None:
    suffix = path.suffix.lower()
    if suffix in _BINARY_REPORTS:
        raise ProfileError(
            f"this is a binary {suffix} report; export CSV first: {_BINARY_REPORTS[suffix].replace('FILE', path.name)}",
            path.name,
        )


def open_lines(path: Path) -> LineSource:
    """The file as a LineSource: bounded (regular files only, MAX_FILE_BYTES), decoded, read afresh each time.

    Checked once here, so a FIFO, a device or a file too large is refused before any reader starts.
    """
    _refuse_binary_report(path)
    source = file_source(path, MAX_FILE_BYTES, "profile export", str(path))
    opened = iter(source())
    try:
        next(opened, None)
    finally:
        close = getattr(opened, "close", None)
        if close is not None:
            close()
    return source


class Lines:
    """A LineSource opened once: (1-based number, text) pairs, a NUL byte at the start refused as binary.

    `pending` lets a reader put one line back (the heading that ended a table);
    `take()` hands out many lines at once and `put_back()` returns those a
    batch reader did not use, so table rows can be read in bulk while every
    line keeps its number. `number` is always the number of the last line
    handed out.
    """

    def __init__(self, source: LineSource, name: str, what: str) -> None:
        self._iterator = iter(source())
        self._name = name
        self._what = what
        self.number = 0
        self._seen = 0
        self.pending: tuple[int, str] | None = None
        self._backlog: deque[tuple[int, str]] = deque()
        self.nonblank = 0
        self.first_error: tuple[int, str] | None = None
        self.skipped_lines: list[str] = []  # nsys 'SKIPPED: … does not contain …' lines

    def __iter__(self) -> "Lines":
        return self

    def __next__(self) -> tuple[int, str]:
        if self.pending is not None:
            pending, self.pending = self.pending, None
            return pending
        if self._backlog:
            put_back = self._backlog.popleft()
            self.number = put_back[0]
            return put_back
        line = next(self._iterator).rstrip("\r\n")
        self.number += 1
        if self._seen < BINARY_PROBE:
            if "\x00" in line:
                raise ProfileError(
                    f"this is a binary file, not CSV; export {self._what} as CSV first "
                    "(ncu --import FILE.ncu-rep --csv --page details, or nsys stats --format csv FILE.nsys-rep)",
                    self._name,
                )
            self._seen += len(line) + 1
        if line.strip():
            self.nonblank += 1
            stripped = line.lstrip()
            if stripped.startswith("==ERROR==") and self.first_error is None:
                self.first_error = (self.number, line.strip())
            elif stripped.startswith("SKIPPED") and len(self.skipped_lines) < 20:
                self.skipped_lines.append(line.strip())
        return self.number, line

    @property
    def holding(self) -> bool:
        """True while lines put back (or a pending one) wait to be handed out again."""
        return self.pending is not None or bool(self._backlog)

    def take(self, count: int) -> tuple[int, list[str]]:
        """Up to `count` next lines at once (fewer at the end of the file) and the number of the first.

        The same bookkeeping as one line at a time (numbers, the binary probe,
        the ==ERROR== and SKIPPED lines); only while nothing is held back.
        """
        if self.holding:
            raise RuntimeError("take() while lines are held back; read them one at a time first")
        first = self.number + 1
        taken: list[str] = []
        while len(taken) < count and self._seen < BINARY_PROBE:  # the start of a file: probed line by line
            try:
                taken.append(next(self)[1])
            except StopIteration:
                return first, taken
        bulk = getattr(self._iterator, "lines_without_ends", None)
        if bulk is not None:
            lines = bulk(count - len(taken))
        else:
            lines = [line.rstrip("\r\n") for line in itertools.islice(self._iterator, count - len(taken))]
        if not lines:
            return first, taken
        start = self.number + 1
        self.number += len(lines)
        self.nonblank += len(lines) - lines.count("") - sum(map(str.isspace, lines))
        text = "\n".join(lines)
        if ("==ERROR==" in text and self.first_error is None) or ("SKIPPED" in text and len(self.skipped_lines) < 20):
            for offset, line in enumerate(lines):
                stripped = line.strip()
                if stripped.startswith("==ERROR==") and self.first_error is None:
                    self.first_error = (start + offset, stripped)
                elif stripped.startswith("SKIPPED") and len(self.skipped_lines) < 20:
                    self.skipped_lines.append(stripped)
        taken.extend(lines)
        return first, taken

    def put_back(self, first: int, lines: list[str]) -> None:
        """Return lines handed out by take() (numbered from `first`) to be handed out again, in order."""
        if not lines:
            return
        if self.holding:
            raise RuntimeError("put_back() while lines are already held back")
        self._backlog.extend(zip(range(first, first + len(lines)), lines))
        self.number = first - 1
