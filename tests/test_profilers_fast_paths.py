"""The nsys import's fast paths give what the row-at-a-time code gives: records, errors, JSON and text.

A million-kernel summary is read in batches of whole columns, written as
JSON from those columns and printed as a table from them. Each fast path
has a plain one beside it (rows one by one through `_Columns.times`, each
record's `to_dict()` through the json module, `kernel_row` per kernel);
these tests hold them equal on valid files, on files mutated cell by cell
(the rows before a fault still read, the fault reported on its line with
the same words) and on names of every bracket shape.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.profilers import ProfileError, read_profile, read_profile_text
from workbench.profilers import render as render_module
from workbench.profilers.kernels import kernels_json, times_kernel_dict
from workbench.profilers.names import kernel_base_name, kernel_base_names
from workbench.profilers.nsys import WHAT, _Columns, _kernel_table, _open
from workbench.profilers.numbers import FormatSniffer, NumberFormat, plain_column
from workbench.profilers.records import KernelTimesTable, SharedTexts
from workbench.profilers.render import format_rows, kernel_rows, profile_summary
from workbench.profilers.lines import text_source

HEADER = '"Time (%)","Total Time (ns)","Instances","Avg (ns)","Med (ns)","Min (ns)","Max (ns)","StdDev (ns)","Name"'


def reference_base_name(name: str) -> str:
    """kernel_base_name before its fast path, kept verbatim."""

    def closing_span(text: str, end: int, opener: str, closer: str) -> int | None:
        depth = 0
        for index in range(end, -1, -1):
            char = text[index]
            if char == closer:
                depth += 1
            elif char == opener:
                depth -= 1
                if depth == 0:
                    return index
        return None

    text = name.strip()
    if text.endswith(")"):
        start = closing_span(text, len(text) - 1, "(", ")")
        if start is not None and start > 0:
            text = text[:start].rstrip()
    if text.endswith(">"):
        start = closing_span(text, len(text) - 1, "<", ">")
        if start is not None and start > 0:
            text = text[:start].rstrip()
    depth = 0
    cut = 0
    for index, char in enumerate(text):
        if char in "<(":
            depth += 1
        elif char in ">)":
            depth -= 1
        elif char == " " and depth == 0:
            cut = index + 1
    return text[cut:] or name.strip()


@settings(max_examples=1500, deadline=None)
@given(st.text(alphabet="<>() ab:,*\t", max_size=30))
def test_kernel_base_name_as_before(name: str) -> None:
    assert kernel_base_name(name) == reference_base_name(name)


NAME_PARTS = st.sampled_from(["void", " ", "a", "b_1", "::", "<", ">", "(", ")", ",", "*", "float", "\t", "~", "\n", "\x00", "é"])


@settings(max_examples=1000, deadline=None)
@given(st.lists(st.lists(NAME_PARTS, max_size=12).map("".join), max_size=8))
def test_kernel_base_names_of_a_column_as_one_by_one(names: list[str]) -> None:
    assert kernel_base_names(names) == [reference_base_name(name) for name in names]
    common = [f"void ns::kernel_{index}<float, {index}>(float *, int)" for index in range(50)]
    assert kernel_base_names(common + names) == [reference_base_name(name) for name in common + names]


def row(index: int) -> list[str]:
    base = 1_000 + (index * 7919) % 1_000_003
    count = 1 + index % 50
    return ["0.0", f"{base * count:,}", str(count), f"{base:,}.5", f"{base - 1:,}.0", f"{base - 3:,}", f"{base + 5:,}", "1.5",
            f"void kernel_{index}<float, {index % 8}>(float *, int)"]


def csv_text(rows: list[list[str]], preamble: str = "", after: str = "") -> str:
    body = "\n".join(",".join(f'"{cell}"' for cell in cells) for cells in rows)
    return f"{preamble}{HEADER}\n{body}\n{after}"


def one_row_at_a_time(text: str) -> KernelTimesTable:
    """The reader's second pass the plain way: every row through _Columns.times, no batches."""
    sniffer = FormatSniffer()
    opened = _open(text_source(text), "t.csv")
    table = _kernel_table(opened, "t.csv", [])
    assert table is not None
    _Columns(table, sniffer.decide("t.csv", ".")).sniff(sniffer)
    number_format = sniffer.decide("t.csv", ".")
    opened = _open(text_source(text), "t.csv")
    table = _kernel_table(opened, "t.csv", [])
    assert table is not None
    columns = _Columns(table, number_format)
    return KernelTimesTable(columns.times(r) for r in table.rows)


