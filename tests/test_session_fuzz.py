"""Random corruptions of a valid session file: each one opens, or gives the project's own error.

Whatever a damaged file holds, opening it never crashes with anything but a
SessionError, and a file that does open can be saved and opened again.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from workbench.documents.session import Session, SessionError, dumps, loads, session_from_dict

FIXTURE = Path(__file__).parent / "data" / "session_v1.json"
VALID_BYTES = FIXTURE.read_bytes()
VALID_DATA = json.loads(VALID_BYTES)


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every location in the parsed file (object keys and array indices), the root excluded."""
    found = []
    if isinstance(value, dict):
        for key, item in value.items():
            found.append(prefix + (key,))
            found += _paths(item, prefix + (key,))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found.append(prefix + (index,))
            found += _paths(item, prefix + (index,))
    return found


PATHS = _paths(VALID_DATA)
OBJECT_KEYS = [path for path in PATHS if isinstance(path[-1], str)]

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=20),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=8), children, max_size=3),
    max_leaves=6,
)


def _container(data: Any, path: tuple[Any, ...]) -> Any:
    for step in path[:-1]:
        data = data[step]
    return data


def opens_or_says_why(content: bytes | str) -> None:
    """The property: a SessionError, or a Session that saves and opens to the same session."""
    try:
        session = loads(content)
    except SessionError as exc:
        assert str(exc) and "\n" not in str(exc)
        return
    assert isinstance(session, Session)
    again = loads(dumps(session))
    assert again == session


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cut=st.integers(min_value=0, max_value=len(VALID_BYTES) - 1))
def test_truncated_files(cut: int) -> None:
    opens_or_says_why(VALID_BYTES[:cut])


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    flips=st.lists(
        st.tuples(st.integers(min_value=0, max_value=len(VALID_BYTES) - 1), st.integers(min_value=1, max_value=255)),
        min_size=1,
        max_size=8,
    )
)
def test_flipped_bytes(flips: list[tuple[int, int]]) -> None:
    content = bytearray(VALID_BYTES)
    for position, mask in flips:
        content[position] ^= mask
    opens_or_says_why(bytes(content))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(path=st.sampled_from(PATHS), replacement=json_values)
def test_values_swapped_for_other_types(path: tuple[Any, ...], replacement: Any) -> None:
    data = copy.deepcopy(VALID_DATA)
    _container(data, path)[path[-1]] = replacement
    opens_or_says_why(json.dumps(data))
    try:
        session_from_dict(data)
    except SessionError:
        pass


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(paths=st.lists(st.sampled_from(OBJECT_KEYS), min_size=1, max_size=4))
def test_deleted_keys(paths: list[tuple[Any, ...]]) -> None:
    data = copy.deepcopy(VALID_DATA)
    for path in paths:
        try:
            del _container(data, path)[path[-1]]
        except (KeyError, TypeError, IndexError):
            pass  # an earlier deletion already removed it or its parent
    opens_or_says_why(json.dumps(data))


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(position=st.integers(min_value=0, max_value=len(VALID_BYTES)), junk=st.binary(min_size=1, max_size=16))
def test_inserted_junk(position: int, junk: bytes) -> None:
    opens_or_says_why(VALID_BYTES[:position] + junk + VALID_BYTES[position:])


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(anything=json_values)
def test_any_json_document(anything: Any) -> None:
    opens_or_says_why(json.dumps(anything))
