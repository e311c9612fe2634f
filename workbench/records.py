"""Record classes as plain JSON data and back: one cattrs converter, each record class registered once.

A record class is a dataclass; `record()` tells the converter what is irregular about its dict: the keys
written before its fields (a format and version), fields written under another key, fields written only
when they differ from their default, figures derived from the record written after a field (for readers
without the app; ignored when read), a value put in when a key is missing, and per-field hooks for values
JSON cannot hold as they are (non-finite floats as text) or that need checking beyond their type.
Everything else follows the field's type: text through `str`, whole numbers through `int`, numbers
through `float`, tuples from any array, `X | None` as null or an X, nested records by their own
registration. A mapping of `Any` is copied as it is, its values untouched.

Converting raises Python's own KeyError (a missing key), TypeError or ValueError (a malformed value), never
a cattrs error type: each record's reader turns them into the project's error with its one-line message.
"""

from __future__ import annotations

import dataclasses
from functools import lru_cache
from typing import Any, Callable, Iterable, Mapping, TypeVar

T = TypeVar("T")

# Values that need no conversion of their items: copied or listed in one call, not item by item (timing samples
# are long), and a plain value or null written as it is (cattrs inlines `identity`).
_PLAIN_MAPPINGS = (Mapping[str, Any], dict[str, Any], Mapping[str, float])
_PLAIN_TUPLES = (tuple[str, ...], tuple[float, ...], tuple[int, ...])
_PLAIN_OPTIONALS = (str | None, float | None, int | None, bool | None)

# Registrations made before the converter is first needed: cattrs and the code it writes for each class are
# made then, not when the modules defining the records are imported (the window starts without them).
_PENDING: list[tuple[type, dict[str, Any]]] = []


def _unregistered(value: Any, kind: Any = None) -> Any:
    named = kind if isinstance(kind, type) else type(value)
    raise TypeError(f"{named.__name__} is not a registered record (records.record)")


def _copy_mapping(value: Any, _kind: Any = None) -> dict[Any, Any]:
    return dict(value)


def _list(value: Any) -> list[Any]:
    return list(value)


def _copy_mappings(value: Any) -> list[dict[Any, Any]]:
    return [dict(item) for item in value]


@lru_cache(maxsize=1)
def _converter() -> Any:
    """The one converter, made at first use with every record class registered so far."""
    import cattrs
    from cattrs.fns import identity

    # detailed_validation off: faults surface as the KeyError / TypeError / ValueError each reader already names
    made = cattrs.Converter(detailed_validation=False)
    made.register_structure_hook_func(lambda kind: kind in _PLAIN_MAPPINGS[:2], _copy_mapping)
    made.register_unstructure_hook_func(lambda kind: kind in _PLAIN_MAPPINGS, _copy_mapping)
    made.register_unstructure_hook_func(lambda kind: kind in _PLAIN_TUPLES, _list)
    made.register_unstructure_hook_func(lambda kind: kind == tuple[Mapping[str, Any], ...], _copy_mappings)
    made.register_unstructure_hook_func(lambda kind: kind in _PLAIN_OPTIONALS, identity)
    # a dataclass reaches these only unregistered (a class's own hooks come first): its dict would be cattrs'
    # guess at a format, so it is refused instead
    made.register_unstructure_hook_func(dataclasses.is_dataclass, _unregistered)
    made.register_structure_hook_func(dataclasses.is_dataclass, _unregistered)
    for cls, options in _PENDING:
        _register(made, cls, **options)
    _PENDING.clear()
    return made


