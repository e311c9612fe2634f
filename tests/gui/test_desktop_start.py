"""Starting on a desktop: the xcb plugin's libraries are checked before Qt loads it, and a real window opens on
an X server (Xvfb), not only offscreen."""

from __future__ import annotations

import importlib.util
import os
import shutil
import struct
import subprocess
import sys
import types
from pathlib import Path

import pytest

from workbench import cli
from workbench.cli import display
from workbench.documents.autosave import DATA_DIR_VARIABLE


def _no_qt(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Replace the window's start so a test sees whether the CLI got that far (and Qt never loads the plugin)."""
    started: list[str] = []
    fake = types.ModuleType("workbench.gui.app")
    fake.run_app = lambda *args, **kwargs: started.append("run_app") or 0  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "workbench.gui.app", fake)
    return started


def _x_desktop(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DISPLAY", ":0")
    for name in ("QT_QPA_PLATFORM", "WAYLAND_DISPLAY", "XDG_SESSION_TYPE"):
        monkeypatch.delenv(name, raising=False)


def test_a_missing_xcb_library_is_one_line_naming_it_and_its_package(monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    _x_desktop(monkeypatch)
    started = _no_qt(monkeypatch)
    absent = {"libxcb-icccm.so.4", "libxcb-keysyms.so.1"}
    monkeypatch.setattr(display, "_loadable", lambda name: name not in absent)
    assert cli.main([]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1
    assert "libxcb-icccm.so.4" in err and "libxcb-keysyms.so.1" in err
    assert "apt-get install libxcb-icccm4 libxcb-keysyms1" in err
    assert "libxcb-cursor" not in err  # only what is missing is named
    assert started == []  # Qt was not asked to start


def test_with_every_library_present_the_window_starts(monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    _x_desktop(monkeypatch)
    started = _no_qt(monkeypatch)
    asked: list[str] = []
    monkeypatch.setattr(display, "_loadable", lambda name: asked.append(name) or True)
    assert cli.main(["gui"]) == 0
    assert started == ["run_app"]
    assert set(asked) == set(display.XCB_LIBRARIES)


@pytest.mark.parametrize("platform", ["offscreen", "wayland", "minimal"])
def test_no_check_where_the_platform_is_not_xcb(monkeypatch, platform: str) -> None:  # type: ignore[no-untyped-def]
    _x_desktop(monkeypatch)
    monkeypatch.setenv("QT_QPA_PLATFORM", platform)
    started = _no_qt(monkeypatch)
    monkeypatch.setattr(display, "_loadable", lambda name: False)
    assert cli.main(["gui"]) == 0
    assert started == ["run_app"]


def test_which_platform_is_xcb() -> None:
    assert display.platform_is_xcb({"DISPLAY": ":1"})
    assert display.platform_is_xcb({"DISPLAY": ":1", "QT_QPA_PLATFORM": "xcb"})
    assert display.platform_is_xcb({"QT_QPA_PLATFORM": "xcb:nomitshm"})
    assert not display.platform_is_xcb({})
    assert not display.platform_is_xcb({"DISPLAY": ":1", "QT_QPA_PLATFORM": "offscreen"})
    assert not display.platform_is_xcb({"DISPLAY": ":1", "WAYLAND_DISPLAY": "wayland-0", "XDG_SESSION_TYPE": "wayland"})


def _needed(path: Path) -> list[str]:
    """The DT_NEEDED entries of a 64-bit little-endian ELF shared library."""
    data = path.read_bytes()
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        pytest.skip(f"{path.name} is not a 64-bit little-endian ELF file")
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", data, 0x3A)
    sections = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]
    dynamic = next(s for s in sections if s[1] == 6)  # SHT_DYNAMIC
    strtab = sections[dynamic[6]]  # sh_link: its string table
    names = []
    for offset in range(dynamic[4], dynamic[4] + dynamic[5], 16):
        tag, value = struct.unpack_from("<qQ", data, offset)
        if tag == 0:
            break
        if tag == 1:  # DT_NEEDED
            start = strtab[4] + value
            names.append(data[start:data.index(b"\0", start)].decode())
    return names


def test_the_library_list_covers_what_the_installed_plugin_needs() -> None:
    spec = importlib.util.find_spec("PySide6")
    assert spec is not None and spec.submodule_search_locations
    qt = Path(list(spec.submodule_search_locations)[0]) / "Qt"
    plugin = qt / "plugins" / "platforms" / "libqxcb.so"
    if not plugin.exists():
        pytest.skip("this PySide6 has no xcb platform plugin")
    needed = set(_needed(plugin))
    for name in list(needed):
        if (qt / "lib" / name).exists():  # Qt's own libraries come with PySide6; the xcb one brings more
            needed |= set(_needed(qt / "lib" / name)) if "Xcb" in name else set()
    system = {name for name in needed if not (qt / "lib" / name).exists()}
    toolchain = {"libc.so.6", "libm.so.6", "libstdc++.so.6", "libgcc_s.so.1", "libpthread.so.0", "libdl.so.2"}
    assert system - toolchain <= set(display.XCB_LIBRARIES), sorted(system - toolchain - set(display.XCB_LIBRARIES))


WINDOW_PROBE = """
import sys
from PySide6.QtWidgets import QApplication
from workbench.gui.app import build_window
from workbench.model.devices.nvml import NO_DRIVER, Detection
app = QApplication.instance() or QApplication([])
window = build_window(detect=lambda: Detection(NO_DRIVER, "no driver"))
window.open_example("batched-gemm-sweep")
window.show()
for _ in range(50):
    app.processEvents()
room = window.screen().availableGeometry()
frame = window.frameGeometry()
fits = [frame.width() <= room.width() and frame.height() <= room.height()]
window.tabs.setCurrentWidget(window.measurement)
window.set_presentation(True)
for _ in range(50):
    app.processEvents()
least = window.minimumSizeHint()
fits.append(least.width() <= room.width() and least.height() <= room.height()
            and window.width() <= room.width() and window.height() <= room.height())
print(app.platformName(), window.isVisible(), window.windowHandle().isExposed(), room.contains(frame.topLeft()), *fits)
window.set_presentation(False)
window.wait_for_workers()
"""


def test_a_real_window_opens_on_an_x_server_within_its_screen(tmp_path: Path) -> None:
    """On Xvfb with the xcb platform (not offscreen): `workbench gui --check` shows the window, and the window maps
    within a 1280 × 720 screen, in presentation mode from the measurement tab too."""
    xvfb = shutil.which("Xvfb")
    if xvfb is None:
        pytest.skip("Xvfb is not installed (apt-get install xvfb; .ci/run installs it)")
    read, write = os.pipe()
    server = subprocess.Popen(
        [xvfb, "-displayfd", str(write), "-screen", "0", "1280x720x24", "-nolisten", "tcp"],
        pass_fds=(write,), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    os.close(write)
    try:
        with os.fdopen(read) as pipe:
            display = pipe.readline().strip()
        assert display, "Xvfb did not say which display it opened"
        env = {k: v for k, v in os.environ.items() if k not in ("WAYLAND_DISPLAY", "XAUTHORITY")}
        env.update(DISPLAY=f":{display}", QT_QPA_PLATFORM="xcb", HOME=str(tmp_path), XDG_CONFIG_HOME=str(tmp_path / "config"),
                   XDG_RUNTIME_DIR=str(tmp_path), **{DATA_DIR_VARIABLE: str(tmp_path / "data")})
        os.chmod(tmp_path, 0o700)
        check = subprocess.run([sys.executable, "-m", "workbench", "gui", "--check"], capture_output=True, text=True,
                               env=env, timeout=180)
        assert check.returncode == 0, check.stderr
        assert check.stdout.startswith("window shown: True;"), check.stdout + check.stderr
        probe = subprocess.run([sys.executable, "-c", WINDOW_PROBE], capture_output=True, text=True, env=env, timeout=180)
        assert probe.returncode == 0, probe.stderr
        assert probe.stdout.split() == ["xcb", "True", "True", "True", "True", "True"], probe.stdout + probe.stderr
    finally:
        server.terminate()
        server.wait(timeout=30)
