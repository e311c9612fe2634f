"""The desktop window: PySide6 views and Qt workers over the Qt-free core.

Everything Qt lives under this package; the model (`workbench.documents.session`) and
the calculation core never import it. The PySide6 pin in pyproject.toml keeps
out the release that loses references to True and None on every signal
(tests/test_pyside_pin.py).
"""

# Before any module here imports pyqtgraph: cheaper imports for the rest (gui/quick_imports.py).
from workbench.gui import quick_imports as _quick_imports

_quick_imports.prepare()
