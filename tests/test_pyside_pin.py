"""The PySide6 pin keeps out the releases that abort the app, and admits the one installed.

PySide6-Essentials 6.12.0 drops one reference to `True` on each emission of a
Python signal into a Python slot, and one to `None` on each call of a Python
override of a virtual method (every paint of a pyqtgraph view). After some
thousands of edits and redraws CPython frees one of them and aborts
("bool_dealloc", "none_dealloc"). The app once patched the reference counts
through ctypes at import; the pin in pyproject.toml is the fix, so the pin is
what is tested here. `tests/gui/test_app.py` also drives thousands of signals
and paints through the installed PySide6 and checks the counts hold.
"""

from __future__ import annotations

import tomllib
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[1]
BROKEN = ("6.12.0",)  # releases known to lose references to True/None on signal emits
SOUND = ("6.6.0", "6.11.3")  # releases the app runs on


def _pin() -> Requirement:
    dependencies = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["dependencies"]
    pins = [Requirement(text) for text in dependencies if Requirement(text).name.lower() in ("pyside6-essentials", "pyside6")]
    assert len(pins) == 1, "exactly one PySide6 requirement"
    return pins[0]


def test_the_pin_refuses_every_broken_release() -> None:
    pin = _pin()
    for version in BROKEN:
        assert not pin.specifier.contains(version), f"{pin} allows PySide6 {version}, which aborts the app"


def test_the_pin_admits_sound_releases_and_the_installed_one() -> None:
    pin = _pin()
    for version in SOUND:
        assert pin.specifier.contains(version), f"{pin} refuses PySide6 {version}"
    installed = metadata.version(pin.name)
    assert pin.specifier.contains(installed), f"the installed PySide6 {installed} is outside {pin}"
