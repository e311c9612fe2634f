"""Two costs of importing the GUI that buy the window nothing, cut before the first view module is imported.

Imported (and `prepare()` called) by `workbench/gui/__init__.py`, so before any module under it imports
pyqtgraph. Each cut checks that the library still looks as it was read when this was written and otherwise
leaves it alone: the import is then as slow as it was, never different.

1. **PySide6's feature check reads the source of every module imported after it.** Importing PySide6
   replaces `__import__` with one that, for each module imported later, asks `_mod_uses_pyside` whether the
   module's source mentions "PySide6" (so that `from __feature__ import snake_case` can be switched per
   module). It asks `inspect.getsource`, which decodes the whole file line by line through `linecache`
   (and keeps it there): some 0.4 ms a module, over the ~430 modules the window imports after PySide6
   (numpy, pyqtgraph, the workbench) about 0.15 s of a start. `quicker_feature_check` gives the same
   answer for a module loaded from a `.py` file by searching the file's bytes, and asks the original for
   everything else (extension modules, modules without a file, a file it cannot read).

2. **pyqtgraph's import creates every Qt class.** `pyqtgraph/Qt/__init__.py` copies each name in `dir()`
   of PySide6's QtCore, QtGui and QtWidgets into its own `pyqtgraph.Qt.QtCore` (…) packages, and the
   `getattr` of each name makes PySide6 create the class it would otherwise create when first used (with
   its Python enums): about 0.3 s for the ~720 names, of which the window's start needs about half. `import_pyqtgraph`
   puts forwarding modules in their place (`forwarding_mirror`: a name is looked up in the PySide6
   module when first asked for, then kept), and while pyqtgraph imports, `dir()` of the three PySide6
   modules is empty, so its copy loop copies nothing; the forwarding modules then answer what the copy
   would have held.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import types
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

# The three modules pyqtgraph mirrors (pyqtgraph name, PySide6 name).
MIRRORED = (
    ("pyqtgraph.Qt.QtCore", "PySide6.QtCore"),
    ("pyqtgraph.Qt.QtGui", "PySide6.QtGui"),
    ("pyqtgraph.Qt.QtWidgets", "PySide6.QtWidgets"),
)
# What `import_pyqtgraph` relies on, as it reads in pyqtgraph/Qt/__init__.py: the mirrors are filled by
# copying dir() of the PySide6 modules, and imported as the submodules it then fills.
EXPECTED_SOURCE = (
    "def _copy_attrs(src, dst):\n    for o in dir(src):\n",
    "from . import QtCore, QtGui, QtWidgets",
    "_copy_attrs(PySide6.QtCore, QtCore)",
    "_copy_attrs(PySide6.QtGui, QtGui)",
    "_copy_attrs(PySide6.QtWidgets, QtWidgets)",
)
# Attributes a forwarding module never takes from the PySide6 module: those that say what the mirror itself
# is (pyqtgraph's mirror packages have their own, and the copy did not overwrite them).
OWN_ATTRIBUTES = frozenset({"__file__", "__path__", "__cached__", "__spec__", "__loader__", "__builtins__", "__package__"})


def prepare() -> None:
    """Both cuts, where they apply (see the module's docstring); a no-op once pyqtgraph is imported.

    Without PySide6 or pyqtgraph nothing happens here: the import that needs them says what is missing, as before.
    """
    try:
        quicker_feature_check()
        import_pyqtgraph()
    except ImportError:
        pass


# ---------------------------------------------------------------------------------------------- 1. feature check


def quicker_feature_check() -> bool:
    """Answer PySide6's per-module "does it use PySide6?" from the file's bytes; True if installed (or already)."""
    import PySide6.QtCore  # noqa: F401  (loads shibokensupport.feature, the module whose check this replaces)

    feature = sys.modules.get("shibokensupport.feature")
    original = getattr(feature, "_mod_uses_pyside", None)
    if feature is None or not callable(original):
        return False
    if getattr(original, "workbench_quick", False):
        return True
    feature._mod_uses_pyside = _quick_check(original)  # type: ignore[union-attr]
    return True


def _quick_check(original: Callable[[types.ModuleType], bool]) -> Callable[[types.ModuleType], bool]:
    def asked(module: types.ModuleType) -> bool:
        # PySide6's own check reads the source with inspect, which some modules answer by raising (torch.classes
        # raises RuntimeError for any attribute it lacks): a module whose source cannot be read does not use PySide6.
        try:
            return bool(original(module))
        except Exception:
            return False

    def mod_uses_pyside(module: types.ModuleType) -> bool:
        try:
            path = getattr(module, "__file__", None)
        except Exception:
            return False
        if not isinstance(path, str) or not path.endswith(".py"):
            return asked(module)
        try:
            with open(path, "rb") as source:
                return b"PySide6" in source.read()
        except OSError:
            return asked(module)

    mod_uses_pyside.workbench_quick = True  # type: ignore[attr-defined]
    mod_uses_pyside.original = original  # type: ignore[attr-defined]
    return mod_uses_pyside


# ---------------------------------------------------------------------------------------------- 2. pyqtgraph


FORWARDS_TO = "__workbench_forwards_to__"  # a forwarding mirror's PySide6 module, kept in the mirror's dict


def forwarding_mirror(name: str, source: types.ModuleType) -> types.ModuleType:
    """A plain module standing for pyqtgraph's mirror of `source`: a name is looked up there when first asked for,
    then kept in the mirror (PEP 562: the module's own `__getattr__` runs only for a name it does not hold yet,
    so a name it holds costs what it costs in any module).

    What pyqtgraph (or anyone) sets on the mirror stays the mirror's own, as it did on the copy; `dir()` lists
    the PySide6 module's names and the mirror's own, as the copy's did.
    """
    mirror = types.ModuleType(name, f"pyqtgraph's mirror of {source.__name__}; names are looked up there when first used.")
    mirror.__package__ = name.rpartition(".")[0]

    def __getattr__(attribute: str) -> object:  # noqa: N807
        if attribute in OWN_ATTRIBUTES:
            raise AttributeError(f"module {name!r} has no attribute {attribute!r}")
        value = getattr(source, attribute)  # AttributeError from PySide6 if it has no such name
        setattr(mirror, attribute, value)
        return value

    def __dir__() -> list[str]:  # noqa: N807
        own = (key for key in vars(mirror) if key not in (FORWARDS_TO, "__getattr__", "__dir__"))
        return sorted(set(dir(source)).union(own))

    namespace = vars(mirror)
    namespace["__getattr__"] = __getattr__
    namespace["__dir__"] = __dir__
    namespace[FORWARDS_TO] = source
    return mirror


def is_forwarding_mirror(module: object) -> bool:
    return isinstance(module, types.ModuleType) and FORWARDS_TO in vars(module)


def import_pyqtgraph() -> bool:
    """Import pyqtgraph with forwarding mirrors of QtCore, QtGui and QtWidgets; True if they are in place.

    Does nothing (False) where pyqtgraph is imported already, cannot be found, or its Qt shim does not
    read as expected (EXPECTED_SOURCE). If pyqtgraph ends up with mirrors other than ours, they get the
    copy it would have made (`_fill_mirrors`), so a surprise costs the time saved, not a missing name.
    """
    if "pyqtgraph" in sys.modules:
        return all(is_forwarding_mirror(sys.modules.get(name)) for name, _ in MIRRORED)
    if not _shim_reads_as_expected():
        return False
    sources = [importlib.import_module(qt_name) for _, qt_name in MIRRORED]
    mirrors = [forwarding_mirror(name, source) for (name, _), source in zip(MIRRORED, sources)]
    placed: list[str] = []
    try:
        for mirror in mirrors:
            sys.modules[mirror.__name__] = mirror
            placed.append(mirror.__name__)
        with _dir_empty(sources):
            importlib.import_module("pyqtgraph")
    except BaseException:
        for name in placed:  # a failed import leaves nothing of ours behind
            if is_forwarding_mirror(sys.modules.get(name)):
                del sys.modules[name]
        raise
    return _fill_mirrors(sources)


def _shim_reads_as_expected() -> bool:
    spec = importlib.util.find_spec("pyqtgraph")
    if spec is None or not spec.submodule_search_locations:
        return False
    shim = Path(next(iter(spec.submodule_search_locations))) / "Qt" / "__init__.py"
    try:
        text = shim.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return False
    return all(piece in text for piece in EXPECTED_SOURCE)


@contextmanager
def _dir_empty(modules: list[types.ModuleType]) -> Iterator[None]:
    """`dir()` of each module lists nothing until the block ends (PySide6's modules keep `__dir__` in their dict)."""
    saved: list[tuple[types.ModuleType, bool, object]] = []
    try:
        for module in modules:
            namespace = vars(module)
            saved.append((module, "__dir__" in namespace, namespace.get("__dir__")))
            module.__dir__ = list  # type: ignore[method-assign]  # called with no argument: []
        yield
    finally:
        for module, had, previous in saved:
            if had:
                module.__dir__ = previous  # type: ignore[method-assign]
            else:
                del module.__dir__


def _fill_mirrors(sources: list[types.ModuleType]) -> bool:
    """True if pyqtgraph uses our mirrors; otherwise copy into the ones it has, as its own import would have."""
    pyqtgraph_qt = sys.modules.get("pyqtgraph.Qt")
    ours = True
    for (name, _), source in zip(MIRRORED, sources):
        mirror = getattr(pyqtgraph_qt, name.rpartition(".")[2], None)
        if is_forwarding_mirror(mirror) and sys.modules.get(name) is mirror:
            continue
        ours = False
        if mirror is not None:
            for attribute in dir(source):
                if not hasattr(mirror, attribute):
                    setattr(mirror, attribute, getattr(source, attribute))
    return ours
