"""Hypothesis strategies for profile CSVs, and the property every reader must keep (used by test_profilers_hostile.py).

A profile is a file from someone else's machine. Whatever its text, reading
it and everything done with the result (kernels, the session record, the
CLI's table, a comparison with a match) ends in a valid result or in the
project's ProfileError — never another exception. The strategies are
structure-aware: real exports with one cell, one line or one header
replaced, as well as garbage.

Run here directly (`python tests/profile_fuzz.py N`) it fuzzes each surface
with N inputs under a memory limit and prints the counts.
"""

from __future__ import annotations

import csv
import io
import sys
import time
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from workbench.errors import WorkbenchError
from workbench.profilers import MatchRule, Profile, ProfileError, compare_profile, read_profile_text
from workbench.profilers.render import summary_lines

DATA = Path(__file__).parent / "data"
SEEDS = {
    path.name: path.read_text(encoding="utf-8")
    for path in sorted([*DATA.glob("*.csv"), *(DATA / "formats").glob("*.csv")])
}
COUNTS: dict[str, int] = {}

# Cells a hostile or broken export could hold where a number should be.
NUMBERISH = st.one_of(
    st.sampled_from(
        [
            "", "n/a", "-", "0", "-5", "-0.0", "1e400", "-1e400", "nan", "inf", "1.234", "1,234", "1.234,5",
            "1,234.5", "9.437.184", "71,25", "1..2", "1,,2", ",", ".", "1e", "0x10", "１２３", "²", "1_000",
            "9" * 400, "-" + "9" * 400, "0." + "0" * 400 + "1", "1" * 5000, "(65536, 1, 1)", "\x00", "\ufeff1",
            "\udcff", "\r", "\n", '"', "=SUM(1)",
        ]
    ),
    st.integers(min_value=-(10**30), max_value=10**30).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.text(alphabet="0123456789.,-+eE ", max_size=24),
    st.text(max_size=12),
)
UNITS = st.sampled_from(["", "byte", "Mbyte", "Kbyte", "nsecond", "usecond", "ms", "ns", "%", "parsec", "inst", "Ghz", "cycle", "byte/second", "/", "Mbyte/", "µs"])


def _cells(text: str) -> list[tuple[int, list[str]]]:
    """(line index, cells) of each CSV-looking line of a seed."""
    rows = []
    for index, line in enumerate(text.splitlines()):
        if line.startswith("==") or "," not in line:
            continue
        try:
            rows.append((index, next(csv.reader([line]))))
        except (csv.Error, StopIteration):
            continue
    return rows


def _write(cells: list[str]) -> str:
    out = io.StringIO()
    csv.writer(out, quoting=csv.QUOTE_ALL, lineterminator="").writerow(cells)
    return out.getvalue()


@st.composite
def mutated_export(draw: st.DrawFn) -> str:
    """A real export with one cell replaced (a number-like value, a unit), or one line dropped, doubled or cut."""
    name = draw(st.sampled_from(sorted(SEEDS)))
    text = SEEDS[name]
    lines = text.splitlines()
    rows = _cells(text)
    action = draw(st.sampled_from(["cell", "cell", "cell", "unit", "drop", "double", "cut", "header"]))
    if action in ("cell", "unit", "header") and rows:
        index, cells = draw(st.sampled_from(rows))
        if action == "header":
            index, cells = rows[0]
        column = draw(st.integers(min_value=0, max_value=max(len(cells) - 1, 0)))
        replacement = draw(UNITS if action == "unit" else NUMBERISH)
        cells = list(cells)
        if cells:
            cells[column] = replacement
        lines[index] = _write(cells)
    elif action == "drop" and lines:
        del lines[draw(st.integers(min_value=0, max_value=len(lines) - 1))]
    elif action == "double" and lines:
        at = draw(st.integers(min_value=0, max_value=len(lines) - 1))
        lines.insert(at, lines[at])
    elif action == "cut" and text:
        return text[: draw(st.integers(min_value=0, max_value=len(text)))]
    return "\n".join(lines) + "\n"


GARBAGE = st.one_of(
    st.text(max_size=400),
    st.binary(max_size=400).map(lambda data: data.decode("latin-1")),
    st.lists(st.lists(NUMBERISH, min_size=1, max_size=8), max_size=12).map(lambda rows: "\n".join(_write(r) for r in rows)),
    st.tuples(st.sampled_from(sorted(SEEDS)), st.text(max_size=80)).map(lambda pair: SEEDS[pair[0]] + pair[1]),
)
DECIMAL = st.sampled_from([None, ".", ","])


SLOWEST = [0.0]  # seconds of the slowest input (the time budget; hypothesis deadlines flake on a loaded machine)


def check_profile_text(text: str, decimal_mark: str | None, surface: str) -> None:
    """Read, group, record, print and compare: a result or a ProfileError, nothing else."""
    COUNTS[surface] = COUNTS.get(surface, 0) + 1
    started = time.perf_counter()
    try:
        _check(text, decimal_mark)
    finally:
        SLOWEST[0] = max(SLOWEST[0], time.perf_counter() - started)


def _check(text: str, decimal_mark: str | None) -> None:
    try:
        profile = read_profile_text(text, "fuzz.csv", decimal_mark=decimal_mark)
    except ProfileError:
        return
    kernels = profile.kernels()
    assert len(Profile.from_dict(profile.to_dict()).kernels()) == len(kernels)
    for _ in summary_lines(profile):
        pass
    rules = [MatchRule("regex:.", "add(n=2**20, dtype=fp32)")]
    try:
        for comparison in compare_profile(profile, rules, device="h100-sxm"):
            comparison.derivation_text()
            comparison.to_dict()
    except WorkbenchError:
        pass  # a declaration or device refusal is the project's own error too


def fuzzers(examples: int) -> dict[str, object]:
    """The two fuzzers, `examples` inputs each, run by calling them."""
    fuzz = settings(
        max_examples=examples, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
    )

    @fuzz
    @given(mutated_export(), DECIMAL)
    def mutated(text: str, decimal_mark: str | None) -> None:
        check_profile_text(text, decimal_mark, "mutated-export")

    @fuzz
    @given(GARBAGE, DECIMAL)
    def garbage(text: str, decimal_mark: str | None) -> None:
        check_profile_text(text, decimal_mark, "garbage")

    return {"mutated-export": mutated, "garbage": garbage}


def main(examples: int) -> int:
    """Every fuzzer under a 1.5 GiB address-space limit; prints 'surface=count …' (inputs tried)."""
    import resource

    limit = 1536 * 2**20
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    for fuzzer in fuzzers(examples).values():
        fuzzer()  # type: ignore[operator]
    print(" ".join(f"{surface}={count}" for surface, count in sorted(COUNTS.items())), f"slowest={SLOWEST[0]:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(int(sys.argv[1]) if len(sys.argv) > 1 else 200))
