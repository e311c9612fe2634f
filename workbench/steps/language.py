"""The step language: one operation a line, `name = DECLARATION [on STREAM] [after a, b]`, parsed into a plan
(`parse_step`) and written back (`format_step`); the grammar is in the package's docstring."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable, Sequence

from workbench.model.declare import Declaration, parse
from workbench.errors import WorkbenchError

DEFAULT_STREAM = "compute"
# A traced model's step (a Llama-style 8B training step is about 12,000 ATen operations) fits; a hostile file
# is refused before it is parsed. docs/session-format.md states these limits.
MAX_STEP_LINES = 100_000
MAX_STEP_CHARS = 20_000_000


# Module paths name traced operations (layers.3.mlp.down_proj.addmm): dots after the first character.
_NAME = r"[A-Za-z_][A-Za-z0-9_.]{0,127}"
_ASSIGN = re.compile(rf"\s*({_NAME})\s*=\s*(.*)$")
_ON = re.compile(rf"on\s+({_NAME})\s*")
_AFTER = re.compile(rf"after\s+({_NAME}(?:\s*,\s*{_NAME})*)\s*$")


class StepError(WorkbenchError):
    """A step text that cannot be laid out: the message names the line."""

    def __init__(self, message: str, line: int | None = None) -> None:
        super().__init__(f"line {line}: {message}" if line is not None else message)
        self.line = line


@dataclass(frozen=True)
class StepLine:
    """One operation of a step as written: its name, declaration, stream, dependencies and comment."""

    name: str
    declaration: Declaration
    stream: str = DEFAULT_STREAM
    after: tuple[str, ...] = ()
    comment: str = ""  # a trailing '# …' comment, without the '#'
    line: int = 0  # 1-based line in the text it came from (0 when built in code)

    @property
    def communication(self) -> bool:
        """True for a collective: its bytes cross a link between chips."""
        return self.declaration.workload().link_traffic is not None


@dataclass(frozen=True)
class StepPlan:
    """A parsed step: its operations in line order, and the comment and blank lines kept for round trips.

    `layout` lists the text's lines: an int is the index of an operation, a
    str a comment or blank line kept as written.
    """

    operations: tuple[StepLine, ...]
    layout: tuple[int | str, ...] = ()

    def names(self) -> list[str]:
        return [op.name for op in self.operations]

    def __getitem__(self, name: str) -> StepLine:
        return self._by_name()[name]

    def _by_name(self) -> dict[str, StepLine]:
        """The operations by name, made on first use (a step of thousands of lines looks names up per line)."""
        found = self.__dict__.get("_names_index")
        if found is None:
            found = {op.name: op for op in self.operations}
            object.__setattr__(self, "_names_index", found)  # a cache of the frozen plan's own data
        return found

    def streams(self) -> list[str]:
        """Streams in order of first use."""
        return list(dict.fromkeys(op.stream for op in self.operations))

    def with_stream(self, names: Iterable[str], stream: str) -> "StepPlan":
        """The same step with some operations moved onto another stream."""
        moved = set(names)
        ops = tuple(
            StepLine(op.name, op.declaration, stream if op.name in moved else op.stream, op.after, op.comment, op.line)
            for op in self.operations
        )
        return StepPlan(ops, self.layout)


def _split_comment(text: str) -> tuple[str, str]:
    """Code and comment of a line: '#' outside double quotes starts the comment."""
    if '"' not in text:  # most lines (a traced step's thousands): no quotes to look past
        code, _, comment = text.partition("#")
        return code, comment.strip()
    quoted = False
    for index, char in enumerate(text):
        if char == '"':
            quoted = not quoted
        elif char == "#" and not quoted:
            return text[:index], text[index + 1 :].strip()
    return text, ""


def _declaration_end(text: str, line: int) -> int:
    """Index just past the ')' that closes the declaration's call."""
    depth, quoted = 0, False
    for index, char in enumerate(text):
        if char == '"':
            quoted = not quoted
        elif quoted:
            continue
        elif char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
            if depth == 0:
                return index + 1
            if depth < 0:
                break
    raise StepError("the declaration's parentheses do not close; expected name = op(field=value, ...)", line)


