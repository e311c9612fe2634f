"""The core never imports Qt: importing every module outside workbench/gui leaves Qt out."""

from __future__ import annotations

import subprocess
import sys

PROBE = """
import importlib, pkgutil, sys
import workbench
names = []
for info in pkgutil.walk_packages(workbench.__path__, "workbench."):
    if info.name == "workbench.gui" or info.name.startswith("workbench.gui.") or info.name == "workbench.__main__":
        continue
    importlib.import_module(info.name)
    names.append(info.name)
print(len(names), "modules")
print("LEAKED", sorted(m for m in sys.modules if m.split(".")[0] in ("PySide6", "pyqtgraph", "shiboken6")))
"""


def test_core_modules_do_not_import_qt() -> None:
    result = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "LEAKED []" in result.stdout
    count = int(result.stdout.split()[0])
    assert count >= 20  # the probe really walked the package
