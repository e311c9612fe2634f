"""The app's data lives in the top-level resources/ folder and is found as `workbench.resources`.

One test per way the workbench is installed: this checkout (an editable install or the
source tree), a wheel installed like `pip install .` does, and the PyInstaller bundle
(tests/test_bundle.py, `make bundle-test`).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
import zipfile
from importlib import resources
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
RESOURCES = ROOT / "resources"
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def resource_files() -> list[str]:
    """Every data file under resources/, relative to it (what the wheel and the bundle must carry)."""
    return sorted(
        path.relative_to(RESOURCES).as_posix()
        for path in RESOURCES.rglob("*")
        if path.is_file() and "__pycache__" not in path.parts
    )


def test_the_data_lives_at_the_top_level_and_nowhere_else() -> None:
    for name in ("devices.toml", "units.txt", "session.schema.json", "icons/perf-workbench.svg",
                 "examples/vector-add.json", "examples/gemm-4096-fp16.json"):
        assert (RESOURCES / name).is_file(), name
    # A stray workbench/resources folder (even one holding only __pycache__) would be
    # imported as a namespace package in front of the mapped one.
    assert not (ROOT / "workbench" / "resources").exists()


def test_this_checkout_finds_the_resources_through_importlib() -> None:
    found = resources.files("workbench.resources")
    assert Path(str(found)).resolve() == RESOURCES.resolve()
    assert found.joinpath("devices.toml").read_text(encoding="utf-8").startswith("#")
    assert found.joinpath("examples", "vector-add.json").is_file()


def test_every_package_and_resource_folder_is_listed_for_setuptools() -> None:
    """The package list is explicit (the mapping needs it); a new package must not be left out of the wheel."""
    listed = set(PYPROJECT["tool"]["setuptools"]["packages"])
    on_disk = {".".join(path.parent.relative_to(ROOT).parts) for path in (ROOT / "workbench").rglob("__init__.py")}
    on_disk |= {"workbench.resources"} | {
        "workbench.resources." + ".".join(path.relative_to(RESOURCES).parts)
        for path in RESOURCES.rglob("*") if path.is_dir() and path.name != "__pycache__"
    }
    assert listed == on_disk
    assert PYPROJECT["tool"]["setuptools"]["package-dir"] == {"workbench.resources": "resources"}


@pytest.fixture(scope="module")
def installed_wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The project built as a wheel and installed (without its dependencies) into a folder of its own."""
    folder = tmp_path_factory.mktemp("wheel")
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q"]
    subprocess.run([*pip, "wheel", "--no-deps", "-w", str(folder / "dist"), str(ROOT)],
                   check=True, capture_output=True, timeout=600, cwd=folder)
    (wheel,) = (folder / "dist").glob("perf_workbench-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
    missing = [name for name in resource_files() if f"workbench/resources/{name}" not in names]
    assert not missing, f"the wheel lacks {missing}"
    subprocess.run([*pip, "install", "--no-deps", "--target", str(folder / "site"), str(wheel)],
                   check=True, capture_output=True, timeout=600, cwd=folder)
    return folder / "site"


def run_installed(site: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Python with the installed wheel first on the path, run outside the checkout."""
    env = dict(os.environ, PYTHONPATH=str(site), QT_QPA_PLATFORM="offscreen")
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, env=env, cwd=site.parent, timeout=120)


def test_an_installed_wheel_finds_its_resources(installed_wheel: Path) -> None:
    script = (
        "from importlib import resources; import workbench\n"
        "from workbench.model.devices.catalogue import catalogue\n"
        "from workbench.documents.examples import list_examples\n"
        "from workbench.model.units import quantity\n"
        "print(workbench.__file__)\n"
        "print(resources.files('workbench.resources'))\n"
        "print(len(catalogue()), len(list_examples()), quantity(1, 'GB').to('bit'))\n"
    )
    result = run_installed(installed_wheel, "-c", script)
    assert result.returncode == 0, result.stderr
    package, data, figures = result.stdout.splitlines()
    assert Path(package).is_relative_to(installed_wheel)
    assert Path(data) == installed_wheel / "workbench" / "resources"
    devices, examples, bits = figures.split(" ", 2)
    assert int(devices) > 5 and int(examples) == len(list((RESOURCES / "examples").glob("*.json")))
    assert bits.startswith("8000000000")


def test_an_installed_wheel_runs_the_window_and_lists_devices(installed_wheel: Path) -> None:
    shown = run_installed(installed_wheel, "-m", "workbench", "gui", "--example", "vector-add", "--check")
    assert shown.returncode == 0, shown.stderr
    assert "window shown: True" in shown.stdout
    devices = run_installed(installed_wheel, "-m", "workbench", "devices")
    assert devices.returncode == 0, devices.stderr
    assert "H100" in devices.stdout