def parse_step(text: str) -> StepPlan:
    """Parse a step text; any fault raises StepError naming the line."""
    if not isinstance(text, str):
        raise StepError("a step must be text")
    if len(text) > MAX_STEP_CHARS:
        raise StepError(f"a step text is limited to {MAX_STEP_CHARS:,} characters")
    lines = text.splitlines()
    if len(lines) > MAX_STEP_LINES:
        raise StepError(f"a step is limited to {MAX_STEP_LINES:,} lines; this one has {len(lines):,}")
    operations: list[StepLine] = []
    layout: list[int | str] = []
    defined: dict[str, int] = {}
    pending: list[tuple[StepLine, int]] = []
    for number, raw in enumerate(lines, start=1):
        code, comment = _split_comment(raw)
        if not code.strip():
            layout.append(raw.rstrip())
            continue
        match = _ASSIGN.match(code)
        if match is None:
            raise StepError("expected name = declaration [on stream] [after a, b]", number)
        name, rest = match.group(1), match.group(2).strip()
        if name in defined:
            raise StepError(f"'{name}' is already defined on line {defined[name]}", number)
        end = _declaration_end(rest, number)
        try:
            declaration = parse(rest[:end])
        except WorkbenchError as exc:
            raise StepError(f"{name}: {exc}", number) from None
        tail = rest[end:].strip()
        stream = DEFAULT_STREAM
        on = _ON.match(tail)
        if on is not None:
            stream, tail = on.group(1), tail[on.end() :]
        after: tuple[str, ...] = ()
        if tail:
            found = _AFTER.match(tail)
            if found is None:
                raise StepError(f"after the declaration expected 'on STREAM' and/or 'after a, b'; got '{tail}'", number)
            after = tuple(part.strip() for part in found.group(1).split(","))
        if len(set(after)) != len(after):
            raise StepError(f"{name} names a dependency twice", number)
        op = StepLine(name, declaration, stream, after, comment, number)
        defined[name] = number
        layout.append(len(operations))
        operations.append(op)
        pending.append((op, number))
    for op, number in pending:
        for dependency in op.after:
            if dependency == op.name:
                raise StepError(f"{op.name} depends on itself (a cycle)", number)
            if dependency not in defined:
                raise StepError(f"{op.name} depends on '{dependency}', which no line defines", number)
            if defined[dependency] > number:
                cycle = _cycle(operations, op.name, dependency)
                if cycle:
                    raise StepError(f"cycle: {' → '.join(cycle)}", number)
                raise StepError(
                    f"{op.name} depends on '{dependency}', defined later on line {defined[dependency]}; "
                    "a step lists each operation after what it depends on",
                    number,
                )
    if not operations:
        raise StepError("a step needs at least one operation: name = declaration")
    return StepPlan(tuple(operations), tuple(layout))


def _cycle(operations: Sequence[StepLine], start: str, first: str) -> list[str]:
    """A dependency chain start → first → … → start, if there is one (a depth-first search with its own
    stack: a chain as long as the step, a thousand lines, is no deeper for it)."""
    by_name = {op.name: op for op in operations}
    path = [start, first]
    seen = {first}
    pending = [iter(by_name[first].after)]  # per name on the path after `start`: its dependencies not yet tried
    while pending:
        dependency = next(pending[-1], None)
        if dependency is None:
            pending.pop()
            path.pop()
            continue
        if dependency == start:
            path.append(start)
            return path
        if dependency in by_name and dependency not in seen:
            seen.add(dependency)
            path.append(dependency)
            pending.append(iter(by_name[dependency].after))
    return []


def format_step(plan: StepPlan) -> str:
    """The canonical text of a step: columns aligned, declarations canonical, comments kept."""
    ops = plan.operations
    name_width = max((len(op.name) for op in ops), default=0)
    decl_width = max((len(str(op.declaration)) for op in ops), default=0)
    stream_width = max((len(f"on {op.stream}") for op in ops if op.stream != DEFAULT_STREAM), default=0)
    layout = plan.layout or tuple(range(len(ops)))
    lines: list[str] = []
    for item in layout:
        if isinstance(item, str):
            lines.append(item)
            continue
        op = ops[item]
        parts = [f"{op.name.ljust(name_width)} = {str(op.declaration).ljust(decl_width)}"]
        if stream_width:
            parts.append((f"on {op.stream}" if op.stream != DEFAULT_STREAM else "").ljust(stream_width))
        if op.after:
            parts.append("after " + ", ".join(op.after))
        line = "   ".join(parts).rstrip()
        if op.comment:
            line += f"   # {op.comment}"
        lines.append(line)
    return "\n".join(lines) + "\n"
