"""Change notification without Qt: a named event that calls whoever connected to it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


class Event:
    """One kind of change (`operations_changed`, `selection_changed` …): `emit(*args)` calls every connected callback
    with those arguments, in the order they were connected, at once (as a direct Qt connection does)."""

    __slots__ = ("name", "_callbacks")

    def __init__(self, name: str) -> None:
        self.name = name
        self._callbacks: list[Callable[..., Any]] = []

    def connect(self, callback: Callable[..., Any]) -> None:
        self._callbacks.append(callback)

    def disconnect(self, callback: Callable[..., Any]) -> None:
        """Stop calling `callback` (its first connection); a callback never connected is an error."""
        self._callbacks.remove(callback)

    def emit(self, *args: Any) -> None:
        # A copy: a callback may connect or disconnect while the event is delivered.
        for callback in tuple(self._callbacks):
            callback(*args)

    def __repr__(self) -> str:
        return f"Event({self.name!r}, {len(self._callbacks)} connected)"