def outcome(read: "object") -> "tuple[str, object]":
    try:
        return "ok", read()  # type: ignore[operator]
    except ProfileError as exc:
        return "error", str(exc)


MUTATIONS = ["", "-5", "n/a", "1,00", " 7", "1e400", "x", "1.5.5", '"', "1" * 400, "12,345.5", "\x00", "+3", "0"]


@settings(max_examples=150, deadline=None)
@given(
    st.integers(min_value=1, max_value=1_300),
    st.lists(st.tuples(st.integers(min_value=0, max_value=1_299), st.integers(min_value=0, max_value=8), st.sampled_from(MUTATIONS)), max_size=3),
    st.sampled_from(["", "\n", "\n\n", "\n==PROF== done\n", "\n** CUDA API Summary (cuda_api_sum):\n\"a\",\"b\"\n\"1\",\"2\"\n"]),
)
def test_batched_reading_equals_row_by_row(count: int, mutations: list[tuple[int, int, str]], after: str) -> None:
    rows = [row(index) for index in range(count)]
    for at, column, text in mutations:
        if at < count:
            rows[at][column] = text
    text = csv_text(rows, "Generating SQLite file x.sqlite\n\n", after)
    fast = outcome(lambda: read_profile_text(text, "t.csv", decimal_mark=".").summaries)
    plain = outcome(lambda: one_row_at_a_time(text))
    assert fast[0] == plain[0]
    if fast[0] == "ok":
        assert fast[1] == plain[1]
    else:
        assert fast[1] == plain[1]


def test_a_record_over_two_lines_and_chatter_inside_the_table_read_as_before() -> None:
    rows = [row(index) for index in range(1_500)]
    rows[700][8] = "void split\nname(int)"
    text = csv_text(rows).replace('"0.0","', "==PROF== chatter\n\"0.0\",\"", 1)
    assert read_profile_text(text, "t.csv").summaries == one_row_at_a_time(text)
    names = [times.kernel_name for times in read_profile_text(text, "t.csv").summaries]
    assert len(names) == 1_500 and names[700].startswith("void split")  # (the line end inside is not kept, as ever)


def test_json_of_a_table_is_the_json_of_each_record() -> None:
    rows = [row(index) for index in range(900)]
    rows[5][4] = ""  # no median: the mean is the duration
    rows[6][5] = "n/a"
    rows[7][0] = ""
    text = csv_text(rows)
    profile = read_profile_text(text, "t.csv")
    assert isinstance(profile.summaries, KernelTimesTable)
    encode = json.JSONEncoder(ensure_ascii=False).encode
    summaries = [text for batch in profile.summaries.json_batches(size=256) for text in batch]
    assert summaries == [encode(times.to_dict()) for times in profile.summaries]
    kernels = kernels_json(profile.tool, profile.launches, profile.summaries, "mac")
    fast = [text for batch in kernels.encoded_batches() for text in batch]  # type: ignore[union-attr]
    assert fast == [encode(times_kernel_dict(index, times)) for index, times in enumerate(profile.summaries)]
    assert list(kernels) == [json.loads(text) for text in fast]
    # Each entry refers to its row and carries the figures the Kernel made of that row derives.
    for index, (entry, kernel) in enumerate(zip(kernels, profile.kernels())):
        assert entry == {"summary": index, "base_name": kernel.base_name,
                         "duration_s": None if kernel.duration is None else kernel.duration.value}
        assert profile.summaries[index].kernel_name == kernel.name
    assert list(kernels_json(profile.tool, (), tuple(profile.summaries), "mac")) == list(kernels)  # a record's rows as a tuple


