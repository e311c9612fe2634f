"""A package's names imported when first read (PEP 562), so that importing one of its modules does not import all.

`workbench.measure` and `workbench.profilers` offer their main names at the package's top
(`from workbench.measure import measure`); importing each of their modules for that whenever any one is imported
(the window's start imports `workbench.measure.runs`, not the calibration or the kernels) cost about a tenth of a
second of every start. A package lists where each name lives, and `lazy_names` gives the module-level
`__getattr__` and `__dir__` that import a name's module when the name is first read.
"""

from __future__ import annotations

import importlib
from typing import Any, Callable, Mapping


def lazy_names(package: str, homes: Mapping[str, str]) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """`(__getattr__, __dir__)` for `package`, whose names `homes` maps to the module (relative to the package)
    that defines each; a name read once is then an attribute of the package like any other."""
    namespace = importlib.import_module(package).__dict__

    def __getattr__(name: str) -> Any:  # noqa: N807 (the module hook's name)
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{package}.{home}"), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:  # noqa: N807
        return sorted({*namespace, *homes})

    return __getattr__, __dir__
