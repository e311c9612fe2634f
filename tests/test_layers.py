"""The layers: the import contracts in pyproject.toml hold, cover every module, and can fail.

Three checks, each catching what the others cannot:

- `lint-imports` reads every import statement, those inside functions
  included, and checks the order of the core layers and that no core module
  reaches Qt (tests below run it, and `make test` runs it first).
- The contracts name modules; a new module directly under `workbench/` must be
  placed, or the static check would silently skip it (the layers contract is
  exhaustive, and the Qt-free list is compared with the package here).
- Kernels and operations are also imported by name at run time
  (`importlib`), which no static check sees: importing every core module in a
  fresh interpreter must leave PySide6 and pyqtgraph out of `sys.modules`.
"""

from __future__ import annotations

import pkgutil
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import workbench

ROOT = Path(__file__).resolve().parents[1]
FRONT_ENDS = {"gui", "cli", "__main__"}  # above the line in docs/architecture.md


def _contracts() -> dict[str, dict]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]
    return {contract["id"]: contract for contract in config["contracts"]}


def _lint_imports(project: Path) -> subprocess.CompletedProcess[str]:
    """Run import-linter on the package and contracts under `project` (its pyproject.toml)."""
    command = [sys.executable, "-c", "import sys; from importlinter.cli import lint_imports_command; sys.exit(lint_imports_command())", "--no-cache"]
    return subprocess.run(command, cwd=project, capture_output=True, text=True, timeout=300, env={"PYTHONPATH": str(project), "PATH": ""})


def test_import_contracts_hold() -> None:
    result = _lint_imports(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Contracts: 5 kept, 0 broken." in result.stdout


def test_every_core_module_is_named_in_the_qt_free_contract() -> None:
    children = {module.name for module in pkgutil.iter_modules(workbench.__path__)}
    named = {source.removeprefix("workbench.") for source in _contracts()["core-without-qt"]["source_modules"]}
    assert named == children - FRONT_ENDS, "add the new module to core-without-qt in pyproject.toml"


def test_the_contracts_fail_on_a_violation(tmp_path: Path) -> None:
    """A copy of the package with two planted imports: one reaching the GUI, one going up a layer."""
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    shutil.copytree(ROOT / "workbench", tmp_path / "workbench", ignore=shutil.ignore_patterns("__pycache__"))
    units = tmp_path / "workbench" / "model" / "units.py"
    units.write_text(units.read_text(encoding="utf-8") + "\n\ndef _planted():\n    from workbench.gui import app\n")
    analysis = tmp_path / "workbench" / "model" / "analysis" / "model.py"
    analysis.write_text(analysis.read_text(encoding="utf-8") + "\n\ndef _planted():\n    from workbench.documents import session\n")
    result = _lint_imports(tmp_path)
    assert result.returncode != 0
    out = result.stdout
    assert "Contracts: 0 kept, 5 broken." in out, out  # the layer contracts inside the folders break too
    assert "workbench.model is not allowed to import workbench.gui" in out
    assert "workbench.model is not allowed to import workbench.documents" in out
    assert "workbench.model.analysis.model -> workbench.documents.session" in out
    assert "workbench.model.units -> workbench.gui.app" in out


def test_a_new_module_must_be_placed_in_a_layer(tmp_path: Path) -> None:
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    shutil.copytree(ROOT / "workbench", tmp_path / "workbench", ignore=shutil.ignore_patterns("__pycache__"))
    (tmp_path / "workbench" / "unplaced.py").write_text('"""A module no layer names."""\n')
    result = _lint_imports(tmp_path)
    assert result.returncode != 0
    assert "unplaced" in result.stdout + result.stderr


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


def test_core_modules_do_not_import_qt_at_run_time() -> None:
    result = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "LEAKED []" in result.stdout
    count = int(result.stdout.split()[0])
    assert count >= 20  # the probe really walked the package
