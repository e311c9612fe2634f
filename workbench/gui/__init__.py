"""The desktop window: PySide6 views and Qt workers over the Qt-free core.

Everything Qt lives under this package; the model (`workbench.session`) and
the calculation core never import it.
"""

from workbench.gui.pyside_guard import guard_signal_refcount

SIGNAL_REFCOUNT_BUG = guard_signal_refcount()