def record(
    cls: type,
    *,
    header: Mapping[str, Any] | None = None,
    keys: Mapping[str, str] | None = None,
    omit_default: Iterable[str] = (),
    leave_out: Iterable[str] = (),
    missing: Mapping[str, Any] | None = None,
    dump: Mapping[str, Callable[[Any], Any]] | None = None,
    load: Mapping[str, Callable[[Any], Any]] | None = None,
    after: Mapping[str, Callable[[Any], Mapping[str, Any]]] | None = None,
) -> None:
    """Register a dataclass with the converter.

    `header`: keys and values written first (a record's format and version; ignored when read).
    `keys`: field name → the key it is written under. `omit_default`: fields left out when equal to
    their default. `leave_out`: fields never written nor read (they take their default; a record leaving out a
    field without one is written only, and reading it raises TypeError). `missing`: key →
    value read in its place when the key is absent. `dump` / `load`: field name → a function of the value
    alone, in place of the type's own conversion (a `load` function may raise the record's own error).
    `after`: field name → a function of the whole record giving keys written right after that field's
    (figures derived from the fields; a reader ignores them); the field must always be written.
    """
    names = {item.name for item in dataclasses.fields(cls)}
    for name in (*(keys or {}), *omit_default, *leave_out, *(dump or {}), *(load or {}), *(after or {})):
        if name not in names:
            raise ValueError(f"{cls.__name__} has no field {name!r}")
    for name in after or {}:
        if name in omit_default or name in leave_out:
            raise ValueError(f"{cls.__name__}.{name} is not always written, so nothing can follow it")
    options = dict(header=header, keys=keys, omit_default=tuple(omit_default), leave_out=tuple(leave_out),
                   missing=missing, dump=dump, load=load, after=after)
    if _converter.cache_info().currsize:
        _register(_converter(), cls, **options)
    else:
        _PENDING.append((cls, options))


def _register(
    converter: Any,
    cls: type,
    *,
    header: Mapping[str, Any] | None,
    keys: Mapping[str, str] | None,
    omit_default: Iterable[str],
    leave_out: Iterable[str],
    missing: Mapping[str, Any] | None,
    dump: Mapping[str, Callable[[Any], Any]] | None,
    load: Mapping[str, Callable[[Any], Any]] | None,
    after: Mapping[str, Callable[[Any], Mapping[str, Any]]] | None,
) -> None:
    """What `record` asks for, made by `converter` (cattrs writes each class's two functions here)."""
    from cattrs.gen import make_dict_structure_fn, make_dict_unstructure_fn, override

    keys, dump, load = keys or {}, dump or {}, load or {}
    omitted, left_out = set(omit_default), set(leave_out)
    names = [item.name for item in dataclasses.fields(cls)]
    overrides = {
        name: override(
            rename=keys.get(name),
            omit_if_default=name in omitted,
            omit=name in left_out,
            unstruct_hook=dump.get(name),
            struct_hook=_two_arguments(load[name]) if name in load else None,
        )
        for name in names
    }
    unstructure = make_dict_unstructure_fn(cls, converter, **overrides)
    structure = make_dict_structure_fn(cls, converter, **overrides)
    if any(item.name in left_out and not _has_default(item) for item in dataclasses.fields(cls)):
        structure = _written_only
    if after:
        unstructure = _with_derived(unstructure, {keys.get(name, name): derive for name, derive in after.items()})
    if header:
        fixed = dict(header)
        fields_only = unstructure

        def unstructure(value: Any) -> dict[str, Any]:
            return {**fixed, **fields_only(value)}
    if missing:
        filled = dict(missing)
        wanted = filled.keys()
        built = structure

        def structure(data: Any, kind: Any) -> Any:
            if isinstance(data, Mapping) and not wanted <= data.keys():
                data = {**filled, **data}
            return built(data, kind)

    converter.register_unstructure_hook(cls, unstructure)
    converter.register_structure_hook(cls, structure)


def _with_derived(
    fields_only: Callable[[Any], dict[str, Any]], derived: Mapping[str, Callable[[Any], Mapping[str, Any]]]
) -> Callable[[Any], dict[str, Any]]:
    """`fields_only`'s dict with, right after each key of `derived`, the keys its function gives for the record."""

    def unstructure(value: Any) -> dict[str, Any]:
        written: dict[str, Any] = {}
        for key, item in fields_only(value).items():
            written[key] = item
            derive = derived.get(key)
            if derive is not None:
                written.update(derive(value))
        return written

    return unstructure


def _has_default(item: dataclasses.Field[Any]) -> bool:
    return item.default is not dataclasses.MISSING or item.default_factory is not dataclasses.MISSING


def _written_only(_data: Any, kind: Any) -> Any:
    raise TypeError(f"a {kind.__name__} is written, never read: it leaves out a field it cannot do without")


def _two_arguments(function: Callable[[Any], Any]) -> Callable[[Any, Any], Any]:
    return lambda value, _kind: function(value)


def to_plain(value: Any) -> Any:
    """A registered record (or a list, tuple or dict of them) as plain JSON data."""
    return _converter().unstructure(value)


def from_plain(data: Any, cls: type[T]) -> T:
    """A registered record read from plain data; KeyError, TypeError or ValueError name a fault."""
    return _converter().structure(data, cls)