def test_a_long_table_prints_as_a_short_one_does(monkeypatch: pytest.MonkeyPatch) -> None:
    rows = [row(index) for index in range(300)]
    rows[3][4] = ""
    rows[4][5] = "n/a"
    rows[9][8] = "void name_with_a_newline\nin_it(int)"
    profile = read_profile_text(csv_text(rows), "t.csv")
    held = profile_summary(profile)
    monkeypatch.setattr(render_module, "_HELD_ROWS", 10)
    monkeypatch.setattr(render_module, "_BATCH", 64)
    assert profile_summary(profile) == held
    assert held.splitlines()[2:303] == format_rows(kernel_rows(profile.kernels())).splitlines()


# ---------------------------------------------------------------- whole columns read by NumPy (plain_column)

_DIGITS = st.text("0123456789", min_size=0, max_size=26)


@st.composite
def number_cells(draw: st.DrawFn, decimal: str) -> str:
    """Cells near the plain form and just outside it: grouped or not, marks, leading zeros, long digit runs."""
    grouping = "," if decimal == "." else "."
    integer = draw(_DIGITS)
    if integer and draw(st.booleans()):
        stripped = integer.lstrip("0") or "0"
        groups = [stripped[max(0, end - 3):end] for end in range(len(stripped), 0, -3)][::-1]
        integer = grouping.join(groups) if draw(st.booleans()) else integer
        if draw(st.integers(0, 9)) == 0:  # a mark out of place
            at = draw(st.integers(0, len(integer)))
            integer = integer[:at] + grouping + integer[at:]
    cell = integer
    if draw(st.booleans()):
        cell += decimal + draw(_DIGITS)
    return draw(st.sampled_from([cell, cell, cell, cell + "e5", " " + cell, "-" + cell, cell + decimal + "1"]))


@pytest.mark.parametrize("decimal", [".", ","])
@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_a_column_read_whole_gives_each_cells_own_reading_or_none(decimal: str, data: st.DataObject) -> None:
    """plain_column's numbers are exactly NumberFormat.parse's (float; int for whole); None whenever
    any cell is not of its narrow plain form, never a different number."""
    number_format = NumberFormat(decimal)
    cells = data.draw(st.lists(number_cells(decimal), min_size=1, max_size=12))
    whole = data.draw(st.booleans())
    read = plain_column("\n".join(cells), decimal, whole=whole)
    if read is None:
        return
    expected = [number_format.parse(cell) for cell in cells]  # raises if a cell were not a number at all
    if whole:
        assert all(isinstance(value, int) for value in expected)
        assert read.tolist() == expected
    else:
        assert read.tolist() == [float(value) for value in expected]
        assert all(value < 2**53 for value in expected)


@pytest.mark.parametrize(
    ("cells", "decimal", "whole", "expected"),
    [
        (["1,000", "1,000.0", "0.0", ".5", "7.", "0012"], ".", False, [1000.0, 1000.0, 0.0, 0.5, 7.0, 12.0]),
        (["1.234.567,891", "3,5"], ",", False, [1234567.891, 3.5]),
        (["1,234,567,890,123,456", "12"], ".", True, [1234567890123456, 12]),
        (["0,123"], ".", False, None),  # no grouping writes a leading zero
        (["1,0000"], ".", False, None),
        (["12,34"], ".", False, None),
        (["1.5"], ".", True, None),  # a count has no fraction
        (["1e5"], ".", False, None),  # exponents: the pattern path
        (["9007199254740993"], ".", False, None),  # above 2**53: not exactly a float's reading here
        ([""], ".", False, None),
        (["."], ".", False, None),
        (["1.2.3"], ".", False, None),
        (["٣"], ".", False, None),  # other digits than ASCII
    ],
)
def test_plain_column_cases(cells: list[str], decimal: str, whole: bool, expected: list[float] | None) -> None:
    read = plain_column("\n".join(cells), decimal, whole=whole)
    assert (None if read is None else read.tolist()) == expected


