"""`workbench gui`: the window, after checking there is a display and, on X11, the shared libraries Qt's xcb
platform plugin needs (its own message aborts and names the wrong library)."""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any, Callable, Sequence

from workbench.cli.output import EXIT_USAGE


def add_gui(sub: Any) -> None:
    p = sub.add_parser("gui", help="open the desktop window (the default with no subcommand)")
    p.add_argument("session", nargs="?", metavar="FILE", help="a session file to open")
    from workbench.documents.examples import MENU_ORDER

    p.add_argument("--example", metavar="KEY", help=f"open a built-in example session: {', '.join(MENU_ORDER)}")
    p.add_argument(
        "--check",
        action="store_true",
        help="show the window, print one line saying what it shows, and quit (checks an installation)",
    )
    p.add_argument(
        "--presentation",
        action="store_true",
        help="start in presentation mode: larger text everywhere, for a projector (View ▸ Presentation)",
    )
    p.set_defaults(run=_run_gui)


def has_display(environ: dict[str, str] | None = None) -> bool:
    """True when Qt has somewhere to draw: an X or Wayland display, or an explicit platform."""
    env = os.environ if environ is None else environ
    return bool(env.get("DISPLAY") or env.get("WAYLAND_DISPLAY") or env.get("QT_QPA_PLATFORM"))


# The shared libraries Qt's xcb platform plugin (plugins/platforms/libqxcb.so and its libQt6XcbQpa) loads from
# the system, beyond those Qt itself needs offscreen, each with the Debian/Ubuntu package that brings it.
# tests/gui/test_desktop_start.py checks this list against the installed plugin's own.
XCB_LIBRARIES: dict[str, str] = {
    "libxcb.so.1": "libxcb1",
    "libX11-xcb.so.1": "libx11-xcb1",
    "libxcb-cursor.so.0": "libxcb-cursor0",
    "libxcb-icccm.so.4": "libxcb-icccm4",
    "libxcb-image.so.0": "libxcb-image0",
    "libxcb-keysyms.so.1": "libxcb-keysyms1",
    "libxcb-randr.so.0": "libxcb-randr0",
    "libxcb-render.so.0": "libxcb-render0",
    "libxcb-render-util.so.0": "libxcb-render-util0",
    "libxcb-shape.so.0": "libxcb-shape0",
    "libxcb-shm.so.0": "libxcb-shm0",
    "libxcb-sync.so.1": "libxcb-sync1",
    "libxcb-util.so.1": "libxcb-util1",
    "libxcb-xfixes.so.0": "libxcb-xfixes0",
    "libxcb-xkb.so.1": "libxcb-xkb1",
    "libxkbcommon-x11.so.0": "libxkbcommon-x11-0",
    "libxkbcommon.so.0": "libxkbcommon0",
    "libX11.so.6": "libx11-6",
    "libGL.so.1": "libgl1",
    "libglib-2.0.so.0": "libglib2.0-0",
    "libgthread-2.0.so.0": "libglib2.0-0",
}


def _loadable(name: str) -> bool:
    """True when the dynamic loader finds and loads the shared library `name` (as Qt's plugin loader would)."""
    import ctypes

    try:
        ctypes.CDLL(name)
    except OSError:
        return False
    return True


def platform_is_xcb(environ: dict[str, str] | None = None) -> bool:
    """True when Qt will start on the xcb (X11) platform: an X display, and no other platform asked for (nor a
    Wayland session, where Qt prefers its wayland plugin)."""
    env = os.environ if environ is None else environ
    platform = env.get("QT_QPA_PLATFORM", "").strip()
    if platform:
        return platform.split(":")[0].split(";")[0] == "xcb"
    if env.get("WAYLAND_DISPLAY") and env.get("XDG_SESSION_TYPE") == "wayland":
        return False
    return bool(env.get("DISPLAY"))


def missing_xcb_libraries(loadable: Callable[[str], bool] | None = None) -> list[str]:
    """The xcb plugin's libraries that cannot be loaded here (`loadable` says, _loadable by default), in
    XCB_LIBRARIES' order."""
    found = loadable or _loadable
    return [name for name in XCB_LIBRARIES if not found(name)]


def missing_libraries_line(missing: Sequence[str]) -> str:
    """One line naming the missing libraries and the apt packages that bring them."""
    packages = " ".join(dict.fromkeys(XCB_LIBRARIES[name] for name in missing))
    return (
        f"workbench: the desktop window (Qt's xcb platform) needs shared libraries missing here: {', '.join(missing)}; "
        f"on Debian/Ubuntu: sudo apt-get install {packages}"
    )


def _run_gui(args: argparse.Namespace) -> int:
    if not has_display():
        print(
            "workbench: no display found (DISPLAY, WAYLAND_DISPLAY and QT_QPA_PLATFORM are unset); "
            "run `xvfb-run -a workbench` or use the headless subcommands (calc, devices, units)",
            file=sys.stderr,
        )
        return EXIT_USAGE
    if platform_is_xcb():  # before Qt loads the plugin: its own message ends in an abort and blames the wrong library
        missing = missing_xcb_libraries()
        if missing:
            print(missing_libraries_line(missing), file=sys.stderr)
            return EXIT_USAGE
    from workbench.gui.app import run_app

    return run_app(
        getattr(args, "session", None),
        example=getattr(args, "example", None),
        check=getattr(args, "check", False),
        presentation=getattr(args, "presentation", False),
    )
