"""A guard against PySide6 6.12.0 losing references to True and None.

In PySide6-Essentials 6.12.0 (6.11.3 is sound), each emission of a signal
defined in Python into a Python slot drops one reference to `True`, and each
call of a Python override of a virtual method (every `paintEvent` of a
pyqtgraph view) drops one to `None`. The document and pyqtgraph do both on
every edit and redraw, so after some thousands CPython frees one of them and
aborts ("bool_dealloc", "none_dealloc"), mid-session or when the interpreter
exits. The guard measures the signal loss once at import; only when it is
there does it give None, True and False a reserve of references so large that
no session can use it up (CPython 3.12 makes them immortal the same way).
Pinning PySide6-Essentials below 6.12 avoids the bug altogether.
"""

from __future__ import annotations

import ctypes
import sys

from PySide6.QtCore import QObject, Signal

_RESERVE = 1 << 40
_PROBES = 8


class _Probe(QObject):
    probed = Signal()


def _noop() -> None:
    return None


def lost_per_emission() -> float:
    """References to True lost per emission of a Python signal into a Python slot (0 on a sound PySide6)."""
    probe = _Probe()
    probe.probed.connect(_noop)
    before = sys.getrefcount(True)
    for _ in range(_PROBES):
        probe.probed.emit()
    lost = before - sys.getrefcount(True)
    probe.probed.disconnect(_noop)
    return lost / _PROBES


def guard_signal_refcount() -> bool:
    """Give None, True and False a reserve of references when this PySide6 loses them; True if it had to."""
    if lost_per_emission() <= 0 or sys.implementation.name != "cpython" or sys.version_info >= (3, 12):
        return False
    for constant in (None, True, False):
        # ob_refcnt is the first field of every CPython object (3.11 and earlier).
        ctypes.c_ssize_t.from_address(id(constant)).value += _RESERVE
    return True
