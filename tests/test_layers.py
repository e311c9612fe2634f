"""The core never imports Qt: importing every module outside workbench/gui leaves Qt out."""

from __future__ import annotations

import subprocess
import sys

PROBE = """
import importlib, pathlib, sys
import workbench
root = pathlib.Path(workbench.__file__).parent
names = []
for path in sorted(root.rglob("*.py")):
    parts = path.relative_to(root.parent).with_suffix("").parts
    if parts[1:2] == ("gui",) or parts[-1] == "__main__":
        continue
    name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
    importlib.import_module(name)
    names.append(name)
print(len(names), "modules")
print("LEAKED", sorted(m for m in sys.modules if m.split(".")[0] in ("PySide6", "pyqtgraph", "shiboken6")))
"""


def test_core_modules_do_not_import_qt() -> None:
    result = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "LEAKED []" in result.stdout
    count = int(result.stdout.split()[0])
    assert count >= 20  # the probe really walked the package
