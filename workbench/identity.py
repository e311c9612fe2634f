"""A cache key for an object that is compared by identity: a saved record (a dict: unhashable, and hashing it by
value would read a whole profile), a profile, an analysis, a device.

`ByIdentity(obj)` hashes as `id(obj)` and equals only a key of the same object; it holds the object, so while a
cache (`functools.lru_cache`) keeps the key, the object lives and no other object can take its id. A cache keyed
by a bare `id()` has no such hold: an object freed while its entry stays has its id given to the next object
made, which then meets the dead one's cached value.
"""

from __future__ import annotations

from typing import Any


class ByIdentity:
    __slots__ = ("obj",)

    def __init__(self, obj: Any) -> None:
        self.obj = obj

    def __hash__(self) -> int:
        return id(self.obj)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ByIdentity) and other.obj is self.obj

    def __repr__(self) -> str:
        return f"ByIdentity({type(self.obj).__name__} at {id(self.obj):#x})"