def test_a_file_reads_as_its_text_does_whatever_its_line_ends(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Files are read many lines at once (lines._FileLines); CRLF, CR, a missing last newline and a BOM
    give what reading the text gives."""
    rows = [row(index) for index in range(9_000)]
    text = csv_text(rows, "Generating SQLite file x.sqlite\n\n")
    expected = read_profile_text(text, "t.csv").summaries
    for end, last, bom in (("\n", "\n", ""), ("\r\n", "", "\ufeff"), ("\r", "\r", ""), ("\n", "", "")):
        path = tmp_path / "t.csv"
        path.write_bytes((bom + text.rstrip("\n").replace("\n", end) + last).encode("utf-8"))
        assert read_profile(path).summaries == expected


def test_the_json_of_summaries_and_kernels_sharing_float_texts_is_each_records_json() -> None:
    """The CLI's document writes an nsys table's medians' texts once for the record and the kernels'
    durations (records.SharedTexts); each item is still exactly its own dict's JSON, medians missing or not."""
    rows = [row(index) for index in range(9_500)]
    rows[5][4] = ""  # no median in the first block: the durations are not the medians there
    rows[6][5] = "n/a"
    rows[9_000][0] = ""
    for index in range(4_200, 4_300):  # a block's percentages all one value (written once)
        rows[index][0] = "0.5"
    profile = read_profile_text(csv_text(rows), "t.csv")
    encode = json.JSONEncoder(ensure_ascii=False).encode
    shared = SharedTexts()
    record = profile.to_dict(lazy=True, shared=shared)["summaries"]
    summaries = [text for block in record.encoded_blocks() for text in block.split("\n")]
    kernels = kernels_json(profile.tool, profile.launches, profile.summaries, "fma2", shared)
    written = [text for block in kernels.encoded_blocks() for text in block.split("\n")]  # type: ignore[union-attr]
    assert summaries == [encode(times.to_dict()) for times in profile.summaries]
    assert written == [encode(times_kernel_dict(index, times)) for index, times in enumerate(profile.summaries)]


# ---------------------------------------------------------------- rows as nsys writes them, split from their bytes (quoted_block)

_CELL_TEXT = st.text(st.sampled_from(list('0123456789.,, ab"é\x00\r\t=*')), max_size=8)


@st.composite
def row_lines(draw: st.DrawFn, width: int) -> str:
    """A line as nsys writes a row (`"c1","c2",…`), or one broken a little: a cell too many or too few,
    a quote or a newline-free oddity inside a cell, the quotes left off, text around them."""
    cells = draw(st.lists(_CELL_TEXT, min_size=width, max_size=width))
    line = '"' + '","'.join(cells) + '"'
    return draw(
        st.sampled_from(
            [line, line, line, line, line + ',"x"', line[: line.rfind(',"')] if width > 1 else line, ",".join(cells),
             " " + line, line + " ", line.replace('","', '",  "', 1), line.replace('","', '"",""', 1)]
        )
    )


@settings(max_examples=400, deadline=None)
@given(data=st.data())
def test_rows_split_from_their_bytes_are_what_csv_reads(data: st.DataObject) -> None:
    """quoted_block takes lines only when each is a whole record of `width` quoted cells, none holding a
    quote, in ASCII without NUL; its cells are then exactly csv.reader's, and each column's numbers
    read from its bytes (plain_cells) are those of the column's text (plain_column)."""
    import csv

    from workbench.profilers.numbers import plain_cells
    from workbench.profilers.table import quoted_block

    width = data.draw(st.integers(1, 4))
    lines = data.draw(st.lists(row_lines(width), min_size=1, max_size=6))
    block = quoted_block(lines, width)
    well_formed = width > 1 and all(
        line.startswith('"') and line.endswith('"') and len(line) > 1
        and all('"' not in cell for cell in line[1:-1].split('","')) and line[1:-1].count('","') == width - 1
        and line.isascii() and "\x00" not in line
        for line in lines
    )
    assert (block is not None) == well_formed
    if block is None:
        return
    records = list(csv.reader(lines, strict=True))
    assert len(records) == len(lines) and all(len(record) == width for record in records)
    for index in range(width):
        texts = block.texts(index)
        assert texts == [record[index] for record in records]
        for decimal, whole in ((".", False), (",", False), (".", True)):
            cells = block.cells(index, 32)
            from_bytes = None if cells is None else plain_cells(*cells, decimal, whole=whole)
            from_text = plain_column("\n".join(texts), decimal, whole=whole)
            assert (None if from_bytes is None else from_bytes.tolist()) == (None if from_text is None else from_text.tolist())


def test_rows_split_from_their_bytes_cases() -> None:
    from workbench.profilers.table import quoted_block

    block = quoted_block(['"1,000.5","a b"', '"2","=x,y"'], 2)
    assert block is not None and block.texts(0) == ["1,000.5", "2"] and block.texts(1) == ["a b", "=x,y"]
    assert quoted_block(['"1","é"'], 2) is None  # not ASCII: the columns come from the text instead
    assert quoted_block(['"1","a""b"'], 2) is None  # a quote inside a cell
    assert quoted_block(['"1","a"', ""], 2) is None  # a blank line
    assert quoted_block(['"1",  "a"'], 2) is None
    assert quoted_block(['"1","\x00"'], 2) is None
    assert quoted_block(['"1"'], 1) is None  # one cell a row: left to the csv module


_FIGURE_POOL = st.sampled_from([None, 0.0, -0.0, 1e-06, 2.5e-07, 0.1 + 0.2, 1.7838e-05, 5e-324])


@settings(max_examples=150, deadline=None)
@given(rows=st.lists(st.tuples(*[_FIGURE_POOL] * 7), min_size=1, max_size=40))
def test_figures_equal_to_an_earlier_column_are_written_as_their_own(rows: list[tuple[float | None, ...]]) -> None:
    """A row's figures often repeat (a kernel launched once: mean, median, minimum and maximum alike); a
    column mostly equal to one before it reuses that one's texts, and each row is still exactly its
    record's JSON: -0.0 beside 0.0, no value beside a value."""
    from workbench.profilers.records import KernelTimes

    records = [KernelTimes(f"k{index}", 1, float(total or 0.0), *rest, index + 5) for index, (total, *rest) in enumerate(rows)]
    table = KernelTimesTable(records)
    encode = json.JSONEncoder(ensure_ascii=False).encode
    written = [text for block in table.json_blocks(size=16) for text in block.split("\n")]
    assert written == [encode(times.to_dict()) for times in table]


@settings(max_examples=200, deadline=None)
@given(
    text=st.lists(st.sampled_from(list("ab,\"\n\ré") + ["\r\n"]), max_size=40).map("".join),
    calls=st.lists(st.integers(-1, 6), max_size=20),
    block=st.integers(1, 9),
)
def test_file_lines_read_in_blocks_are_the_files_lines(tmp_path_factory: pytest.TempPathFactory, text: str, calls: list[int],
                                                       block: int) -> None:
    """_FileLines hands out the file's lines (universal newlines, a BOM dropped) in order, one at a time (-1)
    or many at once without their ends, whatever the mix and however the blocks it reads cut the text."""
    import io

    from workbench.profilers import lines as lines_module

    path = tmp_path_factory.mktemp("lines") / "t.csv"
    path.write_bytes(("\ufeff" + text).encode("utf-8"))
    expected = [line.rstrip("\n") for line in io.StringIO(text, newline=None)]
    original = lines_module._READ_CHARS
    lines_module._READ_CHARS = block
    try:
        lines = lines_module.file_source(path, 10**6, "t", "t.csv")()
        got: list[str] = []
        for count in calls + [-1] * (len(expected) + 1):
            if count < 0:
                line = next(lines, None)
                if line is not None:
                    assert line.endswith("\n") or len(got) == len(expected) - 1
                    got.append(line.rstrip("\n"))
            else:
                taken = lines.lines_without_ends(count)
                assert len(taken) == min(count, len(expected) - len(got))
                got.extend(taken)
        assert got == expected
    finally:
        lines_module._READ_CHARS = original
