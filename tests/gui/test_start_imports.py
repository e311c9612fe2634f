"""Start-up imports (gui/quick_imports.py): pyqtgraph without creating every Qt class, PySide6's feature check
without reading every module's source through inspect; both the same to whoever uses them, and both left alone
where the library does not look as expected.

Each check runs in a fresh interpreter: what is measured is what a first import does.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import types
from pathlib import Path

import pytest

from workbench.gui import quick_imports

ROOT = Path(__file__).resolve().parents[2]


def run_fresh(script: str) -> dict:
    """Run `script` in a new interpreter (offscreen Qt); it prints one JSON object last, returned here."""
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(script)], capture_output=True, text=True, env=env, timeout=120, cwd=ROOT
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


CREATED_TYPES = """
    import PySide6.QtCore, PySide6.QtGui, PySide6.QtWidgets
    QT = (PySide6.QtCore, PySide6.QtGui, PySide6.QtWidgets)
    def created():  # PySide6 puts a class in the module's dict when it creates it
        return sum(len(vars(m)) for m in QT)
    def offered():
        return sum(len(dir(m)) for m in QT)
"""


def test_the_window_starts_without_creating_every_qt_class(tmp_path: Path) -> None:
    report = run_fresh(
        CREATED_TYPES
        + f"""
    import json
    from PySide6.QtCore import QSettings
    QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, {str(tmp_path)!r})
    from workbench.gui.app import build_window, ensure_application
    import pyqtgraph as pg
    from workbench.gui.quick_imports import is_forwarding_mirror
    app = ensure_application(); window = build_window(); window.show(); window._detect_timer.stop(); app.processEvents()
    mirrors = [is_forwarding_mirror(m) for m in (pg.QtCore, pg.QtGui, pg.QtWidgets)]
    print(json.dumps({{"created": created(), "offered": offered(), "mirrors": mirrors}}))
    window.close(); window.wait_for_workers()
    """
    )
    assert report["mirrors"] == [True, True, True]
    # The window uses ~370 of ~720 classes; the eager copy created all of them.
    assert report["created"] < 0.6 * report["offered"], report


def test_pyqtgraph_works_through_the_forwarding_mirrors() -> None:
    report = run_fresh(
        CREATED_TYPES
        + """
    import json
    dir_functions = [vars(m).get("__dir__") for m in QT]
    import workbench.gui  # prepares the imports
    import pyqtgraph as pg
    from pyqtgraph.Qt import QtCore, QtGui, QtWidgets
    from pyqtgraph.Qt.QtWidgets import QGraphicsView
    def missing(module):
        try:
            module.NoSuchThing
        except AttributeError as error:
            return str(error)
        return "found"
    app = pg.mkQApp()
    plot = pg.PlotWidget(background="w")
    plot.resize(200, 150)
    plot.plot([0, 1, 2, 3], [0, 2, 1, 3], pen=pg.mkPen("r", width=3))
    plot.show(); app.processEvents()
    image = plot.grab().toImage()
    red = sum(
        1 for x in range(0, image.width(), 2) for y in range(0, image.height(), 2)
        if (lambda c: c.red() > 200 and c.green() < 80 and c.blue() < 80)(image.pixelColor(x, y))
    )
    print(json.dumps({
        "red": red,
        "qt": pg.QtCore.Qt is PySide6.QtCore.Qt,
        "view": QGraphicsView is PySide6.QtWidgets.QGraphicsView is QtWidgets.QGraphicsView,
        "pen": isinstance(pg.mkPen("r"), QtGui.QPen),
        "version": pg.Qt.VERSION_INFO,
        "dir_mirror": sorted(set(dir(PySide6.QtWidgets)) - set(dir(QtWidgets))),
        "dir_restored": [vars(m).get("__dir__") for m in QT] == dir_functions and min(len(dir(m)) for m in QT) > 100,
        "own": QtWidgets.QOpenGLWidget.__name__,
        "missing": missing(QtCore),
    }))
    """
    )
    assert report["red"] > 20  # the line was drawn
    assert report["qt"] and report["view"] and report["pen"]
    assert report["version"].startswith("PySide6 ")
    assert report["dir_mirror"] == []  # dir() of a mirror lists everything the copy held
    assert report["dir_restored"]  # PySide6's own dir() is back after the import
    assert report["own"] == "QOpenGLWidget"  # what pyqtgraph set on its mirror stays there
    assert "NoSuchThing" in report["missing"]


def test_a_pyqtgraph_whose_shim_reads_differently_is_imported_as_it_is() -> None:
    """The degraded path: the copy runs (every class created), and pyqtgraph still works."""
    report = run_fresh(
        CREATED_TYPES
        + """
    import importlib.util, json
    # The module on its own (importing it through workbench.gui would prepare at once), told to expect a line
    # that no pyqtgraph has.
    spec = importlib.util.spec_from_file_location("quick_copy", "workbench/gui/quick_imports.py")
    q = importlib.util.module_from_spec(spec); spec.loader.exec_module(q)
    q.EXPECTED_SOURCE = q.EXPECTED_SOURCE + ("a line no pyqtgraph has",)
    ours = q.import_pyqtgraph()
    import pyqtgraph as pg
    import workbench.gui  # finds pyqtgraph imported: leaves it as it is
    print(json.dumps({"created": created(), "offered": offered(), "kind": type(pg.QtCore).__name__,
                      "qt": pg.QtCore.Qt is PySide6.QtCore.Qt, "ours": ours, "again": q.import_pyqtgraph()}))
    """
    )
    assert report["kind"] == "module" and report["qt"] and report["ours"] is False and report["again"] is False
    assert report["created"] >= 0.95 * report["offered"]  # pyqtgraph's own copy ran, as without the workbench


def test_mirrors_pyqtgraph_replaced_get_the_copy_it_would_have_made() -> None:
    """The other degraded path: pyqtgraph (a future one) put mirrors of its own in place; they are filled."""
    report = run_fresh(
        """
    import json, sys, types
    import PySide6.QtCore, PySide6.QtGui, PySide6.QtWidgets
    from workbench.gui.quick_imports import _fill_mirrors
    shim = types.ModuleType("pyqtgraph.Qt")
    for name in ("QtCore", "QtGui", "QtWidgets"):
        setattr(shim, name, types.ModuleType("pyqtgraph.Qt." + name))
    shim.QtWidgets.QGraphicsView = "kept"
    sys.modules["pyqtgraph.Qt"] = shim
    ours = _fill_mirrors([PySide6.QtCore, PySide6.QtGui, PySide6.QtWidgets])
    print(json.dumps({"ours": ours, "qt": shim.QtCore.Qt is PySide6.QtCore.Qt, "kept": shim.QtWidgets.QGraphicsView,
                      "all": all(hasattr(shim.QtGui, n) for n in dir(PySide6.QtGui))}))
    """
    )
    assert report == {"ours": False, "qt": True, "kept": "kept", "all": True}


def test_dir_comes_back_when_the_import_fails() -> None:
    module = types.ModuleType("scratch")
    module.__dir__ = lambda: ["a", "b"]  # type: ignore[method-assign]
    plain = types.ModuleType("plain")
    plain.x = 1  # type: ignore[attr-defined]
    with pytest.raises(RuntimeError):
        with quick_imports._dir_empty([module, plain]):
            assert dir(module) == [] and dir(plain) == []
            raise RuntimeError("import failed")
    assert dir(module) == ["a", "b"]
    assert "x" in dir(plain) and "__dir__" not in vars(plain)


def test_the_feature_check_answers_as_pysides_own_for_every_loaded_module() -> None:
    """PySide6 asks, for each module imported after it, whether its source mentions PySide6 (for `__feature__`);
    where its own check raises (torch.classes answers every attribute it lacks with a RuntimeError), the quick one
    says no rather than raise inside an import."""
    import workbench.gui.app  # noqa: F401  (the window's modules, numpy and pyqtgraph among them)

    try:
        import torch  # noqa: F401  (the [torch] extra, as `make test` installs it: its torch.classes module raises)
    except ImportError:
        pass

    feature = sys.modules["shibokensupport.feature"]
    quick = feature._mod_uses_pyside
    assert getattr(quick, "workbench_quick", False), "the quicker check is not installed"
    original = quick.original
    modules = [module for module in list(sys.modules.values()) if isinstance(module, types.ModuleType)]
    assert len(modules) > 300

    def own_answer(module: types.ModuleType) -> bool:
        try:
            return bool(original(module))
        except Exception:  # PySide6's own check raises for modules that raise on any attribute (torch.classes)
            return False

    differ = [module.__name__ for module in modules if quick(module) != own_answer(module)]
    assert differ == []
    assert quick(sys.modules["workbench.gui.window"]) and not quick(sys.modules["json"]) and not quick(sys)
    assert quick_imports.quicker_feature_check()  # a second call keeps the one installed
    assert feature._mod_uses_pyside is quick


def test_the_feature_check_spares_start_up_the_source_reads() -> None:
    """Where the quick check is in place, importing the window leaves linecache without the modules' sources
    (inspect.getsource, PySide6's own check, fills it with every module imported after PySide6)."""
    report = run_fresh(
        """
    import json, linecache
    import PySide6.QtCore
    import workbench.gui.app
    print(json.dumps({"cached": len(linecache.cache)}))
    """
    )
    assert report["cached"] < 20, report


def test_the_package_imports_without_qt_and_the_view_modules_say_what_is_missing() -> None:
    """Where PySide6 is missing, `import workbench.gui` still works (nothing to prepare) and importing the window
    fails on the missing module itself, as it did before the preparation."""
    report = run_fresh(
        """
    import json, sys
    sys.modules["PySide6"] = None  # as if it were not installed
    import workbench.gui
    try:
        import workbench.gui.app
        error = ""
    except ImportError as exc:
        error = str(exc)
    print(json.dumps({"pyqtgraph": "pyqtgraph" in sys.modules, "error": error}))
    """
    )
    assert report["pyqtgraph"] is False
    assert "PySide6" in report["error"]


# Optional parts, each large: the window imports them when a feature asks (tracing, measuring on a GPU), never
# to show itself.
HEAVY = ("torch", "transformers", "cupy", "pynvml", "scipy", "pandas", "matplotlib", "workbench.tracing")


def test_the_window_shows_a_session_without_importing_the_heavy_optional_parts(tmp_path: Path) -> None:
    from workbench.documents.session import OperationEntry, Session, save

    path = tmp_path / "session.json"
    save(Session(operations=[OperationEntry.automatic("gemm(M=512, N=512, K=512, dtype=bf16)")]), path)
    report = run_fresh(
        f"""
    import json, sys
    from PySide6.QtCore import QSettings
    QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, {str(tmp_path)!r})
    from workbench.gui.app import build_window, ensure_application
    app = ensure_application(); window = build_window({str(path)!r}); window.show(); window._detect_timer.stop()
    app.processEvents()
    loaded = sorted(name for name in {HEAVY!r} if name in sys.modules)
    print(json.dumps({{"operations": len(window.document.operations), "loaded": loaded}}))
    window.close(); window.wait_for_workers()
    """
    )
    assert report == {"operations": 1, "loaded": []}
